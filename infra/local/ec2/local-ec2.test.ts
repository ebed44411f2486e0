import { afterEach, describe, expect, it } from 'vitest';
import { VirtualClock } from '../clock.ts';
import { LocalEc2 } from './local-ec2.ts';

const clock = new VirtualClock({ start: '2026-03-06T15:57:00Z', speed: 1, frozen: true });
afterEach(() => clock.stop());

function region(on: VirtualClock = clock) {
  return new LocalEc2({
    clock: on,
    region: 'ap-northeast-2',
    zones: [
      { zone: 'ap-northeast-2a', zoneId: 'apne2-az1' },
      { zone: 'ap-northeast-2b', zoneId: 'apne2-az2' },
    ],
    priceOf: (t) => ({ 'c5a.2xlarge': 0.344, 'c5.2xlarge': 0.384 })[t],
  });
}

const request = (overrides: { instanceType: string; zone?: string }[]) => ({ capacityType: 'on-demand' as const, overrides, targetCapacity: 1, tags: {} });

describe('LocalEc2', () => {
  it('launches from an offering until its capacity is used up, then reports InsufficientInstanceCapacity for it', () => {
    // Prepare
    const ec2 = region();
    ec2.setCapacity('c5a.2xlarge', 'ap-northeast-2a', 'on-demand', 1);
    const req = request([
      { instanceType: 'c5a.2xlarge', zone: 'ap-northeast-2a' },
      { instanceType: 'c5.2xlarge', zone: 'ap-northeast-2a' },
    ]);
    // Act
    const first = ec2.createFleet(req);
    const second = ec2.createFleet(req);
    // Assess
    expect(first.instances.map((i) => i.instanceType)).toEqual(['c5a.2xlarge']);
    expect(second.instances.map((i) => i.instanceType)).toEqual(['c5.2xlarge']);
    expect(second.errors.map((e) => [e.errorCode, e.override?.instanceType, e.override?.zone])).toEqual([
      ['InsufficientInstanceCapacity', 'c5a.2xlarge', 'ap-northeast-2a'],
    ]);
  });

  it('spreads an override without a zone over every zone and skips types not sold there', () => {
    const ec2 = region();
    const out = ec2.createFleet(request([{ instanceType: 'x9.huge' }, { instanceType: 'c5.2xlarge' }]));
    expect(out.instances[0]).toMatchObject({ instanceType: 'c5.2xlarge', zone: 'ap-northeast-2a', state: 'pending', priceUsdPerHour: 0.384 });
    expect(out.errors.map((e) => e.errorCode)).toEqual(['Unsupported', 'Unsupported']);
  });

  it('ends an insufficient-capacity fault when its time is up', () => {
    const ec2 = region();
    ec2.addFault({ instanceTypes: ['c5a.2xlarge'], untilMs: clock.nowMs() });
    expect(ec2.createFleet(request([{ instanceType: 'c5a.2xlarge', zone: 'ap-northeast-2b' }])).instances).toHaveLength(1);
  });
});

describe('LocalEc2 capacity reservations', () => {
  it('a launch targeting a reservation takes one of its instances, refuses once it is full, and the termination gives it back', async () => {
    // Prepare (a running clock: the shutdown takes 10 virtual seconds)
    const fast = new VirtualClock({ start: '2026-03-06T15:57:00Z', speed: 1000 });
    const ec2 = region(fast);
    const cr = ec2.addCapacityReservation({ id: 'cr-0a1', instanceType: 'c5a.2xlarge', zone: 'ap-northeast-2a', total: 1, tags: { team: 'ml' } });
    const req = {
      ...request([{ instanceType: 'c5a.2xlarge', zone: 'ap-northeast-2a' }]),
      overrides: [{ instanceType: 'c5a.2xlarge', zone: 'ap-northeast-2a', capacityReservationId: 'cr-0a1' }],
    };
    // Act
    const first = ec2.createFleet(req);
    const full = ec2.createFleet(req);
    // Assess
    expect(first.instances.map((i) => i.capacityReservationId)).toEqual(['cr-0a1']);
    expect(cr.available).toBe(0);
    expect(full.instances).toEqual([]);
    expect(full.errors.map((e) => e.errorCode)).toContain('ReservationCapacityExceeded');
    // Act: terminate, let shutting-down finish
    ec2.terminate([first.instances[0].instanceId]);
    expect(cr.available).toBe(0);
    await fast.sleep(11_000);
    // Assess
    expect(cr.available).toBe(1);
    expect(ec2.createFleet(req).instances).toHaveLength(1);
    fast.stop();
  });

  it('DescribeCapacityReservations filters by state, owner, tags and match criteria; an unknown id is InvalidCapacityReservationId.NotFound', () => {
    const ec2 = region();
    ec2.addCapacityReservation({ id: 'cr-0a1', instanceType: 'c5a.2xlarge', zone: 'ap-northeast-2a', total: 2, tags: { team: 'ml' } });
    ec2.addCapacityReservation({ id: 'cr-0b2', instanceType: 'c5.2xlarge', zone: 'ap-northeast-2b', total: 1, instanceMatchCriteria: 'open' });
    ec2.cancelCapacityReservation('cr-0b2');
    const ids = (f: { name: string; values: string[] }[], byId: string[] = []) => ec2.describeCapacityReservations(byId, f).map((r) => r.id);
    expect(ids([{ name: 'tag:team', values: ['ml'] }])).toEqual(['cr-0a1']);
    expect(ids([{ name: 'state', values: ['active'] }])).toEqual(['cr-0a1']);
    expect(ids([{ name: 'instance-match-criteria', values: ['open'] }])).toEqual(['cr-0b2']);
    expect(ids([{ name: 'owner-id', values: ['999999999999'] }])).toEqual([]);
    expect(ids([], ['cr-0b2'])).toEqual(['cr-0b2']);
    expect(() => ids([], ['cr-0ff'])).toThrow(/InvalidCapacityReservationId.NotFound|does not exist/);
  });
});
