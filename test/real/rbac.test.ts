/** Each nodefleet identity against the real API server (test/real/rbac.ts); also `npm run real-rbac`. */
import { describe, expect, it } from 'vitest';
import { runRbacChecks } from './rbac-main.ts';

describe('RBAC on the real API server', () => {
  it('allows each identity what its code needs and refuses the rest', async () => {
    const results = await runRbacChecks(() => {});
    expect(new Set(results.map((r) => r.identity)).size).toBeGreaterThanOrEqual(11);
    expect(results.filter((r) => !r.ok)).toEqual([]);
  });
});
