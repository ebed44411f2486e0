/** docs/metrics.md has one table row per metric of shared/api/metrics.ts, and none is marked "not yet" (every one is emitted: test/e2e/scenarios.test.ts). */
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
  it('marks no metric "not yet": every dashboard metric is emitted by some scenario (test/e2e/scenarios.test.ts)', () => {
    expect(rows.filter((m) => m[2].includes('(not yet)')).map((m) => m[1])).toEqual([]);
  });
});
