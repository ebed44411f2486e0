/**
 * Deliberate differences between nodefleet and Karpenter, the one place they are listed: one file
 * each in this folder, with a short reason and the cases (test/cases/…) that pin nodefleet's
 * behaviour. A parity divergence that one of these explains is counted as documented, not as a failure.
 */
import { type Comparison, type Divergence, podKey } from '../compare.ts';
import { type Difference, type DisruptionDifference, claimGroups, extraPodKeys, namedPods, nodefleetDecision, onNodes, placedKeys } from './helpers.ts';
import type { DisruptionDivergence, OracleDisruption } from '../compare-disruption.ts';
import type { DisruptionPlan } from '../../../shared/disruption/index.ts';
import type { DisruptionScenario } from '../disruption-scenario.ts';
import type { OracleOutput } from '../oracle.ts';
import { type ParityScenario, toSchedulingInput } from '../scenario.ts';
import { type SchedulingResult, solve } from '../../../shared/scheduling/index.ts';
import { ContradictoryNodeSelector } from './contradictory-node-selector.ts';
import { ZoneAntiAffinityPinsClaim } from './zone-anti-affinity-pins-claim.ts';
import { SpreadIgnoreAffinityMinOverAllDomains } from './spread-ignore-affinity-min-over-all-domains.ts';
import { SpreadCountsUnlaunchableDomains } from './spread-counts-unlaunchable-domains.ts';
import { TopologyDomainIgnoresClaimOfferings } from './topology-domain-ignores-claim-offerings.ts';
import { UnstableClaimOrderBeyond12 } from './unstable-claim-order-beyond-12.ts';
import { InverseAntiAffinityMissesNodeDomains } from './inverse-anti-affinity-misses-node-domains.ts';
import { KarpenterRandomTie } from './karpenter-random-tie.ts';
import { ConsolidationCostAwarePacking } from './consolidation-cost-aware-packing.ts';
import { ConsolidationOnDemandReplacementCheaperThanSpot } from './consolidation-on-demand-replacement-cheaper-than-spot.ts';

/** Deliberate scheduling differences: a divergence one of these explains is documented. */
export const Differences: Difference[] = [
  ContradictoryNodeSelector,
  ZoneAntiAffinityPinsClaim,
  SpreadIgnoreAffinityMinOverAllDomains,
  SpreadCountsUnlaunchableDomains,
  TopologyDomainIgnoresClaimOfferings,
  UnstableClaimOrderBeyond12,
  InverseAntiAffinityMissesNodeDomains,
];

/** Deliberate or Karpenter-side disruption differences: counted as documented. */
export const DisruptionDifferences: DisruptionDifference[] = [
  KarpenterRandomTie,
  ConsolidationCostAwarePacking,
  ConsolidationOnDemandReplacementCheaperThanSpot,
];

/**
 * Open gaps: nodefleet differs from Karpenter v1.15 here not by choice. Counted apart
 * (`knownOpen`), printed, not failed on; each should become a fix and a case.
 */
export const DisruptionGaps: DisruptionDifference[] = [];

/** The id of the documented difference explaining `d`, or undefined. */
export function documentedDisruptionReason(
  d: DisruptionDivergence,
  s: DisruptionScenario,
  karpenter: OracleDisruption,
  plan: DisruptionPlan,
): string | undefined {
  return DisruptionDifferences.find((x) => x.explains(d, s, karpenter, plan))?.id;
}

/** The id of the open gap explaining `d`, or undefined. */
export function openDisruptionGap(d: DisruptionDivergence, s: DisruptionScenario, karpenter: OracleDisruption, plan: DisruptionPlan): string | undefined {
  return DisruptionGaps.find((x) => x.explains(d, s, karpenter, plan))?.id;
}

/**
 * The id of the documented difference explaining `d`, or undefined. A `claims`, `claim-shapes`,
 * `existing` or `unplaced-karpenter-packing` divergence no difference explains itself is put down
 * to an explained `extra-placed` or `unplaced` root only when it is about that root's own pods
 * ({@link followsFromRoot}); a pod Karpenter places and nodefleet does not, after an explained
 * `extra-placed` root, only when nodefleet places it once the pods Karpenter leaves pending are gone
 * ({@link displacedBy}).
 */
export function documentedReason(d: Divergence, s: ParityScenario, karpenter: OracleOutput, c: Comparison): string | undefined {
  // A placement kube-scheduler would refuse is never a deliberate difference.
  if (d.kind === 'invalid') return undefined;
  const direct = Differences.find((x) => x.explains(d, s, karpenter, c));
  if (direct) return direct.id;
  const roots = c.divergences
    .filter((x) => x.kind === 'extra-placed' || x.kind === 'unplaced')
    .map((root) => ({ root, id: Differences.find((x) => x.explains(root, s, karpenter, c))?.id }))
    .filter((x): x is { root: Divergence; id: string } => x.id !== undefined);
  if (d.kind === 'claims' || d.kind === 'claim-shapes' || d.kind === 'existing' || d.kind === 'unplaced-karpenter-packing') {
    const hit = followsFromRoot(d, s, karpenter, roots);
    if (hit) return hit;
  }
  if (d.kind === 'unplaced' || d.kind === 'unplaced-karpenter-packing') {
    const root = roots.find((x) => x.root.kind === 'extra-placed');
    if (root && displacedBy(d, s, karpenter)) return root.id;
  }
  return undefined;
}

