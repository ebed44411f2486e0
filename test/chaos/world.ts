/**
 * A random cluster and workload for one chaos run, from the run's seed: 1–3 NodePools (spot
 * and/or on-demand, amd64 and/or arm64, c/m/r families, optional taint, budgets, consolidation
 * policy, expireAfter, terminationGracePeriod set or unset), Deployments and StatefulSets with
 * PDBs pinned to a pool, and a timeline of scale changes and one drift (a NodePool template
 * change). Every pod it creates fits at least one instance type its pool allows, so every pod
 * can be scheduled.
 */
import { ScenarioSchema, type Scenario } from '../../infra/local/scenario.ts';
import { Rng } from './rng.ts';

export const ChaosRegion = 'us-east-1';
export const ChaosCluster = 'chaos';

export interface Workload {
  kind: 'Deployment' | 'StatefulSet';
  name: string;
  pool: string;
  object: Record<string, any>;
}

export interface PoolSpec {
  name: string;
  capacityTypes: string[];
  archs: string[];
  tainted: boolean;
  terminationGracePeriodSeconds?: number;
  object: Record<string, any>;
}

/** A change to the workload at a virtual offset (ms from the start). */
export type WorldAction = { atMs: number; kind: 'scale'; workload: string; replicas: number } | { atMs: number; kind: 'drift'; pool: string };

export interface World {
  scenario: Scenario;
  pools: PoolSpec[];
  workloads: Workload[];
  actions: WorldAction[];
}

const Cpus = ['250m', '500m', '1', '1500m'];
const Mems = ['256Mi', '512Mi', '1Gi', '2Gi'];

