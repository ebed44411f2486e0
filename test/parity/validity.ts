/**
 * kube-scheduler's own check of a nodefleet decision, independent of Karpenter's: a pod nodefleet
 * places must be one kube-scheduler would bind there. Karpenter's decision is no reference for
 * this (a placement can match Karpenter's and still break a constraint, or differ and keep them
 * all), so the parity harness runs it on both of nodefleet's packings (kind `invalid`).
 *
 * Two rules, each checked only where the verdict is certain from the final decision:
 * - **A DoNotSchedule topology spread** (Kubernetes PodTopologySpread: a pod may bind in domain v
 *   only if `count(v) + 1 - min ≤ maxSkew`, the minimum over the domains of the nodes the spread
 *   counts). Counts only grow as pods bind, and the nodes that exist from the start are always
 *   among those counted, so the last pod bound into v saw a minimum no larger than the final
 *   minimum over the existing nodes' domains and v. When that final `count(v) - min` is above
 *   maxSkew and every pod placed in v with the spread's selector carries the same constraints
 *   (replicas: the last of them bound broke its own spread), the placement is invalid whatever
 *   order the pods bind in; the same constraints means the same node affinity and tolerations too,
 *   which the spread's node filter reads (a replica required in v counts only v's nodes, and can
 *   bind there last). A domain a new claim is not yet pinned to (for the spread's key, or for a
 *   key of the node affinity the spread honours), or minDomains (which can only lower the
 *   minimum), leaves the verdict open and is not flagged.
 * - **Required pod anti-affinity**, both ways: no two pods of one domain where one repels the
 *   other (kube-scheduler InterPodAffinity), a pod placed here counting against a bound pod's
 *   term as well as its own.
 * - **Taints and node affinity** (TaintToleration, NodeAffinity): a NoSchedule or NoExecute taint
 *   of the node or of the claim's NodePool that the pod does not tolerate (not the ephemeral ones
 *   kubelet lifts once a node is up); on an existing node, whose labels are all known, the pod's
 *   nodeSelector and required node affinity (one term matching). A claim's labels are not all
 *   known before it launches, so its node affinity is not checked here.
 *
 * The rules run in the Go oracle (test/oracle/karpenter/validity.go) on Kubernetes' own code:
 * k8s.io/component-helpers for node affinity and taints, k8s.io/apimachinery for label selectors,
 * so the check shares no matcher with the scheduler it checks. Here the decisions become seats
 * (where each pod sits, with that node's or claim's labels and taints), one oracle call per scenario.
 */
import { spawnSync } from 'node:child_process';
import type { Taint } from '../../shared/api/kube.ts';
import { LabelHostname } from '../../shared/api/labels.ts';
import type { SchedulingResult } from '../../shared/scheduling/index.ts';
import { EphemeralTaintKeys } from '../../shared/scheduling/taints.ts';
import { podKey } from './compare.ts';
import { seats } from './domains.ts';
import type { ParityScenario } from './scenario.ts';

/** One seat as the oracle's validity mode reads it (validity.go ValiditySeat). */
interface OracleSeat {
  pod: string;
  node?: string;
  labels: Record<string, string>;
  taints: readonly Taint[];
}

/**
 * Each seat of the decision, a new claim's given a hostname of its own (`claim-<index>`), without
 * the ephemeral taints kubelet lifts once a node is up.
 */
function oracleSeats(s: ParityScenario, r: SchedulingResult): OracleSeat[] {
  const claimOf = new Map<object, number>();
  r.newNodeClaims.forEach((c, i) => c.pods.forEach((p) => claimOf.set(p, i)));
  return seats(s, r).map((x) => {
    const host: Record<string, string> =
      x.node === undefined && x.labels[LabelHostname] === undefined && claimOf.has(x.pod) ? { [LabelHostname]: `claim-${claimOf.get(x.pod)}` } : {};
    return {
      pod: podKey(x.pod),
      ...(x.node !== undefined ? { node: x.node } : {}),
      labels: { ...x.labels, ...host },
      taints: x.taints.filter((t) => !EphemeralTaintKeys.has(t.key)),
    };
  });
}

/**
 * The placements of each decision in `rs` on scenario `s` kube-scheduler would certainly refuse,
 * one line each (`namespace/name: reason`), sorted; empty when none. `bin`: a built oracle
 * (oracle.ts buildOracle), run once for all of them.
 * @throws Error with the oracle's message when it cannot check them.
 */
export function invalidPlacements(s: ParityScenario, rs: readonly SchedulingResult[], bin: string): string[][] {
  const input = { pods: s.pods, nodes: s.nodes, validity: { decisions: rs.map((r) => oracleSeats(s, r)) } };
  const out = spawnSync(bin, [], { input: JSON.stringify(input), encoding: 'utf8', maxBuffer: 1 << 28 });
  if (out.error) throw new Error(`oracle: ${out.error.message}`);
  if (out.status !== 0) throw new Error(`oracle: ${out.stderr.trim()}`);
  return (JSON.parse(out.stdout) as { refused: string[][] }).refused;
}
