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
import { pendingPod } from './builders.ts';

const catalog = loadCatalog({ region: 'us-east-1' });
const cost = (r: SchedulingResult) => r.newNodeClaims.reduce((s, c) => s + c.priceUsdPerHour, 0);
const plan = (pods: Pod[], settings = {}) =>
  solve({ pods, nodePools: [Pools['small-spot']], instanceTypes: () => catalog, daemonSets: ExactDaemonSets, settings });
const optimum = async (pods: Pod[]) =>
  (await exactPacking({ pods, nodePool: Pools['small-spot'], instanceTypes: catalog, daemonSets: ExactDaemonSets })).costPerHour;
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
});
