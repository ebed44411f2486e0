/**
 * `npx tsx test/bench/scale/view-size.ts [NODESxPODS ...]`: the size of the cluster view the agent
 * would publish for the scale bench's synthetic cluster (test/bench/scale/objects.ts, the same
 * objects the agent lists there), gzip and JSON bytes, and what reading it back costs (gunzip,
 * JSON.parse, parseClusterView with its checks, clusterOfView), median of 5. The caps of
 * shared/api/cluster-view.ts (MaxViewGzipBytes, MaxViewJsonBytes) are chosen from these figures.
 */
import { gunzipSync } from 'node:zlib';
import type { Node, Pod } from '../../../shared/api/kube.ts';
import { ClusterViewBuilder, clusterOfView, parseClusterView, toViewPod } from '../../../shared/api/cluster-view.ts';
import { gzipPieces, ViewPieceChars } from '../../../functions/agent/view-publisher.ts';
import { BenchCluster, benchNode, nodeName, podsOfNode } from './objects.ts';

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

const sizes = (process.argv.slice(2).length ? process.argv.slice(2) : ['100x2000', '1000x20000', '5000x100000']).map(
  (s) => s.split('x').map(Number) as [number, number],
);
for (const [nodes, pods] of sizes) {
  const b = new ClusterViewBuilder();
  const perNode = Math.round(pods / nodes);
  b.syncNodes(Array.from({ length: nodes }, (_, i) => [nodeName(i), benchNode(i) as Node] as [string, Node]));
  let seq = 0;
  for (let i = 0; i < nodes; i++) {
    for (const p of podsOfNode(i, perNode, seq)) {
      const v = toViewPod(p as Pod);
      if (v) b.setPod(`${p.metadata.namespace ?? 'default'}/${p.metadata.name}`, b.intern(v));
    }
    seq += perNode;
  }
  const meta = { cluster: BenchCluster, agent: '2026-12-01T00:00:00Z', sequence: 1, generatedAt: new Date().toISOString() };
  const { gz, jsonBytes } = await gzipPieces(b.renderJson(meta, ViewPieceChars));
  const t = { gunzip: [] as number[], parse: [] as number[], check: [] as number[], cluster: [] as number[] };
  for (let r = 0; r < 5; r++) {
    let s = performance.now();
    const text = gunzipSync(gz).toString('utf8');
    t.gunzip.push(performance.now() - s);
    s = performance.now();
    const raw = JSON.parse(text);
    t.parse.push(performance.now() - s);
    s = performance.now();
    const v = parseClusterView(raw, BenchCluster);
    t.check.push(performance.now() - s);
    s = performance.now();
    clusterOfView(v);
    t.cluster.push(performance.now() - s);
  }
  const ms = (xs: number[]) => median(xs).toFixed(1);
  process.stdout.write(
    `${nodes} nodes / ${b.podCount} pods / ${b.templateCount} templates: gzip ${gz.byteLength} B, JSON ${jsonBytes} B (ratio ${(jsonBytes / gz.byteLength).toFixed(1)}); ms gunzip ${ms(t.gunzip)} JSON.parse ${ms(t.parse)} parseClusterView ${ms(t.check)} clusterOfView ${ms(t.cluster)}\n`,
  );
}
