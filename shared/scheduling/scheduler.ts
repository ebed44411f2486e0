/**
 * The scheduling simulation: places pending pods on existing nodes and in-flight claims first,
 * then on new NodeClaims, NodePools tried by weight; preferences relaxed one at a time when a
 * pod fits nowhere. Follows Karpenter's `Scheduler.Solve`
 * (kubernetes-sigs/karpenter pkg/controllers/provisioning/scheduling/scheduler.go, queue.go,
 * nodeclaim.go, existingnode.go).
 *
 * Speed: pods that schedule identically share a signature; a node or claim that rejected a
 * signature for a reason that can only get worse (resources, requirements, taints, ports,
 * hostname topology, anti-affinity) is not tried again for that signature, and claims too full
 * for the smallest pending pod are closed. This keeps the run close to linear in pods.
 */
import type { Pod, Taint } from '../api/kube.ts';
import * as L from '../api/labels.ts';
import type { Resources } from '../api/quantity.ts';
import { Requirement, type Requirements } from '../api/requirements.ts';
import { MaxInstanceTypes, MaxLaunchInstanceTypes, planLaunch, unmetMinValues } from './launch.ts';
import { isDaemonSetPod, PodInfo, portsConflict } from './pod.ts';
import { podRequests } from './resources.ts';
import { formatTaint, untoleratedTaint } from './taints.ts';
import { listTypeKeys, poolTemplate } from './cache.ts';
import { ClaimTemplate, collectTypeKeys, typeFilter, typeMatches, type TemplateType } from './template.ts';
import { Topology, type PodGroups, type TopologyFailure, type TopologyGroup, type TopologyTarget } from './topology.ts';
import type { ExistingNode, NewNodeClaim, Placement, SchedulingInput, SchedulingResult, UnschedulablePod } from './types.ts';

interface Failure {
  reason: string;
  /** True when the target can never accept a pod with this signature later in the run. */
  monotone: boolean;
}

function fitsRoom(requests: Resources, room: Resources): boolean {
  for (const k in requests) if (requests[k] > (room[k] ?? 0)) return false;
  return true;
}

/**
 * How much dearer (fraction) than the best rate for a claim's shape an instance type may sell it
 * and still be launched for the claim under cost-aware packing (see {@link rateOf}).
 */
const ShapeRateTolerance = 0.02;

/**
 * What a claim's requests cost at a type's rate (USD/hour): the type's price times the largest
 * fraction of its room (cpu, memory, pods) the requests take. Equal to the price when the claim
 * fills the type exactly; comparing types by it compares how well each sells the claim's shape.
 */
function rateOf(t: TemplateType, requests: Resources): number {
  const f = Math.max((requests.cpu ?? 0) / Math.max(1, t.room.cpu ?? 0), (requests.memory ?? 0) / Math.max(1, t.room.memory ?? 0), (requests.pods ?? 0) / Math.max(1, t.room.pods ?? 0));
  return t.minPriceUsdPerHour * f;
}

function bestRate(types: readonly TemplateType[], requests: Resources): number {
  let best = Infinity;
  for (const t of types) {
    if (t.exotic) continue;
    const r = rateOf(t, requests);
    if (r < best) best = r;
  }
  return best;
}

function formatAmount(k: string, v: number): string {
  if (k === 'cpu') return `${v}m`;
  if (k === 'memory' || k === 'ephemeral-storage') return `${Math.round(v / 2 ** 20)}Mi`;
  return String(v);
}

/** An existing node or in-flight claim during the simulation. */
class SimNode implements TopologyTarget {
  readonly hostname: string;
  readonly room: Resources;
  readonly ports: string[] = [];
  readonly labels: Record<string, string>;
  readonly taints: Taint[];
  readonly requirements?: Requirements;

  constructor(readonly node: ExistingNode, pods: readonly Pod[]) {
    this.labels = node.labels;
    this.hostname = node.labels[L.LabelHostname] ?? node.name;
    this.taints = node.taints ?? [];
    this.requirements = node.requirements;
    this.room = { ...node.allocatable };
    for (const p of pods) {
      for (const [k, v] of Object.entries(podRequests(p.spec))) this.room[k] = (this.room[k] ?? 0) - v;
    }
  }

