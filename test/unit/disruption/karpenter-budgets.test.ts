/**
 * Karpenter's budget API tests (sigs.k8s.io/karpenter v1.15.0 pkg/apis/v1/nodepool_budgets_test.go),
 * ported as facts about nodefleet's budget code: each `it` names the Karpenter test it ports
 * (test/cases/karpenter/COVERAGE.md, "budgets (API)").
 *
 * Shared situation (the Karpenter suite's BeforeEach): now is 2000-06-15 12:30:30 UTC, the pool
 * has 100 nodes, and six budgets — 10, 100 and 100% for every reason; 15 for Drifted and
 * Underutilized; 5 for Drifted; 0 for every reason on "@weekly" — each active for 1h from every
 * minute unless a test changes it. Karpenter reports "no active budget" as MaxInt32; nodefleet's
 * `budgetCap` returns undefined (unbounded) and `budgetStatus.allowed` Infinity.
 */
import { describe, expect, it } from 'vitest';
import { budgetCap, budgetNodes, budgetStatus, isBudgetActive } from '../../../shared/disruption/budgets.ts';
import { NodePoolSchema, type Budget, type NodePool } from '../../../shared/api/nodepool.ts';
import { ValidationError } from '../../../shared/api/errors.ts';
import type { DisruptionReason } from '../../../shared/disruption/types.ts';

const Now = new Date('2000-06-15T12:30:30Z');
const Reasons: DisruptionReason[] = ['Empty', 'Underutilized', 'Drifted'];

function suiteBudgets(): Budget[] {
  return [
    { nodes: '10', schedule: '* * * * *', duration: '1h' },
    { nodes: '100', schedule: '* * * * *', duration: '1h' },
    { nodes: '100%', schedule: '* * * * *', duration: '1h' },
    { nodes: '15', schedule: '* * * * *', duration: '1h', reasons: ['Drifted', 'Underutilized'] },
    { nodes: '5', schedule: '* * * * *', duration: '1h', reasons: ['Drifted'] },
    { nodes: '0', schedule: '@weekly', duration: '1h', reasons: ['Underutilized', 'Drifted', 'Empty'] },
  ];
}

function pool(budgets: Budget[]): NodePool {
  return NodePoolSchema.parse({
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: 'budgets' },
    spec: {
      disruption: { budgets },
      template: { spec: { nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' }, requirements: [] } },
    },
  });
}

/** Allowed disruptions of one budget alone (Karpenter `Budget.GetAllowedDisruptions`). */
function allowedBy(budget: Budget, nodes: number, now: Date): number {
  return isBudgetActive(budget, now) ? budgetNodes(budget, nodes) : Infinity;
}

describe('Karpenter budgets: GetAllowedDisruptionsByReason', () => {
  it('should return 0 for all reasons if a budget is active for all reasons', () => {
    const b = suiteBudgets();
    b[5] = { ...b[5], schedule: '* * * * *' };
    for (const r of Reasons) expect(budgetCap(pool(b), r, 100, Now)).toBe(0);
  });

  it('should return MaxInt32 for all reasons when there are no active budgets', () => {
    const b = suiteBudgets().map((x) => ({ ...x, schedule: '@yearly', duration: '1h' }));
    for (const r of Reasons) {
      expect(budgetCap(pool(b), r, 100, Now)).toBeUndefined();
      expect(budgetStatus(pool(b), r, 100, 0, Now).allowed).toBe(Infinity);
    }
  });

  it('should ignore reason-defined budgets when inactive', () => {
    const b = suiteBudgets();
    b[3] = { ...b[3], schedule: '@yearly' };
    b[4] = { ...b[4], schedule: '@yearly' };
    for (const r of Reasons) expect(budgetCap(pool(b), r, 100, Now)).toBe(10);
  });

  it('should return the budget for all disruption reasons when undefined', () => {
    const b = suiteBudgets().slice(0, 1);
    for (const r of Reasons) expect(budgetCap(pool(b), r, 100, Now)).toBe(10);
  });

  it('should get the minimum budget for each reason', () => {
    const b = [...suiteBudgets(), { nodes: '4', schedule: '* * * * *', duration: '1h', reasons: ['Empty'] } as Budget];
    expect(budgetCap(pool(b), 'Empty', 100, Now)).toBe(4);
    expect(budgetCap(pool(b), 'Drifted', 100, Now)).toBe(5);
    expect(budgetCap(pool(b), 'Underutilized', 100, Now)).toBe(10);
  });
});

describe('Karpenter budgets: AllowedDisruptions', () => {
  it('should return zero values if a schedule is invalid (nodefleet: refused with a ValidationError)', () => {
    const b = { ...suiteBudgets()[0], schedule: '@wrongly' };
    expect(() => allowedBy(b, 100, Now)).toThrow(ValidationError);
    // A NodePool carrying it is refused too, so no budget is ever read as "unbounded".
    expect(() => budgetCap(pool([b]), 'Empty', 100, Now)).toThrow(ValidationError);
  });

  it('should return zero values if a nodes value is invalid (nodefleet: the NodePool is refused)', () => {
    expect(() => pool([{ ...suiteBudgets()[0], nodes: '1000a%' }])).toThrow(/node count/);
  });

  it('should return MaxInt32 when a budget is inactive', () => {
    expect(allowedBy({ ...suiteBudgets()[0], schedule: '@yearly', duration: '1h' }, 100, Now)).toBe(Infinity);
  });

  it('should return the int value when a budget is active', () => {
    expect(allowedBy(suiteBudgets()[0], 100, Now)).toBe(10);
  });

  it('should return the string value when a budget is active', () => {
    expect(allowedBy(suiteBudgets()[2], 100, Now)).toBe(100);
  });
});

describe('Karpenter budgets: IsActive', () => {
  it('should always consider a schedule and time in UTC', () => {
    // 2000-05-31 00:00 at UTC+1 is 2000-05-30 23:00 UTC: the last @daily hit (00:00 UTC) is 23h old.
    const now = new Date('2000-05-31T00:00:00+01:00');
    expect(isBudgetActive({ ...suiteBudgets()[0], schedule: '@daily', duration: '30m' }, now)).toBe(false);
  });

  it('should return that a schedule is active when schedule and duration are nil', () => {
    expect(isBudgetActive({ nodes: '10' }, Now)).toBe(true);
  });

  it('should return that a schedule is active', () => {
    expect(isBudgetActive(suiteBudgets()[0], Now)).toBe(true);
  });

  it('should return that a schedule is inactive', () => {
    expect(isBudgetActive({ ...suiteBudgets()[0], schedule: '@yearly' }, Now)).toBe(false);
  });

  it('should return that a schedule is active when the duration is longer than the recurrence', () => {
    expect(isBudgetActive({ nodes: '10', schedule: '@daily', duration: '48h' }, new Date('2024-01-07T00:00:00Z'))).toBe(true);
  });

  it('should return that a schedule is inactive when the schedule hit is after the duration', () => {
    // Sunday 2024-01-07 00:00 UTC: the last "30 6 * * SUN" hit was a week ago, 6h window long over.
    expect(isBudgetActive({ nodes: '10', schedule: '30 6 * * SUN', duration: '6h' }, new Date('2024-01-07T00:00:00Z'))).toBe(false);
  });

  it('should return an error indicating why the cron fails to parse', () => {
    // A day-of-week range that runs backwards (tue-mon) is refused, with the schedule named.
    expect(() => isBudgetActive({ nodes: '10', schedule: '0 0 * * tue-mon', duration: '6h' }, new Date('2024-01-07T00:00:00Z'))).toThrow(/0 0 \* \* tue-mon/);
  });
});
