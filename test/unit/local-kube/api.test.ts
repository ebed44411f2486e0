import { describe, expect, it } from 'vitest';
import { LocalCluster, ApiError } from '../../../infra/local/kube/index.ts';
import { T } from '../../../infra/local/kube/api.ts';
import type { KubeObject } from '../../../shared/api/kube.ts';
import { findTypeByKind } from '../../../infra/local/kube/resources.ts';
import { at, deployment, managedNode } from './builders.ts';

const nodeClaims = findTypeByKind('karpenter.sh/v1', 'NodeClaim')!;

function cluster(): LocalCluster {
  const c = new LocalCluster({ reconcileIntervalMs: 0 });
  c.tick(at(0));
  return c;
}

function apiError(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (e) {
    return e as ApiError;
  }
  throw new Error('expected an ApiError');
}

describe('ApiCore semantics', () => {
  it('rejects a PUT with a stale resourceVersion (409 Conflict) and keeps status on main-resource writes', () => {
    const c = cluster();
    const [cm] = c.apply([{ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' }, status: { allocatable: { cpu: '2' } } } as KubeObject]);
    const fresh = c.api.get(T.nodes, undefined, 'n1');
    c.api.patch(T.nodes, undefined, 'n1', 'application/merge-patch+json', { metadata: { labels: { a: 'b' } } });
    const err = apiError(() => c.api.replace(T.nodes, undefined, 'n1', { ...fresh, spec: { unschedulable: true } }));
    expect(err.toStatus()).toMatchObject({ code: 409, reason: 'Conflict' });
    const updated = c.api.replace(T.nodes, undefined, 'n1', { ...c.api.get(T.nodes, undefined, 'n1'), status: { allocatable: { cpu: '99' } } });
    expect(updated.status.allocatable.cpu).toBe('2');
    const viaStatus = c.api.patch(T.nodes, undefined, 'n1', 'application/merge-patch+json', { status: { allocatable: { cpu: '4' } } }, 'status');
    expect(viaStatus.status.allocatable.cpu).toBe('4');
    expect(Number(viaStatus.metadata.resourceVersion)).toBeGreaterThan(Number(cm.metadata.resourceVersion));
  });

  it('keeps objects with finalizers until the last one is removed', () => {
    const c = cluster();
    c.apply([
      {
        apiVersion: 'karpenter.sh/v1',
        kind: 'NodeClaim',
        metadata: { name: 'default-abcde', finalizers: ['karpenter.sh/termination'] },
        spec: {},
      } as KubeObject,
    ]);
    const t = c.api.delete(nodeClaims, undefined, 'default-abcde');
    expect(t.metadata.deletionTimestamp).toBe('2026-03-02T10:00:00Z');
    expect(c.objects('karpenter.sh/v1', 'NodeClaim')).toHaveLength(1);
    c.api.patch(nodeClaims, undefined, 'default-abcde', 'application/merge-patch+json', { metadata: { finalizers: null } });
    expect(c.objects('karpenter.sh/v1', 'NodeClaim')).toHaveLength(0);
  });

  it('names pods from generateName, requires the namespace, applies PriorityClass values', () => {
    const c = cluster();
    c.apply([{ apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: 'high' }, value: 1000 } as unknown as KubeObject]);
    const p = c.api.create(T.pods, 'default', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { generateName: 'job-' } as never,
      spec: { priorityClassName: 'high', containers: [{ name: 'c' }] },
    });
    expect(p.metadata.name).toMatch(/^job-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    expect(p.spec.priority).toBe(1000);
    expect(p.spec.tolerations.map((t: { key: string }) => t.key)).toEqual(['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable']);
    expect(
      apiError(() => c.api.create(T.pods, 'nope', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'x' }, spec: { containers: [] } })).toStatus(),
    ).toMatchObject({ code: 404, message: 'namespaces "nope" not found' });
  });

  it('answers 500 when two PDBs select the pod being evicted', () => {
    const c = cluster();
    c.addInstance(managedNode(1));
    c.apply([deployment('w', 1, { cpu: '100m' })]);
    for (const name of ['a', 'b'])
      c.apply([
        {
          apiVersion: 'policy/v1',
          kind: 'PodDisruptionBudget',
          metadata: { name, namespace: 'default' },
          spec: { maxUnavailable: 1, selector: { matchLabels: { app: 'w' } } },
        } as KubeObject,
      ]);
    c.tick(at(1));
    const pod = c.pods()[0].metadata.name;
    expect(apiError(() => c.api.evict('default', pod)).toStatus()).toMatchObject({
      code: 500,
      message: 'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.',
    });
  });

  it('deleting a Deployment removes its ReplicaSet and pods', () => {
    const c = cluster();
    c.addInstance(managedNode(1));
    c.apply([deployment('gone', 2, { cpu: '100m' })]);
    c.tick(at(1));
    expect(c.pods()).toHaveLength(2);
    c.delete('apps/v1', 'Deployment', 'gone', 'default');
    c.tick(at(2));
    expect(c.objects('apps/v1', 'ReplicaSet')).toHaveLength(0);
    expect(c.pods()).toHaveLength(0);
  });
});
