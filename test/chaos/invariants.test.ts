/**
 * The one-claim-per-need invariant on plain data (`claimsPerPendingPod`, invariants.ts): two
 * distinct launching claims for one pending pod, and one claim that names the pod twice, are two
 * different findings (chaos seed 26 printed the second as "[pool-1-42q6c, pool-1-42q6c]", counted
 * as two claims).
 */
import { describe, expect, it } from 'vitest';
import { claimsPerPendingPod } from './invariants.ts';

const pending = new Set(['default/db-0-1']);

describe('claimsPerPendingPod (one-claim-per-need)', () => {
  it('two claims launching for one pending pod: reported with both claims', () => {
    // Act
    const r = claimsPerPendingPod(
      [
        { name: 'pool-1-dr7sb', pods: ['default/db-0-1'] },
        { name: 'pool-1-xm6d5', pods: ['default/db-0-1', 'default/app-0-x'] },
      ],
      pending,
    );
    // Assess
    expect(r.severalClaims).toEqual([{ pod: 'default/db-0-1', claims: ['pool-1-dr7sb', 'pool-1-xm6d5'] }]);
    expect(r.namedTwice).toEqual([]);
  });

  it('one claim naming the pending pod twice: one claim, sized for the pod twice (not "two claims")', () => {
    // Act
    const r = claimsPerPendingPod([{ name: 'pool-1-42q6c', pods: ['default/db-0-1', 'default/db-0-1'] }], pending);
    // Assess
    expect(r.severalClaims).toEqual([]);
    expect(r.namedTwice).toEqual([{ pod: 'default/db-0-1', claim: 'pool-1-42q6c', times: 2 }]);
  });

  it('a pod that is not pending (it runs) is no finding, however many claims name it', () => {
    // Act
    const r = claimsPerPendingPod(
      [
        { name: 'a', pods: ['default/web', 'default/web'] },
        { name: 'b', pods: ['default/web'] },
      ],
      pending,
    );
    // Assess
    expect(r).toEqual({ severalClaims: [], namedTwice: [] });
  });
});
