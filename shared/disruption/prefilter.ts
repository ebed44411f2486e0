/**
 * A cheap, certain "no" before a single-node simulation. Ignoring taints, affinity and topology
 * only makes placement easier, so if even then some pods fit on no other node, and no instance
 * type cheaper than the candidate can hold those pods, the simulation would fail: skip it.
 * (Karpenter bounds single-node consolidation by a 3-minute timeout instead; a packed
 * 200-node cluster otherwise costs one full simulation per node.)
 */
import { fits, parseResources, subtractResources, type Resources } from '../api/quantity.ts';
import { Requirements } from '../api/requirements.ts';
import { LabelCapacityType, LabelTopologyZone } from '../api/labels.ts';
import { podRequests } from '../scheduling/index.ts';
import type { ClusterState } from './state.ts';
import type { Candidate } from './types.ts';

/** Free capacity of every node pods could move to, computed once per plan. */
export class FreeCapacity {
  private readonly free: { name: string; free: Resources }[] = [];
  private cheapest?: { price: number; allocatable: Resources }[];

  constructor(private readonly state: ClusterState) {
    const deleting = new Set(state.managed.filter((m) => m.deleting).map((m) => m.node.metadata.name));
    for (const n of state.snapshot.nodes) {
      const name = n.metadata.name;
      if (deleting.has(name) || n.metadata.deletionTimestamp || n.spec?.unschedulable) continue;
      let free = parseResources(n.status?.allocatable);
      for (const p of state.podsByNode.get(name) ?? []) free = subtractResources(free, podRequests(p.spec));
      this.free.push({ name, free });
    }
  }

  /** Every instance type's cheapest available offering and allocatable, over all NodePools. */
  private types(): { price: number; allocatable: Resources }[] {
    if (this.cheapest) return this.cheapest;
    const seen = new Map<string, { price: number; allocatable: Resources }>();
    for (const pool of this.state.snapshot.nodePools) {
      // The pool's requirements, checked only where the type's labels / offerings say something
      // (a relaxation: unknown keys pass).
      const reqs = Requirements.fromSpecs(pool.spec.template.spec.requirements);
      const ct = reqs.get(LabelCapacityType);
      const zone = reqs.get(LabelTopologyZone);
      for (const it of this.state.snapshot.instanceTypes(pool)) {
        if (reqs.all().some((r) => it.labels[r.key] !== undefined && !r.has(it.labels[r.key]))) continue;
        let price = Infinity;
        for (const o of it.offerings) {
          if (!o.available || (ct && !ct.has(o.capacityType)) || (zone && !zone.has(o.zone))) continue;
          if (o.priceUsdPerHour < price) price = o.priceUsdPerHour;
        }
        const prev = seen.get(it.name);
        if (!prev || price < prev.price) seen.set(it.name, { price, allocatable: it.allocatable });
      }
    }
    this.cheapest = [...seen.values()];
    return this.cheapest;
  }

  /** Why consolidating `c` alone certainly fails, or undefined when a simulation is needed. */
  certainFailure(c: Candidate): string | undefined {
    if (c.priceUsdPerHour === undefined) return undefined;
    const homeless: Resources = {};
    let count = 0;
    for (const p of c.reschedulablePods) {
      const req = podRequests(p.spec);
      if (this.free.some((n) => n.name !== c.nodeName && !this.state.leaving.has(n.name) && fits(req, n.free))) continue;
      count++;
      for (const [k, v] of Object.entries(req)) homeless[k] = (homeless[k] ?? 0) + v;
    }
    if (count === 0) return undefined;
    const price = c.priceUsdPerHour;
    if (this.types().some((t) => t.price < price && fits(homeless, t.allocatable))) return undefined;
    return `${count} pod(s) fit on no other node and no cheaper instance type can hold them`;
  }
}
