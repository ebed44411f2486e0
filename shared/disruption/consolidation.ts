/**
 * What consolidating a set of candidates would do: delete them (their pods fit elsewhere) or
 * replace them with ONE strictly cheaper node, or nothing.
 *
 * Rules (KC pkg/controllers/disruption/consolidation.go `computeConsolidation`,
 * `computeSpotToSpotConsolidation`; multinodeconsolidation.go `filterOutSameType`):
 * - every pod must schedule; more than one new node is never worth it;
 * - the replacement's instance types are cut to those whose dearest compatible offering (the
 *   worst a launch could pick) is cheaper than the candidates' current price; none left → no
 *   consolidation;
 * - on-demand → [spot, on-demand] replacements are pinned to spot (the price cut assumed spot);
 * - the cheaper types left must still meet the NodePool's minValues, or there is no
 *   consolidation (`RemoveInstanceTypeOptionsByPriceAndMinValues`; a BestEffort policy relaxes
 *   minValues for provisioning only, never to consolidate);
 * - spot → spot: only if enabled, and for a single node only with ≥ 15 cheaper types, of which
 *   the 15 cheapest are launched — or as many of the cheapest as minValues needs, if more;
 * - several nodes → one node of a type among them: the replacement must be cheaper than that
 *   type, or deleting the others onto the kept one would do with less disruption.
 */
import { Requirement, Requirements } from '../api/requirements.ts';
import { formatResources } from '../api/quantity.ts';
import { CapacityTypeOnDemand, CapacityTypeSpot, LabelCapacityType, LabelInstanceType, type CapacityType } from '../api/labels.ts';
import type { InstanceType } from '../catalog/types.ts';
import type { NewNodeClaim } from '../scheduling/index.ts';
import { MinInstanceTypesForSpotToSpotConsolidation } from './constants.ts';
import { MaxLaunchInstanceTypes } from '../api/ports.ts';
import { podKey } from './pods.ts';
import type { Simulator } from './simulate.ts';
import type { Candidate, CommandCandidate, ReplacementClaim } from './types.ts';

/** A consolidation decision for some candidates, or why there is none. */
export type ConsolidationOutcome =
  | { decision: 'delete'; replacements: []; savingsUsdPerHour?: number }
  | { decision: 'replace'; replacements: [ReplacementClaim]; savingsUsdPerHour: number }
  | { decision: 'none'; reason: string };

/** Cheapest available offering of `it` that the claim may launch (its zones and capacity types). */
export function cheapestCompatiblePrice(it: InstanceType, zones: readonly string[], capacityTypes: readonly CapacityType[]): number | undefined {
  let best: number | undefined;
  for (const o of it.offerings) {
    if (!o.available) continue;
    if (zones.length > 0 && !zones.includes(o.zone)) continue;
    if (!capacityTypes.includes(o.capacityType)) continue;
    if (best === undefined || o.priceUsdPerHour < best) best = o.priceUsdPerHour;
  }
  return best;
}

/**
 * The dearest available offering of `it` a launch with these zones and capacity types could land
 * on, USD/hour (KC `WorstLaunchPrice`): a replacement must be cheaper than the candidates even in
 * its worst case, since the launch picks the offering, not us. Undefined when none is compatible.
 */
export function worstCompatiblePrice(it: InstanceType, zones: readonly string[], capacityTypes: readonly CapacityType[]): number | undefined {
  let worst: number | undefined;
  for (const o of it.offerings) {
    if (!o.available) continue;
    if (zones.length > 0 && !zones.includes(o.zone)) continue;
    if (!capacityTypes.includes(o.capacityType)) continue;
    if (worst === undefined || o.priceUsdPerHour > worst) worst = o.priceUsdPerHour;
  }
  return worst;
}

/** Sum of the candidates' prices, undefined when any is unknown. */
export function candidatesPrice(candidates: readonly Candidate[]): number | undefined {
  let sum = 0;
  for (const c of candidates) {
    if (c.priceUsdPerHour === undefined) return undefined;
    sum += c.priceUsdPerHour;
  }
  return sum;
}

