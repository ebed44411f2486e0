/**
 * The instance catalog: EC2 instance types with Karpenter's node labels, capacity,
 * allocatable and offerings (zone × capacity type with a price) for one region, built from the
 * shipped data in ./data (see data/SOURCES.md) or from the made-up types of a scenario case.
 *
 * Label source: aws/karpenter-provider-aws pkg/providers/instancetype/types.go `computeRequirements`
 * and pkg/apis/v1/labels.go. Pure: no I/O (the JSON is imported), no clock.
 */
import instanceTypeData from './data/instance-types.json' with { type: 'json' };
import priceData from './data/prices.json' with { type: 'json' };
import zoneData from './data/zones.json' with { type: 'json' };
import type { EC2NodeClass } from '../api/nodepool.ts';
import { NotFoundError, ValidationError } from '../api/errors.ts';
import * as L from '../api/labels.ts';
import { parseResources, subtractResources, MiB, type Resources } from '../api/quantity.ts';
import { instancePriceUsdPerHour, type InstanceType, type InstanceTypeInfo, type Offering } from './types.ts';
import { amiFamilyOf, AmiFamilyFeatureTable, computeAllocatable, ephemeralStorageBytes, type CapacityOptions } from './capacity.ts';
import { mergeInstanceTypeInfos, zoneOfferingPrices, type CatalogRefresh, type ShippedRegionData } from './refresh.ts';
import { nodeVolumesUsdPerHour } from './volume.ts';
import { ReservedPriceDivisor, reservationRefusal, type CapacityReservation } from '../api/capacity-reservation.ts';
import { subnetCoverage, zoneAsCovered, type SubnetCoverage, type SubnetInfo } from './subnets.ts';

export * from './capacity.ts';
export * from './subnets.ts';
export * from './types.ts';
export * from './refresh.ts';

/** Every instance type in the shipped data (1 363 rows). */
export const instanceTypeInfos: readonly InstanceTypeInfo[] = instanceTypeData as InstanceTypeInfo[];

const onDemandPrices = (priceData as { onDemand: Record<string, Record<string, number>> }).onDemand;
const spotPrices = (priceData as { spot: Record<string, Record<string, number>> }).spot;
const zonesByRegion = (zoneData as { regions: Record<string, { zoneNames: string[]; zoneIds: string[]; exampleNameToId?: Record<string, string> }> }).regions;

/** An offering currently out of capacity (ICE cache entry). */
export interface UnavailableOffering {
  instanceType: string;
  zone: string;
  capacityType: string;
}

/** Settings that change the catalog (Karpenter's VM_MEMORY_OVERHEAD_PERCENT, RESERVED_ENIS). */
export interface CatalogSettings {
  /** Fraction of EC2 memory hidden by the VM (default 0.075). */
  vmMemoryOverheadPercent?: number;
  /** ENIs kept out of the pod count (default 0). */
  reservedENIs?: number;
}

export interface LoadCatalogOptions {
  /** AWS region, e.g. "us-east-1". */
  region: string;
  /** The EC2NodeClass the nodes launch with (kubelet, block devices, AMI family); default AL2023, 20 GiB. */
  nodeClass?: EC2NodeClass;
  /** Offerings to mark `available: false` (insufficient capacity). */
  unavailable?: UnavailableOffering[];
  settings?: CatalogSettings;
  /**
   * Live data for `region` from the AWS adapter (shared/aws/catalog-refresh.ts): real zone
   * availability per type, account zone ids, current on-demand and per-zone spot prices, new
   * instance types. Anything missing falls back to the shipped data (see {@link zoneOfferingPrices}).
   */
  refreshed?: CatalogRefresh;
  /**
   * The EC2NodeClass's selected subnets (the node class resolver's): offerings exist only in the
   * zones they cover (elsewhere `available: false`, no zone id) and take their zone ids
   * (./subnets.ts). Absent: every zone of the region, zone ids from `refreshed` or the shipped data.
   */
  subnets?: readonly Pick<SubnetInfo, 'zone' | 'zoneId'>[];
  /**
   * The EC2NodeClass's capacity reservations (the node class resolver's, when the ReservedCapacity
   * feature gate is on): each adds one `reserved` offering to its instance type ({@link reservedOfferings}).
   */
  capacityReservations?: readonly CapacityReservation[];
}

