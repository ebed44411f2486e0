/**
 * Capacity reservations: the DescribeCapacityReservations queries of selector terms, the status
 * entries of what EC2 returns, and the `reserved` offerings of the catalog. Ported from
 * aws/karpenter-provider-aws v1.15.0 pkg/providers/capacityreservation/suite_test.go
 * ("Capacity Reservation Provider") and the reserved offerings of
 * pkg/providers/instancetype/offering/reserved_capacity_resolver.go.
 */
import { describe, expect, it } from 'vitest';
import {
  CapacityBlockExpirationMs,
  ReservedPriceDivisor,
  capacityReservationFromEc2,
  capacityReservationQueries,
  reservationRefusal,
  resolveCapacityReservations,
  type CapacityReservation,
  type Ec2CapacityReservation,
} from '../../../shared/api/capacity-reservation.ts';
import { reservedOfferings, type Offering } from '../../../shared/catalog/index.ts';

const now = Date.parse('2026-03-10T12:00:00Z');
const ec2 = (o: Partial<Ec2CapacityReservation> = {}): Ec2CapacityReservation => ({
  CapacityReservationId: 'cr-0a1',
  OwnerId: '012345678901',
  InstanceType: 'm5.large',
  AvailabilityZone: 'test-zone-1a',
  AvailableInstanceCount: 5,
  InstanceMatchCriteria: 'targeted',
  ReservationType: 'default',
  State: 'active',
  ...o,
});

describe('capacityReservationQueries (KA QueriesFromSelectorTerms, DescribeCapacityReservationsInput)', () => {
  it('should resolve capacity reservations by ID: one query by id, active only', () => {
    expect(capacityReservationQueries([{ id: 'cr-0a1' }])).toEqual([{ CapacityReservationIds: ['cr-0a1'], Filters: [{ Name: 'state', Values: ['active'] }] }]);
  });

  it('should resolve capacity reservations by tags + owner (a "*" value is tag-key)', () => {
    expect(capacityReservationQueries([{ tags: { team: 'ml', any: '*' }, ownerID: '012345678901' }])).toEqual([
      {
        Filters: [
          { Name: 'state', Values: ['active'] },
          { Name: 'owner-id', Values: ['012345678901'] },
          { Name: 'tag:team', Values: ['ml'] },
          { Name: 'tag-key', Values: ['any'] },
        ],
        MaxResults: 1000,
      },
    ]);
  });

  it.each(['open', 'targeted'] as const)("should resolve capacity reservations by instance match criteria '%s'", (criteria) => {
    expect(capacityReservationQueries([{ instanceMatchCriteria: criteria }])).toEqual([
      {
        Filters: [
          { Name: 'state', Values: ['active'] },
          { Name: 'instance-match-criteria', Values: [criteria] },
        ],
        MaxResults: 1000,
      },
    ]);
  });

  it('one query per term', () => {
    expect(capacityReservationQueries([{ id: 'cr-0a1' }, { tags: { team: 'ml' } }, { id: 'cr-0b2' }])).toHaveLength(3);
  });
});

