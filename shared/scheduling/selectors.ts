/**
 * Label selectors (`matchLabels` + `matchExpressions`) as Kubernetes evaluates them
 * (k8s.io/apimachinery pkg/labels, metav1.LabelSelectorAsSelector): an empty selector matches
 * everything, a missing selector matches nothing.
 */
import type { LabelSelector } from '../api/kube.ts';

/** Whether `labels` satisfy `selector`; `undefined` matches nothing (as a nil selector in a pod affinity term). */
export function matchesSelector(selector: LabelSelector | undefined, labels: Record<string, string> | undefined): boolean {
  if (!selector) return false;
  const l = labels ?? {};
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (l[k] !== v) return false;
  for (const e of selector.matchExpressions ?? []) {
    const v = l[e.key];
    switch (e.operator) {
      case 'In':
        if (v === undefined || !(e.values ?? []).includes(v)) return false;
        break;
      case 'NotIn':
        if (v !== undefined && (e.values ?? []).includes(v)) return false;
        break;
      case 'Exists':
        if (v === undefined) return false;
        break;
      case 'DoesNotExist':
        if (v !== undefined) return false;
        break;
      default:
        return false;
    }
  }
  return true;
}

/**
 * The selector with `matchLabelKeys` applied: each listed key adds `key In [the pod's value]`
 * (keys the pod lacks are ignored), as kube-scheduler does for topology spread and pod affinity.
 */
export function withMatchLabelKeys(selector: LabelSelector | undefined, keys: readonly string[] | undefined, podLabels: Record<string, string> | undefined): LabelSelector | undefined {
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
