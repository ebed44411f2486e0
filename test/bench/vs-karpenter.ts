/**
 * `npm run bench -- --vs-karpenter [--json] [--quick]`: nodefleet's `solve()` and Karpenter's
 * scheduler (the oracle, test/oracle/karpenter) on the same inputs, one run, same machine.
 *
 * - `karpenter-benchmark`: Karpenter's own scheduling benchmark workload, taken from Karpenter
 *   itself: its 400 fake instance types (`fake.InstanceTypes(400)`, printed by the oracle) and its
 *   pod mix (a fifth each of plain, zonal spread, hostname spread, zonal self-affinity, hostname
 *   anti-affinity; the oracle's benchmark.go), one NodePool without requirements.
 * - `real-catalog`: the shipped us-east-1 catalog (every type, offerings and prices) with the
 *   general-purpose NodePool and generic pods of test/bench/workloads.ts and the EKS add-on
 *   DaemonSets.
 *
 * Speed: Karpenter's figure is `Scheduler.Solve` alone (its benchmark's measure, 5 solver
 * workers), nodefleet's is the whole `solve()` call; pods per wall-clock second of the median run.
 * Cost: the sum over new NodeClaims of the cheapest launchable offering (USD/h), and for
 * real-catalog the fair Cluster Autoscaler baseline of test/bench/cluster-autoscaler.ts.
 */
import { spawnSync } from 'node:child_process';
import type { Pod } from '../../shared/api/kube.ts';
import { NodePoolSchema, type NodePool } from '../../shared/api/nodepool.ts';
import { parseResources } from '../../shared/api/quantity.ts';
import { loadCatalog } from '../../shared/catalog/index.ts';
import type { InstanceType } from '../../shared/catalog/types.ts';
import { solve, type DaemonSetTemplate } from '../../shared/scheduling/index.ts';
import { buildOracle, type OracleOutput } from '../parity/oracle.ts';
import { clusterAutoscalerFair, type FairBaseline } from './cluster-autoscaler.ts';
import { AddOnDaemonSets } from './scheduling.ts';
import { genericPods, realNodePool } from './workloads.ts';

export interface VsKarpenterRow {
  workload: 'karpenter-benchmark' | 'real-catalog';
  pods: number;
  instanceTypes: number;
  nodefleetPodsPerSecond: number;
  karpenterPodsPerSecond: number;
  /** nodefleet ÷ Karpenter pods per second. */
  speedRatio: number;
  /** Pods per CPU second (user + system, all threads of the process): steadier on a loaded machine. */
  nodefleetPodsPerCpuSecond: number;
  karpenterPodsPerCpuSecond: number;
  /** nodefleet ÷ Karpenter pods per CPU second. */
  cpuSpeedRatio: number;
  nodefleetNodeClaims: number;
  karpenterNodeClaims: number;
  nodefleetUnschedulable: number;
  karpenterUnschedulable: number;
  nodefleetCostPerHour: number;
  karpenterCostPerHour: number;
  /** nodefleet ÷ Karpenter cost. */
  costRatio: number;
  clusterAutoscalerPerHour?: number;
  /** nodefleet ÷ Cluster Autoscaler cost. */
  costRatioVsClusterAutoscaler?: number;
  /** Timed runs of each (median kept). */
  runs: number;
}

interface OracleType {
  name: string;
  capacity: Record<string, string>;
  overhead: Record<string, string>;
  labels: Record<string, string>;
  offerings: { zone: string; capacityType: string; price: number; available: boolean }[];
}

function oracleJson<T>(bin: string, args: string[], input?: string): T {
  const r = spawnSync(bin, args, { input, encoding: 'utf8', maxBuffer: 1 << 30 });
  if (r.status !== 0) throw new Error(`oracle ${args.join(' ')}: ${r.stderr.trim()}`);
  return JSON.parse(r.stdout) as T;
}

/** An oracle-format type as nodefleet's InstanceType (allocatable = capacity − overhead). */
function fromOracleType(t: OracleType): InstanceType {
  const capacity = parseResources(t.capacity);
  const overhead = parseResources(t.overhead);
  const allocatable: Record<string, number> = {};
  for (const [k, v] of Object.entries(capacity)) allocatable[k] = Math.max(0, v - (overhead[k] ?? 0));
  return {
    name: t.name,
    labels: t.labels,
    capacity,
    allocatable,
    offerings: t.offerings.map((o) => ({
      zone: o.zone,
      capacityType: o.capacityType as 'spot' | 'on-demand',
      priceUsdPerHour: o.price,
      available: o.available,
    })),
  };
}

/** nodefleet's InstanceType in the oracle's format. */
function toOracleType(t: InstanceType): OracleType {
  const fmt = (k: string, v: number) => (k === 'cpu' ? `${v}m` : String(Math.round(v)));
  const capacity: Record<string, string> = {};
  const overhead: Record<string, string> = {};
  for (const [k, v] of Object.entries(t.capacity)) {
    if (v <= 0) continue;
    capacity[k] = fmt(k, v);
    const o = v - (t.allocatable[k] ?? 0);
    if (o > 0) overhead[k] = fmt(k, o);
  }
  return {
    name: t.name,
    capacity,
    overhead,
    labels: t.labels,
    offerings: t.offerings.map((o) => ({ zone: o.zone, capacityType: o.capacityType, price: o.priceUsdPerHour, available: o.available })),
  };
}

function benchmarkNodePool(): Record<string, unknown> {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: 'default' },
    spec: {
      limits: { cpu: '10000000', memory: '10000000Gi' },
      template: { spec: { nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' }, requirements: [] } },
    },
  };
}

const round = (v: number, d = 2) => Number(v.toFixed(d));

