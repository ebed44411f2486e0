/** The documented difference `spread-counts-unlaunchable-domains` (index.ts lists them all). */
import { type Comparison, type Divergence, podKey } from '../compare.ts';
import { type Difference, claimGroups, everyExtraPod, onNodes, samePodsNoDearer } from './helpers.ts';
import { OfferingKeys, type Seat, karpenterSpreadDomains, reachableDomains, seatOf, skew, spreadCounts } from '../domains.ts';
import type { OracleOutput } from '../oracle.ts';
import type { ParityScenario } from '../scenario.ts';
import type { Pod } from '../../../shared/api/kube.ts';
import { PodInfo } from '../../../shared/scheduling/pod.ts';

/**
 * True when a zone or capacity-type spread of `pod`, over the decision's seats `all`, is within
 * maxSkew over the domains a node the spread counts can have (existing nodes' and those its
 * NodePools can launch) and beyond it over Karpenter's domains, which count unlaunchable ones
 * (spread-counts-unlaunchable-domains). With `seat` (the pod's), beyond it in the pod's own
 * domain: the count there less the minimum over Karpenter's domains exceeds maxSkew.
 */
function skewedOnlyByUnlaunchable(s: ParityScenario, pod: Pod, all: readonly Seat[], seat?: Seat): boolean {
  return new PodInfo(pod).spreads.some((sp) => {
    if (!OfferingKeys.has(sp.key)) return false;
    const counts = spreadCounts(pod, sp, all);
    if (!counts) return false;
    const theirs = karpenterSpreadDomains(s, pod, sp);
    const reachable = reachableDomains(s, sp.key, pod, sp);
    const launchable = new Set([...theirs].filter((v) => reachable.has(v)));
    if (launchable.size >= theirs.size || skew(counts, launchable, sp.minDomains) > sp.maxSkew) return false;
    if (!seat) return skew(counts, theirs, sp.minDomains) > sp.maxSkew;
    // The pod's own domain is the one Karpenter's count refuses: its count there, over the
    // minimum of Karpenter's domains, is beyond maxSkew.
    const here = seat.labels[sp.key];
    const domains = [...new Set([...theirs, ...counts.keys()])];
    const min = sp.minDomains !== undefined && domains.length < sp.minDomains ? 0 : Math.min(...domains.map((v) => counts.get(v) ?? 0));
    return here !== undefined && (counts.get(here) ?? 0) - min > sp.maxSkew;
  });
}

/**
 * The `claims` / `claim-shapes` / `existing` side of spread-counts-unlaunchable-domains: both
 * place the same pods, nodefleet for no more money; every pod nodefleet put on an existing node
 * Karpenter did not choose for it is {@link skewedOnlyByUnlaunchable} there, in that node's own
 * domain (a pod moved into a domain Karpenter's count admits was not sent away by it); and moving those pods
 * onto those nodes turns Karpenter's decision into nodefleet's (the same pods on the same
 * existing nodes, the same pods together on new claims). Parity seed 16, path 939.
 */
function movedWhereUnlaunchableDomainsRefuse(d: Divergence, s: ParityScenario, karpenter: OracleOutput, c: Comparison): boolean {
  const decided = samePodsNoDearer(d, s, c, ['claims', 'claim-shapes', 'existing']);
  if (!decided) return false;
  const { result, seats: all } = decided;
  const theirNode = new Map(karpenter.placements.map((x) => [x.pod, x.node]));
  const moved = new Map<string, string>();
  for (const p of result.placements) {
    const key = podKey(p.pod);
    if (theirNode.get(key) === p.node) continue;
    const seat = seatOf(all, key);
    if (!seat || !skewedOnlyByUnlaunchable(s, p.pod, all, seat)) return false;
    moved.set(key, p.node);
  }
  if (moved.size === 0) return false;
  const theirPlacements = [...karpenter.placements.filter((x) => !moved.has(x.pod)).map((x): [string, string] => [x.pod, x.node]), ...moved];
  if (onNodes(theirPlacements) !== onNodes(result.placements.map((x): [string, string] => [podKey(x.pod), x.node]))) return false;
  return (
    claimGroups(karpenter.nodeClaims.map((k) => (k.pods ?? []).filter((p) => !moved.has(p)))) ===
    claimGroups(result.newNodeClaims.map((n) => n.pods.map(podKey)))
  );
}

export const SpreadCountsUnlaunchableDomains: Difference = {
  id: 'spread-counts-unlaunchable-domains',
  reason:
    'Karpenter v1.15 counts topology-spread domains no node has and no NodePool can launch (zones of types a ' +
    "NodePool excludes, values of a NodePool's own In requirement offered by no type), so an empty domain holds " +
    'the minimum at 0 and replicas stay pending. kube-scheduler counts only the domains of nodes the spread counts;' +
    ' nodefleet counts those of existing nodes and of what its NodePools can launch, and places them.',
  cases: ['parity/spread-ignores-unlaunchable-zones.yaml', 'parity/spread-unlaunchable-zone-sends-replica-to-claim.yaml'],
  explains: (d, s, karpenter, c) =>
    everyExtraPod(d, s, karpenter, (pod, _seat, _reason, all) => skewedOnlyByUnlaunchable(s, pod, all)) ||
    movedWhereUnlaunchableDomainsRefuse(d, s, karpenter, c),
};
