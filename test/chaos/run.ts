/**
 * One chaos run: the world of a seed (world.ts) in the embedded environment on stepped virtual
 * time, the seed's faults (injector.ts) at their instants during the active window, the
 * invariants (invariants.ts) checked every 10 virtual seconds; then faults stop and the run
 * waits for the cluster to settle (at most the registration timeout + 5 minutes) and checks the
 * end-of-run invariants.
 *
 * `shrink` replays a failing seed with fewer faults (halves, then one at a time) while the same
 * invariant still fails, and returns the smallest fault list found: the reproduction is
 * `npm run chaos -- --seed N --only i,j`.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalEnvironment } from '../../infra/local/environment.ts';
import type { ExecutionHistoryEvent } from '../../shared/api/termination.ts';
import { RegistrationTimeoutSeconds } from '../../shared/disruption/gc.ts';
import { buildWorld, type World } from './world.ts';
import { ChaosInjector, RealTierFaultKinds, clusterWrite, planFaults, type InjectedFault, type PlannedFault } from './injector.ts';
import { RealCluster, realCluster } from '../real/scenarios/real-cluster.ts';
import { CheckEverySeconds, Monitor, type Violation } from './invariants.ts';
import type { VirtualClock } from '../../infra/local/clock.ts';

export interface RunOptions {
  seed: number;
  faultsPerRun: number;
  /** Keep only these fault indices (replay / shrink). */
  only?: number[];
  /** Virtual seconds of the active window (workload changes and faults). Default 12 minutes. */
  activeSeconds?: number;
  /** Most virtual seconds to wait for the cluster to settle once faults stop. */
  settleSeconds?: number;
  /** Real seconds before the run is given up as `did-not-finish` (default {@link DefaultMaxRealSeconds}). */
  maxRealSeconds?: number;
  /**
   * `real`: on the real control-plane tier (test/real: kube-apiserver, scheduler, controller-manager,
   * kwok) on wall time, with the real API's own faults instead of the embedded API server's
   * (injector.ts RealTierFaultKinds). Default `embedded` (stepped virtual time).
   */
  cluster?: 'embedded' | 'real';
  log?: (line: string) => void;
}

export interface RunResult {
  seed: number;
  planned: PlannedFault[];
  injected: InjectedFault[];
  violations: Violation[];
  virtualSeconds: number;
  realSeconds: number;
  settled: boolean;
}

export const DefaultActiveSeconds = 8 * 60;
export const DefaultSettleSeconds = RegistrationTimeoutSeconds + 5 * 60;
/** The run checks for "settled" only after this long without faults (stragglers: delayed events, pending retries). */
const MinSettleSeconds = 2 * 60;
/**
 * Real seconds a run may take before it is reported as the violation `did-not-finish` instead of
 * hanging the pass. A run takes 25–150 s real on a loaded 2-core machine (virtual time jumps when
 * the environment is quiet); ten times the slowest seen leaves room for a loaded CI machine.
 */
export const DefaultMaxRealSeconds = 20 * 60;
/** Real ms given to the environment to stop after a run (a stuck one is left behind). */
const StopGraceMs = 10_000;

export async function runChaos(o: RunOptions): Promise<RunResult> {
  const realStart = Date.now();
  const activeMs = (o.activeSeconds ?? DefaultActiveSeconds) * 1000;
  const world = buildWorld(o.seed, activeMs);
  const real = o.cluster === 'real';
  const planned = planFaults(o.seed, o.faultsPerRun, activeMs, real ? RealTierFaultKinds : undefined).filter((f) => !o.only || o.only.includes(f.index));
  // The injector reaches the real control plane once the environment has started it.
  const controlPlane = (): RealCluster['cp'] => (env.cluster as RealCluster).cp;
  const injector = new ChaosInjector(world, real ? controlPlane : undefined);
  const workDir = mkdtempSync(join(tmpdir(), 'nodefleet-chaos-'));
  const env = new LocalEnvironment({
    scenario: world.scenario,
    ...(real ? { cluster: realCluster } : { stepped: true }),
    persist: false,
    workDir,
    faults: injector,
    seed: o.seed,
  });
  injector.attach(env);
  const monitor = new Monitor(env, o.seed, injector);
  const capMs = (o.maxRealSeconds ?? DefaultMaxRealSeconds) * 1000;
  let watchdog: NodeJS.Timeout | undefined;
  let settled = false;
  try {
    const outcome = await Promise.race([
      drive(o, world, planned, env, injector, monitor).then((s) => ({ finished: true as const, settled: s })),
      new Promise<{ finished: false }>((resolve) => {
        watchdog = setTimeout(() => resolve({ finished: false }), capMs);
      }),
    ]);
    if (outcome.finished) settled = outcome.settled;
    else {
      // The run's own loops end at active + settle virtual seconds; only a clock that stopped
      // advancing (work that never settles) or a check that never returns gets here.
      monitor.violations.push({
        invariant: 'did-not-finish',
        seed: o.seed,
        atSeconds: Math.round(env.clock.elapsedSeconds()),
        message: `run did not finish within ${capMs / 1000}s real (virtual time stood at ${Math.round(env.clock.elapsedSeconds())}s; clock ${JSON.stringify(env.clock.stats)})`,
        objects: [],
      });
    }
  } finally {
    clearTimeout(watchdog);
    await Promise.race([env.stop(), realPause(StopGraceMs)]);
    rmSync(workDir, { recursive: true, force: true });
  }
  return {
    seed: o.seed,
    planned,
    injected: injector.injected,
    violations: monitor.violations,
    virtualSeconds: Math.round(env.clock.elapsedSeconds()),
    realSeconds: (Date.now() - realStart) / 1000,
    settled,
  };
}

