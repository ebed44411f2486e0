/**
 * Deliberate differences between nodefleet and Karpenter, the one place they are listed: each
 * with the reason and the case (test/cases/…) that pins nodefleet's behaviour. A parity
 * divergence that one of these explains is counted as documented, not as a failure.
 */
import type { Pod } from '../../shared/api/kube.ts';
import type { Comparison, Divergence } from './compare.ts';
import type { OracleOutput } from './oracle.ts';
import type { ParityScenario } from './scenario.ts';

export interface Difference {
  id: string;
  /** Why nodefleet decides differently, and why that is right for its users. */
  reason: string;
  /** The case that pins the behaviour (path under test/cases). */
  case: string;
  /** True when this difference explains the divergence on this scenario. */
  explains: (d: Divergence, s: ParityScenario, karpenter: OracleOutput, c: Comparison) => boolean;
}

const AntiAffinityAllDomains = 'unsatisfiable topology constraint for pod anti-affinity';

/** Karpenter's reasons for the pods named in an `extra-placed` divergence. */
function karpenterReasons(d: Divergence, karpenter: OracleOutput): string[] {
  return karpenter.unschedulable.filter((u) => d.detail.includes(u.pod)).map((u) => Object.values(u.reasons).join('; '));
}

export const Differences: Difference[] = [
  {
    id: 'contradictory-node-selector',
    reason:
      'A pod whose nodeSelector and required node affinity exclude each other (nodeSelector team: red with a required ' +
      'term team DoesNotExist) fits no node: kube-scheduler never binds it. Karpenter v1.15 still places it (parity seed 1, ' +
      'path 62: on an existing node without the team label), a placement the pod never gets. nodefleet leaves it ' +
      'pending with the conflict as reason.',
    case: 'parity/contradictory-node-selector-stays-pending.yaml',
    explains: (d, s) => d.kind === 'unplaced' && namedPods(d, s).length > 0 && namedPods(d, s).every(contradictoryNodeSelector),
  },
  {
    id: 'capacity-bound-other-pods',
    reason:
      'When capacity runs out in a round (a NodePool limit binds, or only existing nodes can take pods), the default ' +
      '(cost-aware) packing places at least as many pods as Karpenter for no more money, but not necessarily the same ' +
      'pods: its queue interleaves pod shapes and fills cheaper claims, where Karpenter takes pods largest first onto ' +
      'whatever type the first one needed. Which pods wait for the next round differs; with `packing: karpenter` ' +
      'nodefleet places the same pods as Karpenter.',
    case: 'parity/capacity-bound-other-pods.yaml',
    explains: (d, _s, _karpenter, c) =>
      d.kind === 'unplaced' &&
      c.placed.default >= c.placed.karpenter &&
      c.nodefleetCost <= c.karpenterCost + 1e-9 &&
      !c.divergences.some((x) => x.kind === 'unplaced-karpenter-packing'),
  },
  {
    id: 'zone-anti-affinity-pins-claim',
    reason:
      'A pod with required pod anti-affinity goes on a claim that may still launch in several domains: Karpenter v1.15 then ' +
      'blocks every domain the claim could land in for the rest of the round (topology.go), so of N replicas with zonal ' +
      'anti-affinity it places one per provisioning round. nodefleet pins the claim to one domain while another replica is ' +
      'pending and places the other replicas in the other domains in the same round (the last replica\'s claim stays open ' +
      'over every free domain, as Karpenter keeps it). Every pod it places more has Karpenter reason ' +
      '"unsatisfiable topology constraint for pod anti-affinity"; the claims that follow differ accordingly.',
    case: 'parity/zone-anti-affinity-all-in-one-round.yaml',
    explains: (d, _s, karpenter) => {
      if (d.kind === 'extra-placed') {
        const reasons = karpenterReasons(d, karpenter);
        return reasons.length > 0 && reasons.every((r) => r.includes(AntiAffinityAllDomains));
      }
      return false;
    },
  },
];

/**
 * The id of the documented difference explaining `d`, or undefined. When a difference explains
 * the scenario's `extra-placed` or `unplaced` divergence, the decisions after it differ too, so
 * its `claims`, `claim-shapes`, `existing` and `unplaced-karpenter-packing` divergences are put
 * down to the same difference.
 */
export function documentedReason(d: Divergence, s: ParityScenario, karpenter: OracleOutput, c: Comparison): string | undefined {
  const direct = Differences.find((x) => x.explains(d, s, karpenter, c));
  if (direct) return direct.id;
  if (d.kind === 'claims' || d.kind === 'claim-shapes' || d.kind === 'existing' || d.kind === 'unplaced-karpenter-packing') {
    for (const root of c.divergences.filter((x) => x.kind === 'extra-placed' || x.kind === 'unplaced')) {
      const id = Differences.find((x) => x.explains(root, s, karpenter, c))?.id;
      if (id) return id;
    }
  }
  return undefined;
}

/** The pods a divergence names (`namespace/name`). */
function namedPods(d: Divergence, s: ParityScenario): Pod[] {
  return s.pods.filter((p) => new RegExp(`(^|[ :,])${`${p.metadata.namespace ?? 'default'}/${p.metadata.name}`}(,|$| )`).test(d.detail));
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
