/**
 * Multi-node consolidation: remove several nodes at once, or replace them with one cheaper node.
 * Binary search over the prefix of the (budget-filtered) candidates sorted by savings ratio —
 * first ≤ 100 — for the largest prefix that still consolidates; always ≥ 2 nodes (single-node
 * consolidation handles one). Budget reason Underutilized. The search stops after
 * {@link MultiNodeConsolidationTimeoutMs} (or the simulation cap) and keeps the best prefix found
 * so far, as Karpenter does on its timeout.
 * Source: KC pkg/controllers/disruption/multinodeconsolidation.go `firstNConsolidationOption`.
 */
import { DefaultMaxSimulations, MultiNodeConsolidationTimeoutMs, MultiNodeMaxCandidates } from './constants.ts';
import { computeConsolidation, type ConsolidationOutcome } from './consolidation.ts';
import { balancedApproves, consolidationCandidates } from './consolidation-candidates.ts';
import { makeCommand, type DisruptionMethod, type MethodContext } from './method.ts';
import { withinBudgets } from './state.ts';
import type { Candidate, DisruptionCommand } from './types.ts';

export const MultiNodeConsolidation: DisruptionMethod = {
  name: 'multi-node-consolidation',
  reason: 'Underutilized',
  disruptionClass: 'graceful',
  compute(ctx: MethodContext): DisruptionCommand | undefined {
    const { state, sim } = ctx;
    const eligible = withinBudgets(state, consolidationCandidates(ctx, 'multi-node-consolidation'), 'Underutilized', 'multi-node-consolidation', ctx.blocked);
    const limit = state.snapshot.settings?.multiNodeMaxCandidates ?? MultiNodeMaxCandidates;
    const candidates = eligible.slice(0, limit);
    if (candidates.length < 2) return undefined;
    const spotToSpot = state.snapshot.settings?.spotToSpotConsolidation ?? false;
    const maxSims = state.snapshot.settings?.maxSimulations ?? DefaultMaxSimulations;
    const deadlineMs = ctx.elapsedMs() + MultiNodeConsolidationTimeoutMs;
    let lo = 1;
    let hi = candidates.length - 1;
    let best: { set: Candidate[]; outcome: Exclude<ConsolidationOutcome, { decision: 'none' }> } | undefined;
    while (lo <= hi) {
      if (sim.simulations >= maxSims) break;
      if (ctx.elapsedMs() >= deadlineMs) {
        ctx.timedOut.push('multi-node-consolidation');
        break;
      }
      const mid = Math.floor((lo + hi) / 2);
      const set = candidates.slice(0, mid + 1);
      const outcome = computeConsolidation(sim, set, { multi: true, spotToSpot });
      if (outcome.decision !== 'none' && balancedApproves(state, set, outcome.savingsUsdPerHour ?? 0)) {
        best = { set, outcome };
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    if (!best) return undefined;
    return makeCommand('multi-node-consolidation', 'Underutilized', best.set, best.outcome.replacements, state.now, best.outcome.savingsUsdPerHour);
  },
};
