/**
 * Capacity and allocatable of a node, with the arithmetic of Karpenter's AWS provider
 * (aws/karpenter-provider-aws pkg/providers/instancetype/types.go: `memory`, `pods`,
 * `ENILimitedPods`, `ephemeralStorage`, `kubeReservedResources`, `evictionThreshold`;
 * kubernetes-sigs/karpenter pkg/cloudprovider/types.go `InstanceTypeOverhead`).
 *
 * All figures are in canonical units (see shared/api/quantity.ts): cpu millicores, memory and
 * ephemeral-storage bytes, pods count.
 */
import type { EC2NodeClass, KubeletConfiguration } from '../api/nodepool.ts';
import { GiB, MiB, parseQuantity, parseResource, type Resources } from '../api/quantity.ts';
import { amiFamilyOfSpec, type AmiFamily } from '../api/nodeclass-support.ts';

/**
 * Share of EC2's reported memory hidden by the hypervisor and the kernel (Karpenter setting
 * `VM_MEMORY_OVERHEAD_PERCENT`, default 0.075). Karpenter subtracts it until it has seen a real node.
 */
export const DefaultVMMemoryOverheadPercent = 0.075;

/** Graviton (arm64) instances keep 64 MiB of CMA memory the OS cannot use (KA `memory`). */
export const Arm64ReservedMemoryMiB = 64;

/** Pods when the AMI family does not size pods by ENIs (Windows): the kubelet default. */
export const DefaultMaxPods = 110;

/** Default root volume when the EC2NodeClass has no block device mappings (KA amifamily `DefaultEBS`). */
export const DefaultRootVolumeGiB = 20;

/** kube-reserved memory: `11 MiB × pods + 255 MiB` (KA `kubeReservedResources`). */
export const KubeReservedMemoryPerPodMiB = 11;
export const KubeReservedMemoryBaseMiB = 255;
/** kube-reserved ephemeral-storage: 1 GiB. */
export const KubeReservedEphemeralStorageBytes = GiB;
/** Default hard eviction: memory.available < 100Mi, nodefs.available < 10 %. */
export const EvictionHardMemoryBytes = 100 * MiB;
export const EvictionHardNodeFsPercent = 10;

/**
 * kube-reserved CPU ladder: 6 % of the first core, 1 % of the second, 0.5 % of cores 3–4 and
 * 0.25 % of every further core; each band is truncated to whole millicores (KA, after Bottlerocket).
 */
const KubeReservedCpuBands = [
  { startMilli: 0, endMilli: 1000, share: 0.06 },
  { startMilli: 1000, endMilli: 2000, share: 0.01 },
  { startMilli: 2000, endMilli: 4000, share: 0.005 },
  { startMilli: 4000, endMilli: 2 ** 31, share: 0.0025 },
];

export type { AmiFamily } from '../api/nodeclass-support.ts';

/**
 * What changes Karpenter's math per AMI family (KA pkg/providers/amifamily `FeatureFlags`).
 * - `eniLimitedPodDensity`: pods default to the ENI limit (else 110).
 * - `eniLimitedMemoryOverhead`: kube-reserved memory uses ENI-limited pods even when maxPods is set.
 * - `podsPerCore`: kubelet podsPerCore is honoured.
 */
export interface AmiFamilyFeatures {
  eniLimitedPodDensity: boolean;
  eniLimitedMemoryOverhead: boolean;
  podsPerCore: boolean;
  /** Root volume used for ephemeral storage when no mapping overrides it. */
  defaultEphemeralVolumeGiB: number;
  /** Device name of the volume that backs kubelet's ephemeral storage. */
  ephemeralDeviceName: string;
  os: 'linux' | 'windows';
  /**
   * Architectures the family publishes AMIs for; types of another architecture cannot launch
   * with it (undefined: every architecture). Windows: amd64 only (KA amifamily/windows.go
   * `DefaultAMIs` resolves x86_64 images only; EC2 has no Windows on Graviton).
   */
  archs?: readonly string[];
}

