/**
 * Instance catalog types: what the scheduler needs to know about an EC2 instance type.
 */
import type { Resources } from '../api/quantity.ts';
import type { CapacityType } from '../api/labels.ts';

/** One way to buy an instance type: (zone, capacity type) with a price. */
export interface Offering {
  zone: string;
  capacityType: CapacityType;
  /**
   * USD per node-hour: the instance price plus, for real catalog types, the node's EBS volumes
   * (`volumeUsdPerHour`, see catalog/volume.ts). A scenario case's made-up price is used as is.
   */
  priceUsdPerHour: number;
  /** The EBS volumes' share of `priceUsdPerHour` (USD per hour), when included. */
  volumeUsdPerHour?: number;
  /** False while the offering is marked insufficient-capacity (ICE cache) or not sold. */
  available: boolean;
  /** Capacity reservation id for `reserved` offerings. */
  reservationId?: string;
  /**
   * `reserved` offerings: instances the reservation can still take (EC2 `AvailableInstanceCount`,
   * KC `Offering.ReservationCapacity`); the scheduler places at most this many new claims in it.
   */
  reservationCapacity?: number;
  /** `reserved` offerings: the reservation's type (label karpenter.k8s.aws/capacity-reservation-type). */
  reservationType?: 'default' | 'capacity-block';
  /** `reserved` offerings: whether the reservation is interruptible (label karpenter.k8s.aws/capacity-reservation-interruptible). */
  reservationInterruptible?: boolean;
  /** Zone id (topology.k8s.aws/zone-id, e.g. "use1-az4") when known; the name→id pairing is per account. */
  zoneId?: string;
}

/** An instance type ready for scheduling. */
export interface InstanceType {
  /** API name, e.g. "c5a.2xlarge". */
  name: string;
  /**
   * Node labels this type sets (node.kubernetes.io/instance-type, kubernetes.io/arch,
   * karpenter.k8s.aws/instance-*, …) as Karpenter's AWS provider sets them. Zone and capacity
   * type are per offering and not in this map.
   */
  labels: Record<string, string>;
  /** Capacity in canonical units (cpu millicores, memory bytes, pods, ephemeral-storage bytes, extended). */
  capacity: Resources;
  /** Capacity minus kube-reserved, system-reserved and eviction threshold (canonical units). */
  allocatable: Resources;
  offerings: Offering[];
  /** True for GPU / accelerator / metal types: only used when asked for or nothing else fits. */
  exotic?: boolean;
  /**
   * True when the overhead exceeds the capacity (allocatable would be negative, e.g. Bottlerocket
   * kube-reserved memory for a large maxPods on a small type): no pod fits such a node, as
   * Karpenter's `resources.Fits` refuses a negative allocatable, so none of its offerings is available.
   */
  overcommitted?: boolean;
}

/** One row of data/instance-types.json (units in the field names; see data/SOURCES.md). */
export interface InstanceTypeInfo {
  name: string;
  family: string;
  category: string;
  generation: number;
  size: string;
  vcpu: number;
  memoryMiB: number;
  arch: string;
  cpuManufacturer: string;
  cpuSustainedClockSpeedMhz: number | null;
  hypervisor: string;
  maxPods: number;
  eni: { maxEnis: number; ipv4PerEni: number };
  gpu: { count: number; name: string; manufacturer: string; memoryMiB: number } | null;
  accelerator: { count: number; name: string; manufacturer: string; neuronCores?: number } | null;
  localNvmeGiB: number | null;
  networkBandwidthMbps: number | null;
  ebsBandwidthMbps: number | null;
  efaCount: number;
  podEniCount: number;
  encryptionInTransitSupported: boolean;
  flex: boolean;
  burstable: boolean;
  baremetal: boolean;
  /** Karpenter's documented allocatable with default settings (reference only). */
  karpenterAllocatable: { cpuMillicores: number; memoryMiB: number; ephemeralStorageGiB: number; pods: number };
}

/** The cheapest available offering of a type among `offerings`, or undefined. */
export function cheapestOffering(offerings: readonly Offering[]): Offering | undefined {
  let best: Offering | undefined;
  for (const o of offerings) if (o.available && (!best || o.priceUsdPerHour < best.priceUsdPerHour)) best = o;
  return best;
}

/** The instance's own price of an offering (USD per hour): `priceUsdPerHour` without the EBS volumes' share. */
export function instancePriceUsdPerHour(o: Offering): number {
  return Math.round((o.priceUsdPerHour - (o.volumeUsdPerHour ?? 0)) * 1e9) / 1e9;
}
