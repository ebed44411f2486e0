/**
 * The simulated EC2 region behind the local EC2 query-protocol server.
 *
 * Holds instances and their state machine (pending → running → shutting-down → terminated),
 * per-offering capacity, injected insufficient-capacity faults and spot interruptions. It emits
 * the same EventBridge events AWS emits for these (EC2 Instance State-change Notification,
 * EC2 Spot Instance Interruption Warning; shapes as test/fixtures/events/*.json) through the
 * `onEvent` listener, and tells the environment when an instance is running (a kubelet can
 * start) or going away (the kubelet stops).
 */
import { localHex, localUuid } from '../ids.ts';
import type { VirtualClock } from '../clock.ts';

export type Ec2CapacityType = 'on-demand' | 'spot';
export type Ec2InstanceState = 'pending' | 'running' | 'shutting-down' | 'terminated' | 'stopping' | 'stopped';

/** EC2 instance state codes (EC2 API `InstanceState.Code`). */
export const InstanceStateCodes: Record<Ec2InstanceState, number> = {
  pending: 0,
  running: 16,
  'shutting-down': 32,
  terminated: 48,
  stopping: 64,
  stopped: 80,
};

/** Spot interruption notice length: AWS gives two minutes (EC2 User Guide, spot-instance-termination-notices). */
export const SpotNoticeSeconds = 120;

/** One simulated instance. */
export interface LocalInstance {
  instanceId: string;
  instanceType: string;
  zone: string;
  zoneId: string;
  subnetId: string;
  capacityType: Ec2CapacityType;
  imageId: string;
  state: Ec2InstanceState;
  /** Virtual epoch ms. */
  launchTimeMs: number;
  tags: Record<string, string>;
  privateIp: string;
  privateDnsName: string;
  fleetId?: string;
  /** Virtual epoch ms when TerminateInstances (or the spot reclaim) hit it. */
  terminatingAtMs?: number;
  /** Who terminated it: the API caller (nodefleet) or EC2 reclaiming a spot instance. */
  terminatedBy?: 'api' | 'spot-reclaim';
  /** Virtual epoch ms of the interruption notice, and of the reclaim it announces. */
  interruptionNoticeAtMs?: number;
  interruptionDeadlineMs?: number;
  /** USD per hour of the offering it was launched on. */
  priceUsdPerHour?: number;
  /** True for instances that exist before the scenario (managed node group), not launched through the API. */
  preexisting?: boolean;
  /** Base64 user data from the launch template. */
  userData?: string;
  launchTemplateName?: string;
  /** The capacity reservation it was launched into (its slot is given back when it terminates). */
  capacityReservationId?: string;
}

/**
 * One on-demand capacity reservation of the simulated account: `available` of `total` instances
 * of one type in one zone can still be launched into it (EC2 `AvailableInstanceCount`); a launch
 * targeting it takes one, the instance's termination gives it back.
 */
export interface LocalCapacityReservation {
  id: string;
  instanceType: string;
  zone: string;
  total: number;
  available: number;
  ownerId: string;
  instanceMatchCriteria: 'open' | 'targeted';
  reservationType: 'default' | 'capacity-block';
  state: 'active' | 'expired' | 'cancelled';
  tags: Record<string, string>;
  /** Virtual epoch ms the reservation ends (absent: unlimited). */
  endMs?: number;
}

/** A CreateFleet override (one launch template × instance type × subnet/zone). */
export interface FleetOverride {
  instanceType: string;
  zone?: string;
  subnetId?: string;
  imageId?: string;
  /** Lower = preferred (prioritized strategies). */
  priority?: number;
  /**
   * The launch template of the override's LaunchTemplateConfig (a fleet may name several, one per
   * kubelet maxPods): an instance takes its user data and template tags from its own config's template.
   */
  launchTemplate?: { id: string; name: string; version: number; userData?: string };
  /** The reservation its launch template targets (`CapacityReservationSpecification.CapacityReservationTarget`). */
  capacityReservationId?: string;
}