const linuxDefaults: AmiFamilyFeatures = {
  eniLimitedPodDensity: true,
  eniLimitedMemoryOverhead: true,
  podsPerCore: true,
  defaultEphemeralVolumeGiB: DefaultRootVolumeGiB,
  ephemeralDeviceName: '/dev/xvda',
  os: 'linux',
};
const windows: AmiFamilyFeatures = {
  eniLimitedPodDensity: false,
  eniLimitedMemoryOverhead: false,
  podsPerCore: true,
  defaultEphemeralVolumeGiB: 50,
  ephemeralDeviceName: '/dev/sda1',
  os: 'windows',
  archs: ['amd64'],
};

/** Feature flags per AMI family (KA amifamily/al2.go, al2023.go, bottlerocket.go, windows.go, custom.go). */
export const AmiFamilyFeatureTable: Record<AmiFamily, AmiFamilyFeatures> = {
  AL2: linuxDefaults,
  AL2023: linuxDefaults,
  Custom: linuxDefaults,
  // Bottlerocket: 4 GiB OS root + 20 GiB data volume (/dev/xvdb) that holds kubelet's storage;
  // its settings TOML has no podsPerCore, so Karpenter ignores it there.
  Bottlerocket: { ...linuxDefaults, eniLimitedMemoryOverhead: false, podsPerCore: false, ephemeralDeviceName: '/dev/xvdb' },
  Windows2019: windows,
  Windows2022: windows,
  Windows2025: windows,
};

/** The EC2NodeClass's AMI family: `spec.amiFamily`, else from an `alias` term (`al2023@latest`), else AL2023 (shared/api/nodeclass-support.ts). */
export function amiFamilyOf(nodeClass?: EC2NodeClass): AmiFamily {
  return amiFamilyOfSpec(nodeClass?.spec);
}

/** What the arithmetic needs to know about an instance type. */
export interface InstanceShape {
  /** vCPUs. */
  vcpu: number;
  /** Memory EC2 reports, MiB. */
  memoryMiB: number;
  arch: 'amd64' | 'arm64';
  /** ENIs of the default network card and IPv4 addresses per ENI; undefined = pods from `maxPods`. */
  eni?: { maxEnis: number; ipv4PerEni: number };
  /** Max pods when no ENI data is known (made-up types): used as the ENI-limited count. */
  maxPods?: number;
  /** Local NVMe instance store in GB (EC2 `TotalSizeInGB`), used with `instanceStorePolicy: RAID0`. */
  localNvmeGiB?: number | null;
}

/** Knobs that change capacity and allocatable. */
export interface CapacityOptions {
  nodeClass?: EC2NodeClass;
  /** Karpenter `VM_MEMORY_OVERHEAD_PERCENT` (fraction, default 0.075). */
  vmMemoryOverheadPercent?: number;
  /** Karpenter `RESERVED_ENIS` (default 0): ENIs kept out of the pod count. */
  reservedENIs?: number;
}

/**
 * Memory capacity in bytes: EC2 memory (−64 MiB on arm64) minus ceil(overhead% of it) MiB.
 * Example: 16384 MiB amd64 → 16384 − ceil(1228.8) = 15155 MiB.
 */
export function memoryCapacityBytes(memoryMiB: number, arch: string, vmMemoryOverheadPercent = DefaultVMMemoryOverheadPercent): number {
  const mib = arch === 'arm64' ? memoryMiB - Arm64ReservedMemoryMiB : memoryMiB;
  // Karpenter works on the byte value and rounds the overhead up to whole MiB.
  const overheadMiB = Math.ceil((mib * MiB * vmMemoryOverheadPercent) / MiB);
  return (mib - overheadMiB) * MiB;
}

/** ENI-limited pods: usable ENIs × (IPv4 per ENI − 1) + 2, 0 when no ENI is usable (KA `ENILimitedPods`). */
export function eniLimitedPods(shape: InstanceShape, reservedENIs = 0): number {
  if (!shape.eni) return shape.maxPods ?? DefaultMaxPods;
  const usable = Math.max(shape.eni.maxEnis - reservedENIs, 0);
  if (usable === 0) return 0;
  return usable * (shape.eni.ipv4PerEni - 1) + 2;
}

