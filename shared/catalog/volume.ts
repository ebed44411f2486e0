/**
 * What a node's EBS volumes cost to run, per hour: part of the price of a node next to the
 * instance itself (a node with a 20 GiB gp3 root volume costs the instance price plus
 * 20 × $0.08 / 730 h ≈ $0.0022/h in us-east-1; ten tiny nodes pay it ten times).
 *
 * Volumes: every EBS mapping of the EC2NodeClass `spec.blockDeviceMappings`; without mappings,
 * the AMI family's default volumes Karpenter launches ({@link defaultBlockDeviceMappings}). A mapping without `volumeSize` (size from the snapshot) counts the
 * family default size; without `volumeType`, gp3 (Karpenter's default).
 *
 * Price data: data/ebs-prices.json (US East list prices, source inside): per GB-month, plus gp3
 * IOPS and throughput above the included 3 000 IOPS / 125 MB/s and io1/io2 provisioned IOPS.
 * Other regions use the same rates (most US regions match; others are up to ~20 % dearer), so a
 * volume's share of a node price is an estimate outside us-east-1. Input: quantities as in the
 * EC2NodeClass; output USD per hour.
 */
import type { EC2NodeClass } from '../api/nodepool.ts';
import { parseQuantity } from '../api/quantity.ts';
import { amiFamilyOf, DefaultRootVolumeGiB, type AmiFamily } from './capacity.ts';
import ebsPrices from './data/ebs-prices.json' with { type: 'json' };

interface VolumeRate {
  gbMonth: number;
  iopsMonth?: number;
  freeIops?: number;
  mbpsMonth?: number;
  freeMbps?: number;
}

const rates = ebsPrices.volumeTypes as Record<string, VolumeRate>;
const GiB = 2 ** 30;

/** One EBS volume as priced: size in GiB, type, provisioned IOPS and throughput (MB/s) when given. */
export interface PricedVolume {
  sizeGiB: number;
  volumeType: string;
  iops?: number;
  throughput?: number;
}

type BlockDeviceMappings = NonNullable<EC2NodeClass['spec']['blockDeviceMappings']>;
const DefaultEbs = { volumeSize: `${DefaultRootVolumeGiB}Gi`, volumeType: 'gp3' as const, encrypted: true };

/**
 * The volumes Karpenter launches a family with when the EC2NodeClass has no `blockDeviceMappings`
 * (KA pkg/providers/amifamily `DefaultBlockDeviceMappings`, all gp3 and encrypted): AL2 / AL2023 /
 * Custom one 20 GiB `/dev/xvda` root volume; Bottlerocket a 6 GiB OS volume `/dev/xvda` and a
 * 20 GiB data volume `/dev/xvdb` (kubelet's storage; neither marked root); Windows one 50 GiB `/dev/sda1`.
 */
export function defaultBlockDeviceMappings(family: AmiFamily): BlockDeviceMappings {
  if (family === 'Bottlerocket')
    return [
      { deviceName: '/dev/xvda', ebs: { ...DefaultEbs, volumeSize: '6Gi' } },
      { deviceName: '/dev/xvdb', ebs: { ...DefaultEbs } },
    ];
  if (family.startsWith('Windows')) return [{ deviceName: '/dev/sda1', ebs: { ...DefaultEbs, volumeSize: '50Gi' } }];
  return [{ deviceName: '/dev/xvda', rootVolume: true, ebs: { ...DefaultEbs } }];
}

/** The volumes a node of this EC2NodeClass launches with (see the module docs for defaults). */
export function nodeVolumes(nodeClass?: EC2NodeClass): PricedVolume[] {
  const given = nodeClass?.spec.blockDeviceMappings ?? [];
  const mappings = given.length > 0 ? given : defaultBlockDeviceMappings(amiFamilyOf(nodeClass));
  return mappings
    .filter((m) => m.ebs)
    .map((m) => ({
      sizeGiB: m.ebs!.volumeSize !== undefined ? parseQuantity(m.ebs!.volumeSize) / GiB : DefaultRootVolumeGiB,
      volumeType: m.ebs!.volumeType ?? 'gp3',
      ...(m.ebs!.iops !== undefined ? { iops: m.ebs!.iops } : {}),
      ...(m.ebs!.throughput !== undefined ? { throughput: m.ebs!.throughput } : {}),
    }));
}

/** USD per hour of one volume at the shipped rates. */
export function volumeUsdPerHour(v: PricedVolume): number {
  const r = rates[v.volumeType] ?? rates.gp3;
  let month = v.sizeGiB * r.gbMonth;
  if (r.iopsMonth && v.iops) month += Math.max(0, v.iops - (r.freeIops ?? 0)) * r.iopsMonth;
  if (r.mbpsMonth && v.throughput) month += Math.max(0, v.throughput - (r.freeMbps ?? 0)) * r.mbpsMonth;
  return month / ebsPrices.hoursPerMonth;
}

/** USD per hour of all the EBS volumes a node of this EC2NodeClass launches with. */
export function nodeVolumesUsdPerHour(nodeClass?: EC2NodeClass): number {
  return nodeVolumes(nodeClass).reduce((s, v) => s + volumeUsdPerHour(v), 0);
}
