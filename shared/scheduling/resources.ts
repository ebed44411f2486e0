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
 * Parsed requests, keyed on the spec's `containers` array: simulations run many times over the
 * same pods, and callers that copy a spec to change another field (`{ ...spec, nodeName }`, as
 * disruption does to unbind a pod) keep the same arrays. An entry holds only when the spec's
 * `initContainers` and `overhead` are the same objects too. Containers must not be changed in
 * place after their requests were read (build new ones instead).
 */
const cache = new WeakMap<object, { initContainers: unknown; overhead: unknown; requests: Resources }>();
const NoContainers: object = {};

/**
 * The requests of a pod (or pod template) in canonical units (cpu millicores, memory bytes),
 * including `pods: 1`. Returns a fresh object the caller may change.
 */
export function podRequests(spec: PodSpec): Resources {
  return { ...sharedPodRequests(spec) };
}

/**
 * {@link podRequests} without the copy, for loops over every bound pod of the cluster (100 000 at
 * scale) that only read it: the cached object itself, which the caller must not change.
 */
export function sharedPodRequests(spec: PodSpec): Readonly<Resources> {
  const key = spec.containers ?? NoContainers;
  const hit = cache.get(key);
  if (hit && hit.initContainers === spec.initContainers && hit.overhead === spec.overhead) return hit.requests;
  const requests = computePodRequests(spec);
  if (key !== NoContainers) cache.set(key, { initContainers: spec.initContainers, overhead: spec.overhead, requests });
  return requests;
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

/** Whether every request fits the room (a resource missing from the room has none). */
export function fitsRoom(requests: Resources, room: Resources): boolean {
  for (const k in requests) if (requests[k] > (room[k] ?? 0)) return false;
  return true;
}

/** A resource amount for messages: cpu in millicores, memory and ephemeral storage in Mi, others as counts. */
export function formatAmount(k: string, v: number): string {
  if (k === 'cpu') return `${v}m`;
  if (k === 'memory' || k === 'ephemeral-storage') return `${Math.round(v / 2 ** 20)}Mi`;
  return String(v);
}
