/**
 * Disruption: decide which nodes should go, safely and within budgets.
 *
 * `planDisruption(snapshot, now)` returns forceful expirations and at most one graceful command
 * (rebalance → emptiness → graceful expiration → drift → multi-node → single-node consolidation, methods.ts);
 * `validateCommand` re-checks a command after the 15 s validation delay. Pure: no I/O, no clock.
 * Behaviour follows Karpenter v1 (kubernetes-sigs/karpenter pkg/controllers/disruption).
 */
export type * from './types.ts';
export { planDisruption } from './plan.ts';
export { planStaticCapacity, type StaticCapacityPlan } from './static-capacity.ts';
export { validateCommand, type ValidationOutcome } from './validation.ts';
export { Methods } from './methods.ts';
export { isBudgetActive, budgetCap, budgetNodes, budgetStatus, counterLimit, normalizeSchedule } from './budgets.ts';
export { driftReason, effectiveRequirements } from './drift-detection.ts';
export { evictionCost, disruptionCost, lifetimeRemaining } from './cost.ts';
export { parseDurationSeconds } from '../api/duration.ts';
export { doNotDisruptUntilMs, isReschedulable, isDoNotDisruptActive, PdbLimits } from './pods.ts';
export { hasGracefulExpiration } from './graceful-expiration.ts';
export { claimExpireAt, isClaimExpired } from './expiration.ts';
export { claimOfNode, claimsByProviderId, isNodeOfClaim, liveNodeProblem } from './state.ts';
export { instanceIdOfClaim } from '../api/provider-id.ts';
export { hasRebalanceReplace } from './rebalance.ts';
export * from './constants.ts';
