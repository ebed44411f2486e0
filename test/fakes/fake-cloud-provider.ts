import type { CloudInstance, CloudProvider, Clock, LaunchResult } from '../../shared/api/ports.ts';
import type { NodeClaim } from '../../shared/api/nodeclaim.ts';
import type { EC2NodeClass } from '../../shared/api/nodepool.ts';
import { InsufficientCapacityError } from '../../shared/api/errors.ts';
import { FakeBase, clone } from './fake-base.ts';
import { FixedClock } from './fixed-clock.ts';

type Method = 'create' | 'terminate' | 'get' | 'list';
type CapacityType = CloudInstance['capacityType'];

/** An offering (instance type, zone, capacity type). */
export interface FakeOffering {
  instanceType: string;
  zone: string;
  capacityType: string;
}

export interface FakeCloudProviderOptions {
  clock?: Clock;
  /** State of a new instance (default 'running'). */
  launchState?: CloudInstance['state'];
  /** State terminate() moves an instance to (default 'shutting-down'; settle() finishes it). */
  terminateState?: 'shutting-down' | 'terminated';
  /** Price of an offering in USD/hour, for LaunchResult.priceUsdPerHour (default: none). */
  priceUsdPerHour?: (o: FakeOffering) => number | undefined;
  /** Whether EC2 offers it at all (default: every combination). */
  isOffered?: (o: FakeOffering) => boolean;
  /** Tags put on every instance (e.g. the cluster tag). */
  tags?: Record<string, string>;
}

/** Karpenter's launch preference (KA getCapacityType): reserved > spot > on-demand. */
const CapacityPreference: CapacityType[] = ['reserved', 'spot', 'on-demand'];

/**
 * CloudProvider in memory. create() picks the first available offering: capacity type by
 * Karpenter's preference, then the cheapest type when priceUsdPerHour is given (else launch
 * order), then zone order. Offerings marked with setInsufficientCapacity() fail; if all fail,
 * InsufficientCapacityError lists them (as CreateFleet's UnfulfillableCapacity errors do).
 * Instance ids are deterministic (i-00000000000000001, …), and so are their EC2 private DNS names
 * (the Node name EKS authenticates: ip-10-0-0-1.ec2.internal, …; {@link fakePrivateDnsName}).
 */
export class FakeCloudProvider extends FakeBase<Method> implements CloudProvider {
  private readonly instances = new Map<string, CloudInstance>();
  private readonly ice = new Set<string>();
  private seq = 0;
  private dnsSeq = 0;
  private readonly clock: Clock;

  constructor(private readonly opts: FakeCloudProviderOptions = {}) {
    super();
    this.clock = opts.clock ?? new FixedClock();
  }

  /** @throws InsufficientCapacityError when no offering of the launch set is available. */
  async create(
    claim: NodeClaim,
    launch: { instanceTypes: string[]; zones: string[]; capacityTypes: string[] },
    nodeClass?: EC2NodeClass,
  ): Promise<LaunchResult> {
    this.record('create', claim, launch, nodeClass);
    const failed: FakeOffering[] = [];
    for (const capacityType of CapacityPreference.filter((c) => launch.capacityTypes.includes(c))) {
      const offerings: FakeOffering[] = [];
      for (const instanceType of launch.instanceTypes) {
        for (const zone of launch.zones) {
          const o = { instanceType, zone, capacityType };
          if (this.opts.isOffered && !this.opts.isOffered(o)) continue;
          offerings.push(o);
        }
      }
      const price = this.opts.priceUsdPerHour;
      if (price) offerings.sort((a, b) => (price(a) ?? Infinity) - (price(b) ?? Infinity));
      for (const o of offerings) {
        if (this.ice.has(offeringKey(o))) {
          failed.push(o);
          continue;
        }
        return this.launch(claim, o, capacityType);
      }
    }
    // As CreateFleet's error entries (InsufficientInstanceCapacity: Karpenter's reason LaunchFailed).
    throw new InsufficientCapacityError(`no capacity for nodeclaim ${claim.name}`, failed, {
      launchFailures: failed.map((o) => ({ zone: o.zone, capacityType: o.capacityType, reason: 'LaunchFailed' })),
    });
  }

