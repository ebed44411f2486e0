/**
 * Task Finalize: marks the NodeClaim Terminated (Drained True when the drain finished, False with
 * reason TerminationGracePeriodElapsed when the cutoff cut it short) and releases the disruption
 * budget slot the execution held. The claim record then expires after TerminatedClaimRetentionSeconds
 * (`retainUntil`, DynamoDB TTL). A claim already gone is fine; releasing twice is harmless.
 */
import { taskHandler } from './lambda.ts';
import { setCondition, TerminatedClaimRetentionSeconds } from '../../shared/api/nodeclaim.ts';
import { TaskInputSchema, type TaskInput, type TerminationDeps } from './schemas.ts';
import { updateClaim } from './claims.ts';

export { TaskInputSchema as InputSchema };

export interface FinalizeResult {
  claimFound: boolean;
  releasedBudgetOf: string | null;
}

/** @throws whatever the ports throw (TransientError, ConflictError) for the state machine's Retry. */
export async function run(input: TaskInput, deps: Pick<TerminationDeps, 'store' | 'budgets' | 'clock' | 'log'>): Promise<FinalizeResult> {
  const now = deps.clock.now().toISOString();
  const drained = input.drain?.drained === true || input.drain?.done === true;
  const volumesDetached = drained && (input.drain?.volumesPendingCount ?? 0) === 0;
  const claim = await updateClaim(deps.store, input.nodeClaim, (c) => {
    if (c.phase === 'Terminated') return undefined;
    let next = setCondition(c, 'Drained', drained ? 'True' : 'False', now, drained ? 'Drained' : 'TerminationGracePeriodElapsed');
    next = setCondition(next, 'VolumesDetached', volumesDetached ? 'True' : 'False', now, volumesDetached ? 'VolumesDetached' : 'TerminationGracePeriodElapsed');
    next = setCondition(next, 'InstanceTerminating', 'True', now, input.reason);
    next = setCondition(next, 'Ready', 'False', now, 'Terminated');
    return { ...next, phase: 'Terminated', retainUntil: new Date(deps.clock.now().getTime() + TerminatedClaimRetentionSeconds * 1000).toISOString() };
  });
  if (input.budgetNodePool) await deps.budgets.release(input.budgetNodePool, input.nodeClaim);
  deps.log?.info('deleted nodeclaim', { NodeClaim: input.nodeClaim, drained, reason: input.reason });
  return { claimFound: !!claim, releasedBudgetOf: input.budgetNodePool ?? null };
}

/** Lambda handler (statemachines/termination.asl.json Task Resource). */
export const handler = taskHandler('termination-finalize', run);
