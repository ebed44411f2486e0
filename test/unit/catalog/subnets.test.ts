/**
 * shared/catalog/subnets.ts: the zones an EC2NodeClass's subnets cover decide where offerings are
 * available (and their zone ids), the subnet per zone is the one with the most free IPs; and the
 * scheduler restricts placement by `topology.k8s.aws/zone-id` (NodePool or pod) through those ids.
 */
import { describe, expect, it } from 'vitest';
import { instanceTypeFromCase, loadCatalog, subnetCoverage, subnetPerZone } from '../../../shared/catalog/index.ts';
import { solve } from '../../../shared/scheduling/index.ts';
import { input, nodePool, pendingPod } from '../scheduling/builders.ts';

const subnets = [
  { subnetId: 'subnet-0b2', zone: 'us-east-1b', zoneId: 'use1-az6', availableIpAddressCount: 500 },
  { subnetId: 'subnet-0b1', zone: 'us-east-1b', zoneId: 'use1-az6', availableIpAddressCount: 500 },
  { subnetId: 'subnet-0c1', zone: 'us-east-1c', zoneId: 'use1-az1', availableIpAddressCount: 20 },
  { subnetId: 'subnet-0c2', zone: 'us-east-1c', zoneId: 'use1-az1', availableIpAddressCount: 4000 },
];

describe('subnetPerZone', () => {
  it('the most available IPs per zone; a tie goes to the smallest subnet id (whatever the order given)', () => {
    for (const order of [subnets, [...subnets].reverse()]) {
      expect(Object.fromEntries([...subnetPerZone(order)].map(([z, s]) => [z, s.subnetId]))).toEqual({
        'us-east-1b': 'subnet-0b1',
        'us-east-1c': 'subnet-0c2',
      });
    }
    expect([...subnetPerZone(subnets, ['us-east-1c']).keys()]).toEqual(['us-east-1c']);
  });
});

describe('loadCatalog with the node class subnets', () => {
  it('offerings are available only in the covered zones, with the subnets’ zone ids; without subnets every zone', () => {
    const all = loadCatalog({ region: 'us-east-1' }).find((t) => t.name === 'm5.large')!;
    const covered = loadCatalog({ region: 'us-east-1', subnets }).find((t) => t.name === 'm5.large')!;
    expect(new Set(all.offerings.filter((o) => o.available).map((o) => o.zone)).size).toBe(6);
    expect([...new Set(covered.offerings.filter((o) => o.available).map((o) => o.zone))].sort()).toEqual(['us-east-1b', 'us-east-1c']);
    expect(covered.offerings.filter((o) => o.available).map((o) => [o.zone, o.zoneId])).toContainEqual(['us-east-1c', 'use1-az1']);
    expect(covered.offerings.filter((o) => !o.available).every((o) => o.zoneId === undefined)).toBe(true);
    // The account's pairing wins over the shipped example pairing (us-east-1b is use1-az6 in both; 1c is use1-az1 in both): another account's
    const other = loadCatalog({ region: 'us-east-1', subnets: [{ zone: 'us-east-1a', zoneId: 'use1-az2' }] }).find((t) => t.name === 'm5.large')!;
    expect(other.offerings.find((o) => o.available)?.zoneId).toBe('use1-az2');
    expect(subnetCoverage(subnets)).toEqual(
      new Map([
        ['us-east-1b', 'use1-az6'],
        ['us-east-1c', 'use1-az1'],
      ]),
    );
  });
});

describe('topology.k8s.aws/zone-id restricts placement', () => {
  const types = [
    instanceTypeFromCase(
      { name: 'small', cpu: 4, memoryMiB: 16384, zones: ['us-east-1a', 'us-east-1b', 'us-east-1c'], capacityTypes: ['on-demand'], price: { 'on-demand': 0.2 } },
      { subnets },
    ),
  ];

  it('a NodePool zone-id requirement: claims only in that zone', () => {
    const pool = nodePool('default', { requirements: [{ key: 'topology.k8s.aws/zone-id', operator: 'In', values: ['use1-az1'] }] });
    const r = solve(input([pendingPod('a', { cpu: '3' }), pendingPod('b', { cpu: '3' })], types, [pool]));
    expect(r.unschedulable).toEqual([]);
    expect(r.newNodeClaims.map((c) => c.zones)).toEqual([['us-east-1c'], ['us-east-1c']]);
  });

  it('a pod zone-id requirement (nodeSelector or affinity NotIn): its claim only in the zones it admits', () => {
    const pinned = pendingPod('pinned', { spec: { nodeSelector: { 'topology.k8s.aws/zone-id': 'use1-az6' } } });
    const notAz6 = pendingPod('not-az6', {
      spec: {
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [{ matchExpressions: [{ key: 'topology.k8s.aws/zone-id', operator: 'NotIn', values: ['use1-az6'] }] }],
            },
          },
        },
      },
    });
    const nowhere = pendingPod('nowhere', { spec: { nodeSelector: { 'topology.k8s.aws/zone-id': 'use1-az4' } } });
    const r = solve(input([pinned, notAz6, nowhere], types, [nodePool('default')]));
    const zonesOf = (pod: string) => r.newNodeClaims.find((c) => c.pods.some((p) => p.metadata.name === pod))?.zones;
    expect(zonesOf('pinned')).toEqual(['us-east-1b']);
    expect(zonesOf('not-az6')).toEqual(['us-east-1c']);
    expect(r.unschedulable.map((u) => u.pod.metadata.name)).toEqual(['nowhere']);
    // The claim carries the zone id the pod asked for, as its label.
    expect(r.newNodeClaims.find((c) => c.pods.some((p) => p.metadata.name === 'pinned'))?.labels['topology.k8s.aws/zone-id']).toBe('use1-az6');
  });
});