export interface CreateFleetRequest {
  capacityType: Ec2CapacityType;
  overrides: FleetOverride[];
  /** 'lowest-price' | 'price-capacity-optimized' | 'capacity-optimized-prioritized' | 'prioritized' | … */
  allocationStrategy?: string;
  targetCapacity: number;
  tags: Record<string, string>;
  launchTemplateId?: string;
  launchTemplateName?: string;
  launchTemplateVersion?: string;
  /** The launch template's UserData (base64), which the simulated kubelet reads its flags from. */
  userData?: string;
}

export interface CreateFleetError {
  override?: FleetOverride & { zone: string };
  lifecycle?: Ec2CapacityType;
  errorCode: string;
  errorMessage: string;
}

export interface CreateFleetOutcome {
  fleetId: string;
  instances: LocalInstance[];
  errors: CreateFleetError[];
}

/** An insufficient-capacity fault: matching offerings fail CreateFleet until `untilMs`. */
export interface CapacityFault {
  instanceTypes?: string[];
  zones?: string[];
  capacityType?: Ec2CapacityType;
  /** Virtual epoch ms; absent = until removed. */
  untilMs?: number;
  /** EC2 error code returned (default InsufficientInstanceCapacity for on-demand, UnfulfillableCapacity for spot). */
  errorCode?: string;
}

/** A zone of the simulated region, with its one subnet. */
export interface LocalZone {
  zone: string;
  zoneId: string;
  subnetId: string;
  /** CIDR second+third octet base for private IPs. */
  octet: number;
}

export interface LocalEc2Options {
  clock: VirtualClock;
  region: string;
  accountId?: string;
  zones: { zone: string; zoneId: string }[];
  /** Virtual seconds from CreateFleet to `running` (default 2, as the seed's "launched" 2 s after "created"). */
  bootSeconds?: number;
  /** Virtual seconds an instance stays `shutting-down` before `terminated` (default 10). */
  shutdownSeconds?: number;
  /** Price of an offering in USD per hour; undefined = not offered in this region. */
  priceOf: (instanceType: string, zone: string, capacityType: Ec2CapacityType) => number | undefined;
  /** The EC2 `ImageId` used when the launch does not name one. */
  defaultImageId?: string;
}

/** Listeners the environment attaches. */
export interface LocalEc2Listeners {
  /** An EventBridge event as AWS delivers it (full envelope). */
  onEvent?: (event: Record<string, unknown>) => void;
  /** The instance reached `running`: the environment starts its kubelet. */
  onRunning?: (instance: LocalInstance) => void;
  /** The instance is shutting down: its kubelet stops. */
  onStopping?: (instance: LocalInstance) => void;
  /** The instance reached `terminated`. */
  onTerminated?: (instance: LocalInstance) => void;
  /** A CreateFleet call was answered. */
  onCreateFleet?: (request: CreateFleetRequest, outcome: CreateFleetOutcome) => void;
}

/** Default account id used in ARNs and events (the fixtures' placeholder account). */
export const LocalAccountId = '123456789012';

/** An operation failed the way EC2 fails it (an `<Errors>` response). */
export class Ec2ApiError extends Error {
  override name = 'Ec2ApiError';
  constructor(
    readonly code: string,
    message: string,
    readonly httpStatus = 400,
  ) {
    super(message);
  }
}

/** The simulated EC2 region. */
export class LocalEc2 {
  readonly region: string;
  readonly accountId: string;
  readonly zones: LocalZone[];
  readonly instances = new Map<string, LocalInstance>();
  readonly listeners: LocalEc2Listeners = {};
  /** Every API call received, in order (action name and virtual epoch ms), for assertions and the summary. */
  readonly calls: { action: string; atMs: number; detail?: unknown }[] = [];
  private readonly clock: VirtualClock;
  private readonly bootSeconds: number;
  private readonly shutdownSeconds: number;
  private readonly priceOf: LocalEc2Options['priceOf'];
  private readonly defaultImageId: string;
  private readonly faults: CapacityFault[] = [];
  /** Remaining capacity per `type|zone|capacityType` (absent = unlimited). */
  private readonly capacity = new Map<string, number>();
  /** The account's capacity reservations by id. */
  readonly capacityReservations = new Map<string, LocalCapacityReservation>();
  private ipCounter = 10;

