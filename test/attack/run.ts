/**
 * One attack trial: the honest world of a seed (world.ts), one forged input of a family
 * (families.ts) sent through its real entry point at t0, the world settled (world.ts `settle`:
 * the scheduled passes and every execution they start, to the horizon), then the invariants
 * (invariants.ts). A seed and a family name one trial exactly: `npm run attack -- --family F --seed N --count 1`.
 */
import { Families, Draw, type FamilyName } from './families.ts';
import { buildWorld } from './world.ts';
import { checkInvariants, type Violation } from './invariants.ts';

export interface TrialResult {
  family: FamilyName;
  seed: number;
  kind: string;
  summary: string;
  violations: Violation[];
  /** Effects on the cluster and EC2 by kind (terminate, evict, deletePod, …): what the trial exercised. */
  effects: Record<string, number>;
  /** Real seconds the trial took. */
  seconds: number;
}

/** Runs the trial of `family` with `seed`. */
export async function runTrial(family: FamilyName, seed: number): Promise<TrialResult> {
  const start = performance.now();
  const f = Families[family];
  const w = await buildWorld({ seed, store: f.store, partition: `${family}-${seed}-${process.pid}-${Date.now()}` });
  let kind = '?';
  let summary = '';
  try {
    const forged = f.forge(w, new Draw(seed));
    kind = forged.kind;
    summary = forged.summary;
    await w.scheduler.work(() => forged.apply(w));
    await w.settle();
    const violations = await checkInvariants(w);
    const effects: Record<string, number> = {};
    for (const e of w.effects) effects[e.kind] = (effects[e.kind] ?? 0) + 1;
    return { family, seed, kind, summary, violations, effects, seconds: (performance.now() - start) / 1000 };
  } catch (err) {
    // The harness itself failed (not a handler: handlers' throws are kept by the world): report it, never hide it.
    return {
      family,
      seed,
      kind,
      summary,
      violations: [{ invariant: 'harness-error', message: (err as Error)?.stack ?? String(err) }],
      effects: {},
      seconds: (performance.now() - start) / 1000,
    };
  } finally {
    await w.stop();
  }
}
