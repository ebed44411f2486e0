/**
 * Drift: replace nodes that no longer match their NodePool / EC2NodeClass (drift-detection.ts).
 * Empty drifted nodes go together; otherwise one node at a time, earliest drift first (the
 * Drifted condition's transition time; drift found just now counts as now, then disruption cost),
 * with as many replacement NodeClaims as its pods need (no price rule: drift is about
 * correctness, not cost).
 * Budget reason Drifted. Source: KC pkg/controllers/disruption/drift.go.
 */
import { byDisruptionCost } from './cost.ts';
import { makeCommand, unblocked, type DisruptionMethod, type MethodContext } from './method.ts';
import { replacementsFor } from './replacements.ts';
import { withinBudgets } from './state.ts';
import type { Candidate, DisruptionCommand } from './types.ts';

/** When the candidate drifted, ms since epoch: its Drifted condition's transition, else now. */
function driftTime(c: Candidate, now: Date): number {
  const t = c.driftedAt ? Date.parse(c.driftedAt) : NaN;
  return Number.isNaN(t) ? now.getTime() : t;
}

export const Drift: DisruptionMethod = {
  name: 'drift',
  reason: 'Drifted',
  compute({ state, sim, blocked }: MethodContext): DisruptionCommand | undefined {
    const drifted = state.candidates.filter((c) => c.drifted && !state.leaving.has(c.nodeName));
    const sorted = unblocked(drifted, 'drift', blocked).sort((a, b) => driftTime(a, state.now) - driftTime(b, state.now) || byDisruptionCost(a, b));
    const chosen = withinBudgets(state, sorted, 'Drifted', 'drift', blocked);
    const empty = chosen.filter((c) => c.reschedulablePods.length === 0);
    if (empty.length > 0) return makeCommand('drift', 'Drifted', empty, [], state.now);
    for (const c of chosen) {
      const r = replacementsFor(sim, [c]);
      if ('reason' in r) {
        blocked.push({ nodeName: c.nodeName, nodePool: c.nodePool, method: 'drift', reason: r.reason });
        continue;
      }
      return makeCommand('drift', 'Drifted', [c], r.replacements, state.now);
    }
    return undefined;
  },
};
