/**
 * NodeClaim templates: one per NodePool, with everything precomputed that every new NodeClaim
 * of the pool shares — requirements (NodePool requirements ∩ template labels ∩
 * `karpenter.sh/nodepool In [name]`), taints, the instance types the pool admits, per type the
 * daemonset overhead (KC scheduler.go `buildDaemonOverheadGroups`) and the room left for pods,
 * and what is left under the pool's limits.
 */
import type { Taint } from '../api/kube.ts';
import * as L from '../api/labels.ts';
import { isStaticNodePool, StaticNodePoolNotForPods, type NodePool } from '../api/nodepool.ts';
import { type Resources } from '../api/quantity.ts';
import { nodePoolLimits } from '../api/nodepool-status.ts';
import { Requirement, Requirements } from '../api/requirements.ts';
import type { InstanceType, Offering } from '../catalog/types.ts';
import { PodInfo } from './pod.ts';
import { untoleratedTaint } from './taints.ts';
import type { DaemonSetTemplate, ExistingNode, UnavailableOffering } from './types.ts';

/** Labels every node gets from its offering rather than from its type. */
const OFFERING_KEYS = new Set([L.LabelTopologyZone, L.LabelCapacityType]);

/**
 * Keys a pod may require that its NodePool does not mention: the well-known labels
 * (shared/api/labels.ts), and karpenter.sh/registered and karpenter.sh/initialized, which every
 * new node gets (Karpenter adds both to its NodeClaim templates for the DaemonSet simulation,
 * `schedulingSimulationKeys`, and keeps them off the claim).
 */
const AllowUndefinedLabels: ReadonlySet<string> = new Set([...L.WellKnownLabels, L.LabelRegistered, L.LabelInitialized]);

/** One admitted instance type with its precomputed data. */
export interface TemplateType {
  type: InstanceType;
  /** Available offerings (not ICE-cached, `available`). */
  offerings: Offering[];
  /** Daemonset requests on a node of this type (canonical units). */
  daemonOverhead: Resources;
  /**
   * Host ports (`protocol/hostIP/port`, pod.ts `hostPorts`) the DaemonSets running on a node of
   * this type hold; absent when none. A pod wanting one cannot go on such a node (KC nodeclaim.go
   * filters instance types by their daemonset group's host port usage).
   */
  daemonHostPorts?: string[];
  /** Allocatable minus daemonset overhead: room for pods. */
  room: Resources;
  /** Whether it is a GPU / accelerator / metal type. */
  exotic: boolean;
  /**
   * Among the cheapest per vCPU or per GiB of the pool (within {@link EfficientPriceMargin}):
   * with cost-aware packing a claim stops growing once none of these can hold it.
   */
  efficient: boolean;
  /** Price of the cheapest of `offerings`, USD/hour. */
  minPriceUsdPerHour: number;
}

/**
 * How far above the cheapest way to buy its vCPUs (or its memory) in the pool a type may be
 * priced and still count as efficient. The largest instance sizes exist only in a few, dearer families (384-vCPU m8i
 * vs 64-vCPU c7g): a claim that keeps growing into them costs more than two efficient nodes.
 */
export const EfficientPriceMargin = 0.1;

function markEfficient(types: TemplateType[], margin: number): void {
  let minCpu = Infinity;
  let minMem = Infinity;
  const shape = types.map((t) => {
    const price = t.minPriceUsdPerHour;
    const cpu = Math.max(1, (t.type.capacity.cpu ?? 0) / 1000);
    const memGiB = Math.max(1 / 1024, (t.type.capacity.memory ?? 0) / 2 ** 30);
    if (!t.exotic) {
      minCpu = Math.min(minCpu, price / cpu);
      minMem = Math.min(minMem, price / memGiB);
    }
    return { price, cpu, memGiB };
  });
  // Efficient: priced close to the cheapest way to buy its own cpu or its own memory.
  types.forEach((t, i) => {
    const { price, cpu, memGiB } = shape[i];
    t.efficient = !t.exotic && price <= (1 + margin) * Math.max(cpu * minCpu, memGiB * minMem);
  });
}

