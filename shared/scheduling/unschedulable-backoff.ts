/**
 * Backoff for pods no NodePool can run. A pod the scheduler found unschedulable is not solved
 * again on every pass (the agent re-sends pending pods every 30 s, and every pass also solves all
 * other pending pods): its **shape** — what scheduling reads of it — waits 30 s after the first
 * failure, then 60 s, 120 s, ... up to 5 minutes between attempts. A shape is forgotten as soon
 * as one of its pods is placed, and every shape starts over when the scheduling configuration
 * changes (NodePools, EC2NodeClasses, or the offerings marked unavailable), since that is what
 * can turn "no NodePool can run it" into a launch.
 *
 * Why per shape: the pods of one ReplicaSet fail for the same reason; backing each off alone
 * would still solve the whole set once per period. Why a 5-minute cap: kube-scheduler retries an
 * unschedulable pod at least every 5 minutes (`podMaxInUnschedulablePodsDuration`), so an
 * operator never waits longer here than there.
 *
 * Pure: no clock (callers pass `nowMs`), no I/O. State lives in the instance (one per warm
 * container; a cold start forgets, which costs one extra solve, never a wrong launch).
 */
import type { Pod } from '../api/kube.ts';
import { canonicalJson } from '../api/hash.ts';

/** First wait after a shape's first unschedulable pass: the agent's re-send period (functions/agent PendingResendMs). */
export const UnschedulableBackoffBaseSeconds = 30;
/** Longest wait between attempts: kube-scheduler's podMaxInUnschedulablePodsDuration (5 min). */
export const UnschedulableBackoffMaxSeconds = 300;
/** Shapes remembered at most (oldest forgotten first): bounds the container's memory. */
export const UnschedulableBackoffMaxShapes = 10_000;

/**
 * What scheduling reads of a pod, as a string key: namespace, labels (affinity and spread select
 * on them) and the spec without its node binding. Pods of one ReplicaSet share it.
 */
export function podShapeKey(p: Pod): string {
  const { nodeName: _n, ...spec } = p.spec ?? ({} as Pod['spec']);
  return canonicalJson([p.metadata.namespace ?? '', p.metadata.labels ?? {}, spec]);
}

/**
 * The configuration a backoff is valid for: NodePool and EC2NodeClass specs, the unavailable
 * offerings and what the classes resolve to (`resolved`: class name → e.g. the zones its subnets
 * cover, or why it resolves to nothing); a change to any resets every shape.
 */
export function schedulingConfigKey(parts: {
  nodePools: readonly { metadata: { name: string }; spec: unknown }[];
  nodeClasses: Iterable<{ metadata: { name: string }; spec: unknown }>;
  unavailable?: readonly unknown[];
  resolved?: Readonly<Record<string, unknown>>;
}): string {
  const byName = (a: { metadata: { name: string } }, b: { metadata: { name: string } }) => a.metadata.name.localeCompare(b.metadata.name);
  return canonicalJson([
    [...parts.nodePools].sort(byName).map((p) => [p.metadata.name, p.spec]),
    [...parts.nodeClasses].sort(byName).map((c) => [c.metadata.name, c.spec]),
    [...(parts.unavailable ?? [])].map((u) => canonicalJson(u)).sort(),
    ...(parts.resolved ? [parts.resolved] : []),
  ]);
}

interface Entry {
  failures: number;
  retryAtMs: number;
}

/** Per-shape backoff state (see module doc). */
export class UnschedulableBackoff {
  private readonly shapes = new Map<string, Entry>();
  private configKey?: string;

  constructor(private readonly opts: { baseSeconds?: number; maxSeconds?: number; maxShapes?: number } = {}) {}

  /** Shapes currently remembered. */
  get size(): number {
    return this.shapes.size;
  }

  /** Seconds to wait after `failures` consecutive unschedulable passes (30, 60, 120, 240, 300, 300, ...). */
  delaySeconds(failures: number): number {
    const base = this.opts.baseSeconds ?? UnschedulableBackoffBaseSeconds;
    return Math.min(this.opts.maxSeconds ?? UnschedulableBackoffMaxSeconds, base * 2 ** Math.max(0, failures - 1));
  }

  private useConfig(configKey: string): void {
    if (this.configKey !== configKey) this.shapes.clear();
    this.configKey = configKey;
  }

  /**
   * Splits `pods` at `nowMs` into those to solve now and those whose shape is still waiting
   * (with when it may be tried again, epoch ms). A changed `configKey` forgets every shape first.
   */
  partition(pods: readonly Pod[], configKey: string, nowMs: number): { solve: Pod[]; waiting: { pod: Pod; retryAtMs: number }[] } {
    this.useConfig(configKey);
    const solve: Pod[] = [];
    const waiting: { pod: Pod; retryAtMs: number }[] = [];
    for (const p of pods) {
      const e = this.shapes.size ? this.shapes.get(podShapeKey(p)) : undefined;
      if (e && nowMs < e.retryAtMs) waiting.push({ pod: p, retryAtMs: e.retryAtMs });
      else solve.push(p);
    }
    return { solve, waiting };
  }

  /**
   * Records one pass: a shape all of whose solved pods were unschedulable waits longer (doubling,
   * capped); a shape with any pod placed is forgotten.
   */
  record(outcome: { unschedulable: readonly Pod[]; scheduled: readonly Pod[] }, configKey: string, nowMs: number): void {
    this.useConfig(configKey);
    const placed = new Set(outcome.scheduled.map(podShapeKey));
    for (const key of placed) this.shapes.delete(key);
    const failed = new Set(outcome.unschedulable.map(podShapeKey));
    for (const key of failed) {
      if (placed.has(key)) continue;
      const failures = (this.shapes.get(key)?.failures ?? 0) + 1;
      this.shapes.delete(key); // re-insert: Map order = least recently failed first
      this.shapes.set(key, { failures, retryAtMs: nowMs + this.delaySeconds(failures) * 1000 });
    }
    const max = this.opts.maxShapes ?? UnschedulableBackoffMaxShapes;
    for (const key of this.shapes.keys()) {
      if (this.shapes.size <= max) break;
      this.shapes.delete(key);
    }
  }
}
