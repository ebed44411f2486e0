/**
 * Re-packing a small batch (shared/scheduling/repack.ts): worst cases of `npm run bench -- --exact`
 * (seed 1), shrunk, on the real us-east-1 catalog and the bench's NodePools, against the bench's
 * exact optimum (test/bench/exact.ts, HiGHS).
 */
import { describe, expect, it } from 'vitest';
import type { Pod } from '../../../shared/api/kube.ts';
import { loadCatalog } from '../../../shared/catalog/index.ts';
import { solve, type SchedulingResult } from '../../../shared/scheduling/index.ts';
import { exactPacking } from '../../bench/exact.ts';
import { ExactDaemonSets, Pools } from '../../bench/exact-bench.ts';
import { pendingPod, pendingPods } from './builders.ts';

const catalog = loadCatalog({ region: 'us-east-1' });
const cost = (r: SchedulingResult) => r.newNodeClaims.reduce((s, c) => s + c.priceUsdPerHour, 0);
const plan = (pods: Pod[], settings = {}, pool: keyof typeof Pools = 'small-spot') =>
  solve({ pods, nodePools: [Pools[pool]], instanceTypes: () => catalog, daemonSets: ExactDaemonSets, settings });
const optimum = async (pods: Pod[], pool: keyof typeof Pools = 'small-spot') =>
  (await exactPacking({ pods, nodePool: Pools[pool], instanceTypes: catalog, daemonSets: ExactDaemonSets })).costPerHour;
const placedOnce = (r: SchedulingResult, pods: Pod[]) => {
  const placed = r.newNodeClaims.flatMap((c) => c.pods.map((p) => p.metadata.name)).sort();
  expect(placed).toEqual(pods.map((p) => p.metadata.name).sort());
  expect(r.unschedulable).toEqual([]);
};

describe('re-packing a small batch (cost packing)', () => {
  it('keeps an on-demand pod off the node of pods that may run on spot (seed 1 #438, shrunk)', async () => {
    // Prepare: the small-spot pool (c/m, generation > 5, < 17 vCPU, spot or on-demand); one pod
    // requires on-demand, two do not.
    const pods = [
      pendingPod('od', { cpu: '250m', memory: '1Gi', spec: { nodeSelector: { 'karpenter.sh/capacity-type': 'on-demand' } } }),
      pendingPod('a', { cpu: '2', memory: '6Gi' }),
      pendingPod('b', { cpu: '2', memory: '6Gi' }),
    ];
    // Act
    const r = plan(pods);
    // Assess: first-fit put all three on one on-demand c6g.2xlarge ($0.274/h, 2.3× the optimum);
    // an on-demand medium for the one pod and a spot node for the other two cost $0.118/h.
    placedOnce(r, pods);
    const best = await optimum(pods);
    expect(best).toBeCloseTo(0.1181, 4);
    expect(cost(r)).toBeCloseTo(best, 9);
    expect(r.newNodeClaims.find((c) => c.pods.some((p) => p.metadata.name === 'od'))!.capacityTypes[0]).toBe('on-demand');
    expect(r.newNodeClaims.find((c) => c.pods.some((p) => p.metadata.name === 'a'))!.capacityTypes[0]).toBe('spot');
    // Karpenter's packing keeps the single claim.
    expect(plan(pods, { packing: 'karpenter' }).newNodeClaims).toHaveLength(1);
  });

  it('buys several small nodes where one larger node holding the whole batch costs more (seed 1 #152)', async () => {
    const pods = Array.from({ length: 10 }, (_, i) => pendingPod(`web-${i}`, { cpu: '250m', memory: '192Mi' }));
    const r = plan(pods);
    // First-fit grew one c7g.xlarge ($0.060/h, 1.41× the optimum of four spot mediums).
    placedOnce(r, pods);
    const best = await optimum(pods);
    expect(cost(r)).toBeLessThanOrEqual(best * 1.1);
    expect(r.newNodeClaims.length).toBeGreaterThan(1);
  });

  it('mixes pod kinds across nodes where the node with the most value per dollar is not part of the optimum (seed 1 #46)', async () => {
    // Prepare: the burstable pool (t3, t3a, t4g, m7g, m7i; on-demand); three pod kinds.
    const pods = [
      ...pendingPods('a', 6, { cpu: '250m', memory: '2560Mi' }),
      ...pendingPods('b', 3, { cpu: '3', memory: '1152Mi' }),
      ...pendingPods('c', 4, { cpu: '2', memory: '8Gi' }),
    ];
    // Act
    const r = plan(pods, {}, 'burstable');
    // Assess: the greedy opened three t4g.2xlarge ($0.813/h, +19.8 %), one holding two of the
    // 2-vCPU/8Gi pods; two t4g.2xlarge and a t4g.xlarge hold the same pods mixed ($0.679/h).
    placedOnce(r, pods);
    const best = await optimum(pods, 'burstable');
    expect(best).toBeCloseTo(0.6784, 3);
    expect(cost(r)).toBeCloseTo(best, 9);
  });

  it('counts a small type by the pods it may run as well as its cpu and memory (seed 2 #315)', async () => {
    // Prepare: the burstable pool; one kind requires category t, one amd64, one nothing.
    const pods = [
      ...pendingPods('t', 3, { cpu: '100m', memory: '64Mi', spec: { nodeSelector: { 'karpenter.k8s.aws/instance-category': 't' } } }),
      ...pendingPods('x86', 6, { cpu: '250m', memory: '768Mi', spec: { nodeSelector: { 'kubernetes.io/arch': 'amd64' } } }),
      ...pendingPods('any', 7, { cpu: '250m', memory: '192Mi' }),
    ];
    // Act
    const r = plan(pods, {}, 'burstable');
    // Assess: the greedy's t4g.small and two t3a.medium cost $0.0986/h (+14.0 %): the nodes it
    // picks one by one leave a remainder that fits no cheap type once pod counts are counted.
    placedOnce(r, pods);
    const best = await optimum(pods, 'burstable');
    expect(cost(r)).toBeCloseTo(best, 9);
    for (const c of r.newNodeClaims) {
      const names = c.pods.map((p) => p.metadata.name);
      if (names.some((n) => n.startsWith('x86'))) expect(c.launchInstanceTypes.every((t) => t.labels['kubernetes.io/arch'] === 'amd64')).toBe(true);
      if (names.some((n) => n.startsWith('t-'))) expect(c.launchInstanceTypes.every((t) => t.labels['karpenter.k8s.aws/instance-category'] === 't')).toBe(true);
    }
  });
});
