/** The documented difference `contradictory-node-selector` (index.ts lists them all). */
import { type Difference, everyExtraPod, namedPods, nodefleetDecision, withinLimitsKarpentersWay } from './helpers.ts';
import type { OracleOutput } from '../oracle.ts';
import type { ParityScenario } from '../scenario.ts';
import type { Pod } from '../../../shared/api/kube.ts';
import { podKey } from '../compare.ts';

/**
 * True when Karpenter's `reason` for leaving a pod pending names an exhausted limit of at least
 * one NodePool, and for every NodePool it names so Karpenter put a pod no node can satisfy
 * ({@link contradictoryNodeSelector}) on one of that pool's new claims.
 */
function limitSpentOnContradictoryPod(s: ParityScenario, reason: string, karpenter: OracleOutput): boolean {
  const pools = [...reason.matchAll(/all available instance types exceed limits for nodepool \(NodePool=([^)]+)\)/g)].map((m) => m[1]);
  if (pools.length === 0) return false;
  const contradictory = new Set(s.pods.filter(contradictoryNodeSelector).map(podKey));
  return pools.every((np) => karpenter.nodeClaims.some((k) => k.nodePool === np && (k.pods ?? []).some((p) => contradictory.has(p))));
}

/**
 * True when no node can satisfy the pod's nodeSelector and its required node affinity together:
 * every required term has an expression on a nodeSelector key that excludes the selected value.
 */
export function contradictoryNodeSelector(pod: Pod): boolean {
  const sel = pod.spec.nodeSelector ?? {};
  const terms = pod.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [];
  if (Object.keys(sel).length === 0 || terms.length === 0) return false;
  return terms.every((t) =>
    (t.matchExpressions ?? []).some((e) => {
      const v = sel[e.key];
      if (v === undefined) return false;
      if (e.operator === 'DoesNotExist') return true;
      if (e.operator === 'NotIn') return (e.values ?? []).includes(v);
      if (e.operator === 'In') return !(e.values ?? []).includes(v);
      return false;
    }),
  );
}

export const ContradictoryNodeSelector: Difference = {
  id: 'contradictory-node-selector',
  reason:
    'A pod whose nodeSelector and required node affinity exclude each other fits no node, so kube-scheduler never ' +
    'binds it. Karpenter v1.15 still places it; nodefleet leaves it pending with the conflict as reason. Where such' +
    " a pod's Karpenter claim spends a NodePool limit, nodefleet places the pods Karpenter then refuses for that " +
    'limit.',
  cases: ['parity/contradictory-node-selector-stays-pending.yaml', 'parity/contradictory-pod-spends-nodepool-limit.yaml'],
  explains: (d, s, karpenter) =>
    (d.kind === 'unplaced' && namedPods(d, s).length > 0 && namedPods(d, s).every(contradictoryNodeSelector)) ||
    (everyExtraPod(d, s, karpenter, (_pod, _seat, reason) => limitSpentOnContradictoryPod(s, reason, karpenter)) &&
      withinLimitsKarpentersWay(s, nodefleetDecision(s).result)),
};
