import { describe, expect, it } from 'vitest';
import { nodeClaim } from '../../fakes/index.ts';
import { planNodeClaimObjects, setCondition, toKubeNodeClaim, type KubeNodeClaim } from '../../../shared/api/nodeclaim.ts';

const opts = { cluster: 'test', nodeClassGroup: 'nodefleet.io' };
const t = (s: number) => new Date(Date.parse('2026-01-01T00:00:00Z') + s * 1000).toISOString();
const launched = setCondition(
  nodeClaim({
    name: 'default-a',
    phase: 'Launched',
    instanceId: 'i-1',
    providerId: 'aws:///z/i-1',
    instanceType: 'm5.large',
    zone: 'z',
    capacityType: 'on-demand',
  }),
  'Launched',
  'True',
  t(10),
);
/** What the API server holds after the writer's put: its own creationTimestamp, a resourceVersion. */
const stored = (o: KubeNodeClaim): KubeNodeClaim => ({
  ...o,
  metadata: { ...o.metadata, creationTimestamp: '2026-01-01T00:00:11Z', resourceVersion: '7' } as KubeNodeClaim['metadata'],
});
/** Karpenter's own NodeClaim (no nodefleet mirror annotation). */
const karpenters = (name: string): KubeNodeClaim => ({
  ...toKubeNodeClaim(nodeClaim({ name, nodePool: 'theirs' })),
  metadata: { ...toKubeNodeClaim(nodeClaim({ name, nodePool: 'theirs' })).metadata, annotations: {} },
});

describe('planNodeClaimObjects', () => {
  it("puts a mirror of each record: Karpenter's shape, the node class group, conditions with Ready, the mirror annotation, no owner", () => {
    const { put, remove } = planNodeClaimObjects([launched], [], opts);
    expect(remove).toEqual([]);
    expect(put).toHaveLength(1);
    const o = put[0];
    expect(o).toMatchObject({
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodeClaim',
      metadata: { name: 'default-a', annotations: { 'nodefleet.io/cluster': 'test' }, finalizers: ['karpenter.sh/termination'] },
    });
    expect(o.metadata.ownerReferences).toBeUndefined();
    expect(o.spec.nodeClassRef).toEqual({ group: 'nodefleet.io', kind: 'EC2NodeClass', name: 'default' });
    expect(o.metadata.labels).toMatchObject({
      'karpenter.sh/nodepool': 'default',
      'node.kubernetes.io/instance-type': 'm5.large',
      'karpenter.sh/capacity-type': 'on-demand',
      'topology.kubernetes.io/zone': 'z',
    });
    expect(o.status?.conditions?.map((c) => [c.type, c.status, c.reason])).toEqual([
      ['Launched', 'True', 'Launched'],
      ['Ready', 'Unknown', 'RegisteredNotTrue'],
    ]);
  });

  it('writes nothing for a mirror in step; writes again when the record moves on (Registered, Initialized → Ready True)', () => {
    const first = planNodeClaimObjects([launched], [], opts).put[0];
    expect(planNodeClaimObjects([launched], [stored(first)], opts).put).toEqual([]);
    const initialized = setCondition(
      setCondition({ ...launched, phase: 'Initialized', nodeName: 'n1' }, 'Registered', 'True', t(30)),
      'Initialized',
      'True',
      t(40),
    );
    const again = planNodeClaimObjects([initialized], [stored(first)], opts).put;
    expect(again).toHaveLength(1);
    expect(again[0].status?.nodeName).toBe('n1');
    expect(again[0].status?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({ status: 'True', lastTransitionTime: '2026-01-01T00:00:40Z' });
  });

  it('removes its own mirror when the record is gone or Terminated', () => {
    const mirror = stored(planNodeClaimObjects([launched], [], opts).put[0]);
    expect(planNodeClaimObjects([], [mirror], opts).remove.map((o) => o.metadata.name)).toEqual(['default-a']);
    expect(planNodeClaimObjects([{ ...launched, phase: 'Terminated' }], [mirror], opts).remove.map((o) => o.metadata.name)).toEqual(['default-a']);
  });

  it("never changes or removes Karpenter's NodeClaims (beside nodefleet), nor another cluster's mirrors", () => {
    const other = {
      ...stored(planNodeClaimObjects([launched], [], opts).put[0]),
      metadata: { ...stored(planNodeClaimObjects([launched], [], opts).put[0]).metadata, name: 'default-b', annotations: { 'nodefleet.io/cluster': 'prod' } },
    };
    const plan = planNodeClaimObjects([launched, { ...launched, name: 'theirs-x' }], [karpenters('theirs-x'), karpenters('theirs-y'), other], opts);
    expect(plan.remove).toEqual([]);
    expect(plan.foreign).toEqual(['theirs-x']);
    expect(plan.put.map((o) => o.metadata.name)).toEqual(['default-a']);
  });
});
