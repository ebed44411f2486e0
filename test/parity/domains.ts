/**
 * Topology domains two ways, for the documented differences (differences.ts) that hinge on them:
 * as Karpenter v1.15 counts them, and as nodes can really carry them; plus the per-domain pod
 * counts a nodefleet decision leaves, to check a spread or affinity after the fact.
 *
 * Karpenter's rule (facts from pkg/controllers/provisioning/scheduling/topology.go
 * `buildDomainGroups` and `countDomains`, topologydomaingroup.go `ForEachDomain`): per NodePool
 * and per instance type of the cloud provider, the NodePool's requirements and labels are
 * intersected with the type's requirements key by key, and every value left on the topology key
 * is a domain — a type that another requirement of the NodePool excludes (its family, its cpu)
 * still adds its zones; then every value of the NodePool's own `In` requirement on the key is a
 * domain, offered or not. With nodeTaintsPolicy Honor a domain counts only through a NodePool
 * whose taints the pod tolerates. A spread group adds the values of existing nodes that pass its
 * node filter; an inverse anti-affinity group (the one a pending pod with required anti-affinity
 * owns) adds none.
 */
import type { Pod, Taint, Toleration } from '../../shared/api/kube.ts';
import { LabelCapacityType, LabelInstanceType, LabelTopologyZone } from '../../shared/api/labels.ts';
import { Requirements, type RequirementSpec } from '../../shared/api/requirements.ts';
import type { InstanceType } from '../../shared/catalog/types.ts';
import type { SchedulingResult } from '../../shared/scheduling/index.ts';
import { PodInfo, type SpreadSpec } from '../../shared/scheduling/pod.ts';
import { matchesSelector } from '../../shared/api/label-selector.ts';
import { untoleratedTaint } from '../../shared/scheduling/taints.ts';
import type { NamespaceScope } from '../../shared/scheduling/topology.ts';
import { resolvedTypes, type ParityScenario } from './scenario.ts';
import { podKey } from './compare.ts';

/** The topology keys offerings define, the only ones these models cover. */
export const OfferingKeys: ReadonlySet<string> = new Set([LabelTopologyZone, LabelCapacityType]);

interface Pool {
  requirements: Requirements;
  taints: Taint[];
}

function pools(s: ParityScenario): Pool[] {
  return s.nodePools.map((np) => {
    const t = (np.spec as { template: { metadata?: { labels?: Record<string, string> }; spec: { requirements?: RequirementSpec[]; taints?: Taint[] } } })
      .template;
    return {
      requirements: Requirements.fromSpecs(t.spec.requirements ?? []).intersect(Requirements.fromLabels(t.metadata?.labels ?? {})),
      taints: t.spec.taints ?? [],
    };
  });
}

/** The values of an offering key (zone, capacity type) among a type's available offerings. */
function offeringValues(t: InstanceType, key: string): string[] {
  return t.offerings.filter((o) => o.available).map((o) => (key === LabelTopologyZone ? o.zone : o.capacityType));
}

/**
 * Karpenter's domains of `key` (zone or capacity type) from the NodePools, before existing nodes
 * are added. `tolerations`: the pod's, for nodeTaintsPolicy Honor; undefined counts every NodePool.
 */
export function karpenterPoolDomains(s: ParityScenario, key: string, tolerations?: readonly Toleration[]): Set<string> {
  const out = new Set<string>();
  const types = resolvedTypes(s);
  for (const p of pools(s)) {
    if (tolerations && untoleratedTaint(p.taints, tolerations, true)) continue;
    const r = p.requirements.get(key);
    for (const t of types) for (const v of offeringValues(t, key)) if (!r || r.has(v)) out.add(v);
    if (r && !r.complement) for (const v of r.values) out.add(v);
  }
  return out;
}

/**
 * The values of `key` a node can carry: those of existing nodes, and those of the available
 * offerings of the types each NodePool admits (every NodePool requirement on a key the types
 * define accepts the type), taints aside.
 *
 * With `pod` and its `spread`: only the nodes that spread counts, as kube-scheduler does (its
 * node filter): under nodeAffinityPolicy Honor, a node or would-be node (NodePool requirements and
 * labels, the type's labels, the offering's zone and capacity type) that matches one of the pod's
 * required node selector terms; under nodeTaintsPolicy Honor, one whose taints the pod tolerates.
 * A domain only nodes the spread never counts offer is no domain of that spread (parity seed 2,
 * path 1260: an arm64 node-selector against an amd64 NodePool; seed 3, path 1914: a `team
 * DoesNotExist` term against the only NodePool offering spot, labelled team=blue).
 */
