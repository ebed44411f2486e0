/**
 * Disruption cost: how much it hurts to drain a node. Drift, expiration and rebalance candidates are
 * tried cheapest first.
 *
 * Karpenter's formula (KC pkg/utils/disruption/disruption.go `EvictionCost`, `ReschedulingCost`,
 * `LifetimeRemaining`): each pod costs 1 + cost / 2^27 + priority / 2^25, clamped to [-10, 10],
 * where cost is the pod's karpenter.sh/disruption-cost annotation when it has one, else its
 * controller.kubernetes.io/pod-deletion-cost (an annotation that is not an int32 counts as
 * absent, logged by Karpenter, skipped here); a node costs the sum over its reschedulable pods times the fraction of its
 * expireAfter lifetime still ahead (a node about to expire is cheap to disrupt).
 *
 * Karpenter v1.15 orders emptiness and consolidation candidates by savings ratio instead (KC
 * pkg/utils/disruption/disruption.go `SavingsRatio`, `ComputeRescheduleDisruptionCost`; KC
 * pkg/controllers/disruption/consolidation.go `sortCandidates`): the node's offering price divided
 * by its rescheduling cost, 1 per node plus each reschedulable pod's eviction cost floored at 0,
 * highest ratio first. Disruption cost still orders drift, expiration and rebalance.
 */
import type { Pod } from '../api/kube.ts';
import { AnnotationDisruptionCost, AnnotationPodDeletionCost } from '../api/labels.ts';
import { PerNodeRescheduleCost, PodDeletionCostDivisor, PodEvictionCostClamp, PodPriorityDivisor } from './constants.ts';

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

/** Rescheduling cost a node's price is divided by: 1 per node plus Σ max(0, evictionCost) over its reschedulable pods; ≥ 1. */
export function rescheduleCost(pods: readonly Pod[]): number {
  let sum = PerNodeRescheduleCost;
  for (const p of pods) sum += Math.max(0, evictionCost(p));
  return sum;
}

/** Savings ratio, USD/hour per unit of rescheduling cost: price (0 when unknown) ÷ {@link rescheduleCost}. Higher is disrupted first. */
export function savingsRatio(c: { priceUsdPerHour?: number; reschedulablePods: readonly Pod[] }): number {
  return (c.priceUsdPerHour ?? 0) / rescheduleCost(c.reschedulablePods);
}

/**
 * Emptiness and consolidation candidates in Karpenter v1.15's order: higher savings ratio first, then
 * older nodes, then by name (deterministic; Karpenter's sort is not stable, so its order among equal
 * ratios varies). Returns a new array.
 */
export function sortBySavingsRatio<T extends { priceUsdPerHour?: number; reschedulablePods: readonly Pod[]; createdAt: string; nodeName: string }>(
  xs: readonly T[],
): T[] {
  const ratio = new Map(xs.map((x) => [x, savingsRatio(x)]));
  return [...xs].sort((a, b) => ratio.get(b)! - ratio.get(a)! || a.createdAt.localeCompare(b.createdAt) || a.nodeName.localeCompare(b.nodeName));
}

/** Orders candidates: lower disruption cost first, then older nodes, then by name (deterministic). */
export function byDisruptionCost<T extends { disruptionCost: number; createdAt: string; nodeName: string }>(a: T, b: T): number {
  return a.disruptionCost - b.disruptionCost || a.createdAt.localeCompare(b.createdAt) || a.nodeName.localeCompare(b.nodeName);
}
