/** The documented difference `zone-anti-affinity-pins-claim` (index.ts lists them all). */
import { type Comparison, type Divergence, podKey } from '../compare.ts';
import {
  type Difference,
  LimitsExhausted,
  claimGroups,
  decidesAsKarpenter,
  everyExtraPod,
  nodefleetDecision,
  onNodes,
  pinnedDomain,
  placesKarpentersPods,
  samePodsNoDearer,
  withinLimitsKarpentersWay,
} from './helpers.ts';
import { LabelTopologyZone } from '../../../shared/api/labels.ts';
import { OfferingKeys, type Seat, karpenterPoolDomains } from '../domains.ts';
import type { OracleOutput } from '../oracle.ts';
import { type ParityScenario, toSchedulingInput } from '../scenario.ts';
import type { Pod } from '../../../shared/api/kube.ts';
import { PodInfo } from '../../../shared/scheduling/pod.ts';
import { comparePodsKarpenter } from '../../../shared/scheduling/queue.ts';
import { matchesSelector } from '../../../shared/api/label-selector.ts';
import { solve } from '../../../shared/scheduling/index.ts';

const AntiAffinityAllDomains = 'unsatisfiable topology constraint for pod anti-affinity';

/** Karpenter's reasons for the pods named in an `extra-placed` divergence. */
function karpenterReasons(d: Divergence, karpenter: OracleOutput): string[] {
  return karpenter.unschedulable.filter((u) => d.detail.includes(u.pod)).map((u) => Object.values(u.reasons).join('; '));
}

/**
 * True when `pod` has a required pod anti-affinity term on a zone or capacity type that selects
 * the pod itself, and Karpenter placed another pod that term selects on one of its new claims
 * (the claim whose domains blocked the pod in Karpenter's first pass).
 */
function repelledBySiblingOnClaim(s: ParityScenario, pod: Pod, karpenter: OracleOutput): boolean {
  const onClaims = new Set(karpenter.nodeClaims.flatMap((k) => k.pods ?? []));
  return new PodInfo(pod).anti.some(
    (a) =>
      OfferingKeys.has(a.key) &&
      matchesSelector(a.selector, pod.metadata.labels) &&
      s.pods.some((p) => p !== pod && onClaims.has(podKey(p)) && matchesSelector(a.selector, p.metadata.labels)),
  );
}

/**
 * The other pods of the limits form of zone-anti-affinity-pins-claim: true when nodefleet's
 * `packing: karpenter` decision on `s` without the replicas Karpenter left pending that repel
 * themselves ({@link repelledBySiblingOnClaim}) places exactly the pods Karpenter placed. Then the
 * room nodefleet found under the limit for the other pods it places more is the room those
 * replicas' claims left: pinned to a domain where only smaller types launch, they hold less of
 * the limit than the claim Karpenter opened in their place (parity seed 7, path 434).
 */
function roomLeftByRepelledReplicas(s: ParityScenario, karpenter: OracleOutput): boolean {
  const pending = new Set(karpenter.unschedulable.map((u) => u.pod));
  const replicas = new Set(s.pods.filter((p) => pending.has(podKey(p)) && repelledBySiblingOnClaim(s, p, karpenter)));
  if (replicas.size === 0) return false;
  return placesKarpentersPods(solve(toSchedulingInput({ ...s, pods: s.pods.filter((p) => !replicas.has(p)) }, 'karpenter')), karpenter);
}

/**
 * The `claims` side of zone-anti-affinity-pins-claim: both place the same pods, nodefleet for no
 * more money, and nodefleet's claims are Karpenter's once each replica P of a non-empty set is
 * taken off its nodefleet claim onto a claim of its own, where for each P: it repels a sibling on
 * a Karpenter claim on a zone or capacity type ({@link repelledBySiblingOnClaim}), Karpenter's
 * claim holds P alone, and nodefleet's holds other pods with it. The sibling's open claim blocked
 * every domain of the in-flight claims, so Karpenter opened one for P elsewhere; nodefleet's pin
 * left P a free domain on an in-flight claim (parity seed 13, path 815).
 */