/** Regions with both prices and zone data in the shipped catalog. */
export function catalogRegions(): string[] {
  return Object.keys(onDemandPrices)
    .filter((r) => zonesByRegion[r])
    .sort();
}

/** Zone names of a region from data/zones.json. @throws NotFoundError for a region without zone data. */
export function regionZones(region: string): string[] {
  const zones = zonesByRegion[region]?.zoneNames;
  if (!zones) throw new NotFoundError(`no zone data for region "${region}"; known regions: ${catalogRegions().join(', ')}`);
  return [...zones];
}

function isUnavailable(unavailable: readonly UnavailableOffering[] | undefined, instanceType: string, zone: string, capacityType: string): boolean {
  return !!unavailable?.some((u) => u.instanceType === instanceType && u.zone === zone && u.capacityType === capacityType);
}

/** Karpenter's lower-kebab-case for GPU / accelerator names ("A10G" → "a10g"). */
function kebab(s: string): string {
  return s
    .trim()
    .toLowerCase()
    .replace(/[\s_]+/g, '-');
}

/**
 * Node labels for a real instance type (zone and capacity type excluded: they are per offering).
 * Integer labels are decimal strings; memory in MiB, bandwidth in Mbps, local NVMe in GB.
 */
export function labelsFor(info: InstanceTypeInfo, region: string, nodeClass?: EC2NodeClass): Record<string, string> {
  const os = AmiFamilyFeatureTable[amiFamilyOf(nodeClass)].os;
  const labels: Record<string, string> = {
    [L.LabelInstanceType]: info.name,
    [L.LabelArch]: info.arch,
    [L.LabelOS]: os,
    [L.LabelTopologyRegion]: region,
    [L.LabelInstanceCategory]: info.category,
    [L.LabelInstanceFamily]: info.family,
    [L.LabelInstanceGeneration]: String(info.generation),
    [L.LabelInstanceSize]: info.size,
    [L.LabelInstanceCPU]: String(info.vcpu),
    [L.LabelInstanceCPUManufacturer]: info.cpuManufacturer,
    [L.LabelInstanceMemory]: String(info.memoryMiB),
    [L.LabelInstanceHypervisor]: info.hypervisor,
    [L.LabelInstanceEncryptionInTransit]: String(info.encryptionInTransitSupported),
    [L.LabelInstanceCapabilityFlex]: String(info.flex),
  };
  if (info.cpuSustainedClockSpeedMhz != null) labels[L.LabelInstanceCPUSustainedClockSpeedMhz] = String(info.cpuSustainedClockSpeedMhz);
  if (info.networkBandwidthMbps != null) labels[L.LabelInstanceNetworkBandwidth] = String(info.networkBandwidthMbps);
  if (info.ebsBandwidthMbps != null) labels[L.LabelInstanceEBSBandwidth] = String(info.ebsBandwidthMbps);
  if (info.localNvmeGiB != null) labels[L.LabelInstanceLocalNVME] = String(info.localNvmeGiB);
  if (info.gpu) {
    labels[L.LabelInstanceGPUName] = kebab(info.gpu.name);
    labels[L.LabelInstanceGPUManufacturer] = kebab(info.gpu.manufacturer);
    labels[L.LabelInstanceGPUCount] = String(info.gpu.count);
    labels[L.LabelInstanceGPUMemory] = String(info.gpu.memoryMiB);
  }
  if (info.accelerator) {
    labels[L.LabelInstanceAcceleratorName] = kebab(info.accelerator.name);
    labels[L.LabelInstanceAcceleratorManufacturer] = kebab(info.accelerator.manufacturer);
    labels[L.LabelInstanceAcceleratorCount] = String(info.accelerator.count);
  }
  if (os === 'windows') labels[L.LabelWindowsBuild] = windowsBuild(amiFamilyOf(nodeClass));
  return labels;
}

/**
 * Why a value of a `node.kubernetes.io/instance-type` or `karpenter.k8s.aws/instance-family`
 * requirement names nothing the shipped catalog can launch in `region`, or undefined when it
 * names something it can. The catalog holds the types Karpenter's instance-types reference lists
 * (data/SOURCES.md: mac, u-, p2/p3, g2/g3, f1 and similar are left out) and prices them per region.
 * Other keys: always undefined.
 */
