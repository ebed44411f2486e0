/**
 * The shape every disruption method shares, and the helper that turns a decision into a
 * {@link DisruptionCommand}. The order the methods run in lives in methods.ts.
 */
import { CommandValidationDelaySeconds } from './constants.ts';
import { toCommandCandidate } from './consolidation.ts';
import type { Simulator } from './simulate.ts';
import type { ClusterState } from './state.ts';
import type { BlockedCandidate, Candidate, DisruptionClass, DisruptionCommand, DisruptionReason, MethodName, ReplacementClaim } from './types.ts';
import { fnv1a32 } from '../api/hash.ts';

/** What a method reads and where it reports blocks. */
export interface MethodContext {
  state: ClusterState;
  sim: Simulator;
  blocked: BlockedCandidate[];
  /**
   * Milliseconds on a monotonic clock the caller injects (the handler: `performance.now`; tests: a
   * fake). Methods with a time budget read it before each simulation; constant 0 = no time passes.
   */
  elapsedMs: () => number;
  /** Methods that stopped on their time budget this run (appended to). */
  timedOut: MethodName[];
  /**
   * Reports the method's candidates before budgets (its eligibility and the candidate blocks
   * passed): Karpenter's `karpenter_voluntary_disruption_eligible_nodes` for the method's reason.
   */
  eligible?: (count: number) => void;
}

/** One disruption method (KC pkg/controllers/disruption `Method`). */
export interface DisruptionMethod {
  name: MethodName;
  /** The budget reason it is governed by. */
  reason: DisruptionReason;
  /** Which blocks it honours ({@link candidateBlock}). */
  disruptionClass: DisruptionClass;
  /** The command this method would run now, or undefined. Pure. */
  compute(ctx: MethodContext): DisruptionCommand | undefined;
}

/** Builds a command; its id is derived from the method, the candidates and `now`. */
export function makeCommand(
  method: MethodName,
  reason: DisruptionReason,
  candidates: readonly Candidate[],
  replacements: readonly ReplacementClaim[],
  now: Date,
  savingsUsdPerHour?: number,
): DisruptionCommand {
  const names = candidates.map((c) => c.nodeName).sort();
  const createdAt = now.toISOString();
  return {
    id: `${method}-${now.getTime()}-${fnv1a32(names.join(',')).toString(16).padStart(8, '0')}`,
    method,
    reason,
    decision: replacements.length > 0 ? 'replace' : 'delete',
    candidates: candidates.map(toCommandCandidate),
    replacements: [...replacements],
    ...(savingsUsdPerHour !== undefined ? { savingsUsdPerHour: Math.round(savingsUsdPerHour * 1e6) / 1e6 } : {}),
    createdAt,
    validateAfter: new Date(now.getTime() + CommandValidationDelaySeconds * 1000).toISOString(),
  };
}

/**
 * Why a method of class `cls` may not disrupt `c`, or undefined: its block (state.ts), except that
 * the eventual class passes a pod's do-not-disrupt or a blocking PDB when the NodeClaim has a
 * terminationGracePeriod (the drain deletes such pods at that deadline). The node's own
 * do-not-disrupt and a nomination block every class. KC types.go `NewCandidate`.
 */
export function candidateBlock(c: Candidate, cls: DisruptionClass): string | undefined {
  if (cls === 'eventual' && c.blockedByPods && c.terminationGracePeriodSeconds !== undefined) return undefined;
  return c.blockedBy;
}

/** Candidates a method of class `cls` may disrupt ({@link candidateBlock}); blocked ones are reported for `method`. */
export function unblocked(candidates: readonly Candidate[], method: MethodName, blocked: BlockedCandidate[], cls: DisruptionClass): Candidate[] {
  const out: Candidate[] = [];
  for (const c of candidates) {
    const why = candidateBlock(c, cls);
    if (why) blocked.push({ nodeName: c.nodeName, nodePool: c.nodePool, method, reason: why });
    else out.push(c);
  }
  return out;
}
