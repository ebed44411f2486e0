/**
 * Which instance types (and which of their offerings) a set of node requirements admits, as
 * Karpenter matches a NodePool against its cloud provider's instance types
 * (KC pkg/controllers/provisioning/scheduling `filterInstanceTypesByRequirements`,
 * `InstanceType.Requirements.Intersects`, `Offerings.Compatible`).
 *
 * - Labels the type defines must have a value the requirement allows.
 * - Well-known labels the type does not define (e.g. instance-gpu-name on a CPU type) are
 *   "absent": only NotIn / DoesNotExist admit them.
 * - Custom keys (team=a) say nothing about the type: the node gets them from the NodePool.
 * - Zone, zone id, capacity type and reservation id are per offering: offerings outside the requirement are dropped,
 *   and a type with no offering left (or none available, when asked) is not admitted.
 */
import { LabelCapacityReservationID, LabelCapacityType, LabelTopologyZone, LabelTopologyZoneID, WellKnownLabels as WellKnown } from '../api/labels.ts';
import { Requirements } from '../api/requirements.ts';
import type { NodePool } from '../api/nodepool.ts';
import { cheapestOffering, type InstanceType } from './types.ts';

/** Labels whose value depends on the offering, not the type. */
const PerOffering = new Set<string>([LabelTopologyZone, LabelCapacityType, LabelTopologyZoneID, LabelCapacityReservationID]);

/** Requirements a NodePool puts on its nodes: spec.template.spec.requirements plus template labels (In). */
export function nodePoolRequirements(np: Pick<NodePool, 'spec'>): Requirements {
  return Requirements.fromSpecs(np.spec.template.spec.requirements).intersect(Requirements.fromLabels(np.spec.template.metadata?.labels ?? {}));
}

/**
 * Why `it` is not admitted by `reqs` (type labels only, not offerings), or undefined when it is.
 */
export function instanceTypeIncompatibility(it: InstanceType, reqs: Requirements): string | undefined {
  for (const r of reqs.all()) {
    if (PerOffering.has(r.key)) continue;
    const value = it.labels[r.key];
    if (value !== undefined) {
      if (!r.has(value)) return `${r.key}=${value} does not satisfy ${r.toString()}`;
    } else if (WellKnown.has(r.key) && !r.matches(undefined)) {
      return `${it.name} has no ${r.key} label, required by ${r.toString()}`;
    }
  }
  return undefined;
}

/**
 * The types `reqs` admits, each with only the offerings whose zone and capacity type satisfy
 * `reqs` (and, with `availableOnly`, that are available). Types left with no offering are
 * dropped. Order is kept; use {@link sortByPrice} for cheapest first.
 */
export function filterInstanceTypes(types: readonly InstanceType[], reqs: Requirements, opts: { availableOnly?: boolean } = {}): InstanceType[] {
  const zone = reqs.get(LabelTopologyZone);
  const capacityType = reqs.get(LabelCapacityType);
  const zoneId = reqs.get(LabelTopologyZoneID);
  const reservation = reqs.get(LabelCapacityReservationID);
  const out: InstanceType[] = [];
  for (const it of types) {
    if (instanceTypeIncompatibility(it, reqs)) continue;
    const offerings = it.offerings.filter(
      (o) =>
        (!zone || zone.has(o.zone)) &&
        (!capacityType || capacityType.has(o.capacityType)) &&
        (!zoneId || zoneId.matches(o.zoneId)) &&
        (!reservation || reservation.matches(o.reservationId)) &&
        (!opts.availableOnly || o.available),
    );
    if (offerings.length > 0) out.push({ ...it, offerings });
  }
  return out;
}

/** Cheapest available offering price of a type, Infinity when none is available (USD/hour). */
export function cheapestPrice(it: InstanceType): number {
  return cheapestOffering(it.offerings)?.priceUsdPerHour ?? Infinity;
}

/** A copy sorted by cheapest available offering, then by name (stable, deterministic). */
export function sortByPrice(types: readonly InstanceType[]): InstanceType[] {
  return [...types].sort((a, b) => cheapestPrice(a) - cheapestPrice(b) || a.name.localeCompare(b.name));
}
