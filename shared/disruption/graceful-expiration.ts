/**
 * Graceful expiration (nodefleet extension): in a NodePool annotated
 * `nodefleet.io/graceful-expiration: "true"`, an expired node is not terminated on the spot
 * (Karpenter v1's forceful expiration) but waits for the pool's budget (budgets that list no
 * reasons) and gets its replacement launched and Initialized before it is drained — the
 * behaviour many users asked for after v1 (see KC designs/forceful-expiration.md and PR #3106).
 * do-not-disrupt and PDBs do not block it (expiry still happens; the drain respects PDBs and
 * terminationGracePeriod bounds it), so a pod cannot pin an expired node forever.
 */
import { AnnotationGracefulExpiration } from '../api/labels.ts';
import type { NodePool } from '../api/nodepool.ts';
import { byDisruptionCost } from './cost.ts';
import { makeCommand, type DisruptionMethod, type MethodContext } from './method.ts';
import { replacementsFor } from './replacements.ts';
import { withinBudgets } from './state.ts';
import type { DisruptionCommand } from './types.ts';

/** Whether the pool opted into graceful expiration. */
export function hasGracefulExpiration(pool: NodePool | undefined): boolean {
  return pool?.metadata.annotations?.[AnnotationGracefulExpiration] === 'true';
}

export const GracefulExpiration: DisruptionMethod = {
  name: 'graceful-expiration',
  reason: 'Expired',
  // Passes every block, as forceful expiration does; the class names how its drain ends.
  disruptionClass: 'eventual',
  compute({ state, sim, blocked, eligible }: MethodContext): DisruptionCommand | undefined {
    const now = state.now.getTime();
    const expired = state.candidates
      .filter(
        (c) =>
          hasGracefulExpiration(state.nodePools.get(c.nodePool)) && c.expireAt !== undefined && Date.parse(c.expireAt) <= now && !state.leaving.has(c.nodeName),
      )
      .sort(byDisruptionCost);
    eligible?.(expired.length);
    const chosen = withinBudgets(state, expired, 'Expired', 'graceful-expiration', blocked);
    for (const c of chosen) {
      const r = replacementsFor(sim, [c], { includeBlockedPods: true });
      if ('reason' in r) {
        blocked.push({ nodeName: c.nodeName, nodePool: c.nodePool, method: 'graceful-expiration', reason: r.reason });
        continue;
      }
      return makeCommand('graceful-expiration', 'Expired', [c], r.replacements, state.now);
    }
    return undefined;
  },
};
