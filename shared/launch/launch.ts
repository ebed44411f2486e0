/**
 * Launching one NodeClaim: CreateFleet through the CloudProvider port, with Karpenter's reaction
 * to insufficient capacity (KA pkg/providers/instance/instance.go): the failed offerings are
 * marked unavailable for 3 minutes and the launch is retried with what is left; when no spot
 * offering remains and the claim allows on-demand, it falls back to on-demand. A claim nothing
 * can fulfil is deleted (never left launching forever).
 */
import type { Clock, CloudProvider, LaunchResult, NodeClaimStore, UnavailableOfferings } from '../api/ports.ts';
import { advancePhase, setCondition, type NodeClaim } from '../api/nodeclaim.ts';
import type { EC2NodeClass } from '../api/nodepool.ts';
import { ConflictError, InsufficientCapacityError, NodefleetError, launchFailuresOf, type LaunchFailure } from '../api/errors.ts';
import { Requirements } from '../api/requirements.ts';
import { formatResources } from '../api/quantity.ts';
import * as L from '../api/labels.ts';
import type { InstanceType } from '../catalog/index.ts';
import { UnavailableOfferingsTtlSeconds } from '../api/ports.ts';
import { MaxLaunchInstanceTypes } from '../api/ports.ts';
import { type Log, type MetricsSink } from '../runtime/observability.ts';
import { MetricNames } from '../api/metrics.ts';
import { providerIdOf } from '../api/provider-id.ts';

/** CreateFleet attempts per claim before giving up (each attempt removes the pools that failed). */
export const MaxLaunchAttempts = 5;

/**
 * Spot attempts before falling back to on-demand (when the claim allows it). A claim lists only its
 * launch set (≤ 60 types, claims.ts `launchSetRequirements`), so its spot pools are usually spent
 * after one refused fleet; at most two are tried before the on-demand pools, the NodePool's
 * declared alternative, are used.
 */
export const MaxSpotAttempts = 2;

/** One launch: capacity type, types cheapest first, zones. */
export interface LaunchChoice {
  capacityType: 'reserved' | 'spot' | 'on-demand';
  /** For `reserved`: the one reservation launched into (the claim is pinned to it, shared/scheduling/reservations.ts). */
  capacityReservation?: { id: string; type: 'default' | 'capacity-block'; interruptible: boolean };
  instanceTypes: string[];
  zones: string[];
  /** The available (type, zone) pairs: the only ones CreateFleet is offered. */
  offerings: { instanceType: string; zone: string }[];
  /** Each type's pod capacity (the kubelet maxPods its node is launched with, shared/aws/ec2.ts LaunchSpec). */
  maxPods: Record<string, number>;
  /** Each type's EFA devices (catalog capacity `vpc.amazonaws.com/efa`; types without EFA left out). */
  efaCount: Record<string, number>;
}

const offeringKey = (t: string, z: string, c: string) => `${t}/${z}/${c}`;

/**
 * Picks what to launch from the claim's compatible types and what is still available, as KA
 * pkg/providers/instance/instance.go filters a launch (unless a requirement has minValues):
 * exotic types (GPU, accelerator, metal: the catalog's `exotic`) are left out while any other type
 * can launch; when the claim allows spot and on-demand and both are offered, spot offerings dearer
 * than the cheapest on-demand one are left out. Then spot when the claim allows it and a spot
 * offering is left, else on-demand; before both, when the claim allows `reserved` (a claim pinned to
 * a reservation allows nothing else), its cheapest available reserved offering, alone (Karpenter's
 * reserved > spot > on-demand); types ordered by their cheapest available offering of that capacity type in the
 * allowed zones, at most 60. undefined when nothing is left.
 */
