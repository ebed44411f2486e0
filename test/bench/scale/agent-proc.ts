/**
 * Child process of the scale benchmark running the in-cluster agent (functions/agent Agent) against
 * the bench environment's API server, with a publisher that counts what it would send. Reports
 * `{ synced }` once both informers listed, and `{ memory }` when asked (after a GC).
 *
 * It runs as the agent ships: bundled by esbuild with the Dockerfile's flags and started with the
 * Deployment's NODE_OPTIONS ({@link bundleAgentProc}), not under tsx (whose loader alone holds
 * ~230 MiB of RSS and would be measured as the agent's).
 */
import { Agent } from '../../../functions/agent/agent.ts';
import type { EventPublisher } from '../../../shared/api/ports.ts';
import type { AgentLog } from '../../../functions/agent/agent-core.ts';
import type { EnvReady } from './env-proc.ts';
import { createS3ClusterViewStore } from '../../../shared/aws/s3-cluster-view-store.ts';

const ready = JSON.parse(process.argv[2]) as EnvReady & { cluster: string; region: string };
const BenchCluster = ready.cluster;
const BenchRegion = ready.region;
const published = { entries: 0, bytes: 0 };
const publisher: EventPublisher = {
  async publish(entries) {
    published.entries += entries.length;
    for (const e of entries) published.bytes += Buffer.byteLength(JSON.stringify(e.detail));
    return { failed: 0 };
  },
};

const MiB = (b: number) => Math.round(b / 2 ** 20);
/** Warnings and errors always; with BENCH_VERBOSE every record, with the process's memory at that moment (RSS, peak RSS, heap, off-heap buffers). */
const log: AgentLog = (level, message, fields) => {
  if (!process.env.BENCH_VERBOSE && (level === 'debug' || level === 'info')) return;
  const m = process.env.BENCH_VERBOSE ? process.memoryUsage() : undefined;
  const mem = m
    ? ` rss=${MiB(m.rss)} peak=${Math.round(process.resourceUsage().maxRSS / 1024)} heap=${MiB(m.heapUsed)}/${MiB(m.heapTotal)} ext=${MiB(m.external)} ab=${MiB(m.arrayBuffers)}`
    : '';
  process.stderr.write(`agent ${level} ${message} ${JSON.stringify(fields ?? {}).slice(0, 300)}${mem}\n`);
};

async function main(): Promise<void> {
  const views = process.env.BENCH_NO_VIEW
    ? undefined
    : createS3ClusterViewStore({ region: BenchRegion, bucket: ready.viewBucket, cluster: BenchCluster, endpoint: ready.s3Endpoint });
  const agent = new Agent({
    connection: { kind: 'kubeconfig', path: ready.kubeconfig },
    publisher,
    clusterName: BenchCluster,
    ...(views ? { views } : {}),
    log,
  });
  const t0 = performance.now();
  await agent.start();
  while (!agent.ready()) await new Promise((r) => setTimeout(r, 50));
  if (process.env.BENCH_VERBOSE) process.stderr.write(`agent listed in ${Math.round(performance.now() - t0)} ms\n`);
  // With a view store: synced once the first view is written (functions read it from then on).
  while (views && agent.publisher && agent.publisher.lastBytes.gzip === 0) await new Promise((r) => setTimeout(r, 50));
  process.send!({ synced: true, syncMs: Math.round(performance.now() - t0) });
  process.on('message', (m: { op?: string }) => {
    if (m.op !== 'memory') return;
    global.gc?.();
    const mem = process.memoryUsage();
    process.send!({
      view: agent.publisher?.lastBytes,
      memory: {
        heapMiB: Math.round(mem.heapUsed / 2 ** 20),
        rssMiB: Math.round(mem.rss / 2 ** 20),
        peakRssMiB: Math.round(process.resourceUsage().maxRSS / 1024),
      },
      published: { ...published },
    });
  });
}

void main().catch((err) => {
  process.stderr.write(`bench agent failed: ${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