  constructor(opts: LocalEc2Options) {
    this.clock = opts.clock;
    this.region = opts.region;
    this.accountId = opts.accountId ?? LocalAccountId;
    this.bootSeconds = opts.bootSeconds ?? 2;
    this.shutdownSeconds = opts.shutdownSeconds ?? 10;
    this.priceOf = opts.priceOf;
    this.defaultImageId = opts.defaultImageId ?? 'ami-0a1b2c3d4e5f60718';
    this.zones = opts.zones.map((z, i) => ({ ...z, subnetId: `subnet-0${(i + 1).toString(16).padStart(16, '0')}`, octet: 32 * (i + 1) }));
  }

  /** Limits how many more instances an offering can launch (0 = none left). */
  setCapacity(instanceType: string, zone: string, capacityType: Ec2CapacityType, count: number): void {
    this.capacity.set(`${instanceType}|${zone}|${capacityType}`, count);
  }

  /** Creates a capacity reservation (as CreateCapacityReservation would); `available` defaults to `total`. */
  addCapacityReservation(
    r: Pick<LocalCapacityReservation, 'instanceType' | 'zone' | 'total'> & Partial<Omit<LocalCapacityReservation, 'instanceType' | 'zone' | 'total'>>,
  ): LocalCapacityReservation {
    if (!this.zone(r.zone)) throw new Ec2ApiError('InvalidParameterValue', `zone ${r.zone} is not in ${this.region}`);
    const cr: LocalCapacityReservation = {
      id: r.id ?? `cr-0${localHex(8)}`,
      available: r.available ?? r.total,
      ownerId: r.ownerId ?? this.accountId,
      instanceMatchCriteria: r.instanceMatchCriteria ?? 'targeted',
      reservationType: r.reservationType ?? 'default',
      state: r.state ?? 'active',
      tags: r.tags ?? {},
      ...r,
    };
    this.capacityReservations.set(cr.id, cr);
    return cr;
  }

  /** Ends a reservation now (its state becomes `cancelled`, nothing more is launched into it). */
  cancelCapacityReservation(id: string): void {
    const cr = this.capacityReservations.get(id);
    if (cr) cr.state = 'cancelled';
  }

  /** DescribeCapacityReservations: by ids (an unknown one fails the call, as EC2), then `state` / `owner-id` / `instance-match-criteria` / `tag:` / `tag-key` filters. */
  describeCapacityReservations(ids: string[], filters: { name: string; values: string[] }[]): LocalCapacityReservation[] {
    for (const id of ids)
      if (!this.capacityReservations.has(id))
        throw new Ec2ApiError('InvalidCapacityReservationId.NotFound', `The capacity reservation ID '${id}' does not exist`);
    const now = this.clock.nowMs();
    for (const cr of this.capacityReservations.values()) if (cr.state === 'active' && cr.endMs !== undefined && now >= cr.endMs) cr.state = 'expired';
    return [...this.capacityReservations.values()].filter(
      (cr) =>
        (ids.length === 0 || ids.includes(cr.id)) &&
        filters.every((f) => {
          if (f.name === 'state') return f.values.includes(cr.state);
          if (f.name === 'owner-id') return f.values.includes(cr.ownerId);
          if (f.name === 'instance-match-criteria') return f.values.includes(cr.instanceMatchCriteria);
          if (f.name === 'instance-type') return f.values.includes(cr.instanceType);
          if (f.name === 'availability-zone') return f.values.includes(cr.zone);
          if (f.name === 'tag-key') return f.values.some((k) => k in cr.tags);
          if (f.name.startsWith('tag:')) return f.values.includes(cr.tags[f.name.slice(4)] ?? '\u0000');
          return true;
        }),
    );
  }

  /** Adds an insufficient-capacity fault. */
  addFault(fault: CapacityFault): void {
    this.faults.push(fault);
  }

  /** Zone record by zone name. */
  zone(zone: string): LocalZone | undefined {
    return this.zones.find((z) => z.zone === zone);
  }

