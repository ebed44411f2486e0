/**
 * The bench's exact packing (test/bench/exact.ts): the integer program finds the known optimum of
 * hand-made cases, each of which a missing constraint (cpu, memory, pods, GPUs, DaemonSet
 * overhead, requirements, offering price) would get wrong, and equals a brute force over every
 * partition of the pods on random tiny inputs; no nodefleet packing is ever cheaper.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Pod } from '../../../shared/api/kube.ts';
import type { Resources } from '../../../shared/api/quantity.ts';
import { PodInfo } from '../../../shared/scheduling/pod.ts';
import { fitsRoom } from '../../../shared/scheduling/resources.ts';
import { solve, type DaemonSetTemplate } from '../../../shared/scheduling/index.ts';
import { typeMatches } from '../../../shared/scheduling/template.ts';
import { exactPacking, exactTemplate, type ExactInput } from '../../bench/exact.ts';
import { itype, nodePool, pendingPod } from './builders.ts';

// Allocatable as written; the DaemonSet takes 500m and one pod slot from every node, so the room
// for pods is small 2000m / 4Gi / 3 pods, big 8000m / 16Gi / 29, gpu 4000m / 16Gi / 29 / 1 GPU.
const types = [
  itype({
    name: 'small',
    cpu: 2,
    memoryMiB: 4096,
    offerings: [
      { zone: 'us-east-1a', capacityType: 'on-demand', price: 0.1 },
      { zone: 'us-east-1b', capacityType: 'on-demand', price: 0.11 },
    ],
    allocatable: { cpu: '2500m', memory: '4Gi', pods: 4 },
  }),
  itype({ name: 'small-arm', arch: 'arm64', cpu: 2, memoryMiB: 4096, price: { 'on-demand': 0.12 }, allocatable: { cpu: '2500m', memory: '4Gi', pods: 4 } }),
  itype({ name: 'big', cpu: 8, memoryMiB: 16384, price: { 'on-demand': 0.3 }, allocatable: { cpu: '8500m', memory: '16Gi', pods: 30 } }),
  itype({
    name: 'gpu',
    cpu: 4,
    memoryMiB: 16384,
    price: { 'on-demand': 0.5 },
    resources: { 'nvidia.com/gpu': 1 },
    allocatable: { cpu: '4500m', memory: '16Gi', pods: 30, 'nvidia.com/gpu': 1 },
    labels: { 'karpenter.k8s.aws/instance-gpu-count': '1' },
  }),
];
const daemonSets: DaemonSetTemplate[] = [
  {
    metadata: { name: 'ds', namespace: 'kube-system' },
    spec: { tolerations: [{ operator: 'Exists' }], containers: [{ name: 'd', resources: { requests: { cpu: '500m' } } }] },
  },
];
const pool = nodePool('default', { requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] }] });

function pod(name: string, cpu: string, memory: string, extra: { gpus?: number; nodeSelector?: Record<string, string> } = {}): Pod {
  const p = pendingPod(name, { cpu, memory, ...(extra.nodeSelector ? { spec: { nodeSelector: extra.nodeSelector } } : {}) });
  if (extra.gpus) {
    const r = p.spec.containers[0].resources!;
    r.requests = { ...r.requests, 'nvidia.com/gpu': String(extra.gpus) };
    r.limits = { 'nvidia.com/gpu': String(extra.gpus) };
  }
  return p;
}

const exact = (pods: Pod[]) => exactPacking({ pods, nodePool: pool, instanceTypes: types, daemonSets });
const nodesOf = (r: Awaited<ReturnType<typeof exact>>) => r.nodes.map((n) => `${n.instanceType}@${n.zone.slice(-1)}`).sort();

describe('exact packing (bench reference)', () => {
  it.each([
    ['cpu: 1000m + 1200m exceed a small node (2000m)', [pod('a', '1000m', '1Gi'), pod('b', '1200m', '1Gi')], 0.2, ['small@a', 'small@a']],
    ['memory: 3Gi + 2Gi exceed a small node (4Gi)', [pod('a', '500m', '3Gi'), pod('b', '400m', '2Gi')], 0.2, ['small@a', 'small@a']],
    [
      'pods: four pods exceed a small node (3 after the DaemonSet)',
      [pod('a', '100m', '100Mi'), pod('b', '150m', '100Mi'), pod('c', '200m', '100Mi'), pod('d', '250m', '100Mi')],
      0.2,
      ['small@a', 'small@a'],
    ],
    ['GPUs: two 1-GPU pods need two 1-GPU nodes', [pod('a', '1000m', '2Gi', { gpus: 1 }), pod('b', '1500m', '2Gi', { gpus: 1 })], 1.0, ['gpu@a', 'gpu@a']],
    ["DaemonSet overhead: 2200m fits a small node's allocatable (2500m) but not its room", [pod('a', '2200m', '1Gi')], 0.3, ['big@a']],
    [
      'requirements: an arm64 pod goes on the arm64 type',
      [pod('a', '500m', '1Gi', { nodeSelector: { 'kubernetes.io/arch': 'arm64' } })],
      0.12,
      ['small-arm@a'],
    ],
    [
      "offerings: a pod pinned to us-east-1b pays that zone's price",
      [pod('a', '500m', '1Gi', { nodeSelector: { 'topology.kubernetes.io/zone': 'us-east-1b' } })],
      0.11,
      ['small@b'],
    ],
    [
      'one big node beats four small ones',
      [pod('a', '1500m', '3Gi'), pod('b', '1500m', '3Gi'), pod('c', '1500m', '3Gi'), pod('d', '1500m', '3Gi')],
      0.3,
      ['big@a'],
    ],
  ] as const)('%s', async (_name, pods, cost, nodes) => {
    const r = await exact([...pods]);
    expect(r.status).toBe('optimal');
    expect(r.costPerHour).toBeCloseTo(cost, 9);
    expect(nodesOf(r)).toEqual(nodes);
  });

  it('leaves out pods no type can hold and refuses pods it cannot model exactly', async () => {
    const r = await exact([pod('huge', '64', '1Gi'), pod('ok', '500m', '1Gi')]);
    expect(r.unplaceable).toEqual(['default/huge']);
    expect(r.costPerHour).toBeCloseTo(0.1, 9);
    const spread = pendingPod('s', {
      spec: {
        topologySpreadConstraints: [
          { maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { a: 'b' } } },
        ],
      },
    });
    await expect(exact([spread])).rejects.toThrow(/not a per-type predicate/);
  });

  it('equals a brute force over every partition of the pods, and no nodefleet packing is cheaper', async () => {
    const menu = [
      pod('m0', '100m', '256Mi'),
      pod('m1', '700m', '1Gi'),
      pod('m2', '1200m', '2Gi'),
      pod('m3', '500m', '3Gi'),
      pod('m4', '3000m', '2Gi'),
      pod('m5', '1000m', '6Gi'),
      pod('m6', '1000m', '2Gi', { gpus: 1 }),
      pod('m7', '400m', '512Mi', { nodeSelector: { 'kubernetes.io/arch': 'arm64' } }),
      pod('m8', '400m', '512Mi', { nodeSelector: { 'topology.kubernetes.io/zone': 'us-east-1b' } }),
    ];
    const ex: ExactInput = { pods: [], nodePool: pool, instanceTypes: types, daemonSets };
    const tpl = exactTemplate(ex);
    await fc.assert(
      fc.asyncProperty(fc.array(fc.nat(menu.length - 1), { minLength: 1, maxLength: 7 }), async (picks) => {
        const pods = picks.map((m, i) => ({ ...menu[m], metadata: { ...menu[m].metadata, name: `p${i}` } }));
        const r = await exactPacking({ ...ex, pods }, { template: tpl });
        expect(r.status).toBe('optimal');
        expect(r.costPerHour).toBeCloseTo(bruteForce(pods, tpl), 9);
        for (const packing of ['cost', 'karpenter'] as const) {
          const s = solve({ pods, nodePools: [pool], instanceTypes: () => types, daemonSets, settings: { packing } });
          expect(s.unschedulable).toEqual([]);
          expect(s.newNodeClaims.reduce((sum, c) => sum + c.priceUsdPerHour, 0)).toBeGreaterThanOrEqual(r.costPerHour - 1e-9);
        }
      }),
      { numRuns: 60, seed: 27 },
    );
  });
});

/** The cheapest packing by trying every partition of the pods into nodes (each block on its cheapest type and offering). */
function bruteForce(pods: readonly Pod[], tpl: ReturnType<typeof exactTemplate>): number {
  const infos = pods.map((p) => new PodInfo(p));
  const blockCost = (block: readonly number[]): number => {
    const sum: Resources = {};
    for (const i of block) for (const [k, v] of Object.entries(infos[i].requests)) sum[k] = (sum[k] ?? 0) + v;
    let best = Infinity;
    for (const t of tpl.types) {
      if (!fitsRoom(sum, t.room)) continue;
      for (const o of t.offerings) {
        if (block.every((i) => typeMatches(t.type, tpl.requirements.intersect(infos[i].requirements), tpl.typeKeys, [o])))
          best = Math.min(best, o.priceUsdPerHour);
      }
    }
    return best;
  };
  let best = Infinity;
  const blocks: number[][] = [];
  const walk = (i: number, cost: number) => {
    if (cost >= best) return;
    if (i === pods.length) {
      best = cost;
      return;
    }
    for (const b of blocks) {
      const before = blockCost(b);
      b.push(i);
      walk(i + 1, cost - before + blockCost(b));
      b.pop();
    }
    blocks.push([i]);
    walk(i + 1, cost + blockCost([i]));
    blocks.pop();
  };
  walk(0, 0);
  return best;
}
