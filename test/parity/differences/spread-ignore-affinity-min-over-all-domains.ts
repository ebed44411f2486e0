/** The documented difference `spread-ignore-affinity-min-over-all-domains` (index.ts lists them all). */
import type { Comparison, Divergence } from '../compare.ts';
import { type Difference, decidesAsKarpenter, namedPods, samePodsNoDearer } from './helpers.ts';
import { OfferingKeys, type Seat, karpenterPoolDomains, reachableDomains, seats, spreadCounts } from '../domains.ts';
import type { OracleOutput } from '../oracle.ts';
import { type ParityScenario, toSchedulingInput } from '../scenario.ts';
import type { Pod } from '../../../shared/api/kube.ts';
import { PodInfo } from '../../../shared/scheduling/pod.ts';
import { matchesSelector } from '../../../shared/api/label-selector.ts';
import { solve } from '../../../shared/scheduling/index.ts';

/**
 * True when the pod has a topology spread with nodeAffinityPolicy Ignore on a key its own
 * nodeSelector or required node affinity restricts; DoNotSchedule only unless `anyWhen`.
 */
export function spreadIgnoresOwnAffinity(pod: Pod, anyWhen = false): boolean {
  return (pod.spec.topologySpreadConstraints ?? []).some((c) => ignoresOwnAffinity(pod, c) && (anyWhen || c.whenUnsatisfiable === 'DoNotSchedule'));
}

/**
 * The `unplaced` side of spread-ignore-affinity-min-over-all-domains, for a pod a decision left
 * pending (`all`: its seats): a DoNotSchedule zone or capacity-type spread of the pod ignores its
 * own affinity on a key that affinity restricts, and over the decision's final counts every
 * domain the affinity admits is beyond maxSkew against the minimum over all the spread's domains
 * (existing nodes', and those the NodePools can launch that the pod admits), while one is within it against the
 * minimum over the admitted domains only (Karpenter's): a domain the pod refuses holds the
 * minimum, and nothing else keeps it pending.
 */
function refusedByDomainsItRefuses(s: ParityScenario, pod: Pod, all: readonly Seat[]): boolean {
  const info = new PodInfo(pod);
  return info.spreads.some((sp) => {
    const c = (pod.spec.topologySpreadConstraints ?? []).find(
      (x) => x.topologyKey === sp.key && x.whenUnsatisfiable === 'DoNotSchedule' && ignoresOwnAffinity(pod, x),
    );
    const counts = c && OfferingKeys.has(sp.key) ? spreadCounts(pod, sp, all) : undefined;
    if (!counts) return false;
    // A domain only a NodePool offers and the pod refuses holds no node kube-scheduler counts.
    const admits = (v: string) => info.requiredTerms.some((t) => t.requirements.get(sp.key)?.has(v) ?? true);
    const onNodes = new Set(s.nodes.map((n) => n.metadata.labels?.[sp.key]));
    const domains = [...new Set([...[...reachableDomains(s, sp.key, pod, sp)].filter((v) => onNodes.has(v) || admits(v)), ...counts.keys()])];
    const admitted = domains.filter(admits);
    if (admitted.length === 0 || admitted.length === domains.length) return false;
    const self = matchesSelector(sp.selector, pod.metadata.labels) ? 1 : 0;
    // Fewer domains than minDomains: the minimum is 0 (kube-scheduler and Karpenter alike).
    const min = (vs: string[]) => (sp.minDomains !== undefined && vs.length < sp.minDomains ? 0 : Math.min(...vs.map((v) => counts.get(v) ?? 0)));
    const over = (v: string, m: number) => (counts.get(v) ?? 0) + self - m > sp.maxSkew;
    return admitted.every((v) => over(v, min(domains))) && admitted.some((v) => !over(v, min(admitted)));
  });
}

type SpreadConstraint = NonNullable<Pod['spec']['topologySpreadConstraints']>[number];

function ignoresOwnAffinity(pod: Pod, c: SpreadConstraint): boolean {
  const terms = pod.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [];
  const restricted = (key: string) =>
    key in (pod.spec.nodeSelector ?? {}) || (terms.length > 0 && terms.every((t) => (t.matchExpressions ?? []).some((e) => e.key === key)));
  return c.nodeAffinityPolicy === 'Ignore' && restricted(c.topologyKey);
}

/**
 * The `claims` / `claim-shapes` / `existing` side of spread-ignore-affinity-min-over-all-domains:
 * both place the same pods, nodefleet for no more money, and with every spread that ignores its
 * pod's own affinity on a key that affinity restricts, refusing some domain of it (NodePools' or
 * existing nodes'), turned to nodeAffinityPolicy Honor (the
 * minimum over the pod's own domains, as Karpenter takes it), nodefleet decides exactly as
 * Karpenter did: the same pods on the same existing nodes and the same pods together on new claims.
 */
function karpentersOnceSpreadsHonorAffinity(d: Divergence, s: ParityScenario, karpenter: OracleOutput, c: Comparison): boolean {
  if (!samePodsNoDearer(d, s, c, ['claims', 'claim-shapes', 'existing'])) return false;
  // Only where the pod's affinity refuses a domain of the key does Karpenter's minimum over the
  // pod's own domains differ from the minimum over all of them (every required term refusing it).
  const refusesSome = (p: Pod, key: string) => {
    const terms = new PodInfo(p).requiredTerms;
    const domains = new Set([...karpenterPoolDomains(s, key), ...s.nodes.map((n) => n.metadata.labels?.[key]).filter((v): v is string => v !== undefined)]);
    return [...domains].some((v) => terms.length > 0 && terms.every((t) => !(t.requirements.get(key)?.has(v) ?? true)));
  };
  let changed = false;
  const pods = s.pods.map((p) => {
    if (p.spec.nodeName || !spreadIgnoresOwnAffinity(p, true)) return p;
    const out = structuredClone(p);
    for (const sc of out.spec.topologySpreadConstraints ?? []) {
      if (!ignoresOwnAffinity(out, sc) || !refusesSome(p, sc.topologyKey)) continue;
      sc.nodeAffinityPolicy = 'Honor';
      changed = true;
    }
    return out;
  });
  if (!changed) return false;
  return decidesAsKarpenter(solve(toSchedulingInput({ ...s, pods }, 'karpenter')), karpenter);
}

export const SpreadIgnoreAffinityMinOverAllDomains: Difference = {
  id: 'spread-ignore-affinity-min-over-all-domains',
  reason:
    "Under nodeAffinityPolicy Ignore kube-scheduler counts the domain of every node, whatever the pod's node " +
    "affinity; Karpenter v1.15 takes the spread's minimum only over the domains the pod's own affinity allows, so" +
    ' replicas confined to one zone all go there and kube-scheduler binds only one. nodefleet counts every domain ' +
    'and leaves the others pending; under ScheduleAnyway the same count changes which preference gives way first.',
  cases: ['parity/spread-ignore-affinity-counts-every-zone.yaml', 'parity/spread-ignore-affinity-relaxes-preference-onto-node.yaml'],
  explains: (d, s, karpenter, c) =>
    (d.kind === 'unplaced' &&
      namedPods(d, s).length > 0 &&
      namedPods(d, s).every((p) => spreadIgnoresOwnAffinity(p) && refusedByDomainsItRefuses(s, p, seats(s, solve(toSchedulingInput(s, 'cost')))))) ||
    karpentersOnceSpreadsHonorAffinity(d, s, karpenter, c),
};