  private zoneOfSubnet(subnetId: string): LocalZone | undefined {
    return this.zones.find((z) => z.subnetId === subnetId);
  }

  private faultFor(type: string, zone: string, ct: Ec2CapacityType): CapacityFault | undefined {
    const now = this.clock.nowMs();
    return this.faults.find(
      (f) =>
        (f.untilMs === undefined || now < f.untilMs) &&
        (!f.instanceTypes || f.instanceTypes.includes(type)) &&
        (!f.zones || f.zones.includes(zone)) &&
        (!f.capacityType || f.capacityType === ct),
    );
  }

  /**
   * CreateFleet type instant. Picks offerings in allocation-strategy order (price, or priority
   * for prioritized strategies), skipping those with a fault or no capacity; each skipped one
   * becomes an entry in `errors` as EC2 reports them.
   */
  createFleet(req: CreateFleetRequest): CreateFleetOutcome {
    const fleetId = `fleet-${localUuid()}`;
    const errors: CreateFleetError[] = [];
    const candidates: { o: FleetOverride & { zone: string; subnetId: string }; price: number }[] = [];
    for (const o of req.overrides) {
      const z = o.subnetId ? this.zoneOfSubnet(o.subnetId) : o.zone ? this.zone(o.zone) : undefined;
      const zones = z ? [z] : o.zone || o.subnetId ? [] : this.zones;
      if (zones.length === 0) {
        errors.push({
          override: { ...o, zone: o.zone ?? '' },
          lifecycle: req.capacityType,
          errorCode: 'InvalidSubnetID.NotFound',
          errorMessage: `The subnet ID '${o.subnetId}' does not exist`,
        });
        continue;
      }
      for (const zz of zones) {
        const price = this.priceOf(o.instanceType, zz.zone, req.capacityType);
        const full = { ...o, zone: zz.zone, subnetId: zz.subnetId };
        if (price === undefined) {
          errors.push({
            override: full,
            lifecycle: req.capacityType,
            errorCode: 'Unsupported',
            errorMessage: `The requested configuration is currently not supported. Your requested instance type (${o.instanceType}) is not supported in your requested Availability Zone (${zz.zone}).`,
          });
          continue;
        }
        candidates.push({ o: full, price });
      }
    }
    const prioritized = /prioritized/.test(req.allocationStrategy ?? '');
    candidates.sort((a, b) => (prioritized ? (a.o.priority ?? 0) - (b.o.priority ?? 0) : 0) || a.price - b.price);
    const instances: LocalInstance[] = [];
    for (const c of candidates) {
      if (instances.length >= req.targetCapacity) break;
      if (c.o.capacityReservationId) {
        // A launch targeting a reservation goes into it or fails (preference capacity-reservations-only).
        const cr = this.capacityReservations.get(c.o.capacityReservationId);
        const refusal = !cr
          ? { code: 'InvalidCapacityReservationId.NotFound', message: `The capacity reservation ID '${c.o.capacityReservationId}' does not exist` }
          : cr.state !== 'active' || (cr.endMs !== undefined && this.clock.nowMs() >= cr.endMs)
            ? { code: 'InvalidCapacityReservationId.NotFound', message: `The capacity reservation '${cr.id}' is not active` }
            : cr.instanceType !== c.o.instanceType || cr.zone !== c.o.zone
              ? { code: 'InvalidParameterCombination', message: `The capacity reservation '${cr.id}' is for ${cr.instanceType} in ${cr.zone}` }
              : cr.available <= 0
                ? { code: 'ReservationCapacityExceeded', message: `The requested capacity reservation '${cr.id}' has insufficient capacity` }
                : undefined;
        if (refusal) {
          errors.push({ override: c.o, lifecycle: req.capacityType, errorCode: refusal.code, errorMessage: refusal.message });
          continue;
        }
        cr!.available -= 1;
        instances.push(this.launch(c.o, req, c.price, fleetId));
        continue;
      }
      const fault = this.faultFor(c.o.instanceType, c.o.zone, req.capacityType);
      const key = `${c.o.instanceType}|${c.o.zone}|${req.capacityType}`;
      const left = this.capacity.get(key);
      if (fault || left === 0) {
        const code = fault?.errorCode ?? (req.capacityType === 'spot' ? 'UnfulfillableCapacity' : 'InsufficientInstanceCapacity');
        errors.push({
          override: c.o,
          lifecycle: req.capacityType,
          errorCode: code,
          errorMessage:
            code === 'InsufficientInstanceCapacity'
              ? `We currently do not have sufficient ${c.o.instanceType} capacity in the Availability Zone you requested (${c.o.zone}). Our system will be working on provisioning additional capacity.`
              : 'Unable to fulfill capacity due to your request configuration. Please adjust your request and try again.',
        });
        continue;
      }
      if (left !== undefined) this.capacity.set(key, left - 1);
      instances.push(this.launch(c.o, req, c.price, fleetId));
    }
    if (instances.length < req.targetCapacity && candidates.length + errors.length > 0 && errors.every((e) => e.override)) {
      // EC2 adds a fleet-level error without overrides when the target was not met.
      errors.push({ errorCode: 'UnfulfillableCapacity', errorMessage: 'Failed to fulfill capacity. Please review errors in the response.' });
    }
    this.calls.push({
      action: 'CreateFleet',
      atMs: this.clock.nowMs(),
      detail: {
        capacityType: req.capacityType,
        overrides: req.overrides.length,
        launched: instances.map((i) => i.instanceType),
        errors: errors.map((e) => e.errorCode),
      },
    });
    const outcome = { fleetId, instances, errors };
    this.listeners.onCreateFleet?.(req, outcome);
    return outcome;
  }

