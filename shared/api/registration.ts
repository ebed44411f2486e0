/**
 * Registration and initialization rules of a NodeClaim's Node (pure): what the Node lacks of the
 * claim (labels, annotations, taints; the unregistered taint removed) and why it is not initialized
 * yet. Karpenter: KC pkg/controllers/nodeclaim/lifecycle/registration.go and initialization.go.
 */
import { AnnotationLastPodEventTime } from './agent-events.ts';
import type { Node, Taint } from './kube.ts';
import type { NodeClaim } from './nodeclaim.ts';
import { parseResources } from './quantity.ts';
import * as L from './labels.ts';

const BaseResources = new Set(['cpu', 'memory', 'pods', 'ephemeral-storage']);

/** Why the node is not initialized yet, or undefined when it is (KC initialization.go). */
export function notInitializedReason(node: Node, claim: NodeClaim): string | undefined {
  const ready = node.status?.conditions?.find((c) => c.type === 'Ready');
  if (ready?.status !== 'True') return 'node not ready';
  const taints = node.spec?.taints ?? [];
  const startup = claim.startupTaints.find((s) => taints.some((t) => t.key === s.key && t.effect === s.effect));
  if (startup) return `startup taint ${startup.key}:${startup.effect} still present`;
  if (taints.some((t) => t.key === L.TaintUnregistered.key)) return 'unregistered taint still present';
  const allocatable = parseResources(node.status?.allocatable ?? {});
  const requested = parseResources(claim.resources.requests);
  for (const [k, v] of Object.entries(requested)) if (!BaseResources.has(k) && v > 0 && !(allocatable[k] > 0)) return `extended resource ${k} not registered`;
  return undefined;
}

/**
 * Labels, annotations and taints the claim expects that the node lacks; the unregistered taint
 * removed. Annotations are the claim's (its NodePool template's and the hash annotations), not
 * the bookkeeping {@link AnnotationLastPodEventTime}.
 */
export function registrationPatch(node: Node, claim: NodeClaim): { labels: Record<string, string>; annotations: Record<string, string>; taints: Taint[] } {
  const labels: Record<string, string> = {};
  const have = node.metadata.labels ?? {};
  for (const [k, v] of Object.entries({ ...claim.labels, [L.LabelNodePool]: claim.nodePool, [L.LabelRegistered]: 'true' })) if (have[k] !== v) labels[k] = v;
  const annotations: Record<string, string> = {};
  const haveAnnotations = node.metadata.annotations ?? {};
  for (const [k, v] of Object.entries(claim.annotations)) if (k !== AnnotationLastPodEventTime && haveAnnotations[k] !== v) annotations[k] = v;
  const current = (node.spec?.taints ?? []).filter((t) => t.key !== L.TaintUnregistered.key);
  const sync = node.metadata.labels?.[L.LabelDoNotSync] === 'true' ? [] : (claim.taints as Taint[]);
  const taints = [...current];
  for (const t of sync)
    if (!taints.some((x) => x.key === t.key && x.effect === t.effect)) taints.push({ key: t.key, ...(t.value ? { value: t.value } : {}), effect: t.effect });
  return { labels, annotations, taints };
}