/** The run proper: actions and faults on their timers, checks every period, then settle and the final checks. Resolves to `settled`. */
async function drive(o: RunOptions, world: World, planned: PlannedFault[], env: LocalEnvironment, injector: ChaosInjector, monitor: Monitor): Promise<boolean> {
  const activeMs = (o.activeSeconds ?? DefaultActiveSeconds) * 1000;
  let settled = false;
  await env.start();
  if (env.missing.length) throw new Error(`environment incomplete: ${env.missing.map((m) => `${m.name} (${m.reason})`).join('; ')}`);
  const t0 = env.clock.startEpochMs();
  const giveUp = (err: Error) => o.log?.(`seed ${o.seed}: a harness write failed for a minute: ${err.message}`);
  for (const a of world.actions) {
    env.clock.setTimerAt(() => {
      try {
        if (a.kind === 'scale') {
          const w = world.workloads.find((x) => x.name === a.workload)!;
          if (w.kind === 'Deployment') clusterWrite(() => env.cluster.scale('default', w.name, a.replicas), giveUp);
          else clusterWrite(() => env.cluster.apply([{ ...w.object, spec: { ...w.object.spec, replicas: a.replicas } }] as any), giveUp);
        } else {
          const p = world.pools.find((x) => x.name === a.pool)!;
          const obj = structuredClone(p.object);
          obj.spec.template.metadata.labels['chaos/generation'] = String(a.atMs);
          clusterWrite(() => env.cluster.apply([obj] as any), giveUp);
        }
      } catch (err) {
        o.log?.(`seed ${o.seed}: action ${a.kind} failed: ${(err as Error).message}`);
      }
    }, t0 + a.atMs);
  }
  for (const f of planned) env.clock.setTimerAt(() => injector.arm(f), t0 + f.atMs);

  const atOneInstant = <T>(fn: () => Promise<T>): Promise<T> => lookAtOneInstant(env.clock, fn);
  let lastReal = Date.now();
  while (env.clock.nowMs() < t0 + activeMs) {
    await env.clock.sleep(CheckEverySeconds * 1000);
    injector.pullRealPodDeletes();
    await atOneInstant(() => monitor.check());
    if (process.env.CHAOS_DEBUG && Date.now() - lastReal > 5000) {
      lastReal = Date.now();
      o.log?.(`seed ${o.seed} t=${Math.round(env.clock.elapsedSeconds())}s ${JSON.stringify(env.clock.stats)}: ${await monitor.describe()}`);
    }
  }
  injector.stop();
  await injector.quiet();
  const quietStart = env.clock.nowMs();
  const settleMs = (o.settleSeconds ?? DefaultSettleSeconds) * 1000;
  while (env.clock.nowMs() < quietStart + settleMs) {
    await env.clock.sleep(CheckEverySeconds * 1000);
    injector.pullRealPodDeletes();
    settled = await settleLook(env.clock, monitor, env.clock.nowMs() >= quietStart + MinSettleSeconds * 1000);
    if (settled) break;
  }
  if (!settled) {
    o.log?.(
      `seed ${o.seed}: not settled: ${await monitor.describe()}${process.env.CHAOS_DEBUG ? `\n${await monitor.dump()}\n${injector.injected.map((f) => `  fault ${f.index} ${f.kind} at ${Math.round(f.atMs / 1000)}s ${f.detail}`).join('\n')}` : ''}`,
    );
    await atOneInstant(() => monitor.final());
  }
  injector.collectCrashes();
  if (process.env.CHAOS_TRACE) writeTrace(process.env.CHAOS_TRACE.replace('%s', String(o.seed)), env, injector);
  return settled;
}

