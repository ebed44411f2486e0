/**
 * fast-check arbitraries for parity scenarios: pods with requests, init and sidecar containers,
 * nodeSelector, required and preferred node affinity, pod (anti-)affinity, topology spread (every
 * field: maxSkew, topologyKey, whenUnsatisfiable, labelSelector, minDomains, nodeAffinityPolicy,
 * nodeTaintsPolicy, matchLabelKeys), taints and tolerations, host ports; DaemonSets; NodePools with
 * requirements, limits, weights, taints and minValues; existing nodes with their pods; made-up and
 * real-catalog instance types.
 */
import fc from 'fast-check';
import type { Node, Pod, Taint, Toleration } from '../../shared/api/kube.ts';
import * as L from '../../shared/api/labels.ts';
import { MiB } from '../../shared/api/quantity.ts';
import { loadCatalog, type CaseInstanceType } from '../../shared/catalog/index.ts';
import type { InstanceType } from '../../shared/catalog/types.ts';
import type { ParityScenario } from './scenario.ts';

export const Zones = ['us-east-1a', 'us-east-1b', 'us-east-1c'];
const Families = ['fa', 'fb', 'fc'];
const Teams = ['red', 'blue'];

/** `arb` with probability `percent` %, else undefined (shrinks to undefined). */
function maybe<T>(arb: fc.Arbitrary<T>, percent: number): fc.Arbitrary<T | undefined> {
  return fc.oneof({ weight: 100 - percent, arbitrary: fc.constant(undefined) }, { weight: percent, arbitrary: arb });
}

/** A made-up type; `i` makes the name unique and the price distinct. */
export const madeUpType = (i: number) =>
  fc
    .record({
      cpu: fc.constantFrom(1, 2, 4, 8, 16, 32),
      ratio: fc.constantFrom(1, 2, 4, 8),
      arch: fc.constantFrom<'amd64' | 'arm64'>('amd64', 'amd64', 'arm64'),
      family: fc.constantFrom(...Families),
      pods: fc.constantFrom(8, 29, 58, 110),
      offerings: fc.uniqueArray(fc.record({ zone: fc.constantFrom(...Zones), capacityType: fc.constantFrom('spot', 'on-demand') }), {
        minLength: 1,
        maxLength: 6,
        selector: (o) => `${o.zone}/${o.capacityType}`,
      }),
      spotDiscount: fc.constantFrom(0.3, 0.4, 0.6),
      unavailable: fc.boolean(),
    })
    .map((r): CaseInstanceType => {
      const memoryMiB = r.cpu * r.ratio * 1024;
      const od = r.cpu * 0.04 + (memoryMiB / 1024) * 0.005;
      const price = (ct: string) =>
        Number(((ct === 'spot' ? od * r.spotDiscount : od) * (1 + Families.indexOf(r.family) * 0.05) * (r.arch === 'arm64' ? 0.85 : 1) + i * 1e-5).toFixed(6));
      return {
        name: `${r.family}${r.arch === 'arm64' ? 'g' : ''}-${r.cpu}x${r.ratio}-${i}`,
        cpu: r.cpu,
        memoryMiB,
        pods: r.pods,
        arch: r.arch,
        os: 'linux',
        offerings: r.offerings.map((o, j) => ({ ...o, price: price(o.capacityType), available: !(r.unavailable && j === 0 && r.offerings.length > 1) })),
        labels: { [L.LabelInstanceFamily]: r.family },
        allocatable: { cpu: `${r.cpu * 1000 - 80 - r.cpu * 10}m`, memory: `${memoryMiB - 350 - r.cpu * 20}Mi`, pods: r.pods },
      };
    });

