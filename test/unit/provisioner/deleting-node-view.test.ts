/**
 * A StatefulSet pod of a node being deleted, re-created under the same name while the cluster view
 * still shows the old one on that node (chaos seeds 26, 30, 37, 49: "pending pod default/db-0-1
 * is the reason for 2 launching NodeClaims"). The live pending pod is the pod; the view's copy on
 * the deleting node is the same need seen a few seconds late, and must not be provisioned for again.
 */
import { describe, expect, it } from 'vitest';
import { run, parseInput } from '../../../functions/provisioner/handler.ts';
import { InMemoryClusterViewStore, node, nodeClaim, pod } from '../../fakes/index.ts';
import type { Pod } from '../../../shared/api/kube.ts';
import { Cluster, pendingPod, provisionerWorld, unschedulableEvent } from './world.ts';

const DeletingNode = 'ip-10-0-9-9';

/** `db-0` of StatefulSet `db`; `bound`: on the deleting node, terminating (evicted by its drain). */
function dbPod(bound: boolean): Pod {
  if (!bound) {
    const p = pendingPod('db-0', '1');
    p.metadata.ownerReferences = [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'db', controller: true } as never];
    return p;
  }
  const p = pod({ name: 'db-0', cpu: '1', memory: '128Mi', nodeName: DeletingNode, phase: 'Running', owner: 'StatefulSet' });
  p.metadata.deletionTimestamp = '2026-01-01T00:00:00Z';
  return p;
}

/**
 * Live: the drained node (karpenter.sh/disrupted, unschedulable) and `db-0` re-created, pending.
 * View (published just now, before the old pod was gone): `db-0` still terminating on the node.
 */
function world() {
  const w0 = provisionerWorld();
  const labels = { 'karpenter.sh/nodepool': 'default', 'karpenter.sh/initialized': 'true' };
  const n = node({
    name: DeletingNode,
    labels,
    taints: [{ key: 'karpenter.sh/disrupted', effect: 'NoSchedule' }],
    unschedulable: true,
    allocatable: { cpu: '3', memory: '6Gi', pods: '20' },
  });
  w0.w.kube.addNode(n);
  w0.w.kube.addPod(dbPod(false));
  const views = new InMemoryClusterViewStore();
  views.publish(Cluster, [n], [dbPod(true)], w0.w.clock.now());
  return { ...w0, deps: { ...w0.deps, views } };
}

describe('provisioner: a re-created StatefulSet pod the view still shows on its deleting node', () => {
  it('is provisioned for once: one claim, naming the pod once', async () => {
    // Prepare
    const { w, deps } = world();
    // Act
    const summary = await run(parseInput(unschedulableEvent([dbPod(false)], 'e1')), deps);
    // Assess
    expect(summary.provisionable).toBe(1);
    expect(summary.created).toHaveLength(1);
    expect((await w.store.list()).map((c) => c.pods)).toEqual([['default/db-0']]);
  });

  it('gets no second claim when a claim launched for it (for the terminating copy) is in flight', async () => {
    // Prepare: the claim an earlier pass launched for db-0 while it drained
    const { w, deps } = world();
    await w.store.create(
      nodeClaim({
        name: 'default-aaaaa',
        cluster: Cluster,
        phase: 'Launched',
        pods: ['default/db-0'],
        allocatable: { cpu: '1930m', memory: '3Gi', pods: '29' },
        createdAt: w.clock.now().toISOString(),
      }),
    );
    // Act: a full pass (an event without pods: another node started being deleted)
    const summary = await run(parseInput(unschedulableEvent([], 'e1')), deps);
    // Assess
    expect(summary.created).toEqual([]);
    expect(w.cloud.callsOf('create')).toHaveLength(0);
  });
});
