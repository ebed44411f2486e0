/**
 * `npm run bench -- --scale [--json] [--sizes 100x2000,1000x20000]`: the real provisioner and
 * disruption handlers (through `run`, production deps from `buildDeps`) and the real agent against
 * the embedded environment's servers (local Kubernetes API server, dynalite, local EC2) holding a
 * synthetic cluster of kubectl-shaped objects (test/bench/scale/objects.ts, ~6 KB a pod).
 *
 * Per size (nodes / pods):
 * - provisioning: 100 pending pods arrive as one agent event; two invocations in one fresh
 *   process (`cold`: first in the container; `warm`: a second batch) — wall time, Kubernetes API
 *   requests and bytes read, DynamoDB read units, peak heap (sampled every 2 ms) and max RSS;
 * - disruption: two planning runs (`run({})`) in a fresh process: `first` records every claim's
 *   NodeClaim conditions (a DynamoDB write each), the second (reported) is the steady state — wall,
 *   simulations, bytes, heap;
 * - agent: the initial list (bytes, time), then 1 % of the pods replaced per minute for
 *   {@link ChurnSeconds} s: API bytes per minute (watch streams, plus the periodic re-list
 *   amortised when the reflector has one) and memory after a GC.
 *
 * Processes: the servers run in one child (test/bench/scale/env-proc.ts), each measured function
 * in its own child (fn-proc.ts), the agent in another (agent-proc.ts), so no heap is shared.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { parseAllDocuments } from 'yaml';
import { BenchCluster, BenchRegion } from './objects.ts';
import type { Command, EnvReady } from './env-proc.ts';
import type { FnArgs } from './fn-proc.ts';

/** The sizes of the issue: nodes × pods (20 pods a node). */
export const DefaultSizes: [number, number][] = [
  [100, 2_000],
  [1_000, 20_000],
  [5_000, 100_000],
];
/** Pending pods per provisioning invocation. */
export const PendingPerInvocation = 100;
/** Real seconds of measured churn (1 % of pods a minute). */
export const ChurnSeconds = 20;
/** A measured function taking longer than this is stopped and reported as timed out. */
export const FunctionTimeoutMs = 15 * 60_000;

// Local endpoints only; the SDK clients need some credentials (never real ones here). Children inherit.
process.env.AWS_ACCESS_KEY_ID ??= 'local';
process.env.AWS_SECRET_ACCESS_KEY ??= 'local';
process.env.AWS_EC2_METADATA_DISABLED ??= 'true';

const here = (f: string) => fileURLToPath(new URL(f, import.meta.url));
const execArgv = ['--import', 'tsx', '--expose-gc', '--max-old-space-size=12288'];

export interface ScaleRow {
  nodes: number;
  pods: number;
  seedSeconds: number;
  provisioning: Measured & { cold: Measured };
  disruption: Measured & { simulations?: number; method?: string; candidates?: number; first?: Measured };
  agent: {
    syncMs: number;
    listBytes: number;
    bytesPerMinute: number;
    watchBytesPerMinute: number;
    heapMiB: number;
    rssMiB: number;
    peakRssMiB: number;
    eventsPerMinute: number;
    viewGzipBytes?: number;
    viewJsonBytes?: number;
  };
}

export interface Measured {
  wallMs: number;
  kubeRequests: number;
  kubeBytes: number;
  heapMiB: number;
  rssMiB: number;
  dynamoReadUnits?: number;
  out?: Record<string, unknown>;
  timedOut?: boolean;
}

class Env {
  private seq = 0;
  private readonly waiting = new Map<number, (m: any) => void>();
  constructor(
    readonly child: ChildProcess,
    readonly ready: EnvReady,
  ) {
    child.on('message', (m: any) => {
      if (m.id !== undefined) {
        this.waiting.get(m.id)?.(m);
        this.waiting.delete(m.id);
      }
    });
  }
  call<T = any>(cmd: Command): Promise<T> {
    const id = ++this.seq;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, (m) => (m.ok ? resolve(m.result) : reject(new Error(m.error))));
      this.child.send({ id, cmd });
    });
  }
}

async function startEnv(nodes: number, pods: number): Promise<Env> {
  const child = fork(here('./env-proc.ts'), [String(nodes), String(Math.round(pods / nodes))], { execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const ready = await new Promise<EnvReady>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`bench environment exited with ${code}`)));
    child.on('message', (m: any) => m.ready && resolve(m.ready));
  });
  child.removeAllListeners('exit');
  return new Env(child, ready);
}

