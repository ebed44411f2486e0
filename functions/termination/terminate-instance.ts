/**
 * Task TerminateInstance: TerminateInstances, then reports done once EC2 says shutting-down or
 * terminated (Karpenter re-checks the instance every 5 s: node/termination/controller.go).
 * Re-entrant: an instance already shutting down, terminated or gone counts as done.
 */
import { taskHandler } from './lambda.ts';
import { setCondition } from '../../shared/api/nodeclaim.ts';
import { TaskInputSchema, type TaskInput, type TerminationDeps } from './schemas.ts';
import { verifiedTarget } from './target.ts';
import { updateClaim } from './claims.ts';

export { TaskInputSchema as InputSchema };

/** Seconds between checks while EC2 has not yet moved the instance to shutting-down. */
export const InstanceCheckSeconds = 5;

export interface TerminateInstanceResult {
  done: boolean;
  retryAfterSeconds: number;
  /** EC2 state seen last, or 'gone'. */
  state: string;
}

const Gone = new Set(['shutting-down', 'terminated']);

/**
 * Terminates the claim's instance only, and only when its tags name this cluster, the claim's
 * NodePool and the claim (never the input's instanceId).
 * @throws TargetRefusedError; whatever the ports throw (TransientError …) for the state machine's Retry.
 */
export async function run(
  input: TaskInput,
  deps: Pick<TerminationDeps, 'cloud' | 'store' | 'clock' | 'log' | 'clusterName'>,
): Promise<TerminateInstanceResult> {
  const { instanceId, instance: before } = await verifiedTarget('TerminateInstance', input, deps, { instance: true, record: true });
  if (!instanceId) return { done: true, retryAfterSeconds: 0, state: 'gone' };
  if (!before || Gone.has(before.state)) return { done: true, retryAfterSeconds: 0, state: before?.state ?? 'gone' };

  const now = deps.clock.now().toISOString();
  await updateClaim(deps.store, input.nodeClaim, (c) =>
    c.conditions.some((x) => x.type === 'InstanceTerminating' && x.status === 'True')
      ? undefined
      : setCondition(c, 'InstanceTerminating', 'True', now, input.reason),
  );
  await deps.cloud.terminate(instanceId);
  deps.log?.info('terminating instance', { instanceId, NodeClaim: input.nodeClaim });
  const after = await deps.cloud.get(instanceId);
  const done = !after || Gone.has(after.state);
  return { done, retryAfterSeconds: done ? 0 : InstanceCheckSeconds, state: after?.state ?? 'gone' };
}

/** Lambda handler (statemachines/termination.asl.json Task Resource). */
export const handler = taskHandler('termination-terminate-instance', run);
