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
    it('meets its expectations', async () => {
      const result = await runCase(c);
      if (c.doc.knownDifference !== undefined) {
        // A recorded difference from Karpenter: it must still fail the way it is described.
        expect(result.status).toBe('known-difference');
        return;
      }
      expect(result.messages).toEqual([]);
      expect(result.status).toBe('passed');
    });
  });
});

describe('Karpenter ports (test/cases/karpenter/COVERAGE.md)', () => {
  const coverage = readFileSync(join(import.meta.dirname, 'cases', 'karpenter', 'COVERAGE.md'), 'utf8');
  const names = new Set(cases.map((c) => c.name));

  it('every case a coverage line names exists', () => {
    // "case: a, b" optionally followed by "; test: …" or " — FAILS: …"
    const named = [...coverage.matchAll(/— case: (.*)$/gm)].flatMap((m) =>
      m[1]
        .split(/; test: | — /)[0]
        .split(', ')
        .map((n) => n.replace(/^\.\.\//, '')),
    );
    expect(named.length).toBeGreaterThan(100);
    expect(named.filter((n) => !names.has(n))).toEqual([]);
  });

  it('a case marked knownDifference is listed as FAILS, and a FAILS line names such a case', () => {
    const known = cases.filter((c) => c.doc.knownDifference !== undefined && c.file.includes(join('cases', 'karpenter'))).map((c) => c.name);
    // "case: a — FAILS: …" or "case: a, b — FAILS: …" (every case named before FAILS differs as recorded)
    const fails = [...coverage.matchAll(/— case: (.*?) — FAILS:/gm)].flatMap((m) => m[1].split(', '));
    expect(fails.sort()).toEqual(known.sort());
  });

  it('every ported group case is named by a coverage line', () => {
    const ported = cases.filter((c) => c.file.includes(`${join('cases', 'karpenter')}`) && c.name.includes('/'));
    expect(ported.filter((c) => !coverage.includes(c.name))).toEqual([]);
  });
});
