/**
 * A NodeClaim being packed during the simulation: its pods, the requirements they narrowed it
 * to, the instance types that can still hold them, and the NodePool limit capacity it holds.
 * Follows Karpenter's NodeClaim (kubernetes-sigs/karpenter
 * pkg/controllers/provisioning/scheduling/nodeclaim.go, nodeclaimtemplate.go): a pod joins a
 * claim when it tolerates the taints, its requirements intersect the claim's, topology allows a
 * domain of the claim, and some instance type still holds the claim's requests plus the pod's
 * (with minValues kept). Cost-aware packing (nodefleet's default) adds two refusals: a claim
 * capped to efficient types, and a pod that would move the claim onto types selling its shape
 * dearer ({@link rateOf}).
 */
import * as L from '../api/labels.ts';
import type { Resources } from '../api/quantity.ts';
import { Requirement, type Requirements } from '../api/requirements.ts';
import type { Failure } from './existing-node.ts';
import { unmetMinValues } from './launch.ts';
import { portsConflict, type PodInfo } from './pod.ts';
import { fitsRoom, formatAmount } from './resources.ts';
import { formatTaint, untoleratedTaint } from './taints.ts';
import { typeFilter, typeMatches, zoneIdsAsZones, type ClaimTemplate, type TemplateType } from './template.ts';
import type { PodGroups, Topology, TopologyFailure, TopologyTarget } from './topology.ts';

/**
 * How much dearer (fraction) than the best rate for a claim's shape an instance type may sell it
 * and still be launched for the claim under cost-aware packing (see {@link rateOf}).
 */
const ShapeRateTolerance = 0.02;

/** Prices (USD/hour) closer than this are equal when a pin is weighed against the open claim (sums of floats). */
const PinPriceToleranceUsd = 1e-9;

/**
 * What a claim's requests cost at a type's rate (USD/hour): the type's price times the largest
 * fraction of its room the requests take, over every requested resource (cpu, memory, pods and
 * extended resources such as nvidia.com/gpu); Infinity when the type has none of one. Equal to
 * the price when the claim fills the type exactly; comparing types by it compares how well each
 * sells the claim's shape, and a rate above a type's price is what that many of it would cost.
 */
export function rateOf(t: TemplateType, requests: Resources): number {
  let f = 0;
  for (const k in requests) {
    const need = requests[k];
    if (!(need > 0)) continue;
    const room = t.room[k] ?? 0;
    if (room <= 0) return Infinity;
    if (need / room > f) f = need / room;
  }
  return t.minPriceUsdPerHour * f;
}

/** The lowest {@link rateOf} among `types` (a claim's options are all plain or all exotic: {@link openClaim}). */
function bestRate(types: readonly TemplateType[], requests: Resources): number {
  let best = Infinity;
  for (const t of types) {
    const r = rateOf(t, requests);
    if (r < best) best = r;
  }
  return best;
}

/** What claims share during one simulation. */
export interface ClaimContext {
  readonly topology: Topology;
  /** minValues must hold after each pod (`minValuesPolicy: Strict`). */
  readonly strictMinValues: boolean;
  /** Cost-aware packing (`packing: cost`): a new claim is capped to efficient types. */
  readonly costPacking: boolean;
  /** The smallest pending pod's cpu (millicores) and memory (bytes): a claim with less room left is closed. */
  readonly smallestCpu: number;
  readonly smallestMem: number;
}

/** A NodeClaim being packed. */
export class SimClaim implements TopologyTarget {
  readonly pods: PodInfo[] = [];
  readonly ports: string[] = [];
  requests: Resources = {};
  private cachedZones?: string[];
  private cachedCapacityTypes?: string[];
  /** Largest and smallest room among the options for cpu (millicores), memory (bytes) and pods: fast reject and fast accept. */
  maxCpu = 0;
  maxMem = 0;
  maxPods = 0;
  minCpu = 0;
  minMem = 0;
  minPods = 0;
  /** Largest room among the efficient options (the bounds that matter once `capped`). */
  effCpu = 0;
  effMem = 0;
  effPods = 0;
  /** Capacity held against the NodePool limits (largest option, per limited resource). */
  reserved: Resources = {};
  closed = false;
  /** Cost-aware packing: the claim must keep at least one efficient option. */
  capped = false;

