/** The documented difference `topology-domain-ignores-claim-offerings` (index.ts lists them all). */
import { type Comparison, type Divergence, podKey } from '../compare.ts';
import {
  type Difference,
  LimitsExhausted,
  claimGroups,
  everyExtraPod,
  nodefleetDecision,
  pinnedDomain,
  samePodsNoDearer,
  withinLimitsKarpentersWay,
} from './helpers.ts';
import { LabelCapacityType, LabelTopologyZone } from '../../../shared/api/labels.ts';
import { OfferingKeys, type Seat, karpenterSpreadDomains, seatOf, skew, spreadCounts } from '../domains.ts';
import type { OracleOutput } from '../oracle.ts';
import { type ParityScenario, resolvedTypes, toSchedulingInput } from '../scenario.ts';
import type { Pod } from '../../../shared/api/kube.ts';
import { PodInfo, type SpreadSpec } from '../../../shared/scheduling/pod.ts';
import { comparePodsKarpenter } from '../../../shared/scheduling/queue.ts';
import { matchesSelector } from '../../../shared/api/label-selector.ts';
import { untoleratedTaint } from '../../../shared/scheduling/taints.ts';

type OracleClaim = OracleOutput['nodeClaims'][number];

/**
 * True when some instance type of Karpenter's claim `k` has an available offering with value `v`
 * on `key` (zone or capacity type), among `k`'s values on the other key; with `boundOwn`, also
 * among `k`'s own values on `key`. `types`: the scenario's types by name.
 */
function claimOffers(
  types: ReadonlyMap<string, { offerings: readonly { zone: string; capacityType: string; available: boolean }[] }>,
  k: OracleClaim,
  key: string,
  v: string,
  boundOwn: boolean,
): boolean {
  const zones = key === LabelTopologyZone && !boundOwn ? [] : (k.zones ?? []);
  const capacityTypes = key === LabelCapacityType && !boundOwn ? [] : (k.capacityTypes ?? []);
  return (k.instanceTypes ?? []).some((n) =>
    (types.get(n)?.offerings ?? []).some(
      (o) =>
        o.available &&
        (key === LabelTopologyZone ? o.zone : o.capacityType) === v &&
        (!capacityTypes.length || capacityTypes.includes(o.capacityType)) &&
        (!zones.length || zones.includes(o.zone)),
    ),
  );
}

/**
 * The in-flight-claim side of topology-domain-ignores-claim-offerings, for a `claims` or
 * `claim-shapes` divergence: both place the same pods, nodefleet for no more money, and its
 * claims are Karpenter's once each pod P of a set is moved from its Karpenter claim onto another
 * Karpenter claim K, where for each P: P has a zone or capacity-type spread; Karpenter pinned P
 * to a value v of that key (its claim's one value, or {@link karpenterPinAtTurn} over K's values,
 * for a pod that reached its claim after relaxing a preference); K is still open on the key (no single value), or
 * holds a single value that a replica of P queued after P may have given it (parity seed 11,
 * path 380); none of K's instance types is offered in v (of K's capacity types for a zone, K's
 * zones for a capacity type, and K's own values while it is open), so Karpenter, pinning P to v,
 * could not add it to K; nodefleet put P on a claim with K's
 * pods, outside v, and its spread
 * over nodefleet's placement is within maxSkew over Karpenter's domains. Pods identical but for
 * their name ({@link replicaOf}) count as the same pod when the claims are compared.
 */