  private nextIp(z: LocalZone): string {
    this.ipCounter += 1;
    return `192.168.${z.octet + Math.floor(this.ipCounter / 250)}.${this.ipCounter % 250}`;
  }

  private launch(o: FleetOverride & { zone: string; subnetId: string }, req: CreateFleetRequest, price: number, fleetId: string): LocalInstance {
    const z = this.zone(o.zone)!;
    const ip = this.nextIp(z);
    const inst: LocalInstance = {
      instanceId: `i-0${localHex(8)}`,
      instanceType: o.instanceType,
      zone: o.zone,
      zoneId: z.zoneId,
      subnetId: o.subnetId,
      capacityType: req.capacityType,
      imageId: o.imageId ?? this.defaultImageId,
      state: 'pending',
      launchTimeMs: this.clock.nowMs(),
      // EC2 tags an instance launched from a template with that template's id and version.
      tags: {
        ...req.tags,
        ...(o.launchTemplate ? { 'aws:ec2launchtemplate:id': o.launchTemplate.id, 'aws:ec2launchtemplate:version': String(o.launchTemplate.version) } : {}),
      },
      privateIp: ip,
      privateDnsName: `ip-${ip.replaceAll('.', '-')}.${this.region}.compute.internal`,
      fleetId,
      priceUsdPerHour: price,
      userData: o.launchTemplate ? o.launchTemplate.userData : req.userData,
      launchTemplateName: o.launchTemplate?.name ?? req.launchTemplateName,
      ...(o.capacityReservationId ? { capacityReservationId: o.capacityReservationId } : {}),
    };
    this.instances.set(inst.instanceId, inst);
    this.emitStateChange(inst);
    this.clock.setTimer(() => {
      if (inst.state !== 'pending') return;
      inst.state = 'running';
      this.emitStateChange(inst);
      this.listeners.onRunning?.(inst);
    }, this.bootSeconds * 1000);
    return inst;
  }