  async terminate(instanceId: string): Promise<void> {
    this.record('terminate', instanceId);
    const i = this.instances.get(instanceId);
    if (!i || i.state === 'terminated' || i.state === 'shutting-down') return;
    i.state = this.opts.terminateState ?? 'shutting-down';
  }

  async get(instanceId: string): Promise<CloudInstance | undefined> {
    this.record('get', instanceId);
    const i = this.instances.get(instanceId);
    return i && clone(i);
  }

  async list(): Promise<CloudInstance[]> {
    this.record('list');
    return [...this.instances.values()].filter((i) => i.state !== 'terminated').map(clone);
  }

  /** Makes the offering fail with InsufficientCapacity until clearInsufficientCapacity(). */
  setInsufficientCapacity(instanceType: string, zone: string, capacityType: string): void {
    this.ice.add(offeringKey({ instanceType, zone, capacityType }));
  }

  clearInsufficientCapacity(): void {
    this.ice.clear();
  }

  /** Test helper: adds an instance (state, tags … overridable). */
  addInstance(i: Partial<CloudInstance> & { instanceId: string }): CloudInstance {
    const inst: CloudInstance = {
      instanceType: 'm5.large',
      zone: 'us-east-1a',
      capacityType: 'on-demand',
      state: 'running',
      launchTime: this.clock.now().toISOString(),
      tags: { ...this.opts.tags },
      privateDnsName: fakePrivateDnsName(++this.dnsSeq),
      ...i,
    };
    this.instances.set(inst.instanceId, clone(inst));
    return clone(inst);
  }

  /** Test helper: sets an instance's state (e.g. an external stop). */
  setState(instanceId: string, state: CloudInstance['state']): void {
    const i = this.instances.get(instanceId);
    if (i) i.state = state;
  }

  /** Test helper: removes an instance entirely (get returns undefined: "long gone"). */
  forget(instanceId: string): void {
    this.instances.delete(instanceId);
  }

  /** Moves every shutting-down instance to terminated (EC2 finishing the shutdown). */
  settle(): void {
    for (const i of this.instances.values()) if (i.state === 'shutting-down') i.state = 'terminated';
  }

  /** Test helper: an instance without recording a call. */
  peek(instanceId: string): CloudInstance | undefined {
    const i = this.instances.get(instanceId);
    return i && clone(i);
  }

  /** Test helper: every instance including terminated ones. */
  all(): CloudInstance[] {
    return [...this.instances.values()].map(clone);
  }

  override reset(): void {
    super.reset();
    this.instances.clear();
    this.ice.clear();
    this.seq = 0;
    this.dnsSeq = 0;
  }

  private launch(claim: NodeClaim, o: FakeOffering, capacityType: CapacityType): LaunchResult {
    this.seq += 1;
    const instanceId = `i-${this.seq.toString(16).padStart(17, '0')}`;
    this.instances.set(instanceId, {
      instanceId,
      instanceType: o.instanceType,
      zone: o.zone,
      capacityType,
      state: this.opts.launchState ?? 'running',
      launchTime: this.clock.now().toISOString(),
      // as shared/aws/ec2.ts launchTags: the cluster, the NodePool and the NodeClaim
      tags: { 'nodefleet.io/cluster': claim.cluster, ...this.opts.tags, 'karpenter.sh/nodeclaim': claim.name, 'karpenter.sh/nodepool': claim.nodePool },
      privateDnsName: fakePrivateDnsName(++this.dnsSeq),
    });
    const priceUsdPerHour = this.opts.priceUsdPerHour?.(o);
    return {
      instanceId,
      instanceType: o.instanceType,
      zone: o.zone,
      capacityType,
      ...(priceUsdPerHour !== undefined ? { priceUsdPerHour } : {}),
    };
  }
}

/** The n-th fake instance's EC2 PrivateDnsName: ip-10-0-0-1.ec2.internal, … (n ≥ 1). */
export function fakePrivateDnsName(n: number): string {
  return `ip-10-0-${Math.floor(n / 256) % 256}-${n % 256}.ec2.internal`;
}

function offeringKey(o: FakeOffering): string {
  return `${o.instanceType}#${o.zone}#${o.capacityType}`;
}
