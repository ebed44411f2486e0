/** The documented difference `inverse-anti-affinity-misses-node-domains` (index.ts lists them all). */
import { type Comparison, type Divergence, podKey } from '../compare.ts';
import {
  type Difference,
  claimGroups,
  decidesAsKarpenter,
  everyExtraPod,
  nodefleetDecision,
  onNodes,
  placesKarpentersPods,
  samePodsNoDearer,
} from './helpers.ts';
import { OfferingKeys, type Seat, karpenterPoolDomains, seatOf } from '../domains.ts';
import type { OracleOutput } from '../oracle.ts';
import { type ParityScenario, toSchedulingInput } from '../scenario.ts';
import type { Pod } from '../../../shared/api/kube.ts';
import { PodInfo } from '../../../shared/scheduling/pod.ts';
import { matchesSelector } from '../../../shared/api/label-selector.ts';
import { solve } from '../../../shared/scheduling/index.ts';

/**
 * True when `seat` is an existing node in a domain no NodePool lists (on an offering key) of a
 * required anti-affinity term of `pod` that selects the pod itself, and no other pod the term
 * selects sits in that domain (over every seat of the decision, `all`).
 */
function aloneOutsidePoolDomains(s: ParityScenario, pod: Pod, seat: Seat, all: readonly Seat[]): boolean {
  return outsidePoolDomains(s, pod, seat, all).length > 0;
}

/** The domains (`key` = `value`) that make `seat` {@link aloneOutsidePoolDomains} for `pod`, one per such anti-affinity term. */
function outsidePoolDomains(s: ParityScenario, pod: Pod, seat: Seat, all: readonly Seat[]): { key: string; value: string }[] {
  if (seat.node === undefined) return [];
  const info = new PodInfo(pod);
  return info.anti.flatMap((a) => {
    const here = seat.labels[a.key];
    if (!OfferingKeys.has(a.key) || here === undefined || !matchesSelector(a.selector, pod.metadata.labels)) return [];
    // The group registers a NodePool's domains only when the pod tolerates its taints (an
    // anti-affinity group's node filter has no taint policy, so topologydomaingroup.go
    // ForEachDomain takes the Honor branch; parity seed 11, path 641).
    if (karpenterPoolDomains(s, a.key, info.tolerations).has(here)) return [];
    const alone = all.every((x) => x === seat || !matchesSelector(a.selector, x.pod.metadata.labels) || x.labels[a.key] !== here);
    return alone ? [{ key: a.key, value: here }] : [];
  });
}

/**
 * The `existing` / `claims` side of inverse-anti-affinity-misses-node-domains where the pods after
 * the one Karpenter kept off the node shifted too (parity seed 9, path 765: Karpenter put app-2-0
 * on another existing node, whose room then went to other pods): both place the same pods,
 * nodefleet for no more money, and once each pod nodefleet put on an existing node Karpenter did
 * not choose for it, where it is {@link aloneOutsidePoolDomains}, is kept out of that domain (a
 * required node affinity `key NotIn [domain]` added to every term: Karpenter's rule, nothing
 * more), nodefleet decides exactly as Karpenter did: the same pods on the same existing nodes
 * and the same pods together on new claims.
 */
function karpentersOnceKeptOutOfNodeDomains(d: Divergence, s: ParityScenario, karpenter: OracleOutput, c: Comparison): boolean {
  const decided = samePodsNoDearer(d, s, c, ['claims', 'claim-shapes', 'existing']);
  if (!decided) return false;
  const { result, seats: all } = decided;
  const theirNode = new Map(karpenter.placements.map((x) => [x.pod, x.node]));
  const kept = new Map<string, { key: string; value: string }[]>();
  for (const p of result.placements) {
    const key = podKey(p.pod);
    const seat = seatOf(all, key);
    if (!seat || theirNode.get(key) === p.node) continue;
    const domains = outsidePoolDomains(s, p.pod, seat, all);
    if (domains.length > 0) kept.set(key, domains);
  }
  if (kept.size === 0) return false;
  const pods = s.pods.map((p) => {
    const domains = kept.get(podKey(p));
    return domains ? keptOutOf(p, domains) : p;
  });
  return decidesAsKarpenter(solve(toSchedulingInput({ ...s, pods }, 'karpenter')), karpenter);
}

/**
 * The `extra-placed` side of inverse-anti-affinity-misses-node-domains where the pods nodefleet
 * places more are not only those on the node outside the pool domains: a replica whose sibling
 * nodefleet put there, instead of in a pool domain as Karpenter did, finds a pool domain free
 * (parity seed 14, path 8: app-2-0 on node-0 in us-east-1c, so app-2-2 runs in us-east-1b, where
 * Karpenter left it pending). Explained only when nodefleet put some pod on an existing node where
 * it is {@link aloneOutsidePoolDomains}, and, with every pending pod that repels its own kind on a
 * zone or capacity type kept out of the existing nodes' domains outside the pools it tolerates
 * (Karpenter's rule, nothing more), nodefleet's `packing: karpenter` places exactly the pods
 * Karpenter placed.
 */
