/**
 * What the demo prints besides the log lines: the one-line live view (nodes, NodeClaims, pending
 * pods) and the end-of-run summary (timeline, cost per hour, termination execution histories,
 * expectation results).
 */
import type { NodeClaim } from '../../shared/api/nodeclaim.ts';
import type { LocalEnvironment } from './environment.ts';
import type { LocalInstance } from './ec2/local-ec2.ts';
import { clockText } from './console.ts';
import { executions, type CheckResult, type RunFacts } from './expectations.ts';

export interface TimelineEntry {
  /** Virtual epoch ms. */
  atMs: number;
  text: string;
}

function isReady(n: { status?: { conditions?: { type: string; status: string }[] } }): boolean {
  return n.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
}

/** What `status` calls a claim: Pending, Launched, Registered, Ready, Terminating (or the stored phase). */
export function claimState(c: NodeClaim): string {
  const has = (t: string) => c.conditions.some((x) => x.type === t && x.status === 'True');
  if (c.phase === 'Terminated' || c.phase === 'Failed') return c.phase;
  if (c.phase === 'Terminating' || has('InstanceTerminating')) return 'Terminating';
  if (has('Initialized')) return 'Ready';
  if (has('Registered')) return 'Registered';
  if (has('Launched')) return 'Launched';
  return c.phase;
}

/**
 * The live status, one line: nodes (not ready, cordoned) and what the instances cost per hour
 * now, pods by phase, NodeClaims by state. Per-claim detail is in the log lines and the live view.
 */
export function statusLine(env: LocalEnvironment, claims: NodeClaim[]): string {
  const nodes = env.cluster.nodes();
  const notReady = nodes.filter((n) => !isReady(n)).length;
  const cordoned = nodes.filter((n) => (n.spec as { unschedulable?: boolean } | undefined)?.unschedulable).length;
  const pods = env.cluster.pods().filter((p) => !p.metadata.ownerReferences?.some((o) => o.kind === 'DaemonSet'));
  const running = pods.filter((p) => p.status?.phase === 'Running' && !p.metadata.deletionTimestamp).length;
  const pending = pods.filter((p) => p.status?.phase === 'Pending').length;
  const terminating = pods.filter((p) => p.metadata.deletionTimestamp).length;
  const byState = new Map<string, number>();
  for (const c of claims.filter((x) => x.phase !== 'Terminated')) byState.set(claimState(c), (byState.get(claimState(c)) ?? 0) + 1);
  const nodeNotes = [notReady ? `${notReady} NotReady` : '', cordoned ? `${cordoned} cordoned` : ''].filter(Boolean).join(', ');
  return [
    `nodes ${nodes.length}${nodeNotes ? ` (${nodeNotes})` : ''}, $${rateAt([...env.ec2.instances.values()], env.clock.nowMs()).toFixed(3)}/h`,
    `pods ${running} running, ${pending} pending${terminating ? `, ${terminating} terminating` : ''}`,
    `nodeclaims ${byState.size ? [...byState].map(([k, n]) => `${n} ${k}`).join(', ') : '0'}`,
  ].join(' │ ');
}

/** USD per hour of the instances running at virtual epoch ms `t` (launched at or before, not yet terminating). */
export function rateAt(instances: LocalInstance[], t: number): number {
  return instances.filter((i) => i.launchTimeMs <= t && (i.terminatingAtMs ?? Infinity) > t).reduce((s, i) => s + (i.priceUsdPerHour ?? 0), 0);
}

/** What a run's instances cost, USD. */
export interface CostFigures {
  nowUsdPerHour: number;
  /** The most the instances cost per hour at any moment. */
  peakUsdPerHour: number;
  /** Every instance's price × how long it ran (launch → TerminateInstances or now), virtual time. */
  totalUsd: number;
}

/** {@link CostFigures} of `instances` at virtual epoch ms `nowMs`. */
export function costFigures(instances: LocalInstance[], nowMs: number): CostFigures {
  const instants = [...new Set(instances.flatMap((i) => [i.launchTimeMs, i.terminatingAtMs ?? nowMs]))];
  const totalUsd = instances.reduce((s, i) => s + (((i.terminatingAtMs ?? nowMs) - i.launchTimeMs) / 3_600_000) * (i.priceUsdPerHour ?? 0), 0);
  return {
    nowUsdPerHour: Math.round(rateAt(instances, nowMs) * 1e4) / 1e4,
    peakUsdPerHour: Math.round(Math.max(0, ...instants.map((t) => rateAt(instances, t))) * 1e4) / 1e4,
    totalUsd: Math.round(totalUsd * 1e5) / 1e5,
  };
}

/** Cost table: every instance that ran, its price and how long it ran (virtual). */
function costLines(env: LocalEnvironment): string[] {
  const endMs = env.clock.nowMs();
  const lines: string[] = [];
  const all = [...env.ec2.instances.values()];
  const typeWidth = Math.max(12, ...all.map((i) => i.instanceType.length));
  lines.push(
    `  ${'launched'.padEnd(9)} ${'type'.padEnd(typeWidth)} ${'capacity'.padEnd(9)} ${'zone'.padEnd(16)} ${'price'.padEnd(12)}  ${'ran'.padStart(6)}  cost`,
  );
  for (const i of all) {
    const hours = ((i.terminatingAtMs ?? endMs) - i.launchTimeMs) / 3_600_000;
    const cost = hours * (i.priceUsdPerHour ?? 0);
    lines.push(
      `  ${i.preexisting ? 'managed  ' : 'nodefleet'} ${i.instanceType.padEnd(typeWidth)} ${i.capacityType.padEnd(9)} ${i.zone.padEnd(16)} ${(i.priceUsdPerHour ?? 0).toFixed(4)} USD/h  ${String(Math.round(hours * 3600)).padStart(5)}s  ${cost.toFixed(5)} USD`,
    );
  }
  const c = costFigures(all, endMs);
  lines.push(`  peak ${c.peakUsdPerHour.toFixed(4)} USD/h, at the end ${c.nowUsdPerHour.toFixed(4)} USD/h; this run cost ${c.totalUsd.toFixed(5)} USD`);
  lines.push(`  (virtual time; catalog on-demand / spot prices for ${env.scenario.region})`);
  return lines;
}