/** The pods (`namespace/name`) an `extra-placed` or `unplaced` root divergence names. */
function rootPods(root: Divergence, s: ParityScenario): Set<string> {
  return new Set(root.kind === 'extra-placed' ? extraPodKeys(root) : namedPods(root, s).map(podKey));
}

/**
 * The id of the explained root `d` follows from, or undefined. With P the pods of the explained
 * roots (one root at a time, then all together):
 * - `unplaced-karpenter-packing`: every pod it names is in P (the same pods the root explains);
 * - `claims` / `claim-shapes`: with P taken out of both decisions, or nodefleet re-solved without
 *   P (or, when Karpenter leaves every pod of P pending, without every pod Karpenter leaves pending:
 *   P's replicas both leave pending; or, P being pods Karpenter put on existing nodes, with P bound
 *   where Karpenter put them) and P taken out of Karpenter's, the same pods are together on new claims;
 * - `existing`: the same, for the pods on each existing node.
 * A divergence that remains once the root's pods are gone is not the root's.
 */
function followsFromRoot(d: Divergence, s: ParityScenario, karpenter: OracleOutput, roots: readonly { root: Divergence; id: string }[]): string | undefined {
  const tries = roots.map((x) => ({ id: x.id, pods: rootPods(x.root, s) }));
  const pendingInKarpenter = new Set(karpenter.unschedulable.map((u) => u.pod));
  if (tries.length > 1) tries.push({ id: tries[0].id, pods: new Set(tries.flatMap((x) => [...x.pods])) });
  for (const { id, pods } of tries) {
    if (pods.size === 0) continue;
    if (d.kind === 'unplaced-karpenter-packing') {
      const named = namedPods(d, s).map(podKey);
      if (named.length > 0 && named.every((k) => pods.has(k))) return id;
      continue;
    }
    const keep = (k: string) => !pods.has(k);
    const theirs =
      d.kind === 'existing'
        ? onNodes(karpenter.placements.filter((x) => keep(x.pod)).map((x): [string, string] => [x.pod, x.node]))
        : claimGroups(karpenter.nodeClaims.map((k) => (k.pods ?? []).filter(keep)));
    const mine = (r: SchedulingResult) =>
      d.kind === 'existing'
        ? onNodes(r.placements.filter((x) => keep(podKey(x.pod))).map((x): [string, string] => [podKey(x.pod), x.node]))
        : claimGroups(r.newNodeClaims.map((n) => n.pods.map(podKey).filter(keep)));
    if (mine(nodefleetDecision(s).result) === theirs) return id;
    if (mine(solve(toSchedulingInput({ ...s, pods: s.pods.filter((p) => keep(podKey(p))) }, 'karpenter'))) === theirs) return id;
    // Pods Karpenter places and nodefleet does not, on the existing nodes Karpenter put them on:
    // the room they take there is what sends Karpenter's other pods elsewhere (parity seed 2, path 35).
    const theirNode = new Map(karpenter.placements.map((x) => [x.pod, x.node]));
    if ([...pods].every((k) => theirNode.has(k))) {
      const bound = s.pods.map((p) => (pods.has(podKey(p)) ? { ...p, spec: { ...p.spec, nodeName: theirNode.get(podKey(p)) } } : p));
      if (mine(solve(toSchedulingInput({ ...s, pods: bound }, 'karpenter'))) === theirs) return id;
    }
    // The root's extra pods with the replicas of theirs both leave pending (one of which nodefleet
    // would place in their stead once they are gone): nodefleet without every pod Karpenter leaves pending.
    if (
      pendingInKarpenter.size > 0 &&
      [...pods].every((k) => pendingInKarpenter.has(k)) &&
      mine(solve(toSchedulingInput({ ...s, pods: s.pods.filter((p) => !pendingInKarpenter.has(podKey(p))) }, 'karpenter'))) === theirs
    )
      return id;
  }
  return undefined;
}

/**
 * True when the pods `d` names (Karpenter places them, nodefleet does not) are placed by
 * nodefleet, with the packing `d` is about, once every pod Karpenter leaves pending is taken out
 * of the scenario: those pods only waited because pods Karpenter does not place (the explained
 * extra ones; any of their replicas could take the place of one taken out) took their room, host
 * port, pod slots or NodePool limit first (parity seed 6 paths 1568 and 1627, seed 7 path 940).
 */
function displacedBy(d: Divergence, s: ParityScenario, karpenter: OracleOutput): boolean {
  const waiting = namedPods(d, s).map(podKey);
  const gone = new Set(karpenter.unschedulable.map((u) => u.pod));
  if (waiting.length === 0 || gone.size === 0) return false;
  const r = solve(toSchedulingInput({ ...s, pods: s.pods.filter((p) => !gone.has(podKey(p))) }, d.kind === 'unplaced' ? 'cost' : 'karpenter'));
  const placed = placedKeys(r);
  return waiting.every((k) => placed.has(k));
}
