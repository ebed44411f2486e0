/**
 * Task Drain: one drain round. Evicts the current priority tier through the Eviction API (a 429
 * from a PodDisruptionBudget is not an error: the pod is reported `blocked` and the state machine
 * waits and loops), holds do-not-disrupt pods, deletes pods early so their grace period ends by the
 * deadline, and reports whether the node is drained or the deadline has passed. Once drained it
 * waits, in the same loop and under the same deadline, for the node's VolumeAttachments to be
 * detached (those of pods the drain does not move excepted: Karpenter's awaitVolumeDetachment).
 * Never sleeps: it returns `retryAfterSeconds` for the WaitForDrain state. Once capacity is due
 * for pods only the cutoff will move (a fully blocking PDB, do-not-disrupt), it asks the
 * provisioner for it, so the re-created pods find a Ready node at the cutoff.
 */
import { MetricNames } from '../../shared/api/metrics.ts';
import { taskHandler } from './lambda.ts';
import { TaskInputSchema, type DrainResult, type TaskInput, type TerminationDeps } from './schemas.ts';
import { terminationDeadline } from '../../shared/api/termination-target.ts';
import { verifiedTarget } from './target.ts';
import {
  drainWaitSeconds,
  isDrainable,
  MaxDrainLoopsPerExecution,
  pendingVolumeAttachments,
  planDrain,
  TerminationHeartbeatSeconds,
  type DrainPlan,
} from '../../shared/disruption/drain-plan.ts';
import { AgentSchemaVersion, DetailTypeUnschedulablePods, TerminationSource } from '../../shared/api/contract.ts';
import type { UnschedulablePodsDetail } from '../../shared/api/agent-events.ts';
import { volumeClaimName, type KubeObject, type Pod, type VolumeAttachment } from '../../shared/api/kube.ts';
import { podKey } from '../../shared/disruption/pods.ts';
import { updateClaim } from './claims.ts';

export { TaskInputSchema as InputSchema };

/** Names listed in the result (the history stays small; counts are exact). */
const ListedPods = 10;

/**
 * The node and the deadline come from the claim (the live Node checked against it each round); the
 * input's deadline is a request (terminationDeadline).
 * @throws TargetRefusedError; whatever the ports throw (TransientError …) for the state machine's Retry.
 */
/** The Eviction API's HTTP status per outcome (label `code` of karpenter_pods_eviction_requests_total). */
const EvictionCodes = { evicted: '200', blocked: '429', gone: '404' } as const;
/** Label `reason` of pods deleted at the terminationGracePeriod cutoff (KC's forceful termination). */
const ForcefulTermination = 'Forceful Termination';

export async function run(
  input: TaskInput,
  deps: Pick<TerminationDeps, 'kube' | 'clock' | 'log' | 'store' | 'clusterName' | 'metrics' | 'publisher'>,
): Promise<DrainResult> {
  const attempt = (input.drain?.attempt ?? 0) + 1;
  const nowMs = deps.clock.now().getTime();
  const { claim, nodeName } = await verifiedTarget('Drain', input, deps, { node: true, record: true });
  const deadline = terminationDeadline(claim, input.deadlineEpochMs, nowMs);
  const empty = {
    evicted: [],
    blocked: [],
    deletedEarly: [],
    remaining: [],
    remainingCount: 0,
    continueAsNew: false,
    volumesPending: [],
    volumesPendingCount: 0,
    replacementRequested: false,
  };
  if (!nodeName) return { done: true, drained: true, deadlineReached: false, retryAfterSeconds: 0, attempt, ...empty };
  await heartbeat(input, deps, nowMs);

  const plan = planDrain(await deps.kube.listPods({ nodeName }), nowMs, deadline);
  const deletedEarly: string[] = [];
  for (const { pod, graceSeconds } of plan.deleteEarly) {
    await deps.kube.deletePod(pod.metadata.namespace ?? 'default', pod.metadata.name, graceSeconds);
    deletedEarly.push(podKey(pod));
    deps.metrics?.count(MetricNames.podsDrained, { reason: ForcefulTermination });
  }
  const evicted: string[] = [];
  const blocked: string[] = [];
  if (!plan.deadlineReached) {
    for (const pod of plan.evict) {
      const r = await deps.kube.evictPod(pod.metadata.namespace ?? 'default', pod.metadata.name);
      (r === 'blocked' ? blocked : evicted).push(podKey(pod));
      // KC: one request counted per Eviction API call by HTTP status (429: a PDB refused it; 404: gone).
      deps.metrics?.count(MetricNames.evictionRequests, { code: EvictionCodes[r] });
      if (r === 'evicted') deps.metrics?.count(MetricNames.podsDrained, { reason: input.reason });
    }
  }
  if (evicted.length || deletedEarly.length || blocked.length) {
    deps.log?.info('draining node', { Node: nodeName, NodeClaim: input.nodeClaim, evicted, blockedByPdb: blocked, deletedEarly, attempt });
  }
  // Re-read after acting so a node whose pods left at once is reported drained without a wait.
  const podsAfter = evicted.length || deletedEarly.length ? await deps.kube.listPods({ nodeName }) : undefined;
  const after = podsAfter ? planDrain(podsAfter, nowMs, deadline) : plan;
  const volumes = after.drained ? await volumesKeepingInstance(deps, nodeName, podsAfter ?? (await deps.kube.listPods({ nodeName })), nowMs) : [];
  if (volumes.length && attempt % 12 === 1)
    deps.log?.info('awaiting volume detachment', { Node: nodeName, NodeClaim: input.nodeClaim, volumeAttachments: volumes.slice(0, ListedPods) });
  const replacementRequested = (input.drain?.replacementRequested ?? false) || (await requestReplacement(input, deps, after, nowMs, deadline, claim.cluster));
  // Past the deadline the volume wait is skipped (Karpenter: VolumesDetached False, terminate).
  const done = after.drained && (volumes.length === 0 || after.deadlineReached);
  const finished = done || after.deadlineReached;
  const continueAsNew = !finished && attempt >= MaxDrainLoopsPerExecution;
  if (done) deps.metrics?.count(MetricNames.nodesDrained, { nodepool: claim.nodePool });
  if (continueAsNew)
    deps.log?.info('drain continues as a new execution', { Node: nodeName, NodeClaim: input.nodeClaim, rounds: attempt, attempt: input.attempt ?? 1 });
  return {
    continueAsNew,
    done,
    drained: after.drained,
    volumesPending: volumes.slice(0, ListedPods),
    volumesPendingCount: volumes.length,
    deadlineReached: after.deadlineReached,
    retryAfterSeconds: finished ? 0 : drainWaitSeconds(attempt, nowMs, after.nextEventMs, deadline !== undefined),
    attempt,
    evicted: evicted.slice(0, ListedPods),
    blocked: blocked.slice(0, ListedPods),
    deletedEarly: deletedEarly.slice(0, ListedPods),
    remaining: after.blocking.slice(0, ListedPods).map(podKey),
    remainingCount: after.blocking.length,
    replacementRequested,
  };
}