/** Max pods: kubelet maxPods, else ENI-limited (or 110 for Windows), then capped by podsPerCore × vCPU. */
export function maxPodsFor(shape: InstanceShape, opts: CapacityOptions = {}): number {
  const features = AmiFamilyFeatureTable[amiFamilyOf(opts.nodeClass)];
  const kubelet = opts.nodeClass?.spec.kubelet;
  let count: number;
  if (kubelet?.maxPods !== undefined) count = kubelet.maxPods;
  else if (features.eniLimitedPodDensity) count = eniLimitedPods(shape, opts.reservedENIs);
  else count = DefaultMaxPods;
  if ((kubelet?.podsPerCore ?? 0) > 0 && features.podsPerCore) count = Math.min(kubelet!.podsPerCore! * shape.vcpu, count);
  return count;
}

/**
 * Ephemeral storage in bytes: RAID0 instance store when asked for and present; else the root
 * volume mapping's size (`rootVolume: true`, or the family's ephemeral device), else the family's
 * default (20 GiB; Bottlerocket data volume 20 GiB; Windows 50 GiB). KA `ephemeralStorage`.
 */
export function ephemeralStorageBytes(shape: InstanceShape, nodeClass?: EC2NodeClass): number {
  const family = amiFamilyOf(nodeClass);
  const features = AmiFamilyFeatureTable[family];
  if (nodeClass?.spec.instanceStorePolicy === 'RAID0' && shape.localNvmeGiB) {
    return shape.localNvmeGiB * 1e9; // EC2 reports instance store in decimal GB
  }
  const mappings = nodeClass?.spec.blockDeviceMappings ?? [];
  if (mappings.length > 0) {
    const root = mappings.find((m) => m.rootVolume);
    if (root?.ebs?.volumeSize !== undefined) return parseQuantity(root.ebs.volumeSize);
    if (family === 'Custom') {
      const last = mappings[mappings.length - 1].ebs?.volumeSize;
      return last !== undefined ? parseQuantity(last) : DefaultRootVolumeGiB * GiB;
    }
    const device = mappings.find((m) => m.deviceName === features.ephemeralDeviceName);
    if (device?.ebs?.volumeSize !== undefined) return parseQuantity(device.ebs.volumeSize);
  }
  return features.defaultEphemeralVolumeGiB * GiB;
}

/**
 * Node capacity in canonical units: cpu, memory, ephemeral-storage, pods (extended resources
 * are added by the caller).
 */
export function computeCapacity(shape: InstanceShape, opts: CapacityOptions = {}): Resources {
  return {
    cpu: shape.vcpu * 1000,
    memory: memoryCapacityBytes(shape.memoryMiB, shape.arch, opts.vmMemoryOverheadPercent),
    'ephemeral-storage': ephemeralStorageBytes(shape, opts.nodeClass),
    pods: maxPodsFor(shape, opts),
  };
}

/** kube-reserved cpu in millicores for `cpuMilli` of capacity (the ladder above). */
export function kubeReservedCpuMilli(cpuMilli: number): number {
  let total = 0;
  for (const band of KubeReservedCpuBands) {
    if (cpuMilli < band.startMilli) continue;
    const width = cpuMilli < band.endMilli ? cpuMilli - band.startMilli : band.endMilli - band.startMilli;
    total += Math.trunc(width * band.share);
  }
  return total;
}

/**
 * kube-reserved: cpu ladder, memory 11 × pods + 255 MiB, ephemeral-storage 1 GiB, each replaced
 * by the EC2NodeClass `kubelet.kubeReserved` value when set.
 */
export function kubeReserved(cpuMilli: number, pods: number, override?: Record<string, string>): Resources {
  const out: Resources = {
    cpu: kubeReservedCpuMilli(cpuMilli),
    memory: (KubeReservedMemoryPerPodMiB * pods + KubeReservedMemoryBaseMiB) * MiB,
    'ephemeral-storage': KubeReservedEphemeralStorageBytes,
  };
  for (const [k, v] of Object.entries(override ?? {})) out[k] = parseResource(k, v);
  return out;
}

/**
 * One eviction signal ("500Mi" or "5%") against a capacity in bytes. "100%" disables the
 * threshold (kubelet config semantics), so it counts as 0 (KA `computeEvictionSignal`).
 */
