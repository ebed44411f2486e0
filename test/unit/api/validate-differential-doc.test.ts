/** Each documented validation difference (test/real/differential/differences.ts) is explained once in docs/validate-differential.md. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RepoRoot } from '../../../infra/aws/app.ts';
import { Differences } from '../../real/differential/differences.ts';

describe('docs/validate-differential.md', () => {
  it('has one table row per documented difference, and no other', () => {
    const doc = readFileSync(join(RepoRoot, 'docs/validate-differential.md'), 'utf8');
    const rows = [...doc.matchAll(/^\| `([a-z0-9-]+)` \|/gm)].map((m) => m[1]);
    expect(rows.sort()).toEqual(Differences.map((d) => d.id).sort());
  });
});