/**
 * The part of a NodePool's template that depends only on the pool's template, its instance
 * types, the daemonsets, the ICE-cached offerings and the label keys types define: immutable,
 * so a {@link SchedulingCache} (shared/scheduling/cache.ts) may share it between `solve()` calls.
 */
/** Reason given for a NodePool whose status says it is not ready. */
export const NodePoolNotReady = 'nodepool is not ready (status condition Ready is False)';

/**
 * Whether a NodePool's status reports Ready=False: Karpenter launches nothing from such a pool
 * (KC provisioner.go skips NodePools that are not ready). A pool without status conditions (no
 * controller sets them) counts as ready.
 */
function notReady(nodePool: { status?: unknown }): boolean {
  const conditions = (nodePool.status as { conditions?: { type?: string; status?: string }[] } | undefined)?.conditions ?? [];
  return conditions.some((c) => c.type === 'Ready' && c.status === 'False');
}

/**
 * Why a NodePool is not ready though it parsed: a requirement on a label with known values lists
 * none of them (Karpenter's runtime validation sets the NodePool not ready, labels.ts
 * `wellKnownValuesProblem`).
 */
export function nodePoolNotReadyReason(nodePool: NodePool): string | undefined {
  for (const r of nodePool.spec.template.spec.requirements) {
    const problem = L.wellKnownValuesProblem(r);
    if (problem) return `nodepool is not ready: ${problem}`;
  }
  return undefined;
}

export class PoolTemplate {
  readonly name: string;
  readonly requirements: Requirements;
  readonly labels: Record<string, string>;
  readonly taints: Taint[];
  readonly startupTaints: Taint[];
  /** Admitted types, cheapest available offering first (then name): a claim's options keep this order. */
  readonly types: TemplateType[];
  /** Label keys the admitted types (or their offerings) define: a type without one has it absent. */
  readonly typeKeys: ReadonlySet<string>;
  /** Keys a pod may require without the NodePool defining them. */
  readonly allowUndefined: ReadonlySet<string>;
  /** Every zone and capacity type some admitted type offers, sorted. */
  readonly zones: string[];
  readonly capacityTypes: string[];
  /**
   * The zones and capacity types Karpenter v1.15 registers as topology domains for this pool, a
   * superset of `zones` / `capacityTypes`, sorted (KC topology.go `buildDomainGroups`): the
   * available offerings of every instance type listed for the pool, whatever its other
   * requirements exclude (family, cpu), within the pool's zone (capacity-type) requirement; plus
   * every value of the pool's own `In` requirement on the key, offered or not; also when the pool
   * admits no type at all, and none when no type is listed for it. Only ScheduleAnyway
   * spreads under `packing: karpenter` count them (topology.ts {@link TopologyGroup.registered}).
   */
  readonly registeredZones: string[];
  readonly registeredCapacityTypes: string[];
  /** Why the pool can launch nothing at all, if so. */
  readonly unusable?: string;
  /** Whether some admitted type has {@link TemplateType.daemonHostPorts}. */
  readonly hasDaemonHostPorts: boolean;
  /** Zone → zone id of the pool's offerings (undefined when the catalog knows none): see {@link zoneIdsAsZones}. */
  readonly zoneIdOf: ReadonlyMap<string, string | undefined>;

