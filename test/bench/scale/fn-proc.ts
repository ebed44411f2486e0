/**
 * Child process of the scale benchmark that runs one real handler through `run` (provisioner or
 * disruption) with production deps (`buildDeps`) pointed at the bench environment, and measures
 * wall time, peak heap and DynamoDB read units. A fresh process per measurement, so its heap is
 * the function's alone, as in a Lambda container.
 *
 * Protocol (IPC with test/bench/scale/index.ts): before each measured invocation it sends
 * `{ mark: 'start', label }` and waits for `{ go: true }` (the parent resets the API counters);
 * after it, `{ mark: 'end', label, ... }` and waits for `{ go: true }`. Last: `{ done: true }`.
 */
import { parseRuntimeEnv } from '../../../shared/runtime/env.ts';
import { buildDeps, type Deps } from '../../../shared/runtime/deps.ts';
import { RecordingMetrics, type Log } from '../../../shared/runtime/observability.ts';
import { Env } from '../../../shared/api/contract.ts';
import { compactPod } from '../../../shared/api/agent-events.ts';
import type { Pod } from '../../../shared/api/kube.ts';
import { AgentSchemaVersion, AgentSource, DetailTypeUnschedulablePods } from '../../../shared/api/contract.ts';
import { BenchCluster, BenchRegion, pendingPods } from './objects.ts';
import type { EnvReady } from './env-proc.ts';

export interface FnArgs {
  ready: EnvReady;
  op: 'provision' | 'disruption';
  /** provision: prefixes of the pending-pod sets already created, one invocation each. */
  prefixes?: string[];
  pending?: number;
}

const args = JSON.parse(process.argv[2]) as FnArgs;

const t0 = performance.now();
const echo = (level: string) => (m: string, f?: Record<string, unknown>) =>
  process.stderr.write(`${((performance.now() - t0) / 1000).toFixed(3)} ${level} ${m} ${JSON.stringify(f ?? {}).slice(0, 200)}\n`);
/** Silent unless BENCH_VERBOSE=1 (then every line with seconds since start, on stderr). */
const silent: Log = process.env.BENCH_VERBOSE
  ? { debug: echo('debug'), info: echo('info'), warn: echo('warn'), error: echo('error') }
  : { debug() {}, info() {}, warn() {}, error() {} };

let peakHeap = 0;
const sampler = setInterval(() => (peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed)), 2);

function ask(msg: Record<string, unknown>): Promise<void> {
  return new Promise((resolve) => {
    const on = (m: { go?: boolean }) => {
      if (!m.go) return;
      process.off('message', on);
      resolve();
    };
    process.on('message', on);
    process.send!(msg);
  });
}

/** Sums DynamoDB ConsumedCapacity of reads (asks for it on every read call). */
function countReadUnits(deps: Deps): { units: number } {
  const acc = { units: 0 };
  const ddb = deps.clients!.dynamodb;
  ddb.middlewareStack.add(
    (next, context) => async (a) => {
      const op = context.commandName ?? '';
      const isRead = /^(Get|BatchGet|Query|Scan)/.test(op);
      if (isRead) (a.input as Record<string, unknown>).ReturnConsumedCapacity = 'TOTAL';
      const out = await next(a);
      if (isRead) {
        const cc = (out.output as { ConsumedCapacity?: { CapacityUnits?: number } | { CapacityUnits?: number }[] }).ConsumedCapacity;
        for (const c of Array.isArray(cc) ? cc : cc ? [cc] : []) acc.units += c.CapacityUnits ?? 0;
      }
      return out;
    },
    { step: 'initialize', name: 'benchReadUnits' },
  );
  return acc;
}

async function main(): Promise<void> {
  const r = args.ready;
  const env = parseRuntimeEnv({
    [Env.clusterName]: BenchCluster,
    [Env.tableName]: r.tableName,
    [Env.region]: BenchRegion,
    [Env.kubeconfig]: r.kubeconfig,
    [Env.dynamodbEndpoint]: r.dynamodbEndpoint,
    [Env.ec2Endpoint]: r.ec2Endpoint,
    [Env.stateMachineArn]: `arn:aws:states:${BenchRegion}:123456789012:stateMachine:termination`,
    [Env.instanceProfileName]: `KarpenterNodeInstanceProfile-${BenchCluster}`,
    ...(process.env.BENCH_NO_VIEW ? {} : { [Env.viewBucket]: r.viewBucket, [Env.s3Endpoint]: r.s3Endpoint }),
  });
  process.env.AWS_ACCESS_KEY_ID ??= 'local';
  process.env.AWS_SECRET_ACCESS_KEY ??= 'local';
  const metrics = new RecordingMetrics();
  const deps = buildDeps(env, { functionName: args.op, log: silent, metrics, overrides: { termination: { start: async (i) => `arn:bench:${i.nodeClaim}` } } });
  const rcu = countReadUnits(deps);

  const measure = async <T>(label: string, fn: () => Promise<T>): Promise<T> => {
    await ask({ mark: 'start', label });
    global.gc?.();
    peakHeap = process.memoryUsage().heapUsed;
    rcu.units = 0;
    const t0 = performance.now();
    const out = await fn();
    const wallMs = Math.round(performance.now() - t0);
    peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed);
    await ask({
      mark: 'end',
      label,
      wallMs,
      heapMiB: Math.round(peakHeap / 2 ** 20),
      rssMiB: Math.round(process.resourceUsage().maxRSS / 1024),
      dynamoReadUnits: Math.round(rcu.units * 10) / 10,
      out: summarize(out),
    });
    return out;
  };

  if (args.op === 'provision') {
    const { run } = await import('../../../functions/provisioner/handler.ts');
    for (const prefix of args.prefixes ?? []) {
      const pods = pendingPods(args.pending ?? 100, prefix).map((p) => compactPod(p as unknown as Pod));
      const event = {
        version: '0',
        id: `bench-${prefix}`,
        'detail-type': DetailTypeUnschedulablePods,
        source: AgentSource,
        account: '123456789012',
        time: new Date().toISOString(),
        region: BenchRegion,
        resources: [],
        detail: { schemaVersion: AgentSchemaVersion, cluster: BenchCluster, batchId: prefix, part: 0, parts: 1, observedAt: new Date().toISOString(), pods },
      };
      await measure(prefix, () => run(event as never, deps as never));
    }
  } else {
    const { run } = await import('../../../functions/disruption/handler.ts');
    // The first pass records every claim's Consolidatable condition (a write each); the second is the steady state.
    await measure('disruption-first', () => run({} as never, deps as never));
    await measure('disruption', () => run({} as never, deps as never));
  }
  clearInterval(sampler);
  process.send!({ done: true });
  setTimeout(() => process.exit(0), 20);
}

/** The small part of a handler's output the table shows. */
function summarize(out: unknown): Record<string, unknown> {
  const o = out as Record<string, any>;
  if (o && 'provisionable' in o)
    return {
      provisionable: o.provisionable,
      created: o.created.length,
      launched: o.launched.length,
      placedOnExisting: o.placedOnExisting,
      unschedulable: o.unschedulable.length,
    };
  return { status: o?.status, simulations: o?.simulations, method: o?.command?.method, candidates: o?.command?.candidates?.length ?? 0 };
}

void main().catch((err) => {
  process.stderr.write(`bench function failed: ${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
