/**
 * Label selector helpers for scheduling (matchLabelKeys, selector identity); matching itself is
 * shared/api/label-selector.ts.
 */
import type { LabelSelector } from '../api/kube.ts';

/**
 * The selector with `matchLabelKeys` applied: each listed key adds `key In [the pod's value]`
 * (keys the pod lacks are ignored), as kube-scheduler does for topology spread and pod affinity.
 */
export function withMatchLabelKeys(
  selector: LabelSelector | undefined,
  keys: readonly string[] | undefined,
  podLabels: Record<string, string> | undefined,
): LabelSelector | undefined {
  if (!keys || keys.length === 0 || !selector) return selector;
  const extra = keys.filter((k) => podLabels?.[k] !== undefined).map((k) => ({ key: k, operator: 'In' as const, values: [podLabels![k]] }));
  if (extra.length === 0) return selector;
  return { matchLabels: selector.matchLabels, matchExpressions: [...(selector.matchExpressions ?? []), ...extra] };
}

/** A stable text form of a selector, for grouping identical constraints. */
export function selectorKey(selector: LabelSelector | undefined): string {
  if (!selector) return '<none>';
  const ml = Object.entries(selector.matchLabels ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const me = (selector.matchExpressions ?? []).map((e) => `${e.key} ${e.operator} ${[...(e.values ?? [])].sort().join(',')}`).sort();
  return JSON.stringify([ml, me]);
}