/**
 * Asks the provisioner, once its `replacementDue` has come, for capacity for the pods only the
 * cutoff will move: an `Unschedulable Pods` event of the termination's source, without pods (a
 * full pass; the provisioner reads the pods live and the deadline from the claim's record,
 * shared/disruption/pods.ts isCurrentlyReschedulable). Whether it was sent (a failed put is tried
 * again next round).
 */
async function requestReplacement(
  input: TaskInput,
  deps: Pick<TerminationDeps, 'publisher' | 'log' | 'clusterName'>,
  plan: DrainPlan,
  nowMs: number,
  deadline: number | undefined,
  claimCluster: string,
): Promise<boolean> {
  if (!deps.publisher || plan.replacementDue === undefined || nowMs < plan.replacementDue || plan.deadlineReached) return false;
  const detail: UnschedulablePodsDetail = {
    schemaVersion: AgentSchemaVersion,
    cluster: deps.clusterName ?? claimCluster,
    batchId: `${input.nodeClaim}-replacement-${input.attempt ?? 1}`,
    part: 0,
    parts: 1,
    observedAt: new Date(nowMs).toISOString(),
    pods: [],
  };
  const { failed } = await deps.publisher.publish([{ source: TerminationSource, detailType: DetailTypeUnschedulablePods, detail }]);
  const pods = plan.blocking
    .filter((p) => !p.metadata.deletionTimestamp)
    .slice(0, ListedPods)
    .map(podKey);
  if (failed) {
    deps.log?.info('replacement capacity request not sent, retrying next round', { NodeClaim: input.nodeClaim, pods });
    return false;
  }
  deps.log?.info('requested replacement capacity before the termination grace period cutoff', {
    NodeClaim: input.nodeClaim,
    pods,
    due: new Date(plan.replacementDue).toISOString(),
    ...(deadline !== undefined ? { deadline: new Date(deadline).toISOString() } : {}),
  });
  return true;
}

/**
 * Names of the node's VolumeAttachments that still keep its instance (shared/disruption/drain-plan.ts
 * pendingVolumeAttachments). PersistentVolumeClaims are read only when a pod the drain does not
 * move mounts one.
 */
async function volumesKeepingInstance(deps: Pick<TerminationDeps, 'kube'>, nodeName: string, pods: Pod[], nowMs: number): Promise<string[]> {
  const attachments = (await deps.kube.listObjects('storage.k8s.io/v1', 'VolumeAttachment')).filter(
    (o) => o.spec?.nodeName === nodeName,
  ) as unknown as VolumeAttachment[];
  if (!attachments.length) return [];
  const volumeOfClaim = new Map<string, string>();
  const kept = pods.filter((p) => !isDrainable(p, nowMs) && (p.spec.volumes ?? []).some((v) => volumeClaimName(p, v)));
  if (kept.length) {
    for (const c of (await deps.kube.listObjects('v1', 'PersistentVolumeClaim')) as KubeObject[]) {
      if (c.spec?.volumeName) volumeOfClaim.set(`${c.metadata.namespace ?? 'default'}/${c.metadata.name}`, c.spec.volumeName);
    }
  }
  return pendingVolumeAttachments(attachments, pods, volumeOfClaim, nowMs).map((va) => va.metadata.name);
}

/**
 * Writes the drain's sign of life on the claim (`termination.heartbeatAt`) when the last one is
 * older than TerminationHeartbeatSeconds, so gc can tell a lost execution from a long drain. Only
 * the attempt the claim names writes (a superseded execution does not).
 */
async function heartbeat(input: TaskInput, deps: Pick<TerminationDeps, 'store'>, nowMs: number): Promise<void> {
  await updateClaim(deps.store, input.nodeClaim, (c) => {
    const t = c.termination;
    if (!t || c.phase !== 'Terminating' || t.attempt !== (input.attempt ?? 1)) return undefined;
    if (t.heartbeatAt && nowMs - Date.parse(t.heartbeatAt) < TerminationHeartbeatSeconds * 1000) return undefined;
    return { ...c, termination: { ...t, heartbeatAt: new Date(nowMs).toISOString() } };
  });
}

/** Lambda handler (statemachines/termination.asl.json Task Resource). */
export const handler = taskHandler('termination-drain', run);
