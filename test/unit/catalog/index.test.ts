import { describe, expect, it } from 'vitest';
import {
  computeAllocatable,
  instanceTypeFromCase,
  instanceTypeFromInfo,
  instanceTypeInfos,
  kubeReservedCpuMilli,
  loadCatalog,
  NoWindowsPrices,
  priceGap,
  type InstanceTypeInfo,
} from '../../../shared/catalog/index.ts';
import { formatResources, GiB, MiB } from '../../../shared/api/quantity.ts';
import type { EC2NodeClass } from '../../../shared/api/nodepool.ts';
import { instancePriceUsdPerHour } from '../../../shared/catalog/types.ts';

function nodeClass(spec: Partial<EC2NodeClass['spec']> = {}): EC2NodeClass {
  return {
    apiVersion: 'karpenter.k8s.aws/v1',
    kind: 'EC2NodeClass',
    metadata: { name: 'default' },
    spec: { amiSelectorTerms: [{ alias: 'al2023@latest' }], subnetSelectorTerms: [{ id: 'subnet-1' }], securityGroupSelectorTerms: [{ id: 'sg-1' }], ...spec },
  };
}

function shapeOf(info: InstanceTypeInfo) {
  return { vcpu: info.vcpu, memoryMiB: info.memoryMiB, arch: info.arch as 'amd64' | 'arm64', eni: info.eni, localNvmeGiB: info.localNvmeGiB };
}

const c5a2xl = instanceTypeInfos.find((i) => i.name === 'c5a.2xlarge')!;

