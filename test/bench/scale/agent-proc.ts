/**
 * Child process of the scale benchmark running the in-cluster agent (functions/agent Agent) against
 * the bench environment's API server, with a publisher that counts what it would send. Reports
 * `{ synced }` once both informers listed, and `{ memory }` when asked (after a GC).
 */
import { Agent } from '../../../functions/agent/agent.ts';
import type { EventPublisher } from '../../../shared/api/ports.ts';
import type { EnvReady } from './env-proc.ts';
import { BenchCluster } from './env-proc.ts';

const ready = JSON.parse(process.argv[2]) as EnvReady;
const published = { entries: 0, bytes: 0 };
const publisher: EventPublisher = {
  async publish(entries) {
    published.entries += entries.length;
    for (const e of entries) published.bytes += Buffer.byteLength(JSON.stringify(e.detail));
    return { failed: 0 };
  },
};

async function main(): Promise<void> {
  const agent = new Agent({ connection: { kind: 'kubeconfig', path: ready.kubeconfig }, publisher, clusterName: BenchCluster });
  const t0 = performance.now();
  await agent.start();
  while (!agent.ready()) await new Promise((r) => setTimeout(r, 50));
  process.send!({ synced: true, syncMs: Math.round(performance.now() - t0) });
  process.on('message', (m: { op?: string }) => {
    if (m.op !== 'memory') return;
    global.gc?.();
    const mem = process.memoryUsage();
    process.send!({ memory: { heapMiB: Math.round(mem.heapUsed / 2 ** 20), rssMiB: Math.round(mem.rss / 2 ** 20), peakRssMiB: Math.round(process.resourceUsage().maxRSS / 1024) }, published: { ...published } });
  });
}

void main().catch((err) => {
  process.stderr.write(`bench agent failed: ${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
