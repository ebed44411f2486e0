/**
 * Karpenter's pod eviction cost tests (sigs.k8s.io/karpenter v1.15.0
 * pkg/controllers/disruption/suite_test.go, "Pod Eviction Cost"), ported as facts about
 * nodefleet's `evictionCost` (test/cases/karpenter/COVERAGE.md, "disruption suite").
 */
import { describe, expect, it } from 'vitest';
import type { Pod } from '../../../shared/api/kube.ts';
import { evictionCost } from '../../../shared/disruption/cost.ts';

const Standard = 1;

function pod(annotations: Record<string, string> = {}, priority?: number): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', namespace: 'default', annotations },
    spec: { containers: [{ name: 'c' }], ...(priority === undefined ? {} : { priority }) },
  } as Pod;
}
const deletionCost = (v: string) => pod({ 'controller.kubernetes.io/pod-deletion-cost': v });

describe('Karpenter pod eviction cost', () => {
  it('should have a standard disruptionCost for a pod with no priority or disruptionCost specified', () => {
    expect(evictionCost(pod())).toBe(Standard);
  });

  it('should have a higher disruptionCost for a pod with a positive deletion disruptionCost', () => {
    expect(evictionCost(deletionCost('100'))).toBeGreaterThan(Standard);
  });

  it('should have a lower disruptionCost for a pod with a positive deletion disruptionCost (a negative one)', () => {
    expect(evictionCost(deletionCost('-100'))).toBeLessThan(Standard);
  });

  it('should have higher costs for higher deletion costs', () => {
    expect(evictionCost(deletionCost('101'))).toBeGreaterThan(evictionCost(deletionCost('100')));
    expect(evictionCost(deletionCost('100'))).toBeGreaterThan(evictionCost(deletionCost('99')));
  });

  it('should have a higher disruptionCost for a pod with a higher priority', () => {
    expect(evictionCost(pod({}, 1))).toBeGreaterThan(Standard);
  });

  it('should have a lower disruptionCost for a pod with a lower priority', () => {
    expect(evictionCost(pod({}, -1))).toBeLessThan(Standard);
  });

  it('should prefer disruption-cost over pod-deletion-cost', () => {
    const both = pod({ 'controller.kubernetes.io/pod-deletion-cost': '100', 'karpenter.sh/disruption-cost': '2000000000' });
    expect(evictionCost(both)).toBeGreaterThan(evictionCost(deletionCost('100')));
  });

  it('should fall back to pod-deletion-cost for consolidation scoring when the gate is off', () => {
    expect(evictionCost(deletionCost('100'))).toBeGreaterThan(Standard);
  });

  it('an unparseable disruption-cost counts as absent and still hides pod-deletion-cost (as in Karpenter)', () => {
    expect(evictionCost(pod({ 'karpenter.sh/disruption-cost': 'lots', 'controller.kubernetes.io/pod-deletion-cost': '100' }))).toBe(Standard);
    expect(evictionCost(deletionCost('1.5'))).toBe(Standard);
  });
});
