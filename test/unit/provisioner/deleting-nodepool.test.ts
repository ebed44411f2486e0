/**
 * A NodePool being deleted (metadata.deletionTimestamp: a finalizer, or a foreground deletion,
 * holds it) launches nothing, as Karpenter's provisioner skips it; its claims are being drained and
 * terminated (functions/gc, shared/disruption/deletion.ts).
 */
import { describe, expect, it } from 'vitest';
import { run, parseInput } from '../../../functions/provisioner/handler.ts';
import { nodePool, pendingPod, provisionerWorld, unschedulableEvent } from './world.ts';

describe('provisioner: a NodePool being deleted', () => {
  it('launches nothing for it (the same NodePool not being deleted launches)', async () => {
    // Prepare
    const pods = [pendingPod('a'), pendingPod('b')];
    const { w, deps } = provisionerWorld({ pods });
    const deleting = nodePool();
    deleting.metadata = { ...deleting.metadata, deletionTimestamp: '2026-01-01T00:00:00Z' } as typeof deleting.metadata;
    w.kube.setNodePools([deleting]);
    // Act
    const held = await run(parseInput(unschedulableEvent(pods)), deps);
    // Assess
    expect(held.created).toEqual([]);
    expect(w.cloud.callsOf('create')).toEqual([]);
    expect(await w.store.list()).toEqual([]);
    // The same world with the NodePool not being deleted launches for the pods.
    const control = provisionerWorld({ pods });
    expect((await run(parseInput(unschedulableEvent(pods)), control.deps)).created).toHaveLength(1);
  });
});