export function chooseLaunch(
  types: readonly InstanceType[],
  requirements: Requirements,
  unavailable: ReadonlySet<string>,
  excludeSpot = false,
): LaunchChoice | undefined {
  const zoneReq = requirements.get(L.LabelTopologyZone);
  const ctReq = requirements.get(L.LabelCapacityType);
  const typeReq = requirements.get(L.LabelInstanceType);
  const reservationReq = requirements.get(L.LabelCapacityReservationID);
  const allowed = (['reserved', 'spot', 'on-demand'] as const).filter((c) => (!ctReq || ctReq.matches(c)) && !(excludeSpot && c === 'spot'));
  const offers = (t: InstanceType, capacityType: string) =>
    t.offerings.filter(
      (o) =>
        o.capacityType === capacityType &&
        o.available &&
        (!zoneReq || zoneReq.matches(o.zone)) &&
        (!reservationReq || capacityType !== 'reserved' || reservationReq.matches(o.reservationId)) &&
        !unavailable.has(offeringKey(t.name, o.zone, capacityType)),
    );
  // Reserved first (KA instance.go `getCapacityType`), only for a claim the scheduler pinned to a
  // reservation (an unpinned one found the reservations full): one (type, zone), the cheapest.
  if (allowed[0] === 'reserved' && reservationReq) {
    let best: { t: InstanceType; o: InstanceType['offerings'][number] } | undefined;
    for (const t of types) {
      if (typeReq && !typeReq.matches(t.name)) continue;
      for (const o of offers(t, 'reserved')) if (o.reservationId && (!best || o.priceUsdPerHour < best.o.priceUsdPerHour)) best = { t, o };
    }
    if (best) {
      const pods = best.t.capacity.pods;
      const efa = best.t.capacity[L.ResourceEFA];
      return {
        capacityType: 'reserved',
        capacityReservation: { id: best.o.reservationId!, type: best.o.reservationType ?? 'default', interruptible: best.o.reservationInterruptible ?? false },
        instanceTypes: [best.t.name],
        zones: [best.o.zone],
        offerings: [{ instanceType: best.t.name, zone: best.o.zone }],
        maxPods: pods === undefined ? {} : { [best.t.name]: pods },
        efaCount: efa ? { [best.t.name]: efa } : {},
      };
    }
  }
  let candidates = types.filter((t) => (!typeReq || typeReq.matches(t.name)) && allowed.some((c) => offers(t, c).length > 0));
  const minValues = requirements.all().some((r) => r.minValues !== undefined);
  if (!minValues && candidates.some((t) => !t.exotic)) candidates = candidates.filter((t) => !t.exotic);
  let maxSpotPrice = Infinity;
  if (!minValues && allowed.includes('spot') && allowed.includes('on-demand')) {
    const onDemand = candidates.flatMap((t) => offers(t, 'on-demand').map((o) => o.priceUsdPerHour));
    if (onDemand.length > 0 && candidates.some((t) => offers(t, 'spot').length > 0)) maxSpotPrice = Math.min(...onDemand);
  }
  for (const capacityType of allowed) {
    if (capacityType === 'reserved') continue;
    const priced: { name: string; price: number; zones: string[] }[] = [];
    for (const t of candidates) {
      const o = offers(t, capacityType).filter((x) => capacityType !== 'spot' || x.priceUsdPerHour <= maxSpotPrice);
      if (o.length === 0) continue;
      priced.push({ name: t.name, price: Math.min(...o.map((x) => x.priceUsdPerHour)), zones: o.map((x) => x.zone) });
    }
    if (priced.length === 0) continue;
    priced.sort((a, b) => a.price - b.price || a.name.localeCompare(b.name));
    const launch = priced.slice(0, MaxLaunchInstanceTypes);
    return {
      capacityType,
      instanceTypes: launch.map((p) => p.name),
      zones: [...new Set(launch.flatMap((p) => p.zones))].sort(),
      offerings: launch.flatMap((p) => p.zones.map((zone) => ({ instanceType: p.name, zone }))),
      maxPods: Object.fromEntries(
        launch.flatMap((p) => {
          const pods = candidates.find((t) => t.name === p.name)?.capacity.pods;
          return pods === undefined ? [] : [[p.name, pods]];
        }),
      ),
      efaCount: Object.fromEntries(
        launch.flatMap((p) => {
          const efa = candidates.find((t) => t.name === p.name)?.capacity[L.ResourceEFA];
          return efa ? [[p.name, efa]] : [];
        }),
      ),
    };
  }
  return undefined;
}