function joinedOpenClaimWhereOffered(d: Divergence, s: ParityScenario, karpenter: OracleOutput, c: Comparison): boolean {
  const decided = samePodsNoDearer(d, s, c, ['claims', 'claim-shapes']);
  if (!decided) return false;
  const { result, seats: all } = decided;
  const types = new Map(resolvedTypes(s).map((t) => [t.name, t]));
  const kClaimOf = (key: string) => karpenter.nodeClaims.find((k) => (k.pods ?? []).includes(key));
  const values = (k: OracleClaim, key: string) => (key === LabelTopologyZone ? k.zones : k.capacityTypes) ?? [];
  // K's own values on the key bound the offerings while K is open on it. A single value bounds
  // them too, unless a replica of P queued after P (identical but for its name, later in the
  // scenario) is on K: then it may have pinned K after P was refused (parity seed 11, path 380).
  const replica = replicaOf(s);
  const order = new Map(s.pods.map((p, i) => [podKey(p), i]));
  const pinnedLater = (k: OracleClaim, p: string) =>
    (k.pods ?? []).some((x) => x !== p && replica(x) === replica(p) && (order.get(x) ?? -1) > (order.get(p) ?? Infinity));
  const offeredIn = (k: OracleClaim, key: string, v: string) => claimOffers(types, k, key, v, values(k, key).length > 1);
  const moved = new Map<string, OracleClaim>();
  for (const claim of result.newNodeClaims) {
    const keys = claim.pods.map(podKey);
    for (const pod of claim.pods) {
      const from = kClaimOf(podKey(pod));
      const seat = seatOf(all, podKey(pod));
      if (!from || !seat) continue;
      const to = karpenter.nodeClaims.find((k) => k !== from && (k.pods ?? []).length > 0 && (k.pods ?? []).every((p) => keys.includes(p)));
      if (!to) continue;
      const ok = new PodInfo(pod).spreads.some((sp) => {
        if (!OfferingKeys.has(sp.key)) return false;
        if (values(to, sp.key).length === 1 && !pinnedLater(to, podKey(pod))) return false;
        // The value Karpenter pinned P to: its own claim's one value, or, for a pod that reached
        // that claim only after relaxing a preference, the least-populated domain of K's values
        // when P's turn came (parity seed 15, path 981).
        const own = values(from, sp.key);
        const pins = new Set([
          ...(own.length === 1 ? own : []),
          ...[karpenterPinAtTurn(s, karpenter, pod, sp, values(to, sp.key))].filter((v) => v !== undefined),
        ]);
        if (![...pins].some((v) => !offeredIn(to, sp.key, v) && seat.labels[sp.key] !== v)) return false;
        const counts = spreadCounts(pod, sp, all);
        return !!counts && skew(counts, karpenterSpreadDomains(s, pod, sp), sp.minDomains) <= sp.maxSkew;
      });
      if (ok) moved.set(podKey(pod), to);
    }
  }
  if (moved.size === 0) return false;
  // Identical replicas are interchangeable: which of them Karpenter left alone on a claim of its
  // own is a tie nodefleet's queue may break the other way (parity seed 9, path 434).
  const theirs = karpenter.nodeClaims.map((k) => [...(k.pods ?? []).filter((p) => !moved.has(p)), ...[...moved].filter(([, to]) => to === k).map(([p]) => p)]);
  return (
    claimGroups(theirs, replica) ===
    claimGroups(
      result.newNodeClaims.map((n) => n.pods.map(podKey)),
      replica,
    )
  );
}

/**
 * The domain Karpenter pins `pod` to for spread `sp` (zone or capacity type) when its turn comes
 * and it is tried on a claim open over `allowed` (empty: every domain): the least-populated of
 * Karpenter's spread domains among `allowed`, ties by name (the oracle's ascending order;
 * topologygroup.go nextDomainTopologySpread), counting the matching pods already bound and those
 * of Karpenter's decision that its queue takes before `pod` (queue.go byCPUAndMemoryDescending).
 * Under nodeTaintsPolicy Honor a pod counts only where the spreading pod tolerates the taints:
 * its node's, or its claim's NodePool template taints (the taints nodeclaim.go records it with;
 * topologynodefilter.go, every effect; parity seed 17, path 1771).
 * Only values the pod's one required node-affinity term admits are candidates (Karpenter adds the
 * pod's requirements to the claim's before it pins). Undefined with several such terms, or when
 * that count cannot be read from Karpenter's decision: a matching pod on a claim
 * not narrowed to one value, a spread that honours the pod's node affinity terms, or one that
 * honours taints where a counted seat has a PreferNoSchedule taint the pod does not tolerate
 * (Karpenter skips that pod, the seats' count would not).
 */
