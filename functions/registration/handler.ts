/**
 * Registration Lambda: `Node Lifecycle` events from the agent → the matching NodeClaim becomes
 * Registered (node found by spec.providerID; NodePool labels and taints the kubelet did not set are
 * applied, the karpenter.sh/unregistered taint removed) and then Initialized (node Ready, startup
 * taints gone, requested extended resources reported). Karpenter: KC
 * pkg/controllers/nodeclaim/lifecycle/registration.go and initialization.go.
 * Pod activity (`lastPodEventTime` in the event, sent by the agent at most once per node per
 * 10 s) is recorded on the claim as the {@link AnnotationLastPodEventTime} annotation, only ever
 * moving forward, so consolidateAfter restarts on pod removal as well as addition (Karpenter's
 * NodeClaim `status.lastPodEventTime`, KC pkg/controllers/nodeclaim/podevents/controller.go).
 * Idempotent: each step checks the claim's conditions first; writes are conditional on version.
 * Trust: the event is only a hint. An event for another cluster (`detail.cluster`, one bus may
 * carry several) is ignored; the claim is found by the event's providerID, but the live node is
 * acted on only when its own spec.providerID is the claim's (a node renamed, re-created or named
 * wrongly in the event is never labelled, bound to the claim and later drained in its place).
 * Nothing of the event is stored before that check: a forged event for a node that does not exist
 * records no pod activity, and a recorded time is never later than now (a time in 2099 would hold
 * consolidateAfter off for ever). Before registering, the Node's name must be the instance's EC2
 * `PrivateDnsName` (DescribeInstances): EKS authenticates a kubelet as `system:node:<that name>`,
 * not by the providerID it sets, so a node with the node role can set another pending instance's
 * providerID on its own Node but cannot take that instance's name. A mismatch is logged and the
 * claim left untouched; while EC2 reports no PrivateDnsName yet (or no instance) nothing is
 * registered and the next event of the node tries again (gc's registration timeout bounds it).
 * The termination finalizer: registering puts karpenter.sh/termination on the Node (KC
 * registration.go), and an event for a registered claim's Node that lacks it adds it. A Node being
 * deleted (deletionTimestamp, the finalizer holding it) whose live providerID, name and claim (of
 * this cluster) agree starts the claim's termination execution (shared/runtime/start-termination.ts,
 * reason manual, no budget: Karpenter deletes the NodeClaim); the execution removes the finalizer
 * once the instance is gone. A NodeClaim object being deleted (`kubectl delete nodeclaim`: the
 * agent's `NodeClaim Lifecycle` event) is handled the same way: the live object is read and must
 * pass shared/disruption/deletion.ts nodeClaimObjectDeletionRefusal (finalizer, this cluster's
 * mirror, the claim's name, providerID and NodePool) before the claim's termination starts.
 */
import type { Context } from 'aws-lambda';
import { z } from 'zod';
import {
  AnnotationLastPodEventTime,
  NodeClaimLifecycleEventSchema,
  NodeLifecycleEventSchema,
  type NodeClaimLifecycleEvent,
  type NodeLifecycleEvent,
} from '../../shared/api/agent-events.ts';
import { DetailTypeNodeClaimLifecycle } from '../../shared/api/contract.ts';
import type { Node } from '../../shared/api/kube.ts';
import { advancePhase, isTrue, setCondition, type NodeClaim } from '../../shared/api/nodeclaim.ts';
import { ConflictError } from '../../shared/api/errors.ts';
import { parseResources, formatResources } from '../../shared/api/quantity.ts';
import * as L from '../../shared/api/labels.ts';
import type { Deps } from '../../shared/runtime/deps.ts';
import { MetricNames } from '../../shared/api/metrics.ts';
import { parseWith, wrapHandler } from '../../shared/runtime/middleware.ts';
import { instanceIdOfProviderId as instanceIdOf } from '../../shared/api/provider-id.ts';
import { startClaimTermination } from '../../shared/runtime/start-termination.ts';
import { notInitializedReason, registrationPatch } from '../../shared/api/registration.ts';
import { nodeClaimObjectDeletionRefusal, nodeDeletionRefusal, terminationStarted, type DeletionCause } from '../../shared/disruption/deletion.ts';