export interface LaunchDeps {
  /** Read when CreateFleet returns: the claim's Launched time is that instant, not the pass's start. */
  clock: Clock;
  cloud: CloudProvider;
  store: NodeClaimStore;
  unavailable: UnavailableOfferings;
  log: Log;
  metrics: MetricsSink;
}

/** Outcome of {@link launchClaim}. */
export type LaunchOutcome =
  | { status: 'launched'; claim: NodeClaim; result: LaunchResult }
  | { status: 'unfulfillable'; claim: NodeClaim; reason: string }
  | { status: 'failed'; claim: NodeClaim; error: Error };

/**
 * Launches `claim` (stored, version current) and records the result on it.
 * @param first the scheduler's launch (used for the first attempt, so it matches `plan`).
 * @param types the claim's compatible instance types (for retries after capacity errors).
 */
export async function launchClaim(
  deps: LaunchDeps,
  claim: NodeClaim,
  nodeClass: EC2NodeClass | undefined,
  types: readonly InstanceType[],
  first: LaunchChoice | undefined,
  now: Date,
): Promise<LaunchOutcome> {
  const requirements = Requirements.fromSpecs(claim.requirements);
  const unavailable = new Set<string>();
  const nowSeconds = Math.floor(now.getTime() / 1000);
  let choice = first ?? chooseLaunch(types, requirements, unavailable);
  let spotAttempts = 0;
  for (let attempt = 0; attempt < MaxLaunchAttempts && choice; attempt++) {
    try {
      const result = await deps.cloud.create(
        claim,
        {
          instanceTypes: choice.instanceTypes,
          zones: choice.zones,
          capacityTypes: [choice.capacityType],
          offerings: choice.offerings,
          maxPods: choice.maxPods,
          efaCount: choice.efaCount,
          ...(choice.capacityReservation ? { capacityReservation: choice.capacityReservation } : {}),
        },
        nodeClass,
      );
      countLaunchFailures(deps, result.launchFailures ?? []);
      if (result.unavailableOfferings?.length) {
        await deps.unavailable.mark(
          result.unavailableOfferings.map((o) => ({ ...o, reason: 'InsufficientCapacityError' })),
          nowSeconds + UnavailableOfferingsTtlSeconds,
        );
      }
      return { status: 'launched', claim: await recordLaunch(deps, claim, result, types, deps.clock.now()), result };
    } catch (err) {
      countLaunchFailures(deps, launchFailuresOf(err));
      if (!(err instanceof InsufficientCapacityError)) {
        deps.log.error('failed launching nodeclaim', { NodeClaim: { name: claim.name }, error: (err as Error).message });
        return { status: 'failed', claim, error: err as Error };
      }
      // The pools EC2 refused (or, when it named none, every pool of this attempt).
      const failed = err.offerings.length
        ? err.offerings
        : choice.instanceTypes.flatMap((t) => choice!.zones.map((zone) => ({ instanceType: t, zone, capacityType: choice!.capacityType })));
      for (const o of failed) unavailable.add(offeringKey(o.instanceType, o.zone, o.capacityType));
      await deps.unavailable.mark(
        failed.map((o) => ({ ...o, reason: 'InsufficientCapacityError' })),
        nowSeconds + UnavailableOfferingsTtlSeconds,
      );
      deps.log.warn('insufficient capacity, retrying with the remaining offerings', {
        NodeClaim: { name: claim.name },
        attempt: attempt + 1,
        unavailable: failed.map((o) => offeringKey(o.instanceType, o.zone, o.capacityType)),
      });
      const previous = choice.capacityType;
      if (previous === 'spot') spotAttempts++;
      choice = chooseLaunch(types, requirements, unavailable, spotAttempts >= MaxSpotAttempts) ?? chooseLaunch(types, requirements, unavailable);
      if (choice && previous === 'spot' && choice.capacityType === 'on-demand') {
        deps.log.info('falling back to on-demand, no spot capacity left', { NodeClaim: { name: claim.name }, 'instance-types': choice.instanceTypes.length });
      }
    }
  }
  const reason = 'all requested instance types were unavailable during launch';
  deps.log.error('failed launching nodeclaim', { NodeClaim: { name: claim.name }, error: `insufficient capacity, ${reason}` });
  await deps.store.delete(claim.name);
  deps.log.info('deleted nodeclaim', { NodeClaim: { name: claim.name }, reason: 'unfulfillable', pods: claim.pods });
  deps.metrics.count(MetricNames.nodeClaimsTerminated, { nodepool: claim.nodePool, reason: 'unfulfillable' });
  return { status: 'unfulfillable', claim, reason };
}