/** Builds the world of `seed`; actions fall within the first `activeMs` of the run. */
export function buildWorld(seed: number, activeMs: number): World {
  const rng = new Rng(seed ^ 0x5eed);
  const pools: PoolSpec[] = [];
  const poolCount = rng.int(1, 3);
  for (let i = 0; i < poolCount; i++) {
    const name = `pool-${i}`;
    const capacityTypes = rng.subset(['spot', 'on-demand']);
    const archs = rng.subset(['amd64', 'arm64']);
    const tainted = rng.chance(0.3);
    const tgp = rng.chance(0.5) ? rng.pick([120, 180, 300]) : undefined;
    const expire = rng.chance(0.25) ? `${rng.int(6, 12)}m` : undefined;
    const budgets = rng.pick([[{ nodes: '1' }], [{ nodes: '50%' }], [{ nodes: '20%' }], undefined]);
    const object = {
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodePool',
      metadata: { name },
      spec: {
        template: {
          metadata: { labels: { 'chaos/pool': name } },
          spec: {
            requirements: [
              { key: 'karpenter.sh/capacity-type', operator: 'In', values: capacityTypes },
              { key: 'kubernetes.io/arch', operator: 'In', values: archs },
              { key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: rng.subset(['c', 'm', 'r']) },
              { key: 'karpenter.k8s.aws/instance-generation', operator: 'Gt', values: ['5'] },
              { key: 'karpenter.k8s.aws/instance-cpu', operator: 'Lt', values: ['33'] },
            ],
            nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
            ...(tainted ? { taints: [{ key: 'chaos/dedicated', value: name, effect: 'NoSchedule' }] } : {}),
            ...(expire ? { expireAfter: expire } : {}),
            ...(tgp !== undefined ? { terminationGracePeriod: `${tgp}s` } : {}),
          },
        },
        disruption: {
          consolidationPolicy: rng.pick(['WhenEmpty', 'WhenEmptyOrUnderutilized']),
          consolidateAfter: rng.pick(['30s', '1m', '2m']),
          ...(budgets ? { budgets } : {}),
        },
        limits: { cpu: '200' },
      },
    };
    pools.push({ name, capacityTypes, archs, tainted, terminationGracePeriodSeconds: tgp, object });
  }

  const workloads: Workload[] = [];
  const pdbs: Record<string, any>[] = [];
  const wlCount = rng.int(2, 4);
  for (let i = 0; i < wlCount; i++) {
    const pool = rng.pick(pools);
    const kind = rng.chance(0.3) ? 'StatefulSet' : 'Deployment';
    const name = `${kind === 'StatefulSet' ? 'db' : 'app'}-${i}`;
    const spec = {
      nodeSelector: { 'karpenter.sh/nodepool': pool.name },
      ...(pool.tainted ? { tolerations: [{ key: 'chaos/dedicated', operator: 'Equal', value: pool.name, effect: 'NoSchedule' }] } : {}),
      terminationGracePeriodSeconds: rng.pick([5, 30]),
      containers: [{ name: 'main', image: 'public.ecr.aws/chaos/app:1', resources: { requests: { cpu: rng.pick(Cpus), memory: rng.pick(Mems) } } }],
    };
    const object = {
      apiVersion: 'apps/v1',
      kind,
      metadata: { name, namespace: 'default' },
      spec: {
        replicas: 0,
        ...(kind === 'StatefulSet' ? { serviceName: name } : {}),
        selector: { matchLabels: { app: name } },
        template: { metadata: { labels: { app: name } }, spec },
      },
    };
    workloads.push({ kind, name, pool: pool.name, object });
    if (rng.chance(0.5)) {
      pdbs.push({
        apiVersion: 'policy/v1',
        kind: 'PodDisruptionBudget',
        metadata: { name, namespace: 'default' },
        spec: { maxUnavailable: 1, selector: { matchLabels: { app: name } } },
      });
    }
  }

  const actions: WorldAction[] = [];
  for (const w of workloads) actions.push({ atMs: rng.int(5, 60) * 1000, kind: 'scale', workload: w.name, replicas: rng.int(1, 6) });
  const changes = rng.int(3, 8);
  for (let i = 0; i < changes; i++) {
    actions.push({ atMs: rng.int(60, Math.floor(activeMs / 1000)) * 1000, kind: 'scale', workload: rng.pick(workloads).name, replicas: rng.int(0, 7) });
  }
  if (rng.chance(0.6)) actions.push({ atMs: rng.int(180, Math.floor(activeMs / 1000)) * 1000, kind: 'drift', pool: rng.pick(pools).name });
  actions.sort((a, b) => a.atMs - b.atMs);

  const scenario = ScenarioSchema.parse({
    name: `chaos-${seed}`,
    about: `chaos run, seed ${seed}`,
    region: ChaosRegion,
    clusterName: ChaosCluster,
    start: '2026-03-02T10:00:00Z',
    timeout: 7200,
    ec2: { bootSeconds: rng.int(2, 20), shutdownSeconds: rng.int(5, 30) },
    kubelet: { registerSeconds: rng.int(10, 30), readySeconds: rng.int(5, 15), podStartupSeconds: 2 },
    cluster: {
      nodes: [{ instanceType: 'm5.large', zone: 'us-east-1a', labels: { 'eks.amazonaws.com/nodegroup': 'system' } }],
      objects: [
        ...pools.map((p) => p.object),
        {
          apiVersion: 'karpenter.k8s.aws/v1',
          kind: 'EC2NodeClass',
          metadata: { name: 'default' },
          spec: {
            role: `KarpenterNodeRole-${ChaosCluster}`,
            amiSelectorTerms: [{ alias: 'al2023@latest' }],
            subnetSelectorTerms: [{ tags: { 'karpenter.sh/discovery': ChaosCluster } }],
            securityGroupSelectorTerms: [{ tags: { 'karpenter.sh/discovery': ChaosCluster } }],
          },
        },
        ...workloads.map((w) => w.object),
        ...pdbs,
      ],
    },
    timeline: [{ mark: 'start' }],
  });
  return { scenario, pools, workloads, actions };
}
