/**
 * Turning a packed NodeClaim into what is launched: its instance types ordered by the cheapest
 * compatible available offering and cut to 600 (KC nodeclaimtemplate.go `MaxInstanceTypes`),
 * then the launch choice of Karpenter's AWS provider (KA pkg/providers/instance/instance.go,
 * filter/filter.go): exotic types (GPU, accelerator, metal) dropped when others remain,
 * capacity type reserved > spot > on-demand, spot offerings dearer than the cheapest
 * on-demand one dropped, and the 60 cheapest types sent, with minValues re-checked after the cut.
 *
 * minValues, as Karpenter's AWS provider applies them (KA instance.go `filterInstanceTypes`,
 * filter.go): a claim with minValues skips the exotic filter, and minValues are checked on the 60
 * cheapest compatible types over every capacity type, before the capacity type is chosen; the
 * launch then sends those of the chosen capacity type, which may offer fewer values (a zone with
 * three 4-vCPU types, one of them sold as spot there, launches spot with one type). Unlike KA, the
 * spot filter stays on under minValues: it drops spot offerings only, so the types still count
 * for minValues through their on-demand offerings, and a claim never launches spot dearer than
 * on-demand.
 */
import * as L from '../api/labels.ts';
import type { Requirement, Requirements } from '../api/requirements.ts';
import type { Offering } from '../catalog/types.ts';
import { offeringMatches, type TemplateType } from './template.ts';
import { MaxLaunchInstanceTypes } from '../api/ports.ts';

/** Karpenter's cap on the instance types kept on a NodeClaim (KC nodeclaimtemplate.go, 600 since #2430). */
export const MaxInstanceTypes = 600;

const CapacityTypeOrder: L.CapacityType[] = ['reserved', 'spot', 'on-demand'];

/** The decided launch of one claim. */
export interface LaunchPlan {
  /** Cheapest compatible offering first, ≤ maxInstanceTypes. */
  ordered: TemplateType[];
  /** The launch set (≤ maxLaunchInstanceTypes), cheapest first for the chosen capacity type. */
  launch: TemplateType[];
  /** Allowed capacity types after the filters, preference order; the first is the one launched. */
  capacityTypes: L.CapacityType[];
  zones: string[];
  /** Cheapest offering of the chosen capacity type among the launch set, USD/hour. */
  priceUsdPerHour: number;
  /** Why the launch set is empty or minValues could not be met (undefined when fine). */
  problem?: string;
}

function compatibleOfferings(t: TemplateType, zoneReq: Requirement | undefined, ctReq: Requirement | undefined): Offering[] {
  return zoneReq || ctReq ? t.offerings.filter((o) => offeringMatches(o, zoneReq, ctReq)) : t.offerings;
}

function cheapest(offerings: readonly Offering[], capacityType?: string): number {
  let best = Infinity;
  for (const o of offerings) if ((!capacityType || o.capacityType === capacityType) && o.priceUsdPerHour < best) best = o.priceUsdPerHour;
  return best;
}

/** Distinct values of `key` among types (instance-type name for node.kubernetes.io/instance-type). */
export function distinctValues(types: readonly TemplateType[], key: string): number {
  const values = new Set<string>();
  for (const t of types) {
    const v = key === L.LabelInstanceType ? t.type.name : t.type.labels[key];
    if (v !== undefined) values.add(v);
  }
  return values.size;
}

/**
 * The first requirement whose minValues the types do not meet, or undefined.
 * @param relaxedTo minValues relaxed (BestEffort) to the values these types offer, when fewer.
 */
export function unmetMinValues(types: readonly TemplateType[], reqs: Requirements, relaxedTo?: readonly TemplateType[]): string | undefined {
  for (const r of reqs.all()) {
    if (r.minValues === undefined) continue;
    const need = relaxedTo ? Math.min(r.minValues, distinctValues(relaxedTo, r.key)) : r.minValues;
    const n = distinctValues(types, r.key);
    if (n < need) return `minValues requirement is not met for ${r.key} (needs ${need} values, ${n} available)`;
  }
  return undefined;
}

/**
 * Cuts `ordered` (cheapest first) to `max` types while keeping every minValues requirement
 * satisfied when the full list does: types adding a missing value are kept before cheaper
 * types that add nothing new.
 */
