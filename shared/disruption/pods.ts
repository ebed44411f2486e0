/**
 * Pod facts disruption needs: which pods a drain moves, which pods forbid voluntary disruption
 * (karpenter.sh/do-not-disrupt), and which PodDisruptionBudgets forbid their eviction.
 *
 * Sources: KC pkg/utils/pod/scheduling.go (`IsReschedulable`, `IsDisruptable`,
 * `IsDoNotDisruptActive`), pkg/utils/pdb/pdb.go (`Limits.CanEvictPods`).
 */
import { isDaemonSetPod, type Node, type Pod, type PodDisruptionBudget } from '../api/kube.ts';
import { AnnotationDoNotDisrupt, TaintDisrupted } from '../api/labels.ts';
import { matchesSelector } from '../api/label-selector.ts';
import { toleratesTaint } from '../scheduling/taints.ts';
import { DoNotDisruptTrue } from './constants.ts';
import { parseGoDurationMs } from '../api/duration.ts';

/** Kubernetes' default pod terminationGracePeriodSeconds. */
export const DefaultPodGraceSeconds = 30;

/**
 * Seconds from a replacement's launch until its node can run pods (CreateFleet, boot, kubelet
 * registration, Ready), with room: capacity for a pod that only the terminationGracePeriod cutoff
 * will move is launched this long before the cutoff deletes it, so that the re-created pod finds
 * a Ready node instead of waiting for a launch (Karpenter launches only once the pod is evicted).
 */
export const ReplacementLeadSeconds = 90;

/** The pod's terminationGracePeriodSeconds, or Kubernetes' default. */
export function podGraceSeconds(p: Pod): number {
  return p.spec.terminationGracePeriodSeconds ?? DefaultPodGraceSeconds;
}

/**
 * When the cutoff deletes the pod (epoch ms): its node's deadline minus the pod's grace period,
 * so that its grace ends by the deadline (KC terminator.go `DeleteExpiringPods`).
 */
export function cutoffDeletionMs(p: Pod, nodeDeadlineMs: number): number {
  return nodeDeadlineMs - podGraceSeconds(p) * 1000;
}

/** When capacity for a pod that only the cutoff will move is due (epoch ms): {@link ReplacementLeadSeconds} before {@link cutoffDeletionMs}. */
export function replacementDueMs(p: Pod, nodeDeadlineMs: number): number {
  return cutoffDeletionMs(p, nodeDeadlineMs) - ReplacementLeadSeconds * 1000;
}

/** `namespace/name`. */
export function podKey(p: Pod): string {
  return `${p.metadata.namespace ?? 'default'}/${p.metadata.name}`;
}

function ownerKind(p: Pod): string | undefined {
  return p.metadata.ownerReferences?.find((o) => o.controller)?.kind ?? p.metadata.ownerReferences?.[0]?.kind;
}

/** A static (mirror) pod: the kubelet owns it, it cannot be evicted. */
export function isMirrorPod(p: Pod): boolean {
  return !!p.metadata.annotations?.['kubernetes.io/config.mirror'] || ownerKind(p) === 'Node';
}

/** Succeeded or Failed. */
export function isTerminal(p: Pod): boolean {
  return p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed';
}

/**
 * Pods a drain evicts and the simulation must place elsewhere: not DaemonSet, mirror or terminal,
 * and not already terminating — except a StatefulSet's terminating pod, which its controller
 * recreates under the same name only after it is gone, so it still needs a place (KC
 * `IsReschedulable`).
 */
export function isReschedulable(p: Pod): boolean {
  if (isDaemonSetPod(p) || isMirrorPod(p) || isTerminal(p)) return false;
  return !p.metadata.deletionTimestamp || ownerKind(p) === 'StatefulSet';
}

/** Neither terminal nor terminating (KC `IsActive`). */
export function isActive(p: Pod): boolean {
  return !isTerminal(p) && !p.metadata.deletionTimestamp;
}

/**
 * Pods a drain calls the eviction API for, so the only pods a PodDisruptionBudget can hold back:
 * active, not a static (mirror) pod, not tolerating the karpenter.sh/disrupted NoSchedule taint,
 * and without an active do-not-disrupt (KC `IsEvictable`). DaemonSet pods are evicted too.
 */
export function isEvictable(p: Pod, now: Date): boolean {
  if (!isActive(p) || isMirrorPod(p) || isDoNotDisruptActive(p, now)) return false;
  return !(p.spec.tolerations ?? []).some((t) => toleratesTaint(t, TaintDisrupted));
}

