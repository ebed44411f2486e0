/**
 * A fair Cluster Autoscaler baseline for a NodePool: the node groups a Cluster Autoscaler user
 * would configure to run the same workloads, and CA's scale-up with the least-waste expander.
 *
 * Node groups (one instance type each, as CA needs one shape per group): for every instance
 * category, architecture and capacity type the NodePool admits, one group per common size
 * (large … 8xlarge) holding the cheapest admitted type of that category, architecture and size
 * (a price-aware user picks e.g. c7g over c6g). So the groups cover the same families'
 * categories, the same architectures and the same capacity types as the NodePool.
 *
 * Scale-up: for every group, a first-fit-decreasing estimate of the new nodes the pending pods
 * need (allocatable less the daemonset cpu); the least-waste expander picks the group whose new
 * nodes would be best used (mean unused fraction of cpu and memory; ties to the cheaper group);
 * repeat until every pod that fits some group is placed. Cost in USD per hour.
 */
import type { Pod } from '../../shared/api/kube.ts';
import * as L from '../../shared/api/labels.ts';
import type { NodePool } from '../../shared/api/nodepool.ts';
import { filterInstanceTypes, nodePoolRequirements } from '../../shared/catalog/filter.ts';
import type { InstanceType } from '../../shared/catalog/types.ts';
import { podRequests } from '../../shared/scheduling/index.ts';

export interface FairBaseline {
  costPerHour: number;
  nodes: number;
  groups: string[];
  description: string;
}

/** The sizes a node group is made for. */
export const GroupSizes = ['large', 'xlarge', '2xlarge', '4xlarge', '8xlarge'];

interface Group {
  type: InstanceType;
  capacityType: string;
  price: number;
}

/** The node groups for a NodePool (see the module doc). */
export function fairNodeGroups(pool: NodePool, catalog: readonly InstanceType[]): Group[] {
  const admitted = filterInstanceTypes([...catalog], nodePoolRequirements(pool)).filter((t) => !t.exotic);
  const ctReq = pool.spec.template.spec.requirements.find((r) => r.key === L.LabelCapacityType && r.operator === 'In');
  const capacityTypes = ctReq?.values ?? ['on-demand'];
  const groups: Group[] = [];
  const best = new Map<string, Group>();
  for (const t of admitted) {
    const size = t.labels[L.LabelInstanceSize];
    if (!GroupSizes.includes(size)) continue;
    for (const ct of capacityTypes) {
      const prices = t.offerings.filter((o) => o.available && o.capacityType === ct).map((o) => o.priceUsdPerHour);
      if (prices.length === 0) continue;
      const price = Math.min(...prices);
      const key = `${t.labels[L.LabelInstanceCategory]}|${t.labels[L.LabelArch]}|${size}|${ct}`;
      const cur = best.get(key);
      if (!cur || price < cur.price) best.set(key, { type: t, capacityType: ct, price });
    }
  }
  groups.push(...[...best.values()].sort((a, b) => a.type.name.localeCompare(b.type.name) || a.capacityType.localeCompare(b.capacityType)));
  return groups;
}

/** CA's scale-up over the fair node groups. */
export function clusterAutoscalerFair(pods: readonly Pod[], pool: NodePool, catalog: readonly InstanceType[], daemonCpu: number): FairBaseline {
  const groups = fairNodeGroups(pool, catalog);
  let pending = pods.map((p) => podRequests(p.spec)).sort((a, b) => (b.cpu ?? 0) - (a.cpu ?? 0) || (b.memory ?? 0) - (a.memory ?? 0));
  let total = 0;
  let nodes = 0;
  while (pending.length > 0) {
    let best: { g: Group; nodes: number; placed: Set<number>; waste: number } | undefined;
    for (const g of groups) {
      const t = g.type;
      const cap = { cpu: (t.allocatable.cpu ?? 0) - daemonCpu, memory: t.allocatable.memory ?? 0, pods: (t.allocatable.pods ?? 0) - 3 };
      const bins: { cpu: number; memory: number; pods: number }[] = [];
      const placed = new Set<number>();
      pending.forEach((r, i) => {
        const c = r.cpu ?? 0;
        const m = r.memory ?? 0;
        if (c > cap.cpu || m > cap.memory) return;
        let bin = bins.find((b) => b.cpu >= c && b.memory >= m && b.pods >= 1);
        if (!bin) bins.push((bin = { ...cap }));
        bin.cpu -= c;
        bin.memory -= m;
        bin.pods -= 1;
        placed.add(i);
      });
      if (bins.length === 0) continue;
      const unusedCpu = bins.reduce((s, b) => s + b.cpu, 0) / (cap.cpu * bins.length);
      const unusedMem = bins.reduce((s, b) => s + b.memory, 0) / (cap.memory * bins.length);
      const waste = (unusedCpu + unusedMem) / 2;
      const better = !best || waste < best.waste - 1e-12 || (Math.abs(waste - best.waste) <= 1e-12 && bins.length * g.price < best.nodes * best.g.price);
      if (better) best = { g, nodes: bins.length, placed, waste };
    }
    if (!best) break;
    total += best.nodes * best.g.price;
    nodes += best.nodes;
    const placed = best.placed;
    pending = pending.filter((_, i) => !placed.has(i));
  }
  const names = groups.map((g) => `${g.type.name}/${g.capacityType}`);
  return {
    costPerHour: total,
    nodes,
    groups: names,
    description: `fair Cluster Autoscaler: ${groups.length} node groups (cheapest type per category × arch × size ${GroupSizes.join('/')} × capacity type the NodePool admits), least-waste expander, first-fit-decreasing estimator`,
  };
}