/**
 * Runs one look at the cluster (`fn`) as tracked work of the stepped clock, so virtual time stands
 * still until it returns. The clock jumps whenever nothing tracked runs for a few real ms, and the
 * monitor's own reads (DynamoDB over HTTP) take longer than that: untracked, virtual time moved on
 * in the middle of a check (seed 35 replayed: 14 checks during which it moved 1–26 s), so claims
 * were read at one instant and pods at a later one, and "settled" was judged at one instant and
 * the final pod check made after a disruption round had moved pods again.
 */
export function lookAtOneInstant<T>(clock: Pick<VirtualClock, 'work'>, fn: () => Promise<T>): Promise<T> {
  return clock.work(fn);
}

/**
 * One look of the settle phase: the continuous checks and, when `maySettle` and the cluster is
 * settled, the end-of-run checks, all at one instant ({@link lookAtOneInstant}): what "settled"
 * judged is what final() checks. Returns whether the run settled (final() then ran).
 */
export function settleLook(clock: Pick<VirtualClock, 'work'>, monitor: Pick<Monitor, 'check' | 'settled' | 'final'>, maySettle: boolean): Promise<boolean> {
  return lookAtOneInstant(clock, async () => {
    await monitor.check();
    if (!maySettle || !(await monitor.settled())) return false;
    await monitor.final();
    return true;
  });
}

function realPause(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms).unref());
}

/** Debugging aid (CHAOS_TRACE=file, `%s` = seed): every log record and injected fault of the run, by virtual second. */
function writeTrace(path: string, env: LocalEnvironment, injector: ChaosInjector): void {
  const t0 = env.clock.startEpochMs();
  const lines = [
    ...env.logs.records.map((r) => ({
      at: r.timeMs - t0,
      line: `${r.level} ${r.controller} ${r.message} ${JSON.stringify(r.fields, (_k, v) => (v instanceof Error ? v.message : v))}`,
    })),
    ...injector.injected.map((f) => ({ at: f.atMs, line: `FAULT ${f.index} ${f.kind} ${f.detail}` })),
    ...[...(env.sfn?.listExecutions() ?? []), ...(env.disruptionSfn?.listExecutions() ?? [])].flatMap((e: { name: string; events: unknown[] }) =>
      (e.events as ExecutionHistoryEvent[]).map((ev) => ({
        at: Date.parse(ev.timestamp) - t0,
        line: `SFN ${e.name} ${ev.type} ${ev.stateName ?? ''} ${ev.error ?? ''} ${(ev.cause ?? '').slice(0, 200)}`,
      })),
    ),
  ].sort((a, b) => a.at - b.at);
  writeFileSync(path, lines.map((l) => `${(l.at / 1000).toFixed(1)}s ${l.line}`).join('\n') + '\n');
}

/**
 * Smallest fault subset of a failing run that still fails the same invariant: at most `maxRuns`
 * replays (through `replay`, which runs the seed with only the given fault indices), none started
 * after `deadlineMs` (epoch ms, real). Returns the fault indices and the violations of the
 * smallest failing replay.
 */
export async function shrink(
  first: RunResult,
  replay: (only: number[]) => Promise<RunResult>,
  limits: { maxRuns?: number; deadlineMs?: number } = {},
): Promise<{ only: number[]; violations: Violation[] }> {
  const maxRuns = limits.maxRuns ?? 10;
  const target = first.violations[0]?.invariant;
  let current = first.planned.map((f) => f.index);
  let violations = first.violations;
  let runs = 0;
  const budgetLeft = () => runs < maxRuns && (limits.deadlineMs === undefined || Date.now() < limits.deadlineMs);
  const fails = async (only: number[]): Promise<boolean> => {
    runs += 1;
    const r = await replay(only);
    const hit = r.violations.filter((v) => v.invariant === target);
    if (hit.length) violations = r.violations;
    return hit.length > 0;
  };
  let chunk = Math.ceil(current.length / 2);
  while (chunk >= 1 && budgetLeft() && current.length > 0) {
    let removed = false;
    for (let i = 0; i < current.length && budgetLeft(); i += chunk) {
      const candidate = [...current.slice(0, i), ...current.slice(i + chunk)];
      if (await fails(candidate)) {
        current = candidate;
        removed = true;
        break;
      }
    }
    if (!removed) chunk = Math.floor(chunk / 2);
  }
  return { only: current, violations };
}