export function unknownCatalogName(key: string, value: string, region: string): string | undefined {
  const field = key === L.LabelInstanceType ? 'name' : key === L.LabelInstanceFamily ? 'family' : undefined;
  if (!field) return undefined;
  const what = field === 'name' ? 'instance type' : 'instance family';
  const infos = instanceTypeInfos.filter((i) => i[field] === value);
  if (infos.length === 0) return `${what} "${value}" is not in the catalog (${instanceTypeInfos.length} types, those Karpenter's reference lists)`;
  const shipped = shippedRegionData(region);
  if (!infos.some((i) => shipped.onDemandUsdPerHour[i.name] !== undefined || shipped.spotUsdPerHour[i.name] !== undefined)) {
    return `${what} "${value}" has no price in ${region} in the catalog (not offered there)`;
  }
  return undefined;
}

/** The one line shown wherever a Windows node would be priced: data/prices.json holds Linux/UNIX rates only. */
export const NoWindowsPrices = 'no Windows prices in the catalog';

/**
 * Why the shipped prices do not price nodes of this EC2NodeClass: {@link NoWindowsPrices} for the
 * Windows AMI families (prices.json is Linux/UNIX, shared tenancy; Windows rates include the
 * licence and are not shipped, data/SOURCES.md "Known gaps"), undefined when they do.
 */
export function priceGap(nodeClass?: EC2NodeClass): string | undefined {
  return AmiFamilyFeatureTable[amiFamilyOf(nodeClass)].os === 'windows' ? NoWindowsPrices : undefined;
}

/** node.kubernetes.io/windows-build per Windows family (KA pkg/apis/v1 labels). */
function windowsBuild(family: string): string {
  return ({ Windows2019: '10.0.17763', Windows2022: '10.0.20348', Windows2025: '10.0.26100' } as Record<string, string>)[family] ?? '';
}

/** Extended resources a type advertises (GPUs, Neuron, EFA, branch ENIs), whole units; zero ones left out. */
export function extendedResourcesFor(info: InstanceTypeInfo): Resources {
  const out: Resources = {};
  if (info.gpu) {
    const m = info.gpu.manufacturer.toLowerCase();
    if (m === 'nvidia') out['nvidia.com/gpu'] = info.gpu.count;
    else if (m === 'amd') out['amd.com/gpu'] = info.gpu.count;
  }
  if (info.accelerator && /inferentia|trainium/.test(info.accelerator.name)) {
    out['aws.amazon.com/neuron'] = info.accelerator.count;
    if (info.accelerator.neuronCores) out['aws.amazon.com/neuroncore'] = info.accelerator.neuronCores;
  }
  if (info.efaCount > 0) out[L.ResourceEFA] = info.efaCount;
  if (info.podEniCount > 0) out['vpc.amazonaws.com/pod-eni'] = info.podEniCount;
  return out;
}

/** Capacity options of a catalog load. */
function capacityOptions(opts: { nodeClass?: EC2NodeClass; settings?: CatalogSettings }): CapacityOptions {
  return { nodeClass: opts.nodeClass, vmMemoryOverheadPercent: opts.settings?.vmMemoryOverheadPercent, reservedENIs: opts.settings?.reservedENIs };
}

/** The shipped data of a region in the shape the refresh merge takes. */
export function shippedRegionData(region: string): ShippedRegionData {
  return {
    zoneNames: zonesByRegion[region]?.zoneNames ?? [],
    exampleNameToId: zonesByRegion[region]?.exampleNameToId,
    onDemandUsdPerHour: onDemandPrices[region] ?? {},
    spotUsdPerHour: spotPrices[region] ?? {},
  };
}

/**
 * One real instance type for a region. Offerings: each zone the type is offered in × on-demand
 * and spot where priced (refreshed data first, shipped data for the rest; see
 * {@link zoneOfferingPrices}); none when the type is not priced in the region. Available only
 * where `coverage` (default: of `opts.subnets`) has a subnet.
 * @throws ValidationError when `opts.refreshed` is for another region.
 */
