/**
 * Task DeleteNode: once the instance is going away, removes the claim's Node: deleted, then its
 * karpenter.sh/termination finalizer taken off (shared/runtime/remove-node.ts, as gc does; Karpenter
 * node/termination/controller.go removeFinalizer).
 */
import { taskHandler } from './lambda.ts';
import { TaskInputSchema, type TaskInput, type TerminationDeps } from './schemas.ts';
import { verifiedTarget } from './target.ts';
import { removeNode } from '../../shared/runtime/remove-node.ts';

export { TaskInputSchema as InputSchema };

export interface DeleteNodeResult {
  nodeName: string | null;
}

/**
 * Deletes the claim's node only, checked live against the claim (a node already gone is fine).
 * @throws TargetRefusedError; whatever the ports throw (TransientError …) for the state machine's Retry.
 */
export async function run(input: TaskInput, deps: Pick<TerminationDeps, 'kube' | 'store' | 'clock' | 'log' | 'clusterName'>): Promise<DeleteNodeResult> {
  const { nodeName, node } = await verifiedTarget('DeleteNode', input, deps, { node: true });
  if (nodeName && node) {
    await removeNode(deps.kube, nodeName, node);
    deps.log?.info('deleted node', { Node: nodeName, NodeClaim: input.nodeClaim });
  }
  return { nodeName };
}

/** Lambda handler (statemachines/termination.asl.json Task Resource). */
export const handler = taskHandler('termination-delete-node', run);
