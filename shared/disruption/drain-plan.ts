/**
 * Pure drain planning: given the pods on a node, `now` and the deadline, decide what to evict,
 * what to delete early, whether the node is drained, and which VolumeAttachments still keep the
 * instance. Behaviour follows Karpenter v1's terminator (KC pkg/controllers/node/termination
 * controller.go, terminator/terminator.go, eviction.go; pkg/utils/pod/scheduling.go): DaemonSet
 * pods are evicted too, in four groups (non-critical non-DaemonSet, non-critical DaemonSet,
 * critical non-DaemonSet, critical DaemonSet), one group at a time.
 */
import { isDaemonSetPod, volumeClaimName, type Pod, type VolumeAttachment } from '../api/kube.ts';
import { TaintDisrupted } from '../api/labels.ts';
import { toleratesTaint } from '../scheduling/taints.ts';
import { cutoffDeletionMs, doNotDisruptUntilMs, isMirrorPod, isTerminal, podKey, replacementDueMs } from './pods.ts';

/**
 * A pod still terminating this long after its deletionTimestamp (which already includes its grace
 * period) no longer blocks the drain (Karpenter pkg/utils/pod IsStuckTerminating: 1 minute).
 */
export const StuckTerminatingSeconds = 60;
/** Priority classes Karpenter evicts last (terminator.go groupPodsByPriority). */
export const CriticalPriorityClasses = ['system-cluster-critical', 'system-node-critical'];
/**
 * Drain poll intervals: fast at first (Karpenter re-checks within seconds), slower as the drain
 * drags on, so a Standard execution stays far below its 25,000-event history limit (each loop is
 * ~9 events): 24 loops at 5 s, 60 at 15 s, then 60 s (≈ 44 h of blocked drain), 300 s when there is
 * no deadline after 200 loops.
 */
export const DrainPollSchedule = {
  fastSeconds: 5,
  fastLoops: 24,
  mediumSeconds: 15,
  mediumLoops: 84,
  slowSeconds: 60,
  noDeadlineSeconds: 300,
  noDeadlineLoops: 200,
};

/**
 * Drain rounds one execution runs before it ends and the next attempt carries on (gc starts it
 * from the claim's record): a Standard execution fails at 25,000 history events, and a round is
 * ~9 (Drain: entered, scheduled, started, succeeded, exited; Choice and Wait: entered, exited), so
 * 2,000 rounds (~18,000 events) leave room for retries and the terminate phase. At the slowest
 * poll (300 s) that is about a week per execution.
 */
export const MaxDrainLoopsPerExecution = 2000;

/** A running termination writes a heartbeat on its claim at least this often (gc treats one silent for TerminationStaleSeconds as lost). */
export const TerminationHeartbeatSeconds = 600;

export type PodRole = 'mirror' | 'terminal' | 'tolerates-disrupted' | 'drainable';

/**
 * Why a pod is outside the drain, or 'drainable'. Mirror (static) pods cannot be deleted through
 * the API, terminal pods are done, and a pod tolerating karpenter.sh/disrupted:NoSchedule would
 * land back on the node (KC IsWaitingEviction / IsDrainable). DaemonSet pods are drainable.
 */
export function classifyPod(pod: Pod): PodRole {
  if (isMirrorPod(pod)) return 'mirror';
  if (isTerminal(pod)) return 'terminal';
  if (toleratesDisrupted(pod)) return 'tolerates-disrupted';
  return 'drainable';
}

/** Whether the pod tolerates karpenter.sh/disrupted:NoSchedule. */
export function toleratesDisrupted(pod: Pod): boolean {
  return (pod.spec.tolerations ?? []).some((t) => toleratesTaint(t, TaintDisrupted));
}

export function isCritical(pod: Pod): boolean {
  return CriticalPriorityClasses.includes(pod.spec.priorityClassName ?? '');
}

/** The eviction groups, in the order a drain empties them (KC terminator.go groupPodsByPriority). */
export const DrainGroups = ['non-critical', 'non-critical-daemonset', 'critical', 'critical-daemonset'] as const;
export type DrainGroup = (typeof DrainGroups)[number];

/** A drainable pod's eviction group. */
export function drainGroup(pod: Pod): DrainGroup {
  const ds = isDaemonSetPod(pod);
  if (isCritical(pod)) return ds ? 'critical-daemonset' : 'critical';
  return ds ? 'non-critical-daemonset' : 'non-critical';
}

const key = podKey;

/** What the Drain task should do now. Keys are `namespace/name`. */
export interface DrainPlan {
  /** Pods to evict now: the first DrainGroups group with a pod still on the node. */
  evict: Pod[];
  /** Pods to delete now with `graceSeconds`, so their own grace ends by the deadline. */
  deleteEarly: { pod: Pod; graceSeconds: number }[];
  /** Pods that still keep the node (not yet gone and not stuck terminating). */
  blocking: Pod[];
  /** Pods held by do-not-disrupt (not evicted). */
  held: Pod[];
  drained: boolean;
  deadlineReached: boolean;
  /**
   * When capacity is due for the pods still on the node that only the cutoff will move (epoch ms,
   * the earliest of their {@link replacementDueMs}; not DaemonSet, not terminating, not deleted
   * now); undefined without a deadline or such a pod. From then on the Drain task asks the
   * provisioner for their capacity (functions/termination/drain.ts).
   */
  replacementDue?: number;
  /** Next moment something changes on its own (replacement due, early deletion, deadline, hold expiry, stuck threshold), epoch ms. */
  nextEventMs?: number;
}

/**
 * Plans one drain round.
 * @param pods pods bound to the node
 * @param nowMs epoch ms
 * @param deadlineEpochMs node deadline (terminationGracePeriod or the interruption notice); undefined = none
 */