function replicaAloneWhereClaimsBlocked(d: Divergence, s: ParityScenario, karpenter: OracleOutput, c: Comparison): boolean {
  const decided = samePodsNoDearer(d, s, c, ['claims', 'claim-shapes']);
  if (!decided) return false;
  const byKey = new Map(s.pods.map((p) => [podKey(p), p]));
  const alone = new Set<string>();
  for (const claim of decided.result.newNodeClaims) {
    if (claim.pods.length < 2) continue;
    for (const pod of claim.pods) {
      const key = podKey(pod);
      const theirs = karpenter.nodeClaims.find((k) => (k.pods ?? []).includes(key));
      const p = byKey.get(key);
      if (p && theirs && (theirs.pods ?? []).length === 1 && repelledBySiblingOnClaim(s, p, karpenter)) alone.add(key);
    }
  }
  if (alone.size === 0) return false;
  const mine = decided.result.newNodeClaims.flatMap((n) => {
    const keys = n.pods.map(podKey);
    return [keys.filter((k) => !alone.has(k)), ...keys.filter((k) => alone.has(k)).map((k) => [k])];
  });
  return claimGroups(mine) === claimGroups(karpenter.nodeClaims.map((k) => k.pods ?? []));
}

/**
 * The no-room form of zone-anti-affinity-pins-claim, for one pod nodefleet placed and Karpenter
 * left pending with "no instance type" and `<key> In [v]` (parity seed 17, path 737): the pod has
 * a required anti-affinity term on a zone or capacity type that selects the pod itself, Karpenter
 * put a pod that term selects on a new claim ({@link repelledBySiblingOnClaim}), and v is exactly
 * the one domain Karpenter's groups left the pod: its NodePools' domains of the key (through those
 * whose taints the pod tolerates, as the inverse group counts them) that the pod's one required
 * term admits, less every value of each Karpenter claim holding a pod the term selects (all of
 * them: topology.go Record blocks every domain such a claim could land in) and the value of each
 * node holding one (bound, or placed there by Karpenter). A claim with no value listed on the key
 * makes it unreadable (false). nodefleet put the pod outside v, in a domain its term admits and
 * no other pod the term selects holds.
 */
function pinnedToLastFreeDomain(s: ParityScenario, karpenter: OracleOutput, pod: Pod, seat: Seat, reason: string, all: readonly Seat[]): boolean {
  if (!reason.includes('no instance type') || !repelledBySiblingOnClaim(s, pod, karpenter)) return false;
  const info = new PodInfo(pod);
  if (info.requiredTerms.length !== 1) return false;
  const admitted = info.requiredTerms[0].requirements;
  const byKey = new Map(s.pods.map((p) => [podKey(p), p]));
  const nodes = new Map(s.nodes.map((n) => [n.metadata.name, n.metadata.labels ?? {}]));
  return info.anti.some((a) => {
    const v = OfferingKeys.has(a.key) ? pinnedDomain(reason, a.key) : undefined;
    const here = seat.labels[a.key];
    if (v === undefined || here === undefined || here === v || !matchesSelector(a.selector, pod.metadata.labels)) return false;
    // nodefleet's domain is one the pod's own term admits (then, v the one free domain, one a
    // sibling blocked in Karpenter); outside it the placement is wrong, not this difference.
    if (!(admitted.get(a.key)?.has(here) ?? true)) return false;
    const selects = (p: Pod | undefined): p is Pod =>
      !!p && (a.namespaces === 'all' || a.namespaces.has(p.metadata.namespace ?? 'default')) && matchesSelector(a.selector, p.metadata.labels);
    if (all.some((x) => x !== seat && selects(x.pod) && x.labels[a.key] === here)) return false;
    const blocked = new Set<string>();
    for (const k of karpenter.nodeClaims) {
      if (!(k.pods ?? []).some((p) => selects(byKey.get(p)))) continue;
      const values = (a.key === LabelTopologyZone ? k.zones : k.capacityTypes) ?? [];
      if (values.length === 0) return false;
      for (const x of values) blocked.add(x);
    }
    const onNodes: [Pod | undefined, string][] = [
      ...s.pods.filter((p) => p.spec.nodeName).map((p): [Pod, string] => [p, p.spec.nodeName!]),
      ...karpenter.placements.map((x): [Pod | undefined, string] => [byKey.get(x.pod), x.node]),
    ];
    for (const [p, node] of onNodes) {
      const x = nodes.get(node)?.[a.key];
      if (selects(p) && x !== undefined) blocked.add(x);
    }
    const free = [...karpenterPoolDomains(s, a.key, info.tolerations)].filter((x) => !blocked.has(x) && (admitted.get(a.key)?.has(x) ?? true));
    return free.length === 1 && free[0] === v;
  });
}