/** One `karpenter_cloudprovider_instance_launch_failures_total` per CreateFleet error entry (KA instance.go: labels zone, zone_id, capacity_type, reason). */
function countLaunchFailures(deps: LaunchDeps, failures: readonly LaunchFailure[]): void {
  // An empty label is left out (a CloudWatch dimension value cannot be empty).
  for (const f of failures)
    deps.metrics.count(MetricNames.launchFailures, {
      ...(f.zone ? { zone: f.zone } : {}),
      ...(f.zoneId ? { zone_id: f.zoneId } : {}),
      capacity_type: f.capacityType,
      reason: f.reason,
    });
}

/** Writes the launch onto the claim (conditional on version; one re-read on conflict); `launchedAt` is when CreateFleet returned. */
async function recordLaunch(deps: LaunchDeps, claim: NodeClaim, r: LaunchResult, types: readonly InstanceType[], launchedAt: Date): Promise<NodeClaim> {
  const type = types.find((t) => t.name === r.instanceType);
  const price = type?.offerings.find((o) => o.zone === r.zone && o.capacityType === r.capacityType)?.priceUsdPerHour;
  // The zone id as Karpenter labels the claim (KA cloudprovider.go, from the subnet): the launch's, else the catalog's.
  const zoneId = r.zoneId ?? type?.offerings.find((o) => o.zone === r.zone && o.zoneId)?.zoneId;
  const apply = (c: NodeClaim): NodeClaim =>
    setCondition(
      {
        ...c,
        instanceId: r.instanceId,
        providerId: providerIdOf(r.zone, r.instanceId),
        instanceType: r.instanceType,
        zone: r.zone,
        capacityType: r.capacityType,
        imageId: r.imageId,
        priceUsdPerHour: r.priceUsdPerHour ?? price,
        labels: {
          ...c.labels,
          [L.LabelInstanceType]: r.instanceType,
          [L.LabelTopologyZone]: r.zone,
          ...(zoneId ? { [L.LabelTopologyZoneID]: zoneId } : {}),
          [L.LabelCapacityType]: r.capacityType,
          // The reservation launched into (KA cloudprovider.go instanceToNodeClaim).
          ...(r.capacityReservation
            ? {
                [L.LabelCapacityReservationID]: r.capacityReservation.id,
                [L.LabelCapacityReservationType]: r.capacityReservation.type,
                [L.LabelCapacityReservationInterruptible]: String(r.capacityReservation.interruptible),
              }
            : {}),
          ...(type?.labels ?? {}),
        },
        ...(type ? { capacity: formatResources(type.capacity), allocatable: formatResources(type.allocatable) } : {}),
        phase: advancePhase(c.phase, 'Launched'),
      },
      'Launched',
      'True',
      launchedAt.toISOString(),
    );
  try {
    return await deps.store.update(apply(claim));
  } catch (err) {
    if (!(err instanceof ConflictError)) throw err;
    const fresh = await deps.store.get(claim.name);
    if (!fresh) throw new NodefleetError(`nodeclaim ${claim.name} was deleted while launching instance ${r.instanceId}`, { cause: err });
    return deps.store.update(apply(fresh));
  }
}
