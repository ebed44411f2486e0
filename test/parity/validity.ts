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
 */
import type { Pod } from '../../shared/api/kube.ts';
import { LabelHostname } from '../../shared/api/labels.ts';
import type { SchedulingResult } from '../../shared/scheduling/index.ts';
import { PodInfo, type AffinitySpec } from '../../shared/scheduling/pod.ts';
import { matchesSelector } from '../../shared/api/label-selector.ts';
import { EphemeralTaintKeys, formatTaint, untoleratedTaint } from '../../shared/scheduling/taints.ts';
import { podKey } from './compare.ts';
import { inScope, seats, spreadCounts, type Seat } from './domains.ts';
import type { ParityScenario } from './scenario.ts';

/**
 * What decides how a pod's spreads count (one string): the constraints, and the node affinity
 * and tolerations that nodeAffinityPolicy / nodeTaintsPolicy Honor filter the counted nodes by.
 * Two pods with the same view see the same counts and minimum.
 */
function spreadView(pod: Pod): string {
  const { topologySpreadConstraints, nodeSelector, tolerations } = pod.spec;
  return JSON.stringify([topologySpreadConstraints, nodeSelector ?? {}, pod.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? null, tolerations ?? []]);
}

/** Each seat of the decision, a new claim's given a hostname of its own (`claim-<index>`). */
function seatsWithHosts(s: ParityScenario, r: SchedulingResult): Seat[] {
  const all = seats(s, r);
  const claimOf = new Map<Pod, number>();
  r.newNodeClaims.forEach((c, i) => c.pods.forEach((p) => claimOf.set(p, i)));
  return all.map((x) => (x.node === undefined && x.labels[LabelHostname] === undefined && claimOf.has(x.pod) ? { ...x, labels: { ...x.labels, [LabelHostname]: `claim-${claimOf.get(x.pod)}` } } : x));
}

/**
 * The placements of decision `r` on scenario `s` kube-scheduler would certainly refuse, one line
 * each (`namespace/name: reason`), sorted; empty when none.
 */
export function invalidPlacements(s: ParityScenario, r: SchedulingResult): string[] {
  const all = seatsWithHosts(s, r);
  const placed = all.filter((x) => !x.pod.spec.nodeName);
  const out = new Set<string>();
  for (const x of placed) {
    const info = new PodInfo(x.pod);
    for (const sp of info.spreads) {
      const v = x.labels[sp.key];
      const counted = (y: Seat) => inScope(sp.namespaces, y.pod) && matchesSelector(sp.selector, y.pod.metadata.labels);
      // A new claim holds only the labels it is pinned to: one the pod's node affinity refuses
      // may still launch where it matches, so its pods' count is not known (parity seed 11, path
      // 1914: a replica on a claim open over us-east-1a and us-east-1c).
      const terms = info.nodeFilterTerms ?? [];
      const couldMatch = (labels: Record<string, string>) => terms.some((t) => t.all().every((q) => labels[q.key] === undefined || q.matches(labels[q.key])));
      const unknown = sp.honorAffinity && all.some((y) => y.node === undefined && !y.pod.spec.nodeName && counted(y) && !terms.some((t) => t.matchesLabels(y.labels)) && couldMatch(y.labels));
      const counts = v === undefined || unknown ? undefined : spreadCounts(x.pod, sp, all);
      if (v === undefined || !counts) continue;
      const shape = spreadView(x.pod);
      if (!placed.every((y) => y.labels[sp.key] !== v || !counted(y) || spreadView(y.pod) === shape)) continue;
      const domains = new Set([v]);
      for (const n of s.nodes) {
        const labels = n.metadata.labels ?? {};
        if (labels[sp.key] === undefined) continue;
        if (sp.honorAffinity && !(info.nodeFilterTerms ?? []).some((t) => t.matchesLabels(labels))) continue;
        if (sp.honorTaints && untoleratedTaint(n.spec?.taints ?? [], info.tolerations, true)) continue;
        domains.add(labels[sp.key]);
      }
      const min = Math.min(...[...domains].map((d) => counts.get(d) ?? 0));
      const here = counts.get(v) ?? 0;
      if (here - min > sp.maxSkew) out.add(`${podKey(x.pod)}: topology spread on ${sp.key} has ${here} in ${v} against ${min} (maxSkew ${sp.maxSkew})`);
    }
  }
  for (const x of placed) {
    const info = new PodInfo(x.pod);
    const taint = untoleratedTaint(x.taints.filter((t) => !EphemeralTaintKeys.has(t.key)), info.tolerations, true);
    if (taint) out.add(`${podKey(x.pod)}: does not tolerate ${formatTaint(taint)}`);
    const node = x.node;
    if (node !== undefined && info.requiredTerms.length > 0 && !info.requiredTerms.some((t) => t.requirements.matchesLabels(x.labels) && (!t.nodeNames || t.nodeNames.has(node)))) {
      out.add(`${podKey(x.pod)}: node ${node} matches none of its required node selector terms`);
    }
  }
  for (const x of placed) {
    const info = new PodInfo(x.pod);
    for (const y of all) {
      if (y === x) continue;
      const repels = (a: Seat, b: Seat, terms: readonly AffinitySpec[]) =>
        terms.find((t) => a.labels[t.key] !== undefined && a.labels[t.key] === b.labels[t.key] && inScope(t.namespaces, b.pod) && matchesSelector(t.selector, b.pod.metadata.labels));
      const own = repels(x, y, info.anti);
      const theirs = own ? undefined : repels(y, x, new PodInfo(y.pod).anti);
      const t = own ?? theirs;
      if (t) out.add(`${podKey(x.pod)}: required pod anti-affinity on ${t.key} with ${podKey(y.pod)} in ${x.labels[t.key]}`);
    }
  }
  return [...out].sort();
}
