/**
 * functions/disruption/snapshot.ts: the consolidation simulations pack as the provisioner does —
 * the NodePools' nodefleet.io/packing annotation, then NODEFLEET_PACKING, then the scheduler's default.
 */
import { describe, expect, it } from 'vitest';
import { fakeWorld } from '../../fakes/index.ts';
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
