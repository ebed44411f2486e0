/**
 * The cluster view's bounds at the boundary (security review F3): the S3 store refuses an object
 * larger than MaxViewGzipBytes before reading it (ContentLength) and stops reading there when no
 * length is declared; the reader refuses an oversized body from any store, caches a refusal by
 * ETag (a bad object is not downloaded again until it changes), and with `liveNodes` takes the
 * nodes from the live list and lists live the pods of a live node the view does not show.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { S3Client } from '@aws-sdk/client-s3';
import { S3ClusterViewStore } from '../../../shared/aws/s3-cluster-view-store.ts';
import { ClusterViewTooLargeError, MaxViewGzipBytes } from '../../../shared/api/cluster-view.ts';
import { clearClusterViewCache, readClusterPicture } from '../../../shared/runtime/cluster-picture.ts';
import { RecordingLog, RecordingMetrics } from '../../../shared/runtime/observability.ts';
import { MetricNames } from '../../../shared/api/metrics.ts';
import { InMemoryClusterViewStore, node, pod } from '../../fakes/index.ts';
import { Cluster, provisionerWorld } from '../provisioner/world.ts';

/** An S3 client whose GetObject answers `body` in `chunks` pieces, declaring `contentLength`. */
function s3Answering(body: Uint8Array, contentLength: number | undefined, chunks = 4) {
  const state = { read: 0, destroyed: false };
  const size = Math.ceil(body.byteLength / chunks);
  const stream = {
    async *[Symbol.asyncIterator]() {
      for (let i = 0; i < body.byteLength; i += size) {
        state.read += Math.min(size, body.byteLength - i);
        yield body.subarray(i, i + size);
      }
    },
    destroy() {
      state.destroyed = true;
    },
  };
  const client = { send: async () => ({ Body: stream, ContentLength: contentLength, ETag: '"e1"' }) } as unknown as S3Client;
  return { client, state };
}

describe('S3ClusterViewStore: bounded reads', () => {
  it('reads an object within the cap', async () => {
    const { client } = s3Answering(new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]), 8);
    const got = await new S3ClusterViewStore(client, 'b', Cluster).get(undefined, 8);
    expect(got).toEqual({ body: Buffer.from([1, 2, 3, 4, 5, 6, 7, 8]), etag: '"e1"' });
  });

  it('refuses an object whose ContentLength is past the cap without reading a byte', async () => {
    const { client, state } = s3Answering(new Uint8Array(64), MaxViewGzipBytes + 1);
    await expect(new S3ClusterViewStore(client, 'b', Cluster).get()).rejects.toThrow(ClusterViewTooLargeError);
    expect(state.read).toBe(0);
    expect(state.destroyed).toBe(true);
  });

  it('stops reading past the cap when no length is declared (or a wrong one)', async () => {
    const { client, state } = s3Answering(new Uint8Array(64), undefined, 8);
    await expect(new S3ClusterViewStore(client, 'b', Cluster).get(undefined, 20)).rejects.toThrow(/is more than 20 bytes \(cap 20\)/);
    expect(state.read).toBeLessThan(64);
    expect(state.destroyed).toBe(true);
  });
});

describe('readClusterPicture: refusals', () => {
  it('a too-large object from the store is refused, with the metric; the refusal is cached by ETag, not downloaded and decoded again', async () => {
    const { w, deps } = provisionerWorld();
    const views = new InMemoryClusterViewStore();
    const metrics = new RecordingMetrics();
    const log = new RecordingLog();
    await views.put(randomBytes(MaxViewGzipBytes + 1));
    const first = await readClusterPicture({ ...deps, log, metrics, views }, w.clock.now());
    expect(first.source).toBe('live');
    expect(first.refused).toMatch(/object is \d+ bytes \(cap 16777216\)/);
    const again = await readClusterPicture({ ...deps, log, metrics, views }, w.clock.now());
    expect(again.refused).toBe(first.refused);
    expect(views.callsOf('get')[1][0]).toMatch(/^"/); // conditional on the refused object's ETag
    expect(metrics.total(MetricNames.clusterViewRefused, { reason: 'too-large' })).toBe(2);
    expect(log.withMessage('not using the cluster view, listing the cluster')).toHaveLength(2);
    clearClusterViewCache(views);
  });

  it('a store refusing the object as too large (S3 ContentLength) is a refusal, not an error', async () => {
    const { w, deps } = provisionerWorld();
    const metrics = new RecordingMetrics();
    const views = {
      put: async () => {},
      get: async () => Promise.reject(new ClusterViewTooLargeError('cluster view object s3://b/k is 99999999 bytes (cap 16777216)')),
    };
    const got = await readClusterPicture({ ...deps, metrics, views }, w.clock.now());
    expect(got.source).toBe('live');
    expect(got.refused).toMatch(/99999999 bytes/);
    expect(metrics.total(MetricNames.clusterViewRefused, { reason: 'too-large' })).toBe(1);
  });
});

describe('readClusterPicture liveNodes: the nodes are the live list, the view gives their pods', () => {
  const labelled = (name: string) => node({ name, allocatable: { cpu: '8', memory: '32Gi', pods: '110' } });

  it("a view node absent live is dropped with its pods; a live node the view lacks has its pods listed live; others keep the view's pods", async () => {
    // Prepare: live a, b (new since the view); the view shows a and ghost
    const { w, deps } = provisionerWorld();
    const views = new InMemoryClusterViewStore();
    w.kube.addNode(labelled('a'), labelled('b'));
    const onA = pod({ name: 'on-a', nodeName: 'a', phase: 'Running' });
    w.kube.addPods(onA, pod({ name: 'on-b', nodeName: 'b', phase: 'Running' }));
    views.publish(Cluster, [labelled('a'), labelled('ghost')], [onA, pod({ name: 'on-ghost', nodeName: 'ghost', phase: 'Running' })], w.clock.now());
    // Act
    const pic = await readClusterPicture({ ...deps, views }, w.clock.now(), { liveNodes: true });
    // Assess
    expect(pic.source).toBe('view');
    expect(pic.nodes.map((n) => n.metadata.name).sort()).toEqual(['a', 'b']);
    expect(pic.boundPods.map((p) => p.metadata.name).sort()).toEqual(['on-a', 'on-b']);
    expect(pic.livePodsOf).toEqual(['b']);
    expect(w.kube.callsOf('listPods').map((c) => c[0])).toEqual([{ unbound: true }, { nodeName: 'b' }]);
  });
});
