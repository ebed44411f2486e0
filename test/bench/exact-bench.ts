/**
 * `npm run bench -- --exact [--seed N] [--scenarios 500] [--time-limit 10] [--json]`: nodefleet's
 * packings against the optimum (test/bench/exact.ts) on random small scenarios of the real
 * us-east-1 catalog: one NodePool (general purpose, small spot, burstable or GPU), 1–4 pod kinds,
 * 2–40 pods, requirements that are per-type predicates (arch, category, generation, capacity
 * type, zone, GPU name), the EKS add-on DaemonSets plus one on arm64 nodes and one on GPU nodes.
 * Each scenario runs `solve()` with the default `cost` packing and with `packing: karpenter`, then
 * the integer program under a time limit; scenarios that hit it are counted and left out of the
 * gap figures.
 */
import type { Pod } from '../../shared/api/kube.ts';
import { NodePoolSchema, type NodePool } from '../../shared/api/nodepool.ts';
import { loadCatalog } from '../../shared/catalog/index.ts';
import type { InstanceType } from '../../shared/catalog/types.ts';
import { createSchedulingCache, solve, type DaemonSetTemplate, type SchedulingResult } from '../../shared/scheduling/index.ts';
import { exactPacking, exactTemplate, placeable, type ExactResult } from './exact.ts';
import type { PoolTemplate } from '../../shared/scheduling/template.ts';
import { AddOnDaemonSets } from './scheduling.ts';
import { prng, realNodePool } from './workloads.ts';

