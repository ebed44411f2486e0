/**
 * A short pass of `npm run attack` in npm test: five forged inputs of each family (seeds 1–30,
 * trial i of family i mod 6, as the CLI numbers them) against the real handlers and state
 * machines, and no invariant broken. test/attack/toothless.test.ts shows the same invariants
 * catch a protection taken out.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { FamilyNames } from './families.ts';
import { runTrial, type TrialResult } from './run.ts';
import { stopLocalDynamo } from './world.ts';

const Trials = 30;

afterAll(() => stopLocalDynamo());

describe('npm run attack (short pass)', () => {
  it(`${Trials} forged inputs, every family, break no invariant`, async () => {
    // Act
    const results: TrialResult[] = [];
    for (let i = 0; i < Trials; i++) results.push(await runTrial(FamilyNames[i % FamilyNames.length], 1 + i));
    // Assess
    const broken = results.flatMap((r) => r.violations.map((v) => `${r.family} seed ${r.seed} (${r.kind}: ${r.summary}): ${v.invariant}: ${v.message}`));
    expect(broken).toEqual([]);
    expect(new Set(results.map((r) => r.family)).size).toBe(FamilyNames.length);
    expect(new Set(results.map((r) => `${r.family}/${r.kind}`)).size).toBeGreaterThan(15);
  }, 120_000);
});
