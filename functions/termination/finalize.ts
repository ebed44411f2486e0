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
import { MetricNames } from '../../shared/api/metrics.ts';

export { TaskInputSchema as InputSchema };

export interface FinalizeResult {
  claimFound: boolean;
  releasedBudgetOf: string | null;
}

/** @throws whatever the ports throw (TransientError, ConflictError) for the state machine's Retry. */
export async function run(input: TaskInput, deps: Pick<TerminationDeps, 'store' | 'budgets' | 'clock' | 'log' | 'metrics'>): Promise<FinalizeResult> {
  const now = deps.clock.now().toISOString();
  const drained = input.drain?.drained === true || input.drain?.done === true;
  const volumesDetached = drained && (input.drain?.volumesPendingCount ?? 0) === 0;
  let finished: { nodePool: string; startedAt?: string; hadNode: boolean; capacityType?: string; zone?: string } | undefined;
  const claim = await updateClaim(deps.store, input.nodeClaim, (c) => {
    if (c.phase === 'Terminated') return undefined;
    finished = {
      nodePool: c.nodePool,
      hadNode: !!c.nodeName,
      ...(c.termination?.startedAt ? { startedAt: c.termination.startedAt } : {}),
      ...(c.capacityType ? { capacityType: c.capacityType } : {}),
      ...(c.zone ? { zone: c.zone } : {}),
    };
    let next = setCondition(c, 'Drained', drained ? 'True' : 'False', now, drained ? 'Drained' : 'TerminationGracePeriodElapsed');
    next = setCondition(
      next,
      'VolumesDetached',
      volumesDetached ? 'True' : 'False',
      now,
      volumesDetached ? 'VolumesDetached' : 'TerminationGracePeriodElapsed',
    );
    next = setCondition(next, 'InstanceTerminating', 'True', now, input.reason);
    next = setCondition(next, 'Ready', 'False', now, 'Terminated');
    return { ...next, phase: 'Terminated', retainUntil: new Date(deps.clock.now().getTime() + TerminatedClaimRetentionSeconds * 1000).toISOString() };
  });
  // Counted once: only the invocation whose write made the claim Terminated.
  if (finished && claim?.phase === 'Terminated') {
    deps.metrics?.count(MetricNames.nodeClaimsTerminated, {
      nodepool: finished.nodePool,
      reason: input.reason,
      ...(finished.capacityType ? { capacity_type: finished.capacityType } : {}),
      ...(finished.zone ? { zone: finished.zone } : {}),
    });
    if (finished.hadNode) deps.metrics?.count(MetricNames.nodesTerminated, { nodepool: finished.nodePool });
    if (finished.startedAt)
      deps.metrics?.seconds(MetricNames.nodeClaimsTerminationDuration, (Date.parse(now) - Date.parse(finished.startedAt)) / 1000, {
        nodepool: finished.nodePool,
      });
  }
  if (input.budgetNodePool) await deps.budgets.release(input.budgetNodePool, input.nodeClaim);
  deps.log?.info('deleted nodeclaim', { NodeClaim: input.nodeClaim, drained, reason: input.reason });
  return { claimFound: !!claim, releasedBudgetOf: input.budgetNodePool ?? null };
}

/** Lambda handler (statemachines/termination.asl.json Task Resource). */
export const handler = taskHandler('termination-finalize', run);
