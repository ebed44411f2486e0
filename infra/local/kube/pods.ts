/**
 * Pod and node predicates the simulated controllers share: resource requests, tolerations,
 * node selection, readiness, PDB arithmetic.
 * Rule sources: kube-scheduler's NodeResourcesFit (requests = max(sum of app containers +
 * sidecars, largest init container) + overhead), TaintToleration, NodeAffinity plugins;
 * k8s.io/api core/v1 toleration.go; pkg/controller/disruption (PDB status).
 */
import { addResources, maxResources, parseResources, type Resources } from '../../../shared/api/quantity.ts';
import type { Node, Pod, PodDisruptionBudget, Taint, Toleration, NodeSelectorTerm } from '../../../shared/api/kube.ts';
import { Requirements } from '../../../shared/api/requirements.ts';

/** Pod requests in canonical units (cpu millicores, memory bytes), plus `pods: 1`. */
export function podRequests(pod: Pod): Resources {
  let app: Resources = {};
  let sidecars: Resources = {};
  let init: Resources = {};
  for (const c of pod.spec.containers ?? []) app = addResources(app, parseResources(c.resources?.requests as Record<string, string>));
  for (const c of pod.spec.initContainers ?? []) {
    const r = parseResources(c.resources?.requests as Record<string, string>);
    if (c.restartPolicy === 'Always') sidecars = addResources(sidecars, r);
    else init = maxResources(init, addResources(r, sidecars));
  }
  let total = maxResources(addResources(app, sidecars), init);
  total = addResources(total, parseResources(pod.spec.overhead as Record<string, string>));
  total.pods = 1;
  return total;
}

/** Whether a toleration tolerates a taint (core/v1 Toleration.ToleratesTaint). */
export function tolerates(t: Toleration, taint: Taint): boolean {
  if (t.effect && t.effect !== taint.effect) return false;
  if (!t.key) return t.operator === 'Exists';
  if (t.key !== taint.key) return false;
  if (t.operator === 'Exists') return true;
  return (t.value ?? '') === (taint.value ?? '');
}

/** The first NoSchedule/NoExecute taint the tolerations do not tolerate, or undefined. */
export function untoleratedTaint(taints: readonly Taint[] | undefined, tolerations: readonly Toleration[] | undefined): Taint | undefined {
  for (const taint of taints ?? []) {
    if (taint.effect === 'PreferNoSchedule') continue;
    if (!(tolerations ?? []).some((t) => tolerates(t, taint))) return taint;
  }
  return undefined;
}

function termMatches(term: NodeSelectorTerm, node: Node): boolean {
  const exprs = term.matchExpressions ?? [];
  const fields = term.matchFields ?? [];
  if (exprs.length === 0 && fields.length === 0) return false;
  if (!Requirements.fromSpecs(exprs).matchesLabels(node.metadata.labels ?? {})) return false;
  return Requirements.fromSpecs(fields).matchesLabels({ 'metadata.name': node.metadata.name });
}

/** nodeSelector and required node affinity (terms ORed, expressions ANDed). */
export function matchesNodeSelection(pod: Pod, node: Node): boolean {
  const labels = node.metadata.labels ?? {};
  for (const [k, v] of Object.entries(pod.spec.nodeSelector ?? {})) if (labels[k] !== v) return false;
  const terms = pod.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  if (terms && terms.length > 0 && !terms.some((t) => termMatches(t, node))) return false;
  return true;
}

/** Node condition Ready=True. */
export function isNodeReady(node: Node): boolean {
  return (node.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
}

/** Pod is Running with condition Ready=True and not terminating (what a PDB counts as healthy). */
export function isPodHealthy(pod: Pod): boolean {
  if (pod.metadata.deletionTimestamp) return false;
  if (pod.status?.phase !== 'Running') return false;
  return (pod.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
}

/** Succeeded or Failed. */
export function isTerminal(pod: Pod): boolean {
  return pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
}

/**
 * An int-or-percent of `total`, rounded up (intstr.GetScaledValueFromIntOrPercent with roundUp,
 * as the disruption controller uses for minAvailable and maxUnavailable).
 */
export function scaledValue(v: number | string, total: number): number {
  if (typeof v === 'number') return v;
  const m = /^(\d+)%$/.exec(v.trim());
  if (m) return Math.ceil((Number(m[1]) * total) / 100);
  const n = Number(v);
  return Number.isFinite(n) ? n : 0;
}

/** A PDB's computed status (policy/v1 PodDisruptionBudgetStatus subset). */
export interface PdbStatus {
  expectedPods: number;
  currentHealthy: number;
  desiredHealthy: number;
  disruptionsAllowed: number;
}

/**
 * Computes a PDB's status from the pods it selects and their controllers' scale.
 * `expectedPods` is the sum of the owning controllers' replicas when every pod has a scalable
 * owner (as pkg/controller/disruption getExpectedScale), otherwise the number of selected pods.
 */
export function computePdbStatus(
  pdb: PodDisruptionBudget,
  pods: readonly Pod[],
  controllerScale: (pod: Pod) => { uid: string; replicas: number } | undefined,
): PdbStatus {
  const currentHealthy = pods.filter(isPodHealthy).length;
  let expectedPods = pods.length;
  const { minAvailable, maxUnavailable } = pdb.spec;
  if (maxUnavailable !== undefined || (typeof minAvailable === 'string' && minAvailable.endsWith('%'))) {
    const scales = new Map<string, number>();
    let allOwned = true;
    for (const p of pods) {
      const s = controllerScale(p);
      if (s) scales.set(s.uid, s.replicas);
      else allOwned = false;
    }
    if (allOwned && scales.size > 0) expectedPods = [...scales.values()].reduce((a, b) => a + b, 0);
  }
  let desiredHealthy: number;
  if (maxUnavailable !== undefined) desiredHealthy = Math.max(0, expectedPods - scaledValue(maxUnavailable, expectedPods));
  else if (minAvailable !== undefined) desiredHealthy = scaledValue(minAvailable, expectedPods);
  else desiredHealthy = 0; // neither set: the disruption controller requires nothing (getExpectedPodCount)
  const disruptionsAllowed = Math.max(0, currentHealthy - desiredHealthy);
  return { expectedPods, currentHealthy, desiredHealthy, disruptionsAllowed };
}