  constructor(
    nodePool: NodePool,
    instanceTypes: readonly InstanceType[],
    daemonSets: readonly DaemonSetTemplate[],
    unavailable: readonly UnavailableOffering[],
    typeKeysAll: ReadonlySet<string>,
    efficientMargin = EfficientPriceMargin,
  ) {
    const spec = nodePool.spec.template.spec;
    this.name = nodePool.metadata.name;
    this.labels = { ...(nodePool.spec.template.metadata?.labels ?? {}), [L.LabelNodePool]: this.name };
    this.zoneIdOf = zoneIdsOf(instanceTypes);
    this.requirements = zoneIdsAsZones(Requirements.fromSpecs(spec.requirements).intersect(Requirements.fromLabels(this.labels)), this.zoneIdOf);
    this.taints = (spec.taints ?? []) as Taint[];
    this.startupTaints = (spec.startupTaints ?? []) as Taint[];
    this.typeKeys = typeKeysAll;
    this.allowUndefined = new Set([...AllowUndefinedLabels, ...typeKeysAll]);

    const unavailableSet = new Set(unavailable.map((u) => `${u.instanceType}|${u.zone}|${u.capacityType}`));
    const zoneReq = this.requirements.get(L.LabelTopologyZone);
    const ctReq = this.requirements.get(L.LabelCapacityType);
    // Daemons that tolerate the pool's taints, with their node terms that the pool's requirements
    // allow; each term's requirements on instance-type labels are checked per type below.
    const daemons = daemonSets
      .filter((d) => !untoleratedTaint(this.taints, d.spec.tolerations, true))
      .map((d) => {
        const info = new PodInfo({ metadata: d.metadata, spec: d.spec });
        const terms = info.requiredTerms
          // A term's node-name field (the one-node affinity the DaemonSet controller gives each of
          // its pods) is ignored: the question is whether the DaemonSet would run on such a node.
          .filter((t) => this.requirements.incompatibility(t.requirements, this.allowUndefined) === undefined)
          .map((t) => t.requirements.all().filter((r) => typeKeysAll.has(r.key) && !OFFERING_KEYS.has(r.key)));
        return { requests: info.requests, terms, hostPorts: info.hostPorts };
      })
      .filter((d) => d.terms.length > 0);
    const types: TemplateType[] = [];
    const poolFilter = typeFilter(this.requirements, typeKeysAll);
    for (const type of instanceTypes) {
      if (!typeMatches(type, poolFilter, typeKeysAll)) continue;
      const offerings = type.offerings.filter(
        (o) =>
          o.available &&
          (unavailableSet.size === 0 || !unavailableSet.has(`${type.name}|${o.zone}|${o.capacityType}`)) &&
          (!zoneReq || zoneReq.has(o.zone)) &&
          (!ctReq || ctReq.has(o.capacityType)),
      );
      if (offerings.length === 0) continue;
      const daemonOverhead: Resources = {};
      let daemonHostPorts: string[] | undefined;
      for (const d of daemons) {
        // A daemon pod lands on the node when one of its node terms accepts the type's labels.
        if (!d.terms.some((reqs) => reqs.every((r) => r.matches(r.key === L.LabelInstanceType ? type.name : type.labels[r.key])))) continue;
        for (const k in d.requests) daemonOverhead[k] = (daemonOverhead[k] ?? 0) + d.requests[k];
        if (d.hostPorts.length > 0) (daemonHostPorts ??= []).push(...d.hostPorts);
      }
      const room: Resources = { ...type.allocatable };
      for (const [k, v] of Object.entries(daemonOverhead)) room[k] = (room[k] ?? 0) - v;
      // A type whose daemonsets alone outgrow it holds no pod at all, not even one that requests
      // nothing (KC: daemon overhead + pod requests must fit the allocatable).
      if (Object.values(room).some((v) => v < 0)) continue;
      let minPrice = Infinity;
      for (const o of offerings) if (o.priceUsdPerHour < minPrice) minPrice = o.priceUsdPerHour;
      types.push({
        type,
        offerings,
        daemonOverhead,
        ...(daemonHostPorts ? { daemonHostPorts } : {}),
        room,
        exotic: !!type.exotic,
        efficient: false,
        minPriceUsdPerHour: minPrice,
      });
    }
    // Cheapest first, as a launch orders them: claims filter this list in order, so their options
    // are already sorted when no zone or capacity-type requirement narrows the offerings.
    types.sort((a, b) => a.minPriceUsdPerHour - b.minPriceUsdPerHour || (a.type.name < b.type.name ? -1 : a.type.name > b.type.name ? 1 : 0));
    markEfficient(types, efficientMargin);
    this.types = types;
    this.hasDaemonHostPorts = types.some((t) => t.daemonHostPorts);
    this.zones = [...new Set(types.flatMap((t) => t.offerings.map((o) => o.zone)))].sort();
    this.capacityTypes = [...new Set(types.flatMap((t) => t.offerings.map((o) => o.capacityType)))].sort();
    const registered = (key: string, own: readonly string[]): string[] => {
      // A pool with no instance types listed registers nothing (KC provisioner.go skips it).
      if (instanceTypes.length === 0) return [];
      const req = this.requirements.get(key);
      const out = new Set(own);
      for (const type of instanceTypes) {
        for (const o of type.offerings) {
          const v = key === L.LabelTopologyZone ? o.zone : o.capacityType;
          if (o.available && !unavailableSet.has(`${type.name}|${o.zone}|${o.capacityType}`) && (!req || req.has(v))) out.add(v);
        }
      }
      if (req && !req.complement) for (const v of req.values) out.add(v);
      return [...out].sort();
    };
    this.registeredZones = registered(L.LabelTopologyZone, this.zones);
    this.registeredCapacityTypes = registered(L.LabelCapacityType, this.capacityTypes);
    if (types.length === 0) {
      this.unusable =
        instanceTypes.length === 0
          ? 'no instance types available for the nodepool'
          : `no instance type satisfies the nodepool requirements (${this.requirements.toString()})`;
    }
  }
}

