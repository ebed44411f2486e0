import { describe, expect, it } from 'vitest';
import { run } from '../../../functions/gc/handler.ts';
import { RecordingLog, RecordingMetrics } from '../../../shared/runtime/observability.ts';
import { toKubeNodeClaim } from '../../../shared/api/nodeclaim.ts';
import { fakeWorld, nodeClaim } from '../../fakes/index.ts';

const t0 = '2026-01-01T00:00:00.000Z';

function world(besideKarpenter = false) {
  const w = fakeWorld({ cloud: { tags: { 'nodefleet.io/cluster': 'test' } } });
  const env = { clusterName: 'test', tableName: 'nodefleet', region: 'us-east-1', logLevel: 'INFO', ...(besideKarpenter ? { besideKarpenter } : {}) };
  return { w, deps: { env, clock: w.clock, log: new RecordingLog(), metrics: new RecordingMetrics(), store: w.store, cloud: w.cloud, kube: w.kube } };
}

describe('gc: NodeClaim objects mirror the records', () => {
  it('writes each record as a karpenter.sh/v1 NodeClaim with its conditions, updates it as the claim moves on, removes it (finalizer off) when the record goes', async () => {
    const { w, deps } = world(true);
    w.cloud.addInstance({
      instanceId: 'i-1',
      launchTime: t0,
      tags: { 'nodefleet.io/cluster': 'test', 'karpenter.sh/nodepool': 'default', 'karpenter.sh/nodeclaim': 'default-a' },
    });
    await w.store.create(
      nodeClaim({
        name: 'default-a',
        phase: 'Launched',
        instanceId: 'i-1',
        providerId: 'aws:///us-east-1a/i-1',
        createdAt: t0,
        conditions: [{ type: 'Launched', status: 'True', lastTransitionTime: t0 }],
      }),
    );
    // Act 1: first pass
    const r1 = await run({}, deps);
    // Assess 1
    expect(r1.nodeClaimObjects?.put).toEqual(['default-a']);
    const o1 = w.kube.nodeClaimObjects.get('default-a')!;
    expect(o1.spec.nodeClassRef.group).toBe('nodefleet.io');
    expect(o1.status?.conditions?.map((c) => `${c.type}=${c.status}`)).toEqual(['Launched=True', 'Ready=Unknown']);
    // Act 2: nothing changed, nothing written; then the node registers
    expect((await run({}, deps)).nodeClaimObjects?.put).toEqual([]);
    const c = (await w.store.get('default-a'))!;
    await w.store.update({
      ...c,
      phase: 'Registered',
      nodeName: 'n-1',
      conditions: [...c.conditions, { type: 'Registered', status: 'True', lastTransitionTime: t0 }],
    });
    expect((await run({}, deps)).nodeClaimObjects?.put).toEqual(['default-a']);
    expect(w.kube.nodeClaimObjects.get('default-a')?.status).toMatchObject({
      nodeName: 'n-1',
      conditions: [{ type: 'Launched' }, { type: 'Registered', status: 'True' }, { type: 'Ready', status: 'Unknown', reason: 'InitializedNotTrue' }],
    });
    // Act 3: the record is gone
    await w.store.delete('default-a');
    expect((await run({}, deps)).nodeClaimObjects?.removed).toEqual(['default-a']);
    expect(w.kube.nodeClaimObjects.has('default-a')).toBe(false);
  });

  it("leaves Karpenter's NodeClaim objects alone", async () => {
    const { w, deps } = world(true);
    const theirs = toKubeNodeClaim(nodeClaim({ name: 'theirs-x', nodePool: 'theirs' }));
    w.kube.nodeClaimObjects.set('theirs-x', theirs);
    const r = await run({}, deps);
    expect(r.nodeClaimObjects).toEqual({ put: [], removed: [], foreign: [] });
    expect(w.kube.nodeClaimObjects.get('theirs-x')).toEqual(theirs);
    expect(w.kube.callsOf('deleteNodeClaimObject')).toEqual([]);
  });
});
