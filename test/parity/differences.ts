/**
 * Deliberate differences between nodefleet and Karpenter, the one place they are listed: each
 * with the reason and the case (test/cases/…) that pins nodefleet's behaviour. A parity
 * divergence that one of these explains is counted as documented, not as a failure.
 */
import type { Divergence } from './compare.ts';
import type { OracleOutput } from './oracle.ts';
import type { ParityScenario } from './scenario.ts';

export interface Difference {
  id: string;
  /** Why nodefleet decides differently, and why that is right for its users. */
  reason: string;
  /** The case that pins the behaviour (path under test/cases). */
  case: string;
  /** True when this difference explains the divergence on this scenario. */
  explains: (d: Divergence, s: ParityScenario, karpenter: OracleOutput) => boolean;
}

const AntiAffinityAllDomains = 'unsatisfiable topology constraint for pod anti-affinity';

/** Karpenter's reasons for the pods named in an `extra-placed` divergence. */
function karpenterReasons(d: Divergence, karpenter: OracleOutput): string[] {
  return karpenter.unschedulable.filter((u) => d.detail.includes(u.pod)).map((u) => Object.values(u.reasons).join('; '));
}

export const Differences: Difference[] = [
  {
    id: 'zone-anti-affinity-pins-claim',
    reason:
      'A pod with required pod anti-affinity goes on a claim that may still launch in several domains: Karpenter v1.15 then ' +
      'blocks every domain the claim could land in for the rest of the round (topology.go), so of N replicas with zonal ' +
      'anti-affinity it places one per provisioning round. nodefleet pins the claim to one domain and places the other ' +
      'replicas in the other domains in the same round. Every pod it places more has Karpenter reason ' +
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
 * the scenario's `extra-placed` divergence, the decisions after it differ too, so its `claims`,
 * `claim-shapes` and `existing` divergences are put down to the same difference.
 */
export function documentedReason(d: Divergence, s: ParityScenario, karpenter: OracleOutput, all: readonly Divergence[] = [d]): string | undefined {
  const direct = Differences.find((x) => x.explains(d, s, karpenter));
  if (direct) return direct.id;
  if (d.kind === 'claims' || d.kind === 'claim-shapes' || d.kind === 'existing') {
    const extra = all.find((x) => x.kind === 'extra-placed');
    if (extra) return Differences.find((x) => x.explains(extra, s, karpenter))?.id;
  }
  return undefined;
}
