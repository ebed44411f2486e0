/**
 * Scheduling benchmarks: speed on the karpenter-mix workload and packing quality on the real
 * catalog (cost per hour versus a lower bound and versus a fair Cluster Autoscaler baseline,
 * test/bench/cluster-autoscaler.ts).
 */
import type { Pod } from '../../shared/api/kube.ts';
import type { NodePool } from '../../shared/api/nodepool.ts';
import { loadCatalog } from '../../shared/catalog/index.ts';
import { filterInstanceTypes, nodePoolRequirements } from '../../shared/catalog/filter.ts';
import type { InstanceType } from '../../shared/catalog/types.ts';
import { createSchedulingCache, podRequests, solve, type DaemonSetTemplate, type SchedulingResult } from '../../shared/scheduling/index.ts';
import { clusterAutoscalerFair } from './cluster-autoscaler.ts';
import { genericPods, mixInstanceTypes, mixNodePool, mixPods, realNodePool } from './workloads.ts';

/** One row of the JSON report (USD per hour, MiB). */
export interface SchedulingBenchRow {
  workload: 'karpenter-mix' | 'real-catalog';
  pods: number;
  instanceTypes: number;
  /** Pods per wall-clock second (median run). */
  podsPerSecond: number;
  /** Pods per CPU second of this process (median run): less sensitive to other load on the machine. */
  podsPerCpuSecond: number;
  /** Runs timed (median kept); the first run of a size also pays the JIT for code paths the warm-up missed. */
  runs: number;
  /** Wall time of the first run, milliseconds. */
  firstRunMs: number;
  heapMiB: number;
  nodeClaims: number;
  unschedulable: number;
  costPerHour: number;
  lowerBoundPerHour?: number;
  /**
   * A tighter bound (USD/hour): the cheapest fractional mix of admitted types whose allocatable,
   * less the daemonset overhead, covers the total cpu and memory (the LP relaxation; its optimum
   * uses at most two types). No packing can beat it; `lowerBoundPerHour` to it is structural.
   */
  lpBoundPerHour?: number;
  /** {@link shapeLpBound}: the LP with each node's memory per cpu within the pods' range; the tightest bound here. */
  shapeLpBoundPerHour?: number;
  baselinePerHour?: number;
  /** The baseline's node groups and expander, for the record. */
  baseline?: string;
}

/** The EKS add-on daemonsets of a default cluster (aws-node, kube-proxy, eks-pod-identity-agent). */
export const AddOnDaemonSets: DaemonSetTemplate[] = [
  { name: 'aws-node', cpu: '25m' },
  { name: 'kube-proxy', cpu: '100m' },
  { name: 'eks-pod-identity-agent', cpu: '25m' },
].map((d) => ({
  metadata: { name: d.name, namespace: 'kube-system' },
  spec: { tolerations: [{ operator: 'Exists' }], containers: [{ name: d.name, resources: { requests: { cpu: d.cpu } } }] },
}));

/**
 * Times `solve()` `runs` times and keeps the median run: wall clock (what a Lambda is billed)
 * and this process's CPU time (user + system, all its threads: steadier than the wall clock on
 * a shared, loaded machine, but it also counts the JIT's and GC's helper threads).
 */
function timeSolve(
  pods: Pod[],
  pools: NodePool[],
  types: InstanceType[],
  daemonSets: DaemonSetTemplate[] = [],
  runs = 1,
): { result: SchedulingResult; seconds: number; cpuSeconds: number; firstSeconds: number; heapMiB: number } {
  const samples: { seconds: number; cpuSeconds: number }[] = [];
  let result: SchedulingResult | undefined;
  for (let i = 0; i < runs; i++) {
    const start = process.hrtime.bigint();
    const cpu = process.cpuUsage();
    result = solve({ pods, nodePools: pools, instanceTypes: () => types, daemonSets });
    const used = process.cpuUsage(cpu);
    samples.push({ seconds: Number(process.hrtime.bigint() - start) / 1e9, cpuSeconds: (used.user + used.system) / 1e6 });
  }
  const heapMiB = process.memoryUsage().heapUsed / 2 ** 20;
  const median = (k: 'seconds' | 'cpuSeconds') => samples.map((x) => x[k]).sort((a, b) => a - b)[Math.floor(samples.length / 2)];
  return { result: result!, seconds: median('seconds'), cpuSeconds: median('cpuSeconds'), firstSeconds: samples[0].seconds, heapMiB };
}

function cost(result: SchedulingResult): number {
  return result.newNodeClaims.reduce((s, c) => s + c.priceUsdPerHour, 0);
}

const round = (v: number, d = 2) => Number(v.toFixed(d));

/** Runs per size: the median of 3 up to 5 000 pods, one run above (20 000 pods take seconds). */
const runsFor = (pods: number) => (pods <= 5000 ? 3 : 1);