  constructor(
    readonly template: ClaimTemplate,
    readonly hostname: string,
    public requirements: Requirements,
    public options: TemplateType[],
  ) {
    this.refresh();
  }

  /** Recomputes the room bounds from the options; zones and capacity types are recomputed on next use. */
  refresh(): void {
    this.cachedZones = undefined;
    this.cachedCapacityTypes = undefined;
    let maxCpu = -Infinity,
      maxMem = -Infinity,
      maxPods = -Infinity;
    let minCpu = Infinity,
      minMem = Infinity,
      minPods = Infinity;
    let effCpu = -Infinity,
      effMem = -Infinity,
      effPods = -Infinity;
    for (const t of this.options) {
      const cpu = t.room.cpu ?? 0;
      const mem = t.room.memory ?? 0;
      const pods = t.room.pods ?? 0;
      if (t.efficient) {
        if (cpu > effCpu) effCpu = cpu;
        if (mem > effMem) effMem = mem;
        if (pods > effPods) effPods = pods;
      }
      if (cpu > maxCpu) maxCpu = cpu;
      if (cpu < minCpu) minCpu = cpu;
      if (mem > maxMem) maxMem = mem;
      if (mem < minMem) minMem = mem;
      if (pods > maxPods) maxPods = pods;
      if (pods < minPods) minPods = pods;
    }
    Object.assign(this, { maxCpu, maxMem, maxPods, minCpu, minMem, minPods, effCpu, effMem, effPods });
  }

  private offeringDomains(): void {
    const zoneReq = this.requirements.get(L.LabelTopologyZone);
    const ctReq = this.requirements.get(L.LabelCapacityType);
    // Stop as soon as every zone / capacity type the pool offers (under the requirements) is seen.
    const allZones = this.template.zones.filter((z) => !zoneReq || zoneReq.has(z)).length;
    const allCts = this.template.capacityTypes.filter((c) => !ctReq || ctReq.has(c)).length;
    const zones = new Set<string>();
    const cts = new Set<string>();
    for (const t of this.options) {
      for (const o of t.offerings) {
        if ((zoneReq && !zoneReq.has(o.zone)) || (ctReq && !ctReq.has(o.capacityType))) continue;
        zones.add(o.zone);
        cts.add(o.capacityType);
      }
      if (zones.size === allZones && cts.size === allCts) break;
    }
    this.cachedZones = [...zones].sort();
    this.cachedCapacityTypes = [...cts].sort();
  }

  /** Zones some option can launch in under the requirements. */
  get zones(): string[] {
    if (!this.cachedZones) this.offeringDomains();
    return this.cachedZones!;
  }

  get capacityTypes(): string[] {
    if (!this.cachedCapacityTypes) this.offeringDomains();
    return this.cachedCapacityTypes!;
  }

  domains(key: string): readonly string[] {
    return this.domainsWith(key, this.requirements);
  }

  /**
   * Per zone or capacity-type value, the cheapest offering (USD/hour) of the claim's options that
   * can hold `requests` (the claim's with the pod's) and meet the requirements' labels, under the
   * requirements and the other narrowed domains, and those options. Types too small for the pod,
   * or of a family it refuses, do not count (parity seed 1 #1457: a 2-vCPU spot type sold in
   * every zone pinned a 3-vCPU pod to the first zone instead of the one where a type that holds
   * it is cheapest).
   */
  private offeredFor(
    key: string,
    reqs: Requirements,
    narrowed: ReadonlyMap<string, readonly string[]>,
    requests: Resources,
  ): { best: Map<string, number>; offered: Map<string, TemplateType[]> } {
    const other = key === L.LabelTopologyZone ? L.LabelCapacityType : L.LabelTopologyZone;
    const allowed = narrowed.get(other) ?? undefined;
    const otherReq = reqs.get(other);
    const labels = { labelReqs: typeFilter(reqs, this.template.typeKeys).labelReqs };
    const best = new Map<string, number>();
    const offered = new Map<string, TemplateType[]>();
    for (const t of this.options) {
      if (!fitsRoom(requests, t.room) || !typeMatches(t.type, labels, this.template.typeKeys)) continue;
      for (const o of t.offerings) {
        const [v, w] = key === L.LabelTopologyZone ? [o.zone, o.capacityType] : [o.capacityType, o.zone];
        if ((allowed && !allowed.includes(w)) || (otherReq && !otherReq.has(w))) continue;
        if (o.priceUsdPerHour < (best.get(v) ?? Infinity)) best.set(v, o.priceUsdPerHour);
        const ts = offered.get(v) ?? [];
        if (ts[ts.length - 1] !== t) ts.push(t);
        offered.set(v, ts);
      }
    }
    return { best, offered };
  }

