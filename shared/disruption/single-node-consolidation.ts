/**
 * Single-node consolidation: the first candidate (savings-ratio order interleaved across NodePools,
 * consolidation-candidates.ts) that can be deleted, or
 * replaced by one cheaper node. Spot → spot needs ≥ 15 cheaper types (consolidation.ts).
 * Budget reason Underutilized. After {@link SingleNodeConsolidationTimeoutMs} (or the simulation
 * cap) it gives up for this run, as Karpenter does on its timeout; the next runs start further
 * down the list. Source: KC pkg/controllers/disruption/singlenodeconsolidation.go.
 */
import { DefaultMaxSimulations, SingleNodeConsolidationTimeoutMs } from './constants.ts';
import { computeConsolidation } from './consolidation.ts';
import { FreeCapacity } from './prefilter.ts';
import { balancedApproves, consolidationCandidates, interleaveByNodePool } from './consolidation-candidates.ts';
import { makeCommand, type DisruptionMethod, type MethodContext } from './method.ts';
import { budgetFor } from './state.ts';
import type { DisruptionCommand } from './types.ts';

export const SingleNodeConsolidation: DisruptionMethod = {
  name: 'single-node-consolidation',
  reason: 'Underutilized',
  disruptionClass: 'graceful',
  compute(ctx: MethodContext): DisruptionCommand | undefined {
    const { state, sim, blocked } = ctx;
    const spotToSpot = state.snapshot.settings?.spotToSpotConsolidation ?? false;
    const maxSims = state.snapshot.settings?.maxSimulations ?? DefaultMaxSimulations;
    const deadlineMs = ctx.elapsedMs() + SingleNodeConsolidationTimeoutMs;
    const free = new FreeCapacity(state);
    let candidates = interleaveByNodePool(consolidationCandidates(ctx, 'single-node-consolidation'));
    // When the simulation cap cannot cover every candidate, start each minute's run further down
    // the list so successive runs reach every node (Karpenter instead remembers where a 3-minute
    // timeout stopped it). Deterministic: the offset comes from `now`.
    const budget = maxSims - sim.simulations;
    if (budget > 0 && candidates.length > budget) {
      const offset = (Math.floor(state.now.getTime() / 60_000) * budget) % candidates.length;
      candidates = [...candidates.slice(offset), ...candidates.slice(0, offset)];
    }
    for (const c of candidates) {
      if (budgetFor(state, c.nodePool, 'Underutilized').allowed <= 0) {
        blocked.push({
          nodeName: c.nodeName,
          nodePool: c.nodePool,
          method: 'single-node-consolidation',
          reason: `disruption budget for Underutilized in nodepool "${c.nodePool}" is spent`,
        });
        continue;
      }
      const certain = free.certainFailure(c);
      if (certain) {
        blocked.push({ nodeName: c.nodeName, nodePool: c.nodePool, method: 'single-node-consolidation', reason: certain });
        continue;
      }
      if (sim.simulations >= maxSims) break;
      if (ctx.elapsedMs() >= deadlineMs) {
        ctx.timedOut.push('single-node-consolidation');
        break;
      }
      const outcome = computeConsolidation(sim, [c], { multi: false, spotToSpot });
      if (outcome.decision === 'none') {
        blocked.push({ nodeName: c.nodeName, nodePool: c.nodePool, method: 'single-node-consolidation', reason: outcome.reason });
        continue;
      }
      if (!balancedApproves(state, [c], outcome.savingsUsdPerHour ?? 0)) {
        blocked.push({
          nodeName: c.nodeName,
          nodePool: c.nodePool,
          method: 'single-node-consolidation',
          reason: 'Balanced policy: savings too small for the disruption',
        });
        continue;
      }
      return makeCommand('single-node-consolidation', 'Underutilized', [c], outcome.replacements, state.now, outcome.savingsUsdPerHour);
    }
    return undefined;
  },
};
