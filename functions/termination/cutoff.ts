/**
 * Task Cutoff: the grace-period cutoff. Reached when the deadline has passed (or the drain failed
 * and the deadline was waited out): every pod still on the node is deleted with grace period 0,
 * whatever its PDB, do-not-disrupt annotation or preStop hook says, and the state machine goes on
 * to terminate the instance without waiting for them (Karpenter: after terminationGracePeriod the
 * node is deleted regardless; KC pkg/apis/v1/nodepool.go TerminationGracePeriod).
 */
import { taskHandler } from './lambda.ts';
import { TaskInputSchema, type TaskInput, type TerminationDeps } from './schemas.ts';
import { TargetRefusedError } from '../../shared/api/errors.ts';
import { terminationDeadline } from '../../shared/api/termination-target.ts';
import { verifiedTarget } from './target.ts';
import { classifyPod } from '../../shared/disruption/drain-plan.ts';
import { podKey } from '../../shared/disruption/pods.ts';

export { TaskInputSchema as InputSchema };

export interface CutoffResult {
  deleted: string[];
  deletedCount: number;
}

/**
 * Acts only on the claim's node (checked live) and only once the deadline the claim's record
 * allows has passed (terminationDeadline), whatever the input says.
 * @throws TargetRefusedError (ends the execution Refused); whatever the ports throw (the state machine's Catch still goes on to TerminateInstance).
 */
export async function run(input: TaskInput, deps: Pick<TerminationDeps, 'kube' | 'store' | 'clock' | 'log' | 'clusterName'>): Promise<CutoffResult> {
  const nowMs = deps.clock.now().getTime();
  const { claim, nodeName } = await verifiedTarget('Cutoff', input, deps, { node: true });
  const deadline = terminationDeadline(claim, input.deadlineEpochMs, nowMs);
  if (deadline === undefined || nowMs < deadline) {
    const reason = `nodeclaim ${claim.name}: the deadline its record allows ${deadline === undefined ? 'is none' : `is ${new Date(deadline).toISOString()}`}, not passed`;
    deps.log?.info('termination refused', { task: 'Cutoff', NodeClaim: input.nodeClaim, reason });
    throw new TargetRefusedError(reason);
  }
  if (!nodeName) return { deleted: [], deletedCount: 0 };
  // The pods the drain waits for, DaemonSet pods included (Karpenter's deadline deletion covers
  // every group); mirror, terminal and disrupted-tolerating pods are not the drain's.
  const pods = (await deps.kube.listPods({ nodeName })).filter((p) => classifyPod(p) === 'drainable');
  for (const p of pods) await deps.kube.deletePod(p.metadata.namespace ?? 'default', p.metadata.name, 0);
  if (pods.length)
    deps.log?.info('termination grace period elapsed, deleted remaining pods', { Node: nodeName, NodeClaim: input.nodeClaim, pods: pods.map(podKey) });
  return { deleted: pods.slice(0, 10).map(podKey), deletedCount: pods.length };
}

/** Lambda handler (statemachines/termination.asl.json Task Resource). */
export const handler = taskHandler('termination-cutoff', run);
