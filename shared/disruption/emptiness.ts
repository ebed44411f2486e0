/**
 * Emptiness: delete nodes that run no reschedulable pods, once consolidateAfter has passed.
 * Applies under every consolidation policy (WhenEmpty included); budget reason Empty. Highest savings
 * ratio first (cost.ts), so a budget keeps the most expensive empty nodes.
 * Source: KC pkg/controllers/disruption/emptiness.go.
 */
import { sortBySavingsRatio } from './cost.ts';
import { makeCommand, unblocked, type DisruptionMethod, type MethodContext } from './method.ts';
import { withinBudgets } from './state.ts';
import type { DisruptionCommand } from './types.ts';

export const Emptiness: DisruptionMethod = {
  name: 'emptiness',
  reason: 'Empty',
  disruptionClass: 'graceful',
  compute({ state, blocked, eligible }: MethodContext): DisruptionCommand | undefined {
    // Static pools (spec.replicas) keep their node count: never consolidated (KC StaticCapacity).
    const empty = state.candidates.filter(
      (c) => c.reschedulablePods.length === 0 && !state.leaving.has(c.nodeName) && state.nodePools.get(c.nodePool)?.spec.replicas === undefined,
    );
    const ready = empty.filter((c) => {
      const after = state.nodePools.get(c.nodePool)?.spec.disruption?.consolidateAfter ?? '0s';
      if (after === 'Never') {
        blocked.push({ nodeName: c.nodeName, nodePool: c.nodePool, method: 'emptiness', reason: 'consolidateAfter is Never' });
        return false;
      }
      if (!c.consolidatable) {
        blocked.push({
          nodeName: c.nodeName,
          nodePool: c.nodePool,
          method: 'emptiness',
          reason: `consolidateAfter (${after}) has not passed since the last pod event`,
        });
        return false;
      }
      return true;
    });
    const sorted = sortBySavingsRatio(unblocked(ready, 'emptiness', blocked, 'graceful'));
    eligible?.(sorted.length);
    const chosen = withinBudgets(state, sorted, 'Empty', 'emptiness', blocked);
    if (chosen.length === 0) return undefined;
    return makeCommand(
      'emptiness',
      'Empty',
      chosen,
      [],
      state.now,
      chosen.reduce((s, c) => s + (c.priceUsdPerHour ?? 0), 0),
    );
  },
};
