/**
 * Deletions that start a NodeClaim's termination (pure), as Karpenter's termination finalizer: a
 * Node or a NodeClaim object being deleted while it holds `karpenter.sh/termination`, and the claims
 * of a NodePool that is deleted (Karpenter: its NodeClaims are deleted with it). The deleted object
 * is only a request: it starts the termination of the stored claim it matches — of this cluster,
 * launched, the object's providerID (and name, NodePool) the claim's — and nothing otherwise.
 * Registration applies the Node rule to the agent's event; gc applies all three to its live lists
 * every pass, so a lost event cannot leave an object Terminating for ever.
 */
import type { Node } from '../api/kube.ts';
import type { KubeNodeClaim, NodeClaim } from '../api/nodeclaim.ts';
import { isTrue } from '../api/nodeclaim.ts';
import { AnnotationNodeClaimMirror, FinalizerTermination, LabelNodePool } from '../api/labels.ts';
import { instanceIdOfClaim } from '../api/provider-id.ts';
import { nodeDisagreement } from '../api/termination-target.ts';

/** What was deleted: the claim's Node, its NodeClaim object, or its NodePool. */
export type DeletionCause = 'node' | 'nodeclaim' | 'nodepool';

/** A NodePool object as listed (KubeApi.listNodePoolNames): present, maybe being deleted. */
export interface NodePoolPresence {
  name: string;
  deleting: boolean;
}

/** A claim whose termination was already started (or is over): a deletion asks nothing more of it. */
export function terminationStarted(claim: NodeClaim): boolean {
  return claim.phase === 'Terminating' || claim.phase === 'Terminated';
}

/**
 * Why the live Node's deletion does not start `claim`'s termination, or undefined when it does: the
 * Node has a deletionTimestamp and holds the finalizer (a Node deleted without it goes at once; gc
 * treats its claim as a node deleted out of band), the claim is of `cluster`, registered to this
 * Node, and the Node's providerID and NodePool label are the claim's.
 */
export function nodeDeletionRefusal(claim: NodeClaim, node: Node, cluster: string): string | undefined {
  const name = node.metadata.name;
  if (!node.metadata.deletionTimestamp) return `node ${name} is not being deleted`;
  if (!(node.metadata.finalizers ?? []).includes(FinalizerTermination)) return `node ${name} is being deleted without the ${FinalizerTermination} finalizer`;
  if (claim.cluster !== cluster) return `nodeclaim ${claim.name} is of cluster "${claim.cluster}", not "${cluster}"`;
  if (!isTrue(claim, 'Registered') || claim.nodeName !== name) return `node ${name} is not nodeclaim ${claim.name}'s registered node`;
  return nodeDisagreement(claim, node);
}

/**
 * Why the NodeClaim object's deletion does not start `claim`'s termination, or undefined when it
 * does: the object has a deletionTimestamp and holds the finalizer, it is this cluster's mirror
 * (annotation nodefleet.io/cluster: an object without it is another controller's), it names the
 * claim, and its providerID and NodePool label are the claim's; the claim is of `cluster` and
 * launched (one not launched yet is left for its launch, or its launch timeout, to settle).
 */
export function nodeClaimObjectDeletionRefusal(claim: NodeClaim, o: KubeNodeClaim, cluster: string): string | undefined {
  const name = o.metadata.name;
  if (!o.metadata.deletionTimestamp) return `nodeclaim object ${name} is not being deleted`;
  if (!(o.metadata.finalizers ?? []).includes(FinalizerTermination))
    return `nodeclaim object ${name} is being deleted without the ${FinalizerTermination} finalizer`;
  if (o.metadata.annotations?.[AnnotationNodeClaimMirror] !== cluster) return `nodeclaim object ${name} is not cluster "${cluster}"'s`;
  if (claim.cluster !== cluster) return `nodeclaim ${claim.name} is of cluster "${claim.cluster}", not "${cluster}"`;
  if (name !== claim.name) return `nodeclaim object ${name} is not nodeclaim ${claim.name}`;
  if (!instanceIdOfClaim(claim) || !claim.providerId) return `nodeclaim ${claim.name} is not launched yet`;
  if (o.status?.providerID !== claim.providerId)
    return `nodeclaim object ${name}: status.providerID ${o.status?.providerID ?? '(none)'} is not nodeclaim ${claim.name}'s providerID ${claim.providerId}`;
  if (o.metadata.labels?.[LabelNodePool] !== claim.nodePool)
    return `nodeclaim object ${name}: label ${LabelNodePool}=${o.metadata.labels?.[LabelNodePool] ?? '(none)'} is not nodeclaim ${claim.name}'s nodepool ${claim.nodePool}`;
  return undefined;
}

/**
 * Why the NodePools listed do not delete `claim`, or undefined when its NodePool is gone or being
 * deleted and the claim is of `cluster` and launched. `pools` undefined (no NodePool CRD, or the
 * list failed) says nothing about a deletion.
 */
export function nodePoolDeletionRefusal(claim: NodeClaim, pools: readonly NodePoolPresence[] | undefined, cluster: string): string | undefined {
  if (!pools) return 'the NodePools are unknown';
  if (claim.cluster !== cluster) return `nodeclaim ${claim.name} is of cluster "${claim.cluster}", not "${cluster}"`;
  const pool = pools.find((p) => p.name === claim.nodePool);
  if (pool && !pool.deleting) return `nodepool ${claim.nodePool} is not being deleted`;
  if (!instanceIdOfClaim(claim)) return `nodeclaim ${claim.name} is not launched yet`;
  return undefined;
}

/**
 * The claims whose termination a deletion asks for and which have not started one: each at most
 * once, the first cause that holds (Node, NodeClaim object, NodePool).
 * @param input.nodeClaimObjects the live NodeClaim objects; undefined = not listed (no NodeClaim rule)
 * @param input.nodePools the live NodePools; undefined = unknown (no NodePool rule)
 */
export function deletionRequests(input: {
  cluster: string;
  nodeClaims: readonly NodeClaim[];
  nodes: readonly Node[];
  nodeClaimObjects?: readonly KubeNodeClaim[];
  nodePools?: readonly NodePoolPresence[];
}): { nodeClaim: string; cause: DeletionCause }[] {
  const nodesByName = new Map(input.nodes.map((n) => [n.metadata.name, n]));
  const objects = new Map((input.nodeClaimObjects ?? []).map((o) => [o.metadata.name, o]));
  const out: { nodeClaim: string; cause: DeletionCause }[] = [];
  for (const c of input.nodeClaims) {
    if (terminationStarted(c)) continue;
    const node = c.nodeName === undefined ? undefined : nodesByName.get(c.nodeName);
    const object = objects.get(c.name);
    let cause: DeletionCause | undefined;
    if (node && nodeDeletionRefusal(c, node, input.cluster) === undefined) cause = 'node';
    else if (object && nodeClaimObjectDeletionRefusal(c, object, input.cluster) === undefined) cause = 'nodeclaim';
    else if (nodePoolDeletionRefusal(c, input.nodePools, input.cluster) === undefined) cause = 'nodepool';
    if (cause) out.push({ nodeClaim: c.name, cause });
  }
  return out;
}
