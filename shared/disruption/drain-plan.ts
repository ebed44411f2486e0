/**
 * Pure drain planning: given the pods on a node, `now` and the deadline, decide what to evict,
 * what to delete early and whether the node is drained. Behaviour follows Karpenter's terminator
 * (kubernetes-sigs/karpenter pkg/controllers/node/termination/terminator/terminator.go, eviction.go,
 * pkg/utils/pod/scheduling.go), with one nodefleet choice from the issue: DaemonSet pods are left
 * alone (they die with the instance) instead of being evicted in their own tiers.
 */
import type { Pod } from '../api/kube.ts';
import { TaintDisrupted } from '../api/labels.ts';
import { doNotDisruptUntilMs } from './pods.ts';

/** Kubernetes' default pod terminationGracePeriodSeconds. */
export const DefaultPodGraceSeconds = 30;
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
export const DrainPollSchedule = { fastSeconds: 5, fastLoops: 24, mediumSeconds: 15, mediumLoops: 84, slowSeconds: 60, noDeadlineSeconds: 300, noDeadlineLoops: 200 };

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

export type PodRole = 'mirror' | 'daemonset' | 'terminal' | 'tolerates-disrupted' | 'drainable';

/** Why a pod is outside the drain, or 'drainable'. */
export function classifyPod(pod: Pod): PodRole {
  if (pod.metadata.annotations?.['kubernetes.io/config.mirror'] !== undefined) return 'mirror';
  if (pod.metadata.ownerReferences?.some((o) => o.kind === 'DaemonSet' && o.controller !== false)) return 'daemonset';
  const phase = pod.status?.phase;
  if (phase === 'Succeeded' || phase === 'Failed') return 'terminal';
  if (toleratesDisrupted(pod)) return 'tolerates-disrupted';
  return 'drainable';
}

/** Whether the pod tolerates karpenter.sh/disrupted:NoSchedule (it would land back on the node; Karpenter skips it). */
export function toleratesDisrupted(pod: Pod): boolean {
  return (pod.spec.tolerations ?? []).some((t) => {
    const effectOk = !t.effect || t.effect === TaintDisrupted.effect;
    if (!effectOk) return false;
    if (t.operator === 'Exists') return !t.key || t.key === TaintDisrupted.key;
    return t.key === TaintDisrupted.key;
  });
}

export function isCritical(pod: Pod): boolean {
  return CriticalPriorityClasses.includes(pod.spec.priorityClassName ?? '');
}


function graceSeconds(pod: Pod): number {
  return pod.spec.terminationGracePeriodSeconds ?? DefaultPodGraceSeconds;
}

function key(pod: Pod): string {
  return `${pod.metadata.namespace ?? 'default'}/${pod.metadata.name}`;
}

/** What the Drain task should do now. Keys are `namespace/name`. */
export interface DrainPlan {
  /** Pods to evict now (one priority tier: non-critical first, critical once every non-critical pod is gone). */
  evict: Pod[];
  /** Pods to delete now with `graceSeconds`, so their own grace ends by the deadline. */
  deleteEarly: { pod: Pod; graceSeconds: number }[];
  /** Pods that still keep the node (not yet gone and not stuck terminating). */
  blocking: Pod[];
  /** Pods held by do-not-disrupt (not evicted). */
  held: Pod[];
  drained: boolean;
  deadlineReached: boolean;
  /** Next moment something changes on its own (early deletion, deadline, hold expiry, stuck threshold), epoch ms. */
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
      const deleteAt = deadlineEpochMs - graceSeconds(pod) * 1000;
      const deletion = pod.metadata.deletionTimestamp ? Date.parse(pod.metadata.deletionTimestamp) : undefined;
      if (deletion !== undefined && deletion <= deadlineEpochMs) continue;
      if (nowMs >= deleteAt) deleteEarly.push({ pod, graceSeconds: Math.max(0, Math.floor((deadlineEpochMs - nowMs) / 1000)) });
      else events.push(deleteAt);
    }
  }
  const early = new Set(deleteEarly.map((d) => key(d.pod)));

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
  // One tier at a time: the tier is the first with any pod still there (terminating and held pods
  // included, as Karpenter's groupPodsByPriority over IsWaitingEviction pods), so critical pods are
  // evicted only once every non-critical pod is gone.
  const tierCritical = !blocking.some((p) => !isCritical(p));
  const evict = waiting.filter((p) => isCritical(p) === tierCritical);

  return {
    evict,
    deleteEarly,
    blocking,
    held,
    drained: blocking.length === 0,
    deadlineReached: deadlineEpochMs !== undefined && nowMs >= deadlineEpochMs,
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

export { key as podKey };
