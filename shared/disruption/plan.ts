/**
 * planDisruption: one disruption pass over a cluster snapshot. Decide, don't act: the result is
 * plain data the handler acts on (forceful expirations, then at most one graceful command).
 */
import { findExpirations } from './expiration.ts';
import { hasGracefulExpiration } from './graceful-expiration.ts';
import { Methods } from './methods.ts';
import { hasRebalanceReplace } from './rebalance.ts';
import { Simulator } from './simulate.ts';
import { budgetFor, buildState } from './state.ts';
import { claimConditionUpdates } from './claim-conditions.ts';
import { planStaticCapacity } from './static-capacity.ts';
import type { BudgetStatus, DisruptionPlan, DisruptionReason, DisruptionSnapshot } from './types.ts';

const BudgetReasons: DisruptionReason[] = ['Empty', 'Drifted', 'Underutilized'];

/**
 * Plans one disruption run at `now`: forceful expirations (outside budgets), then the graceful
 * methods in order (methods.ts) until one yields a command. Expiring nodes count as disrupting
 * for the budgets of the graceful methods, as Karpenter counts nodes marked for deletion.
 * Pure: no I/O; time passing is read only through `opts.elapsedMs` (a monotonic clock in ms,
 * default constant 0: the simulation count is then the only bound), which the consolidation
 * methods check against their time budgets (constants.ts `MultiNodeConsolidationTimeoutMs`,
 * `SingleNodeConsolidationTimeoutMs`).
 * @throws ValidationError when a NodePool budget has an unparseable schedule or duration.
 */
export function planDisruption(snapshot: DisruptionSnapshot, now: Date, opts: { elapsedMs?: () => number } = {}): DisruptionPlan {
  const state = buildState(snapshot, now);
  const expirations = findExpirations(state);
  for (const e of expirations) state.leaving.add(e.nodeName);
  const sim = new Simulator(state);
  const blocked = [...state.blocked];
  const timedOut: DisruptionPlan['timedOut'] = [];
  const elapsedMs = opts.elapsedMs ?? (() => 0);
  let command;
  // Set per method run, as Karpenter's gauge: the last method of a reason run this pass wins. The
  // extensions' reasons only when some pool opted in (metrics stay Karpenter's otherwise).
  const eligibleNodes = new Map<DisruptionReason, number>();
  const optedIn: Partial<Record<DisruptionReason, boolean>> = {
    Expired: snapshot.nodePools.some(hasGracefulExpiration),
    Rebalance: snapshot.nodePools.some(hasRebalanceReplace),
  };
  for (const method of Methods) {
    const report = optedIn[method.reason] ?? true;
    command = method.compute({ state, sim, blocked, elapsedMs, timedOut, eligible: (n) => report && eligibleNodes.set(method.reason, n) });
    if (command) break;
  }
  const budgets: BudgetStatus[] = [];
  for (const pool of snapshot.nodePools) {
    // the extensions' reasons only where a pool opted in (metrics stay Karpenter's otherwise)
    const reasons: DisruptionReason[] = [
      ...BudgetReasons,
      ...(hasGracefulExpiration(pool) ? ['Expired' as const] : []),
      ...(hasRebalanceReplace(pool) ? ['Rebalance' as const] : []),
    ];
    for (const r of reasons) budgets.push(budgetFor(state, pool.metadata.name, r));
  }
  // Static pools kept at their count (KC static provisioning / deprovisioning), on the same records.
  const staticCapacity = planStaticCapacity(snapshot, now, {
    enabled: snapshot.settings?.staticCapacity ?? false,
    expiring: new Set(expirations.map((e) => e.nodeClaim)),
  });
  return {
    expirations,
    staticCapacity,
    ...(command ? { command } : {}),
    blocked,
    budgets,
    simulations: sim.simulations,
    timedOut,
    claimConditions: claimConditionUpdates(state),
    eligibleNodes: [...eligibleNodes].map(([reason, count]) => ({ reason, count })),
  };
}
