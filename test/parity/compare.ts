/**
 * The parity checks between nodefleet's `solve()` and Karpenter's decision on one scenario
 * (issue 13):
 * - every pod Karpenter places, nodefleet places (kind `unplaced`, checked for both packings);
 *   a pod nodefleet places that Karpenter leaves pending is kind `extra-placed`;
 * - with `packing: karpenter` the decisions are the same: number of claims (`claims`), pods per
 *   claim with the price of its cheapest launchable type (`claim-shapes`), and pods placed per
 *   existing node (`existing`);
 * - with the default packing, nodefleet's cost (sum over claims of the cheapest launchable
 *   offering, USD/h) is not above Karpenter's when both place the same pods (`cost`);
 * - and, without Karpenter, that kube-scheduler would bind each pod where either packing put it
 *   (`invalid`, validity.ts; added by main.ts `check`, which has the scenario).
 */
import type { Pod } from '../../shared/api/kube.ts';
import type { SchedulingResult } from '../../shared/scheduling/index.ts';
import type { OracleOutput } from './oracle.ts';

export type DivergenceKind = 'unplaced' | 'unplaced-karpenter-packing' | 'extra-placed' | 'claims' | 'claim-shapes' | 'existing' | 'cost' | 'invalid';

export interface Divergence {
  kind: DivergenceKind;
  detail: string;
}

export interface Comparison {
  divergences: Divergence[];
  /** nodefleet default-packing cost ÷ Karpenter's, when both place the same pods and Karpenter's is > 0. */
  costRatio?: number;
  karpenterCost: number;
  nodefleetCost: number;
  /**
   * USD/h of the default packing's claims that hold at least one pod Karpenter places: claims
   * holding only pods Karpenter leaves pending (an `extra-placed` matter) are left out.
   */
  nodefleetCostForKarpenterPods: number;
  /** Pods placed (new claims and existing nodes) by Karpenter, nodefleet's default packing and its `packing: karpenter`. */
  placed: { karpenter: number; default: number; karpenterPacking: number };
}

/** A pod's `namespace/name`, as divergence details and the oracle name it. */
export const podKey = (p: Pod) => `${p.metadata.namespace ?? 'default'}/${p.metadata.name}`;
const EPS = 1e-9;

function placedBy(r: SchedulingResult): Set<string> {
  const s = new Set<string>();
  for (const c of r.newNodeClaims) for (const p of c.pods) s.add(podKey(p));
  for (const p of r.placements) s.add(podKey(p.pod));
  return s;
}

function placedByKarpenter(k: OracleOutput): Set<string> {
  const s = new Set<string>();
  for (const c of k.nodeClaims) for (const p of c.pods ?? []) s.add(p);
  for (const p of k.placements) s.add(p.pod);
  return s;
}

const sameSet = (a: Set<string>, b: Set<string>) => a.size === b.size && [...a].every((x) => b.has(x));
const list = (xs: Iterable<string>) => [...xs].sort().join(', ');

export function compare(karpenter: OracleOutput, karpenterPacking: SchedulingResult, defaultPacking: SchedulingResult): Comparison {
  const divergences: Divergence[] = [];
  const kPlaced = placedByKarpenter(karpenter);
  const nfDefault = placedBy(defaultPacking);
  const nfKarp = placedBy(karpenterPacking);
  const missing = [...kPlaced].filter((p) => !nfDefault.has(p));
  if (missing.length) divergences.push({ kind: 'unplaced', detail: `Karpenter places, nodefleet does not: ${list(missing)}` });
  const missingK = [...kPlaced].filter((p) => !nfKarp.has(p));
  if (missingK.length)
    divergences.push({ kind: 'unplaced-karpenter-packing', detail: `Karpenter places, nodefleet (packing: karpenter) does not: ${list(missingK)}` });
  const extra = [...nfKarp].filter((p) => !kPlaced.has(p));
  if (extra.length) {
    const why = karpenter.unschedulable.filter((u) => extra.includes(u.pod)).map((u) => `${u.pod}: ${Object.values(u.reasons).join('; ')}`);
    divergences.push({ kind: 'extra-placed', detail: `nodefleet places, Karpenter does not: ${why.join(' | ') || list(extra)}` });
  }

  if (karpenterPacking.newNodeClaims.length !== karpenter.nodeClaims.length) {
    divergences.push({ kind: 'claims', detail: `NodeClaims: Karpenter ${karpenter.nodeClaims.length}, nodefleet ${karpenterPacking.newNodeClaims.length}` });
  } else {
    const kShapes = karpenter.nodeClaims
      .map((c) => ({ pods: (c.pods ?? []).length, price: c.price, type: c.instanceTypes?.[0] ?? '-' }))
      .sort((a, b) => a.pods - b.pods || a.price - b.price);
    const nShapes = karpenterPacking.newNodeClaims
      .map((c) => ({ pods: c.pods.length, price: c.priceUsdPerHour, type: c.launchInstanceTypes[0]?.name ?? '-' }))
      .sort((a, b) => a.pods - b.pods || a.price - b.price);
    const differ = kShapes.some((k, i) => k.pods !== nShapes[i].pods || Math.abs(k.price - nShapes[i].price) > EPS);
    if (differ) {
      const show = (xs: typeof kShapes) => xs.map((x) => `${x.pods} pods on ${x.type} $${x.price.toFixed(5)}`).join(', ');
      divergences.push({ kind: 'claim-shapes', detail: `claims: Karpenter [${show(kShapes)}], nodefleet [${show(nShapes)}]` });
    }
  }
  const perNode = (xs: { node: string }[]) => {
    const m = new Map<string, number>();
    for (const x of xs) m.set(x.node, (m.get(x.node) ?? 0) + 1);
    return m;
  };
  const kNodes = perNode(karpenter.placements);
  const nNodes = perNode(karpenterPacking.placements);
  const nodes = new Set([...kNodes.keys(), ...nNodes.keys()]);
  const diffNodes = [...nodes].filter((n) => (kNodes.get(n) ?? 0) !== (nNodes.get(n) ?? 0));
  if (diffNodes.length) {
    divergences.push({
      kind: 'existing',
      detail: `pods placed on existing nodes: ${diffNodes.map((n) => `${n} Karpenter ${kNodes.get(n) ?? 0}, nodefleet ${nNodes.get(n) ?? 0}`).join('; ')}`,
    });
  }

  const karpenterCost = karpenter.nodeClaims.reduce((s, c) => s + c.price, 0);
  const nodefleetCost = defaultPacking.newNodeClaims.reduce((s, c) => s + c.priceUsdPerHour, 0);
  const nodefleetCostForKarpenterPods = defaultPacking.newNodeClaims
    .filter((c) => c.pods.some((p) => kPlaced.has(podKey(p))))
    .reduce((s, c) => s + c.priceUsdPerHour, 0);
  let costRatio: number | undefined;
  if (sameSet(kPlaced, nfDefault) && karpenterCost > 0) {
    costRatio = nodefleetCost / karpenterCost;
    if (nodefleetCost > karpenterCost + EPS) {
      divergences.push({
        kind: 'cost',
        detail: `default packing costs $${nodefleetCost.toFixed(5)}/h (${defaultPacking.newNodeClaims.length} claims), Karpenter $${karpenterCost.toFixed(5)}/h (${karpenter.nodeClaims.length} claims)`,
      });
    }
  }
  return {
    divergences,
    costRatio,
    karpenterCost,
    nodefleetCost,
    nodefleetCostForKarpenterPods,
    placed: { karpenter: kPlaced.size, default: nfDefault.size, karpenterPacking: nfKarp.size },
  };
}