/** A command candidate (JSON-safe) from a candidate. */
export function toCommandCandidate(c: Candidate): CommandCandidate {
  return {
    nodeName: c.nodeName,
    nodeClaim: c.nodeClaim,
    nodePool: c.nodePool,
    instanceType: c.instanceType,
    zone: c.zone,
    capacityType: c.capacityType,
    ...(c.priceUsdPerHour !== undefined ? { priceUsdPerHour: c.priceUsdPerHour } : {}),
    ...(c.instanceId ? { instanceId: c.instanceId } : {}),
    ...(c.providerID ? { providerID: c.providerID } : {}),
    ...(c.drifted ? { driftReason: c.drifted } : {}),
    pods: c.reschedulablePods.map(podKey),
  };
}

/**
 * A replacement claim (JSON-safe) from a simulated claim, launching `types` (cheapest first) with
 * `capacityTypes`.
 */
export function toReplacement(nc: NewNodeClaim, types: readonly InstanceType[], capacityTypes: readonly CapacityType[]): ReplacementClaim {
  let reqs = new Requirements(nc.requirements.all().filter((r) => r.key !== LabelInstanceType && r.key !== LabelCapacityType));
  reqs = reqs.add(Requirement.from({ key: LabelInstanceType, operator: 'In', values: types.map((t) => t.name) }));
  reqs = reqs.add(Requirement.from({ key: LabelCapacityType, operator: 'In', values: [...capacityTypes] }));
  const prices = types.map((t) => cheapestCompatiblePrice(t, nc.zones, capacityTypes)).filter((p): p is number => p !== undefined);
  return {
    nodePool: nc.nodePool,
    requirements: reqs.toSpecs(),
    instanceTypes: types.map((t) => t.name),
    labels: { ...nc.labels },
    taints: [...nc.taints],
    startupTaints: [...nc.startupTaints],
    requests: formatResources(nc.requests),
    capacityTypes: [...capacityTypes],
    zones: [...nc.zones],
    priceUsdPerHour: prices.length > 0 ? Math.min(...prices) : nc.priceUsdPerHour,
    pods: nc.pods.map(podKey),
  };
}

/**
 * How many of `ordered` (cheapest first) it takes to meet every minValues requirement of `reqs`:
 * 0 without minValues, undefined when the whole list does not meet them (KC `SatisfiesMinValues`).
 */
export function typesForMinValues(ordered: readonly InstanceType[], reqs: Requirements): number | undefined {
  const minReqs = reqs.all().filter((r) => r.minValues !== undefined);
  if (minReqs.length === 0) return 0;
  const seen = new Map(minReqs.map((r) => [r.key, new Set<string>()]));
  for (let i = 0; i < ordered.length; i++) {
    for (const r of minReqs) {
      const v = r.key === LabelInstanceType ? ordered[i].name : ordered[i].labels[r.key];
      if (v !== undefined) seen.get(r.key)!.add(v);
    }
    if (minReqs.every((r) => seen.get(r.key)!.size >= (r.minValues ?? 0))) return i + 1;
  }
  return undefined;
}

/** Instance types ordered by their cheapest compatible price, with that price; types with none dropped. */
function byPrice(types: readonly InstanceType[], zones: readonly string[], capacityTypes: readonly CapacityType[]): { it: InstanceType; price: number }[] {
  return types
    .map((it) => ({ it, price: cheapestCompatiblePrice(it, zones, capacityTypes) }))
    .filter((x): x is { it: InstanceType; price: number } => x.price !== undefined)
    .sort((a, b) => a.price - b.price || a.it.name.localeCompare(b.it.name));
}

/**
 * Simulates consolidating `candidates` and decides delete / replace / none.
 * @param multi true for multi-node consolidation (same-type filter, no 15-type spot rule)
 */