  /**
   * The zone or capacity-type value of `values` to pin the claim to for a pod's anti-affinity, or
   * undefined to keep the claim open over all of them (as Karpenter keeps it). Each value is priced
   * at its cheapest offering that can hold the pod ({@link offeredFor}). The pin goes to the
   * cheapest value whose types meet the claim's minValues on their own, ties in the given order
   * (parity seed 2 #1488: pinning a zone with one instance family under minValues 2 on families
   * failed the pod where another free zone held). It is not taken when that value launches dearer
   * than the cheapest offering over all `values`, or when no value meets minValues alone: an open
   * claim counts minValues over every zone and launches its cheapest offering, so such a pin would
   * cost more than Karpenter's claim for the same pod (parity seed 2 #1997: minValues 3 on types
   * held only in us-east-1a, $0.0935/h, where the open claim launched a spot type in us-east-1c at
   * $0.0561/h). Other keys: the first value.
   */
  pinDomainWith(
    key: string,
    values: readonly string[],
    reqs: Requirements,
    narrowed: ReadonlyMap<string, readonly string[]>,
    requests: Resources,
  ): string | undefined {
    if (key !== L.LabelTopologyZone && key !== L.LabelCapacityType) return values[0];
    const { best, offered } = this.offeredFor(key, reqs, narrowed, requests);
    const price = (v: string) => best.get(v) ?? Infinity;
    const meets = values.filter((v) => !unmetMinValues(offered.get(v) ?? [], reqs));
    if (meets.length === 0) return undefined;
    const pin = meets.reduce((a, b) => (price(b) < price(a) ? b : a));
    const open = Math.min(...values.map(price));
    return price(pin) > open + PinPriceToleranceUsd ? undefined : pin;
  }

  /**
   * The zone or capacity-type values (in the given order) where some option that can hold the
   * pod is offered ({@link offeredFor}); other keys unchanged.
   */
  launchableWith(
    key: string,
    values: readonly string[],
    reqs: Requirements,
    narrowed: ReadonlyMap<string, readonly string[]>,
    requests: Resources,
  ): readonly string[] {
    if (key !== L.LabelTopologyZone && key !== L.LabelCapacityType) return values;
    const { offered } = this.offeredFor(key, reqs, narrowed, requests);
    return values.filter((v) => offered.has(v));
  }

  domainsWith(key: string, reqs: Requirements): readonly string[] {
    if (key === L.LabelHostname) return [this.hostname];
    const r = reqs.get(key);
    // Zones under a capacity-type requirement the claim does not have yet (or the reverse): only
    // the offerings of that kind count (an on-demand claim cannot land in a spot-only zone).
    if (key === L.LabelTopologyZone || key === L.LabelCapacityType) {
      const other = key === L.LabelTopologyZone ? L.LabelCapacityType : L.LabelTopologyZone;
      const o = reqs.get(other);
      if (o && o !== this.requirements.get(other)) {
        const values = new Set<string>();
        for (const t of this.options) {
          for (const off of t.offerings) {
            const [v, w] = key === L.LabelTopologyZone ? [off.zone, off.capacityType] : [off.capacityType, off.zone];
            if (o.has(w) && (!r || r.has(v))) values.add(v);
          }
        }
        return [...values].sort();
      }
    }
    if (key === L.LabelTopologyZone) return r ? this.zones.filter((z) => r.has(z)) : this.zones;
    if (key === L.LabelCapacityType) return r ? this.capacityTypes.filter((c) => r.has(c)) : this.capacityTypes;
    if (r && !r.complement) return [...r.values].sort();
    if (this.template.typeKeys.has(key)) {
      const values = new Set<string>();
      for (const t of this.options) {
        const v = key === L.LabelInstanceType ? t.type.name : t.type.labels[key];
        if (v !== undefined && (!r || r.has(v))) values.add(v);
      }
      return [...values].sort();
    }
    return [];
  }