/** Runs fn-proc with `args`; collects each measured invocation with the API counters around it. */
async function runFunction(env: Env, args: FnArgs): Promise<Record<string, Measured>> {
  // BENCH_CPU_PROF=<dir>: a V8 CPU profile of each function process (open in Chrome DevTools).
  const prof = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
  const child = fork(here('./fn-proc.ts'), [JSON.stringify(args)], { execArgv: [...execArgv, ...prof], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const out: Record<string, Measured> = {};
  let current: string | undefined;
  const timer = setTimeout(() => {
    if (current) out[current] = { wallMs: FunctionTimeoutMs, kubeRequests: NaN, kubeBytes: NaN, heapMiB: NaN, rssMiB: NaN, timedOut: true };
    child.kill('SIGKILL');
  }, FunctionTimeoutMs);
  await new Promise<void>((resolve, reject) => {
    child.on('message', async (m: any) => {
      if (m.mark === 'start') {
        current = m.label;
        // Each provisioning invocation's pending pods appear just before it (a pass solves every
        // pending pod, so pods created earlier would be solved by the previous invocation).
        if (args.op === 'provision') await env.call({ op: 'addPending', count: args.pending ?? PendingPerInvocation, prefix: m.label });
        await env.call({ op: 'counters', reset: true });
        child.send({ go: true });
      } else if (m.mark === 'end') {
        const c = await env.call<{ requests: number; bytes: number; watchBytes: number }>({ op: 'counters' });
        // Watch streams are the agent's (functions never watch).
        out[m.label] = {
          wallMs: m.wallMs,
          kubeRequests: c.requests,
          kubeBytes: c.bytes - c.watchBytes,
          heapMiB: m.heapMiB,
          rssMiB: m.rssMiB,
          dynamoReadUnits: m.dynamoReadUnits,
          out: m.out,
        };
        current = undefined;
        child.send({ go: true });
      } else if (m.done) resolve();
    });
    child.on('exit', (code) => (code === 0 || out[current ?? ''] ? resolve() : reject(new Error(`bench function exited with ${code}`))));
  });
  clearTimeout(timer);
  return out;
}

/** The agent container's NODE_OPTIONS in infra/k8s/deployment.yaml (the flags the bench runs it with). */
export function agentNodeOptions(): string[] {
  const docs = parseAllDocuments(readFileSync(here('../../../infra/k8s/deployment.yaml'), 'utf8')).map((d) => d.toJS() as any);
  const container = docs.find((d) => d?.kind === 'Deployment')?.spec?.template?.spec?.containers?.find((c: any) => c.name === 'agent');
  const value = container?.env?.find((e: any) => e.name === 'NODE_OPTIONS')?.value as string | undefined;
  return value ? value.split(/\s+/).filter(Boolean) : [];
}

/** agent-proc.ts bundled as infra/k8s/Dockerfile bundles the agent (esbuild, ESM, minified). @returns the .mjs path. */
async function bundleAgentProc(): Promise<string> {
  const outfile = join(mkdtempSync(join(tmpdir(), 'nodefleet-bench-agent-')), 'agent-proc.mjs');
  await build({
    entryPoints: [here('./agent-proc.ts')],
    bundle: true,
    platform: 'node',
    target: 'node22',
    format: 'esm',
    minify: true,
    banner: { js: "import { createRequire as __nfCreateRequire } from 'node:module'; const require = __nfCreateRequire(import.meta.url);" },
    outfile,
    logLevel: 'warning',
  });
  return outfile;
}

async function measureAgent(env: Env): Promise<{ row: ScaleRow['agent']; child: ChildProcess }> {
  await env.call({ op: 'counters', reset: true });
  // BENCH_AGENT_TSX=1: the agent under tsx, unbundled (its RSS then includes tsx's ~230 MiB). The
  // bundled agent's first view upload was seen to stall at 100 000 pods on a heavily loaded machine;
  // the one stall traced was the local API server blocking on resumed watches (fixed). A fallback.
  const args = [JSON.stringify({ ...env.ready, cluster: BenchCluster, region: BenchRegion })];
  const child = process.env.BENCH_AGENT_TSX
    ? fork(here('./agent-proc.ts'), args, {
        execArgv: ['--import', 'tsx', '--expose-gc', ...agentNodeOptions()],
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      })
    : fork(await bundleAgentProc(), args, { execArgv: ['--expose-gc', ...agentNodeOptions()], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const next = <T>(key: string) => new Promise<T>((resolve) => child.on('message', (m: any) => m[key] !== undefined && resolve(m)));
  const synced = await next<{ syncMs: number }>('synced');
  const list = await env.call<{ bytes: number }>({ op: 'counters', reset: true });
  const perMinute = Math.max(1, Math.round(env.ready.pods * 0.01));
  const t0 = performance.now();
  for (let s = 0; s < ChurnSeconds; s++) {
    await env.call({ op: 'churn', pods: Math.max(1, Math.round(perMinute / 60)) });
    const wait = t0 + (s + 1) * 1000 - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  }
  await new Promise((r) => setTimeout(r, 1500)); // let the last events stream
  const seconds = (performance.now() - t0) / 1000;
  const churn = await env.call<{ bytes: number; watchBytes: number }>({ op: 'counters' });
  child.send({ op: 'memory' });
  const mem = await next<{
    memory: { heapMiB: number; rssMiB: number; peakRssMiB: number };
    published: { entries: number };
    view?: { gzip: number; json: number };
  }>('memory');
  const reflector = (await import('../../../shared/kube/reflector.ts')) as Record<string, unknown>;
  const relistMs = typeof reflector.DefaultRelistIntervalMs === 'number' ? reflector.DefaultRelistIntervalMs : 0;
  const watchPerMinute = (churn.bytes / seconds) * 60;
  const relistPerMinute = relistMs > 0 ? (list.bytes / relistMs) * 60_000 : 0;
  const row = {
    syncMs: synced.syncMs,
    listBytes: list.bytes,
    watchBytesPerMinute: Math.round(watchPerMinute),
    bytesPerMinute: Math.round(watchPerMinute + relistPerMinute),
    eventsPerMinute: Math.round((mem.published.entries / seconds) * 60),
    ...(mem.view ? { viewGzipBytes: mem.view.gzip, viewJsonBytes: mem.view.json } : {}),
    ...mem.memory,
  };
  return { row, child };
}

/** One size, every measurement. */
export async function benchScale(nodes: number, pods: number, log: (s: string) => void = () => {}): Promise<ScaleRow> {
  const env = await startEnv(nodes, pods);
  log(`  seeded ${nodes} nodes / ${pods} pods in ${env.ready.seedSeconds} s`);
  try {
    // The agent first: it keeps running (watching, publishing the cluster view) while the
    // functions are measured, as in a cluster; its watch bytes are not counted against them.
    const { row: agent, child: agentChild } = await measureAgent(env);
    log(`  agent: ${agent.rssMiB} MiB, ${Math.round(agent.bytesPerMinute / 1024)} KiB/min`);
    const p = await runFunction(env, { ready: env.ready, op: 'provision', prefixes: ['pending-a', 'pending-b'], pending: PendingPerInvocation });
    log(`  provisioning: cold ${p['pending-a']?.wallMs} ms, warm ${p['pending-b']?.wallMs} ms`);
    const d = await runFunction(env, { ready: env.ready, op: 'disruption' });
    log(`  disruption: first ${d['disruption-first']?.wallMs} ms, steady ${d.disruption?.wallMs} ms`);
    agentChild.kill('SIGKILL');
    const dis = d.disruption;
    return {
      nodes,
      pods,
      seedSeconds: env.ready.seedSeconds,
      provisioning: { ...p['pending-b'], cold: p['pending-a'] },
      disruption: {
        ...dis,
        simulations: dis?.out?.simulations as number | undefined,
        method: dis?.out?.method as string | undefined,
        candidates: dis?.out?.candidates as number | undefined,
        first: d['disruption-first'],
      },
      agent,
    };
  } finally {
    await env.call({ op: 'stop' }).catch(() => {});
    env.child.kill();
  }
}

const MiB = (b: number) => (Number.isFinite(b) ? (b / 2 ** 20).toFixed(b < 2 ** 20 ? 3 : 1) : '-');

/** The table printed for the rows (one line per size). */
export function scaleTable(rows: readonly ScaleRow[]): string {
  const cols = [
    'nodes',
    'pods',
    'prov wall ms',
    'prov cold ms',
    'prov kube req',
    'prov kube MiB',
    'prov RCU',
    'prov heap MiB',
    'dis wall ms',
    'dis first ms',
    'dis sims',
    'dis kube MiB',
    'dis heap MiB',
    'agent rss MiB',
    'agent MiB/min',
  ];
  const cells = rows.map((r) =>
    [
      r.nodes,
      r.pods,
      r.provisioning.wallMs,
      r.provisioning.cold?.wallMs,
      r.provisioning.kubeRequests,
      MiB(r.provisioning.kubeBytes),
      r.provisioning.dynamoReadUnits,
      r.provisioning.heapMiB,
      r.disruption.timedOut ? `>${FunctionTimeoutMs}` : r.disruption.wallMs,
      r.disruption.first?.wallMs,
      r.disruption.simulations ?? '-',
      MiB(r.disruption.kubeBytes),
      r.disruption.heapMiB,
      r.agent.rssMiB,
      MiB(r.agent.bytesPerMinute),
    ].map((c) => String(c ?? '-')),
  );
  const widths = cols.map((c, i) => Math.max(c.length, ...cells.map((r) => r[i].length)));
  return [cols, ...cells].map((r) => r.map((c, i) => c.padStart(widths[i])).join('  ')).join('\n');
}

/** Parses `--sizes 100x2000,1000x20000`. */
export function parseSizes(arg: string | undefined): [number, number][] {
  if (!arg) return DefaultSizes;
  return arg.split(',').map((s) => {
    const m = /^(\d+)x(\d+)$/.exec(s.trim());
    if (!m) throw new Error(`--sizes: "${s}" is not NODESxPODS (e.g. 100x2000)`);
    return [Number(m[1]), Number(m[2])];
  });
}

export async function runScaleBench(opts: { sizes: [number, number][]; log: (s: string) => void }): Promise<ScaleRow[]> {
  const rows: ScaleRow[] = [];
  for (const [nodes, pods] of opts.sizes) {
    opts.log(`scale ${nodes} nodes / ${pods} pods`);
    rows.push(await benchScale(nodes, pods, opts.log));
  }
  return rows;
}
