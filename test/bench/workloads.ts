/**
 * Benchmark workloads.
 *
 * `karpenter-mix`: the shape of Karpenter's scheduling benchmark (kubernetes-sigs/karpenter
 * pkg/controllers/provisioning/scheduling/scheduling_benchmark_test.go): 400 made-up instance
 * types, one NodePool, pods split evenly into generic / zonal topology spread / hostname topology
 * spread / zonal self-affinity / hostname anti-affinity, cpu {100, 250, 500, 1000, 1500}m,
 * memory {100 … 4096}Mi. Written for nodefleet; numbers are ours.
 *
 * `real-catalog`: generic pods of mixed sizes against the real catalog of one region.
 */
import type { Pod } from '../../shared/api/kube.ts';
import { NodePoolSchema, type NodePool } from '../../shared/api/nodepool.ts';
import { instanceTypeFromCase } from '../../shared/catalog/index.ts';
import type { InstanceType } from '../../shared/catalog/types.ts';

/** A small deterministic PRNG (mulberry32), so every run schedules the same pods. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const Zones = ['us-east-1a', 'us-east-1b', 'us-east-1c'];

/** 400 made-up instance types: 10 sizes × 4 memory ratios × 2 architectures × 5 families. */
export function mixInstanceTypes(): InstanceType[] {
  const types: InstanceType[] = [];
  const cpus = [1, 2, 4, 8, 16, 32, 48, 64, 96, 128];
  const ratios = [1, 2, 4, 8];
  const families = ['fa', 'fb', 'fc', 'fd', 'fe'];
  families.forEach((family, fi) => {
    for (const arch of ['amd64', 'arm64'] as const) {
      for (const cpu of cpus) {
        for (const ratio of ratios) {
          const memoryGiB = cpu * ratio;
          // Prices: linear in cpu and memory, a few percent apart per family; arm64 cheaper.
          const od = (cpu * 0.034 + memoryGiB * 0.0045) * (1 + fi * 0.03) * (arch === 'arm64' ? 0.85 : 1);
          types.push(
            instanceTypeFromCase({
              name: `${family}${arch === 'arm64' ? 'g' : ''}-${cpu}x${ratio}`,
              cpu,
              memoryMiB: memoryGiB * 1024,
              pods: Math.min(737, 8 + cpu * 15),
              arch,
              zones: Zones,
              capacityTypes: ['on-demand', 'spot'],
              price: { 'on-demand': Number(od.toFixed(4)), spot: Number((od * 0.35).toFixed(4)) },
              labels: { 'karpenter.k8s.aws/instance-family': family, 'karpenter.k8s.aws/instance-cpu': String(cpu) },
            }),
          );
        }
      }
    }
  });
  return types;
}

/** The one NodePool of karpenter-mix: spot or on-demand, any arch. */
export function mixNodePool(): NodePool {
  return NodePoolSchema.parse({
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: 'default' },
    spec: {
      template: {
        spec: {
          nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
          requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot', 'on-demand'] }],
        },
      },
    },
  });
}

const CpuChoices = ['100m', '250m', '500m', '1000m', '1500m'];
const MemChoices = ['100Mi', '256Mi', '512Mi', '1024Mi', '2048Mi', '4096Mi'];
/** Label values per kind: pods sharing a value share a constraint (as Karpenter's random affinity labels). */
const GroupsPerKind = 10;

function pod(name: string, labels: Record<string, string>, cpu: string, memory: string, extra: Partial<Pod['spec']> = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', labels },
    spec: { containers: [{ name: 'app', resources: { requests: { cpu, memory } } }], ...extra },
    status: { phase: 'Pending' },
  };
}

/** `n` karpenter-mix pods, one fifth of each kind. */
export function mixPods(n: number, seed = 42): Pod[] {
  const rnd = prng(seed);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)];
  const pods: Pod[] = [];
  for (let i = 0; i < n; i++) {
    const kind = i % 5;
    const group = `g${Math.floor(i / 5) % GroupsPerKind}`;
    const cpu = pick(CpuChoices);
    const mem = pick(MemChoices);
    switch (kind) {
      case 0:
        pods.push(pod(`generic-${i}`, { kind: 'generic' }, cpu, mem));
        break;
      case 1: {
        const labels = { kind: 'zone-spread', group };
        pods.push(
          pod(`zone-spread-${i}`, labels, cpu, mem, {
            topologySpreadConstraints: [
              { maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: labels } },
            ],
          }),
        );
        break;
      }
      case 2: {
        const labels = { kind: 'host-spread', group };
        pods.push(
          pod(`host-spread-${i}`, labels, cpu, mem, {
            topologySpreadConstraints: [
              { maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: labels } },
            ],
          }),
        );
        break;
      }
      case 3: {
        const labels = { kind: 'zone-affinity', group };
        pods.push(
          pod(`zone-affinity-${i}`, labels, cpu, mem, {
            affinity: {
              podAffinity: {
                requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: labels }, topologyKey: 'topology.kubernetes.io/zone' }],
              },
            },
          }),
        );
        break;
      }
      default: {
        const labels = { kind: 'host-anti', group };
        pods.push(
          pod(`host-anti-${i}`, labels, cpu, mem, {
            affinity: {
              podAntiAffinity: {
                requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: labels }, topologyKey: 'kubernetes.io/hostname' }],
              },
            },
          }),
        );
      }
    }
  }
  return pods;
}

/** Generic pods of mixed web / worker / memory-heavy sizes for the real-catalog workload. */
export function genericPods(n: number, seed = 7): Pod[] {
  const rnd = prng(seed);
  const shapes: [string, string][] = [
    ['250m', '512Mi'],
    ['500m', '1Gi'],
    ['1', '2Gi'],
    ['2', '4Gi'],
    ['1', '8Gi'],
    ['4', '8Gi'],
    ['500m', '4Gi'],
  ];
  return Array.from({ length: n }, (_, i) => {
    const [cpu, mem] = shapes[Math.floor(rnd() * shapes.length)];
    return pod(`app-${i}`, { app: `app-${i % 20}` }, cpu, mem);
  });
}

/** A typical general-purpose NodePool: on-demand, c/m/r, generation > 4, amd64 and arm64. */
export function realNodePool(): NodePool {
  return NodePoolSchema.parse({
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: 'general' },
    spec: {
      template: {
        spec: {
          nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
          requirements: [
            { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
            { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64', 'arm64'] },
            { key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: ['c', 'm', 'r'] },
            { key: 'karpenter.k8s.aws/instance-generation', operator: 'Gt', values: ['4'] },
          ],
        },
      },
    },
  });
}
