/**
 * Conditions over the local cluster that timeline waits and expectations share: pods by label
 * selector and phase (optionally off the spot-interrupted node), nodes by selector.
 */
import type { Pod } from '../../shared/api/kube.ts';
import type { LocalEnvironment } from './environment.ts';
import type { PodsConditionT } from './scenario.ts';

/** Interrupted instances as the runner records them. */
export interface InterruptionFact {
  instanceId: string;
  nodeName?: string;
  noticeAtMs: number;
  deadlineMs: number;
}

/** Whether the pods condition holds now. */
export function podsMatch(env: LocalEnvironment, c: PodsConditionT, facts: { interruptions: InterruptionFact[] }): { ok: boolean; detail: string } {
  const pods = selectPods(env.cluster.pods({ namespace: c.namespace }), c.selector).filter((p) => !p.metadata.deletionTimestamp);
  const interrupted = new Set(facts.interruptions.map((i) => i.nodeName).filter(Boolean));
  const running = pods.filter((p) => p.status?.phase === 'Running' && (!c.notOnInterruptedNode || !interrupted.has(p.spec.nodeName ?? '')));
  const pending = pods.filter((p) => p.status?.phase === 'Pending');
  const ok = (c.running === undefined || running.length === c.running) && (c.pending === undefined || pending.length === c.pending);
  return { ok, detail: `running ${running.length}, pending ${pending.length}` };
}

/** Pods matching an equality label selector ("app=web,tier=x"). */
export function selectPods(pods: Pod[], selector: string): Pod[] {
  const want = parseEqualitySelector(selector);
  return pods.filter((p) => Object.entries(want).every(([k, v]) => p.metadata.labels?.[k] === v));
}

/** Nodes matching an equality selector ("k=v"; "k=" or "k" = has the label). */
export function selectNodes(env: LocalEnvironment, selector: string | undefined) {
  const want = parseEqualitySelector(selector ?? '');
  return env.cluster.nodes().filter((n) => Object.entries(want).every(([k, v]) => (v === '' ? k in (n.metadata.labels ?? {}) : n.metadata.labels?.[k] === v)));
}

/** Parses "a=b,c=d" (equality-based label selector) into a map. */
export function parseEqualitySelector(s: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of s
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean)) {
    const [k, v] = part.split('=');
    out[k.trim()] = (v ?? '').trim();
  }
  return out;
}
