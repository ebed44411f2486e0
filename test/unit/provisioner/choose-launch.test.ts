import { describe, expect, it } from 'vitest';
import { chooseLaunch } from '../../../shared/launch/launch.ts';
import { Requirements } from '../../../shared/api/requirements.ts';
import type { InstanceType } from '../../../shared/catalog/index.ts';

const type = (name: string, offers: [zone: string, capacityType: 'spot' | 'on-demand', price: number][], extra: Partial<InstanceType> = {}): InstanceType =>
  ({
    name,
    labels: {},
    capacity: { pods: 29 },
    allocatable: {},
    offerings: offers.map(([zone, capacityType, priceUsdPerHour]) => ({ zone, capacityType, priceUsdPerHour, available: true })),
    ...extra,
  }) as unknown as InstanceType;
const reqs = (capacityTypes: string[], minValues?: number) =>
  Requirements.fromSpecs([
    { key: 'karpenter.sh/capacity-type', operator: 'In', values: capacityTypes },
    { key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['m5.large', 'g4dn.xlarge', 'c5.large'], ...(minValues ? { minValues } : {}) },
  ]);

describe('chooseLaunch: the launch filters of Karpenter’s AWS provider', () => {
  it('leaves exotic types out while another type can launch (not with minValues)', () => {
    const types = [type('g4dn.xlarge', [['a', 'spot', 0.1]], { exotic: true, capacity: { pods: 58 } }), type('m5.large', [['a', 'on-demand', 0.2]])];
    expect(chooseLaunch(types, reqs(['spot', 'on-demand']), new Set())).toMatchObject({
      capacityType: 'on-demand',
      instanceTypes: ['m5.large'],
      maxPods: { 'm5.large': 29 },
    });
    expect(chooseLaunch(types, reqs(['spot', 'on-demand'], 2), new Set())).toMatchObject({
      capacityType: 'spot',
      instanceTypes: ['g4dn.xlarge'],
      maxPods: { 'g4dn.xlarge': 58 },
    });
    expect(chooseLaunch([types[0]], reqs(['spot', 'on-demand']), new Set())).toMatchObject({ instanceTypes: ['g4dn.xlarge'] });
  });
  it('with spot and on-demand allowed, spot offerings dearer than the cheapest on-demand one are left out', () => {
    const types = [
      type('m5.large', [
        ['a', 'spot', 0.5],
        ['a', 'on-demand', 0.3],
      ]),
      type('c5.large', [['b', 'spot', 0.2]]),
    ];
    expect(chooseLaunch(types, reqs(['spot', 'on-demand']), new Set())).toMatchObject({ capacityType: 'spot', instanceTypes: ['c5.large'], zones: ['b'] });
    expect(chooseLaunch(types, reqs(['spot']), new Set())).toMatchObject({ capacityType: 'spot', instanceTypes: ['c5.large', 'm5.large'] });
  });
});
