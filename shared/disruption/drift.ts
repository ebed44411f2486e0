/**
 * Drift: replace nodes that no longer match their NodePool / EC2NodeClass (drift-detection.ts).
 * One node per command, as Karpenter v1.15: empty drifted nodes first (deleted, no replacement;
 * pods moved off a drifted node then never land on one that leaves next), each group earliest drift
 * first (the Drifted condition's transition time; drift found just now counts as now, then
 * disruption cost); a node with pods gets as many replacement NodeClaims as its pods need (no
 * price rule: drift is about correctness, not cost). A node whose pool's budget is spent is skipped,
 * the next one tried.
 * Budget reason Drifted. Source: KC pkg/controllers/disruption/drift.go.
 */
import { isStaticNodePool } from '../api/nodepool.ts';
import { byDisruptionCost } from './cost.ts';
import { makeCommand, unblocked, type DisruptionMethod, type MethodContext } from './method.ts';
import { replacementsFor } from './replacements.ts';
import { budgetFor, describeBudget } from './state.ts';
import type { Candidate, DisruptionCommand } from './types.ts';

/** When the candidate drifted, ms since epoch: its Drifted condition's transition, else now. */
export function driftTime(c: Candidate, now: Date): number {
  const t = c.driftedAt ? Date.parse(c.driftedAt) : NaN;
  return Number.isNaN(t) ? now.getTime() : t;
}

export const Drift: DisruptionMethod = {
  name: 'drift',
  reason: 'Drifted',
  disruptionClass: 'eventual',
  compute({ state, sim, blocked, eligible }: MethodContext): DisruptionCommand | undefined {
    // A static pool's drifted nodes are replaced one for one by static drift (static-drift.ts).
    const drifted = state.candidates.filter(
      (c) => c.drifted && !state.leaving.has(c.nodeName) && !isStaticNodePool(state.nodePools.get(c.nodePool) ?? { spec: {} }),
    );
    const sorted = unblocked(drifted, 'drift', blocked, Drift.disruptionClass).sort(
      (a, b) => driftTime(a, state.now) - driftTime(b, state.now) || byDisruptionCost(a, b),
    );
    eligible?.(sorted.length);
    const ordered = [...sorted.filter((c) => c.reschedulablePods.length === 0), ...sorted.filter((c) => c.reschedulablePods.length > 0)];
    for (const c of ordered) {
      const budget = budgetFor(state, c.nodePool, 'Drifted');
      if (budget.allowed <= 0) {
        blocked.push({
          nodeName: c.nodeName,
          nodePool: c.nodePool,
          method: 'drift',
          reason: `disruption budget for Drifted in nodepool "${c.nodePool}" is spent (${describeBudget(budget)})`,
        });
        continue;
      }
      if (c.reschedulablePods.length === 0) return makeCommand('drift', 'Drifted', [c], [], state.now);
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