  /**
   * Adds the pod when the claim can take it: room on some option, host ports, taints,
   * requirements, topology (which may narrow the claim to the allowed domains), cost-aware caps
   * and minValues. On success the claim's requirements, options and requests are updated, its
   * limit reservation follows, and the pod is recorded in topology. `karpenterSpread`: a zone or
   * capacity-type spread picks its domain as Karpenter does, among every domain the claim's and
   * the pod's requirements allow, and the claim refuses the pod when its types do not launch there
   * (see {@link TopologyTarget.spreadDomains}).
   * @returns undefined when added, else why not.
   */
  add(info: PodInfo, groups: PodGroups, ctx: ClaimContext, karpenterSpread = false): Failure | undefined {
    const t = this.template;
    const r = info.requests;
    const cpu = (this.requests.cpu ?? 0) + (r.cpu ?? 0);
    const mem = (this.requests.memory ?? 0) + (r.memory ?? 0);
    const pods = (this.requests.pods ?? 0) + (r.pods ?? 0);
    // A fresh claim skips the fast reject so the full check can explain.
    if (this.pods.length > 0) {
      if (cpu > this.maxCpu || mem > this.maxMem || pods > this.maxPods) return { reason: 'no instance type has enough room', monotone: true };
      if (this.capped && (cpu > this.effCpu || mem > this.effMem || pods > this.effPods))
        return { reason: 'the claim is as large as an efficient instance type can be', monotone: true };
    }
    for (const p of info.hostPorts) if (this.ports.some((q) => portsConflict(p, q))) return { reason: `host port ${p} in use`, monotone: true };
    // Types whose DaemonSets hold one of the pod's host ports cannot take it.
    let candidates = this.options;
    if (info.hostPorts.length > 0 && t.base.hasDaemonHostPorts) {
      const taken = (o: TemplateType) => o.daemonHostPorts?.find((q) => info.hostPorts.some((p) => portsConflict(p, q)));
      candidates = this.options.filter((o) => !taken(o));
      if (candidates.length === 0) return { reason: `host port ${taken(this.options[0])} in use by a DaemonSet on every instance type`, monotone: true };
    }
    const taint = untoleratedTaint(t.taints, info.tolerations, info.toleratePreferNoSchedule);
    if (taint) return { reason: `did not tolerate taint ${formatTaint(taint)}`, monotone: true };
    if (info.nodeTerm.unsupported) return { reason: info.nodeTerm.unsupported, monotone: true };
    let reqs = this.requirements;
    if (info.hasRequirements) {
      const m = reqs.incompatibility(info.requirements, t.allowUndefined);
      if (m) return { reason: m, monotone: true };
      reqs = reqs.intersect(info.requirements);
      if (info.requirements.has(L.LabelTopologyZoneID)) reqs = zoneIdsAsZones(reqs, t.base.zoneIdOf);
    }
    const requests: Resources = { ...this.requests };
    let onlyBasic = true;
    for (const k in r) {
      requests[k] = (requests[k] ?? 0) + r[k];
      if (k !== 'cpu' && k !== 'memory' && k !== 'pods') onlyBasic = false;
    }
    let narrowed = false;
    if (info.hasTopology || groups.inverse.length > 0) {
      const podReqs = reqs;
      const domains = (k: string, narrowed?: ReadonlyMap<string, readonly string[]>) => {
        let q = podReqs;
        for (const [nk, values] of narrowed ?? []) if (nk !== k && nk !== L.LabelHostname) q = q.add(new Requirement(nk, false, new Set(values), false));
        return this.domainsWith(k, q);
      };
      const pinDomain = (k: string, values: readonly string[], narrowed: ReadonlyMap<string, readonly string[]>) =>
        this.pinDomainWith(k, values, podReqs, narrowed, requests);
      const spreadDomains = karpenterSpread ? (k: string, universe: ReadonlySet<string>) => spreadCandidates(k, universe, podReqs) : undefined;
      const launchable = (k: string, values: readonly string[], narrowed: ReadonlyMap<string, readonly string[]>) =>
        this.launchableWith(k, values, podReqs, narrowed, requests);
      const topo = ctx.topology.check(
        groups,
        { hostname: this.hostname, domains, pinDomain, launchable, spreadDomains, requirements: podReqs, taints: t.taints },
        info.strictRequirements,
      );
      if (!(topo instanceof Map)) return topo as TopologyFailure;
      for (const [k, values] of topo) {
        if (k === L.LabelHostname) continue;
        reqs = reqs.add(new Requirement(k, false, new Set(values), false));
        narrowed = true;
      }
    }
    const reqsChanged = reqs !== this.requirements;
    let options = this.options;
    let efficient = true;
    // Fast accept: every option still holds the claim, nothing else changed.
    const unchanged = candidates === this.options && !reqsChanged && onlyBasic && cpu <= this.minCpu && mem <= this.minMem && pods <= this.minPods;
    if (!unchanged) {
      const filter = reqsChanged ? typeFilter(reqs, t.typeKeys) : undefined;
      options = [];
      efficient = false;
      for (const o of candidates) {
        if (!fitsRoom(requests, o.room) || (filter && !typeMatches(o.type, filter, t.typeKeys, o.offerings))) continue;
        options.push(o);
        if (o.efficient) efficient = true;
      }
      if (options.length === 0) {
        const reason = this.pods.length === 0 ? this.explainNoType(info, reqs, requests) : 'no instance type can hold the claim with this pod';
        return { reason, monotone: !narrowed };
      }
      if (this.capped && !efficient) {
        return { reason: 'the claim is as large as an efficient instance type can be', monotone: !narrowed };
      }
      // Options keep the template's cheapest-first order, so options[0] is what the claim would
      // launch as. When a pod moves it to another type, compare what the claim's content costs
      // at each type's rate (rateOf): a pod that only fits types selling this shape dearer than
      // the types the claim had goes to another claim (a 2 GiB/vCPU claim overflowing
      // c6g.16xlarge's memory would otherwise land on m6g.16xlarge and idle 40 % of its memory;
      // a claim outgrowing m6g.16xlarge's memory would land on r6g.16xlarge and idle half of it).
      // Accelerator types are never efficient (template.ts markEfficient), so an uncapped claim is
      // weighed the same way: a second 1-GPU pod that would move a g4dn.2xlarge claim onto the
      // 4-GPU g4dn.12xlarge ($3.91/h, $1.96/h for two GPUs' share) opens a second g4dn.2xlarge
      // ($0.75/h each) instead.
      if (ctx.costPacking && this.pods.length > 0 && options[0] !== this.options[0]) {
        const before = bestRate(this.options, requests);
        const after = bestRate(options, requests);
        if (after > (1 + ShapeRateTolerance) * before) {
          return { reason: 'the pod would move the claim onto instance types that sell its shape dearer', monotone: !narrowed };
        }
      }
      // A claim that can launch into a reservation keeps it: a pod that would leave it only types
      // without a reserved offering goes elsewhere (KC nodeclaim.go `offeringsToReserve`, strict:
      // "satisfying updated nodeclaim constraints would remove all compatible reserved offering options").
      if (this.pods.length > 0 && options.length < this.options.length && templateHasReserved(t) && hasReserved(this.options) && !hasReserved(options)) {
        return { reason: 'the pod would remove all compatible reserved offerings from the claim', monotone: !narrowed };
      }
      if (ctx.strictMinValues && (reqsChanged || options.length < this.options.length)) {
        const m = unmetMinValues(options, reqs);
        if (m) return { reason: m, monotone: !narrowed };
      } else if (!ctx.strictMinValues && this.pods.length > 0 && options.length < this.options.length) {
        // minValuesPolicy BestEffort relaxes minValues when a claim is opened, to what its types
        // offer then; a pod joining an open claim must keep that many values (KC scheduler.go
        // `addToInflightNode` calls CanAdd without relaxing minValues).
        const m = unmetMinValues(options, reqs, this.options);
        if (m) return { reason: m, monotone: !narrowed };
      }
    }
    // Commit.
    const optionsChanged = options !== this.options && options.length !== this.options.length;
    this.requirements = reqs;
    this.options = options;
    this.requests = requests;
    this.pods.push(info);
    this.ports.push(...info.hostPorts);
    if (optionsChanged || reqsChanged) this.refresh();
    // Karpenter holds a new claim's largest option against the limits once, when it opens the
    // claim (KC scheduler.go `subtractMax` after the first pod), and gives nothing back as later
    // pods narrow it; cost-aware packing keeps the hold in step with the claim's options.
    if (t.remaining && (ctx.costPacking || this.pods.length === 1)) this.reserve();
    ctx.topology.record(info, groups.ownedAnti, this);
    const [bCpu, bMem, bPods] = this.capped ? [this.effCpu, this.effMem, this.effPods] : [this.maxCpu, this.maxMem, this.maxPods];
    if (bCpu - cpu < ctx.smallestCpu || bMem - mem < ctx.smallestMem || bPods - pods < 1) this.closed = true;
    return undefined;
  }

