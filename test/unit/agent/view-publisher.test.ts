/**
 * The agent's view publisher (functions/agent/view-publisher.ts): the view is compressed as one
 * gzip stream piece by piece, asynchronously, and what it writes is the view of the moment the
 * publish began, even when watch events change the builder between pieces.
 */
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { ClusterViewBuilder, parseClusterView, toViewPod } from '../../../shared/api/cluster-view.ts';
import { InMemoryClusterViewStore, node, pod } from '../../fakes/index.ts';
import { ViewPieceChars, ViewPublisher, gzipPieces } from '../../../functions/agent/view-publisher.ts';

function builderWith(pods: number): ClusterViewBuilder {
  const b = new ClusterViewBuilder();
  b.syncNodes([['n0', node({ name: 'n0' })]]);
  b.syncPods(
    Array.from(
      { length: pods },
      (_, i) => [`default/web-${i}`, toViewPod(pod({ name: `web-${i}`, nodeName: 'n0', labels: { app: 'web' }, phase: 'Running' }))] as const,
    ),
  );
  return b;
}

describe('ViewPublisher', () => {
  it('writes the view as of the start of a publish: pods added and removed while its pieces are compressed wait for the next one', async () => {
    // Enough pods for several pieces, so the publish yields to the event loop between them.
    const b = builderWith(2_000);
    const store = new InMemoryClusterViewStore();
    const publisher = new ViewPublisher({ store, cluster: 'c', builder: b, currentAsOfMs: () => Date.parse('2026-01-01T00:00:00Z') });
    const first = publisher.tick();
    b.setPod('default/web-1999', undefined);
    b.setPod('default/late', toViewPod(pod({ name: 'late', nodeName: 'n0', phase: 'Running' })));
    expect(await first).toBe(true);
    expect(publisher.lastBytes.json).toBeGreaterThan(2 * ViewPieceChars);
    const view = parseClusterView(JSON.parse(gunzipSync(((await store.get()) as { body: Uint8Array }).body).toString('utf8')), 'c');
    const names = view.pods.map((r) => r[0]);
    expect(names).toHaveLength(2_000);
    expect(names).toContain('web-1999');
    expect(names).not.toContain('late');
    // The changes made during that publish are published next.
    expect(await publisher.tick()).toBe(true);
    const next = parseClusterView(JSON.parse(gunzipSync(((await store.get()) as { body: Uint8Array }).body).toString('utf8')), 'c');
    expect(next.pods.map((r) => r[0])).toContain('late');
    expect(next.pods.map((r) => r[0])).not.toContain('web-1999');
  });

  it('gzipPieces: one gzip stream that reads back as the joined pieces', async () => {
    const pieces = ['{"a":', '[1,2', ',3]', '}'];
    const { gz, jsonBytes } = await gzipPieces(pieces);
    expect(gunzipSync(gz).toString('utf8')).toBe(pieces.join(''));
    expect(jsonBytes).toBe(pieces.join('').length);
  });
});
