/**
 * Refreshed catalog data (what the AWS adapter shared/aws/catalog-refresh.ts reads from EC2 and the
 * Pricing API) and the pure merge with the shipped data in ./data.
 *
 * Karpenter starts from a generated price table and replaces it with live data
 * (aws/karpenter-provider-aws pkg/providers/pricing/pricing.go: "In the event that a pricing update
 * fails, the previous pricing information is retained and used which may be the static initial
 * pricing data if pricing updates never succeed"). nodefleet does the same per part: every part of a
 * {@link CatalogRefresh} is optional and whatever is missing comes from the shipped data.
 *
 * Pure: no I/O, no clock (fetch times are carried in the data).
 */
import type { InstanceTypeInfo } from './types.ts';

/**
 * Live catalog data for one region. Each part is optional: absent means "not fetched or the fetch
 * failed", and the shipped data is used for it.
 */
export interface CatalogRefresh {
  /** AWS region the data was read in, e.g. "us-east-1". */
  region: string;
  /**
   * Availability-zone name → zone id for this account (DescribeAvailabilityZones, zone-type
   * availability-zone), e.g. { "us-east-1a": "use1-az4" }. Its keys are the region's zones.
   */
  zoneIds?: Record<string, string>;
  /**
   * Instance type → zone names where EC2 offers it (DescribeInstanceTypeOfferings, LocationType
   * availability-zone). A type missing from this map is not offered in the region.
   */
  zonesByType?: Record<string, string[]>;
  /** Instance type → on-demand USD per hour, Linux, shared tenancy (Pricing GetProducts). */
  onDemandUsdPerHour?: Record<string, number>;
  /**
   * Instance type → zone name → current spot USD per hour, Linux/UNIX (DescribeSpotPriceHistory,
   * latest record per type and zone). For a type present here, a zone without a price has no spot
   * offering (as Karpenter's `SpotPrice` returns false once spot prices were fetched).
   */
  spotUsdPerHour?: Record<string, Record<string, number>>;
  /**
   * Instance types described by EC2 (DescribeInstanceTypes). Only types missing from the shipped
   * data are added from here: shipped rows carry fields the API lacks (branch ENIs for
   * security groups for pods, Karpenter's bandwidth table).
   */
  instanceTypes?: InstanceTypeInfo[];
  /** When each part was fetched, epoch milliseconds (for logs and staleness checks). */
  fetchedAtMs?: Partial<Record<CatalogRefreshPart, number>>;
}

/** The independently refreshed parts of a {@link CatalogRefresh}. */
export type CatalogRefreshPart = 'zoneIds' | 'zonesByType' | 'onDemandUsdPerHour' | 'spotUsdPerHour' | 'instanceTypes';

/** The shipped data for one region, as the merge needs it. */
export interface ShippedRegionData {
  /** Zone names from data/zones.json (empty when the region has none). */
  zoneNames: readonly string[];
  /** One account's zone name → id pairing from data/zones.json. */
  exampleNameToId?: Readonly<Record<string, string>>;
  /** Type → on-demand USD/hour from data/prices.json. */
  onDemandUsdPerHour: Readonly<Record<string, number>>;
  /** Type → regional average spot USD/hour from data/prices.json (no per-zone values). */
  spotUsdPerHour: Readonly<Record<string, number>>;
}

/** Where an instance type can be bought in one zone, with the prices that apply there. */
export interface ZoneOfferingPrices {
  zone: string;
  /** topology.k8s.aws/zone-id, when known. */
  zoneId?: string;
  /** On-demand USD/hour; undefined when the type has no on-demand price. */
  onDemandUsdPerHour?: number;
  /** Spot USD/hour in this zone; undefined when the type is not sold as spot here. */
  spotUsdPerHour?: number;
}

/**
 * The zones a type is offered in and the prices there, refreshed data first, shipped data for
 * anything missing:
 * - zones: `zonesByType[type]` (a type absent from a fetched map is offered nowhere), else every
 *   zone of the region (`zoneIds` keys when fetched, else data/zones.json);
 * - zone id: `zoneIds[zone]`, else the shipped example pairing;
 * - on-demand: `onDemandUsdPerHour[type]`, else the shipped price;
 * - spot: `spotUsdPerHour[type][zone]` when the type has fetched spot prices (no price in a zone
 *   means no spot offering there), else the shipped regional average in every zone.
 * Zones are returned in the region's zone order.
 */
export function zoneOfferingPrices(instanceType: string, shipped: ShippedRegionData, refreshed?: CatalogRefresh): ZoneOfferingPrices[] {
  const regionZones = refreshed?.zoneIds ? Object.keys(refreshed.zoneIds).sort() : [...shipped.zoneNames];
  let zones = regionZones;
  if (refreshed?.zonesByType) {
    const offered = refreshed.zonesByType[instanceType] ?? [];
    // Keep region order; a zone EC2 lists but the region's zone list lacks (a local zone) is left
    // out. With no zone list at all (a region missing from data/zones.json), EC2's list is used.
    zones = regionZones.length ? regionZones.filter((z) => offered.includes(z)) : [...offered].sort();
  }
  const onDemand = refreshed?.onDemandUsdPerHour?.[instanceType] ?? shipped.onDemandUsdPerHour[instanceType];
  const liveSpot = refreshed?.spotUsdPerHour?.[instanceType];
  const shippedSpot = shipped.spotUsdPerHour[instanceType];
  return zones.map((zone) => {
    const zoneId = refreshed?.zoneIds?.[zone] ?? shipped.exampleNameToId?.[zone];
    const spot = liveSpot ? liveSpot[zone] : shippedSpot;
    return {
      zone,
      ...(zoneId ? { zoneId } : {}),
      ...(onDemand !== undefined ? { onDemandUsdPerHour: onDemand } : {}),
      ...(spot !== undefined ? { spotUsdPerHour: spot } : {}),
    };
  });
}

/**
 * The shipped instance types plus refreshed ones the shipped data does not know (new types),
 * the new ones sorted by name after the shipped ones. Shipped rows are kept as they are.
 */
export function mergeInstanceTypeInfos(shipped: readonly InstanceTypeInfo[], refreshed?: readonly InstanceTypeInfo[]): readonly InstanceTypeInfo[] {
  if (!refreshed?.length) return shipped;
  const known = new Set(shipped.map((i) => i.name));
  const added = refreshed.filter((i) => !known.has(i.name)).sort((a, b) => a.name.localeCompare(b.name));
  return added.length ? [...shipped, ...added] : shipped;
}