let catalog: InstanceType[] | undefined;
/** A catalog type of us-east-1 as a case type with its real allocatable, labels and offerings. */
function catalogType(index: number): CaseInstanceType {
  catalog ??= loadCatalog({ region: 'us-east-1' }).filter((t) => !t.exotic && (t.labels[L.LabelOS] ?? 'linux') === 'linux' && t.capacity.cpu <= 32000);
  const t = catalog[index % catalog.length];
  const labels: Record<string, string> = {};
  for (const [k, v] of Object.entries(t.labels)) if (k !== L.LabelInstanceType && k !== L.LabelArch && k !== L.LabelOS) labels[k] = v;
  return {
    name: t.name,
    cpu: t.capacity.cpu / 1000,
    memoryMiB: t.capacity.memory / MiB,
    pods: t.capacity.pods,
    arch: t.labels[L.LabelArch] as 'amd64' | 'arm64',
    os: 'linux',
    offerings: t.offerings
      .filter((o) => Zones.includes(o.zone) && o.capacityType !== 'reserved')
      .map((o) => ({ zone: o.zone, capacityType: o.capacityType, price: o.priceUsdPerHour, available: o.available })),
    labels,
    allocatable: { cpu: `${t.allocatable.cpu}m`, memory: `${Math.floor(t.allocatable.memory / MiB)}Mi`, pods: t.allocatable.pods },
  };
}

const instanceTypes = fc
  .oneof(
    { weight: 3, arbitrary: fc.integer({ min: 2, max: 8 }).chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => madeUpType(i)))) },
    {
      weight: 1,
      arbitrary: fc.uniqueArray(fc.nat({ max: 5000 }), { minLength: 3, maxLength: 12 }).map((ix) => {
        const seen = new Set<string>();
        return ix.map(catalogType).filter((t) => t.offerings!.length > 0 && !seen.has(t.name) && seen.add(t.name));
      }),
    },
  )
  .filter((ts) => ts.length > 0);

interface PoolShape {
  name: string;
  weight?: number;
  taint?: Taint;
  team?: string;
}

const nodePool = (i: number) =>
  fc
    .record({
      weight: maybe(fc.constantFrom(10, 50), 30),
      capacityTypes: maybe(fc.subarray(['spot', 'on-demand'], { minLength: 1 }), 20),
      zones: maybe(fc.subarray(Zones, { minLength: 1 }), 20),
      arch: maybe(fc.constantFrom(['amd64'], ['arm64'], ['amd64', 'arm64']), 15),
      family: maybe(
        fc.record({
          op: fc.constantFrom('In', 'NotIn'),
          values: fc.subarray(Families, { minLength: 1, maxLength: 2 }),
          minValues: maybe(fc.constantFrom(1, 2), 30),
        }),
        20,
      ),
      cpuGt: maybe(fc.constantFrom('1', '2', '3'), 10),
      cpuLt: maybe(fc.constantFrom('9', '17', '33'), 10),
      typeMinValues: maybe(fc.constantFrom(2, 3), 10),
      limitCpu: maybe(fc.constantFrom('4', '8', '16', '64'), 20),
      taint: fc.boolean().map((b) => (b && i > 0 ? { key: 'dedicated', value: `np-${i}`, effect: 'NoSchedule' as const } : undefined)),
      team: maybe(fc.constantFrom(...Teams), 30),
    })
    .map((r) => {
      const reqs: Record<string, unknown>[] = [];
      if (r.capacityTypes) reqs.push({ key: L.LabelCapacityType, operator: 'In', values: r.capacityTypes });
      if (r.zones) reqs.push({ key: L.LabelTopologyZone, operator: 'In', values: r.zones });
      if (r.arch) reqs.push({ key: L.LabelArch, operator: 'In', values: r.arch });
      if (r.family)
        reqs.push({
          key: L.LabelInstanceFamily,
          operator: r.family.op,
          values: r.family.values,
          ...(r.family.minValues && r.family.op === 'In' ? { minValues: Math.min(r.family.minValues, r.family.values.length) } : {}),
        });
      if (r.cpuGt) reqs.push({ key: L.LabelInstanceCPU, operator: 'Gt', values: [r.cpuGt] });
      if (r.cpuLt) reqs.push({ key: L.LabelInstanceCPU, operator: 'Lt', values: [r.cpuLt] });
      if (r.typeMinValues) reqs.push({ key: L.LabelInstanceType, operator: 'Exists', minValues: r.typeMinValues });
      const name = `np-${i}`;
      const object = {
        apiVersion: 'karpenter.sh/v1',
        kind: 'NodePool',
        metadata: { name },
        spec: {
          ...(r.weight ? { weight: r.weight } : {}),
          ...(r.limitCpu ? { limits: { cpu: r.limitCpu } } : {}),
          template: {
            ...(r.team ? { metadata: { labels: { team: r.team } } } : {}),
            spec: {
              nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
              requirements: reqs,
              ...(r.taint ? { taints: [r.taint] } : {}),
            },
          },
        },
      };
      const shape: PoolShape = { name, weight: r.weight, taint: r.taint, team: r.team };
      return { object, shape };
    });

