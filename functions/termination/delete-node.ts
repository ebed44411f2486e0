/** Task DeleteNode: deletes the Node object once the instance is going away. A node already gone is fine. */
import { taskHandler } from './lambda.ts';
import { TaskInputSchema, type TaskInput, type TerminationDeps, resolveTarget } from './schemas.ts';

export { TaskInputSchema as InputSchema };

export interface DeleteNodeResult {
  nodeName: string | null;
}

/** @throws whatever the ports throw (TransientError …) for the state machine's Retry. */
export async function run(input: TaskInput, deps: Pick<TerminationDeps, 'kube' | 'log'>): Promise<DeleteNodeResult> {
  const { nodeName } = resolveTarget(input);
  if (nodeName) {
    await deps.kube.deleteNode(nodeName);
    deps.log?.info('deleted node', { Node: nodeName, NodeClaim: input.nodeClaim });
  }
  return { nodeName };
}

/** Lambda handler (statemachines/termination.asl.json Task Resource). */
export const handler = taskHandler('termination-delete-node', run);
