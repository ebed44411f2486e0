/**
 * What a node's EBS volumes cost to run, per hour: part of the price of a node next to the
 * instance itself (a node with a 20 GiB gp3 root volume costs the instance price plus
 * 20 × $0.08 / 730 h ≈ $0.0022/h in us-east-1; ten tiny nodes pay it ten times).
 *
 * Volumes: every EBS mapping of the EC2NodeClass `spec.blockDeviceMappings`; without mappings,
 * the AMI family's default volumes Karpenter launches (KA pkg/providers/amifamily: AL2 / AL2023 /
 * Custom one 20 GiB gp3 `/dev/xvda`; Bottlerocket 4 GiB gp3 OS volume + 20 GiB gp3 data volume;
 * Windows one 50 GiB gp3). A mapping without `volumeSize` (size from the snapshot) counts the
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
import { amiFamilyOf, DefaultRootVolumeGiB } from './capacity.ts';
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

/** The volumes a node of this EC2NodeClass launches with (see the module docs for defaults). */
export function nodeVolumes(nodeClass?: EC2NodeClass): PricedVolume[] {
  const family = amiFamilyOf(nodeClass);
  const mappings = nodeClass?.spec.blockDeviceMappings ?? [];
  if (mappings.length === 0) {
    if (family === 'Bottlerocket') return [{ sizeGiB: 4, volumeType: 'gp3' }, { sizeGiB: DefaultRootVolumeGiB, volumeType: 'gp3' }];
    if (family.startsWith('Windows')) return [{ sizeGiB: 50, volumeType: 'gp3' }];
    return [{ sizeGiB: DefaultRootVolumeGiB, volumeType: 'gp3' }];
  }
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
