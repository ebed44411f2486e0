/**
 * Task RecordFailure: writes on the NodeClaim why and how an execution did not go on as planned,
 * best effort (never throws for a store problem: the execution must carry on either way), and
 * tells the state machine what to do next. Three cases, by the state it is called from:
 * - drain phase (`$.drainError`, Cordon or Drain failed after their retries): `lastError` is
 *   recorded and Cordon + Drain are tried again after `retryAfterSeconds` — one minute, five once
 *   it has failed {@link FailuresBeforeSlowRetry} times, never past the deadline; at the deadline
 *   the cutoff follows. A drain is never abandoned: with no deadline it is retried for as long as
 *   it takes (as Karpenter keeps reconciling a terminating node), and after
 *   {@link MaxDrainFailuresPerExecution} failures the execution continues as a new one (history limit);
 * - terminate phase (`$.error`, TerminateInstance or Finalize failed): the attempt is recorded as
 *   ended `failed` (claim `termination.ended`, `failures` + 1); the execution then fails and gc
 *   starts the next attempt (functions/gc/handler.ts), backing off by the failure count;
 * - `$.ending` = continued (ContinueAsNew): the attempt is recorded as ended `continued`; gc starts
 *   the next attempt on its next pass.
 */
import { taskHandler } from './lambda.ts';
import { TaskInputSchema, type TaskInput, type TerminationDeps } from './schemas.ts';
import { recordTermination, updateClaim } from './claims.ts';
import type { NodeClaim } from '../../shared/api/nodeclaim.ts';
import { requestDisagreement, terminationDeadline } from '../../shared/api/termination-target.ts';

export { TaskInputSchema as InputSchema };

/** Seconds before Cordon + Drain are tried again after a drain-phase failure. */
export const DrainFailureRetrySeconds = 60;
/** …and once this many have failed in one execution, this many seconds. */
export const FailuresBeforeSlowRetry = 10;
export const DrainFailureSlowRetrySeconds = 300;
/** Drain-phase failures one execution absorbs before it continues as a new one (each costs ~30 history events). */
export const MaxDrainFailuresPerExecution = 200;

export interface RecordFailureResult {
  recorded: boolean;
  /** Whole seconds until the deadline (0 when passed); null when the execution has no deadline. */
  secondsUntilDeadline: number | null;
  lastError: string;
  /** Drain-phase failures in this execution so far. */
  failures: number;
  /** Seconds to wait before Cordon + Drain again (drain phase). */
  retryAfterSeconds: number;
  deadlineReached: boolean;
  /** Too many failures for one execution's history: continue as the next attempt. */
  continueAsNew: boolean;
}

export async function run(input: TaskInput, deps: Pick<TerminationDeps, 'store' | 'clock'>): Promise<RecordFailureResult> {
  const nowMs = deps.clock.now().getTime();
  const now = new Date(nowMs).toISOString();
  const attempt = input.attempt ?? 1;
  const caught = input.error ?? input.drainError;
  const lastError = input.ending === 'continued' ? undefined : caught ? `${caught.Error}: ${caught.Cause ?? ''}`.slice(0, 1024) : 'unknown error';
  const ended: 'failed' | 'continued' | undefined = input.ending === 'continued' ? 'continued' : input.error ? 'failed' : undefined;
  let recorded = false;
  let stored: NodeClaim | undefined;
  try {
    stored = await updateClaim(deps.store, input.nodeClaim, (claim) => {
      // An input naming another target than the claim's records nothing (the tasks refuse it).
      if (requestDisagreement(claim, input)) return undefined;
      // An attempt whose Cordon never succeeded (it failed, then the deadline sent it straight to
      // the cutoff) has not recorded itself yet: record it now, so the claim is Terminating and gc
      // carries the failed attempt on (otherwise nothing ever looked at it again: chaos seed 14).
      const c = ended ? (recordTermination(claim, input, now) ?? claim) : claim;
      const t = c.termination;
      const endRecord =
        ended && t && t.attempt === attempt && t.ended?.attempt !== attempt
          ? { termination: { ...t, ended: { attempt, outcome: ended, at: now }, failures: t.failures + (ended === 'failed' ? 1 : 0) } }
          : {};
      if (lastError === undefined || c.lastError === lastError) return Object.keys(endRecord).length ? { ...c, ...endRecord } : c === claim ? undefined : c;
      return { ...c, lastError, ...endRecord };
    });
    recorded = !!stored && !requestDisagreement(stored, input);
  } catch {
    recorded = false;
    stored = await deps.store.get(input.nodeClaim).catch(() => undefined);
  }
  // The deadline the claim's record allows (the input's is a request); no claim: none.
  const deadline = stored ? terminationDeadline(stored, input.deadlineEpochMs, nowMs) : undefined;
  const secondsUntilDeadline = deadline == null ? null : Math.max(0, Math.ceil((deadline - nowMs) / 1000));
  const failures = (input.failure?.failures ?? 0) + (input.drainError && !input.error && !ended ? 1 : 0);
  const base = failures > FailuresBeforeSlowRetry ? DrainFailureSlowRetrySeconds : DrainFailureRetrySeconds;
  return {
    recorded,
    secondsUntilDeadline,
    lastError: lastError ?? '',
    failures,
    retryAfterSeconds: Math.max(1, secondsUntilDeadline === null ? base : Math.min(base, secondsUntilDeadline)),
    deadlineReached: secondsUntilDeadline === 0,
    continueAsNew: failures >= MaxDrainFailuresPerExecution,
  };
}

/** Lambda handler (statemachines/termination.asl.json Task Resource). */
export const handler = taskHandler('termination-record-failure', run);