export type RegistrationDeps = Pick<Deps, 'clock' | 'log' | 'metrics' | 'store' | 'kube' | 'cloud' | 'termination'> & { env: Pick<Deps['env'], 'clusterName'> };
export const InputSchema = z.discriminatedUnion('detail-type', [NodeLifecycleEventSchema, NodeClaimLifecycleEventSchema]);
export type Input = NodeLifecycleEvent | NodeClaimLifecycleEvent;

/** Parses the event. @throws ValidationError */
export function parseInput(input: unknown): Input {
  return parseWith(InputSchema, input, 'node lifecycle event');
}

/** What run did; `podEventRecorded` when the claim's last-pod-event annotation moved forward. */
export type RegistrationResult =
  | { action: 'ignored'; reason: string }
  | { action: 'registered' | 'initialized' | 'registered+initialized' | 'unchanged'; nodeClaim: string; podEventRecorded?: boolean }
  | { action: 'terminating'; nodeClaim: string; started: boolean };

/** Conditional-write retries when another function updated the claim at the same time. */
const MaxConflictRetries = 3;

export { instanceIdOf };

/**
 * Applies `change` to the stored claim with a conditional write, re-reading on conflict.
 * `changed` is false when `change` found nothing to do (another invocation did it first).
 */
async function updateWithRetry(
  deps: Pick<RegistrationDeps, 'store'>,
  name: string,
  change: (c: NodeClaim) => NodeClaim | undefined,
): Promise<{ claim?: NodeClaim; changed: boolean }> {
  for (let i = 0; i <= MaxConflictRetries; i++) {
    const current = await deps.store.get(name);
    if (!current) return { changed: false };
    const next = change(current);
    if (!next) return { claim: current, changed: false };
    try {
      return { claim: await deps.store.update(next), changed: true };
    } catch (err) {
      if (!(err instanceof ConflictError) || i === MaxConflictRetries) throw err;
    }
  }
  return { changed: false };
}

/**
 * Moves the claim's {@link AnnotationLastPodEventTime} forward to `at` (RFC 3339), clamped to now
 * (the event's time is the agent's word); an older or equal time (a late or redelivered event)
 * changes nothing. Conditional write on version.
 * @returns whether this call wrote it.
 */
export async function recordPodEvent(deps: Pick<RegistrationDeps, 'clock' | 'store'>, claimName: string, at: string): Promise<boolean> {
  const parsed = Date.parse(at);
  if (Number.isNaN(parsed)) return false;
  const atMs = Math.min(parsed, deps.clock.now().getTime());
  const r = await updateWithRetry(deps, claimName, (c) => {
    const have = Date.parse(c.annotations?.[AnnotationLastPodEventTime] ?? '');
    if (!Number.isNaN(have) && have >= atMs) return undefined;
    return { ...c, annotations: { ...c.annotations, [AnnotationLastPodEventTime]: new Date(atMs).toISOString() } };
  });
  return r.changed;
}

/**
 * Why the Node may not be registered to the claim's instance, or undefined when its name is the
 * instance's EC2 PrivateDnsName (module doc). A mismatch is logged (one warning); an instance EC2
 * does not report, or reports without a PrivateDnsName yet, is "not yet" (debug: the next event retries).
 */
async function nodeNameRefusal(deps: RegistrationDeps, claim: NodeClaim, node: Node, instanceId: string): Promise<string | undefined> {
  const instance = await deps.cloud.get(instanceId);
  if (!instance?.privateDnsName) {
    const reason = instance ? `instance ${instanceId} has no PrivateDnsName yet` : `instance ${instanceId} not found`;
    deps.log.debug('nodeclaim not registered yet', { NodeClaim: { name: claim.name }, Node: { name: node.metadata.name }, reason });
    return reason;
  }
  if (instance.privateDnsName === node.metadata.name) return undefined;
  deps.log.warn("ignoring node event: the node name is not the instance's private DNS name", {
    NodeClaim: { name: claim.name },
    Node: { name: node.metadata.name },
    instance: instanceId,
    privateDnsName: instance.privateDnsName,
  });
  return `node ${node.metadata.name} is not instance ${instanceId}'s private DNS name ${instance.privateDnsName}`;
}

