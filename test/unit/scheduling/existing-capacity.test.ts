import { describe, expect, it } from 'vitest';
import { node, nodeClaim, pod } from '../../fakes/index.ts';
import { existingFromClaim, existingFromNode, podsByNode } from '../../../shared/scheduling/existing-capacity.ts';

describe('existing capacity (the one conversion of the cluster picture)', () => {
  it('a node: room from allocatable (capacity when none), unregistered taint ignored, hostname defaulted', () => {
    // Prepare
    const n = node({ name: 'n1', allocatable: { cpu: '4', memory: '8Gi', pods: '110' }, labels: { 'karpenter.sh/nodepool': 'default' } });
    n.spec = {
      ...n.spec,
      taints: [
        { key: 'karpenter.sh/unregistered', effect: 'NoExecute' },
        { key: 'team', value: 'a', effect: 'NoSchedule' },
      ],
    };
    const bare = node({ name: 'n2' });
    bare.status = { capacity: { cpu: '2', memory: '4Gi', pods: '10' } };
    // Act
    const e = existingFromNode(n, [pod({ name: 'p', nodeName: 'n1', cpu: '1' })]);
    const b = existingFromNode(bare, []);
    // Assess
    expect(e.allocatable.cpu).toBe(4000);
    expect(e.taints?.map((t) => t.key)).toEqual(['team']);
    expect(e.labels['kubernetes.io/hostname']).toBe('n1');
    expect(e.nodePool).toBe('default');
    expect(e.pods).toHaveLength(1);
    expect(e.unschedulable).toBe(false);
    expect(b.allocatable.cpu).toBe(2000);
  });

  it("a managed node not initialized counts what its kubelet reports as zero or not at all at its NodeClaim's allocatable; once initialized, as reported", () => {
    const claim = { cpu: '3900m', memory: '4086Mi', pods: '5', 'nvidia.com/gpu': '2', 'vpc.amazonaws.com/efa': '1' };
    const starting = node({
      name: 'g',
      allocatable: { cpu: '3900m', memory: '4086Mi', pods: '5', 'nvidia.com/gpu': '0' },
      labels: { 'karpenter.sh/nodepool': 'default' },
    });
    const e = existingFromNode(starting, [], [], claim);
    expect(e.allocatable['nvidia.com/gpu']).toBe(2);
    expect(e.allocatable['vpc.amazonaws.com/efa']).toBe(1);
    expect(e.allocatable.cpu).toBe(3900);
    const up = node({
      name: 'g',
      allocatable: { cpu: '3900m', memory: '4086Mi', pods: '5', 'nvidia.com/gpu': '0' },
      labels: { 'karpenter.sh/nodepool': 'default', 'karpenter.sh/initialized': 'true' },
    });
    expect(existingFromNode(up, [], [], claim).allocatable['nvidia.com/gpu']).toBe(0);
  });

  it('cordoned, being deleted or tainted karpenter.sh/disrupted: takes no new pods', () => {
    const cordoned = node({ name: 'a' });
    cordoned.spec = { ...cordoned.spec, unschedulable: true };
    const deleting = node({ name: 'b' });
    deleting.metadata.deletionTimestamp = '2026-01-01T00:00:00Z';
    const disrupted = node({ name: 'c' });
    disrupted.spec = { ...disrupted.spec, taints: [{ key: 'karpenter.sh/disrupted', effect: 'NoSchedule' }] };
    expect([cordoned, deleting, disrupted].map((n) => existingFromNode(n, []).unschedulable)).toEqual([true, true, true]);
  });

  it('an in-flight claim: before launch its requirements, once launched its type, zone and capacity type as labels', () => {
    const pending = nodeClaim({
      name: 'default-abcde',
      phase: 'Pending',
      allocatable: { cpu: '2', memory: '4Gi', pods: '20' },
      requirements: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['z1', 'z2'] }],
    } as never);
    const e = existingFromClaim(pending)!;
    expect(e.launching).toBe(true);
    expect(e.requirements?.get('topology.kubernetes.io/zone')?.values).toBeDefined();
    const launched = existingFromClaim({ ...pending, instanceType: 'm5.large', zone: 'z1', capacityType: 'spot' })!;
    expect(launched.requirements).toBeUndefined();
    expect(launched.labels).toMatchObject({
      'node.kubernetes.io/instance-type': 'm5.large',
      'topology.kubernetes.io/zone': 'z1',
      'karpenter.sh/capacity-type': 'spot',
      'kubernetes.io/hostname': 'default-abcde',
    });
    expect(existingFromClaim({ ...pending, allocatable: undefined })).toBeUndefined();
  });

  it('pods grouped by node; unbound ones left out', () => {
    const m = podsByNode([pod({ name: 'a', nodeName: 'n1' }), pod({ name: 'b' }), pod({ name: 'c', nodeName: 'n1' })]);
    expect([...m.keys()]).toEqual(['n1']);
    expect(m.get('n1')).toHaveLength(2);
  });
});
