/**
 * Every scenario case in test/cases as its own test (test/cases/FORMAT.md). Cases whose
 * checks belong to a module that cannot be loaded yet are skipped with the reason shown.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadCases } from '../functions/cli/cases/load.ts';
import { runCase } from '../functions/cli/cases/runner.ts';

const cases = loadCases([join(import.meta.dirname, 'cases')]);

describe('scenario cases', () => {
  it('finds the cases', () => {
    expect(cases.length).toBeGreaterThanOrEqual(35);
  });

  describe.each(cases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    it('meets its expectations', async (ctx) => {
      const result = await runCase(c);
      if (result.status === 'pending') ctx.skip(result.messages.join('; '));
      expect(result.messages).toEqual([]);
      expect(result.status).toBe('passed');
    });
  });
});
