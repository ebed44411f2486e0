/**
 * What a termination may act on, decided from the authoritative record: the stored NodeClaim,
 * agreed with by the live Node and the EC2 instance. The termination state machine's input is a
 * request, never a fact (docs/termination-target.md; security review F1, F6, F7). Pure: the
 * termination tasks (functions/termination/target.ts) and the interruption handler read the
 * Node and the instance and ask these functions.
 */
import type { Node } from './kube.ts';
import type { NodeClaim } from './nodeclaim.ts';
import type { CloudInstance } from './ports.ts';
import { LabelNodePool, TagNodeClaim, TagNodefleetCluster } from './labels.ts';
import { NodePoolTagKey } from './iam-policy.ts';
import { instanceIdOfProviderId } from './provider-id.ts';

/**
 * Why the request's `nodeName` / `instanceId` disagree with the claim (each, when given, must be
 * the claim's own), or undefined when they agree. Also refuses a claim whose instanceId and
 * providerID name different instances.
 */
export function requestDisagreement(claim: NodeClaim, request: { nodeName?: string | null; instanceId?: string | null }): string | undefined {
  if (request.nodeName && request.nodeName !== claim.nodeName) {
    return `input nodeName "${request.nodeName}" is not nodeclaim ${claim.name}'s node (${claim.nodeName ?? 'none registered'})`;
  }
  if (request.instanceId && request.instanceId !== claim.instanceId) {
    return `input instanceId "${request.instanceId}" is not nodeclaim ${claim.name}'s instance (${claim.instanceId ?? 'none launched'})`;
  }
  const fromProvider = instanceIdOfProviderId(claim.providerId);
  if (claim.providerId && claim.instanceId && fromProvider !== claim.instanceId) {
    return `nodeclaim ${claim.name}: instanceId ${claim.instanceId} and providerID ${claim.providerId} disagree`;
  }
  return undefined;
}

/**
 * Why the live Node is not the claim's (spec.providerID must equal the claim's providerID, label
 * karpenter.sh/nodepool the claim's NodePool), or undefined when it is.
 */
export function nodeDisagreement(claim: NodeClaim, node: Node): string | undefined {
  const providerID = node.spec?.providerID;
  if (!claim.providerId || providerID !== claim.providerId) {
    return `node ${node.metadata.name}: spec.providerID ${providerID ?? '(none)'} is not nodeclaim ${claim.name}'s providerID ${claim.providerId ?? '(none)'}`;
  }
  const pool = node.metadata.labels?.[LabelNodePool];
  if (pool !== claim.nodePool)
    return `node ${node.metadata.name}: label ${LabelNodePool}=${pool ?? '(none)'} is not nodeclaim ${claim.name}'s nodepool ${claim.nodePool}`;
  return undefined;
}

/**
 * Why the EC2 instance is not the claim's: its tags must name the cluster (nodefleet.io/cluster),
 * the claim's NodePool and the claim, as launches set them (shared/aws/ec2.ts launchTags).
 * `cluster` is this stack's cluster (the claim's own when not given: the store holds one cluster's claims).
 */
export function instanceDisagreement(
  claim: Pick<NodeClaim, 'name' | 'cluster' | 'nodePool'>,
  instance: Pick<CloudInstance, 'instanceId' | 'tags'>,
  cluster: string = claim.cluster,
): string | undefined {
  const want: [string, string][] = [
    [TagNodefleetCluster, cluster],
    [NodePoolTagKey, claim.nodePool],
    [TagNodeClaim, claim.name],
  ];
  if (claim.cluster !== cluster) return `nodeclaim ${claim.name} belongs to cluster ${claim.cluster}, not ${cluster}`;
  for (const [key, value] of want) {
    const got = instance.tags[key];
    if (got !== value) return `instance ${instance.instanceId}: tag ${key}=${got ?? '(none)'}, want ${value} (nodeclaim ${claim.name})`;
  }
  return undefined;
}

/**
 * The deadline a termination of `claim` obeys (epoch ms; undefined = none, wait for the drain).
 * The request (the execution input's deadlineEpochMs) can only make it later, never earlier than
 * the record allows: the claim's terminationGracePeriod counted from the termination's recorded
 * start (`termination.startedAt`; `nowMs` when none is recorded yet), or the interruption notice
 * the interruption handler verified with EC2 and wrote on the claim (`noticeDeadlineEpochMs`),
 * whichever is earlier. Without either, a requested deadline is not obeyed; a verified notice
 * holds even when the request names none.
 */
export function terminationDeadline(claim: NodeClaim, requestedEpochMs: number | null | undefined, nowMs: number): number | undefined {
  const startedMs = claim.termination?.startedAt ? Date.parse(claim.termination.startedAt) : NaN;
  const start = Number.isNaN(startedMs) ? nowMs : startedMs;
  const grace = claim.terminationGracePeriodSeconds !== undefined ? start + claim.terminationGracePeriodSeconds * 1000 : undefined;
  const notice = claim.noticeDeadlineEpochMs;
  const earliest = grace === undefined ? notice : notice === undefined ? grace : Math.min(grace, notice);
  if (requestedEpochMs == null) return notice;
  if (earliest === undefined) return undefined;
  return Math.max(requestedEpochMs, earliest);
}
