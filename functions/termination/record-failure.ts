/**
 * Task RecordFailure: writes why the termination failed on the NodeClaim (`lastError`), best
 * effort, and tells the state machine how long until the deadline so a failed drain still reaches
 * the grace-period cutoff. Never throws for a store problem: the execution must go on to the
 * cutoff or to its Fail state either way.
 */
import { taskHandler } from './lambda.ts';
import { TaskInputSchema, type TaskInput, type TerminationDeps } from './schemas.ts';
import { updateClaim } from './claims.ts';

export { TaskInputSchema as InputSchema };

export interface RecordFailureResult {
  recorded: boolean;
  /** Whole seconds until the deadline (0 when passed); null when the execution has no deadline. */
  secondsUntilDeadline: number | null;
  lastError: string;
}

export async function run(input: TaskInput, deps: Pick<TerminationDeps, 'store' | 'clock'>): Promise<RecordFailureResult> {
  const nowMs = deps.clock.now().getTime();
  const lastError = input.error ? `${input.error.Error}: ${input.error.Cause ?? ''}`.slice(0, 1024) : 'unknown error';
  let recorded = false;
  try {
    recorded = !!(await updateClaim(deps.store, input.nodeClaim, (c) => (c.lastError === lastError ? undefined : { ...c, lastError })));
  } catch {
    recorded = false;
  }
  const deadline = input.deadlineEpochMs;
  return {
    recorded,
    secondsUntilDeadline: deadline == null ? null : Math.max(0, Math.ceil((deadline - nowMs) / 1000)),
    lastError,
  };
}

/** Lambda handler (statemachines/termination.asl.json Task Resource). */
export const handler = taskHandler('termination-record-failure', run);