/**
 * Until when (epoch ms) the pod's karpenter.sh/do-not-disrupt annotation holds it, or undefined when
 * it does not: "true" for ever (Infinity); a positive Go duration ("30m", "1.5h") until the pod's
 * start + duration (for ever while the pod has no start time); any other value not at all.
 * The one rule for disruption (candidates) and the drain (KC pkg/utils/pod `IsDoNotDisruptActive`).
 */
export function doNotDisruptUntilMs(p: Pod): number | undefined {
  const v = p.metadata.annotations?.[AnnotationDoNotDisrupt];
  if (v === undefined) return undefined;
  if (v === DoNotDisruptTrue) return Infinity;
  const ms = parseGoDurationMs(v);
  if (ms === undefined || ms <= 0) return undefined;
  const start = Date.parse(p.status?.startTime ?? '');
  return Number.isNaN(start) ? Infinity : start + ms;
}

/** Whether karpenter.sh/do-not-disrupt forbids voluntary disruption of the pod at `now` ({@link doNotDisruptUntilMs}). */
export function isDoNotDisruptActive(p: Pod, now: Date): boolean {
  const until = doNotDisruptUntilMs(p);
  return until !== undefined && now.getTime() < until;
}

function isPodReady(p: Pod): boolean {
  const c = p.status?.conditions?.find((x) => x.type === 'Ready');
  return c ? c.status === 'True' : p.status?.phase === 'Running';
}

function scaled(value: number | string, total: number, roundUp: boolean): number {
  if (typeof value === 'number') return value;
  const m = /^(\d+)%$/.exec(value);
  if (!m) return Number(value);
  const x = (Number(m[1]) * total) / 100;
  return roundUp ? Math.ceil(x) : Math.floor(x);
}

/**
 * Evictions a PDB allows now: `status.disruptionsAllowed` when the controller has set it, else
 * computed as the disruption controller would from the matching pods.
 */
export function disruptionsAllowed(pdb: PodDisruptionBudget, pods: readonly Pod[]): number {
  if (pdb.status?.disruptionsAllowed !== undefined) return pdb.status.disruptionsAllowed;
  const matching = pods.filter(
    (p) =>
      (p.metadata.namespace ?? 'default') === (pdb.metadata.namespace ?? 'default') && matchesSelector(pdb.spec.selector, p.metadata.labels) && !isTerminal(p),
  );
  const healthy = matching.filter(isPodReady).length;
  if (pdb.spec.maxUnavailable !== undefined) {
    const maxUnavailable = scaled(pdb.spec.maxUnavailable, matching.length, true);
    return Math.max(0, healthy - (matching.length - maxUnavailable));
  }
  if (pdb.spec.minAvailable !== undefined) return Math.max(0, healthy - scaled(pdb.spec.minAvailable, matching.length, true));
  return Math.max(0, healthy);
}

/**
 * A PDB that forbids every voluntary eviction whatever its pods' health: `maxUnavailable: 0`,
 * `maxUnavailable: "0%"` or `minAvailable: "100%"` (KC pkg/utils/pdb/pdb.go `isFullyBlocking`).
 */
export function isFullyBlockingPdb(pdb: PodDisruptionBudget): boolean {
  const { maxUnavailable, minAvailable } = pdb.spec;
  return maxUnavailable === 0 || maxUnavailable === '0%' || minAvailable === '100%';
}

/** PodDisruptionBudgets indexed for repeated checks. */
export class PdbLimits {
  private readonly allowed: { pdb: PodDisruptionBudget; allowed: number }[];

  constructor(pdbs: readonly PodDisruptionBudget[], pods: readonly Pod[]) {
    this.allowed = pdbs.map((pdb) => ({ pdb, allowed: disruptionsAllowed(pdb, pods) }));
  }

  /**
   * Why the eviction API would refuse to evict `pod` now, or undefined when it would not:
   * a matching PDB allows no disruption (an unready pod under `AlwaysAllow` is exempt), or more
   * than one PDB matches (the API server refuses those outright).
   */
  blocks(pod: Pod): string | undefined {
    const ns = pod.metadata.namespace ?? 'default';
    const matching = this.allowed.filter((x) => (x.pdb.metadata.namespace ?? 'default') === ns && matchesSelector(x.pdb.spec.selector, pod.metadata.labels));
    if (matching.length > 1) {
      return `pod ${podKey(pod)} is covered by multiple PodDisruptionBudgets (${matching.map((x) => `${ns}/${x.pdb.metadata.name}`).join(', ')})`;
    }
    const only = matching[0];
    if (!only || only.allowed > 0) return undefined;
    if (only.pdb.spec.unhealthyPodEvictionPolicy === 'AlwaysAllow' && !isPodReady(pod)) return undefined;
    return `pdb ${ns}/${only.pdb.metadata.name} prevents pod evictions (pod ${podKey(pod)})`;
  }