function karpenterPinAtTurn(s: ParityScenario, karpenter: OracleOutput, pod: Pod, sp: SpreadSpec, allowed: readonly string[]): string | undefined {
  if (sp.honorAffinity) return undefined;
  const info = new PodInfo(pod);
  const byKey = new Map(s.pods.map((p) => [podKey(p), p]));
  const before = (p: Pod | undefined): p is Pod => !!p && comparePodsKarpenter(new PodInfo(p), info) < 0;
  const nodes = new Map(s.nodes.map((n) => [n.metadata.name, n]));
  const onNode = (pod: Pod, name: string): Seat => ({ pod, labels: nodes.get(name)?.metadata.labels ?? {}, taints: nodes.get(name)?.spec?.taints ?? [] });
  const poolTaints = new Map(toSchedulingInput(s, 'karpenter').nodePools.map((np) => [np.metadata.name, np.spec.template.spec.taints ?? []]));
  const taken: Seat[] = s.pods.filter((p) => p.spec.nodeName).map((p) => onNode(p, p.spec.nodeName!));
  for (const x of karpenter.placements) {
    const p = byKey.get(x.pod);
    if (before(p)) taken.push(onNode(p, x.node));
  }
  for (const k of karpenter.nodeClaims) {
    const vs = (sp.key === LabelTopologyZone ? k.zones : k.capacityTypes) ?? [];
    for (const key of k.pods ?? []) {
      const p = byKey.get(key);
      if (before(p)) taken.push({ pod: p, labels: vs.length === 1 ? { [sp.key]: vs[0] } : {}, taints: poolTaints.get(k.nodePool) ?? [] });
    }
  }
  if (sp.honorTaints && taken.some((x) => untoleratedTaint(x.taints, info.tolerations, false) && !untoleratedTaint(x.taints, info.tolerations, true)))
    return undefined;
  const counts = spreadCounts(pod, sp, taken);
  if (!counts) return undefined;
  // Karpenter narrows the claim's requirements by the pod's own before it pins (nodeclaim.go
  // CanAdd adds them, topology.go AddRequirements reads nodeDomains from the result), so the pin is
  // a value the pod's required node affinity admits; with several terms it is unread.
  if (info.requiredTerms.length > 1) return undefined;
  const admits = (v: string) => info.requiredTerms[0]?.requirements.get(sp.key)?.has(v) ?? true;
  const domains = [...karpenterSpreadDomains(s, pod, sp)].filter((v) => (allowed.length === 0 || allowed.includes(v)) && admits(v)).sort();
  let best: string | undefined;
  for (const v of domains) if (best === undefined || (counts.get(v) ?? 0) < (counts.get(best) ?? 0)) best = v;
  return best;
}

/**
 * The limits form of topology-domain-ignores-claim-offerings, for one pod nodefleet placed and
 * Karpenter left pending because a NodePool limit was used up: nodefleet put it on a new claim
 * holding every pod of a Karpenter claim K, in a domain of a zone or capacity-type spread that is
 * within maxSkew over Karpenter's domains but not the least-populated one; none of K's instance
 * types (of K's other-key values) is offered in any least-populated domain, so Karpenter, pinning
 * the pod there, could add it to no claim and tried a new one, which the limit refused; and
 * nodefleet's claims stay within every limit counted Karpenter's way (parity seed 10, path 531).
 */
function limitAfterSpreadPinMissedClaims(s: ParityScenario, karpenter: OracleOutput, pod: Pod, seat: Seat, reason: string, all: readonly Seat[]): boolean {
  if (!reason.includes(LimitsExhausted) || seat.node !== undefined) return false;
  const decided = nodefleetDecision(s).result;
  const mine = decided.newNodeClaims.find((c) => c.pods.some((p) => podKey(p) === podKey(pod)));
  if (!mine || !withinLimitsKarpentersWay(s, decided)) return false;
  const keys = new Set(mine.pods.map(podKey));
  const k = karpenter.nodeClaims.find((x) => (x.pods ?? []).length > 0 && (x.pods ?? []).every((p) => keys.has(p)));
  if (!k) return false;
  const types = new Map(resolvedTypes(s).map((t) => [t.name, t]));
  const offered = (key: string, v: string) => claimOffers(types, k, key, v, false);
  return new PodInfo(pod).spreads.some((sp) => {
    const here = seat.labels[sp.key];
    const counts = OfferingKeys.has(sp.key) && here !== undefined ? spreadCounts(pod, sp, all) : undefined;
    if (!counts) return false;
    const domains = karpenterSpreadDomains(s, pod, sp);
    if (skew(counts, domains, sp.minDomains) > sp.maxSkew) return false;
    const before = (v: string) => (counts.get(v) ?? 0) - (v === here ? 1 : 0);
    const least = Math.min(...[...domains].map(before));
    const fewest = [...domains].filter((v) => before(v) === least);
    return fewest.length > 0 && !fewest.includes(here) && fewest.every((v) => !offered(sp.key, v));
  });
}

/**
 * Per pod (`namespace/name`), what it is apart from its name: its namespace, labels and spec.
 * Two pending replicas with the same value can swap places without changing a decision.
 */