describe('computeAllocatable', () => {
  it('matches the live c5a.2xlarge reference (20 GiB root volume)', () => {
    const { capacity, allocatable } = computeAllocatable(shapeOf(c5a2xl));
    expect(formatResources(capacity)).toEqual({ cpu: '8', memory: '15155Mi', pods: '58', 'ephemeral-storage': '20Gi' });
    expect(formatResources(allocatable)).toEqual({ cpu: '7910m', memory: '14162Mi', pods: '58', 'ephemeral-storage': '17Gi' });
  });

  it('follows the kube-reserved CPU ladder', () => {
    expect(kubeReservedCpuMilli(1000)).toBe(60);
    expect(kubeReservedCpuMilli(2000)).toBe(70);
    expect(kubeReservedCpuMilli(4000)).toBe(80);
    expect(kubeReservedCpuMilli(8000)).toBe(90);
    expect(kubeReservedCpuMilli(96000)).toBe(310);
  });

  it("equals Karpenter's documented allocatable for every type in the catalog", () => {
    const differ: string[] = [];
    for (const info of instanceTypeInfos) {
      const { allocatable } = computeAllocatable(shapeOf(info));
      const ref = info.karpenterAllocatable;
      const got = { cpu: allocatable.cpu, memoryMiB: allocatable.memory / MiB, storageGiB: allocatable['ephemeral-storage'] / GiB, pods: allocatable.pods };
      const want = { cpu: ref.cpuMillicores, memoryMiB: ref.memoryMiB, storageGiB: ref.ephemeralStorageGiB, pods: ref.pods };
      if (JSON.stringify(got) !== JSON.stringify(want)) differ.push(`${info.name}: got ${JSON.stringify(got)} want ${JSON.stringify(want)}`);
    }
    expect(differ).toEqual([]);
  });

  it('uses the root volume size from the EC2NodeClass', () => {
    const nc = nodeClass({ blockDeviceMappings: [{ deviceName: '/dev/xvda', rootVolume: true, ebs: { volumeSize: '100Gi' } }] });
    const { capacity, allocatable } = computeAllocatable(shapeOf(c5a2xl), { nodeClass: nc });
    expect(capacity['ephemeral-storage']).toBe(100 * GiB);
    // 100Gi − 1Gi kube-reserved − 10Gi nodefs eviction
    expect(allocatable['ephemeral-storage']).toBe(89 * GiB);
  });

  it('honours kubelet maxPods, podsPerCore, kubeReserved, systemReserved and evictionHard', () => {
    const nc = nodeClass({
      kubelet: {
        maxPods: 110,
        systemReserved: { cpu: '100m', memory: '100Mi' },
        kubeReserved: { cpu: '200m' },
        evictionHard: { 'memory.available': '5%', 'nodefs.available': '15%' },
      },
    });
    const { capacity, allocatable } = computeAllocatable(shapeOf(c5a2xl), { nodeClass: nc });
    expect(capacity.pods).toBe(110);
    expect(allocatable.cpu).toBe(8000 - 200 - 100);
    // AL2023 keeps kube-reserved memory at the ENI limit (58 pods → 893Mi) even with maxPods set;
    // systemReserved 100Mi; eviction 5 % of 15155Mi = 794558464 bytes (replaces the 100Mi default).
    expect(allocatable.memory).toBe(15155 * MiB - 893 * MiB - 100 * MiB - 794558464);
    expect(allocatable['ephemeral-storage']).toBe(20 * GiB - GiB - Math.ceil(20 * GiB * 0.15));

    const perCore = computeAllocatable(shapeOf(c5a2xl), { nodeClass: nodeClass({ kubelet: { podsPerCore: 4 } }) });
    expect(perCore.capacity.pods).toBe(32);
  });

  it('applies VM memory overhead and reserved ENIs settings', () => {
    const { capacity } = computeAllocatable(shapeOf(c5a2xl), { vmMemoryOverheadPercent: 0.1, reservedENIs: 1 });
    expect(capacity.memory).toBe((16384 - 1639) * MiB);
    expect(capacity.pods).toBe(3 * 14 + 2);
  });

  it('gives Windows 110 pods and Bottlerocket kube-reserved by its resolved pods', () => {
    const win = computeAllocatable(shapeOf(c5a2xl), { nodeClass: nodeClass({ amiFamily: 'Windows2022' }) });
    expect(win.capacity.pods).toBe(110);
    expect(win.capacity['ephemeral-storage']).toBe(50 * GiB);
    const br = computeAllocatable(shapeOf(c5a2xl), {
      nodeClass: nodeClass({ amiSelectorTerms: [{ alias: 'bottlerocket@latest' }], kubelet: { maxPods: 20 } }),
    });
    expect(br.allocatable.memory).toBe(15155 * MiB - (11 * 20 + 255) * MiB - 100 * MiB);
    // Bottlerocket ignores podsPerCore, AL2023 honours it; evictionSoft reduces allocatable for neither (KA v1.15 evictionThreshold).
    const soft = { podsPerCore: 2, evictionSoft: { 'memory.available': '500Mi' }, evictionSoftGracePeriod: { 'memory.available': '1m' } };
    const brSoft = computeAllocatable(shapeOf(c5a2xl), { nodeClass: nodeClass({ amiFamily: 'Bottlerocket', kubelet: soft }) });
    expect(brSoft.capacity.pods).toBe(58);
    expect(brSoft.overhead.evictionThreshold.memory).toBe(100 * MiB);
    const alSoft = computeAllocatable(shapeOf(c5a2xl), { nodeClass: nodeClass({ kubelet: soft }) });
    expect(alSoft.capacity.pods).toBe(16);
    expect(alSoft.overhead.evictionThreshold.memory).toBe(100 * MiB);
  });

  it('a type whose overhead exceeds its capacity offers nothing (KA resources.Fits refuses a negative allocatable)', () => {
    const t4gSmall = instanceTypeInfos.find((i) => i.name === 't4g.small')!;
    // Bottlerocket sizes kube-reserved memory by maxPods: 11 Mi × 250 + 255 Mi is more than 2 GiB.
    const br = instanceTypeFromInfo(t4gSmall, {
      region: 'us-west-2',
      nodeClass: nodeClass({ amiSelectorTerms: [{ alias: 'bottlerocket@latest' }], kubelet: { maxPods: 250 } }),
    });
    expect(br.overcommitted).toBe(true);
    expect(br.offerings.length).toBeGreaterThan(0);
    expect(br.offerings.filter((o) => o.available)).toEqual([]);
    // AL2023 sizes it by the ENI-limited pods (11), so the same class fits.
    const al = instanceTypeFromInfo(t4gSmall, { region: 'us-west-2', nodeClass: nodeClass({ kubelet: { maxPods: 250 } }) });
    expect(al.overcommitted).toBeUndefined();
    expect(al.offerings.some((o) => o.available)).toBe(true);
  });
});