export function instanceTypeFromInfo(
  info: InstanceTypeInfo,
  opts: LoadCatalogOptions,
  shipped: ShippedRegionData = shippedRegionData(opts.region),
  coverage: SubnetCoverage | undefined = opts.subnets && subnetCoverage(opts.subnets),
): InstanceType {
  checkRefreshRegion(opts);
  const shape = { vcpu: info.vcpu, memoryMiB: info.memoryMiB, arch: info.arch as 'amd64' | 'arm64', eni: info.eni, localNvmeGiB: info.localNvmeGiB };
  const { capacity, allocatable, overcommitted } = computeAllocatable(shape, capacityOptions(opts));
  const extended = extendedResourcesFor(info);
  const offerings: Offering[] = [];
  // A node's price is the instance's plus its EBS volumes' (./volume.ts), the same for every offering.
  const volumes = nodeVolumesUsdPerHour(opts.nodeClass);
  const coveredZones = new Set<string>();
  // The shipped name→id pairing was seen in one account; refreshed zone ids replace it.
  for (const { zone, zoneId: catalogZoneId, onDemandUsdPerHour: od, spotUsdPerHour: spot } of zoneOfferingPrices(info.name, shipped, opts.refreshed)) {
    const { covered, zoneId } = zoneAsCovered(coverage, zone, catalogZoneId);
    if (covered) coveredZones.add(zone);
    const id = zoneId ? { zoneId } : {};
    if (od !== undefined) {
      offerings.push({
        zone,
        ...id,
        capacityType: 'on-demand',
        priceUsdPerHour: od + volumes,
        volumeUsdPerHour: volumes,
        available: covered && !overcommitted && !isUnavailable(opts.unavailable, info.name, zone, 'on-demand'),
      });
    }
    if (spot !== undefined) {
      offerings.push({
        zone,
        ...id,
        capacityType: 'spot',
        priceUsdPerHour: spot + volumes,
        volumeUsdPerHour: volumes,
        available: covered && !overcommitted && !isUnavailable(opts.unavailable, info.name, zone, 'spot'),
      });
    }
  }
  if (opts.capacityReservations?.length)
    offerings.push(...reservedOfferings(info.name, offerings, opts.capacityReservations, coveredZones, overcommitted, opts.unavailable));
  return {
    name: info.name,
    labels: labelsFor(info, opts.region, opts.nodeClass),
    capacity: { ...capacity, ...extended },
    allocatable: { ...allocatable, ...extended },
    offerings,
    exotic: !!info.gpu || !!info.accelerator || info.baremetal,
    ...(overcommitted ? { overcommitted } : {}),
  };
}

/**
 * Every instance type with an on-demand or spot price in `region`, in data order (by name
 * within family; types only known from `opts.refreshed` after them, by name). Offerings: each zone
 * the type is offered in × on-demand (on-demand price) and spot (per-zone spot price when
 * refreshed, else the shipped regional average); offerings in `unavailable`, and in zones none of
 * `subnets` covers, have `available: false`. With refreshed zone data, types EC2 does not offer in the region are left out;
 * so are types of an architecture the EC2NodeClass's AMI family has no image for (Windows: amd64).
 * @throws NotFoundError when the region has no zone data (shipped or refreshed).
 * @throws ValidationError when `opts.refreshed` is for another region.
 */
export function loadCatalog(opts: LoadCatalogOptions): InstanceType[] {
  checkRefreshRegion(opts);
  const shipped = shippedRegionData(opts.region);
  const refreshed = opts.refreshed;
  if (!refreshed?.zoneIds && !refreshed?.zonesByType) regionZones(opts.region); // validates the region
  const od = refreshed?.onDemandUsdPerHour ?? {};
  const spot = refreshed?.spotUsdPerHour ?? {};
  const out: InstanceType[] = [];
  const archs = AmiFamilyFeatureTable[amiFamilyOf(opts.nodeClass)].archs;
  const coverage = opts.subnets && subnetCoverage(opts.subnets);
  for (const info of mergeInstanceTypeInfos(instanceTypeInfos, refreshed?.instanceTypes)) {
    const name = info.name;
    if (archs && !archs.includes(info.arch)) continue; // no AMI of the family for this architecture
    const priced =
      shipped.onDemandUsdPerHour[name] !== undefined || shipped.spotUsdPerHour[name] !== undefined || od[name] !== undefined || spot[name] !== undefined;
    if (!priced) continue;
    const it = instanceTypeFromInfo(info, opts, shipped, coverage);
    if (refreshed?.zonesByType && it.offerings.length === 0) continue; // not offered in this region
    out.push(it);
  }
  return out;
}

