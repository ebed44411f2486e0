import { describe, expect, it } from 'vitest';
import { budgetCap, budgetNodes, budgetStatus, counterLimit, isBudgetActive, normalizeSchedule } from '../../../shared/disruption/budgets.ts';
import { NodePoolSchema, type NodePool, type Budget } from '../../../shared/api/nodepool.ts';
import { ValidationError } from '../../../shared/api/errors.ts';

function pool(budgets?: Budget[]): NodePool {
  return NodePoolSchema.parse({
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: 'default' },
    spec: {
      template: { spec: { nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' }, requirements: [] } },
      ...(budgets ? { disruption: { budgets } } : {}),
    },
  });
}

const at = (iso: string) => new Date(iso);

describe('isBudgetActive', () => {
  // The seed's office-hours budget: "0 9 * * mon-fri" for 8h, read in UTC (Karpenter has no time zones).
  const office: Budget = { nodes: '0', schedule: '0 9 * * mon-fri', duration: '8h' };

  it('is active Monday 09:00-17:00 UTC and not outside it', () => {
    expect(isBudgetActive(office, at('2026-03-02T09:00:00Z'))).toBe(true); // Monday, the hit itself
    expect(isBudgetActive(office, at('2026-03-02T12:30:00Z'))).toBe(true);
    expect(isBudgetActive(office, at('2026-03-02T16:59:59Z'))).toBe(true);
    expect(isBudgetActive(office, at('2026-03-02T17:00:00Z'))).toBe(false); // duration over
    expect(isBudgetActive(office, at('2026-03-02T08:59:00Z'))).toBe(false);
    expect(isBudgetActive(office, at('2026-03-07T12:00:00Z'))).toBe(false); // Saturday
  });

  it('KST pitfall: "0 9 * * mon-fri" is 18:00 in Seoul, so Korean office hours need "0 0 * * mon-fri"', () => {
    // 10:00 KST on Monday 2 March 2026 is 01:00 UTC.
    const tenAmSeoul = at('2026-03-02T01:00:00Z');
    expect(isBudgetActive(office, tenAmSeoul)).toBe(false);
    const seoulOffice: Budget = { nodes: '0', schedule: '0 0 * * mon-fri', duration: '8h' };
    expect(isBudgetActive(seoulOffice, tenAmSeoul)).toBe(true);
    // 18:00 KST Monday (09:00 UTC) is after Seoul office hours, yet the UTC-written budget is active then.
    expect(isBudgetActive(seoulOffice, at('2026-03-02T09:00:00Z'))).toBe(false);
    expect(isBudgetActive(office, at('2026-03-02T09:00:00Z'))).toBe(true);
  });

  it('@yearly with 24h is active at noon on 1 January', () => {
    expect(isBudgetActive({ nodes: '0', schedule: '@yearly', duration: '24h' }, at('2026-01-01T12:00:00Z'))).toBe(true);
    expect(isBudgetActive({ nodes: '0', schedule: '@annually', duration: '24h' }, at('2026-01-02T00:00:00Z'))).toBe(false);
  });

  it('a budget without schedule is always active', () => {
    expect(isBudgetActive({ nodes: '10%' }, at('2026-06-01T00:00:00Z'))).toBe(true);
  });

  it('rejects time zones, seconds fields and unknown macros', () => {
    expect(() => normalizeSchedule('TZ=Asia/Seoul 0 9 * * *')).toThrow(ValidationError);
    expect(() => normalizeSchedule('0 0 9 * * *')).toThrow(/5 fields/);
    expect(() => normalizeSchedule('@weekdays')).toThrow(/unknown macro/);
    expect(normalizeSchedule('@hourly')).toBe('0 * * * *');
  });
});

describe('budget arithmetic', () => {
  it('rounds percentages up', () => {
    expect(budgetNodes({ nodes: '10%' }, 2)).toBe(1);
    expect(budgetNodes({ nodes: '10%' }, 0)).toBe(0);
    expect(budgetNodes({ nodes: '25%' }, 10)).toBe(3);
    expect(budgetNodes({ nodes: '5' }, 100)).toBe(5);
  });

  it('defaults to 10% and subtracts disrupting nodes', () => {
    const s = budgetStatus(pool(), 'Underutilized', 30, 1, at('2026-03-02T10:00:00Z'));
    expect(s.cap).toBe(3);
    expect(s.allowed).toBe(2);
    expect(budgetStatus(pool(), 'Empty', 30, 5, at('2026-03-02T10:00:00Z')).allowed).toBe(0);
  });

  it('takes the most restrictive active budget for the reason; none active = unbounded', () => {
    const p = pool([
      { nodes: '20%', reasons: ['Empty'], schedule: '0 6 * * *', duration: '20h' },
      { nodes: '20%', reasons: ['Underutilized', 'Empty'], schedule: '0 2 * * *', duration: '4h' },
      { nodes: '1', reasons: ['Drifted'] },
    ]);
    const noon = at('2026-03-04T12:00:00Z');
    expect(budgetCap(p, 'Empty', 10, noon)).toBe(2);
    expect(budgetCap(p, 'Underutilized', 10, noon)).toBeUndefined();
    expect(budgetStatus(p, 'Underutilized', 10, 3, noon).allowed).toBe(Infinity);
    expect(budgetCap(p, 'Drifted', 10, noon)).toBe(1);
    expect(budgetCap(p, 'Underutilized', 10, at('2026-03-04T03:00:00Z'))).toBe(2);
  });

  it('counter limit does not subtract the counter holders twice', () => {
    const s = budgetStatus(pool([{ nodes: '3' }]), 'Drifted', 10, 2, at('2026-03-02T10:00:00Z'));
    expect(s.allowed).toBe(1);
    // both disrupting nodes hold counter slots: the counter itself counts them
    expect(counterLimit(s, 0)).toBe(3);
    // one NotReady node the counter does not know about
    expect(counterLimit(s, 1)).toBe(2);
  });
});