/** The speed and result columns every scheduling workload row shares. */
function timedRow(workload: SchedulingBenchRow['workload'], n: number, instanceTypes: number, runs: number, t: ReturnType<typeof timeSolve>) {
  return {
    workload,
    pods: n,
    instanceTypes,
    podsPerSecond: Math.round(n / t.seconds),
    podsPerCpuSecond: Math.round(n / t.cpuSeconds),
    runs,
    firstRunMs: Math.round(t.firstSeconds * 1000),
    heapMiB: Math.round(t.heapMiB),
    nodeClaims: t.result.newNodeClaims.length,
    unschedulable: t.result.unschedulable.length,
    costPerHour: round(cost(t.result)),
  };
}

/** karpenter-mix at each size. */
export function benchKarpenterMix(sizes: readonly number[]): SchedulingBenchRow[] {
  const types = mixInstanceTypes();
  const pool = mixNodePool();
  timeSolve(mixPods(500, 1), [pool], types); // warm-up (JIT)
  return sizes.map((n) => {
    const pods = mixPods(n);
    const runs = runsFor(n);
    return timedRow('karpenter-mix', n, types.length, runs, timeSolve(pods, [pool], types, [], runs));
  });
}

/**
 * Lower bound of any packing: total requests priced at the cheapest USD per vCPU and per GiB
 * among the offerings the NodePool admits, whichever total is larger.
 */
export function lowerBound(pods: readonly Pod[], admitted: readonly InstanceType[], daemonCpuPerNode = 0): number {
  let cpu = 0;
  let memGiB = 0;
  for (const p of pods) {
    const r = podRequests(p.spec);
    cpu += (r.cpu ?? 0) / 1000;
    memGiB += (r.memory ?? 0) / 2 ** 30;
  }
  void daemonCpuPerNode;
  let perCpu = Infinity;
  let perGiB = Infinity;
  for (const t of admitted) {
    for (const o of t.offerings) {
      if (!o.available) continue;
      perCpu = Math.min(perCpu, o.priceUsdPerHour / ((t.capacity.cpu ?? 1000) / 1000));
      perGiB = Math.min(perGiB, o.priceUsdPerHour / (Number(t.labels['karpenter.k8s.aws/instance-memory'] ?? 1024) / 1024));
    }
  }
  return Math.max(cpu * perCpu, memGiB * perGiB);
}

/**
 * The LP relaxation of the packing: minimise Σ xₜ·priceₜ with Σ xₜ·cpuₜ ≥ total cpu,
 * Σ xₜ·memₜ ≥ total memory, xₜ ≥ 0, over the admitted non-exotic types at their cheapest
 * available offering, with cpuₜ / memₜ the allocatable less `daemonCpuPerNode`. With two
 * constraints an optimum uses one or two types, so every single type and pair is tried.
 *
 * Why it sits above {@link lowerBound}: that bound prices cpu at the cheapest type per vCPU and
 * memory at the cheapest per GiB and takes the larger, as if one type sold both at those rates
 * (no type does: c-family is cheapest per vCPU, r-family per GiB), and it counts capacity, not
 * allocatable (kube-reserved, the 7.5 % VM memory overhead, eviction threshold, daemonsets).
 * Both gaps are structural. The LP still splits pods across nodes, so the best real packing
 * stays above it (by the instance-size granularity and the pods' own cpu:memory shapes).
 */
export function lpBound(pods: readonly Pod[], admitted: readonly InstanceType[], daemonCpuPerNode = 0): number {
  let cpu = 0;
  let mem = 0;
  for (const p of pods) {
    const r = podRequests(p.spec);
    cpu += r.cpu ?? 0;
    mem += r.memory ?? 0;
  }
  const items: { price: number; c: number; m: number }[] = [];
  for (const t of admitted) {
    if (t.exotic) continue;
    let price = Infinity;
    for (const o of t.offerings) if (o.available && o.priceUsdPerHour < price) price = o.priceUsdPerHour;
    const c = (t.allocatable.cpu ?? 0) - daemonCpuPerNode;
    const m = t.allocatable.memory ?? 0;
    if (price < Infinity && c > 0 && m > 0) items.push({ price, c, m });
  }
  return cheapestCover(items, cpu, mem);
}

/**
 * The LP bound of {@link lpBound} with the pods' own shapes kept (USD/hour): a node holds only a
 * mix of pods, so its memory per cpu lies between the lowest and the highest memory:cpu ratio of
 * the pods. Each type is used at one of the corners of its allocatable (less `daemonCpuPerNode`)
 * within that range, and the cheapest single corner or pair of corners covering the total cpu and
 * memory is taken. No packing can beat it, and it is at least {@link lpBound}: on real-catalog,
 * whose pods are 2 or 8 GiB per vCPU, the cheap-cpu types (c6g, 1.8 GiB per vCPU) cannot be filled
 * with both, which the plain LP assumes.
 */