/**
 * The `reserved` offerings of one type, one per reservation of that type (KA
 * reserved_capacity_resolver.go): in the reservation's zone, priced at the type's on-demand price
 * divided by {@link ReservedPriceDivisor} (plus the node's EBS volumes, as every offering here), with
 * the reservation's remaining count. Available when the type is offered on demand in that zone and
 * the class's subnets cover it (`coveredZones`), the reservation is not `expiring`, nodefleet
 * launches its kind (not a capacity block or interruptible one: `reservationRefusal`), it has room left, and the (type, zone, reserved) offering is
 * not marked insufficient (the ICE cache is per offering, not per reservation as in KA).
 * @param onDemand the type's other offerings (the on-demand ones give the zones and the price).
 */
export function reservedOfferings(
  typeName: string,
  onDemand: readonly Offering[],
  reservations: readonly CapacityReservation[],
  coveredZones: ReadonlySet<string>,
  overcommitted = false,
  unavailable?: readonly UnavailableOffering[],
): Offering[] {
  const out: Offering[] = [];
  for (const r of reservations) {
    if (r.instanceType !== typeName) continue;
    const od = onDemand.find((o) => o.capacityType === 'on-demand' && o.zone === r.availabilityZone);
    const anyOd = onDemand.find((o) => o.capacityType === 'on-demand');
    const volumes = (od ?? anyOd)?.volumeUsdPerHour ?? 0;
    const price = anyOd ? instancePriceUsdPerHour(anyOd) / ReservedPriceDivisor : 0;
    out.push({
      zone: r.availabilityZone,
      ...(od?.zoneId ? { zoneId: od.zoneId } : {}),
      capacityType: 'reserved',
      priceUsdPerHour: price + volumes,
      volumeUsdPerHour: volumes,
      available:
        !!od &&
        coveredZones.has(r.availabilityZone) &&
        !overcommitted &&
        r.state === 'active' &&
        !reservationRefusal(r) &&
        r.availableInstanceCount > 0 &&
        !isUnavailable(unavailable, typeName, r.availabilityZone, 'reserved'),
      reservationId: r.id,
      reservationCapacity: r.availableInstanceCount,
      reservationType: r.reservationType,
      reservationInterruptible: r.interruptible,
    });
  }
  return out;
}

function checkRefreshRegion(opts: LoadCatalogOptions): void {
  if (opts.refreshed && opts.refreshed.region !== opts.region) {
    throw new ValidationError(`refreshed catalog data is for region "${opts.refreshed.region}", not "${opts.region}"`);
  }
}

/** A made-up instance type as written in a scenario case (test/cases/FORMAT.md "instanceTypes"). */
export interface CaseInstanceType {
  name: string;
  /** vCPUs. */
  cpu: number;
  memoryMiB: number;
  /** Max pods (ENI-limited count for the arithmetic). */
  pods?: number;
  arch?: 'amd64' | 'arm64';
  os?: string;
  zones?: string[];
  capacityTypes?: string[];
  /** USD per hour by capacity type, the same in every zone. */
  price?: Record<string, number>;
  /** Replaces zones × capacityTypes × price. */
  offerings?: {
    zone: string;
    capacityType: string;
    price: number;
    available?: boolean;
    /** `reserved`: the reservation's id, remaining instances (default 1) and type (default `default`). */
    reservationId?: string;
    reservationCapacity?: number;
    reservationType?: 'default' | 'capacity-block';
  }[];
  labels?: Record<string, string>;
  /** Extended resources in whole units ({ nvidia.com/gpu: 1 }). */
  resources?: Record<string, string | number>;
  /** Subtracted from capacity instead of Karpenter's arithmetic (quantities). */
  overhead?: Record<string, string | number>;
  /** Used as is when given (quantities). */
  allocatable?: Record<string, string | number>;
}

/**
 * Converts a case's made-up type into an InstanceType. Allocatable: `allocatable` if given; else
 * capacity minus `overhead` if given (capacity = cpu, memoryMiB, pods and root volume as written);
 * else the real AWS arithmetic (7.5 % VM memory overhead, kube-reserved, eviction, root volume
 * of `nodeClass`). Labels: instance-type, arch, os, instance-cpu, instance-memory (and region when
 * given), then the case's `labels` on top. With `opts.subnets`, offerings outside their zones are
 * not available and the others take the subnets' zone ids (./subnets.ts).
 * @throws ValidationError when a capacity type is not on-demand/spot/reserved or a price is missing.
 */
