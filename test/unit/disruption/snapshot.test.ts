/**
 * functions/disruption/snapshot.ts: the consolidation simulations pack as the provisioner does —
 * the NodePools' nodefleet.io/packing annotation, then NODEFLEET_PACKING, then the scheduler's default.
 */
import { describe, expect, it } from 'vitest';
import { fakeWorld, node, nodeClaimOf, pod } from '../../fakes/index.ts';
import { EC2NodeClassSchema, NodePoolSchema } from '../../../shared/api/nodepool.ts';
import { ValidationError } from '../../../shared/api/errors.ts';
import { StaticNodeClassResolver, type NodeClassResolver, type ResolvedNodeClass } from '../../../shared/aws/node-class-resolver.ts';
import { regionZones } from '../../../shared/catalog/index.ts';
import { planDisruption } from '../../../shared/disruption/index.ts';
import { readSnapshot, type SnapshotDeps } from '../../../functions/disruption/snapshot.ts';

const pool = (annotations?: Record<string, string>) =>
  NodePoolSchema.parse({
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: 'default', ...(annotations ? { annotations } : {}) },
    spec: { template: { spec: { nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' }, requirements: [] } } },
  });

async function packingOf(packing: 'cost' | 'karpenter' | undefined, annotations?: Record<string, string>) {
  const w = fakeWorld({ start: new Date('2026-03-01T12:00:00Z') });
  w.kube.setNodePools([pool(annotations)]);
  const deps: SnapshotDeps = {
    env: { clusterName: 'test', tableName: 'nodefleet', region: 'us-east-1', logLevel: 'INFO', packing },
    store: w.store,
    unavailable: w.unavailable,
    kube: w.kube,
    budgets: w.budgets,
  };
  return (await readSnapshot(deps, w.clock.now())).settings?.scheduling?.packing;
}

describe('disruption snapshot packing', () => {
  it('annotation > NODEFLEET_PACKING > default', async () => {
    expect(await packingOf(undefined)).toBeUndefined();
    expect(await packingOf('karpenter')).toBe('karpenter');
    expect(await packingOf('karpenter', { 'nodefleet.io/packing': 'cost' })).toBe('cost');
    expect(await packingOf(undefined, { 'nodefleet.io/packing': 'karpenter' })).toBe('karpenter');
  });
});

describe('disruption snapshot storage', () => {
  const snapshotWith = async (volumes: { name: string; persistentVolumeClaim: { claimName: string } }[]) => {
    const w = fakeWorld({ start: new Date('2026-03-01T12:00:00Z') });
    w.kube.setNodePools([pool()]);
    w.kube.addNode(node({ name: 'n1', labels: { 'karpenter.sh/nodepool': 'default' } }));
    const p = pod({ name: 'db', nodeName: 'n1', cpu: '1' });
    p.spec.volumes = volumes;
    w.kube.addPod(p);
    w.kube.addObject({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'data', namespace: 'default' }, spec: { storageClassName: 'gp3' } });
    const deps: SnapshotDeps = {
      env: { clusterName: 'test', tableName: 'nodefleet', region: 'us-east-1', logLevel: 'INFO' },
      store: w.store,
      unavailable: w.unavailable,
      kube: w.kube,
      budgets: w.budgets,
    };
    return readSnapshot(deps, w.clock.now());
  };

  it('reads the claims, volumes and storage classes when a pod mounts a claim, so moved pods keep to their volumes', async () => {
    const s = await snapshotWith([{ name: 'data', persistentVolumeClaim: { claimName: 'data' } }]);
    expect(s.storage?.claims.map((c) => c.metadata.name)).toEqual(['data']);
    expect((await snapshotWith([])).storage).toBeUndefined();
  });
});

describe('disruption snapshot: replacements only where the node class subnets are', () => {
  const Covered = ['us-east-1b', 'us-east-1c'];
  const resolved: ResolvedNodeClass = {
    subnets: [
      { subnetId: 'subnet-0b', zone: 'us-east-1b', zoneId: 'use1-az6', availableIpAddressCount: 100 },
      { subnetId: 'subnet-0c', zone: 'us-east-1c', zoneId: 'use1-az1', availableIpAddressCount: 100 },
    ],
    securityGroupIds: ['sg-0a'],
    images: { amd64: 'ami-0amd64' },
  };
  const nodeClass = EC2NodeClassSchema.parse({
    apiVersion: 'karpenter.k8s.aws/v1',
    kind: 'EC2NodeClass',
    metadata: { name: 'default' },
    spec: {
      role: 'NodeRole',
      amiSelectorTerms: [{ alias: 'al2023@latest' }],
      subnetSelectorTerms: [{ tags: { team: 'a' } }],
      securityGroupSelectorTerms: [{ tags: { team: 'a' } }],
    },
  });
  const consolidating = NodePoolSchema.parse({
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: 'default' },
    spec: {
      template: {
        spec: {
          nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
          requirements: [
            { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
            { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] },
          ],
        },
      },
      disruption: { consolidationPolicy: 'WhenEmptyOrUnderutilized', consolidateAfter: '0s', budgets: [{ nodes: '100%' }] },
    },
  });

  /** One underutilized m5.4xlarge in us-east-1b running one small pod: consolidation replaces it with a cheaper node. */
  async function world(resolver?: NodeClassResolver, instance?: { subnetId: string; securityGroupIds: string[] }) {
    const w = fakeWorld({ start: new Date('2026-03-01T12:00:00Z') });
    w.kube.setNodePools([consolidating]).setNodeClasses([nodeClass]);
    const n = node({
      name: 'big',
      providerID: 'aws:///us-east-1b/i-0big000000000000',
      allocatable: { cpu: '15890m', memory: '57632Mi', pods: '234' },
      labels: {
        'karpenter.sh/nodepool': 'default',
        'karpenter.sh/initialized': 'true',
        'karpenter.sh/registered': 'true',
        'karpenter.sh/capacity-type': 'on-demand',
        'node.kubernetes.io/instance-type': 'm5.4xlarge',
        'topology.kubernetes.io/zone': 'us-east-1b',
        'kubernetes.io/arch': 'amd64',
        'kubernetes.io/os': 'linux',
      },
    });
    n.metadata.creationTimestamp = '2026-03-01T10:00:00Z';
    w.kube.addNode(n);
    await w.store.create(nodeClaimOf(n));
    w.kube.addPod(pod({ name: 'web', nodeName: 'big', cpu: '1' }));
    if (instance) w.cloud.addInstance({ instanceId: 'i-0big000000000000', instanceType: 'm5.4xlarge', zone: 'us-east-1b', ...instance });
    const deps: SnapshotDeps = {
      env: { clusterName: 'test', tableName: 'nodefleet', region: 'us-east-1', logLevel: 'INFO' },
      store: w.store,
      unavailable: w.unavailable,
      kube: w.kube,
      budgets: w.budgets,
      cloud: w.cloud,
      ...(resolver ? { resolver } : {}),
    };
    return planDisruption(await readSnapshot(deps, w.clock.now()), w.clock.now());
  }

  it('an instance outside the class subnets, or with other security groups, as EC2 lists it, is drifted', async () => {
    const r = new StaticNodeClassResolver(resolved);
    expect((await world(r, { subnetId: 'subnet-0b', securityGroupIds: ['sg-0a'] })).command?.method).not.toBe('drift');
    const moved = await world(r, { subnetId: 'subnet-0a', securityGroupIds: ['sg-0a'] });
    expect(moved.command).toMatchObject({ method: 'drift', reason: 'Drifted' });
    expect(moved.command?.candidates[0].driftReason).toBe('SubnetDrift');
    expect((await world(r, { subnetId: 'subnet-0b', securityGroupIds: ['sg-0a', 'sg-0z'] })).command?.candidates[0].driftReason).toBe('SecurityGroupDrift');
  });

  it('the replacement may launch only in the covered zones (without a resolver: every zone of the region)', async () => {
    const plan = await world(new StaticNodeClassResolver(resolved));
    expect(plan.command?.decision).toBe('replace');
    expect(plan.command?.replacements[0].zones).toEqual(Covered);
    expect((await world()).command?.replacements[0].zones).toEqual(regionZones('us-east-1'));
  });

  it('a class whose terms select no subnet launches no replacement (the node stays)', async () => {
    const plan = await world({ resolve: async () => Promise.reject(new ValidationError('ec2nodeclass default: subnetSelectorTerms match no subnet')) });
    expect(plan.command).toBeUndefined();
  });
});
