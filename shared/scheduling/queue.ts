/**
 * The scheduling queue: the order pending pods are tried in, and when a pod that failed is tried
 * again. Follows Karpenter's queue (kubernetes-sigs/karpenter
 * pkg/controllers/provisioning/scheduling/queue.go): pods sorted by priority, then by CPU and
 * memory descending; a pod that cannot be placed goes to the back, and fails for good once the
 * queue went round with nothing placed since its last try.
 */
import type { Resources } from '../api/quantity.ts';
import type { Pod } from '../api/kube.ts';
import { rateOf } from './nodeclaim.ts';
import type { PodInfo } from './pod.ts';
import type { ClaimTemplate, TemplateType } from './template.ts';

/**
 * Sort order of the queue (KC queue.go `byCPUAndMemoryDescending`): priority, then CPU and
 * memory descending, pods with pod affinity after the others, then name. Cost-aware packing
 * then interleaves shapes within each priority ({@link balanceShapes}).
 */
export function comparePods(a: PodInfo, b: PodInfo): number {
  if (a.priority !== b.priority) return b.priority - a.priority;
  const cpu = (b.requests.cpu ?? 0) - (a.requests.cpu ?? 0);
  if (cpu !== 0) return cpu;
  const mem = (b.requests.memory ?? 0) - (a.requests.memory ?? 0);
  if (mem !== 0) return mem;
  const aff = (a.affinity.length > 0 ? 1 : 0) - (b.affinity.length > 0 ? 1 : 0);
  if (aff !== 0) return aff;
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}

/**
 * Sort order of `packing: karpenter`, exactly Karpenter v1.15's (KC queue.go
 * `byCPUAndMemoryDescending`): CPU descending, memory descending, then creation time and UID,
 * for which the pod key (namespace/name) stands.
 */
export function comparePodsKarpenter(a: PodInfo, b: PodInfo): number {
  const cpu = (b.requests.cpu ?? 0) - (a.requests.cpu ?? 0);
  if (cpu !== 0) return cpu;
  const mem = (b.requests.memory ?? 0) - (a.requests.memory ?? 0);
  if (mem !== 0) return mem;
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}

/**
 * Cost-aware packing: reorders each priority level of the sorted queue so that pods with more
 * memory per cpu than the target ratio and pods with less alternate, keeping the running
 * memory:cpu ratio of the queue near the allocatable ratio of the instance type that sells the
 * whole batch cheapest (for a typical web/worker mix on c/m/r: m6g.16xlarge, 3.6 GiB/vCPU).
 * First-fit then fills claims with a mix that uses both the cpu and the memory of that type,
 * instead of cpu-heavy claims that idle the memory of general-purpose nodes and memory-heavy
 * claims on memory-optimised ones. Each half keeps its order (largest first, pod affinity last).
 */
export function balanceShapes(queue: PodInfo[], templates: readonly ClaimTemplate[]): void {
  const pool = templates.find((t) => !t.unusable);
  if (!pool || queue.length < 2) return;
  const total: Resources = {};
  for (const info of queue) for (const k of ['cpu', 'memory', 'pods']) total[k] = (total[k] ?? 0) + (info.requests[k] ?? 0);
  if (!total.cpu || !total.memory) return;
  let best: TemplateType | undefined;
  let bestRate = Infinity;
  for (const t of pool.types) {
    if (t.exotic || !t.room.cpu || !t.room.memory) continue;
    const r = rateOf(t, total);
    if (r < bestRate) [best, bestRate] = [t, r];
  }
  if (!best) return;
  const target = best.room.memory! / best.room.cpu!;
  for (let start = 0; start < queue.length;) {
    let end = start;
    while (end < queue.length && queue[end].priority === queue[start].priority) end++;
    const low: PodInfo[] = [];
    const high: PodInfo[] = [];
    for (let i = start; i < end; i++) {
      const r = queue[i].requests;
      ((r.memory ?? 0) > target * (r.cpu ?? 0) ? high : low).push(queue[i]);
    }
    let cpu = 0,
      mem = 0,
      li = 0,
      hi = 0;
    for (let i = start; i < end; i++) {
      const takeHigh = hi < high.length && (li >= low.length || mem < target * cpu);
      const next = takeHigh ? high[hi++] : low[li++];
      cpu += next.requests.cpu ?? 0;
      mem += next.requests.memory ?? 0;
      queue[i] = next;
    }
    start = end;
  }
}

/**
 * Pending pods in the order they are tried. A pod that fails even with its preferences relaxed
 * (scheduler.ts) is retried only after some other pod was placed, and fails for good when nothing
 * was placed since its last try ({@link retryOrGiveUp}; KC queue.go `Pop` stops at the first pod
 * pushed back at the same queue length, which is the same rule).
 */
export class SchedulingQueue {
  private items: PodInfo[];
  private head = 0;
  private placed = 0;
  private readonly lastFail = new Map<PodInfo, number>();

  /**
   * `first`: pods queued ahead of the others of their priority (cost-aware packing; each part
   * sorted and balanced on its own).
   */
  constructor(pods: readonly PodInfo[], templates: readonly ClaimTemplate[], costPacking: boolean, first?: ReadonlySet<Pod>) {
    this.items = [...pods].sort(costPacking ? comparePods : comparePodsKarpenter);
    if (!costPacking) return;
    if (!first) {
      balanceShapes(this.items, templates);
      return;
    }
    const parts: PodInfo[][] = [];
    for (let start = 0; start < this.items.length;) {
      let end = start;
      while (end < this.items.length && this.items[end].priority === this.items[start].priority) end++;
      const level = this.items.slice(start, end);
      parts.push(
        level.filter((p) => first.has(p.pod)),
        level.filter((p) => !first.has(p.pod)),
      );
      start = end;
    }
    for (const part of parts) balanceShapes(part, templates);
    this.items = parts.flat();
  }

  /** The next pod to try, or undefined when the queue is done. */
  next(): PodInfo | undefined {
    return this.head < this.items.length ? this.items[this.head++] : undefined;
  }

  /** Records that the pod just taken was placed. */
  placedOne(): void {
    this.placed++;
  }

  /** A pod that failed with nothing left to relax: back of the queue, or true when it fails for good. */
  retryOrGiveUp(info: PodInfo): boolean {
    if (this.lastFail.get(info) === this.placed) return true;
    this.lastFail.set(info, this.placed);
    this.items.push(info);
    return false;
  }
}