  /** Registers an instance that exists before the scenario (a managed node group's), already running. */
  addExisting(i: { instanceType: string; zone: string; capacityType?: Ec2CapacityType; tags?: Record<string, string>; name?: string }): LocalInstance {
    const z = this.zone(i.zone);
    if (!z) throw new Ec2ApiError('InvalidParameterValue', `zone ${i.zone} is not in ${this.region}`);
    const ip = this.nextIp(z);
    const inst: LocalInstance = {
      instanceId: `i-0${localHex(8)}`,
      instanceType: i.instanceType,
      zone: i.zone,
      zoneId: z.zoneId,
      subnetId: z.subnetId,
      capacityType: i.capacityType ?? 'on-demand',
      imageId: this.defaultImageId,
      state: 'running',
      launchTimeMs: this.clock.nowMs(),
      tags: { ...(i.tags ?? {}) },
      privateIp: ip,
      privateDnsName: i.name ?? `ip-${ip.replaceAll('.', '-')}.${this.region}.compute.internal`,
      priceUsdPerHour: this.priceOf(i.instanceType, i.zone, i.capacityType ?? 'on-demand'),
      preexisting: true,
    };
    this.instances.set(inst.instanceId, inst);
    return inst;
  }

  /**
   * TerminateInstances: each known instance moves to shutting-down, then terminated after
   * `shutdownSeconds`. Already terminating/terminated instances are reported as they are.
   * @throws Ec2ApiError InvalidInstanceID.NotFound / InvalidInstanceID.Malformed as EC2 does.
   */
  terminate(instanceIds: string[], by: 'api' | 'spot-reclaim' = 'api'): { instanceId: string; previous: Ec2InstanceState; current: Ec2InstanceState }[] {
    for (const id of instanceIds) {
      if (!/^i-[0-9a-f]{8,17}$/.test(id)) throw new Ec2ApiError('InvalidInstanceID.Malformed', `Invalid id: "${id}"`);
      if (!this.instances.has(id)) throw new Ec2ApiError('InvalidInstanceID.NotFound', `The instance ID '${id}' does not exist`);
    }
    if (by === 'api') this.calls.push({ action: 'TerminateInstances', atMs: this.clock.nowMs(), detail: instanceIds });
    return instanceIds.map((id) => {
      const inst = this.instances.get(id)!;
      const previous = inst.state;
      if (previous !== 'shutting-down' && previous !== 'terminated') {
        inst.state = 'shutting-down';
        inst.terminatingAtMs = this.clock.nowMs();
        inst.terminatedBy = by;
        this.emitStateChange(inst);
        this.listeners.onStopping?.(inst);
        this.clock.setTimer(() => {
          inst.state = 'terminated';
          // A terminated instance gives its reservation slot back.
          const cr = inst.capacityReservationId ? this.capacityReservations.get(inst.capacityReservationId) : undefined;
          if (cr) cr.available = Math.min(cr.total, cr.available + 1);
          this.emitStateChange(inst);
          this.listeners.onTerminated?.(inst);
        }, this.shutdownSeconds * 1000);
      }
      return { instanceId: id, previous, current: inst.state };
    });
  }

  /**
   * Interrupts a spot instance: emits the EC2 Spot Instance Interruption Warning now and
   * reclaims the instance (terminates it) `noticeSeconds` later unless it is already gone.
   * @throws Ec2ApiError when the instance is unknown or not spot.
   */
  interruptSpot(instanceId: string, noticeSeconds = SpotNoticeSeconds): LocalInstance {
    const inst = this.instances.get(instanceId);
    if (!inst) throw new Ec2ApiError('InvalidInstanceID.NotFound', `The instance ID '${instanceId}' does not exist`);
    if (inst.capacityType !== 'spot') throw new Ec2ApiError('InvalidParameterValue', `${instanceId} is not a spot instance`);
    const now = this.clock.nowMs();
    inst.interruptionNoticeAtMs = now;
    inst.interruptionDeadlineMs = now + noticeSeconds * 1000;
    this.emit('EC2 Spot Instance Interruption Warning', [this.arn(inst.instanceId)], { 'instance-id': inst.instanceId, 'instance-action': 'terminate' });
    this.clock.setTimerAt(() => {
      if (inst.state === 'pending' || inst.state === 'running') this.terminate([inst.instanceId], 'spot-reclaim');
    }, inst.interruptionDeadlineMs);
    return inst;
  }

