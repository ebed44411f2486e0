/**
 * Every scenario case in test/cases as its own test (test/cases/FORMAT.md), the cases of a
 * group file (`cases:`) one test each. A checking module that fails to load fails this file.
 */
import { readFileSync } from 'node:fs';
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
    it(c.doc.knownDifference ? 'differs as its knownDifference records' : 'meets its expectations', async () => {
      const result = await runCase(c);
      if (c.doc.knownDifference) {
        expect(result.status).toBe('known');
      } else {
        expect(result.messages).toEqual([]);
        expect(result.status).toBe('passed');
      }
    });
  });
});

describe('Karpenter ports (test/cases/karpenter/COVERAGE.md)', () => {
  const coverage = readFileSync(join(import.meta.dirname, 'cases', 'karpenter', 'COVERAGE.md'), 'utf8');
  const names = new Set(cases.map((c) => c.name));

  it('every case a coverage line names exists', () => {
    // A case that differs as recorded reads `case: names — known difference: reason`.
    const named = [...coverage.matchAll(/— case: (.*)$/gm)].flatMap((m) => m[1].split(' — ')[0].split(', ').map((n) => n.replace(/^\.\.\//, '')));
    expect(named.length).toBeGreaterThan(100);
    expect(named.filter((n) => !names.has(n))).toEqual([]);
  });

  it('a case recorded as a known difference carries knownDifference, and the other way round', () => {
    const lines = coverage.split('\n').filter((l) => l.includes('— case: '));
    const knownNamed = new Set(lines.filter((l) => l.includes('— known difference:')).flatMap((l) => l.split('— case: ')[1].split(' — ')[0].split(', ')));
    const knownCases = cases.filter((c) => c.doc.knownDifference && c.file.includes(join('cases', 'karpenter')));
    expect(knownCases.filter((c) => !knownNamed.has(c.name)).map((c) => c.name)).toEqual([]);
  });

  it('every ported group case is named by a coverage line', () => {
    const ported = cases.filter((c) => c.file.includes(`${join('cases', 'karpenter')}`) && c.name.includes('/'));
    expect(ported.filter((c) => !coverage.includes(c.name))).toEqual([]);
  });
});
