/**
 * Converts an EC2 DescribeInstanceTypes entry into the catalog's row shape ({@link InstanceTypeInfo},
 * the same fields as shared/catalog/data/instance-types.json), so a type released after the shipped
 * snapshot can be scheduled. Field rules follow Karpenter's labels
 * (aws/karpenter-provider-aws pkg/providers/instancetype/types.go `computeRequirements`).
 *
 * What the API does not say and the shipped data does: branch ENIs for security groups for pods
 * (`podEniCount`, Karpenter's generated limits table; 0 here) and Karpenter's documented allocatable
 * (`karpenterAllocatable`; computed here with our arithmetic and default settings).
 */
import type { InstanceTypeInfo as Ec2InstanceTypeInfo } from '@aws-sdk/client-ec2';
import { computeAllocatable, type InstanceTypeInfo } from '../catalog/index.ts';
import { GiB, MiB } from '../api/quantity.ts';

/** EC2 architecture names → kubernetes.io/arch. Other architectures (i386, *_mac) are not launched. */
const ArchByEc2Arch: Readonly<Record<string, 'amd64' | 'arm64'>> = { x86_64: 'amd64', arm64: 'arm64' };

/** Karpenter's lower-kebab-case for device names ("Inferentia2" → "inferentia2", "Qualcomm AI100" → "qualcomm-ai100"). */
function kebab(s: string): string {
  return s
    .trim()
    .toLowerCase()
    .replace(/[\s_]+/g, '-');
}

/**
 * One catalog row from a DescribeInstanceTypes entry, or undefined when the type cannot run nodes
 * (no vCPU / memory / ENI data, or an architecture other than x86_64 / arm64).
 * - category / generation: the family's leading letters and the number after them ("inf2" → inf, 2);
 * - maxPods: ENIs × (IPv4 per ENI − 1) + 2 on the default network card (the EKS AMI formula);
 * - networkBandwidthMbps: the default card's baseline (Gbps × 1000); ebsBandwidthMbps: EBS maximum;
 * - localNvmeGiB: instance-store total when NVMe is supported; gpu memory is per GPU, in MiB.
 */
export function instanceTypeInfoFromEc2(t: Ec2InstanceTypeInfo): InstanceTypeInfo | undefined {
  const name = t.InstanceType;
  const vcpu = t.VCpuInfo?.DefaultVCpus;
  const memoryMiB = t.MemoryInfo?.SizeInMiB;
  const arch = (t.ProcessorInfo?.SupportedArchitectures ?? []).map((a) => ArchByEc2Arch[a]).find((a) => a);
  const net = t.NetworkInfo;
  const card = net?.NetworkCards?.find((c) => c.NetworkCardIndex === (net.DefaultNetworkCardIndex ?? 0));
  const maxEnis = card?.MaximumNetworkInterfaces ?? net?.MaximumNetworkInterfaces;
  const ipv4PerEni = net?.Ipv4AddressesPerInterface;
  if (!name || !vcpu || !memoryMiB || !arch || !maxEnis || !ipv4PerEni) return undefined;

  const [family, size = ''] = name.split('.');
  const m = /^([a-z]+)(\d+)/.exec(family);
  const baremetal = t.BareMetal === true;
  const gpu = t.GpuInfo?.Gpus?.[0];
  const neuron = t.NeuronInfo?.NeuronDevices?.[0];
  const inference = t.InferenceAcceleratorInfo?.Accelerators?.[0];
  const storage = t.InstanceStorageInfo;
  const clockGhz = t.ProcessorInfo?.SustainedClockSpeedInGhz;
  const baselineGbps = card?.BaselineBandwidthInGbps;
  const ebsMbps = t.EbsInfo?.EbsOptimizedInfo?.MaximumBandwidthInMbps;
  const eni = { maxEnis, ipv4PerEni };
  const maxPods = maxEnis * (ipv4PerEni - 1) + 2;

  let accelerator: InstanceTypeInfo['accelerator'] = null;
  if (neuron?.Name) {
    const count = neuron.Count ?? 0;
    const cores = neuron.CoreInfo?.Count;
    accelerator = { count, name: kebab(neuron.Name), manufacturer: 'aws', ...(cores ? { neuronCores: cores * count } : {}) };
  } else if (inference?.Name) {
    accelerator = { count: inference.Count ?? 0, name: kebab(inference.Name), manufacturer: kebab(inference.Manufacturer ?? '') };
  }

  const { allocatable } = computeAllocatable({ vcpu, memoryMiB, arch, eni, localNvmeGiB: null }, {});
  return {
    name,
    family,
    category: m?.[1] ?? family,
    generation: m ? Number(m[2]) : 0,
    size,
    vcpu,
    memoryMiB,
    arch,
    cpuManufacturer: kebab(t.ProcessorInfo?.Manufacturer ?? ''),
    cpuSustainedClockSpeedMhz: clockGhz ? Math.round(clockGhz * 1000) : null,
    // Karpenter's label is empty for bare metal (no hypervisor).
    hypervisor: baremetal ? '' : (t.Hypervisor ?? ''),
    maxPods,
    eni,
    gpu: gpu
      ? { count: gpu.Count ?? 0, name: kebab(gpu.Name ?? ''), manufacturer: kebab(gpu.Manufacturer ?? ''), memoryMiB: gpu.MemoryInfo?.SizeInMiB ?? 0 }
      : null,
    accelerator,
    localNvmeGiB: storage?.TotalSizeInGB && storage.NvmeSupport !== 'unsupported' ? storage.TotalSizeInGB : null,
    networkBandwidthMbps: baselineGbps ? Math.round(baselineGbps * 1000) : null,
    ebsBandwidthMbps: ebsMbps ?? null,
    efaCount: net?.EfaSupported ? (net.EfaInfo?.MaximumEfaInterfaces ?? 0) : 0,
    podEniCount: 0,
    encryptionInTransitSupported: net?.EncryptionInTransitSupported === true,
    flex: family.includes('-flex'),
    burstable: t.BurstablePerformanceSupported === true,
    baremetal,
    karpenterAllocatable: {
      cpuMillicores: allocatable.cpu ?? 0,
      memoryMiB: Math.floor((allocatable.memory ?? 0) / MiB),
      ephemeralStorageGiB: Math.floor((allocatable['ephemeral-storage'] ?? 0) / GiB),
      pods: allocatable.pods ?? maxPods,
    },
  };
}