const cpuRequest = fc.constantFrom('50m', '100m', '250m', '500m', '1', '1500m', '3');
const memRequest = fc.constantFrom('64Mi', '256Mi', '512Mi', '1Gi', '2Gi', '4Gi');

/** One group of identical replicas ("app"), as a Deployment's pods look. */
const app = (i: number, pools: PoolShape[]) => {
  const labels = { app: `app-${i}` };
  const taintedPools = pools.filter((p) => p.taint);
  return fc
    .record({
      replicas: fc.integer({ min: 1, max: 6 }),
      cpu: cpuRequest,
      memory: memRequest,
      twoContainers: fc.boolean(),
      init: maybe(fc.record({ cpu: cpuRequest, memory: memRequest }), 30),
      sidecar: maybe(fc.record({ cpu: fc.constantFrom('50m', '100m', '500m'), memory: fc.constantFrom('32Mi', '128Mi') }), 30),
      nodeSelector: maybe(
        fc.oneof(
          fc.constantFrom(...Zones).map((z) => ({ [L.LabelTopologyZone]: z })),
          fc.constantFrom('spot', 'on-demand').map((c) => ({ [L.LabelCapacityType]: c })),
          fc.constantFrom('amd64', 'arm64').map((a) => ({ [L.LabelArch]: a })),
          fc.constantFrom(...Teams).map((t) => ({ team: t })),
        ),
        20,
      ),
      required: maybe(
        fc.oneof(
          fc.record({
            key: fc.constant(L.LabelTopologyZone),
            operator: fc.constantFrom('In', 'NotIn'),
            values: fc.subarray(Zones, { minLength: 1, maxLength: 2 }),
          }),
          fc.record({
            key: fc.constant(L.LabelInstanceFamily),
            operator: fc.constantFrom('In', 'NotIn'),
            values: fc.subarray(Families, { minLength: 1, maxLength: 2 }),
          }),
          fc.record({ key: fc.constant(L.LabelInstanceCPU), operator: fc.constantFrom('Gt', 'Lt'), values: fc.constantFrom('2', '4', '8').map((v) => [v]) }),
          fc.record({ key: fc.constant('team'), operator: fc.constantFrom('Exists', 'DoesNotExist'), values: fc.constant([] as string[]) }),
        ),
        20,
      ),
      preferred: maybe(
        fc.record({
          weight: fc.integer({ min: 1, max: 100 }),
          key: fc.constantFrom(L.LabelTopologyZone, L.LabelCapacityType, L.LabelArch),
        }),
        20,
      ),
      podAffinity: maybe(
        fc.constantFrom<'anti-hostname' | 'anti-zone' | 'self-zone' | 'self-hostname' | 'pref-anti-hostname' | 'pref-self-zone'>(
          'anti-hostname',
          'anti-zone',
          'self-zone',
          'self-hostname',
          'pref-anti-hostname',
          'pref-self-zone',
        ),
        25,
      ),
      spread: maybe(
        fc.record({
          maxSkew: fc.constantFrom(1, 1, 2),
          topologyKey: fc.constantFrom(L.LabelTopologyZone, L.LabelHostname, L.LabelCapacityType),
          whenUnsatisfiable: fc.constantFrom('DoNotSchedule', 'ScheduleAnyway'),
          minDomains: maybe(fc.constantFrom(2, 3), 25),
          nodeAffinityPolicy: maybe(fc.constantFrom('Honor', 'Ignore'), 25),
          nodeTaintsPolicy: maybe(fc.constantFrom('Honor', 'Ignore'), 25),
          matchLabelKeys: fc.boolean(),
        }),
        20,
      ),
      tolerate: maybe(fc.constantFrom(...(taintedPools.length ? taintedPools.map((p) => p.name) : ['none']), 'all'), 25),
      hostPort: maybe(fc.constantFrom(8080, 9090), 12),
    })
    .map((r): Pod[] => {
      const affinity: NonNullable<Pod['spec']['affinity']> = {};
      if (r.required) {
        affinity.nodeAffinity = {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [
              {
                matchExpressions: [{ key: r.required.key, operator: r.required.operator, ...(r.required.values.length ? { values: r.required.values } : {}) }],
              },
            ],
          },
        };
      }
      if (r.preferred) {
        const value = r.preferred.key === L.LabelTopologyZone ? Zones[0] : r.preferred.key === L.LabelCapacityType ? 'spot' : 'arm64';
        affinity.nodeAffinity = {
          ...(affinity.nodeAffinity ?? {}),
          preferredDuringSchedulingIgnoredDuringExecution: [
            { weight: r.preferred.weight, preference: { matchExpressions: [{ key: r.preferred.key, operator: 'In', values: [value] }] } },
          ],
        };
      }
      const term = (key: string) => ({ labelSelector: { matchLabels: labels }, topologyKey: key });
      switch (r.podAffinity) {
        case 'anti-hostname':
          affinity.podAntiAffinity = { requiredDuringSchedulingIgnoredDuringExecution: [term(L.LabelHostname)] };
          break;
        case 'anti-zone':
          affinity.podAntiAffinity = { requiredDuringSchedulingIgnoredDuringExecution: [term(L.LabelTopologyZone)] };
          break;
        case 'self-zone':
          affinity.podAffinity = { requiredDuringSchedulingIgnoredDuringExecution: [term(L.LabelTopologyZone)] };
          break;
        case 'self-hostname':
          affinity.podAffinity = { requiredDuringSchedulingIgnoredDuringExecution: [term(L.LabelHostname)] };
          break;
        case 'pref-anti-hostname':
          affinity.podAntiAffinity = { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 50, podAffinityTerm: term(L.LabelHostname) }] };
          break;
        case 'pref-self-zone':
          affinity.podAffinity = { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 50, podAffinityTerm: term(L.LabelTopologyZone) }] };
          break;
      }
      const tolerations: Toleration[] = [];
      if (r.tolerate === 'all') tolerations.push({ operator: 'Exists' });
      else if (r.tolerate && r.tolerate !== 'none') tolerations.push({ key: 'dedicated', operator: 'Equal', value: r.tolerate, effect: 'NoSchedule' });
      const requests = { cpu: r.cpu, memory: r.memory };
      const container = (name: string, extra: object = {}) => ({ name, image: 'registry.k8s.io/pause:3.9', resources: { requests }, ...extra });
      const initContainers = [
        ...(r.sidecar ? [{ name: 'sidecar', image: 'registry.k8s.io/pause:3.9', restartPolicy: 'Always', resources: { requests: r.sidecar } }] : []),
        ...(r.init ? [{ name: 'init', image: 'registry.k8s.io/pause:3.9', resources: { requests: r.init } }] : []),
      ];
      const spec: Pod['spec'] = {
        containers: [
          container('app', r.hostPort ? { ports: [{ containerPort: r.hostPort, hostPort: r.hostPort, protocol: 'TCP' }] } : {}),
          ...(r.twoContainers ? [container('helper')] : []),
        ],
        ...(initContainers.length ? { initContainers } : {}),
        ...(r.nodeSelector ? { nodeSelector: r.nodeSelector } : {}),
        ...(Object.keys(affinity).length ? { affinity } : {}),
        ...(tolerations.length ? { tolerations } : {}),
        ...(r.spread
          ? {
              topologySpreadConstraints: [
                {
                  maxSkew: r.spread.maxSkew,
                  topologyKey: r.spread.topologyKey,
                  whenUnsatisfiable: r.spread.whenUnsatisfiable,
                  labelSelector: { matchLabels: labels },
                  ...(r.spread.minDomains && r.spread.whenUnsatisfiable === 'DoNotSchedule' ? { minDomains: r.spread.minDomains } : {}),
                  ...(r.spread.nodeAffinityPolicy ? { nodeAffinityPolicy: r.spread.nodeAffinityPolicy } : {}),
                  ...(r.spread.nodeTaintsPolicy ? { nodeTaintsPolicy: r.spread.nodeTaintsPolicy } : {}),
                  ...(r.spread.matchLabelKeys ? { matchLabelKeys: ['pod-template-hash'] } : {}),
                },
              ],
            }
          : {}),
      };
      return Array.from({ length: r.replicas }, (_, k) => ({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: `app-${i}-${k}`, namespace: 'default', labels: { ...labels, 'pod-template-hash': `h${i}` } },
        spec: structuredClone(spec),
      }));
    });
};