  /** Keeps the NodePool's remaining limits in step with the largest capacity the claim may still launch. */
  reserve(): void {
    const t = this.template;
    if (!t.remaining) return;
    const next: Resources = {};
    for (const k of Object.keys(t.remaining)) {
      let max = 0;
      for (const o of this.options) max = Math.max(max, k === 'nodes' ? 1 : (o.type.capacity[k] ?? 0));
      next[k] = max;
    }
    for (const k of Object.keys(t.remaining)) t.remaining[k] += (this.reserved[k] ?? 0) - next[k];
    this.reserved = next;
  }

  private explainNoType(info: PodInfo, reqs: Requirements, requests: Resources): string {
    const filter = typeFilter(reqs, this.template.typeKeys);
    const compatible = this.options.filter((o) => typeMatches(o.type, filter, this.template.typeKeys, o.offerings));
    if (compatible.length === 0) {
      return this.pods.length === 0
        ? `no instance type satisfies the requirements (${reqs.toString()})`
        : 'no instance type satisfies the requirements of the pods together';
    }
    for (const k in requests) {
      let max = -Infinity;
      for (const o of compatible) max = Math.max(max, o.room[k] ?? 0);
      if (requests[k] > max) {
        const what = this.pods.length === 0 ? `pod requests ${formatAmount(k, info.requests[k])}` : `requests ${formatAmount(k, requests[k])}`;
        return `no instance type has enough ${k} (${what}, the largest type leaves ${formatAmount(k, Math.max(0, max))} after daemonsets)`;
      }
    }
    return 'no instance type fits all the requests at once';
  }
}