function nodePool(name: string, requirements: { key: string; operator: string; values: string[] }[]): NodePool {
  return NodePoolSchema.parse({
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name },
    spec: { template: { spec: { nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' }, requirements } } },
  });
}

type PoolName = 'general' | 'small-spot' | 'burstable' | 'gpu';

/** The NodePools scenarios draw from (built once, so the scheduling cache reuses their templates). */
export const Pools: Record<PoolName, NodePool> = {
  general: realNodePool(),
  'small-spot': nodePool('small-spot', [
    { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot', 'on-demand'] },
    { key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: ['c', 'm'] },
    { key: 'karpenter.k8s.aws/instance-generation', operator: 'Gt', values: ['5'] },
    { key: 'karpenter.k8s.aws/instance-cpu', operator: 'Lt', values: ['17'] },
  ]),
  burstable: nodePool('burstable', [
    { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
    { key: 'karpenter.k8s.aws/instance-family', operator: 'In', values: ['t3', 't3a', 't4g', 'm7g', 'm7i'] },
  ]),
  // The issue's accelerator NodePool (g4dn, g5, g6, on-demand).
  gpu: nodePool('gpu', [
    { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
    { key: 'karpenter.k8s.aws/instance-family', operator: 'In', values: ['g4dn', 'g5', 'g6'] },
  ]),
};

/** The EKS add-ons on every node, an agent on arm64 nodes only and the NVIDIA device plugin on GPU nodes only: per-type overhead. */
export const ExactDaemonSets: DaemonSetTemplate[] = [
  ...AddOnDaemonSets,
  {
    metadata: { name: 'arm-agent', namespace: 'kube-system' },
    spec: {
      nodeSelector: { 'kubernetes.io/arch': 'arm64' },
      tolerations: [{ operator: 'Exists' }],
      containers: [{ name: 'a', resources: { requests: { cpu: '100m', memory: '256Mi' } } }],
    },
  },
  {
    metadata: { name: 'nvidia-device-plugin', namespace: 'kube-system' },
    spec: {
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [{ matchExpressions: [{ key: 'karpenter.k8s.aws/instance-gpu-count', operator: 'Exists' }] }],
          },
        },
      },
      tolerations: [{ operator: 'Exists' }],
      containers: [{ name: 'p', resources: { requests: { cpu: '50m', memory: '128Mi' } } }],
    },
  },
] as DaemonSetTemplate[];

/** One pod kind: `count` identical pods. */
export interface KindSpec {
  count: number;
  cpuMilli: number;
  memoryMiB: number;
  gpus: number;
  nodeSelector?: Record<string, string>;
}

export interface ExactScenario {
  index: number;
  pool: PoolName;
  kinds: KindSpec[];
  pods: Pod[];
}

const CpuChoices = [100, 250, 500, 750, 1000, 1500, 2000, 3000, 4000, 6000, 8000];
const MemPerCpuGiB = [0.5, 1, 2, 4, 8];

/** Scenario `index` of `seed`: deterministic. */
export function exactScenario(seed: number, index: number): ExactScenario {
  const rnd = prng((Math.imul(seed, 1000003) + index * 7919 + 17) >>> 0);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)];
  const roll = rnd();
  const pool: PoolName = roll < 0.35 ? 'general' : roll < 0.6 ? 'small-spot' : roll < 0.8 ? 'gpu' : 'burstable';
  const nKinds = 1 + Math.floor(rnd() * 4);
  const total = Math.max(nKinds, 2 + Math.floor(rnd() * 39));
  // Split `total` pods into `nKinds` non-empty kinds.
  const cuts = new Set<number>();
  while (cuts.size < nKinds - 1) cuts.add(1 + Math.floor(rnd() * (total - 1)));
  const edges = [0, ...[...cuts].sort((a, b) => a - b), total];
  const kinds: KindSpec[] = [];
  for (let i = 0; i < nKinds; i++) {
    const count = edges[i + 1] - edges[i];
    const gpu = pool === 'gpu' && rnd() < 0.6;
    const cpuMilli = gpu
      ? pick([1000, 2000, 3000, 4000, 6000, 8000])
      : pool === 'small-spot' || pool === 'burstable'
        ? pick(CpuChoices.slice(0, 8))
        : pick(CpuChoices);
    const ratio = gpu ? pick([2, 4]) : pick(MemPerCpuGiB);
    const memoryMiB = Math.max(64, Math.round(((cpuMilli / 1000) * ratio * 1024 * pick([0.75, 1, 1.25])) / 64) * 64);
    const gpus = gpu ? (rnd() < 0.8 ? 1 : pick([2, 4])) : 0;
    let nodeSelector: Record<string, string> | undefined;
    if (rnd() < 0.3) {
      const options: Record<string, string>[] =
        pool === 'gpu'
          ? [
              { 'karpenter.k8s.aws/instance-gpu-name': pick(['t4', 'a10g', 'l4']) },
              { 'karpenter.k8s.aws/instance-family': pick(['g5', 'g6']) },
              { 'topology.kubernetes.io/zone': pick(['us-east-1a', 'us-east-1b', 'us-east-1c']) },
            ]
          : pool === 'small-spot'
            ? [
                { 'karpenter.sh/capacity-type': pick(['on-demand', 'spot']) },
                { 'kubernetes.io/arch': pick(['amd64', 'arm64']) },
                { 'topology.kubernetes.io/zone': pick(['us-east-1a', 'us-east-1b', 'us-east-1d']) },
              ]
            : pool === 'burstable'
              ? [{ 'kubernetes.io/arch': pick(['amd64', 'arm64']) }, { 'karpenter.k8s.aws/instance-category': pick(['t', 'm']) }]
              : [
                  { 'kubernetes.io/arch': pick(['amd64', 'arm64']) },
                  { 'karpenter.k8s.aws/instance-category': pick(['c', 'm', 'r']) },
                  { 'karpenter.k8s.aws/instance-generation': pick(['6', '7']) },
                ];
      nodeSelector = pick(options);
    }
    kinds.push({ count, cpuMilli, memoryMiB, gpus, ...(nodeSelector ? { nodeSelector } : {}) });
  }
  const pods: Pod[] = [];
  kinds.forEach((k, ki) => {
    for (let j = 0; j < k.count; j++) {
      const requests: Record<string, string> = { cpu: `${k.cpuMilli}m`, memory: `${k.memoryMiB}Mi` };
      if (k.gpus > 0) requests['nvidia.com/gpu'] = String(k.gpus);
      pods.push({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: `k${ki}-${j}`, namespace: 'default', labels: { app: `k${ki}` } },
        spec: {
          containers: [{ name: 'app', resources: { requests, ...(k.gpus > 0 ? { limits: { 'nvidia.com/gpu': String(k.gpus) } } : {}) } }],
          ...(k.nodeSelector ? { nodeSelector: k.nodeSelector } : {}),
        },
        status: { phase: 'Pending' },
      } as Pod);
    }
  });
  return { index, pool, kinds, pods };
}