/**
 * A deletion of the claim's live Node or NodeClaim object, checked by the rule of `cause`
 * (`refused`: shared/disruption/deletion.ts): the claim's termination starts unless it already has.
 * A Node without the finalizer goes at once, and gc deals with its claim (deleted out of band).
 */
async function deletionRequested(deps: RegistrationDeps, claim: NodeClaim, cause: DeletionCause, refused: string | undefined): Promise<RegistrationResult> {
  if (refused) return { action: 'ignored', reason: refused };
  if (terminationStarted(claim)) return { action: 'terminating', nodeClaim: claim.name, started: false };
  const executionArn = await startClaimTermination(deps.termination, claim, { reason: 'manual', now: deps.clock.now() });
  deps.log.info(`${cause} deleted: terminating its nodeclaim`, {
    NodeClaim: { name: claim.name },
    ...(claim.nodeName ? { Node: { name: claim.nodeName } } : {}),
    executionArn,
  });
  return { action: 'terminating', nodeClaim: claim.name, started: true };
}

/** `kubectl delete nodeclaim`: the live object (not the event) decides (module doc). */
async function nodeClaimDeleting(deps: RegistrationDeps, name: string): Promise<RegistrationResult> {
  const claim = await deps.store.get(name);
  if (!claim) return { action: 'ignored', reason: `no nodeclaim ${name}` };
  const live = await deps.kube.getNodeClaimObject(name);
  if (!live) return { action: 'ignored', reason: `nodeclaim object ${name} is gone` };
  return deletionRequested(deps, claim, 'nodeclaim', nodeClaimObjectDeletionRefusal(claim, live, deps.env.clusterName));
}

