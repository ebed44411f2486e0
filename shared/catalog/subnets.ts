/**
 * Where an EC2NodeClass can launch: the zones its selected subnets cover, and the subnet a launch
 * uses in each zone. One home for both rules; the scheduler's offerings (./index.ts `loadCatalog`
 * `subnets`) and the CreateFleet overrides (shared/aws/ec2.ts `buildLaunchRequests`) use them.
 *
 * Source (facts, aws/karpenter-provider-aws): offerings in a zone no subnet of the class covers are
 * not available and carry no zone id, and the instance type's zone requirement is the offered zones
 * intersected with the subnets' zones (pkg/providers/instancetype/offering/base_resolver.go,
 * types.go `computeRequirements`); the zone id comes from the subnet (DescribeSubnets
 * `AvailabilityZoneId`). Per zone, the launch takes the subnet with the most available IP
 * addresses, ties to the smallest subnet id (the class status lists subnets by free IPs descending,
 * then id, and the first of a zone is kept unless a later one has strictly more:
 * pkg/controllers/nodeclass/subnet.go, pkg/providers/subnet/subnet.go `ZonalSubnetsForLaunch`).
 * Not modelled: the provider's in-process deduction of the IPs its own in-flight launches will use.
 * Pure.
 */

/** One subnet a node may launch into (DescribeSubnets, as the node class resolver reports it). */
export interface SubnetInfo {
  subnetId: string;
  /** Availability zone name, e.g. "us-east-1a". */
  zone: string;
  /** Availability zone id (topology.k8s.aws/zone-id), e.g. "use1-az4"; the same zone in every account. */
  zoneId?: string;
  availableIpAddressCount: number;
}

/** The zones a class's subnets cover: zone name → zone id (undefined when no subnet of the zone reports one). */
export type SubnetCoverage = ReadonlyMap<string, string | undefined>;

/** The zones (and their ids) `subnets` cover. */
export function subnetCoverage(subnets: readonly Pick<SubnetInfo, 'zone' | 'zoneId'>[]): SubnetCoverage {
  const out = new Map<string, string | undefined>();
  for (const s of subnets) if (!out.has(s.zone) || (out.get(s.zone) === undefined && s.zoneId)) out.set(s.zone, s.zoneId);
  return out;
}

/**
 * An offering's zone as the class sees it: `covered` false when no subnet is in the zone (the
 * offering is then not available), and the zone id the subnets give (else `fallbackZoneId`, the
 * catalog's). Without coverage (no subnets resolved: offline, a scenario without an account) every
 * zone is covered and keeps `fallbackZoneId`.
 */
export function zoneAsCovered(coverage: SubnetCoverage | undefined, zone: string, fallbackZoneId: string | undefined): { covered: boolean; zoneId?: string } {
  if (!coverage) return { covered: true, ...(fallbackZoneId ? { zoneId: fallbackZoneId } : {}) };
  if (!coverage.has(zone)) return { covered: false };
  const zoneId = coverage.get(zone) ?? fallbackZoneId;
  return { covered: true, ...(zoneId ? { zoneId } : {}) };
}

/**
 * The subnet a launch uses in each zone of `zones` (all zones when absent): the one with the most
 * available IP addresses, ties to the smallest subnet id (see the module doc).
 */
export function subnetPerZone<S extends SubnetInfo>(subnets: readonly S[], zones?: readonly string[]): Map<string, S> {
  const out = new Map<string, S>();
  for (const s of subnets) {
    if (zones && !zones.includes(s.zone)) continue;
    const prev = out.get(s.zone);
    if (
      !prev ||
      s.availableIpAddressCount > prev.availableIpAddressCount ||
      (s.availableIpAddressCount === prev.availableIpAddressCount && s.subnetId < prev.subnetId)
    )
      out.set(s.zone, s);
  }
  return out;
}