/**
 * The other `claims` side of zone-anti-affinity-pins-claim, where the replica Karpenter sent
 * elsewhere did not stay alone: pods queued after it joined its claim (parity seed 16, path 329:
 * app-1-1 on a np-0 claim in us-east-1b that app-0-0 and app-3-0 then joined). Both place the
 * same pods, nodefleet for no more money, and nodefleet decides exactly as Karpenter did (the
 * same pods on the same existing nodes and together on new claims) once Karpenter's block is
 * written into each pending replica P: for each required anti-affinity term of P on a zone or
 * capacity type that selects P itself, `key NotIn` every value of the Karpenter claims holding a
 * pod the term selects that Karpenter's queue took before P (topology.go Record: an
 * anti-affinity pod blocks every domain its claim could still land in; queue.go
 * byCPUAndMemoryDescending). A claim open on the key (no values read) blocks nothing here. And
 * nodefleet's own decision is Karpenter's but for where those replicas sit: with them taken out of
 * both, the same pods together on claims and on the same nodes.
 */
function karpentersOnceClaimsBlockReplicas(d: Divergence, s: ParityScenario, karpenter: OracleOutput, c: Comparison): boolean {
  const decided = samePodsNoDearer(d, s, c, ['claims', 'claim-shapes']);
  if (!decided) return false;
  const byKey = new Map(s.pods.map((p) => [podKey(p), p]));
  const blocked = new Set<string>();
  const pods = s.pods.map((p) => {
    if (p.spec.nodeName) return p;
    const info = new PodInfo(p);
    const blocks: { key: string; operator: 'NotIn'; values: string[] }[] = [];
    for (const a of info.anti) {
      if (!OfferingKeys.has(a.key) || !matchesSelector(a.selector, p.metadata.labels)) continue;
      const earlier = (key: string) => {
        const q = byKey.get(key);
        return !!q && q !== p && matchesSelector(a.selector, q.metadata.labels) && comparePodsKarpenter(new PodInfo(q), info) < 0;
      };
      const values = new Set(
        karpenter.nodeClaims.filter((k) => (k.pods ?? []).some(earlier)).flatMap((k) => (a.key === LabelTopologyZone ? k.zones : k.capacityTypes) ?? []),
      );
      if (values.size > 0) blocks.push({ key: a.key, operator: 'NotIn', values: [...values].sort() });
    }
    if (blocks.length === 0) return p;
    blocked.add(podKey(p));
    const out = structuredClone(p);
    const required = (((out.spec.affinity ??= {}).nodeAffinity ??= {}).requiredDuringSchedulingIgnoredDuringExecution ??= { nodeSelectorTerms: [] });
    if (required.nodeSelectorTerms.length === 0) required.nodeSelectorTerms.push({ matchExpressions: blocks });
    else for (const t of required.nodeSelectorTerms) t.matchExpressions = [...(t.matchExpressions ?? []), ...blocks];
    return out;
  });
  if (blocked.size === 0) return false;
  // Only where the blocked replicas sit may nodefleet's own decision differ: without them, its
  // claims and nodes hold the pods together as Karpenter's do.
  const other = (key: string) => !blocked.has(key);
  const mine = decided.result;
  if (
    onNodes(karpenter.placements.filter((x) => other(x.pod)).map((x): [string, string] => [x.pod, x.node])) !==
    onNodes(mine.placements.filter((x) => other(podKey(x.pod))).map((x): [string, string] => [podKey(x.pod), x.node]))
  )
    return false;
  if (
    claimGroups(karpenter.nodeClaims.map((k) => (k.pods ?? []).filter(other))) !== claimGroups(mine.newNodeClaims.map((n) => n.pods.map(podKey).filter(other)))
  )
    return false;
  return decidesAsKarpenter(solve(toSchedulingInput({ ...s, pods }, 'karpenter')), karpenter);
}

