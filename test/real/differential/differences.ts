/**
 * The documented differences between nodefleet's `validate` (shared/api/validate.ts
 * validateObject) and the API server with Karpenter's v1.15.0 CRDs, one entry per cause;
 * docs/validate-differential.md explains each with a case. A disagreement where the server
 * accepts and nodefleet refuses is documented when every one of nodefleet's problem lines matches
 * an entry's `problem`; one where the server refuses and nodefleet accepts, when the server's
 * message matches an entry's `server`. Anything else is undocumented.
 */
import type { Verdict } from '../validate-differential.ts';

export interface Difference {
  id: string;
  /** One line: what differs and why. */
  reason: string;
  /** A nodefleet problem line this difference explains (server accepted). */
  problem?: RegExp;
  /** A server message this difference explains (nodefleet accepted). */
  server?: RegExp;
}

export const Differences: Difference[] = [
  {
    id: 'static-nodepool',
    reason:
      "with the StaticCapacity gate off (Karpenter's default) a static NodePool (spec.replicas) is refused: Karpenter's CRD accepts it and its controller then never launches for it",
    problem: /^spec\.replicas: static NodePools \(spec\.replicas\) need the StaticCapacity feature gate/,
  },
  {
    id: 'kubelet-checked-at-validate',
    reason: "Karpenter v1.15's CRD keeps spec.kubelet free-form and checks it in its controller (ValidationSucceeded=False); nodefleet checks it at validate",
    problem: /^spec\.kubelet[.:]/,
  },
  {
    id: 'nodepool-runtime-validation',
    reason:
      "label keys, requirement keys and requirement values the CRD lets through but Karpenter's controller refuses (NodePool RuntimeValidate): nodefleet refuses them at validate",
    problem:
      /^spec\.template\.(metadata\.labels\.[^:]+: "[^"]*" is not a valid label key|spec\.requirements\[\d+\]\.key: unknown key "[^"]*": label domain "[^"]*" is restricted|spec\.requirements\[\d+\]\.values\[\d+\]: "[^"]*" is not a valid label value)/,
  },
  {
    id: 'no-known-capacity-type',
    reason:
      "an In requirement on karpenter.sh/capacity-type (or instance-tenancy) with no known value passes the CRD; Karpenter's controller marks the NodePool not ready ('no valid values found'), nodefleet refuses it at validate and marks it not ready at runtime",
    problem:
      /^spec\.template\.spec\.requirements\[\d+\]\.values: no valid values found in \[[^\]]*\] for (karpenter\.sh\/capacity-type|karpenter\.k8s\.aws\/instance-tenancy),/,
  },
  {
    id: 'negative-limit',
    reason: 'a negative spec.limits quantity is accepted by the CRD (the pool can then never launch); nodefleet refuses it',
    problem: /^spec\.limits\.[^:]+: must not be negative$/,
  },
  {
    id: 'invalid-cron-schedule',
    reason:
      "a budget schedule that matches the CRD's five-field pattern but is no cron (61 * * * *): Karpenter's controller fails closed (no disruption), nodefleet refuses it at validate",
    problem: /^spec\.disruption\.budgets\[\d+\]\.schedule: "[^"]*" is not a valid cron schedule/,
  },
  {
    id: 'unhealthy-budget-reason',
    reason:
      'budget reason Unhealthy (node repair as a disruption method, the NodeRepair gate) is refused: nodefleet repairs as the node.health controller, which budgets do not pace (docs/settings.md)',
    problem: /^spec\.disruption\.budgets\[\d+\]\.reasons\[\d+\]: "Unhealthy" is not valid/,
  },
];

/** The id of the documented difference explaining a disagreement, if any. */
export function documentedDifference(v: Verdict): string | undefined {
  if (v.server.accepted && !v.nodefleet.accepted) {
    const ids = v.nodefleet.problems.map((p) => Differences.find((d) => d.problem?.test(p))?.id);
    return ids.every((id) => id !== undefined) ? [...new Set(ids)].sort().join('+') : undefined;
  }
  if (!v.server.accepted && v.nodefleet.accepted) return Differences.find((d) => d.server?.test(v.server.message))?.id;
  return undefined;
}