/**
 * Karpenter's candidate domains for a zone or capacity-type spread on a claim (sorted): the values
 * of the group's domains `reqs` (the claim's with the pod's) allow, whether or not the claim's
 * types launch there; undefined for other keys (see {@link TopologyTarget.spreadDomains}).
 */
function spreadCandidates(key: string, universe: ReadonlySet<string>, reqs: Requirements): readonly string[] | undefined {
  if (key !== L.LabelTopologyZone && key !== L.LabelCapacityType) return undefined;
  const r = reqs.get(key);
  return [...universe].filter((v) => !r || r.has(v)).sort();
}

/**
 * Opens a new claim from a NodePool template for the pod: the pool must be usable, its taints
 * tolerated, its requirements compatible, its types within its remaining limits must meet its
 * minValues (policy Strict), and some of them must hold the pod. GPU / accelerator / metal types stay options only when nothing else can hold
 * the pod (KA filter.go exotic filter). `karpenterSpread`: a zone or capacity-type spread picks
 * its domain as Karpenter does, among every domain the requirements allow, and the pool refuses
 * the pod when its types do not launch there (see {@link TopologyTarget.spreadDomains}). `types`:
 * the template's types the claim may use (all by default; a claim split tries cheaper ones only).
 * @returns the claim holding the pod, or why the pool cannot launch one.
 */
