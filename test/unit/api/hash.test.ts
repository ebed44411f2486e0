import { describe, expect, it } from 'vitest';
import { canonicalJson, nodeClassHash, nodePoolHash } from '../../../shared/api/hash.ts';
import { parseNodeClass, parseNodePool } from '../../../shared/api/validate.ts';

const base = () => ({
  apiVersion: 'karpenter.sh/v1',
  kind: 'NodePool',
  metadata: { name: 'default' },
  spec: {
    template: {
      metadata: { labels: { team: 'a', tier: 'web' } },
      spec: {
        nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
        requirements: [{ key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] }],
        taints: [
          { key: 'a', effect: 'NoSchedule' },
          { key: 'b', value: 'x', effect: 'NoExecute' },
        ],
      },
    },
  } as Record<string, any>,
});

describe('nodePoolHash', () => {
  const h0 = nodePoolHash(parseNodePool(base()));

  it('is stable across key order, taint order and defaults written out', () => {
    const b = base();
    b.spec.template.metadata.labels = { tier: 'web', team: 'a' };
    b.spec.template.spec.taints.reverse();
    b.spec.template.spec.expireAfter = '720h';
    expect(nodePoolHash(parseNodePool(b))).toBe(h0);
    expect(h0).toMatch(/^[0-9a-f]{16}$/);
  });

  it('ignores budgets, disruption, limits, weight and requirements', () => {
    const b = base();
    b.spec.disruption = { consolidationPolicy: 'WhenEmpty', consolidateAfter: '5m', budgets: [{ nodes: '0' }] };
    b.spec.limits = { cpu: '1000' };
    b.spec.weight = 50;
    b.spec.template.spec.requirements = [{ key: 'kubernetes.io/arch', operator: 'In', values: ['arm64'] }];
    expect(nodePoolHash(parseNodePool(b))).toBe(h0);
  });

  it('changes with labels, taints, nodeClassRef, expireAfter, terminationGracePeriod', () => {
    const variants: ((b: ReturnType<typeof base>) => void)[] = [
      (b) => (b.spec.template.metadata.labels.team = 'b'),
      (b) => b.spec.template.spec.taints.pop(),
      (b) => (b.spec.template.spec.nodeClassRef.name = 'other'),
      (b) => (b.spec.template.spec.expireAfter = '24h'),
      (b) => (b.spec.template.spec.terminationGracePeriod = '1h'),
    ];
    for (const change of variants) {
      const b = base();
      change(b);
      expect(nodePoolHash(parseNodePool(b))).not.toBe(h0);
    }
  });
});

describe('nodeClassHash', () => {
  const nc = (spec: Record<string, unknown> = {}) =>
    parseNodeClass({
      apiVersion: 'karpenter.k8s.aws/v1',
      kind: 'EC2NodeClass',
      metadata: { name: 'default' },
      spec: {
        amiSelectorTerms: [{ alias: 'al2023@latest' }],
        role: 'r',
        subnetSelectorTerms: [{ tags: { a: 'b' } }],
        securityGroupSelectorTerms: [{ tags: { a: 'b' } }],
        ...spec,
      },
    });

  it('ignores selector terms, follows kubelet and block devices', () => {
    const h = nodeClassHash(nc());
    expect(nodeClassHash(nc({ subnetSelectorTerms: [{ id: 'subnet-1' }] }))).toBe(h);
    expect(nodeClassHash(nc({ kubelet: { maxPods: 20 } }))).not.toBe(h);
    expect(nodeClassHash(nc({ blockDeviceMappings: [{ deviceName: '/dev/xvda', ebs: { volumeSize: '50Gi' } }] }))).not.toBe(h);
  });
});

describe('canonicalJson', () => {
  it('sorts keys and drops empty values', () => {
    expect(canonicalJson({ b: 1, a: { d: [], c: '' }, e: [2, 1] })).toBe('{"b":1,"e":[1,2]}');
  });
});
