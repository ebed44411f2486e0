/**
 * functions/disruption/snapshot.ts: the consolidation simulations pack as the provisioner does —
 * the NodePools' nodefleet.io/packing annotation, then NODEFLEET_PACKING, then the scheduler's default.
 */
import { describe, expect, it } from 'vitest';
import { fakeWorld, node, pod } from '../../fakes/index.ts';
import { NodePoolSchema } from '../../../shared/api/nodepool.ts';
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
  const deps: SnapshotDeps = { env: { clusterName: 'test', tableName: 'nodefleet', region: 'us-east-1', logLevel: 'INFO', packing }, store: w.store, unavailable: w.unavailable, kube: w.kube, budgets: w.budgets };
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
    const deps: SnapshotDeps = { env: { clusterName: 'test', tableName: 'nodefleet', region: 'us-east-1', logLevel: 'INFO' }, store: w.store, unavailable: w.unavailable, kube: w.kube, budgets: w.budgets };
    return readSnapshot(deps, w.clock.now());
  };

  it('reads the claims, volumes and storage classes when a pod mounts a claim, so moved pods keep to their volumes', async () => {
    const s = await snapshotWith([{ name: 'data', persistentVolumeClaim: { claimName: 'data' } }]);
    expect(s.storage?.claims.map((c) => c.metadata.name)).toEqual(['data']);
    expect((await snapshotWith([])).storage).toBeUndefined();
  });
});