export function reachableDomains(s: ParityScenario, key: string, pod?: Pod, spread?: SpreadSpec): Set<string> {
  const info = pod && spread ? new PodInfo(pod) : undefined;
  const terms = info && spread?.honorAffinity ? (info.nodeFilterTerms ?? []) : undefined;
  const tolerations = info && spread?.honorTaints ? info.tolerations : undefined;
  const counted = (taints: readonly Taint[] | undefined) => !tolerations || !untoleratedTaint(taints, tolerations, true);
  const out = new Set<string>();
  for (const n of s.nodes) {
    const labels = n.metadata.labels ?? {};
    const v = labels[key];
    if (v === undefined || !counted(n.spec?.taints)) continue;
    if (terms && !terms.some((t) => t.matchesLabels(labels))) continue;
    out.add(v);
  }
  const types = resolvedTypes(s);
  const typeKeys = new Set([LabelInstanceType, ...types.flatMap((t) => Object.keys(t.labels))]);
  for (const p of pools(s)) {
    if (!counted(p.taints)) continue;
    const zone = p.requirements.get(LabelTopologyZone);
    const ct = p.requirements.get(LabelCapacityType);
    const labelReqs = p.requirements.all().filter((r) => typeKeys.has(r.key) && !OfferingKeys.has(r.key));
    for (const t of types) {
      if (!labelReqs.every((r) => r.matches(r.key === LabelInstanceType ? t.name : t.labels[r.key]))) continue;
      for (const o of t.offerings) {
        if (!o.available || (zone && !zone.has(o.zone)) || (ct && !ct.has(o.capacityType))) continue;
        if (terms) {
          const node = p.requirements.intersect(
            Requirements.fromLabels({ ...t.labels, [LabelInstanceType]: t.name, [LabelTopologyZone]: o.zone, [LabelCapacityType]: o.capacityType }),
          );
          if (!terms.some((f) => node.incompatibility(f) === undefined)) continue;
        }
        out.add(key === LabelTopologyZone ? o.zone : o.capacityType);
      }
    }
  }
  return out;
}

/** Where a pod sits in a decision: the labels and taints of its node or new claim (claims: single-valued labels only). */
export interface Seat {
  pod: Pod;
  /** The existing node, when not a new claim. */
  node?: string;
  labels: Record<string, string>;
  taints: readonly Taint[];
}

/** Every bound pod and every pod the decision places, with its node's or claim's labels. */
export function seats(s: ParityScenario, r: SchedulingResult): Seat[] {
  const nodes = new Map(s.nodes.map((n) => [n.metadata.name, n]));
  const onNode = (pod: Pod, name: string): Seat => ({
    pod,
    node: name,
    labels: nodes.get(name)?.metadata.labels ?? {},
    taints: nodes.get(name)?.spec?.taints ?? [],
  });
  const out: Seat[] = [];
  for (const p of s.pods) if (p.spec.nodeName) out.push(onNode(p, p.spec.nodeName));
  for (const p of r.placements) out.push(onNode(p.pod, p.node));
  for (const c of r.newNodeClaims) {
    const labels = { ...c.labels };
    if (labels[LabelTopologyZone] === undefined && c.zones.length === 1) labels[LabelTopologyZone] = c.zones[0];
    if (labels[LabelCapacityType] === undefined && c.capacityTypes.length === 1) labels[LabelCapacityType] = c.capacityTypes[0];
    for (const p of c.pods) out.push({ pod: p, labels, taints: c.taints });
  }
  return out;
}

/** The seat of the pod `namespace/name` in a decision, if placed. */
export function seatOf(all: readonly Seat[], key: string): Seat | undefined {
  return all.find((x) => !x.pod.spec.nodeName && podKey(x.pod) === key);
}

/** True when `pod` is in the namespaces `ns` of a spread or (anti-)affinity term. */
export const inScope = (ns: NamespaceScope, pod: Pod) => ns === 'all' || ns.has(pod.metadata.namespace ?? 'default');

/**
 * Pods the spread of `pod` counts per domain of its key after a decision, over seats that pass
 * the spread's node filter (nodeAffinityPolicy, nodeTaintsPolicy). Undefined when a counted pod
 * sits on a claim whose domain is not yet one value.
 */
export function spreadCounts(pod: Pod, spread: SpreadSpec, all: readonly Seat[]): Map<string, number> | undefined {
  const info = new PodInfo(pod);
  const counts = new Map<string, number>();
  for (const x of all) {
    if (!inScope(spread.namespaces, x.pod) || !matchesSelector(spread.selector, x.pod.metadata.labels)) continue;
    if (spread.honorAffinity && !(info.nodeFilterTerms ?? []).some((t) => t.matchesLabels(x.labels))) continue;
    if (spread.honorTaints && untoleratedTaint(x.taints, info.tolerations, true)) continue;
    const d = x.labels[spread.key];
    if (d === undefined) return undefined;
    counts.set(d, (counts.get(d) ?? 0) + 1);
  }
  return counts;
}

/**
 * Karpenter's domains for the spread of `pod`: the NodePools' (through those whose taints the pod
 * tolerates under nodeTaintsPolicy Honor) and those of existing nodes that pass the spread's node filter.
 */
export function karpenterSpreadDomains(s: ParityScenario, pod: Pod, spread: SpreadSpec): Set<string> {
  const info = new PodInfo(pod);
  const out = karpenterPoolDomains(s, spread.key, spread.honorTaints ? info.tolerations : undefined);
  for (const n of s.nodes) {
    const labels = n.metadata.labels ?? {};
    if (labels[spread.key] === undefined) continue;
    if (spread.honorAffinity && !(info.nodeFilterTerms ?? []).some((t) => t.matchesLabels(labels))) continue;
    if (spread.honorTaints && untoleratedTaint(n.spec?.taints, info.tolerations, true)) continue;
    out.add(labels[spread.key]);
  }
  return out;
}

/**
 * kube-scheduler's skew of final counts over `domains`: the largest count minus the smallest
 * (0 when there are fewer domains than minDomains). Domains holding pods count even if not listed.
 */
export function skew(counts: ReadonlyMap<string, number>, domains: ReadonlySet<string>, minDomains?: number): number {
  const all = [...new Set([...domains, ...counts.keys()])];
  if (all.length === 0) return 0;
  const max = Math.max(...all.map((d) => counts.get(d) ?? 0));
  const min = minDomains !== undefined && all.length < minDomains ? 0 : Math.min(...all.map((d) => counts.get(d) ?? 0));
  return max - min;
}