export function instanceTypeFromCase(
  t: CaseInstanceType,
  opts: {
    region?: string;
    nodeClass?: EC2NodeClass;
    unavailable?: UnavailableOffering[];
    settings?: CatalogSettings;
    subnets?: LoadCatalogOptions['subnets'];
  } = {},
): InstanceType {
  const arch = t.arch ?? 'amd64';
  const pods = t.pods ?? 110;
  const shape = { vcpu: t.cpu, memoryMiB: t.memoryMiB, arch, maxPods: pods };
  const extended = parseResources(t.resources as Record<string, string | number> | undefined);
  let capacity: Resources;
  let allocatable: Resources;
  if (t.allocatable || t.overhead) {
    capacity = { cpu: t.cpu * 1000, memory: t.memoryMiB * MiB, 'ephemeral-storage': ephemeralStorageBytes(shape, opts.nodeClass), pods };
    allocatable = t.allocatable ? { ...capacity, ...parseResources(t.allocatable) } : clampZero(subtractResources(capacity, parseResources(t.overhead)));
  } else {
    const computed = computeAllocatable(shape, capacityOptions(opts));
    capacity = computed.capacity;
    allocatable = computed.allocatable;
  }
  const offerings: Offering[] = [];
  const checkType = (ct: string): L.CapacityType => {
    if (ct !== 'on-demand' && ct !== 'spot' && ct !== 'reserved') {
      throw new ValidationError(`instance type ${t.name}: capacity type "${ct}" is not one of on-demand, spot, reserved`);
    }
    return ct;
  };
  const coverage = opts.subnets && subnetCoverage(opts.subnets);
  const push = (zone: string, ct: L.CapacityType, price: number, available: boolean, reservation?: Partial<Offering>) => {
    const { covered, zoneId } = zoneAsCovered(coverage, zone, undefined);
    offerings.push({
      zone,
      ...(zoneId ? { zoneId } : {}),
      capacityType: ct,
      priceUsdPerHour: price,
      available: covered && available && (reservation?.reservationCapacity ?? 1) > 0 && !isUnavailable(opts.unavailable, t.name, zone, ct),
      ...reservation,
    });
  };
  if (t.offerings) {
    for (const o of t.offerings) {
      const ct = checkType(o.capacityType);
      if (ct === 'reserved' && !o.reservationId) throw new ValidationError(`instance type ${t.name}: a reserved offering needs a reservationId`);
      const reservation: Partial<Offering> | undefined =
        ct === 'reserved'
          ? {
              reservationId: o.reservationId,
              reservationCapacity: o.reservationCapacity ?? 1,
              reservationType: o.reservationType ?? 'default',
              reservationInterruptible: false,
            }
          : undefined;
      push(o.zone, ct, o.price, o.available ?? true, reservation);
    }
  } else {
    for (const zone of t.zones ?? []) {
      for (const c of t.capacityTypes ?? ['on-demand']) {
        const ct = checkType(c);
        const price = t.price?.[ct];
        if (price === undefined) throw new ValidationError(`instance type ${t.name}: no price for capacity type ${ct}`);
        push(zone, ct, price, true);
      }
    }
  }
  const labels: Record<string, string> = {
    [L.LabelInstanceType]: t.name,
    [L.LabelArch]: arch,
    [L.LabelOS]: t.os ?? 'linux',
    [L.LabelInstanceCPU]: String(t.cpu),
    [L.LabelInstanceMemory]: String(t.memoryMiB),
    ...(opts.region ? { [L.LabelTopologyRegion]: opts.region } : {}),
    ...(t.labels ?? {}),
  };
  const exotic = Object.keys(extended).some((k) => /gpu|neuron|gaudi/.test(k)) || /metal/.test(labels[L.LabelInstanceSize] ?? '');
  return {
    name: t.name,
    labels,
    capacity: { ...capacity, ...extended },
    allocatable: { ...allocatable, ...extended },
    offerings,
    exotic,
  };
}

function clampZero(r: Resources): Resources {
  const out: Resources = {};
  for (const [k, v] of Object.entries(r)) out[k] = Math.max(0, v);
  return out;
}
export * from './filter.ts';
