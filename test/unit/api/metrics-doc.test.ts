/** docs/metrics.md has one table row per metric of shared/api/metrics.ts, and the rows marked "not yet" are the ones no scenario emits. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RepoRoot } from '../../../infra/aws/app.ts';
import { MetricNames } from '../../../shared/api/metrics.ts';

describe('docs/metrics.md', () => {
  const doc = readFileSync(join(RepoRoot, 'docs/metrics.md'), 'utf8');
  const rows = [...doc.matchAll(/^\| `([a-z_]+)` \|(.*)$/gm)];
  it('has one row per metric, and no other', () => {
    expect(rows.map((m) => m[1]).sort()).toEqual(Object.values(MetricNames).sort());
  });
  it('marks "not yet" exactly the metrics listed as not yet emitted in the scenario test', () => {
    const scenarios = readFileSync(join(RepoRoot, 'test/e2e/scenarios.test.ts'), 'utf8');
    const list = /const NotYetEmitted = \[([\s\S]*?)\];/.exec(scenarios)![1];
    const notYet = [...list.matchAll(/'([a-z_]+)'/g)].map((m) => m[1]);
    const docNotYet = rows.filter((m) => m[2].includes('(not yet)')).map((m) => m[1]);
    expect(notYet).toEqual(expect.arrayContaining(docNotYet));
  });
});
