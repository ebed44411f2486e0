/**
 * Disruption cost: how much it hurts to drain a node. Candidates are tried cheapest first.
 *
 * Karpenter's formula (KC pkg/utils/disruption/disruption.go `EvictionCost`, `ReschedulingCost`,
 * `LifetimeRemaining`): each pod costs 1 + cost / 2^27 + priority / 2^25, clamped to [-10, 10],
 * where cost is the pod's karpenter.sh/disruption-cost annotation when it has one, else its
 * controller.kubernetes.io/pod-deletion-cost (an annotation that is not an int32 counts as
 * absent, logged by Karpenter, skipped here); a node costs the sum over its reschedulable pods times the fraction of its
 * expireAfter lifetime still ahead (a node about to expire is cheap to disrupt).
 */
import type { Pod } from '../api/kube.ts';
import { AnnotationDisruptionCost, AnnotationPodDeletionCost } from '../api/labels.ts';
import { PodDeletionCostDivisor, PodEvictionCostClamp, PodPriorityDivisor } from './constants.ts';

/** An int32 annotation value, or undefined when absent or not an int32. */
function int32(v: string | undefined): number | undefined {
  if (v === undefined || !/^[+-]?\d+$/.test(v.trim())) return undefined;
  const n = Number(v);
  return n >= -2147483648 && n <= 2147483647 ? n : undefined;
}

/** One pod's eviction cost (dimensionless, default 1). */
export function evictionCost(p: Pod): number {
  let cost = 1;
  const annotations = p.metadata.annotations ?? {};
  const steer = AnnotationDisruptionCost in annotations ? int32(annotations[AnnotationDisruptionCost]) : int32(annotations[AnnotationPodDeletionCost]);
  if (steer !== undefined) cost += steer / PodDeletionCostDivisor;
  if (typeof p.spec.priority === 'number') cost += p.spec.priority / PodPriorityDivisor;
  return Math.min(PodEvictionCostClamp, Math.max(-PodEvictionCostClamp, cost));
}

/**
 * Fraction of the node's lifetime left, in [0, 1]; 1 when it never expires.
 * @param ageSeconds seconds since creation
 * @param expireAfterSeconds undefined for Never
 */
export function lifetimeRemaining(ageSeconds: number, expireAfterSeconds: number | undefined): number {
  if (expireAfterSeconds === undefined || expireAfterSeconds <= 0) return 1;
  return Math.min(1, Math.max(0, (expireAfterSeconds - ageSeconds) / expireAfterSeconds));
}

/** A node's disruption cost: Σ evictionCost(pods) × lifetimeRemaining. */
export function disruptionCost(pods: readonly Pod[], ageSeconds: number, expireAfterSeconds: number | undefined): number {
  let sum = 0;
  for (const p of pods) sum += evictionCost(p);
  return sum * lifetimeRemaining(ageSeconds, expireAfterSeconds);
}

/** Orders candidates: lower disruption cost first, then older nodes, then by name (deterministic). */
export function byDisruptionCost<T extends { disruptionCost: number; createdAt: string; nodeName: string }>(a: T, b: T): number {
  return a.disruptionCost - b.disruptionCost || a.createdAt.localeCompare(b.createdAt) || a.nodeName.localeCompare(b.nodeName);
}