export const ZoneAntiAffinityPinsClaim: Difference = {
  id: 'zone-anti-affinity-pins-claim',
  reason:
    'For a pod with required pod anti-affinity, Karpenter v1.15 blocks every domain its in-flight claim could still' +
    ' land in for the rest of the round, so of N replicas with zonal anti-affinity it places one per round. ' +
    'nodefleet pins the claim to one domain and places the other replicas in the other domains in the same round. ' +
    'The claims, NodePool limits and room for other pods that follow differ accordingly.',
  cases: [
    'parity/zone-anti-affinity-all-in-one-round.yaml',
    'parity/zone-anti-affinity-within-nodepool-limit.yaml',
    'parity/zone-anti-affinity-limit-room-for-other-pods.yaml',
    'parity/zone-anti-affinity-pin-room-for-hostname-affinity.yaml',
    'parity/zone-anti-affinity-replica-joins-inflight-claim.yaml',
    'parity/zone-anti-affinity-replica-pinned-where-nothing-fits.yaml',
    'parity/zone-anti-affinity-blocked-replica-claim-joined-by-later-pods.yaml',
  ],
  explains: (d, s, karpenter, c) => {
    if (d.kind === 'claims' || d.kind === 'claim-shapes')
      return replicaAloneWhereClaimsBlocked(d, s, karpenter, c) || karpentersOnceClaimsBlockReplicas(d, s, karpenter, c);
    if (d.kind !== 'extra-placed') return false;
    const reasons = karpenterReasons(d, karpenter);
    if (reasons.length > 0 && reasons.every((r) => r.includes(AntiAffinityAllDomains))) return true;
    // A replica whose siblings' open claims blocked every domain but one, where no type fits
    // it (parity seed 17, path 737).
    if (everyExtraPod(d, s, karpenter, (pod, seat, reason, all) => pinnedToLastFreeDomain(s, karpenter, pod, seat, reason, all))) return true;
    // Replicas Karpenter blocked, and other pods that run only beside them: their claims gave
    // those pods room Karpenter's one claim did not (parity seed 11, path 60: two pods with
    // hostname pod affinity join a pinned replica's claim together).
    const blockedReplica = (pod: Pod, reason: string) => reason.includes(AntiAffinityAllDomains) && repelledBySiblingOnClaim(s, pod, karpenter);
    if (!everyExtraPod(d, s, karpenter, (pod, _seat, reason) => !blockedReplica(pod, reason)) && roomLeftByRepelledReplicas(s, karpenter)) return true;
    if (
      !everyExtraPod(d, s, karpenter, (_pod, _seat, reason) => reason.includes(LimitsExhausted)) ||
      !withinLimitsKarpentersWay(s, nodefleetDecision(s).result)
    )
      return false;
    const repelled = everyExtraPod(d, s, karpenter, (pod) => repelledBySiblingOnClaim(s, pod, karpenter));
    // Some pods are such replicas, and the others run only because of them.
    const someRepelled = !everyExtraPod(d, s, karpenter, (pod) => !repelledBySiblingOnClaim(s, pod, karpenter));
    return repelled || (someRepelled && roomLeftByRepelledReplicas(s, karpenter));
  },
};
