/**
 * Command validation: after {@link CommandValidationDelaySeconds}, the cluster is read again and
 * the command must still hold — same candidates (the same NodeClaims), still candidates and
 * unblocked, their reason still true on the fresh state (Empty: still empty; Drifted: still
 * drifted; Expired: past the claim's own expiry, in a pool with graceful expiration; Rebalance:
 * still recommended), budgets still allowing them, and the re-simulation reaching the same kind
 * of decision (a delete still needs no new node; a replace still needs exactly one node, still
 * cheaper). Otherwise it is dropped (pods churned). The command arrives as a state-machine input
 * anyone allowed to start the loop can write: it is a request, and every fact in it is re-derived
 * here. Source: KC pkg/controllers/disruption/validation.go.
 *
 * Graceful expiration ignores do-not-disrupt and PDBs at candidate time, as Karpenter's forceful
 * expiration does (the drain still respects PDBs until terminationGracePeriod) — but only for a
 * candidate whose claim has expired: anything else is held to the blocks.
 */
import { CommandValidationDelaySeconds } from './constants.ts';
import { staticDriftBlock } from './static-drift.ts';
import { staticClaimOf } from './static-capacity.ts';
import { computeConsolidation } from './consolidation.ts';
import { hasGracefulExpiration } from './graceful-expiration.ts';
import { candidateBlock, makeCommand } from './method.ts';
import { Methods } from './methods.ts';
import { hasRebalanceReplace } from './rebalance.ts';
import { replacementsFor } from './replacements.ts';
import { Simulator } from './simulate.ts';
import { budgetFor, buildState, counterLimitFor } from './state.ts';
import type { Candidate, DisruptionCommand, DisruptionSnapshot } from './types.ts';

/** Outcome of {@link validateCommand}. */
export type ValidationOutcome =
  | { status: 'wait'; retryAfterSeconds: number }
  | { status: 'invalid'; reason: string }
  | { status: 'valid'; command: DisruptionCommand; counterLimits: Record<string, number> };

/**
 * Re-checks `command` against a fresh snapshot at `now`. A valid result carries the command with
 * refreshed replacements (same id and candidates).
 * @throws ValidationError when a budget schedule does not parse.
 */
export function validateCommand(command: DisruptionCommand, snapshot: DisruptionSnapshot, now: Date): ValidationOutcome {
  const waitMs = Date.parse(command.validateAfter) - now.getTime();
  if (waitMs > 0) return { status: 'wait', retryAfterSeconds: Math.ceil(waitMs / 1000) };
  const method = Methods.find((m) => m.name === command.method);
  if (method?.reason !== command.reason) return { status: 'invalid', reason: `method ${command.method} does not disrupt for ${command.reason}` };
  const state = buildState(snapshot, now);
  const byName = new Map(state.candidates.map((c) => [c.nodeName, c]));
  const current: Candidate[] = [];
  for (const cc of command.candidates) {
    const c = byName.get(cc.nodeName);
    if (!c) {
      const why = state.blocked.find((b) => b.nodeName === cc.nodeName)?.reason ?? 'node is gone';
      return { status: 'invalid', reason: `${cc.nodeName}: ${why}` };
    }
    if (c.nodeClaim !== cc.nodeClaim) return { status: 'invalid', reason: `${cc.nodeName}: is the node of nodeclaim ${c.nodeClaim}, not ${cc.nodeClaim}` };
    if (command.reason === 'Expired') {
      if (!hasGracefulExpiration(state.nodePools.get(c.nodePool)))
        return { status: 'invalid', reason: `${c.nodeName}: nodepool "${c.nodePool}" does not expire gracefully` };
      if (c.expireAt === undefined || Date.parse(c.expireAt) > now.getTime())
        return { status: 'invalid', reason: `${c.nodeName}: nodeclaim ${c.nodeClaim} has not expired (expires ${c.expireAt ?? 'never'})` };
    }
    const block = command.reason === 'Expired' ? undefined : candidateBlock(c, method.disruptionClass);
    if (block) return { status: 'invalid', reason: `${c.nodeName}: ${block}` };
    if (command.reason === 'Empty' && c.reschedulablePods.length > 0) return { status: 'invalid', reason: `${c.nodeName}: no longer empty` };
    if (command.reason === 'Drifted' && !c.drifted) return { status: 'invalid', reason: `${c.nodeName}: no longer drifted` };
    if (command.reason === 'Rebalance' && (!c.rebalanceRecommendedAt || !hasRebalanceReplace(state.nodePools.get(c.nodePool)))) {
      return { status: 'invalid', reason: `${c.nodeName}: no rebalance recommendation to act on (or its nodepool no longer opts in)` };
    }
    if ((command.reason === 'Empty' || command.reason === 'Underutilized') && !c.consolidatable) {
      return { status: 'invalid', reason: `${c.nodeName}: consolidateAfter has not passed since the last pod event` };
    }
    current.push(c);
  }
  const perPool = new Map<string, number>();
  for (const c of current) perPool.set(c.nodePool, (perPool.get(c.nodePool) ?? 0) + 1);
  for (const [pool, n] of perPool) {
    const b = budgetFor(state, pool, command.reason);
    if (b.allowed < n)
      return { status: 'invalid', reason: `disruption budget for ${command.reason} in nodepool "${pool}" allows ${b.allowed}, command needs ${n}` };
  }

  const sim = new Simulator(state);
  let replacements = command.replacements;
  if (command.reason === 'Empty') {
    replacements = [];
  } else if (command.method === 'static-drift') {
    // one for one with the pool's template, while the pool is not over its count and has room under limits.nodes
    replacements = [];
    for (const c of current) {
      const why = staticDriftBlock(state, c);
      if (why) return { status: 'invalid', reason: `${c.nodeName}: ${why}` };
      const r = staticClaimOf(state.nodePools.get(c.nodePool)!, snapshot);
      if ('reason' in r) return { status: 'invalid', reason: `${c.nodeName}: ${r.reason}` };
      replacements.push(r);
    }
  } else if (command.reason === 'Underutilized') {
    const spotToSpot = snapshot.settings?.spotToSpotConsolidation ?? false;
    const outcome = computeConsolidation(sim, current, { multi: current.length > 1, spotToSpot });
    if (outcome.decision === 'none') return { status: 'invalid', reason: outcome.reason };
    if (outcome.decision !== command.decision) return { status: 'invalid', reason: `the decision changed from ${command.decision} to ${outcome.decision}` };
    replacements = outcome.replacements;
  } else {
    const r = replacementsFor(sim, current, { includeBlockedPods: command.reason === 'Expired' });
    if ('reason' in r) return { status: 'invalid', reason: r.reason };
    replacements = r.replacements;
  }
  const fresh = makeCommand(command.method, command.reason, current, replacements, new Date(Date.parse(command.createdAt)), command.savingsUsdPerHour);
  const counterLimits = Object.fromEntries([...perPool.keys()].map((pool) => [pool, counterLimitFor(state, pool, command.reason)]));
  return { status: 'valid', command: { ...fresh, id: command.id }, counterLimits };
}

export { CommandValidationDelaySeconds };