const daemonSet = (i: number) =>
  fc
    .record({
      cpu: fc.constantFrom('50m', '100m', '200m'),
      memory: fc.constantFrom('64Mi', '128Mi', '256Mi'),
      tolerateAll: fc.boolean(),
      arch: maybe(fc.constantFrom('amd64', 'arm64'), 25),
    })
    .map((r) => ({
      apiVersion: 'apps/v1',
      kind: 'DaemonSet',
      metadata: { name: `ds-${i}`, namespace: 'kube-system' },
      spec: {
        selector: { matchLabels: { ds: `ds-${i}` } },
        template: {
          metadata: { labels: { ds: `ds-${i}` } },
          spec: {
            containers: [{ name: 'agent', image: 'registry.k8s.io/pause:3.9', resources: { requests: { cpu: r.cpu, memory: r.memory } } }],
            ...(r.tolerateAll ? { tolerations: [{ operator: 'Exists' }] } : {}),
            ...(r.arch ? { nodeSelector: { [L.LabelArch]: r.arch } } : {}),
          },
        },
      },
    }));

/** An existing node of one of the scenario's types, in one of its pools, with a few bound pods. */
/**
 * A node as a launched, registered instance of `type` in offering `o` of NodePool `pool` looks in
 * `kubectl get node -o json`: the well-known labels, the type's labels, then `extra.labels`;
 * providerID from the zone and `i`; capacity and allocatable from the type.
 */