export function computeConsolidation(sim: Simulator, candidates: readonly Candidate[], opts: { multi: boolean; spotToSpot: boolean }): ConsolidationOutcome {
  const s = sim.simulate(candidates, { consolidation: true });
  if (s.unschedulable.length > 0) {
    const u = s.unschedulable[0];
    return { decision: 'none', reason: `not all pods would schedule, ${u.pod}: ${u.reason}` };
  }
  const price = candidatesPrice(candidates);
  if (s.newNodeClaims.length === 0) return { decision: 'delete', replacements: [], ...(price !== undefined ? { savingsUsdPerHour: price } : {}) };
  if (s.newNodeClaims.length > 1) return { decision: 'none', reason: `removing it would need ${s.newNodeClaims.length} new nodes` };
  if (price === undefined) return { decision: 'none', reason: 'the current price of a candidate is unknown' };

  const nc = s.newNodeClaims[0];
  const allowed = nc.capacityTypes.filter((ct) => ct !== 'reserved');
  const allSpot = candidates.every((c) => c.capacityType === CapacityTypeSpot);
  let capacityTypes: CapacityType[];
  if (nc.capacityTypes[0] === 'reserved' && nc.capacityTypes.length === 1) {
    // The simulation pinned the replacement to a reservation (shared/scheduling/reservations.ts), as
    // Karpenter's scheduler injects it: an on-demand node is replaced by reserved capacity of the
    // same type when a reservation opens (KC consolidation.go: "the requirements are injected on by the scheduler").
    capacityTypes = ['reserved'];
  } else if (allSpot && allowed.includes(CapacityTypeSpot)) {
    if (!opts.spotToSpot) return { decision: 'none', reason: 'spot-to-spot consolidation is disabled' };
    capacityTypes = [CapacityTypeSpot];
  } else if (allowed.includes(CapacityTypeSpot) && allowed.includes(CapacityTypeOnDemand)) {
    // Prices were cut assuming spot; pin it so a spot shortage fails the launch instead of
    // buying a pricier on-demand node (Karpenter does the same).
    capacityTypes = [CapacityTypeSpot];
  } else {
    capacityTypes = allowed.length > 0 ? allowed : [CapacityTypeOnDemand];
  }

  let options = byPrice(nc.instanceTypes, nc.zones, capacityTypes).filter((x) => (worstCompatiblePrice(x.it, nc.zones, capacityTypes) ?? Infinity) < price);
  if (options.length === 0) return { decision: 'none', reason: `can't replace with a cheaper node (current ${price.toFixed(4)} USD/h)` };
  const minValuesNeed = typesForMinValues(
    options.map((x) => x.it),
    nc.requirements,
  );
  if (minValuesNeed === undefined)
    return { decision: 'none', reason: `the instance types cheaper than the current ${price.toFixed(4)} USD/h do not meet the NodePool's minValues` };

  if (opts.multi) {
    // The price bar is a candidate's current price for its own type, whenever that type could
    // hold the pods — even when the replacement's capacity type (pinned to spot) would not launch
    // it (KC `filterOutSameInstanceType` looks at the options before that pin).
    const current = new Map<string, number>();
    for (const c of candidates)
      if (c.priceUsdPerHour !== undefined) current.set(c.instanceType, Math.min(current.get(c.instanceType) ?? Infinity, c.priceUsdPerHour));
    let maxPrice = Infinity;
    for (const it of nc.instanceTypes) {
      const p = current.get(it.name);
      if (p !== undefined) maxPrice = Math.min(maxPrice, p);
    }
    options = options.filter((x) => (worstCompatiblePrice(x.it, nc.zones, capacityTypes) ?? Infinity) < maxPrice);
    if (options.length === 0) return { decision: 'none', reason: "the replacement would be one of the candidates' own instance types; deleting is better" };
    if (
      typesForMinValues(
        options.map((x) => x.it),
        nc.requirements,
      ) === undefined
    )
      return { decision: 'none', reason: "without the candidates' own instance types the replacement no longer meets the NodePool's minValues" };
  } else if (allSpot && capacityTypes[0] === CapacityTypeSpot) {
    if (options.length < MinInstanceTypesForSpotToSpotConsolidation) {
      return {
        decision: 'none',
        reason: `spot-to-spot consolidation needs ${MinInstanceTypesForSpotToSpotConsolidation} cheaper instance types, found ${options.length}`,
      };
    }
    options = options.slice(0, Math.max(MinInstanceTypesForSpotToSpotConsolidation, minValuesNeed));
  }

  const replacement = toReplacement(
    nc,
    options.slice(0, MaxLaunchInstanceTypes).map((x) => x.it),
    capacityTypes,
  );
  return { decision: 'replace', replacements: [replacement], savingsUsdPerHour: price - replacement.priceUsdPerHour };
}
