import { describe, expect, it } from 'vitest';
import { node as nodeBuilder, nodeClaimOf } from '../../fakes/index.ts';
import { NodePoolSchema, type NodePool } from '../../../shared/api/nodepool.ts';
import type { Node } from '../../../shared/api/kube.ts';
import { instanceTypeFromCase } from '../../../shared/catalog/index.ts';
import { planDisruption, type DisruptionSnapshot } from '../../../shared/disruption/index.ts';

const Now = new Date('2026-03-02T10:00:00Z');
const Medium = instanceTypeFromCase(
  {
    name: 'medium',
    cpu: 4,
    memoryMiB: 16384,
    pods: 110,
    zones: ['us-east-1a'],
    capacityTypes: ['on-demand'],
    price: { 'on-demand': 0.2 },
    allocatable: { cpu: '4', memory: '16384Mi', pods: '110' },
  },
  { region: 'us-east-1' },
);

/** The same NodePool name on both sides, as during a migration: Karpenter's nodes carry its label too. */
const pool: NodePool = NodePoolSchema.parse({
  apiVersion: 'karpenter.sh/v1',
  kind: 'NodePool',
  metadata: { name: 'default' },
  spec: {
    template: { spec: { nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' }, requirements: [] } },
    disruption: { consolidationPolicy: 'WhenEmpty', consolidateAfter: '0s', budgets: [{ nodes: '100%' }] },
  },
});

/** An empty, initialized node of NodePool default, old enough to be disrupted. */
function emptyNode(name: string, instanceId: string): Node {
  const n = nodeBuilder({
    name,
    providerID: `aws:///us-east-1a/${instanceId}`,
    allocatable: { cpu: '4', memory: '16384Mi', pods: '110' },
    labels: {
      'karpenter.sh/nodepool': 'default',
      'karpenter.sh/initialized': 'true',
      'karpenter.sh/registered': 'true',
      'node.kubernetes.io/instance-type': 'medium',
      'topology.kubernetes.io/zone': 'us-east-1a',
      'karpenter.sh/capacity-type': 'on-demand',
    },
  });
  n.metadata.creationTimestamp = '2026-03-01T10:00:00Z';
  return n;
}

const snapshot = (nodes: Node[], claimed: Node[]): DisruptionSnapshot => ({
  nodePools: [pool],
  nodes,
  nodeClaims: claimed.map((n) => nodeClaimOf(n)),
  pods: [],
  instanceTypes: () => [Medium],
  catalog: [Medium],
});

describe('disruption beside Karpenter (docs/migration.md)', () => {
  it("never disrupts a node labelled karpenter.sh/nodepool that has no nodefleet claim (Karpenter's own)", () => {
    // Prepare: Karpenter's empty node and nodefleet's empty node, same NodePool label
    const karpenters = emptyNode('karpenter-node', 'i-0aaaaaaaaaaaaaaa1');
    const ours = emptyNode('nodefleet-node', 'i-0bbbbbbbbbbbbbbb2');
    // Act
    const both = planDisruption(snapshot([karpenters, ours], [ours]), Now);
    const onlyKarpenters = planDisruption(snapshot([karpenters], []), Now);
    // Assess
    expect(both.command?.candidates.map((c) => c.nodeName)).toEqual(['nodefleet-node']);
    expect(onlyKarpenters.command).toBeUndefined();
    expect(onlyKarpenters.blocked.map((b) => b.nodeName)).not.toContain('karpenter-node');
  });
});

describe("claim conditions a disruption pass records (Karpenter's Drifted and Consolidatable)", () => {
  const n = emptyNode('nodefleet-node', 'i-0bbbbbbbbbbbbbbb2');
  const conditionsOf = (s: DisruptionSnapshot) =>
    planDisruption(s, Now).claimConditions.map((c) => ({
      name: c.name,
      conditions: c.conditions.filter((x) => x.type === 'Drifted' || x.type === 'Consolidatable').map((x) => `${x.type}=${x.status}/${x.reason}`),
    }));

  it('marks a drifted claim Drifted (reason), clears it once the NodePool is back, and marks an idle one Consolidatable', () => {
    const claim = { ...nodeClaimOf(n), nodePoolHash: 'old' };
    const drifted: DisruptionSnapshot = { ...snapshot([n], [n]), nodeClaims: [claim], nodePoolHashes: { default: 'new' } };
    expect(conditionsOf(drifted)).toEqual([{ name: 'nodefleet-node', conditions: ['Drifted=True/NodePoolDrifted', 'Consolidatable=True/Consolidatable'] }]);
    // Recorded, then the NodePool is reverted (hash equal again): Drifted comes off, Consolidatable stays (no change to write for it)
    const recorded = planDisruption(drifted, Now).claimConditions[0];
    const reverted: DisruptionSnapshot = { ...drifted, nodeClaims: [recorded], nodePoolHashes: { default: 'old' } };
    expect(conditionsOf(reverted)).toEqual([{ name: 'nodefleet-node', conditions: ['Consolidatable=True/Consolidatable'] }]);
    // In step: nothing to write
    const settled = planDisruption(reverted, Now).claimConditions[0];
    expect(planDisruption({ ...reverted, nodeClaims: [settled] }, Now).claimConditions).toEqual([]);
  });
});