/**
 * A NodePool's template for one `solve()` call: the shared {@link PoolTemplate} plus what is left
 * under the pool's limits (which the run consumes as it opens claims).
 */
export class ClaimTemplate {
  readonly name: string;
  readonly weight: number;
  readonly requirements: Requirements;
  readonly labels: Record<string, string>;
  readonly taints: Taint[];
  readonly startupTaints: Taint[];
  readonly types: TemplateType[];
  /** Label keys the admitted types (or their offerings) define: a type without one has it absent. */
  readonly typeKeys: ReadonlySet<string>;
  /** Keys a pod may require without the NodePool defining them. */
  readonly allowUndefined: ReadonlySet<string>;
  /** Limits left (canonical units, `nodes` a count); undefined when the pool has no limits. */
  remaining: Resources | undefined;
  /** The pool's limits as written, parsed (for messages). */
  readonly limits: Resources | undefined;
  /** Every zone and capacity type some admitted type offers. */
  readonly zones: string[];
  readonly capacityTypes: string[];
  /** Why the pool can launch nothing at all, if so. */
  readonly unusable?: string;

  constructor(
    readonly nodePool: NodePool,
    readonly base: PoolTemplate,
    existingNodes: readonly ExistingNode[],
    /** Why the pool may launch nothing though it is valid (its EC2NodeClass is not ready). */
    notReadyReason?: string,
  ) {
    this.name = base.name;
    this.weight = nodePool.spec.weight ?? 0;
    this.requirements = base.requirements;
    this.labels = base.labels;
    this.taints = base.taints;
    this.startupTaints = base.startupTaints;
    this.types = base.types;
    this.typeKeys = base.typeKeys;
    this.allowUndefined = base.allowUndefined;
    this.zones = base.zones;
    this.capacityTypes = base.capacityTypes;
    this.unusable = isStaticNodePool(nodePool)
      ? StaticNodePoolNotForPods
      : notReady(nodePool)
        ? NodePoolNotReady
        : (nodePoolNotReadyReason(nodePool) ?? notReadyReason ?? base.unusable);

    const limits = nodePoolLimits(nodePool);
    if (Object.keys(limits).length > 0) {
      this.limits = limits;
      const remaining: Resources = { ...this.limits };
      for (const n of existingNodes) {
        if (n.nodePool !== this.name) continue;
        const cap = n.capacity ?? n.allocatable;
        for (const k of Object.keys(remaining)) remaining[k] -= k === 'nodes' ? 1 : (cap[k] ?? 0);
      }
      this.remaining = remaining;
    }
  }