/** Handles one node or NodeClaim event. */
export async function run(input: Input, deps: RegistrationDeps): Promise<RegistrationResult> {
  if (input.detail.cluster !== deps.env.clusterName) {
    deps.log.warn('ignoring node event for another cluster', {
      cluster: input.detail.cluster,
      expected: deps.env.clusterName,
      ...('node' in input.detail ? { Node: { name: input.detail.node.metadata.name } } : { NodeClaim: { name: input.detail.nodeClaim.metadata.name } }),
    });
    return { action: 'ignored', reason: `event for cluster "${input.detail.cluster}", not "${deps.env.clusterName}"` };
  }
  if (input['detail-type'] === DetailTypeNodeClaimLifecycle) return nodeClaimDeleting(deps, input.detail.nodeClaim.metadata.name);
  const eventNode = input.detail.node;
  const instanceId = instanceIdOf(eventNode.spec?.providerID);
  if (!instanceId) return { action: 'ignored', reason: 'node has no AWS providerID' };
  const claim = await deps.store.getByInstanceId(instanceId);
  if (!claim) return { action: 'ignored', reason: `no nodeclaim for instance ${instanceId}` };
  if (input.detail.change === 'deleted') return { action: 'ignored', reason: 'node deleted (termination / gc handle the claim)' };
  const node = await deps.kube.getNode(eventNode.metadata.name);
  if (!node) return { action: 'ignored', reason: `node ${eventNode.metadata.name} is gone` };
  if (
    instanceIdOf(node.spec?.providerID) !== instanceId ||
    (claim.providerId && node.spec?.providerID !== claim.providerId) ||
    (claim.nodeName && claim.nodeName !== node.metadata.name)
  ) {
    deps.log.warn("ignoring node event: the live node is not the nodeclaim's", {
      NodeClaim: { name: claim.name },
      Node: { name: node.metadata.name },
      'provider-id': node.spec?.providerID ?? null,
      expected: claim.providerId ?? instanceId,
    });
    return { action: 'ignored', reason: `node ${node.metadata.name} has providerID ${node.spec?.providerID ?? '(none)'}, not nodeclaim ${claim.name}'s` };
  }
  if (claim.cluster !== deps.env.clusterName)
    return { action: 'ignored', reason: `nodeclaim ${claim.name} is of cluster "${claim.cluster}", not "${deps.env.clusterName}"` };
  if (node.metadata.deletionTimestamp) return deletionRequested(deps, claim, 'node', nodeDeletionRefusal(claim, node, deps.env.clusterName));
  if (!isTrue(claim, 'Registered')) {
    const refused = await nodeNameRefusal(deps, claim, node, instanceId);
    if (refused) return { action: 'ignored', reason: refused };
  } else if (!(node.metadata.finalizers ?? []).includes(L.FinalizerTermination)) {
    await deps.kube.setNodeFinalizer(node.metadata.name, L.FinalizerTermination, true);
  }
  const podEventRecorded = input.detail.lastPodEventTime ? await recordPodEvent(deps, claim.name, input.detail.lastPodEventTime) : undefined;
  // An initialized claim has nothing left to register: pod-activity events stop here.
  if (isTrue(claim, 'Initialized')) return { action: 'unchanged', nodeClaim: claim.name, ...(podEventRecorded !== undefined ? { podEventRecorded } : {}) };
  const now = deps.clock.now().toISOString();
  let registered = false;
  let current: NodeClaim | undefined = claim;
  let liveNode = node;

  if (!isTrue(claim, 'Registered')) {
    const patch = registrationPatch(node, claim);
    liveNode = await deps.kube.patchNode(node.metadata.name, {
      labels: patch.labels,
      ...(Object.keys(patch.annotations).length ? { annotations: patch.annotations } : {}),
      taints: patch.taints,
    });
    liveNode = (await deps.kube.setNodeFinalizer(node.metadata.name, L.FinalizerTermination, true)) ?? liveNode;
    const r = await updateWithRetry(deps, claim.name, (c) =>
      isTrue(c, 'Registered')
        ? undefined
        : { ...setCondition(c, 'Registered', 'True', now), nodeName: node.metadata.name, phase: advancePhase(c.phase, 'Registered') },
    );
    current = r.claim;
    // Only the invocation whose write made the transition reports it (events for one node can overlap).
    if (r.changed) {
      registered = true;
      deps.log.info('registered nodeclaim', { NodeClaim: { name: claim.name }, Node: { name: node.metadata.name } });
      deps.metrics.count(MetricNames.nodeClaimsRegistered, { nodepool: claim.nodePool });
      deps.metrics.count(MetricNames.nodesCreated, { nodepool: claim.nodePool });
    }
  }
  if (!current || isTrue(current, 'Initialized'))
    return registered ? { action: 'registered', nodeClaim: claim.name } : { action: 'unchanged', nodeClaim: claim.name };
  const reason = notInitializedReason(liveNode, current);
  if (reason) {
    deps.log.debug('nodeclaim not initialized yet', { NodeClaim: { name: claim.name }, reason });
    return { action: registered ? 'registered' : 'unchanged', nodeClaim: claim.name };
  }
  await deps.kube.patchNode(node.metadata.name, { labels: { [L.LabelInitialized]: 'true' } });
  const allocatable = liveNode.status?.allocatable ? formatResources(parseResources(liveNode.status.allocatable)) : current.allocatable;
  const init = await updateWithRetry(deps, claim.name, (c) =>
    isTrue(c, 'Initialized')
      ? undefined
      : {
          ...setCondition(setCondition(c, 'Initialized', 'True', now), 'Ready', 'True', now),
          phase: advancePhase(c.phase, 'Initialized'),
          ...(liveNode.status?.capacity ? { capacity: formatResources(parseResources(liveNode.status.capacity)) } : {}),
          ...(allocatable ? { allocatable } : {}),
        },
  );
  if (!init.changed) return { action: registered ? 'registered' : 'unchanged', nodeClaim: claim.name };
  deps.log.info('initialized nodeclaim', { NodeClaim: { name: claim.name }, allocatable });
  deps.metrics.count(MetricNames.nodeClaimsInitialized, { nodepool: claim.nodePool });
  const launched = claim.conditions.find((c) => c.type === 'Launched')?.lastTransitionTime;
  if (launched) deps.metrics.seconds(MetricNames.nodeClaimLaunchToInitialized, (Date.parse(now) - Date.parse(launched)) / 1000, { nodepool: claim.nodePool });
  return { action: registered ? 'registered+initialized' : 'initialized', nodeClaim: claim.name };
}

/** Lambda entry (EventBridge rule `registration` → this function). */
export const handler: (event: unknown, context: Context) => Promise<RegistrationResult> = wrapHandler('registration', run, { parse: parseInput });