/**
 * Folds a loop in an execution history (e.g. Drain → DrainProgress → WaitForDrain repeated until
 * the grace period): the first pass is listed, further identical passes become one line.
 */
export function collapseLoops(keys: string[]): ({ kind: 'one'; index: number } | { kind: 'loop'; from: number; to: number; length: number; times: number })[] {
  const out: ({ kind: 'one'; index: number } | { kind: 'loop'; from: number; to: number; length: number; times: number })[] = [];
  let i = 0;
  while (i < keys.length) {
    let best: { length: number; times: number } | undefined;
    for (let len = 2; len <= 10 && i + 2 * len <= keys.length; len++) {
      let times = 0;
      while (i + (times + 2) * len <= keys.length && keys.slice(i, i + len).every((k, j) => k === keys[i + (times + 1) * len + j])) times++;
      if (times >= 2 && (!best || times * len > best.times * best.length)) best = { length: len, times };
    }
    if (!best) {
      out.push({ kind: 'one', index: i });
      i++;
      continue;
    }
    for (let j = 0; j < best.length; j++) out.push({ kind: 'one', index: i + j });
    out.push({ kind: 'loop', from: i + best.length, to: i + best.length * (best.times + 1) - 1, length: best.length, times: best.times });
    i += best.length * (best.times + 1);
  }
  return out;
}

/** The end-of-run summary text. */
export function renderSummary(
  env: LocalEnvironment,
  r: { timeline: TimelineEntry[]; checks: { name: string; ok: boolean; detail: string }[] | CheckResult[]; facts: RunFacts; realSeconds: number },
): string {
  const lines: string[] = [];
  lines.push('', `═══ summary: ${env.scenario.name} ═══`);
  lines.push(`virtual ${Math.round(env.clock.elapsedSeconds())}s in real ${r.realSeconds.toFixed(1)}s (speed ×${env.clock.speed})`);
  lines.push('', 'timeline:');
  for (const e of r.timeline) lines.push(`  ${clockText(env.clock.startEpochMs(), e.atMs)}  ${e.text}`);
  lines.push('', 'cost per hour:');
  lines.push(...costLines(env));
  const execs = executions(env);
  lines.push('', `termination executions (${execs.length}):`);
  for (const e of execs) {
    let input: any;
    try {
      input = JSON.parse(e.input);
    } catch {
      input = {};
    }
    lines.push(`  ${e.name}  ${e.status}  reason=${input.reason ?? '?'}  ${e.startDate} → ${e.stopDate ?? 'running'}`);
    lines.push(`    node ${input.nodeName ?? '?'}  instance ${input.instanceId ?? '?'}`);
    const start = Date.parse(e.startDate);
    const line = (ev: (typeof e.events)[number]) => {
      const t = ((Date.parse(ev.timestamp) - start) / 1000).toFixed(1).padStart(7);
      const extra = (ev as { error?: string; cause?: string }).error ? `  ${(ev as { error?: string }).error}: ${(ev as { cause?: string }).cause ?? ''}` : '';
      return `    ${String((ev as { id?: number }).id ?? '').padStart(3)} +${t}s  ${ev.type}${ev.stateName ? `  ${ev.stateName}` : ''}${extra}`;
    };
    for (const item of collapseLoops(e.events.map((ev) => `${ev.type}|${ev.stateName ?? ''}`))) {
      if (item.kind === 'one') lines.push(line(e.events[item.index]));
      else {
        const first = e.events[item.from];
        const last = e.events[item.to];
        lines.push(
          `    ${String((first as { id?: number }).id ?? '').padStart(3)}…${(last as { id?: number }).id ?? ''}  the ${item.length} events above repeated ${item.times}× more (+${((Date.parse(first.timestamp) - start) / 1000).toFixed(1)}s … +${((Date.parse(last.timestamp) - start) / 1000).toFixed(1)}s)`,
        );
      }
    }
  }
  if (env.missing.length) {
    lines.push('', 'missing parts (not faked):');
    for (const m of env.missing) lines.push(`  ${m.name}: ${m.file}: ${m.reason}`);
  }
  const unsupported = [...env.aws.unsupported];
  if (unsupported.length) lines.push('', `AWS operations the local endpoint does not serve (called): ${unsupported.join(', ')}`);
  lines.push('', 'expectations:');
  for (const c of r.checks) lines.push(`  ${c.ok ? 'PASS' : 'FAIL'}  ${c.name}: ${c.detail}`);
  const ok = r.checks.every((c) => c.ok);
  lines.push('', ok ? `RESULT: PASS (${env.scenario.name})` : `RESULT: FAIL (${env.scenario.name})`);
  return lines.join('\n');
}
