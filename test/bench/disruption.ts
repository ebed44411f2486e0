/**
 * Disruption benchmark: one planning run (`planDisruption`) over a 200-node / 4 000-pod cluster
 * with real us-east-1 instance types. Reports wall time and the number of scheduling
 * simulations it ran. `benchDisruption()` is called by test/bench/main.ts and contributes
 * `{ "disruption": {...} }` to the JSON; run alone with `npx tsx test/bench/disruption.ts`.
 *
 * The cluster: 200 on-demand m5.2xlarge nodes over three zones, 20 pods each (ReplicaSet-owned,
 * 12 deployments), 150 nodes at ~62 % CPU and 50 at ~25 % so consolidation has real work; a
 * PDB with no disruptions allowed and a few do-not-disrupt pods so blocks are exercised.
 */
import { performance } from 'node:perf_hooks';
import type { Node, Pod, PodDisruptionBudget } from '../../shared/api/kube.ts';
import { NodePoolSchema } from '../../shared/api/nodepool.ts';
import { loadCatalog } from '../../shared/catalog/index.ts';
import { planDisruption, type DisruptionSnapshot } from '../../shared/disruption/index.ts';

const Zones = ['us-east-1a', 'us-east-1b', 'us-east-1c'];

/** What the benchmark reports (seconds, counts, USD/hour). */
export interface DisruptionBench {
  nodes: number;
  pods: number;
  /** Wall time of one planDisruption run, milliseconds (median of `runs`). */
  planMs: number;
  scenario: string;
  /** All runs, milliseconds. */
  runsMs: number[];
  /** Scheduling simulations in one run. */
  simulations: number;
  method?: string;
  decision?: string;
  candidatesInCommand: number;
  savingsUsdPerHour?: number;
  blocked: number;
}

/**
 * The synthetic cluster (deterministic).
 * @param scenario 'mixed': 150 nodes at ~62 % CPU, 50 at ~25 % (consolidation deletes nodes);
 *   'packed': every node at ~96 % CPU (only a merge into one big node pays);
 *   'stuck': packed and the NodePool allows only m5.2xlarge, so no command exists and every
 *   candidate is simulated (the worst case: Karpenter's single-node loop over all nodes).
 */
export function benchSnapshot(nodeCount = 200, podsPerNode = 20, scenario: 'mixed' | 'packed' | 'stuck' = 'mixed'): DisruptionSnapshot {
  const packed = scenario !== 'mixed';
  const pool = NodePoolSchema.parse({
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: 'default' },
    spec: {
      template: {
        spec: {
          nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
          requirements: [
            { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
            { key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: ['c', 'm', 'r'] },
            { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] },
            ...(scenario === 'stuck' ? [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['m5.2xlarge'] }] : []),
          ],
        },
      },
      disruption: { consolidationPolicy: 'WhenEmptyOrUnderutilized', consolidateAfter: '5m', budgets: [{ nodes: '20%' }] },
    },
  });
  const types = loadCatalog({ region: 'us-east-1' });
  const nodes: Node[] = [];
  const pods: Pod[] = [];
  for (let i = 0; i < nodeCount; i++) {
    const name = `node-${String(i).padStart(3, '0')}`;
    const zone = Zones[i % Zones.length];
    nodes.push({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {
        name,
        creationTimestamp: '2026-02-20T10:00:00Z',
        labels: {
          'karpenter.sh/nodepool': 'default',
          'karpenter.sh/initialized': 'true',
          'karpenter.sh/registered': 'true',
          'karpenter.sh/capacity-type': 'on-demand',
          'node.kubernetes.io/instance-type': 'm5.2xlarge',
          'topology.kubernetes.io/zone': zone,
          'kubernetes.io/arch': 'amd64',
          'kubernetes.io/os': 'linux',
          'kubernetes.io/hostname': name,
        },
      },
      spec: { providerID: `aws:///${zone}/i-0${String(i).padStart(16, '0')}` },
      status: {
        capacity: { cpu: '8', memory: '32Gi', pods: '58' },
        allocatable: { cpu: '7910m', memory: '29317Mi', pods: '58' },
        conditions: [{ type: 'Ready', status: 'True' }],
      },
    });
    const light = !packed && i >= nodeCount * 0.75;
    for (let j = 0; j < podsPerNode; j++) {
      const app = i % 50 === 3 && j === 1 ? 'critical' : `app-${(i * podsPerNode + j) % 12}`;
      pods.push({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          name: `${app}-${i}-${j}`,
          namespace: 'default',
          creationTimestamp: '2026-02-21T10:00:00Z',
          labels: { app },
          ...(i % 40 === 7 && j === 0 ? { annotations: { 'karpenter.sh/do-not-disrupt': 'true' } } : {}),
          ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: `${app}-rs`, controller: true }],
        },
        spec: {
          nodeName: name,
          containers: [{ name: 'main', resources: { requests: { cpu: light ? '100m' : packed ? '380m' : '250m', memory: light ? '256Mi' : '1Gi' } } }],
        },
        status: { phase: 'Running', startTime: '2026-02-21T10:00:00Z' },
      });
    }
  }
  const pdbs: PodDisruptionBudget[] = [
    {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: 'critical', namespace: 'default' },
      spec: { maxUnavailable: 0, selector: { matchLabels: { app: 'critical' } } },
      status: { disruptionsAllowed: 0 },
    },
  ];
  return { nodePools: [pool], nodes, pods, pdbs, instanceTypes: () => types, catalog: types };
}

