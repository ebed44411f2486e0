/**
 * Label selectors (`matchLabels` + `matchExpressions`) as Kubernetes evaluates them
 * (k8s.io/apimachinery pkg/labels, metav1.LabelSelectorAsSelector): an empty selector matches
 * everything, a missing selector nothing, and an unknown operator (which Kubernetes refuses as an
 * invalid selector) nothing. The one matcher for scheduling, PDBs and workloads.
 */
import type { LabelSelector } from './kube.ts';

/** Whether `labels` satisfy `selector`; `undefined` matches nothing (as a nil selector in a pod affinity term or a PDB). */
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
