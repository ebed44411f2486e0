/**
 * Static drift: a drifted node of a static NodePool (spec.replicas) is replaced one for one by a
 * claim of the pool's template — no scheduling simulation, the pool's count is the point — within
 * the pool's Drifted budget and `limits.nodes` (the replacement counts against it), and not while
 * the pool is over its count (scale-down goes first). Earliest drift first, then disruption cost.
 * Source: KC pkg/controllers/disruption/staticdrift.go (runs after emptiness, before drift).
 */
import { isStaticNodePool } from '../api/nodepool.ts';
import { byDisruptionCost } from './cost.ts';
import { driftTime } from './drift.ts';
import { makeCommand, unblocked, type DisruptionMethod, type MethodContext } from './method.ts';
import { grantedByLimit, nodeLimitOf, staticClaimOf, staticPoolCounts } from './static-capacity.ts';
import { budgetFor, describeBudget, type ClusterState } from './state.ts';
import type { Candidate, DisruptionCommand } from './types.ts';

/** Claims whose node leaves this pass (forceful expirations): deleting already. */
function leavingClaims(state: ClusterState): Set<string> {
  return new Set(state.managed.filter((m) => state.leaving.has(m.node.metadata.name)).map((m) => m.claim.name));
}

/**
 * Why static drift may not replace `c` now (over count, node limit), or undefined. The command's
 * validation asks again (validation.ts).
 */
export function staticDriftBlock(state: ClusterState, c: Pick<Candidate, 'nodePool' | 'nodeClaim'>): string | undefined {
  const pool = state.nodePools.get(c.nodePool);
  if (!pool || !isStaticNodePool(pool)) return `nodepool "${c.nodePool}" is not static`;
  const holders = new Set(state.snapshot.budgetHolders?.[c.nodePool] ?? []);
  holders.delete(c.nodeClaim);
  const counts = staticPoolCounts(c.nodePool, state.snapshot.nodeClaims ?? [], leavingClaims(state), holders);
  if (counts.running + counts.pendingDisruption > pool.spec.replicas!)
    return `static nodepool "${c.nodePool}" is over its count (${counts.running + counts.pendingDisruption} > replicas ${pool.spec.replicas}): scaling down first`;
  if (grantedByLimit(counts, nodeLimitOf(pool), 1) < 1)
    return `static nodepool "${c.nodePool}" is at limits.nodes (${pool.spec.limits?.nodes}): no room for a replacement`;
  return undefined;
}

export const StaticDrift: DisruptionMethod = {
  name: 'static-drift',
  reason: 'Drifted',
  disruptionClass: 'eventual',
  compute({ state, blocked, eligible }: MethodContext): DisruptionCommand | undefined {
    const drifted = state.candidates.filter(
      (c) => c.drifted && !state.leaving.has(c.nodeName) && isStaticNodePool(state.nodePools.get(c.nodePool) ?? { spec: {} }),
    );
    const sorted = unblocked(drifted, 'static-drift', blocked, StaticDrift.disruptionClass).sort(
      (a, b) => driftTime(a, state.now) - driftTime(b, state.now) || byDisruptionCost(a, b),
    );
    eligible?.(sorted.length);
    for (const c of sorted) {
      const budget = budgetFor(state, c.nodePool, 'Drifted');
      if (budget.allowed <= 0) {
        blocked.push({
          nodeName: c.nodeName,
          nodePool: c.nodePool,
          method: 'static-drift',
          reason: `disruption budget for Drifted in nodepool "${c.nodePool}" is spent (${describeBudget(budget)})`,
        });
        continue;
      }
      const why = staticDriftBlock(state, c);
      if (why) {
        blocked.push({ nodeName: c.nodeName, nodePool: c.nodePool, method: 'static-drift', reason: why });
        continue;
      }
      const claim = staticClaimOf(state.nodePools.get(c.nodePool)!, state.snapshot);
      if ('reason' in claim) {
        blocked.push({ nodeName: c.nodeName, nodePool: c.nodePool, method: 'static-drift', reason: claim.reason });
        continue;
      }
      return makeCommand('static-drift', 'Drifted', [c], [claim], state.now);
    }
    return undefined;
  },
};
