import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { checkDisruptionCase, hasDisruptionExpectations, type DisruptionCaseDoc } from '../../../functions/cli/cases/disruption.ts';

const dir = join(import.meta.dirname, '../../cases');
const cases = readdirSync(dir)
  .filter((f) => f.endsWith('.yaml'))
  .map((f) => ({ file: f, doc: parse(readFileSync(join(dir, f), 'utf8')) as DisruptionCaseDoc }))
  .filter((c) => hasDisruptionExpectations(c.doc.expect));

describe('disruption scenario cases', () => {
  it('finds the disruption cases', () => {
    expect(cases.length).toBeGreaterThanOrEqual(11);
  });

  it.each(cases.map((c) => [c.file, c.doc] as const))('%s', (_file, doc) => {
    const result = checkDisruptionCase(doc);
    expect(result.failures).toEqual([]);
  });
});
