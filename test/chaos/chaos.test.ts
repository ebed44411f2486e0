/**
 * The short chaos pass `npm test` runs: two fixed seeds with faults on a shortened active window.
 * The full figure (`npm run chaos -- --runs 50 --json`) is in README.md.
 */
import { describe, expect, it } from 'vitest';
import { runChaos } from './run.ts';

const Seeds = [4, 5];

describe('chaos (short pass)', () => {
  for (const seed of Seeds) {
    it(`seed ${seed}: faults injected, every invariant holds`, { timeout: 300_000 }, async () => {
      // Act
      const r = await runChaos({ seed, faultsPerRun: 14, activeSeconds: 300 });
      // Assess
      expect(r.violations).toEqual([]);
      expect(r.injected.length).toBeGreaterThanOrEqual(5);
    });
  }
});
