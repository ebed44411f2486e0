import { describe, expect, it } from 'vitest';
import { ConflictError, InsufficientCapacityError, TransientError } from '../../../shared/api/errors.ts';
import { fakeWorld, nodeClaim, node, pod, pdb } from '../../fakes/index.ts';

describe('InMemoryNodeClaimStore', () => {
  it('updates conditionally on version and rejects stale writes', async () => {
    const { store } = fakeWorld();
    const created = await store.create(nodeClaim({ name: 'default-a1', instanceId: 'i-1' }));
    const v1 = await store.update({ ...created, nodeName: 'n1' });
    expect(v1.version).toBe(1);
    await expect(store.update({ ...created, nodeName: 'n2' })).rejects.toBeInstanceOf(ConflictError);
    await expect(store.create(created)).rejects.toBeInstanceOf(ConflictError);
    expect((await store.getByInstanceId('i-1'))?.nodeName).toBe('n1');
    await store.delete('absent');
    expect(store.callsOf('update')).toHaveLength(2);
  });

  it('throws injected failures once, then works', async () => {
    const { store } = fakeWorld();
    store.failNext('get', new TransientError('throttled'));
    await expect(store.get('x')).rejects.toBeInstanceOf(TransientError);
    expect(await store.get('x')).toBeUndefined();
  });
});

describe('FakeCloudProvider', () => {
  it('prefers spot over on-demand, skips offerings with no capacity, and reports them when all fail', async () => {
    const { cloud } = fakeWorld();
    cloud.setInsufficientCapacity('m5.large', 'us-east-1a', 'spot');
    const claim = nodeClaim({ name: 'c1' });
    const r = await cloud.create(claim, { instanceTypes: ['m5.large'], zones: ['us-east-1a', 'us-east-1b'], capacityTypes: ['on-demand', 'spot'] });
    expect(r).toMatchObject({ instanceType: 'm5.large', zone: 'us-east-1b', capacityType: 'spot', instanceId: 'i-00000000000000001' });
    cloud.setInsufficientCapacity('m5.large', 'us-east-1b', 'spot');
    const err = await cloud.create(claim, { instanceTypes: ['m5.large'], zones: ['us-east-1a', 'us-east-1b'], capacityTypes: ['spot'] }).catch((e) => e);
    expect(err).toBeInstanceOf(InsufficientCapacityError);
    expect(err.offerings).toHaveLength(2);
  });

  it('terminate moves to shutting-down, settle to terminated; absent is fine', async () => {
    const { cloud } = fakeWorld();
    cloud.addInstance({ instanceId: 'i-9' });
    await cloud.terminate('i-9');
    expect(cloud.peek('i-9')?.state).toBe('shutting-down');
    cloud.settle();
    expect((await cloud.list()).length).toBe(0);
    await cloud.terminate('i-absent');
  });
});

describe('FakeKubeApi', () => {
  it('blocks evictions at disruptionsAllowed 0 and decrements otherwise', async () => {
    const { kube } = fakeWorld();
    kube.addPdb(pdb({ name: 'web', matchLabels: { app: 'web' }, disruptionsAllowed: 1 }));
    kube.addPods(pod({ name: 'w1', nodeName: 'n1', labels: { app: 'web' } }), pod({ name: 'w2', nodeName: 'n1', labels: { app: 'web' } }));
    expect(await kube.evictPod('default', 'w1')).toBe('evicted');
    expect(await kube.evictPod('default', 'w2')).toBe('blocked');
    expect(await kube.evictPod('default', 'w1')).toBe('gone');
    expect(kube.peekPdb('default', 'web')?.status?.disruptionsAllowed).toBe(0);
  });

  it('graceful termination waits for the pod grace period; stuck pods leave only on force delete', async () => {
    const w = fakeWorld({ kube: { podTermination: 'graceful' } });
    w.kube.addPod(pod({ name: 'slow', nodeName: 'n1', terminationGracePeriodSeconds: 60 }));
    w.kube.addPod(pod({ name: 'stuck', nodeName: 'n1' }), 'until-force');
    await w.kube.evictPod('default', 'slow');
    await w.kube.evictPod('default', 'stuck');
    w.clock.advanceSeconds(59);
    expect(
      w.kube
        .peekPods('n1')
        .map((p) => p.metadata.name)
        .sort(),
    ).toEqual(['slow', 'stuck']);
    w.clock.advanceSeconds(1);
    expect(w.kube.peekPods('n1').map((p) => p.metadata.name)).toEqual(['stuck']);
    await w.kube.deletePod('default', 'stuck', 0);
    expect(w.kube.peekPods('n1')).toEqual([]);
  });

  it('patches taints and unschedulable; deleting a node garbage-collects its pods', async () => {
    const { kube } = fakeWorld();
    kube.addNode(node({ name: 'n1' })).addPod(pod({ name: 'p', nodeName: 'n1' }));
    const n = await kube.patchNode('n1', { taints: [{ key: 'karpenter.sh/disrupted', effect: 'NoSchedule' }], unschedulable: true, labels: { a: 'b' } });
    expect(n.spec?.unschedulable).toBe(true);
    expect(n.spec?.taints).toHaveLength(1);
    await kube.deleteNode('n1');
    expect(kube.peekPods()).toEqual([]);
    await expect(kube.patchNode('n1', { unschedulable: true })).rejects.toThrow('not found');
  });
});

describe('budgets, offerings, starter, publisher', () => {
  it('takes budget slots idempotently per holder up to allowed', async () => {
    const { budgets } = fakeWorld();
    expect(await budgets.take('default', 'a', 1, 't')).toBe(true);
    expect(await budgets.take('default', 'a', 1, 't')).toBe(true);
    expect(await budgets.take('default', 'b', 1, 't')).toBe(false);
    await budgets.release('default', 'a');
    expect(await budgets.take('default', 'b', 1, 't')).toBe(true);
    expect(await budgets.holders('default')).toEqual({ b: 't' });
  });

  it('expires unavailable offerings at their TTL', async () => {
    const { unavailable } = fakeWorld();
    await unavailable.mark([{ instanceType: 'm5.large', zone: 'us-east-1a', capacityType: 'spot', reason: 'ice' }], 1000);
    expect(await unavailable.list(999)).toHaveLength(1);
    expect(await unavailable.list(1000)).toHaveLength(0);
  });

  it('starting the same claim twice returns the same execution', async () => {
    const { starter, publisher } = fakeWorld();
    const a = await starter.start({ nodeClaim: 'c1', reason: 'manual' });
    const b = await starter.start({ nodeClaim: 'c1', reason: 'manual' });
    expect(a).toBe(b);
    expect(starter.started).toHaveLength(1);
    publisher.failEntries(1);
    expect(
      await publisher.publish([
        { source: 's', detailType: 'd', detail: {} },
        { source: 's', detailType: 'd', detail: {} },
      ]),
    ).toEqual({ failed: 1 });
    expect(publisher.published).toHaveLength(1);
  });
});