describe('capacityReservationFromEc2 / resolveCapacityReservations (KA CapacityReservationFromEC2, filterReservations)', () => {
  it('a default reservation as the status lists it, with its remaining count', () => {
    expect(capacityReservationFromEc2(ec2(), now)).toEqual({
      id: 'cr-0a1',
      instanceType: 'm5.large',
      availabilityZone: 'test-zone-1a',
      ownerID: '012345678901',
      instanceMatchCriteria: 'targeted',
      reservationType: 'default',
      interruptible: false,
      state: 'active',
      availableInstanceCount: 5,
    });
  });

  it('should handle capacity reservations with nil Interruptible field', () => {
    expect((capacityReservationFromEc2(ec2({ Interruptible: undefined }), now) as CapacityReservation).interruptible).toBe(false);
  });

  it('should mark capacity blocks as expiring 40 minutes prior to their endDate', () => {
    const end = now + CapacityBlockExpirationMs - 1;
    const r = capacityReservationFromEc2(ec2({ ReservationType: 'capacity-block', EndDate: new Date(end) }), now) as CapacityReservation;
    expect(r.state).toBe('expiring');
    expect(r.endTime).toBe(new Date(end).toISOString());
    const later = capacityReservationFromEc2(
      ec2({ ReservationType: 'capacity-block', EndDate: new Date(now + CapacityBlockExpirationMs + 1000) }),
      now,
    ) as CapacityReservation;
    expect(later.state).toBe('active');
  });

  it("shouldn't mark default capacity reservations as expiring 40 minutes prior to their endDate", () => {
    expect((capacityReservationFromEc2(ec2({ EndDate: new Date(now + 60_000) }), now) as CapacityReservation).state).toBe('active');
  });

  it('an unknown instance match criteria is skipped with a reason', () => {
    expect(capacityReservationFromEc2(ec2({ InstanceMatchCriteria: 'somethingnew' }), now)).toMatch(/unsupported instance match criteria/);
  });

  it('should exclude expired capacity reservations; each reservation once, sorted by id', () => {
    const { reservations, problems } = resolveCapacityReservations(
      [ec2({ CapacityReservationId: 'cr-0b2' }), ec2(), ec2(), ec2({ CapacityReservationId: 'cr-0c3', EndDate: new Date(now - 1) })],
      now,
    );
    expect(reservations.map((r) => r.id)).toEqual(['cr-0a1', 'cr-0b2']);
    expect(problems).toEqual([]);
  });

  it('should discover capacity block and interruptible reservations, which nodefleet refuses to launch into', () => {
    const block = capacityReservationFromEc2(ec2({ ReservationType: 'capacity-block' }), now) as CapacityReservation;
    const interruptible = capacityReservationFromEc2(ec2({ Interruptible: true }), now) as CapacityReservation;
    expect(reservationRefusal(block)).toMatch(/capacity blocks are not supported/);
    expect(reservationRefusal(interruptible)).toMatch(/interruptible capacity reservations are not supported/);
    expect(reservationRefusal(capacityReservationFromEc2(ec2(), now) as CapacityReservation)).toBeUndefined();
  });
});

describe('reservedOfferings (KA reserved_capacity_resolver.go)', () => {
  const od: Offering[] = [
    { zone: 'test-zone-1a', capacityType: 'on-demand', priceUsdPerHour: 0.096 + 0.002, volumeUsdPerHour: 0.002, available: true },
    { zone: 'test-zone-1b', capacityType: 'on-demand', priceUsdPerHour: 0.096 + 0.002, volumeUsdPerHour: 0.002, available: true },
  ];
  const reservation = () => capacityReservationFromEc2(ec2(), now) as CapacityReservation;
  const covered = new Set(['test-zone-1a', 'test-zone-1b']);

  it('one offering per reservation of the type, in its zone, priced at the on-demand price / 10 000 000 (plus the volumes), with its count', () => {
    const [o] = reservedOfferings('m5.large', od, [reservation(), { ...reservation(), instanceType: 'm5.xlarge' }], covered);
    expect(o).toEqual({
      zone: 'test-zone-1a',
      capacityType: 'reserved',
      priceUsdPerHour: 0.096 / ReservedPriceDivisor + 0.002,
      volumeUsdPerHour: 0.002,
      available: true,
      reservationId: 'cr-0a1',
      reservationCapacity: 5,
      reservationType: 'default',
      reservationInterruptible: false,
    });
    expect(reservedOfferings('m5.large', od, [reservation()], covered)).toHaveLength(1);
  });

  it.each([
    ['the reservation is full', { availableInstanceCount: 0 }, covered],
    ['the reservation is expiring', { state: 'expiring' as const }, covered],
    ['it is a capacity block', { reservationType: 'capacity-block' as const }, covered],
    ["the class's subnets do not cover its zone", {}, new Set(['test-zone-1b'])],
  ])('not available when %s', (_what, change, zones) => {
    expect(reservedOfferings('m5.large', od, [{ ...reservation(), ...change }], zones)[0].available).toBe(false);
  });

  it('not available while the (type, zone, reserved) offering is marked insufficient', () => {
    expect(
      reservedOfferings('m5.large', od, [reservation()], covered, false, [{ instanceType: 'm5.large', zone: 'test-zone-1a', capacityType: 'reserved' }])[0]
        .available,
    ).toBe(false);
  });
});