  /** Whether a type's capacity fits what is left under the limits. */
  withinLimits(t: TemplateType): boolean {
    if (!this.remaining) return true;
    for (const [k, left] of Object.entries(this.remaining)) {
      const need = k === 'nodes' ? 1 : (t.type.capacity[k] ?? 0);
      if (need > left) return false;
    }
    return true;
  }
}

/**
 * Whether an instance type can satisfy `reqs`: every requirement on a key types define must
 * accept the type's value (absent when the type lacks the label; Karpenter's AWS types define
 * every well-known label, DoesNotExist when not applicable), and one of `offerings` must be in
 * an allowed zone with an allowed capacity type.
 */
export function typeMatches(
  type: InstanceType,
  reqs: Requirements | TypeFilter,
  typeKeys: ReadonlySet<string>,
  offerings: readonly Offering[] = type.offerings,
): boolean {
  const f = reqs instanceof Requirements ? typeFilter(reqs, typeKeys) : reqs;
  const labels = type.labels;
  for (const r of f.labelReqs) {
    const v = r.key === L.LabelInstanceType ? type.name : labels[r.key];
    if (!r.matches(v)) return false;
  }
  if (!f.zoneReq && !f.ctReq) return offerings.length > 0;
  for (const o of offerings) if (offeringMatches(o, f.zoneReq, f.ctReq)) return true;
  return false;
}

/** Requirements split for fast type checks: label requirements on type-defined keys, zone, capacity type. */
export interface TypeFilter {
  labelReqs: Requirement[];
  zoneReq?: Requirement;
  ctReq?: Requirement;
}

/** Prepares `reqs` for many {@link typeMatches} calls. */
export function typeFilter(reqs: Requirements, typeKeys: ReadonlySet<string>): TypeFilter {
  return {
    labelReqs: reqs.all().filter((r) => !OFFERING_KEYS.has(r.key) && typeKeys.has(r.key)),
    zoneReq: reqs.get(L.LabelTopologyZone),
    ctReq: reqs.get(L.LabelCapacityType),
  };
}

/** Whether an offering is allowed by the zone and capacity-type requirements. */
export function offeringMatches(o: Offering, zoneReq: Requirement | undefined, ctReq: Requirement | undefined): boolean {
  return (!zoneReq || zoneReq.has(o.zone)) && (!ctReq || ctReq.has(o.capacityType));
}

/** Zone → zone id over every offering of `types` (undefined when none carries one). */
function zoneIdsOf(types: readonly InstanceType[]): Map<string, string | undefined> {
  const out = new Map<string, string | undefined>();
  for (const t of types) for (const o of t.offerings) if (out.get(o.zone) === undefined) out.set(o.zone, o.zoneId);
  return out;
}

/**
 * `reqs` with a `topology.k8s.aws/zone-id` requirement (NodePool's or pod's) also stated as the
 * zone requirement it means: the zones of `zoneIdOf` whose id it admits (a zone of unknown id only
 * under NotIn / DoesNotExist). A zone has one id per account, and the scheduler decides placement
 * by zone, so the zone id restricts placement everywhere the zone does (offerings, topology, the
 * launch and its retries). Unchanged without a zone-id requirement.
 */
export function zoneIdsAsZones(reqs: Requirements, zoneIdOf: ReadonlyMap<string, string | undefined>): Requirements {
  const zoneId = reqs.get(L.LabelTopologyZoneID);
  if (!zoneId) return reqs;
  const zones = [...zoneIdOf].filter(([, id]) => zoneId.matches(id)).map(([zone]) => zone);
  return reqs.add(new Requirement(L.LabelTopologyZone, false, new Set(zones), false));
}

/** Every label key any of the types defines, plus zone and capacity type. */
export function collectTypeKeys(typeLists: readonly (readonly InstanceType[])[]): Set<string> {
  const keys = new Set<string>([L.LabelTopologyZone, L.LabelCapacityType, L.LabelInstanceType]);
  const seen = new Set<InstanceType>();
  for (const list of typeLists) {
    for (const t of list) {
      if (seen.has(t)) continue;
      seen.add(t);
      for (const k of Object.keys(t.labels)) keys.add(k);
    }
  }
  return keys;
}
