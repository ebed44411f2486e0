import { describe, expect, it } from 'vitest';
import { createSchedulingCache, solve, type DaemonSetTemplate, type SchedulingResult } from '../../../shared/scheduling/index.ts';
import { input, itype, nodePool, pendingPods } from './builders.ts';

const small = itype({ name: 'small', cpu: 2, memoryMiB: 8192, price: { 'on-demand': 0.1 } });
const std = itype({ name: 'std' });
const big = itype({ name: 'big', cpu: 16, memoryMiB: 65536, price: { 'on-demand': 0.8 } });
const types = [big, std, small];
const daemon: DaemonSetTemplate = {
  metadata: { name: 'proxy', namespace: 'kube-system' },
  spec: { containers: [{ name: 'p', resources: { requests: { cpu: '100m' } } }] },
};

const summary = (r: SchedulingResult) => r.newNodeClaims.map((c) => [c.launchInstanceTypes.map((t) => t.name), c.requests, c.pods.length, c.priceUsdPerHour]);

describe('createSchedulingCache', () => {
  it('builds a NodePool template once and gives the same result as an uncached call', () => {
    // Prepare
    const cache = createSchedulingCache();
    const pods = pendingPods('w', 6, { cpu: '500m' });
    // Act
    const uncached = solve(input(pods, types, [nodePool('default')], { daemonSets: [daemon] }));
    const first = solve(input(pods, types, [nodePool('default')], { daemonSets: [daemon], cache }));
    const second = solve(input(pods, types, [nodePool('default')], { daemonSets: [daemon], cache }));
    // Assess: 6 × 500m + 100m daemon = 3100m on the 4-vCPU type, std then big.
    expect(summary(first)).toEqual([[['std', 'big'], { cpu: 3100, memory: 6 * 128 * 2 ** 20, pods: 7 }, 6, 0.2]]);
    expect(summary(second)).toEqual(summary(uncached));
    expect(summary(first)).toEqual(summary(uncached));
    expect(cache.stats).toEqual({ hits: 1, misses: 1 });
  });

  it('builds a new template when the ICE-cached offerings, the daemonsets or the type list change', () => {
    const cache = createSchedulingCache();
    const pods = pendingPods('w', 6, { cpu: '500m' });
    solve(input(pods, types, [nodePool('default')], { cache }));
    // std is out of capacity in every zone: no claim may launch it (the half-empty big claim is
    // split into two small ones, $0.20/h instead of $0.80/h).
    const ice = ['us-east-1a', 'us-east-1b', 'us-east-1c'].map((zone) => ({ instanceType: 'std', zone, capacityType: 'on-demand' }));
    const r = solve(input(pods, types, [nodePool('default')], { cache, unavailableOfferings: ice }));
    expect(r.newNodeClaims.map((c) => c.launchInstanceTypes.map((t) => t.name))).toEqual([['small'], ['small', 'big']]);
    solve(input(pods, types, [nodePool('default')], { cache, daemonSets: [daemon] }));
    solve(input(pods, [...types], [nodePool('default')], { cache }));
    expect(cache.stats).toEqual({ hits: 0, misses: 4 });
  });

  it('keeps NodePool limits per call: a cached template does not carry consumed limits over', () => {
    const cache = createSchedulingCache();
    const pool = nodePool('default', { spec: { limits: { cpu: '4' } } });
    const pods = pendingPods('w', 12, { cpu: '500m' });
    const only = [std];
    const a = solve(input(pods, only, [pool], { cache }));
    const b = solve(input(pods, only, [pool], { cache }));
    // 4 vCPU of limit: one 4-vCPU node (7 pods), the other 5 pods exceed the limits, both times.
    expect(a.newNodeClaims.map((c) => c.pods.length)).toEqual([7]);
    expect(b.newNodeClaims.map((c) => c.pods.length)).toEqual([7]);
    expect(b.unschedulable).toHaveLength(5);
    expect(cache.stats.hits).toBe(1);
  });
});