export function planDrain(pods: Pod[], nowMs: number, deadlineEpochMs: number | undefined): DrainPlan {
  const events: number[] = [];
  if (deadlineEpochMs !== undefined && deadlineEpochMs > nowMs) events.push(deadlineEpochMs);
  const blocking: Pod[] = [];
  for (const pod of pods) {
    if (classifyPod(pod) !== 'drainable') continue;
    const deletion = pod.metadata.deletionTimestamp ? Date.parse(pod.metadata.deletionTimestamp) : undefined;
    if (deletion !== undefined) {
      const stuckAt = deletion + StuckTerminatingSeconds * 1000;
      if (nowMs > stuckAt) continue;
      events.push(stuckAt + 1);
    }
    blocking.push(pod);
  }

  // Karpenter deletes pods early so that their grace period ends by the node's deadline.
  const deleteEarly: DrainPlan['deleteEarly'] = [];
  if (deadlineEpochMs !== undefined) {
    for (const pod of blocking) {
      const deleteAt = cutoffDeletionMs(pod, deadlineEpochMs);
      const deletion = pod.metadata.deletionTimestamp ? Date.parse(pod.metadata.deletionTimestamp) : undefined;
      if (deletion !== undefined && deletion <= deadlineEpochMs) continue;
      if (nowMs >= deleteAt) deleteEarly.push({ pod, graceSeconds: Math.max(0, Math.floor((deadlineEpochMs - nowMs) / 1000)) });
      else events.push(deleteAt);
    }
  }
  const early = new Set(deleteEarly.map((d) => key(d.pod)));
  let replacementDue: number | undefined;
  if (deadlineEpochMs !== undefined) {
    for (const pod of blocking) {
      if (pod.metadata.deletionTimestamp || early.has(key(pod)) || isDaemonSetPod(pod)) continue;
      const due = replacementDueMs(pod, deadlineEpochMs);
      replacementDue = replacementDue === undefined ? due : Math.min(replacementDue, due);
    }
    if (replacementDue !== undefined && replacementDue > nowMs) events.push(replacementDue);
  }

  const held: Pod[] = [];
  const waiting: Pod[] = [];
  for (const pod of blocking) {
    if (pod.metadata.deletionTimestamp || early.has(key(pod))) continue;
    const holdUntil = doNotDisruptUntilMs(pod);
    if (holdUntil !== undefined && holdUntil > nowMs) {
      held.push(pod);
      if (Number.isFinite(holdUntil)) events.push(holdUntil);
      continue;
    }
    waiting.push(pod);
  }
  // One group at a time: the group is the first with any pod still there (terminating and held
  // pods included, as Karpenter groups every pod waiting eviction), so DaemonSet pods go after the
  // others and critical pods last.
  const group = DrainGroups.find((g) => blocking.some((p) => drainGroup(p) === g));
  const evict = waiting.filter((p) => drainGroup(p) === group);

  return {
    evict,
    deleteEarly,
    blocking,
    held,
    drained: blocking.length === 0,
    deadlineReached: deadlineEpochMs !== undefined && nowMs >= deadlineEpochMs,
    ...(replacementDue !== undefined ? { replacementDue } : {}),
    nextEventMs: events.length ? Math.min(...events) : undefined,
  };
}

/**
 * Seconds the state machine waits before the next Drain: the poll schedule, shortened so the loop
 * wakes at the next planned event (never less than 1 s).
 */
export function drainWaitSeconds(attempt: number, nowMs: number, nextEventMs: number | undefined, hasDeadline: boolean): number {
  const s = DrainPollSchedule;
  let seconds = attempt <= s.fastLoops ? s.fastSeconds : attempt <= s.mediumLoops ? s.mediumSeconds : s.slowSeconds;
  if (!hasDeadline && attempt > s.noDeadlineLoops) seconds = s.noDeadlineSeconds;
  if (nextEventMs !== undefined) seconds = Math.min(seconds, Math.ceil((nextEventMs - nowMs) / 1000));
  return Math.max(1, seconds);
}

/**
 * Whether a pod still counts for the drain's volume wait: not tolerating the disrupted taint, not
 * a mirror pod, not terminating for more than StuckTerminatingSeconds (KC IsDrainable; terminal
 * pods count).
 */
export function isDrainable(pod: Pod, nowMs: number): boolean {
  if (isMirrorPod(pod) || toleratesDisrupted(pod)) return false;
  const deletion = pod.metadata.deletionTimestamp ? Date.parse(pod.metadata.deletionTimestamp) : undefined;
  return deletion === undefined || nowMs - deletion <= StuckTerminatingSeconds * 1000;
}

/**
 * The node's VolumeAttachments that keep its instance (KC controller.go awaitVolumeDetachment,
 * filterVolumeAttachments): every attachment of a PersistentVolume, except those whose volume a
 * pod the drain does not move (isDrainable false) still uses; an attachment without a
 * PersistentVolume never waits.
 * @param volumeOfClaim `namespace/claimName` → the bound PersistentVolume's name
 */
export function pendingVolumeAttachments(
  attachments: VolumeAttachment[],
  pods: Pod[],
  volumeOfClaim: ReadonlyMap<string, string>,
  nowMs: number,
): VolumeAttachment[] {
  const kept = new Set<string>();
  for (const pod of pods) {
    if (isDrainable(pod, nowMs)) continue;
    for (const v of pod.spec.volumes ?? []) {
      const claim = volumeClaimName(pod, v);
      const pv = claim && volumeOfClaim.get(`${pod.metadata.namespace ?? 'default'}/${claim}`);
      if (pv) kept.add(pv);
    }
  }
  return attachments.filter((va) => {
    const pv = va.spec.source.persistentVolumeName;
    return !!pv && !kept.has(pv);
  });
}
