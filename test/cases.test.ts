/**
 * Every scenario case in test/cases as its own test (test/cases/FORMAT.md), the cases of a
 * group file (`cases:`) one test each. A checking module that fails to load fails this file.
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
    it('meets its expectations', async () => {
      const result = await runCase(c);
      expect(result.messages).toEqual([]);
      expect(result.status).toBe('passed');
    });
  });
});
