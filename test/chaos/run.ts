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
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalEnvironment } from '../../infra/local/environment.ts';
import { RegistrationTimeoutSeconds } from '../../shared/disruption/gc.ts';
import { buildWorld } from './world.ts';
import { ChaosInjector, planFaults, type InjectedFault, type PlannedFault } from './injector.ts';
import { CheckEverySeconds, Monitor, type Violation } from './invariants.ts';

export interface RunOptions {
  seed: number;
  faultsPerRun: number;
  /** Keep only these fault indices (replay / shrink). */
  only?: number[];
  /** Virtual seconds of the active window (workload changes and faults). Default 12 minutes. */
  activeSeconds?: number;
  /** Most virtual seconds to wait for the cluster to settle once faults stop. */
  settleSeconds?: number;
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

export async function runChaos(o: RunOptions): Promise<RunResult> {
  const realStart = Date.now();
  const activeMs = (o.activeSeconds ?? DefaultActiveSeconds) * 1000;
  const world = buildWorld(o.seed, activeMs);
  const planned = planFaults(o.seed, o.faultsPerRun, activeMs).filter((f) => !o.only || o.only.includes(f.index));
  const injector = new ChaosInjector(world);
  const workDir = mkdtempSync(join(tmpdir(), 'nodefleet-chaos-'));
  const env = new LocalEnvironment({ scenario: world.scenario, stepped: true, persist: false, workDir, faults: injector });
  injector.attach(env);
  const monitor = new Monitor(env, o.seed, injector);
  let settled = false;
  try {
    await env.start();
    if (env.missing.length) throw new Error(`environment incomplete: ${env.missing.map((m) => `${m.name} (${m.reason})`).join('; ')}`);
    const t0 = env.clock.startEpochMs();
    for (const a of world.actions) {
      env.clock.setTimerAt(() => {
        try {
          if (a.kind === 'scale') {
            const w = world.workloads.find((x) => x.name === a.workload)!;
            if (w.kind === 'Deployment') env.cluster.scale('default', w.name, a.replicas);
            else env.cluster.apply([{ ...w.object, spec: { ...w.object.spec, replicas: a.replicas } }] as any);
          } else {
            const p = world.pools.find((x) => x.name === a.pool)!;
            const obj = structuredClone(p.object);
            obj.spec.template.metadata.labels['chaos/generation'] = String(a.atMs);
            env.cluster.apply([obj] as any);
          }
        } catch (err) {
          o.log?.(`seed ${o.seed}: action ${a.kind} failed: ${(err as Error).message}`);
        }
      }, t0 + a.atMs);
    }
    for (const f of planned) env.clock.setTimerAt(() => injector.arm(f), t0 + f.atMs);

    let lastReal = Date.now();
    while (env.clock.nowMs() < t0 + activeMs) {
      await env.clock.sleep(CheckEverySeconds * 1000);
      await monitor.check();
      if (process.env.CHAOS_DEBUG && Date.now() - lastReal > 5000) {
        lastReal = Date.now();
        o.log?.(`seed ${o.seed} t=${Math.round(env.clock.elapsedSeconds())}s ${JSON.stringify(env.clock.stats)}: ${await monitor.describe()}`);
      }
    }
    injector.stop();
    const quietStart = env.clock.nowMs();
    const settleMs = (o.settleSeconds ?? DefaultSettleSeconds) * 1000;
    while (env.clock.nowMs() < quietStart + settleMs) {
      await env.clock.sleep(CheckEverySeconds * 1000);
      await monitor.check();
      if (env.clock.nowMs() >= quietStart + MinSettleSeconds * 1000 && (await monitor.settled())) {
        settled = true;
        break;
      }
    }
    if (!settled) o.log?.(`seed ${o.seed}: not settled: ${await monitor.describe()}${process.env.CHAOS_DEBUG ? `\n${await monitor.dump()}\n${injector.injected.map((f) => `  fault ${f.index} ${f.kind} at ${Math.round(f.atMs / 1000)}s ${f.detail}`).join('\n')}` : ''}`);
    await monitor.final();
    injector.collectCrashes();
  } finally {
    await env.stop();
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

/**
 * Smallest fault subset of a failing run that still fails the same invariant (at most
 * `maxRuns` replays). Returns the fault indices and the violations of the smallest failing replay.
 */
export async function shrink(first: RunResult, o: RunOptions, maxRuns = 10): Promise<{ only: number[]; violations: Violation[] }> {
  const target = first.violations[0]?.invariant;
  let current = first.planned.map((f) => f.index);
  let violations = first.violations;
  let runs = 0;
  const fails = async (only: number[]): Promise<boolean> => {
    runs += 1;
    const r = await runChaos({ ...o, only });
    const hit = r.violations.filter((v) => v.invariant === target);
    if (hit.length) violations = r.violations;
    return hit.length > 0;
  };
  let chunk = Math.ceil(current.length / 2);
  while (chunk >= 1 && runs < maxRuns && current.length > 0) {
    let removed = false;
    for (let i = 0; i < current.length && runs < maxRuns; i += chunk) {
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