export function truncateKeepingMinValues(ordered: readonly TemplateType[], reqs: Requirements, max: number): TemplateType[] {
  if (ordered.length <= max) return [...ordered];
  const minReqs = reqs.all().filter((r) => r.minValues !== undefined);
  const head = ordered.slice(0, max);
  if (minReqs.length === 0 || !unmetMinValues(head, reqs)) return head;
  const picked: TemplateType[] = [];
  const seen = new Map(minReqs.map((r) => [r.key, new Set<string>()]));
  const need = () => minReqs.reduce((s, r) => s + Math.max(0, (r.minValues ?? 0) - seen.get(r.key)!.size), 0);
  const valueOf = (t: TemplateType, key: string) => (key === L.LabelInstanceType ? t.type.name : t.type.labels[key]);
  const rest: TemplateType[] = [];
  for (const t of ordered) {
    const adds = minReqs.some((r) => {
      const v = valueOf(t, r.key);
      return v !== undefined && !seen.get(r.key)!.has(v) && seen.get(r.key)!.size < (r.minValues ?? 0);
    });
    if (adds && picked.length < max) {
      picked.push(t);
      for (const r of minReqs) {
        const v = valueOf(t, r.key);
        if (v !== undefined) seen.get(r.key)!.add(v);
      }
    } else rest.push(t);
    if (need() === 0) break;
  }
  const inPicked = new Set(picked);
  for (const t of ordered) {
    if (picked.length >= max) break;
    if (!inPicked.has(t)) picked.push(t);
  }
  const order = new Map(ordered.map((t, i) => [t, i]));
  return picked.sort((a, b) => order.get(a)! - order.get(b)!);
}

/**
 * Orders, cuts and filters a claim's options into a launch.
 * @param options types that can hold everything on the claim.
 * @param reqs the claim's requirements (zone, capacity type, minValues).
 */
export function planLaunch(
  options: readonly TemplateType[],
  reqs: Requirements,
  maxInstanceTypes = MaxInstanceTypes,
  maxLaunch = MaxLaunchInstanceTypes,
  strictMinValues = true,
): LaunchPlan {
  const zoneReq = reqs.get(L.LabelTopologyZone);
  const ctReq = reqs.get(L.LabelCapacityType);
  const priced: { t: TemplateType; offerings: Offering[]; price: number }[] = [];
  for (const t of options) {
    // Without zone / capacity-type requirements every offering counts and the cheapest is known.
    const offerings = compatibleOfferings(t, zoneReq, ctReq);
    if (offerings.length > 0) priced.push({ t, offerings, price: zoneReq || ctReq ? cheapest(offerings) : t.minPriceUsdPerHour });
  }
  // Claims keep the template's cheapest-first order, so this sort mostly confirms it.
  priced.sort((a, b) => a.price - b.price || (a.t.type.name < b.t.type.name ? -1 : a.t.type.name > b.t.type.name ? 1 : 0));
  const offeringsOf = new Map(priced.map((x) => [x.t, x.offerings]));
  const ordered = truncateKeepingMinValues(
    priced.map((x) => x.t),
    reqs,
    maxInstanceTypes,
  );
  const hasMinValues = reqs.all().some((r) => r.minValues !== undefined);
  // Exotic filter: GPU / accelerator / metal only when nothing else remains (KA filter.go), and
  // not at all under minValues.
  const plain = hasMinValues ? ordered : ordered.filter((t) => !t.exotic);
  let candidates = plain.length > 0 ? plain : ordered;

  const available = new Set<L.CapacityType>();
  for (const t of candidates) for (const o of offeringsOf.get(t)!) available.add(o.capacityType);
  let chosen = CapacityTypeOrder.find((ct) => available.has(ct));
  let spotCeiling = Infinity;
  if (chosen === 'spot' && available.has('on-demand')) {
    // Spot filter: spot offerings dearer than the cheapest on-demand offering are not worth it.
    spotCeiling = Math.min(...candidates.map((t) => cheapest(offeringsOf.get(t)!, 'on-demand')));
    const spotWorth = candidates.some((t) => offeringsOf.get(t)!.some((o) => o.capacityType === 'spot' && o.priceUsdPerHour <= spotCeiling));
    if (!spotWorth) chosen = 'on-demand';
  }
  const capacityTypes = CapacityTypeOrder.filter((ct) => available.has(ct) && (ct !== 'spot' || chosen === 'spot' || spotCeiling === Infinity));
  if (chosen) {
    capacityTypes.splice(capacityTypes.indexOf(chosen), 1);
    capacityTypes.unshift(chosen);
  }
  const priceFor = (t: TemplateType) =>
    cheapest(offeringsOf.get(t)!.filter((o) => o.capacityType === chosen && (chosen !== 'spot' || o.priceUsdPerHour <= spotCeiling)));
  candidates = candidates
    .map((t) => ({ t, p: priceFor(t) }))
    .filter((x) => x.p < Infinity)
    .sort((a, b) => a.p - b.p || (a.t.type.name < b.t.type.name ? -1 : 1))
    .map((x) => x.t);
  const launch = truncateKeepingMinValues(candidates, reqs, maxLaunch);
  const zones = new Set<string>();
  for (const t of launch) for (const o of offeringsOf.get(t)!) if (o.capacityType === chosen) zones.add(o.zone);
  const plan: LaunchPlan = {
    ordered,
    launch,
    capacityTypes,
    zones: [...zones].sort(),
    priceUsdPerHour: launch.length > 0 ? priceFor(launch[0]) : Infinity,
  };
  if (launch.length === 0) plan.problem = 'no instance type has an available offering';
  else if (strictMinValues) plan.problem = unmetMinValues(truncateKeepingMinValues(ordered, reqs, maxLaunch), reqs);
  return plan;
}