function evictionSignalBytes(capacityBytes: number, signal: string): number {
  const s = signal.trim();
  if (s.endsWith('%')) {
    const pct = Number(s.slice(0, -1));
    return pct === 100 ? 0 : Math.ceil((capacityBytes / 100) * pct);
  }
  return parseResource('memory', s);
}

/**
 * Eviction threshold: memory 100Mi and nodefs 10 % of ephemeral storage, overridden by
 * `kubelet.evictionHard` for `memory.available` / `nodefs.available`. `evictionSoft` is only a
 * warning threshold and does not reduce allocatable (KA instancetype/types.go `evictionThreshold`,
 * every family).
 */
export function evictionThreshold(memoryBytes: number, storageBytes: number, kubelet?: KubeletConfiguration): Resources {
  const out: Resources = {
    memory: EvictionHardMemoryBytes,
    'ephemeral-storage': Math.ceil((storageBytes / 100) * EvictionHardNodeFsPercent),
  };
  const hard = kubelet?.evictionHard;
  if (hard?.['memory.available'] !== undefined) out.memory = evictionSignalBytes(memoryBytes, hard['memory.available']);
  if (hard?.['nodefs.available'] !== undefined) out['ephemeral-storage'] = evictionSignalBytes(storageBytes, hard['nodefs.available']);
  return out;
}

/** The overhead subtracted from capacity, by kind (all canonical units). */
export interface NodeOverhead {
  kubeReserved: Resources;
  systemReserved: Resources;
  evictionThreshold: Resources;
}

/** kube-reserved, system-reserved and eviction threshold for a node of this shape. */
export function computeOverhead(shape: InstanceShape, capacity: Resources, opts: CapacityOptions = {}): NodeOverhead {
  const family = amiFamilyOf(opts.nodeClass);
  const features = AmiFamilyFeatureTable[family];
  const kubelet = opts.nodeClass?.spec.kubelet;
  // AL2/AL2023/Custom size kube-reserved memory by the ENI limit even when maxPods is set.
  const podsForMemory = features.eniLimitedMemoryOverhead ? eniLimitedPods(shape, opts.reservedENIs) : capacity.pods;
  const systemReserved: Resources = {};
  for (const [k, v] of Object.entries(kubelet?.systemReserved ?? {})) systemReserved[k] = parseResource(k, v);
  return {
    kubeReserved: kubeReserved(capacity.cpu, podsForMemory, kubelet?.kubeReserved),
    systemReserved,
    evictionThreshold: evictionThreshold(capacity.memory, capacity['ephemeral-storage'], kubelet),
  };
}

/** Whether capacity − overhead is negative for some resource (KA `resources.Fits` then refuses every pod). */
export function overheadExceedsCapacity(capacity: Resources, overhead: NodeOverhead): boolean {
  return Object.keys(capacity).some(
    (k) => capacity[k] - (overhead.kubeReserved[k] ?? 0) - (overhead.systemReserved[k] ?? 0) - (overhead.evictionThreshold[k] ?? 0) < 0,
  );
}

/** capacity − (kubeReserved + systemReserved + evictionThreshold), floored at 0, key by key. */
export function subtractOverhead(capacity: Resources, overhead: NodeOverhead): Resources {
  const out: Resources = { ...capacity };
  for (const part of [overhead.kubeReserved, overhead.systemReserved, overhead.evictionThreshold]) {
    for (const [k, v] of Object.entries(part)) if (k in out) out[k] = Math.max(0, out[k] - v);
  }
  return out;
}

/**
 * Capacity and allocatable of one instance shape under an EC2NodeClass and settings.
 * Reference (c5a.2xlarge, 20 GiB root): capacity cpu 8000m, memory 15155Mi, pods 58,
 * ephemeral-storage 20Gi; allocatable 7910m, 14162Mi, 58, 17Gi.
 */
export function computeAllocatable(
  shape: InstanceShape,
  opts: CapacityOptions = {},
): { capacity: Resources; allocatable: Resources; overhead: NodeOverhead; overcommitted: boolean } {
  const capacity = computeCapacity(shape, opts);
  const overhead = computeOverhead(shape, capacity, opts);
  return { capacity, allocatable: subtractOverhead(capacity, overhead), overhead, overcommitted: overheadExceedsCapacity(capacity, overhead) };
}