export function openClaim(
  t: ClaimTemplate,
  hostname: string,
  info: PodInfo,
  groups: PodGroups,
  ctx: ClaimContext,
  karpenterSpread = false,
  types: TemplateType[] = t.types,
): SimClaim | Failure {
  if (t.unusable) return { reason: t.unusable, monotone: true };
  const taint = untoleratedTaint(t.taints, info.tolerations, info.toleratePreferNoSchedule);
  if (taint) return { reason: `did not tolerate taint ${formatTaint(taint)}`, monotone: true };
  if (info.nodeTerm.unsupported) return { reason: info.nodeTerm.unsupported, monotone: true };
  const m = t.requirements.incompatibility(info.requirements, t.allowUndefined);
  if (m) return { reason: m, monotone: true };
  const options = t.remaining ? types.filter((o) => t.withinLimits(o)) : types;
  if (options.length === 0) {
    // The limit no type fits under (memory can block while cpu still has room).
    const left = Object.entries(t.remaining ?? {});
    const over = (left.find(([k, v]) => t.types.every((o) => (k === 'nodes' ? 1 : (o.type.capacity[k] ?? 0)) > v)) ??
      left.find(([, v]) => v <= 0) ??
      left[0])[0];
    return {
      reason: `exceeds limits: nodepool ${t.name} has no room left under its ${over} limit (${formatAmount(over, t.limits?.[over] ?? 0)})`,
      monotone: true,
    };
  }
  // Under minValuesPolicy Strict, a pool whose types (within its limits) cannot meet its own
  // minValues launches nothing, and the pod goes on to the next pool: KC scheduler.go
  // `NewScheduler` drops such a template, and nodeclaim.go `filterInstanceTypesByRequirements`
  // leaves no option after a limit cut. `add` only re-checks minValues when a pod narrows the
  // options, so the starting set is checked here.
  if (ctx.strictMinValues) {
    const unmet = unmetMinValues(options, t.requirements);
    if (unmet) return { reason: unmet, monotone: true };
  }
  const claim = new SimClaim(t, hostname, t.requirements, options);
  const f = claim.add(info, groups, ctx, karpenterSpread);
  if (f) {
    if (t.remaining && /no instance type has enough/.test(f.reason) && options.length < t.types.length) {
      const probe = new SimClaim(t, 'limits-probe', t.requirements, t.types);
      if ((info.requests.cpu ?? 0) <= probe.maxCpu && (info.requests.memory ?? 0) <= probe.maxMem)
        return { reason: `exceeds limits: every instance type that fits is larger than what nodepool ${t.name} has left under its limits`, monotone: true };
    }
    return f;
  }
  claim.capped = ctx.costPacking && claim.options.some((o) => o.efficient);
  if (claim.options.some((o) => !o.exotic) && claim.options.some((o) => o.exotic)) {
    claim.options = claim.options.filter((o) => !o.exotic);
    claim.refresh();
    if (t.remaining) claim.reserve();
  }
  return claim;
}

const reservedByTemplate = new WeakMap<ClaimTemplate, boolean>();

/** Whether the template's types have any reserved offering (computed once per template: most have none). */
function templateHasReserved(t: ClaimTemplate): boolean {
  let v = reservedByTemplate.get(t);
  if (v === undefined) reservedByTemplate.set(t, (v = hasReserved(t.types)));
  return v;
}

/** Whether any of `options` has a reserved offering (template offerings are the available ones). */
function hasReserved(options: readonly TemplateType[]): boolean {
  for (const o of options) for (const x of o.offerings) if (x.capacityType === 'reserved') return true;
  return false;
}
