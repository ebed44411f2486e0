/**
 * Taints and tolerations, as kube-scheduler and Karpenter's `scheduling/taints.go` apply them:
 * a pod may land on a node when it tolerates every NoSchedule and NoExecute taint;
 * PreferNoSchedule taints are honoured too until preferences are relaxed (Karpenter's last
 * relaxation step tolerates them).
 */
import type { Taint, Toleration } from '../api/kube.ts';

/** Whether one toleration matches one taint (k8s.io/api core/v1 `Toleration.ToleratesTaint`). */
export function toleratesTaint(t: Toleration, taint: Taint): boolean {
  if (t.effect && t.effect !== taint.effect) return false;
  if (t.key === undefined || t.key === '') {
    // An empty key with operator Exists matches every taint.
    return t.operator === 'Exists';
  }
  if (t.key !== taint.key) return false;
  if (t.operator === 'Exists') return true;
  return (t.value ?? '') === (taint.value ?? '');
}

/**
 * The first taint the tolerations do not tolerate, or undefined.
 * @param ignorePreferNoSchedule skip PreferNoSchedule taints (after relaxation; and for daemonsets).
 */
export function untoleratedTaint(
  taints: readonly Taint[] | undefined,
  tolerations: readonly Toleration[] | undefined,
  ignorePreferNoSchedule: boolean,
): Taint | undefined {
  for (const taint of taints ?? []) {
    if (ignorePreferNoSchedule && taint.effect === 'PreferNoSchedule') continue;
    if (!(tolerations ?? []).some((t) => toleratesTaint(t, taint))) return taint;
  }
  return undefined;
}

/** `key=value:effect`, for messages. */
export function formatTaint(t: Taint): string {
  return `${t.key}${t.value ? `=${t.value}` : ''}:${t.effect}`;
}

/**
 * Taints kubelet and the cloud controller put on every new node and lift once it is up
 * (KC `scheduling/taints.go` KnownEphemeralTaints).
 */
export const EphemeralTaintKeys: ReadonlySet<string> = new Set([
  'node.kubernetes.io/not-ready',
  'node.kubernetes.io/unreachable',
  'node.cloudprovider.kubernetes.io/uninitialized',
]);

/**
 * The taints a pending pod must tolerate to be placed on a node: all of them once the node is
 * initialized; before that, the ephemeral ones and the NodePool's startup taints are left out,
 * since they go away as the node comes up (KC `state/statenode.go` `Taints`).
 * @param startupTaints the startup taints of the node's NodeClaim (its NodePool's).
 */
export function schedulingTaints(taints: readonly Taint[], initialized: boolean, startupTaints: readonly Taint[] = []): Taint[] {
  if (initialized) return [...taints];
  return taints.filter(
    (t) => !EphemeralTaintKeys.has(t.key) && !startupTaints.some((s) => s.key === t.key && s.effect === t.effect && (s.value ?? '') === (t.value ?? '')),
  );
}