  domains(key: string): readonly string[] {
    if (key === L.LabelHostname) return [this.hostname];
    const v = this.labels[key];
    if (v !== undefined) return [v];
    const r = this.requirements?.get(key);
    if (r && !r.complement) return [...r.values];
    return [];
  }
}

/** A NodeClaim being packed. */
class SimClaim implements TopologyTarget {
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
    let maxCpu = -Infinity, maxMem = -Infinity, maxPods = -Infinity;
    let minCpu = Infinity, minMem = Infinity, minPods = Infinity;
    let effCpu = -Infinity, effMem = -Infinity, effPods = -Infinity;
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

  domainsWith(key: string, reqs: Requirements): readonly string[] {
    if (key === L.LabelHostname) return [this.hostname];
    const r = reqs.get(key);
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
}

/**
 * Sort order of the queue (KC queue.go `byCPUAndMemoryDescending`): priority, then CPU and
 * memory descending, pods with pod affinity after the others, then name. Cost-aware packing
 * then interleaves shapes within each priority ({@link balanceShapes}).
 */
function comparePods(): (a: PodInfo, b: PodInfo) => number {
  return (a, b) => {
    if (a.priority !== b.priority) return b.priority - a.priority;
    const cpu = (b.requests.cpu ?? 0) - (a.requests.cpu ?? 0);
    if (cpu !== 0) return cpu;
    const mem = (b.requests.memory ?? 0) - (a.requests.memory ?? 0);
    if (mem !== 0) return mem;
    const aff = (a.affinity.length > 0 ? 1 : 0) - (b.affinity.length > 0 ? 1 : 0);
    if (aff !== 0) return aff;
    return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
  };
}

/**
 * Cost-aware packing: reorders each priority level of the sorted queue so that pods with more
 * memory per cpu than the target ratio and pods with less alternate, keeping the running
 * memory:cpu ratio of the queue near the allocatable ratio of the instance type that sells the
 * whole batch cheapest (for a typical web/worker mix on c/m/r: m6g.16xlarge, 3.6 GiB/vCPU).
 * First-fit then fills claims with a mix that uses both the cpu and the memory of that type,
 * instead of cpu-heavy claims that idle the memory of general-purpose nodes and memory-heavy
 * claims on memory-optimised ones. Each half keeps its order (largest first, pod affinity last).
 */
function balanceShapes(queue: PodInfo[], templates: readonly ClaimTemplate[]): void {
  const pool = templates.find((t) => !t.unusable);
  if (!pool || queue.length < 2) return;
  const total: Resources = {};
  for (const info of queue) for (const k of ['cpu', 'memory', 'pods']) total[k] = (total[k] ?? 0) + (info.requests[k] ?? 0);
  if (!total.cpu || !total.memory) return;
  let best: TemplateType | undefined;
  let bestRate = Infinity;
  for (const t of pool.types) {
    if (t.exotic || !t.room.cpu || !t.room.memory) continue;
    const r = rateOf(t, total);
    if (r < bestRate) [best, bestRate] = [t, r];
  }
  if (!best) return;
  const target = best.room.memory! / best.room.cpu!;
  for (let start = 0; start < queue.length; ) {
    let end = start;
    while (end < queue.length && queue[end].priority === queue[start].priority) end++;
    const low: PodInfo[] = [];
    const high: PodInfo[] = [];
    for (let i = start; i < end; i++) {
      const r = queue[i].requests;
      ((r.memory ?? 0) > target * (r.cpu ?? 0) ? high : low).push(queue[i]);
    }
    let cpu = 0, mem = 0, li = 0, hi = 0;
    for (let i = start; i < end; i++) {
      const takeHigh = hi < high.length && (li >= low.length || mem < target * cpu);
      const next = takeHigh ? high[hi++] : low[li++];
      cpu += next.requests.cpu ?? 0;
      mem += next.requests.memory ?? 0;
      queue[i] = next;
    }
    start = end;
  }
}

/**
 * Decides where pending pods go: existing capacity, new NodeClaims, or nowhere (with reasons).
 * Pure and deterministic; never throws for bad pods (they come back unschedulable).
 */
export function solve(input: SchedulingInput): SchedulingResult {
  const settings = input.settings ?? {};
  const strictMinValues = (settings.minValuesPolicy ?? 'Strict') === 'Strict';
  const costPacking = (settings.packing ?? 'cost') === 'cost';
  const existing = input.existingNodes ?? [];
  const pools = [...input.nodePools].sort((a, b) => (b.spec.weight ?? 0) - (a.spec.weight ?? 0) || (a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0));
  const typeLists = pools.map((np) => input.instanceTypes(np));
  const cache = input.cache;
  const typeKeys = new Set<string>();
  for (const list of typeLists) for (const k of listTypeKeys(cache, list, (l) => collectTypeKeys([l]))) typeKeys.add(k);
  const templates = pools.map(
    (np, i) => new ClaimTemplate(np, poolTemplate(cache, np, typeLists[i], input.daemonSets ?? [], input.unavailableOfferings ?? [], typeKeys, settings.efficientPriceMargin), existing),
  );

  const unschedulable: UnschedulablePod[] = [];
  const placements: Placement[] = [];
  const infos: PodInfo[] = [];
  const infoCache = new Map<string, PodInfo>();
  for (const pod of input.pods) {
    if (isDaemonSetPod(pod)) {
      unschedulable.push({ pod, reasons: Object.fromEntries(templates.map((t) => [t.name, 'pod is owned by a DaemonSet and bound to its node; a new node cannot help it'])) });
      continue;
    }
    infos.push(new PodInfo(pod, input.volumes, settings.preferencePolicy === 'Ignore', infoCache));
  }

  // Domains that exist for topology spread: every zone / capacity type / type label value the
  // NodePools can launch, plus those of existing nodes.
  const universe = new Map<string, Set<string>>();
  const addDomain = (k: string, v: string) => {
    let s = universe.get(k);
    if (!s) universe.set(k, (s = new Set()));
    s.add(v);
  };
  const spreadKeys = new Set<string>();
  for (const info of infos) for (const s of info.activeSpreads) spreadKeys.add(s.key);
  const typeSpreadKeys = [...spreadKeys].filter((k) => k !== L.LabelTopologyZone && k !== L.LabelCapacityType && k !== L.LabelHostname);
  for (const t of templates) {
    for (const z of t.zones) addDomain(L.LabelTopologyZone, z);
    for (const c of t.capacityTypes) addDomain(L.LabelCapacityType, c);
    if (typeSpreadKeys.length === 0) continue;
    for (const tt of t.types) {
      for (const k of typeSpreadKeys) {
        const r = t.requirements.get(k);
        const v = k === L.LabelInstanceType ? tt.type.name : (tt.type.labels[k] ?? (r && !r.complement && r.values.size === 1 ? [...r.values][0] : undefined));
        if (v !== undefined) addDomain(k, v);
      }
    }
  }
  for (const n of existing) for (const k of [...spreadKeys, L.LabelTopologyZone, L.LabelCapacityType]) if (n.labels[k] !== undefined) addDomain(k, n.labels[k]);
  const topology = new Topology(universe);

  // Existing capacity and the pods already running there.
  const nodes: SimNode[] = [];
  const nodeByName = new Map<string, SimNode>();
  const boundByNode = new Map<string, Pod[]>();
  const seenBound = new Set<string>();
  const sortedExisting = [...existing].sort((a, b) => Number(!!a.launching) - Number(!!b.launching));
  for (const n of sortedExisting) {
    const pods = (n.pods ?? []).filter((p) => !seenBound.has(`${p.metadata.namespace}/${p.metadata.name}`));
    for (const p of pods) seenBound.add(`${p.metadata.namespace}/${p.metadata.name}`);
    boundByNode.set(n.name, [...pods]);
    const sim = new SimNode(n, pods);
    nodes.push(sim);
    nodeByName.set(n.name, sim);
  }
  for (const p of input.boundPods ?? []) {
    const k = `${p.metadata.namespace}/${p.metadata.name}`;
    if (seenBound.has(k) || !p.spec.nodeName || !nodeByName.has(p.spec.nodeName)) continue;
    seenBound.add(k);
    boundByNode.get(p.spec.nodeName)!.push(p);
  }
  // Register every group before counting, so counts are complete.
  // Pods with one signature share their groups.
  const groupsBySignature = new Map<string, PodGroups>();
  const groupsFor = (info: PodInfo): PodGroups => {
    let g = groupsBySignature.get(info.signature);
    if (!g) groupsBySignature.set(info.signature, (g = topology.groupsOf(info)));
    return g;
  };
  const groupsOf = new Map<PodInfo, PodGroups>();
  for (const info of infos) groupsOf.set(info, groupsFor(info));
  // Running pods count in the groups that select them; only those with required anti-affinity need parsing.
  const boundInfos: [{ namespace: string; labels: Record<string, string> }, TopologyGroup[], SimNode][] = [];
  for (const [name, pods] of boundByNode) {
    for (const p of pods) {
      const node = nodeByName.get(name)!;
      if (p.spec.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.length) {
        const bi = new PodInfo(p, input.volumes, true, infoCache);
        boundInfos.push([bi, groupsFor(bi).ownedAnti, node]);
      } else {
        boundInfos.push([{ namespace: p.metadata.namespace ?? 'default', labels: p.metadata.labels ?? {} }, [], node]);
      }
    }
  }
  if (!topology.empty) for (const [bi, owned, node] of boundInfos) topology.record(bi, owned, node);

  // Smallest pending pod: claims that cannot take it are closed.
  let smallestCpu = Infinity;
  let smallestMem = Infinity;
  for (const info of infos) {
    smallestCpu = Math.min(smallestCpu, info.requests.cpu ?? 0);
    smallestMem = Math.min(smallestMem, info.requests.memory ?? 0);
  }

  const claims: SimClaim[] = [];
  const skip = new Map<string, { node: number; claim: number }>();
  const openFailures = new Map<string, string>();
  let claimSeq = 0;

  const tryNode = (node: SimNode, info: PodInfo, groups: PodGroups): Failure | undefined => {
    if (node.node.unschedulable) return { reason: 'node is cordoned or being deleted', monotone: true };
    if (!fitsRoom(info.requests, node.room)) return { reason: 'not enough room', monotone: true };
    for (const p of info.hostPorts) if (node.ports.some((q) => portsConflict(p, q))) return { reason: `host port ${p} in use`, monotone: true };
    const taint = untoleratedTaint(node.taints, info.tolerations, info.toleratePreferNoSchedule);
    if (taint) return { reason: `did not tolerate taint ${formatTaint(taint)}`, monotone: true };
    const term = info.nodeTerm;
    if (term.nodeNames && !term.nodeNames.has(node.node.name)) return { reason: 'node affinity selects other nodes', monotone: true };
    if (node.requirements) {
      const m = node.requirements.incompatibility(info.requirements, templates[0]?.allowUndefined);
      if (m) return { reason: m, monotone: true };
    } else if (!info.requirements.matchesLabels(node.labels)) {
      return { reason: 'node labels do not match', monotone: true };
    }
    const topo = topology.check(groups, node);
    if (!(topo instanceof Map)) return topo;
    for (const [k, v] of Object.entries(info.requests)) node.room[k] = (node.room[k] ?? 0) - v;
    node.ports.push(...info.hostPorts);
    topology.record(info, groups.ownedAnti, node);
    placements.push({ pod: info.pod, node: node.node.name });
    return undefined;
  };

  const tryClaim = (claim: SimClaim, info: PodInfo, groups: PodGroups): Failure | undefined => {
    const t = claim.template;
    const r = info.requests;
    const cpu = (claim.requests.cpu ?? 0) + (r.cpu ?? 0);
    const mem = (claim.requests.memory ?? 0) + (r.memory ?? 0);
    const pods = (claim.requests.pods ?? 0) + (r.pods ?? 0);
    // A fresh claim skips the fast reject so the full check can explain.
    if (claim.pods.length > 0) {
      if (cpu > claim.maxCpu || mem > claim.maxMem || pods > claim.maxPods) return { reason: 'no instance type has enough room', monotone: true };
      if (claim.capped && (cpu > claim.effCpu || mem > claim.effMem || pods > claim.effPods)) return { reason: 'the claim is as large as an efficient instance type can be', monotone: true };
    }
    for (const p of info.hostPorts) if (claim.ports.some((q) => portsConflict(p, q))) return { reason: `host port ${p} in use`, monotone: true };
    const taint = untoleratedTaint(t.taints, info.tolerations, info.toleratePreferNoSchedule);
    if (taint) return { reason: `did not tolerate taint ${formatTaint(taint)}`, monotone: true };
    if (info.nodeTerm.unsupported) return { reason: info.nodeTerm.unsupported, monotone: true };
    let reqs = claim.requirements;
    if (info.hasRequirements) {
      const m = reqs.incompatibility(info.requirements, t.allowUndefined);
      if (m) return { reason: m, monotone: true };
      reqs = reqs.intersect(info.requirements);
    }
    let narrowed = false;
    if (info.hasTopology || groups.inverse.length > 0) {
      const podReqs = reqs;
      const topo = topology.check(groups, { hostname: claim.hostname, domains: (k) => claim.domainsWith(k, podReqs), requirements: podReqs, taints: t.taints });
      if (!(topo instanceof Map)) return topo as TopologyFailure;
      for (const [k, values] of topo) {
        if (k === L.LabelHostname) continue;
        reqs = reqs.add(new Requirement(k, false, new Set(values), false));
        narrowed = true;
      }
    }
    const requests: Resources = { ...claim.requests };
    let onlyBasic = true;
    for (const k in r) {
      requests[k] = (requests[k] ?? 0) + r[k];
      if (k !== 'cpu' && k !== 'memory' && k !== 'pods') onlyBasic = false;
    }
    const reqsChanged = reqs !== claim.requirements;
    let options = claim.options;
    let efficient = true;
    // Fast accept: every option still holds the claim, nothing else changed.
    const unchanged = !reqsChanged && onlyBasic && cpu <= claim.minCpu && mem <= claim.minMem && pods <= claim.minPods;
    if (!unchanged) {
      const filter = reqsChanged ? typeFilter(reqs, t.typeKeys) : undefined;
      options = [];
      efficient = false;
      for (const o of claim.options) {
        if (!fitsRoom(requests, o.room) || (filter && !typeMatches(o.type, filter, t.typeKeys, o.offerings))) continue;
        options.push(o);
        if (o.efficient) efficient = true;
      }
      if (options.length === 0) {
        const reason = claim.pods.length === 0 ? explainNoType(claim, info, reqs, requests) : 'no instance type can hold the claim with this pod';
        return { reason, monotone: !narrowed };
      }
      if (claim.capped && !efficient) {
        return { reason: 'the claim is as large as an efficient instance type can be', monotone: !narrowed };
      }
      // Options keep the template's cheapest-first order, so options[0] is what the claim would
      // launch as. When a pod moves it to another type, compare what the claim's content costs
      // at each type's rate (rateOf): a pod that only fits types selling this shape dearer than
      // the types the claim had goes to another claim (a 2 GiB/vCPU claim overflowing
      // c6g.16xlarge's memory would otherwise land on m6g.16xlarge and idle 40 % of its memory;
      // a claim outgrowing m6g.16xlarge's memory would land on r6g.16xlarge and idle half of it).
      if (claim.capped && claim.pods.length > 0 && options[0] !== claim.options[0]) {
        const before = bestRate(claim.options, requests);
        const after = bestRate(options, requests);
        if (after > (1 + ShapeRateTolerance) * before) {
          return { reason: 'the pod would move the claim onto instance types that sell its shape dearer', monotone: !narrowed };
        }
      }
      if (strictMinValues && (reqsChanged || options.length < claim.options.length)) {
        const m = unmetMinValues(options, reqs);
        if (m) return { reason: m, monotone: !narrowed };
      }
    }
    // Commit.
    const optionsChanged = options !== claim.options && options.length !== claim.options.length;
    claim.requirements = reqs;
    claim.options = options;
    claim.requests = requests;
    claim.pods.push(info);
    claim.ports.push(...info.hostPorts);
    if (optionsChanged || reqsChanged) claim.refresh();
    if (t.remaining) reserve(claim);
    topology.record(info, groups.ownedAnti, claim);
    const [bCpu, bMem, bPods] = claim.capped ? [claim.effCpu, claim.effMem, claim.effPods] : [claim.maxCpu, claim.maxMem, claim.maxPods];
    if (bCpu - cpu < smallestCpu || bMem - mem < smallestMem || bPods - pods < 1) claim.closed = true;
    return undefined;
  };

  /** Keeps the NodePool's remaining limits in step with the largest capacity the claim may still launch. */
  const reserve = (claim: SimClaim) => {
    const t = claim.template;
    if (!t.remaining) return;
    const next: Resources = {};
    for (const k of Object.keys(t.remaining)) {
      let max = 0;
      for (const o of claim.options) max = Math.max(max, k === 'nodes' ? 1 : (o.type.capacity[k] ?? 0));
      next[k] = max;
    }
    for (const k of Object.keys(t.remaining)) t.remaining[k] += (claim.reserved[k] ?? 0) - next[k];
    claim.reserved = next;
  };

  const explainNoType = (claim: SimClaim, info: PodInfo, reqs: Requirements, requests: Resources): string => {
    const filter = typeFilter(reqs, claim.template.typeKeys);
    const compatible = claim.options.filter((o) => typeMatches(o.type, filter, claim.template.typeKeys, o.offerings));
    if (compatible.length === 0) {
      return claim.pods.length === 0 ? `no instance type satisfies the requirements (${reqs.toString()})` : 'no instance type satisfies the requirements of the pods together';
    }
    for (const k in requests) {
      let max = -Infinity;
      for (const o of compatible) max = Math.max(max, o.room[k] ?? 0);
      if (requests[k] > max) {
        const what = claim.pods.length === 0 ? `pod requests ${formatAmount(k, info.requests[k])}` : `requests ${formatAmount(k, requests[k])}`;
        return `no instance type has enough ${k} (${what}, the largest type leaves ${formatAmount(k, Math.max(0, max))} after daemonsets)`;
      }
    }
    return 'no instance type fits all the requests at once';
  };

  const openClaim = (t: ClaimTemplate, info: PodInfo, groups: PodGroups): Failure | undefined => {
    if (t.unusable) return { reason: t.unusable, monotone: true };
    const taint = untoleratedTaint(t.taints, info.tolerations, info.toleratePreferNoSchedule);
    if (taint) return { reason: `did not tolerate taint ${formatTaint(taint)}`, monotone: true };
    if (info.nodeTerm.unsupported) return { reason: info.nodeTerm.unsupported, monotone: true };
    const m = t.requirements.incompatibility(info.requirements, t.allowUndefined);
    if (m) return { reason: m, monotone: true };
    const options = t.remaining ? t.types.filter((o) => t.withinLimits(o)) : t.types;
    if (options.length === 0) {
      // The limit no type fits under (memory can block while cpu still has room).
      const left = Object.entries(t.remaining ?? {});
      const over = (left.find(([k, v]) => t.types.every((o) => (k === 'nodes' ? 1 : (o.type.capacity[k] ?? 0)) > v)) ?? left.find(([, v]) => v <= 0) ?? left[0])[0];
      return { reason: `exceeds limits: nodepool ${t.name} has no room left under its ${over} limit (${formatAmount(over, t.limits?.[over] ?? 0)})`, monotone: true };
    }
    const claim = new SimClaim(t, `${t.name}-new-${++claimSeq}`, t.requirements, options);
    const f = tryClaim(claim, info, groups);
    if (f) {
      claimSeq--;
      if (t.remaining && /no instance type has enough/.test(f.reason) && options.length < t.types.length) {
        const probe = new SimClaim(t, 'limits-probe', t.requirements, t.types);
        if ((info.requests.cpu ?? 0) <= probe.maxCpu && (info.requests.memory ?? 0) <= probe.maxMem) return { reason: `exceeds limits: every instance type that fits is larger than what nodepool ${t.name} has left under its limits`, monotone: true };
      }
      return f;
    }
    claim.capped = costPacking && claim.options.some((o) => o.efficient);
    // GPU / accelerator / metal types only when nothing else can hold the pod (KA filter.go exotic filter).
    if (claim.options.some((o) => !o.exotic) && claim.options.some((o) => o.exotic)) {
      claim.options = claim.options.filter((o) => !o.exotic);
      claim.refresh();
      if (t.remaining) reserve(claim);
    }
    claims.push(claim);
    return undefined;
  };

  /** Tries every place for a pod; returns undefined when placed, else the reason per NodePool. */
  const schedule = (info: PodInfo): Record<string, string> | undefined => {
    const groups = groupsOf.get(info)!;
    const sig = info.signature;
    let s = skip.get(sig);
    if (!s) skip.set(sig, (s = { node: 0, claim: 0 }));
    let advance = true;
    for (let i = s.node; i < nodes.length; i++) {
      const f = tryNode(nodes[i], info, groups);
      if (!f) return undefined;
      if (advance && f.monotone) s.node = i + 1;
      else advance = false;
    }
    advance = true;
    for (let i = s.claim; i < claims.length; i++) {
      const c = claims[i];
      if (c.closed) {
        if (advance) s.claim = i + 1;
        continue;
      }
      const f = tryClaim(c, info, groups);
      if (!f) return undefined;
      if (advance && f.monotone) s.claim = i + 1;
      else advance = false;
    }
    const reasons: Record<string, string> = {};
    for (const t of templates) {
      // A pool without limits that refused this signature for a lasting reason refuses it again
      // (with limits, room comes back as other claims narrow their instance types).
      const known = openFailures.get(`${t.name}|${sig}`);
      if (known) {
        reasons[t.name] = known;
        continue;
      }
      const f = openClaim(t, info, groups);
      if (!f) return undefined;
      reasons[t.name] = f.reason;
      if (f.monotone && !t.remaining) openFailures.set(`${t.name}|${sig}`, f.reason);
    }
    return reasons;
  };

  // The queue: a failed pod is relaxed and retried; with nothing left to relax it is retried
  // only after some other pod was placed, and fails for good when nothing changed since its last try.
  const queue = [...infos].sort(comparePods());
  if (costPacking) balanceShapes(queue, templates);
  const lastFail = new Map<PodInfo, number>();
  let placedCount = 0;
  for (let head = 0; head < queue.length; head++) {
    const info = queue[head];
    const reasons = schedule(info);
    if (!reasons) {
      placedCount++;
      continue;
    }
    if (info.hasPreferences && info.relax()) {
      groupsOf.set(info, groupsFor(info));
      queue.push(info);
      continue;
    }
    if (lastFail.get(info) === placedCount) {
      unschedulable.push({ pod: info.pod, reasons });
      continue;
    }
    lastFail.set(info, placedCount);
    queue.push(info);
  }

  // Launch decisions.
  const newNodeClaims: NewNodeClaim[] = [];
  const maxTypes = settings.maxInstanceTypes ?? MaxInstanceTypes;
  const maxLaunch = settings.maxLaunchInstanceTypes ?? MaxLaunchInstanceTypes;
  for (const claim of claims) {
    if (claim.pods.length === 0) continue;
    const plan = planLaunch(claim.options, claim.requirements, maxTypes, maxLaunch, strictMinValues);
    if (plan.problem) {
      for (const p of claim.pods) unschedulable.push({ pod: p.pod, reasons: { [claim.template.name]: plan.problem } });
      continue;
    }
    const launchType = plan.launch[0];
    const requirements = claim.requirements.add(new Requirement(L.LabelInstanceType, false, new Set(plan.ordered.map((o) => o.type.name)), false));
    const requests: Resources = { ...claim.requests };
    for (const [k, v] of Object.entries(launchType.daemonOverhead)) requests[k] = (requests[k] ?? 0) + v;
    newNodeClaims.push({
      nodePool: claim.template.name,
      hostname: claim.hostname,
      requirements,
      instanceTypes: plan.ordered.map((o) => o.type),
      launchInstanceTypes: plan.launch.map((o) => o.type),
      requests,
      daemonSetRequests: { ...launchType.daemonOverhead },
      pods: claim.pods.map((p) => p.pod),
      labels: { ...claim.template.labels, ...claim.requirements.singleValueLabels() },
      taints: claim.template.taints,
      startupTaints: claim.template.startupTaints,
      capacityTypes: plan.capacityTypes,
      zones: plan.zones,
      priceUsdPerHour: plan.priceUsdPerHour,
    });
  }
  return { newNodeClaims, placements, unschedulable };
}
