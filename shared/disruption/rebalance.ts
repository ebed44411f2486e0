/**
 * Rebalance (nodefleet extension): replace spot nodes EC2 flagged with a rebalance recommendation
 * (elevated interruption risk), before the two-minute interruption notice comes.
 *
 * Karpenter only records an event for a rebalance recommendation (KA
 * pkg/controllers/interruption/controller.go). nodefleet does the same by default; in a NodePool
 * annotated `nodefleet.io/rebalance-replace: "true"` the interruption function marks the claim
 * (`nodefleet.io/rebalance-recommended-at`) and this method — first in {@link Methods}, the risk
 * is the most urgent — turns it into a graceful replacement: the replacement NodeClaims are
 * launched and must be Initialized before the node is drained, exactly like drift.
 *
 * Governed by the budgets that list no reasons (reason Rebalance is not a Karpenter budget
 * reason), schedules evaluated in UTC (budgets.ts); do-not-disrupt and PDBs block it like any
 * graceful method. Empty flagged nodes go together without replacements; otherwise one node per
 * command, the oldest recommendation first.
 */
import { AnnotationRebalanceReplace } from '../api/labels.ts';
import type { NodePool } from '../api/nodepool.ts';
import { byDisruptionCost } from './cost.ts';
import { makeCommand, unblocked, type DisruptionMethod, type MethodContext } from './method.ts';
import { replacementsFor } from './replacements.ts';
import { withinBudgets } from './state.ts';
import type { Candidate, DisruptionCommand } from './types.ts';

/** Whether the pool opted into rebalance replacement. */
export function hasRebalanceReplace(pool: NodePool | undefined): boolean {
  return pool?.metadata.annotations?.[AnnotationRebalanceReplace] === 'true';
}

/** Oldest recommendation first, then Karpenter's disruption cost. */
function byRecommendation(a: Candidate, b: Candidate): number {
  const d = Date.parse(a.rebalanceRecommendedAt ?? '') - Date.parse(b.rebalanceRecommendedAt ?? '');
  return Number.isNaN(d) || d === 0 ? byDisruptionCost(a, b) : d;
}

export const Rebalance: DisruptionMethod = {
  name: 'rebalance',
  reason: 'Rebalance',
  disruptionClass: 'graceful',
  compute({ state, sim, blocked, eligible }: MethodContext): DisruptionCommand | undefined {
    const flagged = state.candidates.filter(
      (c) => c.rebalanceRecommendedAt !== undefined && hasRebalanceReplace(state.nodePools.get(c.nodePool)) && !state.leaving.has(c.nodeName),
    );
    const sorted = unblocked(flagged, 'rebalance', blocked, 'graceful').sort(byRecommendation);
    eligible?.(sorted.length);
    const chosen = withinBudgets(state, sorted, 'Rebalance', 'rebalance', blocked);
    const empty = chosen.filter((c) => c.reschedulablePods.length === 0);
    if (empty.length > 0) return makeCommand('rebalance', 'Rebalance', empty, [], state.now);
    for (const c of chosen) {
      const r = replacementsFor(sim, [c]);
      if ('reason' in r) {
        blocked.push({ nodeName: c.nodeName, nodePool: c.nodePool, method: 'rebalance', reason: r.reason });
        continue;
      }
      return makeCommand('rebalance', 'Rebalance', [c], r.replacements, state.now);
    }
    return undefined;
  },
};