export function launchedNode(
  i: number,
  type: CaseInstanceType,
  o: { zone: string; capacityType: string },
  pool: string,
  extra: { labels?: Record<string, string>; taints?: NonNullable<Node['spec']>['taints']; created?: string; conditions?: unknown[] } = {},
): Node {
  const name = `node-${i}`;
  const alloc = type.allocatable!;
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      ...(extra.created ? { creationTimestamp: extra.created } : {}),
      labels: {
        [L.LabelInstanceType]: type.name,
        [L.LabelArch]: type.arch ?? 'amd64',
        [L.LabelOS]: 'linux',
        [L.LabelTopologyZone]: o.zone,
        [L.LabelCapacityType]: o.capacityType,
        [L.LabelNodePool]: pool,
        [L.LabelHostname]: name,
        ...(type.labels ?? {}),
        ...extra.labels,
      },
    },
    spec: { providerID: `aws:///${o.zone}/i-${String(i).padStart(17, '0')}`, ...(extra.taints ? { taints: extra.taints } : {}) },
    status: {
      capacity: { cpu: String(type.cpu), memory: `${type.memoryMiB}Mi`, pods: String(type.pods ?? 110) },
      allocatable: { cpu: String(alloc.cpu), memory: String(alloc.memory), pods: String(alloc.pods) },
      ...(extra.conditions ? { conditions: extra.conditions } : {}),
    },
  } as Node;
}

