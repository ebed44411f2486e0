/**
 * Task Cordon: checks the target against the stored NodeClaim (functions/termination/target.ts:
 * the claim exists, the input names its own node and instance, the live Node and the instance's
 * tags agree; otherwise TargetRefusedError and the execution ends Refused, nothing touched), marks
 * the claim Terminating with its disruption reason and records the termination on it
 * (`termination`: what gc needs to carry it on if this execution ends unfinished, with the
 * deadline the record allows), then taints the node karpenter.sh/disrupted:NoSchedule, cordons
 * it and labels it node.kubernetes.io/exclude-from-external-load-balancers, so load balancers stop
 * sending it traffic while it drains (Karpenter node/termination/terminator.go Taint). Re-entrant: an already tainted and cordoned node
 * is left as is; a node that never registered or is gone is fine.
 */
import { taskHandler } from './lambda.ts';
import { NotFoundError } from '../../shared/api/errors.ts';
import { LabelExcludeFromExternalLoadBalancers, TaintDisrupted } from '../../shared/api/labels.ts';
import { TaskInputSchema, type TaskInput, type Target, type TerminationDeps } from './schemas.ts';
import { recordTermination, updateClaim } from './claims.ts';
import { verifiedTarget } from './target.ts';

export { recordTermination };

export { TaskInputSchema as InputSchema };

/** The value Karpenter gives the load-balancer exclusion label. */
export const ExcludeBalancersValue = 'karpenter';

/** @throws TargetRefusedError; whatever the ports throw (TransientError, ConflictError) for the state machine's Retry. */
export async function run(input: TaskInput, deps: Pick<TerminationDeps, 'kube' | 'cloud' | 'store' | 'clock' | 'log' | 'clusterName'>): Promise<Target> {
  const now = deps.clock.now().toISOString();
  const { nodeName, instanceId, node } = await verifiedTarget('Cordon', input, deps, { node: true, instance: true, record: true });
  await updateClaim(deps.store, input.nodeClaim, (c) => recordTermination(c, input, now));
  if (!nodeName || !node) return { nodeName, instanceId, nodeFound: false };

  const taints = node.spec?.taints ?? [];
  const tainted = taints.some((t) => t.key === TaintDisrupted.key && t.effect === TaintDisrupted.effect);
  const excluded = node.metadata.labels?.[LabelExcludeFromExternalLoadBalancers] !== undefined;
  if (tainted && node.spec?.unschedulable && excluded) return { nodeName, instanceId, nodeFound: true };
  try {
    await deps.kube.patchNode(nodeName, {
      taints: tainted ? taints : [...taints, { key: TaintDisrupted.key, effect: TaintDisrupted.effect, timeAdded: now }],
      unschedulable: true,
      ...(excluded ? {} : { labels: { [LabelExcludeFromExternalLoadBalancers]: ExcludeBalancersValue } }),
    });
  } catch (err) {
    if (err instanceof NotFoundError) return { nodeName, instanceId, nodeFound: false };
    throw err;
  }
  deps.log?.info('tainted node', {
    Node: nodeName,
    NodeClaim: input.nodeClaim,
    'taint.Key': TaintDisrupted.key,
    'taint.Effect': TaintDisrupted.effect,
    reason: input.reason,
  });
  return { nodeName, instanceId, nodeFound: true };
}

/** Lambda handler (statemachines/termination.asl.json Task Resource). */
export const handler = taskHandler('termination-cordon', run);
