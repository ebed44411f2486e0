/**
 * Pod resource requests as the kube-scheduler and Karpenter count them.
 *
 * Rule source: k8s.io/component-helpers `resource.PodRequests` (used by Karpenter's
 * pkg/utils/resources/resources.go): the sum of app containers plus restartable init containers
 * (sidecars), or the largest single init step if larger, plus `spec.overhead`. A container
 * with limits but no requests requests its limits (the API server defaults them so).
 * Every pod also takes one `pods` slot.
 */
import type { Container, PodSpec } from '../api/kube.ts';
import { parseResources, type Resources } from '../api/quantity.ts';

function containerRequests(c: Container): Resources {
  const requests = parseResources(c.resources?.requests as Record<string, string> | undefined);
  const limits = parseResources(c.resources?.limits as Record<string, string> | undefined);
  for (const [k, v] of Object.entries(limits)) if (requests[k] === undefined) requests[k] = v;
  return requests;
}

function addInto(target: Resources, add: Resources): void {
  for (const [k, v] of Object.entries(add)) target[k] = (target[k] ?? 0) + v;
}

function maxInto(target: Resources, other: Resources): void {
  for (const [k, v] of Object.entries(other)) target[k] = Math.max(target[k] ?? 0, v);
}

/**
 * Parsed requests by spec object: simulations run many times over the same pods. A spec must
 * not be changed in place after its requests were read (build a new spec object instead).
 */
const cache = new WeakMap<PodSpec, Resources>();

/**
 * The requests of a pod (or pod template) in canonical units (cpu millicores, memory bytes),
 * including `pods: 1`. Returns a fresh object the caller may change.
 */
export function podRequests(spec: PodSpec): Resources {
  let r = cache.get(spec);
  if (!r) {
    r = computePodRequests(spec);
    cache.set(spec, r);
  }
  return { ...r };
}

function computePodRequests(spec: PodSpec): Resources {
  const total: Resources = {};
  for (const c of spec.containers ?? []) addInto(total, containerRequests(c));
  const sidecars: Resources = {};
  const initPeak: Resources = {};
  for (const c of spec.initContainers ?? []) {
    const r = containerRequests(c);
    if (c.restartPolicy === 'Always') {
      addInto(sidecars, r);
      maxInto(initPeak, sidecars);
    } else {
      const step: Resources = { ...sidecars };
      addInto(step, r);
      maxInto(initPeak, step);
    }
  }
  addInto(total, sidecars);
  maxInto(total, initPeak);
  addInto(total, parseResources(spec.overhead as Record<string, string> | undefined));
  total.pods = (total.pods ?? 0) + 1;
  for (const k of Object.keys(total)) if (total[k] === 0 && k !== 'pods') delete total[k];
  return total;
}
