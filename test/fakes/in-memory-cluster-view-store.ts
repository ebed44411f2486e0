/**
 * ClusterViewStore in memory, with ETags, and {@link InMemoryClusterViewStore.publish} that builds
 * the view from Kubernetes objects the way the agent does (ClusterViewBuilder → gzip JSON).
 */
import { gzipSync } from 'node:zlib';
import { createHash } from 'node:crypto';
import type { ClusterViewStore } from '../../shared/api/ports.ts';
import type { Node, Pod } from '../../shared/api/kube.ts';
import { objectKey } from '../../shared/api/kube.ts';
import { ClusterViewBuilder, toViewPod } from '../../shared/api/cluster-view.ts';
import { FakeBase } from './fake-base.ts';

export class InMemoryClusterViewStore extends FakeBase<'put' | 'get'> implements ClusterViewStore {
  private object?: { body: Uint8Array; etag: string };
  private sequence = 0;

  async put(body: Uint8Array): Promise<void> {
    this.record('put');
    this.object = { body, etag: `"${createHash('md5').update(body).digest('hex')}"` };
  }

  async get(etag?: string): Promise<{ body: Uint8Array; etag: string } | 'unchanged' | undefined> {
    this.record('get', etag);
    if (!this.object) return undefined;
    return etag === this.object.etag ? 'unchanged' : { ...this.object };
  }

  /** Writes the view of `nodes` and `pods` (bound, non-terminal ones kept) current at `generatedAt`. */
  publish(cluster: string, nodes: readonly Node[], pods: readonly Pod[], generatedAt: Date | string): void {
    const b = new ClusterViewBuilder();
    b.syncNodes(nodes.map((n) => [n.metadata.name, n] as [string, Node]));
    b.syncPods(
      pods.flatMap((p) => {
        const v = toViewPod(p);
        return v ? [[objectKey(p), b.intern(v)] as [string, typeof v]] : [];
      }),
    );
    const view = b.render({ cluster, agent: '2026-01-01T00:00:00Z', sequence: ++this.sequence, generatedAt: new Date(generatedAt).toISOString() });
    const body = gzipSync(Buffer.from(JSON.stringify(view)));
    this.object = { body, etag: `"${createHash('md5').update(body).digest('hex')}"` };
  }

  override reset(): void {
    super.reset();
    this.object = undefined;
  }
}