function replicaOf(s: ParityScenario): (key: string) => string {
  const of = new Map(s.pods.map((p) => [podKey(p), JSON.stringify([p.metadata.namespace ?? 'default', p.metadata.labels ?? {}, p.spec])]));
  return (key) => of.get(key) ?? key;
}

/**
 * True when Karpenter left `pod` pending with `<key> DoesNotExist` for its spread `sp` (offering
 * key), where nodefleet put it on a new claim whose domain holds other pods its own required pod
 * affinity on the same key follows, within maxSkew over Karpenter's domains, and that domain is
 * not the spread's least-populated one (over nodefleet's final counts, without the pod):
 * Karpenter's spread took another (single) domain, the affinity this one, and the two emptied
 * each other.
 */
function spreadPinMissesAffinity(s: ParityScenario, pod: Pod, info: PodInfo, sp: SpreadSpec, seat: Seat, reason: string, all: readonly Seat[]): boolean {
  const here = seat.labels[sp.key];
  if (!OfferingKeys.has(sp.key) || here === undefined || !reason.includes(`${sp.key} DoesNotExist`)) return false;
  const followed = info.affinity.some(
    (a) =>
      a.key === sp.key &&
      matchesSelector(a.selector, pod.metadata.labels) &&
      all.some((x) => x !== seat && matchesSelector(a.selector, x.pod.metadata.labels) && x.labels[a.key] === here),
  );
  if (!followed) return false;
  const counts = spreadCounts(pod, sp, all);
  if (!counts) return false;
  const domains = karpenterSpreadDomains(s, pod, sp);
  const least = Math.min(...[...domains].map((v) => counts.get(v) ?? 0));
  return skew(counts, domains, sp.minDomains) <= sp.maxSkew && (counts.get(here) ?? 0) - 1 > least;
}

export const TopologyDomainIgnoresClaimOfferings: Difference = {
  id: 'topology-domain-ignores-claim-offerings',
  reason:
    'Karpenter v1.15 narrows a claim to one domain for a topology spread (the least-populated) or a self-selecting ' +
    "pod affinity (the first) whether or not the claim's instance types are offered there; it then finds no type, " +
    "and the pod stays pending or opens a claim of its own. nodefleet chooses among the domains the claim's types " +
    'are offered in, within maxSkew, where kube-scheduler binds the pod.',
  cases: [
    'parity/spread-domain-where-the-claim-launches.yaml',
    'parity/spread-inflight-claims-least-populated-domain-first.yaml',
    'parity/spread-replica-joins-open-claim-where-offered.yaml',
    'parity/spread-pod-joins-claim-pinned-later.yaml',
    'parity/spread-relaxed-pod-pinned-where-open-claim-not-offered.yaml',
    'parity/spread-honor-taints-pod-pinned-where-open-claim-not-offered.yaml',
    'parity/spread-pin-misses-claims-then-limit.yaml',
    'parity/spread-with-affinity-where-the-claim-launches.yaml',
  ],
  explains: (d, s, karpenter, c) =>
    everyExtraPod(d, s, karpenter, (pod, seat, reason, all) => {
      if (!reason.includes('no instance type')) return false;
      const info = new PodInfo(pod);
      const spread = info.spreads.some((sp) => {
        const pinned = OfferingKeys.has(sp.key) ? pinnedDomain(reason, sp.key) : undefined;
        const counts = pinned !== undefined && seat.labels[sp.key] !== pinned ? spreadCounts(pod, sp, all) : undefined;
        return !!counts && skew(counts, karpenterSpreadDomains(s, pod, sp), sp.minDomains) <= sp.maxSkew;
      });
      const affinity = info.affinity.some((a) => {
        const pinned = OfferingKeys.has(a.key) ? pinnedDomain(reason, a.key) : undefined;
        const here = seat.labels[a.key];
        if (pinned === undefined || here === undefined || here === pinned || !matchesSelector(a.selector, pod.metadata.labels)) return false;
        return all.every((x) => !matchesSelector(a.selector, x.pod.metadata.labels) || x.labels[a.key] === here);
      });
      const againstAffinity = seat.node === undefined && info.spreads.some((sp) => spreadPinMissesAffinity(s, pod, info, sp, seat, reason, all));
      return spread || affinity || againstAffinity;
    }) ||
    everyExtraPod(d, s, karpenter, (pod, seat, reason, all) => limitAfterSpreadPinMissedClaims(s, karpenter, pod, seat, reason, all)) ||
    joinedOpenClaimWhereOffered(d, s, karpenter, c),
};
