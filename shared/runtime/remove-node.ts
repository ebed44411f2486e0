/**
 * The one way nodefleet removes a claim's Node once its instance is going or gone (termination's
 * DeleteNode, gc deleting a claim): delete it — a Node holding karpenter.sh/termination only gets
 * its deletionTimestamp — then take that finalizer off, so the Node goes. Deleting first means no
 * handler can put the finalizer back in between (registration leaves a Node being deleted alone).
 */
import type { KubeApi } from '../api/ports.ts';
import type { Node } from '../api/kube.ts';
import { FinalizerTermination } from '../api/labels.ts';

/**
 * Removes the Node `name`; a Node already gone is fine. `live`: the Node as just read, when the
 * caller has it (one being deleted is not deleted again).
 * @throws whatever the port throws (TransientError, ConflictError …) for the caller's retry.
 */
export async function removeNode(kube: Pick<KubeApi, 'deleteNode' | 'setNodeFinalizer'>, name: string, live?: Node): Promise<void> {
  if (!live?.metadata.deletionTimestamp) await kube.deleteNode(name);
  await kube.setNodeFinalizer(name, FinalizerTermination, false);
}
