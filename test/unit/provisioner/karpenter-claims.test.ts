/**
 * Karpenter provisioning-suite tests about what a new NodeClaim carries (sigs.k8s.io/karpenter
 * v1.15.0 pkg/controllers/provisioning/suite_test.go), ported as facts about nodefleet's
 * `solve()` + `toNodeClaim` (test/cases/karpenter/COVERAGE.md names each test).
 */
import { describe, expect, it } from 'vitest';
import type { Pod } from '../../../shared/api/kube.ts';
import { NodePoolSchema, type NodePool } from '../../../shared/api/nodepool.ts';
import { instanceTypeFromCase } from '../../../shared/catalog/index.ts';
import { solve } from '../../../shared/scheduling/index.ts';
import { toNodeClaim } from '../../../shared/launch/claims.ts';

const Now = new Date('2026-03-02T10:00:00Z');
const Types = [
  instanceTypeFromCase(
    { name: 'std', cpu: 4, memoryMiB: 8192, pods: 110, zones: ['us-east-1a'], capacityTypes: ['on-demand'], price: { 'on-demand': 0.2 } },
    { region: 'us-east-1' },
  ),
];

function pool(template: { terminationGracePeriod?: string; annotations?: Record<string, string> } = {}): NodePool {
  return NodePoolSchema.parse({
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: 'default' },
    spec: {
      template: {
        ...(template.annotations ? { metadata: { annotations: template.annotations } } : {}),
        spec: {
          nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
          requirements: [],
          ...(template.terminationGracePeriod ? { terminationGracePeriod: template.terminationGracePeriod } : {}),
        },
      },
    },
  });
}

const pending: Pod = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p', namespace: 'default' },
  spec: { containers: [{ name: 'c' }] },
  status: { phase: 'Pending' },
} as Pod;

/** The one NodeClaim nodefleet would create for one pending pod under `np`. */
function claimFor(np: NodePool) {
  const result = solve({ pods: [pending], nodePools: [np], instanceTypes: () => Types });
  expect(result.newNodeClaims).toHaveLength(1);
  return toNodeClaim(result.newNodeClaims[0], { cluster: 'test', nodePool: np, now: Now, name: 'default-abcde' });
}

describe('Karpenter provisioning: what a new NodeClaim carries', () => {
  it('should expect nodeclaim terminationGracePeriod to be the nil when the nodepool terminationGracePeriod and global terminationGracePeriod is not set', () => {
    expect(claimFor(pool()).terminationGracePeriodSeconds).toBeUndefined();
  });

  it('should respect terminationGracePeriod value set on the nodePool over global terminationGracePeriod', () => {
    expect(claimFor(pool({ terminationGracePeriod: '223h' })).terminationGracePeriodSeconds).toBe(223 * 3600);
  });

  // Known difference (COVERAGE.md FAILS): nodefleet accepts spec.template.metadata.annotations
  // on a NodePool but does not copy them to its NodeClaims (nor, at registration, to the node).
  it('Annotations: should annotate nodes', () => {
    expect(claimFor(pool({ annotations: { 'karpenter.sh/do-not-disrupt': 'true' } })).annotations).toMatchObject({ 'karpenter.sh/do-not-disrupt': 'true' });
  });
});