  /**
   * Stops a running instance out of band (an operator or an EBS failure, not nodefleet):
   * stopping now, stopped after `shutdownSeconds`, with the state-change events EC2 emits.
   * No-op for an instance that is not pending or running.
   */
  stopOutOfBand(instanceId: string): void {
    const inst = this.instances.get(instanceId);
    if (!inst || (inst.state !== 'pending' && inst.state !== 'running')) return;
    inst.state = 'stopping';
    this.emitStateChange(inst);
    this.listeners.onStopping?.(inst);
    this.clock.setTimer(() => {
      if (inst.state !== 'stopping') return;
      inst.state = 'stopped';
      this.emitStateChange(inst);
    }, this.shutdownSeconds * 1000);
  }

  /** Emits an EC2 Instance Rebalance Recommendation for a spot instance (nothing else changes). */
  rebalanceRecommendation(instanceId: string): void {
    const inst = this.instances.get(instanceId);
    if (!inst) return;
    this.emit('EC2 Instance Rebalance Recommendation', [this.arn(inst.instanceId)], { 'instance-id': inst.instanceId });
  }

  /** Instances matching the filters (EC2 DescribeInstances semantics for the filters nodefleet uses). */
  describe(instanceIds: string[] | undefined, filters: { name: string; values: string[] }[]): LocalInstance[] {
    if (instanceIds?.length) {
      for (const id of instanceIds) if (!this.instances.has(id)) throw new Ec2ApiError('InvalidInstanceID.NotFound', `The instance ID '${id}' does not exist`);
    }
    const all = [...this.instances.values()].filter((i) => !instanceIds?.length || instanceIds.includes(i.instanceId));
    return all.filter((i) => filters.every((f) => matchesFilter(i, f)));
  }

  /** CreateTags on instances (other resource ids are accepted and ignored). */
  /** Virtual epoch ms of this region's clock. */
  nowMs(): number {
    return this.clock.nowMs();
  }

  createTags(resourceIds: string[], tags: Record<string, string>): void {
    for (const id of resourceIds) {
      const inst = this.instances.get(id);
      if (inst) Object.assign(inst.tags, tags);
    }
  }

  /** `arn:aws:ec2:<region>:<account>:instance/<id>`. */
  arn(instanceId: string): string {
    return `arn:aws:ec2:${this.region}:${this.accountId}:instance/${instanceId}`;
  }

  private emitStateChange(inst: LocalInstance): void {
    this.emit('EC2 Instance State-change Notification', [this.arn(inst.instanceId)], { 'instance-id': inst.instanceId, state: inst.state });
  }

  private emit(detailType: string, resources: string[], detail: Record<string, unknown>): void {
    this.listeners.onEvent?.({
      version: '0',
      id: localUuid(),
      'detail-type': detailType,
      source: 'aws.ec2',
      account: this.accountId,
      time: new Date(Math.floor(this.clock.nowMs() / 1000) * 1000).toISOString().replace('.000Z', 'Z'),
      region: this.region,
      resources,
      detail,
    });
  }
}

function matchesFilter(i: LocalInstance, f: { name: string; values: string[] }): boolean {
  const any = (v: string | undefined): boolean => v !== undefined && f.values.some((p) => globMatch(p, v));
  if (f.name.startsWith('tag:')) return any(i.tags[f.name.slice(4)]);
  switch (f.name) {
    case 'tag-key':
      return Object.keys(i.tags).some((k) => any(k));
    case 'instance-id':
      return any(i.instanceId);
    case 'instance-state-name':
      return any(i.state);
    case 'instance-type':
      return any(i.instanceType);
    case 'availability-zone':
      return any(i.zone);
    case 'instance-lifecycle':
      return i.capacityType === 'spot' ? any('spot') : f.values.length === 0;
    case 'private-dns-name':
      return any(i.privateDnsName);
    default:
      // Unknown filters match nothing, as EC2 rejects them; keep it visible rather than silently true.
      throw new Ec2ApiError('InvalidParameterValue', `The filter '${f.name}' is invalid`);
  }
}

/** EC2 filter values accept `*` and `?` wildcards. */
function globMatch(pattern: string, value: string): boolean {
  if (!/[*?]/.test(pattern)) return pattern === value;
  const re = new RegExp(
    `^${pattern
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\?/g, '.')}$`,
  );
  return re.test(value);
}