function measure(scenario: 'mixed' | 'packed' | 'stuck', runs: number, nodes: number, podsPerNode: number): DisruptionBench {
  const snapshot = benchSnapshot(nodes, podsPerNode, scenario);
  const now = new Date('2026-03-02T10:00:00Z');
  let plan = planDisruption(snapshot, now); // warm-up (JIT, caches)
  const runsMs: number[] = [];
  for (let r = 0; r < runs; r++) {
    const t0 = performance.now();
    plan = planDisruption(snapshot, now);
    runsMs.push(Math.round((performance.now() - t0) * 10) / 10);
  }
  const sorted = [...runsMs].sort((a, b) => a - b);
  return {
    scenario,
    nodes: snapshot.nodes.length,
    pods: snapshot.pods.length,
    planMs: sorted[Math.floor(sorted.length / 2)],
    runsMs,
    simulations: plan.simulations,
    method: plan.command?.method,
    decision: plan.command?.decision,
    candidatesInCommand: plan.command?.candidates.length ?? 0,
    ...(plan.command?.savingsUsdPerHour !== undefined ? { savingsUsdPerHour: plan.command.savingsUsdPerHour } : {}),
    blocked: plan.blocked.length,
  };
}

/**
 * Runs each scenario `runs` times after one warm-up; `planMs` is the median. The headline
 * figure is `mixed` (a typical run that finds a command); `stuck` is the worst case.
 */
export function benchDisruption(opts: { runs?: number; nodes?: number; podsPerNode?: number; scenarios?: ('mixed' | 'packed' | 'stuck')[] } = {}): {
  disruption: DisruptionBench & { scenarios: DisruptionBench[] };
} {
  const scenarios = (opts.scenarios ?? ['mixed', 'packed', 'stuck']).map((s) => measure(s, opts.runs ?? 3, opts.nodes ?? 200, opts.podsPerNode ?? 20));
  return { disruption: { ...scenarios[0], scenarios } };
}

/**
 * Entry point for test/bench/main.ts: prints a table and returns the `disruption` JSON value
 * (the `mixed` headline fields plus every scenario). `quick`: one run per scenario.
 */
export function runDisruptionBench(opts: { quick?: boolean } = {}): DisruptionBench & { scenarios: DisruptionBench[] } {
  const { disruption } = benchDisruption({ runs: opts.quick ? 1 : 3 });
  const cols = ['scenario', 'nodes', 'pods', 'planMs', 'simulations', 'method', 'decision', 'candidatesInCommand', 'savingsUsdPerHour', 'blocked'] as const;
  const rows = disruption.scenarios.map((r) => cols.map((c) => String(r[c] ?? '')));
  const widths = cols.map((c, i) => Math.max(c.length, ...rows.map((r) => r[i].length)));
  process.stdout.write(`disruption\n${[[...cols], ...rows].map((r) => r.map((c, i) => c.padStart(widths[i])).join('  ')).join('\n')}\n`);
  return disruption;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.stdout.write(`${JSON.stringify(benchDisruption(), null, 2)}\n`);
}
