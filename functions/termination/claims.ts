/**
 * NodeClaim writes shared by the termination tasks: read, change, conditional write, re-read on a
 * lost race (a few times; then the ConflictError goes to the state machine's Retry).
 */
import { setCondition, type NodeClaim } from '../../shared/api/nodeclaim.ts';
import type { TaskInput } from './schemas.ts';
import type { NodeClaimStore } from '../../shared/api/ports.ts';
import { ConflictError } from '../../shared/api/errors.ts';
import { terminationDeadline } from '../../shared/api/termination-target.ts';

/** In-task attempts on a version conflict before giving up to the state machine's Retry. */
const ConflictAttempts = 3;

/**
 * Applies `change` to the stored claim and writes it conditionally on its version.
 * `change` returns undefined to skip the write. Returns the stored claim, or undefined if absent.
 * @throws ConflictError after ConflictAttempts lost races.
 */
export async function updateClaim(store: NodeClaimStore, name: string, change: (c: NodeClaim) => NodeClaim | undefined): Promise<NodeClaim | undefined> {
  for (let attempt = 1; ; attempt++) {
    const claim = await store.get(name);
    if (!claim) return undefined;
    const next = change(claim);
    if (!next) return claim;
    try {
      return await store.update(next);
    } catch (err) {
      if (!(err instanceof ConflictError) || attempt >= ConflictAttempts) throw err;
    }
  }
}

/**
 * The claim marked Terminating with this execution's termination record (attempt, reason,
 * deadline, budget pool, heartbeat), or undefined when there is nothing to write: a Terminated
 * claim, a record of a later attempt (this execution was superseded), or this attempt already
 * recorded. The deadline recorded is the one the record allows (terminationDeadline), not the
 * input's: gc carries the attempt on, and backstops it, from what is recorded.
 */
export function recordTermination(c: NodeClaim, input: TaskInput, now: string): NodeClaim | undefined {
  if (c.phase === 'Terminated') return undefined;
  const attempt = input.attempt ?? 1;
  const t = c.termination;
  const deadline = terminationDeadline(c, input.deadlineEpochMs, Date.parse(now));
  if (c.phase === 'Terminating' && t && (t.attempt > attempt || (t.attempt === attempt && t.reason === input.reason && t.deadlineEpochMs === deadline)))
    return undefined;
  const marked = c.phase === 'Terminating' ? c : { ...setCondition(c, 'DisruptionReason', 'True', now, input.reason), phase: 'Terminating' as const };
  return {
    ...marked,
    termination: {
      attempt,
      reason: input.reason,
      ...(deadline !== undefined ? { deadlineEpochMs: deadline } : {}),
      ...((input.budgetNodePool ?? t?.budgetNodePool) ? { budgetNodePool: (input.budgetNodePool ?? t?.budgetNodePool)! } : {}),
      startedAt: t?.startedAt ?? now,
      heartbeatAt: now,
      ...(t?.ended ? { ended: t.ended } : {}),
      failures: t?.failures ?? 0,
    },
  };
}
