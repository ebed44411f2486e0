/**
 * Capacity reservations (on-demand capacity reservations, ODCRs) as Karpenter's AWS provider reads
 * them: an EC2NodeClass's `capacityReservationSelectorTerms` become DescribeCapacityReservations
 * queries (KA pkg/providers/capacityreservation/types.go `QueriesFromSelectorTerms`,
 * `DescribeCapacityReservationsInput`), each reservation found becomes one entry of
 * `status.capacityReservations` (KA pkg/apis/v1/ec2nodeclass_status.go `CapacityReservationFromEC2`)
 * and one `reserved` offering of its instance type in its zone (KA
 * pkg/providers/instancetype/offering/reserved_capacity_resolver.go), priced at the on-demand price
 * divided by {@link ReservedPriceDivisor} so the scheduler prefers it.
 *
 * Capacity blocks (`reservationType: capacity-block`) and interruptible reservations are found but
 * not launched into: nodefleet sends neither market type, so such a reservation gets no offering
 * ({@link reservationRefusal}, logged once per pass by the provisioner).
 *
 * Pure: no SDK, no clock (the caller passes `nowMs`).
 */
import type { CapacityReservationSelectorTerm } from './nodepool.ts';

/**
 * A reserved offering costs the type's on-demand price divided by this (KA
 * reserved_capacity_resolver.go `odPrice / 10_000_000`): the capacity is paid for whether used or
 * not, so launching into it costs next to nothing, yet reservations of dearer types stay dearer.
 */
export const ReservedPriceDivisor = 10_000_000;

/**
 * A capacity block is `expiring` this long before its end: EC2 reclaims its instances from then
 * on, so no new one is launched into it (KA ec2nodeclass_status.go `capacityReservationExpirationPeriod`).
 */
export const CapacityBlockExpirationMs = 40 * 60_000;

/** Why a capacity-block reservation gets no offering (nodefleet launches ODCRs only). */
export const CapacityBlockRefusal =
  'capacity blocks are not supported by nodefleet: the capacity-block market type is not launched; select on-demand capacity reservations (reservationType default)';

/** Why an interruptible reservation gets no offering. */
export const InterruptibleReservationRefusal =
  'interruptible capacity reservations are not supported by nodefleet: the interruptible-capacity-reservation market type is not launched; select a non-interruptible reservation';

/** Why nodefleet does not launch into `r` (a capacity block, an interruptible reservation), or undefined when it does. */
export function reservationRefusal(r: Pick<CapacityReservation, 'reservationType' | 'interruptible'>): string | undefined {
  if (r.reservationType === 'capacity-block') return CapacityBlockRefusal;
  if (r.interruptible) return InterruptibleReservationRefusal;
  return undefined;
}

/** One DescribeCapacityReservations request (the SDK's input shape, fields nodefleet sends). */
export interface CapacityReservationQuery {
  CapacityReservationIds?: string[];
  Filters: { Name: string; Values: string[] }[];
  MaxResults?: number;
}

/**
 * The queries of a class's terms: a term with an id is one query by id; a term with tags or an
 * instance match criteria is one query by filters (owner id, each tag, `tag-key` for a `*` value,
 * instance-match-criteria). Every query asks only for `state=active` reservations. A term with both
 * an id and tags is refused by the schema (crd-rules.ts), as by Karpenter's CEL rule.
 */
export function capacityReservationQueries(terms: readonly CapacityReservationSelectorTerm[]): CapacityReservationQuery[] {
  const active = { Name: 'state', Values: ['active'] };
  const out: CapacityReservationQuery[] = [];
  for (const t of terms) {
    if (t.id) out.push({ CapacityReservationIds: [t.id], Filters: [active] });
    const tags = Object.entries(t.tags ?? {});
    if (tags.length === 0 && !t.instanceMatchCriteria) continue;
    const filters = [active];
    if (t.ownerID) filters.push({ Name: 'owner-id', Values: [t.ownerID] });
    for (const [k, v] of tags) filters.push(v === '*' ? { Name: 'tag-key', Values: [k] } : { Name: `tag:${k}`, Values: [v] });
    if (t.instanceMatchCriteria) filters.push({ Name: 'instance-match-criteria', Values: [t.instanceMatchCriteria] });
    out.push({ Filters: filters, MaxResults: 1000 });
  }
  return out;
}