describe('loadCatalog', () => {
  const catalog = loadCatalog({ region: 'ap-northeast-2' });
  const c5a = catalog.find((t) => t.name === 'c5a.2xlarge')!;

  it('lists priced types with Karpenter labels', () => {
    expect(catalog.length).toBeGreaterThan(300);
    expect(c5a.labels).toMatchObject({
      'node.kubernetes.io/instance-type': 'c5a.2xlarge',
      'kubernetes.io/arch': 'amd64',
      'kubernetes.io/os': 'linux',
      'topology.kubernetes.io/region': 'ap-northeast-2',
      'karpenter.k8s.aws/instance-category': 'c',
      'karpenter.k8s.aws/instance-family': 'c5a',
      'karpenter.k8s.aws/instance-generation': '5',
      'karpenter.k8s.aws/instance-size': '2xlarge',
      'karpenter.k8s.aws/instance-cpu': '8',
      'karpenter.k8s.aws/instance-memory': '16384',
      'karpenter.k8s.aws/instance-hypervisor': 'nitro',
    });
    expect(c5a.labels['topology.kubernetes.io/zone']).toBeUndefined();
    expect(c5a.exotic).toBe(false);
    expect(catalog.find((t) => t.name === 'g4dn.xlarge')?.exotic).toBe(true);
    expect(catalog.find((t) => t.name === 'g4dn.xlarge')?.capacity['nvidia.com/gpu']).toBe(1);
  });

  it('offers each zone on-demand and spot', () => {
    expect(c5a.offerings).toHaveLength(8);
    expect(
      c5a.offerings
        .filter((o) => o.capacityType === 'on-demand')
        .map((o) => o.zone)
        .sort(),
    ).toEqual(['ap-northeast-2a', 'ap-northeast-2b', 'ap-northeast-2c', 'ap-northeast-2d']);
    expect(instancePriceUsdPerHour(c5a.offerings.find((o) => o.capacityType === 'on-demand')!)).toBe(0.344);
    expect(instancePriceUsdPerHour(c5a.offerings.find((o) => o.capacityType === 'spot')!)).toBe(0.135267);
    // The node price adds the default 20 GiB gp3 root volume: 20 × $0.08 / 730 h.
    expect(c5a.offerings.find((o) => o.capacityType === 'spot')!.priceUsdPerHour).toBeCloseTo(0.135267 + (20 * 0.08) / 730, 9);
    expect(formatResources(c5a.allocatable)).toMatchObject({ cpu: '7910m', memory: '14162Mi', pods: '58', 'ephemeral-storage': '17Gi' });
  });

  it('marks unavailable offerings', () => {
    const cat = loadCatalog({ region: 'ap-northeast-2', unavailable: [{ instanceType: 'c5a.2xlarge', zone: 'ap-northeast-2a', capacityType: 'spot' }] });
    const offs = cat.find((t) => t.name === 'c5a.2xlarge')!.offerings;
    expect(offs.filter((o) => !o.available)).toEqual([
      {
        zone: 'ap-northeast-2a',
        zoneId: 'apne2-az1',
        capacityType: 'spot',
        priceUsdPerHour: 0.135267 + (20 * 0.08) / 730,
        volumeUsdPerHour: (20 * 0.08) / 730,
        available: false,
      },
    ]);
  });

  it('leaves out the architectures a Windows AMI family has no image for, and says it has no Windows prices', () => {
    const windows = nodeClass({ amiSelectorTerms: [{ alias: 'windows2022@latest' }] });
    const types = loadCatalog({ region: 'ap-northeast-2', nodeClass: windows });
    expect(new Set(types.map((t) => t.labels['kubernetes.io/arch']))).toEqual(new Set(['amd64']));
    expect(new Set(catalog.map((t) => t.labels['kubernetes.io/arch']))).toEqual(new Set(['amd64', 'arm64']));
    expect(priceGap(windows)).toBe(NoWindowsPrices);
    expect(priceGap(nodeClass())).toBeUndefined();
    expect(priceGap(undefined)).toBeUndefined();
  });

  it('rejects a region without zone data', () => {
    expect(() => loadCatalog({ region: 'mars-north-1' })).toThrow(/no zone data/);
  });
});

describe('instanceTypeFromCase', () => {
  const base = {
    name: 'small',
    cpu: 2,
    memoryMiB: 4096,
    pods: 110,
    arch: 'amd64' as const,
    os: 'linux',
    zones: ['us-east-1a', 'us-east-1b'],
    capacityTypes: ['on-demand', 'spot'],
    price: { 'on-demand': 0.1, spot: 0.03 },
  };

  it('uses the AWS arithmetic by default', () => {
    const t = instanceTypeFromCase(base);
    // 4096 − ceil(307.2) = 3788Mi; − (11×110+255 = 1465Mi) − 100Mi = 2223Mi
    expect(formatResources(t.allocatable)).toEqual({ cpu: '1930m', memory: '2223Mi', pods: '110', 'ephemeral-storage': '17Gi' });
    expect(t.offerings).toHaveLength(4);
    expect(t.offerings.find((o) => o.capacityType === 'spot')?.priceUsdPerHour).toBe(0.03);
    expect(t.labels['node.kubernetes.io/instance-type']).toBe('small');
  });

  it('subtracts a given overhead, or takes allocatable as is', () => {
    const o = instanceTypeFromCase({ ...base, overhead: { cpu: '100m', memory: '200Mi' } });
    expect(o.allocatable.cpu).toBe(1900);
    expect(o.allocatable.memory).toBe(3896 * MiB);
    const a = instanceTypeFromCase({ ...base, allocatable: { cpu: '2', memory: '4Gi' }, resources: { 'nvidia.com/gpu': 1 } });
    expect(a.allocatable).toMatchObject({ cpu: 2000, memory: 4 * GiB, 'nvidia.com/gpu': 1 });
    expect(a.exotic).toBe(true);
  });

  it('takes explicit offerings and the unavailable list', () => {
    const t = instanceTypeFromCase(
      { ...base, offerings: [{ zone: 'us-east-1a', capacityType: 'spot', price: 0.031 }] },
      { unavailable: [{ instanceType: 'small', zone: 'us-east-1a', capacityType: 'spot' }] },
    );
    expect(t.offerings).toEqual([{ zone: 'us-east-1a', capacityType: 'spot', priceUsdPerHour: 0.031, available: false }]);
  });
});
