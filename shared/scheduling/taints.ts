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
export function untoleratedTaint(taints: readonly Taint[] | undefined, tolerations: readonly Toleration[] | undefined, ignorePreferNoSchedule: boolean): Taint | undefined {
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