  /**
   * Whether no eviction of `pod` can succeed until someone changes a PDB: more than one PDB covers
   * it, or its one PDB is fully blocking ({@link isFullyBlockingPdb}; an unready pod under
   * `AlwaysAllow` is exempt). KC `Limits.IsCurrentlyReschedulable`'s PDB half.
   */
  fullyBlocks(pod: Pod): boolean {
    const ns = pod.metadata.namespace ?? 'default';
    const matching = this.allowed.filter((x) => (x.pdb.metadata.namespace ?? 'default') === ns && matchesSelector(x.pdb.spec.selector, pod.metadata.labels));
    if (matching.length > 1) return true;
    const only = matching[0];
    if (!only || !isFullyBlockingPdb(only.pdb)) return false;
    return !(only.pdb.spec.unhealthyPodEvictionPolicy === 'AlwaysAllow' && !isPodReady(pod));
  }
}

/**
 * Whether a node is being deleted, so the provisioner provisions ahead for its pods: the Node has
 * a deletionTimestamp, carries the karpenter.sh/disrupted taint (termination's Cordon task,
 * functions/termination/cordon.ts), or its NodeClaim is Terminating (`terminatingNodes`: node
 * names of such claims). KC `StateNode.MarkedForDeletion`.
 */
export function isNodeDeleting(node: Node, terminatingNodes: ReadonlySet<string> = new Set()): boolean {
  if (node.metadata.deletionTimestamp || terminatingNodes.has(node.metadata.name)) return true;
  return (node.spec?.taints ?? []).some((t) => t.key === TaintDisrupted.key && t.effect === TaintDisrupted.effect);
}

/**
 * The pods of a node being deleted that the provisioner schedules like pending pods, so their
 * new capacity launches while the node drains (KC provisioner.go `Schedule`: the currently
 * reschedulable pods of deleting nodes, `Limits.IsCurrentlyReschedulable`): reschedulable
 * ({@link isReschedulable}: a terminating StatefulSet pod counts, a DaemonSet, mirror, terminal
 * or other terminating pod does not), no active do-not-disrupt, and no fully blocking PDB (a
 * drain would not move them, so capacity for them would wait idle). Beyond Karpenter: with the
 * node's deadline (`nodeDeadlineMs`, epoch ms), a pod the cutoff will delete within
 * {@link ReplacementLeadSeconds} counts whatever holds it ({@link replacementDueMs}), so its
 * capacity is Ready when it is re-created.
 */
export function isCurrentlyReschedulable(p: Pod, pdbs: PdbLimits, now: Date, nodeDeadlineMs?: number): boolean {
  if (!isReschedulable(p)) return false;
  if (nodeDeadlineMs !== undefined && now.getTime() >= replacementDueMs(p, nodeDeadlineMs)) return true;
  if (isActive(p) && isDoNotDisruptActive(p, now)) return false;
  return !pdbs.fullyBlocks(p);
}

/** Options of {@link deletingNodePods}. */
export interface DeletingNodePodsOptions {
  /** Node names whose NodeClaim is Terminating ({@link isNodeDeleting}). */
  terminatingNodes?: ReadonlySet<string>;
  /** Node name → its termination deadline (epoch ms), from the claim's record ({@link isCurrentlyReschedulable}). */
  deadlines?: ReadonlyMap<string, number>;
}

/**
 * The pods of deleting nodes ({@link isNodeDeleting}) to schedule like pending pods
 * ({@link isCurrentlyReschedulable}), as copies without `spec.nodeName` (the simulation places
 * them afresh; their deleting node is unschedulable to it). Callers drop the originals from their
 * node's pods so they are not counted twice (`podKey` identifies them). Shape: nodes as listed,
 * `podsByNode` node name → bound pods, `now` for do-not-disrupt durations and deadlines.
 */
export function deletingNodePods(
  nodes: readonly Node[],
  podsByNode: ReadonlyMap<string, readonly Pod[]>,
  pdbs: readonly PodDisruptionBudget[],
  now: Date,
  opts: DeletingNodePodsOptions = {},
): Pod[] {
  const deleting = nodes.filter((n) => isNodeDeleting(n, opts.terminatingNodes));
  if (deleting.length === 0) return [];
  const limits = new PdbLimits(pdbs, []);
  const out: Pod[] = [];
  for (const n of deleting) {
    const deadline = opts.deadlines?.get(n.metadata.name);
    for (const p of podsByNode.get(n.metadata.name) ?? []) {
      if (!isCurrentlyReschedulable(p, limits, now, deadline)) continue;
      const { nodeName: _bound, ...spec } = p.spec;
      out.push({ ...p, spec });
    }
  }
  return out;
}