/** `12×500m/1024Mi[arm64]` per kind. */
export function describeKinds(kinds: readonly KindSpec[]): string {
  return kinds
    .map(
      (k) =>
        `${k.count}×${k.cpuMilli}m/${k.memoryMiB}Mi${k.gpus ? `/${k.gpus}gpu` : ''}${k.nodeSelector ? `[${Object.values(k.nodeSelector).join(',')}]` : ''}`,
    )
    .join(' ');
}

export interface ExactScenarioRow {
  index: number;
  pool: PoolName;
  pods: number;
  kinds: string;
  status: ExactResult['status'];
  optimumPerHour: number;
  costPerHour: number;
  karpenterPerHour: number;
  /** cost / optimum − 1 (undefined unless the optimum is proved and both placed every placeable pod). */
  costGap?: number;
  karpenterGap?: number;
  /** Pods a packing left pending though some type holds them. */
  costPending: number;
  karpenterPending: number;
  solveSeconds: number;
  variables: number;
  /** Node types of each plan, for the worst cases. */
  costNodes: string[];
  karpenterNodes: string[];
  optimumNodes: string[];
}

export interface ExactSummary {
  seed: number;
  scenarios: number;
  timeLimitSeconds: number;
  /** Scenarios whose optimum was proved. */
  optimal: number;
  /** Scenarios stopped by the time limit (left out of the gaps). */
  timeLimited: number;
  /** Scenarios where a packing left placeable pods pending, or the solver failed (left out too). */
  excluded: number;
  costGapMedian: number;
  costGapP95: number;
  costGapMax: number;
  /** Scenarios where the default packing is above the optimum. */
  costAboveOptimum: number;
  karpenterGapMedian: number;
  karpenterGapP95: number;
  karpenterGapMax: number;
  karpenterAboveOptimum: number;
  /** Total cost over the compared scenarios, relative to the optimum. */
  costTotalRatio: number;
  karpenterTotalRatio: number;
  solveSecondsMedian: number;
  solveSecondsMax: number;
}

const claimsCost = (r: SchedulingResult) => r.newNodeClaims.reduce((s, c) => s + c.priceUsdPerHour, 0);
const claimTypes = (r: SchedulingResult) => r.newNodeClaims.map((c) => `${c.launchInstanceTypes[0]?.name}(${c.pods.length})`).sort();