function placedOnceKeptOutOfNodeDomains(d: Divergence, s: ParityScenario, karpenter: OracleOutput): boolean {
  if (d.kind !== 'extra-placed') return false;
  const { result, seats: all } = nodefleetDecision(s);
  if (
    !result.placements.some((p) => {
      const seat = seatOf(all, podKey(p.pod));
      return !!seat && aloneOutsidePoolDomains(s, p.pod, seat, all);
    })
  )
    return false;
  // Karpenter's rule for every pending pod that repels its own kind on an offering key: no
  // existing node's domain outside the pools it tolerates.
  let changed = false;
  const pods = s.pods.map((p) => {
    if (p.spec.nodeName) return p;
    const info = new PodInfo(p);
    const domains = info.anti.flatMap((a) => {
      if (!OfferingKeys.has(a.key) || !matchesSelector(a.selector, p.metadata.labels)) return [];
      const pool = karpenterPoolDomains(s, a.key, info.tolerations);
      const outside = new Set(s.nodes.map((n) => n.metadata.labels?.[a.key]).filter((v): v is string => v !== undefined && !pool.has(v)));
      return [...outside].map((value) => ({ key: a.key, value }));
    });
    if (domains.length === 0) return p;
    changed = true;
    return keptOutOf(p, domains);
  });
  if (!changed) return false;
  return placesKarpentersPods(solve(toSchedulingInput({ ...s, pods }, 'karpenter')), karpenter);
}

/** `pod` with a required node affinity `key NotIn [value]` for each of `domains`, added to every term (or as the one term). */
function keptOutOf(pod: Pod, domains: readonly { key: string; value: string }[]): Pod {
  const out = structuredClone(pod);
  const spec = out.spec as {
    affinity?: { nodeAffinity?: { requiredDuringSchedulingIgnoredDuringExecution?: { nodeSelectorTerms: { matchExpressions?: unknown[] }[] } } };
  };
  const exprs = domains.map((x) => ({ key: x.key, operator: 'NotIn', values: [x.value] }));
  const na = ((spec.affinity ??= {}).nodeAffinity ??= {});
  const req = (na.requiredDuringSchedulingIgnoredDuringExecution ??= { nodeSelectorTerms: [] });
  if (req.nodeSelectorTerms.length === 0) req.nodeSelectorTerms.push({ matchExpressions: exprs });
  else for (const t of req.nodeSelectorTerms) t.matchExpressions = [...(t.matchExpressions ?? []), ...exprs];
  return out;
}

/**
 * The `claims` / `existing` side of inverse-anti-affinity-misses-node-domains: both place the
 * same pods, nodefleet for no more money, and nodefleet's decision is Karpenter's once each pod
 * P of a non-empty set is moved from its Karpenter claim onto the existing node nodefleet chose,
 * where each P is {@link aloneOutsidePoolDomains} there.
 */
function movedOntoNodesOutsidePoolDomains(d: Divergence, s: ParityScenario, karpenter: OracleOutput, c: Comparison): boolean {
  const decided = samePodsNoDearer(d, s, c, ['claims', 'claim-shapes', 'existing']);
  if (!decided) return false;
  const { result, seats: all } = decided;
  const onClaimInKarpenters = new Set(karpenter.nodeClaims.flatMap((k) => k.pods ?? []));
  const moved = new Map<string, string>();
  for (const p of result.placements) {
    const key = podKey(p.pod);
    const seat = seatOf(all, key);
    if (onClaimInKarpenters.has(key) && seat && aloneOutsidePoolDomains(s, p.pod, seat, all)) moved.set(key, p.node);
  }
  if (moved.size === 0) return false;
  const theirPlacements = [...karpenter.placements.map((x): [string, string] => [x.pod, x.node]), ...moved];
  if (onNodes(theirPlacements) !== onNodes(result.placements.map((x): [string, string] => [podKey(x.pod), x.node]))) return false;
  return (
    claimGroups(karpenter.nodeClaims.map((k) => (k.pods ?? []).filter((p) => !moved.has(p)))) ===
    claimGroups(result.newNodeClaims.map((n) => n.pods.map(podKey)))
  );
}

export const InverseAntiAffinityMissesNodeDomains: Difference = {
  id: 'inverse-anti-affinity-misses-node-domains',
  reason:
    'A pending pod with self-selecting required pod anti-affinity gets its domains in Karpenter v1.15 only from the' +
    ' NodePools whose taints it tolerates, never from existing nodes, so an existing node in another domain is ' +
    'never a place for it. kube-scheduler binds it there, and nodefleet places it there; the pods after it shift ' +
    'accordingly.',
  cases: [
    'parity/anti-affinity-on-node-outside-pool-zones.yaml',
    'parity/anti-affinity-node-in-zone-of-untolerated-pool.yaml',
    'parity/anti-affinity-node-outside-pool-zones-other-node.yaml',
    'parity/anti-affinity-node-outside-pool-zones-frees-replica-zone.yaml',
  ],
  explains: (d, s, karpenter, c) =>
    everyExtraPod(d, s, karpenter, (pod, seat, _reason, all) => aloneOutsidePoolDomains(s, pod, seat, all)) ||
    placedOnceKeptOutOfNodeDomains(d, s, karpenter) ||
    movedOntoNodesOutsidePoolDomains(d, s, karpenter, c) ||
    karpentersOnceKeptOutOfNodeDomains(d, s, karpenter, c),
};
