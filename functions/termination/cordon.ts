/**
 * Task Cordon: resolves the node and instance from the NodeClaim, marks the claim Terminating with
 * its disruption reason and records the termination on it (`termination`: what gc needs to carry
 * it on if this execution ends unfinished), then taints the node karpenter.sh/disrupted:NoSchedule and cordons it
 * (Karpenter node/termination/controller.go). Re-entrant: an already tainted and cordoned node is
 * left as is; a missing node or claim is fine.
 */
import { taskHandler } from './lambda.ts';
import { NotFoundError } from '../../shared/api/errors.ts';
import { setCondition, type NodeClaim } from '../../shared/api/nodeclaim.ts';
import { TaintDisrupted } from '../../shared/api/labels.ts';
import { TaskInputSchema, type TaskInput, type Target, type TerminationDeps } from './schemas.ts';
import { updateClaim } from './claims.ts';

export { TaskInputSchema as InputSchema };

/**
 * The claim marked Terminating with this execution's termination record (attempt, reason,
 * deadline, budget pool, heartbeat), or undefined when there is nothing to write: a Terminated
 * claim, a record of a later attempt (this execution was superseded), or this attempt already
 * recorded.
 */
export function recordTermination(c: NodeClaim, input: TaskInput, now: string): NodeClaim | undefined {
  if (c.phase === 'Terminated') return undefined;
  const attempt = input.attempt ?? 1;
  const t = c.termination;
  if (c.phase === 'Terminating' && t && (t.attempt > attempt || (t.attempt === attempt && t.reason === input.reason && t.deadlineEpochMs === (input.deadlineEpochMs ?? undefined)))) return undefined;
  const marked = c.phase === 'Terminating' ? c : { ...setCondition(c, 'DisruptionReason', 'True', now, input.reason), phase: 'Terminating' as const };
  return {
    ...marked,
    termination: {
      attempt,
      reason: input.reason,
      ...(input.deadlineEpochMs != null ? { deadlineEpochMs: input.deadlineEpochMs } : {}),
      ...((input.budgetNodePool ?? t?.budgetNodePool) ? { budgetNodePool: (input.budgetNodePool ?? t?.budgetNodePool)! } : {}),
      startedAt: t?.startedAt ?? now,
      heartbeatAt: now,
      ...(t?.ended ? { ended: t.ended } : {}),
      failures: t?.failures ?? 0,
    },
  };
}

/** @throws whatever the ports throw (TransientError, ConflictError) for the state machine's Retry. */
export async function run(input: TaskInput, deps: Pick<TerminationDeps, 'kube' | 'store' | 'clock' | 'log'>): Promise<Target> {
  const now = deps.clock.now().toISOString();
  const claim = await updateClaim(deps.store, input.nodeClaim, (c) => recordTermination(c, input, now));
  const nodeName = input.nodeName ?? claim?.nodeName ?? null;
  const instanceId = input.instanceId ?? claim?.instanceId ?? null;
  if (!nodeName) return { nodeName, instanceId, nodeFound: false };

  const node = await deps.kube.getNode(nodeName);
  if (!node) return { nodeName, instanceId, nodeFound: false };
  const taints = node.spec?.taints ?? [];
  const tainted = taints.some((t) => t.key === TaintDisrupted.key && t.effect === TaintDisrupted.effect);
  if (tainted && node.spec?.unschedulable) return { nodeName, instanceId, nodeFound: true };
  try {
    await deps.kube.patchNode(nodeName, {
      taints: tainted ? taints : [...taints, { key: TaintDisrupted.key, effect: TaintDisrupted.effect, timeAdded: now }],
      unschedulable: true,
    });
  } catch (err) {
    if (err instanceof NotFoundError) return { nodeName, instanceId, nodeFound: false };
    throw err;
  }
  deps.log?.info('tainted node', { Node: nodeName, NodeClaim: input.nodeClaim, 'taint.Key': TaintDisrupted.key, 'taint.Effect': TaintDisrupted.effect, reason: input.reason });
  return { nodeName, instanceId, nodeFound: true };
}

/** Lambda handler (statemachines/termination.asl.json Task Resource). */
export const handler = taskHandler('termination-cordon', run);