export function shapeLpBound(pods: readonly Pod[], admitted: readonly InstanceType[], daemonCpuPerNode = 0): number {
  let cpu = 0;
  let mem = 0;
  let lo = Infinity;
  let hi = 0;
  for (const p of pods) {
    const r = podRequests(p.spec);
    const c = r.cpu ?? 0;
    const m = r.memory ?? 0;
    cpu += c;
    mem += m;
    if (c > 0) {
      lo = Math.min(lo, m / c);
      hi = Math.max(hi, m / c);
    }
  }
  if (!(hi > 0)) return lpBound(pods, admitted, daemonCpuPerNode);
  const corners: { price: number; c: number; m: number }[] = [];
  for (const t of admitted) {
    if (t.exotic) continue;
    let price = Infinity;
    for (const o of t.offerings) if (o.available && o.priceUsdPerHour < price) price = o.priceUsdPerHour;
    const c = (t.allocatable.cpu ?? 0) - daemonCpuPerNode;
    const m = t.allocatable.memory ?? 0;
    if (!(price < Infinity && c > 0 && m > 0)) continue;
    // The lowest and highest ratio rays clipped to the box, and the box corner when within the range.
    for (const r of [lo, hi]) {
      const cc = Math.min(c, m / r);
      corners.push({ price, c: cc, m: cc * r });
    }
    if (m >= lo * c && m <= hi * c) corners.push({ price, c, m });
  }
  return cheapestCover(corners, cpu, mem);
}

/**
 * The cheapest fractional use (USD/hour) of one item or a pair of items (price per unit, cpu `c`,
 * memory `m` per unit) covering `cpu` and `mem`: the LP's optimum lies on one or two of them.
 */
function cheapestCover(items: readonly { price: number; c: number; m: number }[], cpu: number, mem: number): number {
  let best = Infinity;
  for (const a of items) best = Math.min(best, a.price * Math.max(cpu / a.c, mem / a.m));
  for (let i = 0; i < items.length; i++) {
    for (let j = i + 1; j < items.length; j++) {
      const a = items[i];
      const b = items[j];
      const det = a.c * b.m - b.c * a.m;
      if (det === 0) continue;
      const xa = (cpu * b.m - b.c * mem) / det;
      const xb = (a.c * mem - cpu * a.m) / det;
      if (xa >= 0 && xb >= 0) best = Math.min(best, xa * a.price + xb * b.price);
    }
  }
  return best;
}

/** real-catalog at each size (region us-east-1, on-demand, c/m/r gen > 4, amd64 + arm64, EKS add-on daemonsets). */
export function benchRealCatalog(sizes: readonly number[], region = 'us-east-1'): SchedulingBenchRow[] {
  const pool = realNodePool();
  const catalog = loadCatalog({ region });
  const admitted = filterInstanceTypes(catalog, nodePoolRequirements(pool));
  // Every add-on daemonset tolerates every taint, so each node carries all of their requests (millicores).
  const daemonCpu = AddOnDaemonSets.reduce((sum, d) => sum + (podRequests(d.spec).cpu ?? 0), 0);
  return sizes.map((n) => {
    const pods = genericPods(n);
    const runs = runsFor(n);
    const timing = timeSolve(pods, [pool], catalog, AddOnDaemonSets, runs);
    return {
      ...timedRow('real-catalog', n, admitted.length, runs, timing),
      lowerBoundPerHour: round(lowerBound(pods, admitted)),
      lpBoundPerHour: round(lpBound(pods, admitted, daemonCpu)),
      shapeLpBoundPerHour: round(shapeLpBound(pods, admitted, daemonCpu)),
      ...(() => {
        const ca = clusterAutoscalerFair(pods, pool, catalog, daemonCpu);
        return { baselinePerHour: round(ca.costPerHour), baseline: ca.description };
      })(),
    };
  });
}

/** Fixed cost of one `solve()` call (milliseconds, median of `runs`): cold, and with a shared cache. */
export interface SolveSetupRow {
  region: string;
  catalogTypes: number;
  admittedTypes: number;
  runs: number;
  coldMs: number;
  cachedMs: number;
}

/**
 * The fixed cost of `solve()` as disruption pays it per simulation: one small pod against the
 * real catalog with the EKS add-on daemonsets, without a cache (every call builds the NodePool
 * template) and with one `createSchedulingCache()` shared by the calls.
 */
export function benchSolveSetup(runs = 15, region = 'us-east-1'): SolveSetupRow {
  const pool = realNodePool();
  const catalog = loadCatalog({ region });
  const admitted = filterInstanceTypes(catalog, nodePoolRequirements(pool));
  const pods = genericPods(1);
  const cache = createSchedulingCache();
  const once = (withCache: boolean) => {
    const start = process.hrtime.bigint();
    solve({ pods, nodePools: [pool], instanceTypes: () => catalog, daemonSets: AddOnDaemonSets, ...(withCache ? { cache } : {}) });
    return Number(process.hrtime.bigint() - start) / 1e6;
  };
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  for (let i = 0; i < 3; i++) once(false); // warm-up (JIT)
  once(true); // fills the cache
  const cold = Array.from({ length: runs }, () => once(false));
  const cached = Array.from({ length: runs }, () => once(true));
  return { region, catalogTypes: catalog.length, admittedTypes: admitted.length, runs, coldMs: round(median(cold), 1), cachedMs: round(median(cached), 1) };
}