/** The fields of an EC2 `CapacityReservation` nodefleet reads (SDK shape, dates as Date or RFC 3339). */
export interface Ec2CapacityReservation {
  CapacityReservationId?: string;
  OwnerId?: string;
  InstanceType?: string;
  AvailabilityZone?: string;
  AvailableInstanceCount?: number;
  TotalInstanceCount?: number;
  InstanceMatchCriteria?: string;
  ReservationType?: string;
  Interruptible?: boolean;
  EndDate?: Date | string;
  State?: string;
}

/** `status.capacityReservations[]` of an EC2NodeClass (KA `CapacityReservation`), plus the count EC2 reported. */
export interface CapacityReservation {
  id: string;
  instanceType: string;
  availabilityZone: string;
  ownerID: string;
  instanceMatchCriteria: 'open' | 'targeted';
  reservationType: 'default' | 'capacity-block';
  interruptible: boolean;
  /** `expiring`: a capacity block within {@link CapacityBlockExpirationMs} of its end. */
  state: 'active' | 'expiring';
  /** RFC 3339, when the reservation ends. */
  endTime?: string;
  /** Instances that can still be launched into it (EC2 `AvailableInstanceCount`; not in Karpenter's status, kept in its cache). */
  availableInstanceCount: number;
}

/**
 * An EC2 reservation as the class's status lists it, or a one-line reason it is skipped (an
 * instance match criteria or reservation type Karpenter does not know, a missing field).
 */
export function capacityReservationFromEc2(cr: Ec2CapacityReservation, nowMs: number): CapacityReservation | string {
  const id = cr.CapacityReservationId ?? '';
  if (!id || !cr.InstanceType || !cr.AvailabilityZone || !cr.OwnerId)
    return `capacity reservation ${id || '(no id)'}: EC2 returned it without an id, type, zone or owner`;
  const criteria = cr.InstanceMatchCriteria;
  if (criteria !== 'open' && criteria !== 'targeted') return `capacity reservation ${id}: unsupported instance match criteria ${JSON.stringify(criteria)}`;
  const type = cr.ReservationType ?? 'default';
  if (type !== 'default' && type !== 'capacity-block') return `capacity reservation ${id}: unsupported reservation type ${JSON.stringify(type)}`;
  const endMs = cr.EndDate === undefined ? undefined : new Date(cr.EndDate).getTime();
  const expiring = type === 'capacity-block' && endMs !== undefined && nowMs >= endMs - CapacityBlockExpirationMs;
  return {
    id,
    instanceType: cr.InstanceType,
    availabilityZone: cr.AvailabilityZone,
    ownerID: cr.OwnerId,
    instanceMatchCriteria: criteria,
    reservationType: type,
    interruptible: cr.Interruptible ?? false,
    state: expiring ? 'expiring' : 'active',
    ...(endMs !== undefined ? { endTime: new Date(endMs).toISOString() } : {}),
    availableInstanceCount: Math.max(0, cr.AvailableInstanceCount ?? 0),
  };
}

/**
 * The reservations of several queries' answers: each once (by id), those whose end has passed
 * dropped (KA provider.go `filterReservations`), sorted by id (the order of KA's status).
 * `problems` lists the skipped ones (see {@link capacityReservationFromEc2}).
 */
export function resolveCapacityReservations(
  found: readonly Ec2CapacityReservation[],
  nowMs: number,
): { reservations: CapacityReservation[]; problems: string[] } {
  const byId = new Map<string, CapacityReservation>();
  const problems: string[] = [];
  for (const cr of found) {
    if (cr.EndDate !== undefined && new Date(cr.EndDate).getTime() <= nowMs) continue;
    const r = capacityReservationFromEc2(cr, nowMs);
    if (typeof r === 'string') problems.push(r);
    else if (!byId.has(r.id)) byId.set(r.id, r);
  }
  return { reservations: [...byId.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)), problems };
}