const existingNode = (i: number, types: CaseInstanceType[], pools: PoolShape[], appCount: number) =>
  fc
    .record({
      type: fc.constantFrom(...types),
      pool: fc.constantFrom(...pools),
      offering: fc.nat(),
      pods: fc.array(
        fc.record({
          cpu: fc.constantFrom('100m', '250m', '500m'),
          memory: fc.constantFrom('128Mi', '512Mi'),
          app: maybe(fc.nat({ max: Math.max(0, appCount - 1) }), 30),
        }),
        { maxLength: 3 },
      ),
    })
    .map((r): { node: Node; pods: Pod[] } => {
      const offerings = r.type.offerings!;
      const o = offerings[r.offering % offerings.length];
      const name = `node-${i}`;
      const node = launchedNode(i, r.type, o, r.pool.name, {
        labels: { [L.LabelInstanceCPU]: String(r.type.cpu), ...(r.pool.team ? { team: r.pool.team } : {}) },
        ...(r.pool.taint ? { taints: [r.pool.taint] } : {}),
      });
      const pods: Pod[] = r.pods.map((p, k) => ({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          name: `bound-${i}-${k}`,
          namespace: 'default',
          labels: (p.app === undefined ? { app: `bound-${i}` } : { app: `app-${p.app}`, 'pod-template-hash': `h${p.app}` }) as Record<string, string>,
        },
        spec: {
          nodeName: name,
          containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.9', resources: { requests: { cpu: p.cpu, memory: p.memory } } }],
          ...(r.pool.taint ? { tolerations: [{ operator: 'Exists' }] } : {}),
        },
        status: { phase: 'Running' },
      }));
      return { node, pods };
    });

/** A whole scenario. */
export const scenario: fc.Arbitrary<ParityScenario> = fc
  .record({
    types: instanceTypes,
    pools: fc.integer({ min: 1, max: 3 }).chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => nodePool(i)))),
    appCount: fc.integer({ min: 1, max: 5 }),
    nodeCount: fc.integer({ min: 0, max: 3 }),
    dsCount: fc.integer({ min: 0, max: 2 }),
    settings: fc.record({
      minValuesPolicy: maybe(fc.constant<'BestEffort'>('BestEffort'), 15),
      preferencePolicy: maybe(fc.constant<'Ignore'>('Ignore'), 15),
    }),
  })
  .chain((s) => {
    const shapes = s.pools.map((p) => p.shape);
    return fc
      .record({
        apps: fc.tuple(...Array.from({ length: s.appCount }, (_, i) => app(i, shapes))),
        nodes: fc.tuple(...Array.from({ length: s.nodeCount }, (_, i) => existingNode(i, s.types, shapes, s.appCount))),
        daemonSets: fc.tuple(...Array.from({ length: s.dsCount }, (_, i) => daemonSet(i))),
      })
      .map((r): ParityScenario => ({
        instanceTypes: s.types,
        nodePools: s.pools.map((p) => p.object),
        nodes: r.nodes.map((n) => n.node),
        pods: [...r.nodes.flatMap((n) => n.pods), ...r.apps.flat()],
        daemonSets: r.daemonSets,
        settings: Object.fromEntries(Object.entries(s.settings).filter(([, v]) => v !== undefined)),
      }));
  });
