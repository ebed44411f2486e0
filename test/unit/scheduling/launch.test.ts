import { describe, expect, it } from 'vitest';
import { Requirements } from '../../../shared/api/requirements.ts';
import { planLaunch, truncateKeepingMinValues } from '../../../shared/scheduling/launch.ts';
import type { TemplateType } from '../../../shared/scheduling/template.ts';
import { itype } from './builders.ts';

function tt(name: string, family: string, price: number): TemplateType {
  const type = itype({ name, price: { 'on-demand': price }, labels: { 'karpenter.k8s.aws/instance-family': family } });
  return { type, offerings: type.offerings, daemonOverhead: {}, room: type.allocatable, exotic: false, efficient: true, minPriceUsdPerHour: price };
}

describe('launch planning', () => {
  it('cuts to the cheapest N but keeps enough families for minValues', () => {
    const ordered = [tt('a1', 'a', 1), tt('a2', 'a', 2), tt('a3', 'a', 3), tt('b1', 'b', 4), tt('c1', 'c', 5)];
    const reqs = Requirements.fromSpecs([{ key: 'karpenter.k8s.aws/instance-family', operator: 'Exists', minValues: 3 }]);
    expect(truncateKeepingMinValues(ordered, reqs, 3).map((t) => t.type.name)).toEqual(['a1', 'b1', 'c1']);
    expect(truncateKeepingMinValues(ordered, new Requirements(), 3).map((t) => t.type.name)).toEqual(['a1', 'a2', 'a3']);
  });

  it('orders by the cheapest offering and prices the first launch type', () => {
    const plan = planLaunch([tt('dear', 'a', 0.5), tt('cheap', 'b', 0.1)], new Requirements());
    expect(plan.launch.map((t) => t.type.name)).toEqual(['cheap', 'dear']);
    expect(plan.priceUsdPerHour).toBe(0.1);
    expect(plan.capacityTypes).toEqual(['on-demand']);
    expect(plan.zones).toEqual(['us-east-1a', 'us-east-1b', 'us-east-1c']);
  });

  it('checks minValues over every capacity type, then launches the chosen one (KA filterInstanceTypes; parity seed 1 #1944)', () => {
    // Three types hold the claim; only one sells spot. Karpenter schedules it (three values over
    // both capacity types) and launches spot with the one spot type.
    const mk = (name: string, spot: number | undefined, od: number): TemplateType => {
      const type = itype({
        name,
        capacityTypes: spot === undefined ? ['on-demand'] : ['on-demand', 'spot'],
        price: { 'on-demand': od, ...(spot === undefined ? {} : { spot }) },
      });
      return {
        type,
        offerings: type.offerings,
        daemonOverhead: {},
        room: type.allocatable,
        exotic: false,
        efficient: true,
        minPriceUsdPerHour: Math.min(od, spot ?? od),
      };
    };
    const reqs = Requirements.fromSpecs([{ key: 'node.kubernetes.io/instance-type', operator: 'Exists', minValues: 3 }]);
    const plan = planLaunch([mk('s', 0.06, 0.15), mk('o1', undefined, 0.16), mk('o2', undefined, 0.2)], reqs);
    expect(plan.problem).toBeUndefined();
    expect(plan.capacityTypes[0]).toBe('spot');
    expect(plan.launch.map((t) => t.type.name)).toEqual(['s']);
    expect(plan.priceUsdPerHour).toBe(0.06);
    // Two types in all: minValues 3 is not met, whatever the capacity type.
    expect(planLaunch([mk('s', 0.06, 0.15), mk('o1', undefined, 0.16)], reqs).problem).toMatch(/needs 3 values, 2 available/);
  });
});
