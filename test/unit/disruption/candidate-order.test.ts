import { describe, expect, it } from 'vitest';
import { interleaveByNodePool } from '../../../shared/disruption/consolidation-candidates.ts';
import { savingsRatio, sortBySavingsRatio } from '../../../shared/disruption/cost.ts';
import type { Pod } from '../../../shared/api/kube.ts';
import type { Candidate } from '../../../shared/disruption/types.ts';

function pod(annotations: Record<string, string> = {}): Pod {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'default', annotations }, spec: { containers: [] } } as Pod;
}

function candidate(nodeName: string, nodePool: string, priceUsdPerHour: number, pods: Pod[] = []): Candidate {
  return {
    nodeName,
    nodeClaim: nodeName,
    nodePool,
    instanceType: 'std',
    zone: 'us-east-1a',
    capacityType: 'on-demand',
    priceUsdPerHour,
    reschedulablePods: pods,
    disruptionCost: pods.length,
    createdAt: '2026-03-02T08:00:00Z',
    consolidatable: true,
  };
}

describe('consolidation candidate order (Karpenter v1.15)', () => {
  it("divides the price by 1 plus the pods' eviction costs, a negative cost counting 0", () => {
    // Prepare: one pod of cost 1, one whose disruption-cost annotation takes it below 0.
    const c = candidate('n', 'a', 0.3, [pod(), pod({ 'karpenter.sh/disruption-cost': '-2147483647' })]);
    // Act / Assess
    expect(savingsRatio(c)).toBeCloseTo(0.3 / 2, 12);
  });

  it('puts the highest savings ratio first', () => {
    const order = sortBySavingsRatio([candidate('cheap', 'a', 0.1), candidate('dear-busy', 'a', 0.4, [pod(), pod(), pod()]), candidate('dear', 'a', 0.4)]);
    expect(order.map((c) => c.nodeName)).toEqual(['dear', 'cheap', 'dear-busy']);
  });

  it('single-node consolidation takes one candidate of each NodePool in turn, pools by their best candidate', () => {
    // Prepare: pool a holds the three best ratios, pool b the fourth and fifth.
    const sorted = sortBySavingsRatio([
      candidate('a1', 'a', 0.9),
      candidate('a2', 'a', 0.8),
      candidate('a3', 'a', 0.7),
      candidate('b1', 'b', 0.5),
      candidate('b2', 'b', 0.4),
    ]);
    // Act
    const order = interleaveByNodePool(sorted);
    // Assess
    expect(order.map((c) => c.nodeName)).toEqual(['a1', 'b1', 'a2', 'b2', 'a3']);
  });
});