/** Runs the scenarios (see the file comment). */
export async function benchExact(
  opts: { seed?: number; scenarios?: number; timeLimitSeconds?: number; log?: (line: string) => void } = {},
): Promise<{ summary: ExactSummary; rows: ExactScenarioRow[] }> {
  const seed = opts.seed ?? 1;
  const n = opts.scenarios ?? 500;
  const timeLimitSeconds = opts.timeLimitSeconds ?? 10;
  const catalog: InstanceType[] = loadCatalog({ region: 'us-east-1' });
  const cache = createSchedulingCache();
  const templates = new Map<PoolName, PoolTemplate>();
  const rows: ExactScenarioRow[] = [];
  for (let i = 0; i < n; i++) {
    const sc = exactScenario(seed, i);
    const pool = Pools[sc.pool];
    const input = { pods: sc.pods, nodePools: [pool], instanceTypes: () => catalog, daemonSets: ExactDaemonSets, cache };
    const cost = solve(input);
    const karpenter = solve({ ...input, settings: { packing: 'karpenter' } });
    let tpl = templates.get(sc.pool);
    if (!tpl) templates.set(sc.pool, (tpl = exactTemplate({ pods: [], nodePool: pool, instanceTypes: catalog, daemonSets: ExactDaemonSets })));
    const able = sc.pods.filter((p) => placeable(tpl, p)).length;
    const costPending = cost.unschedulable.length - (sc.pods.length - able);
    const karpenterPending = karpenter.unschedulable.length - (sc.pods.length - able);
    const bounds = [costPending === 0 ? claimsCost(cost) : Infinity, karpenterPending === 0 ? claimsCost(karpenter) : Infinity];
    const upperBound = Math.min(...bounds);
    const exact = await exactPacking(
      { pods: sc.pods, nodePool: pool, instanceTypes: catalog, daemonSets: ExactDaemonSets },
      { timeLimitSeconds, template: tpl, ...(Number.isFinite(upperBound) ? { upperBound: upperBound * (1 + 1e-9) } : {}) },
    );
    const gap = (c: number, pending: number) =>
      exact.status === 'optimal' && pending === 0 ? (exact.costPerHour > 0 ? c / exact.costPerHour - 1 : c > 0 ? Infinity : 0) : undefined;
    const row: ExactScenarioRow = {
      index: i,
      pool: sc.pool,
      pods: sc.pods.length,
      kinds: describeKinds(sc.kinds),
      status: exact.status,
      optimumPerHour: exact.costPerHour,
      costPerHour: claimsCost(cost),
      karpenterPerHour: claimsCost(karpenter),
      costGap: gap(claimsCost(cost), costPending),
      karpenterGap: gap(claimsCost(karpenter), karpenterPending),
      costPending,
      karpenterPending,
      solveSeconds: exact.seconds,
      variables: exact.variables,
      costNodes: claimTypes(cost),
      karpenterNodes: claimTypes(karpenter),
      optimumNodes: exact.nodes.map((nd) => `${nd.instanceType}(${nd.pods.length})`).sort(),
    };
    rows.push(row);
    if (opts.log && (i + 1) % 50 === 0) opts.log(`exact: ${i + 1}/${n} scenarios`);
  }
  return { summary: summarise(seed, timeLimitSeconds, rows), rows };
}

function quantile(xs: readonly number[], q: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
}

export function summarise(seed: number, timeLimitSeconds: number, rows: readonly ExactScenarioRow[]): ExactSummary {
  const compared = rows.filter((r) => r.costGap !== undefined && r.karpenterGap !== undefined);
  const cg = compared.map((r) => r.costGap!);
  const kg = compared.map((r) => r.karpenterGap!);
  const opt = compared.reduce((s, r) => s + r.optimumPerHour, 0);
  const secs = rows.map((r) => r.solveSeconds);
  const r4 = (v: number) => Number(v.toFixed(4));
  return {
    seed,
    scenarios: rows.length,
    timeLimitSeconds,
    optimal: rows.filter((r) => r.status === 'optimal').length,
    timeLimited: rows.filter((r) => r.status === 'time-limit').length,
    excluded:
      rows.filter((r) => r.status === 'optimal' && (r.costGap === undefined || r.karpenterGap === undefined)).length +
      rows.filter((r) => r.status === 'error' || r.status === 'infeasible').length,
    costGapMedian: r4(quantile(cg, 0.5)),
    costGapP95: r4(quantile(cg, 0.95)),
    costGapMax: r4(Math.max(...cg)),
    costAboveOptimum: cg.filter((g) => g > 1e-6).length,
    karpenterGapMedian: r4(quantile(kg, 0.5)),
    karpenterGapP95: r4(quantile(kg, 0.95)),
    karpenterGapMax: r4(Math.max(...kg)),
    karpenterAboveOptimum: kg.filter((g) => g > 1e-6).length,
    costTotalRatio: r4(compared.reduce((s, r) => s + r.costPerHour, 0) / opt),
    karpenterTotalRatio: r4(compared.reduce((s, r) => s + r.karpenterPerHour, 0) / opt),
    solveSecondsMedian: r4(quantile(secs, 0.5)),
    solveSecondsMax: r4(Math.max(...secs)),
  };
}