function timeNodefleet(pods: Pod[], pools: NodePool[], types: InstanceType[], daemonSets: DaemonSetTemplate[], runs: number) {
  const samples: { wall: number; cpu: number }[] = [];
  let result = solve({ pods, nodePools: pools, instanceTypes: () => types, daemonSets }); // warm-up (JIT)
  for (let i = 0; i < runs; i++) {
    const input = structuredClone(pods);
    const cpu = process.cpuUsage();
    const start = process.hrtime.bigint();
    result = solve({ pods: input, nodePools: pools, instanceTypes: () => types, daemonSets });
    const wall = Number(process.hrtime.bigint() - start) / 1e9;
    const used = process.cpuUsage(cpu);
    samples.push({ wall, cpu: (used.user + used.system) / 1e6 });
  }
  samples.sort((a, b) => a.wall - b.wall);
  const m = samples[Math.floor(samples.length / 2)];
  return { result, seconds: m.wall, cpuSeconds: m.cpu };
}

function row(
  workload: VsKarpenterRow['workload'],
  pods: number,
  types: number,
  runs: number,
  nf: ReturnType<typeof timeNodefleet>,
  k: OracleOutput,
  ca?: FairBaseline,
): VsKarpenterRow {
  const nfCost = nf.result.newNodeClaims.reduce((s, c) => s + c.priceUsdPerHour, 0);
  const kCost = k.nodeClaims.reduce((s, c) => s + c.price, 0);
  const nfPps = pods / nf.seconds;
  const kPps = pods / k.solveSeconds;
  return {
    workload,
    pods,
    instanceTypes: types,
    nodefleetPodsPerSecond: Math.round(nfPps),
    karpenterPodsPerSecond: Math.round(kPps),
    speedRatio: round(nfPps / kPps, 1),
    nodefleetPodsPerCpuSecond: Math.round(pods / nf.cpuSeconds),
    karpenterPodsPerCpuSecond: Math.round(pods / k.solveCpuSeconds),
    cpuSpeedRatio: round(pods / nf.cpuSeconds / (pods / k.solveCpuSeconds), 1),
    nodefleetNodeClaims: nf.result.newNodeClaims.length,
    karpenterNodeClaims: k.nodeClaims.length,
    nodefleetUnschedulable: nf.result.unschedulable.length,
    karpenterUnschedulable: k.unschedulable.length,
    nodefleetCostPerHour: round(nfCost),
    karpenterCostPerHour: round(kCost),
    costRatio: round(nfCost / kCost, 3),
    ...(ca ? { clusterAutoscalerPerHour: round(ca.costPerHour), costRatioVsClusterAutoscaler: round(nfCost / ca.costPerHour, 3) } : {}),
    runs,
  };
}

/** Runs both workloads; `log` gets progress lines. */
export function benchVsKarpenter(opts: { quick: boolean; log: (line: string) => void }): { rows: VsKarpenterRow[]; clusterAutoscaler: FairBaseline[] } {
  const bin = buildOracle(opts.log);
  const rows: VsKarpenterRow[] = [];
  const baselines: FairBaseline[] = [];

  // Karpenter's benchmark workload.
  const fakeTypes = oracleJson<OracleType[]>(bin, ['--print-fake-instance-types', '400']);
  const nfFakeTypes = fakeTypes.map(fromOracleType);
  const pool = benchmarkNodePool();
  const nfPool = NodePoolSchema.parse(pool);
  for (const n of opts.quick ? [100, 500] : [100, 1000, 2000]) {
    const pods = oracleJson<Pod[]>(bin, ['--print-benchmark-pods', String(n)]);
    const runs = n <= 500 ? 3 : 1;
    opts.log(`karpenter-benchmark ${n} pods: Karpenter…`);
    const k = oracleJson<OracleOutput>(bin, ['--solve-only', '--bench', String(runs)], JSON.stringify({ fakeInstanceTypes: 400, nodePools: [pool], pods }));
    opts.log(`karpenter-benchmark ${n} pods: nodefleet…`);
    const nf = timeNodefleet(pods, [nfPool], nfFakeTypes, [], runs);
    rows.push(row('karpenter-benchmark', n, fakeTypes.length, runs, nf, k));
  }

  // The real catalog.
  const catalog = loadCatalog({ region: 'us-east-1' });
  const realPool = realNodePool();
  const oracleTypes = catalog.map(toOracleType);
  const daemonSets = AddOnDaemonSets.map((d) => ({
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: d.metadata,
    spec: { selector: { matchLabels: { ds: d.metadata.name } }, template: { metadata: { labels: { ds: d.metadata.name } }, spec: d.spec } },
  }));
  const rawRealPool = {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: realPool.metadata.name },
    spec: { template: { spec: { nodeClassRef: realPool.spec.template.spec.nodeClassRef, requirements: realPool.spec.template.spec.requirements } } },
  };
  for (const n of opts.quick ? [500] : [1000, 5000]) {
    const pods = genericPods(n);
    const runs = n <= 1000 ? 3 : 1;
    opts.log(`real-catalog ${n} pods: Karpenter…`);
    const k = oracleJson<OracleOutput>(
      bin,
      ['--solve-only', '--bench', String(runs)],
      JSON.stringify({ instanceTypes: oracleTypes, nodePools: [rawRealPool], pods, daemonSets }),
    );
    opts.log(`real-catalog ${n} pods: nodefleet…`);
    const nf = timeNodefleet(pods, [realPool], catalog, AddOnDaemonSets, runs);
    const ca = clusterAutoscalerFair(pods, realPool, catalog, 150);
    baselines.push(ca);
    rows.push(row('real-catalog', n, catalog.length, runs, nf, k, ca));
  }
  return { rows, clusterAutoscaler: baselines };
}
