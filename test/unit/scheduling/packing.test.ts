import { describe, expect, it } from 'vitest';
import { solve, type SchedulingResult } from '../../../shared/scheduling/index.ts';
import { input, itype, nodePool, pendingPods } from './builders.ts';

/** A family of 4/8/16-vCPU types with `ratio` GiB per vCPU, priced `perCpu` USD/h per vCPU (c/m/r-like). */
const family = (f: string, ratio: number, perCpu: number) =>
  [4, 8, 16].map((cpu) => itype({ name: `${f}-${cpu}x`, cpu, memoryMiB: cpu * ratio * 1024, price: { 'on-demand': Number((cpu * perCpu).toFixed(4)) } }));
const types = [...family('c', 2, 0.034), ...family('m', 4, 0.0385), ...family('r', 8, 0.0504)];
const launched = (r: SchedulingResult) => r.newNodeClaims.map((c) => [c.launchInstanceTypes[0].name, c.pods.length]);
const cost = (r: SchedulingResult) => Number(r.newNodeClaims.reduce((s, c) => s + c.priceUsdPerHour, 0).toFixed(4));

describe('cost-aware packing', () => {
  it('mixes memory-heavy and cpu-heavy pods on general-purpose nodes instead of a half-idle memory-optimised one', () => {
    // Prepare: 24 pods of 1 vCPU / 2 GiB and 8 of 1 vCPU / 8 GiB (32 vCPU, 112 GiB in all).
    const pods = [...pendingPods('web', 24, { cpu: '1', memory: '2Gi' }), ...pendingPods('cache', 8, { cpu: '1', memory: '8Gi' })];
    // Act
    const costAware = solve(input(pods, types, [nodePool('default')]));
    const karpenter = solve(input(pods, types, [nodePool('default')], { settings: { packing: 'karpenter' } }));
    // Assess: Karpenter's order (cpu, then memory, descending) fills the first claim with the
    // 8 GiB pods and lands it on r-16x with half its memory idle; the balanced queue puts 15
    // pods of mixed shape on each m-16x (cpu-bound) and the last 2 on c-4x.
    expect(launched(karpenter)).toEqual([['r-16x', 15], ['m-16x', 15], ['c-4x', 2]]);
    expect(cost(karpenter)).toBe(1.5584);
    expect(launched(costAware)).toEqual([['m-16x', 15], ['m-16x', 15], ['c-4x', 2]]);
    expect(cost(costAware)).toBe(1.368);
  });

  it('packs a single shape the same way as Karpenter when no type sells it cheaper', () => {
    const pods = pendingPods('web', 30, { cpu: '1', memory: '2Gi' });
    const r = solve(input(pods, types, [nodePool('default')]));
    expect(launched(r)).toEqual([['m-16x', 15], ['m-16x', 15]]);
    expect(cost(r)).toBe(1.232);
  });

  it('stops a claim at the type that sells its shape cheapest rather than overflowing into a dearer family', () => {
    // m-like types dearer per vCPU (0.045): 2 GiB/vCPU pods fill c-16x's memory at 14 pods; a
    // 15th would move the claim onto m-16x, which sells this shape 17 % dearer.
    const dearM = [...family('c', 2, 0.034), ...family('m', 4, 0.045), ...family('r', 8, 0.0504)];
    const pods = pendingPods('web', 30, { cpu: '1', memory: '2Gi' });
    const costAware = solve(input(pods, dearM, [nodePool('default')]));
    const karpenter = solve(input(pods, dearM, [nodePool('default')], { settings: { packing: 'karpenter' } }));
    expect(launched(karpenter)).toEqual([['m-16x', 15], ['m-16x', 15]]);
    expect(cost(karpenter)).toBe(1.44);
    expect(launched(costAware)).toEqual([['c-16x', 14], ['c-16x', 14], ['c-4x', 2]]);
    expect(cost(costAware)).toBe(1.224);
  });
});
