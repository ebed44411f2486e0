import { beforeEach, describe, expect, it } from 'vitest';
import { mockClient } from 'aws-sdk-client-mock';
import {
  DescribeAvailabilityZonesCommand,
  DescribeInstanceTypeOfferingsCommand,
  DescribeInstanceTypesCommand,
  DescribeSpotPriceHistoryCommand,
  EC2Client,
  type InstanceTypeInfo as Ec2InstanceTypeInfo,
} from '@aws-sdk/client-ec2';
import { GetProductsCommand, PricingClient } from '@aws-sdk/client-pricing';
import {
  CatalogRefresher,
  CatalogRefreshIntervalMs,
  CatalogRefreshRetryAfterFailureMs,
  createPricingClient,
  fetchOnDemandPrices,
  fetchSpotPrices,
  fetchZonesByType,
  parsePriceList,
  pricingApiRegion,
  type CatalogEc2Api,
  type CatalogPricingApi,
  type CatalogRefresherOptions,
} from '../../../shared/aws/catalog-refresh.ts';
import { instanceTypeInfoFromEc2 } from '../../../shared/aws/catalog-instance-types.ts';
import { instancePriceUsdPerHour, instanceTypeInfos, loadCatalog, type CatalogRefreshPart } from '../../../shared/catalog/index.ts';
import { NodefleetError, TransientError } from '../../../shared/api/errors.ts';

// ---- realistic responses (shapes as the SDK returns them after deserialisation) ----

/** One Pricing GetProducts `PriceList` entry (a JSON string, as the API returns it). */
function priceListItem(instanceType: string, usd: string, sku: string, family = 'Compute Instance'): string {
  return JSON.stringify({
    product: {
      productFamily: family,
      attributes: {
        instanceType,
        regionCode: 'us-east-1',
        location: 'US East (N. Virginia)',
        locationType: 'AWS Region',
        operatingSystem: 'Linux',
        tenancy: 'Shared',
        preInstalledSw: 'NA',
        capacitystatus: 'Used',
        marketoption: 'OnDemand',
        licenseModel: 'No License required',
        operation: 'RunInstances',
        usagetype: `BoxUsage:${instanceType}`,
        servicecode: 'AmazonEC2',
        currentGeneration: 'Yes',
      },
      sku,
    },
    serviceCode: 'AmazonEC2',
    terms: {
      OnDemand: {
        [`${sku}.JRTCKXETXF`]: {
          offerTermCode: 'JRTCKXETXF',
          sku,
          effectiveDate: '2026-11-01T00:00:00Z',
          termAttributes: {},
          priceDimensions: {
            [`${sku}.JRTCKXETXF.6YS6EN2CT7`]: {
              rateCode: `${sku}.JRTCKXETXF.6YS6EN2CT7`,
              description: `$${Number(usd)} per On Demand Linux ${instanceType} Instance Hour`,
              unit: 'Hrs',
              beginRange: '0',
              endRange: 'Inf',
              appliesTo: [],
              pricePerUnit: { USD: usd },
            },
          },
        },
      },
    },
    version: '20261120183519',
    publicationDate: '2026-11-20T18:35:19Z',
  });
}

const spot = (InstanceType: string, AvailabilityZone: string, SpotPrice: string, at = '2026-11-30T09:02:11.000Z') => ({
  AvailabilityZone,
  InstanceType: InstanceType as any,
  ProductDescription: 'Linux/UNIX' as const,
  SpotPrice,
  Timestamp: new Date(at),
});

/** m5.large as DescribeInstanceTypes describes it. */
const m5Large: Ec2InstanceTypeInfo = {
  InstanceType: 'm5.large',
  CurrentGeneration: true,
  SupportedUsageClasses: ['on-demand', 'spot'],
  SupportedRootDeviceTypes: ['ebs'],
  SupportedVirtualizationTypes: ['hvm'],
  BareMetal: false,
  Hypervisor: 'nitro',
  ProcessorInfo: { SupportedArchitectures: ['x86_64'], SustainedClockSpeedInGhz: 3.1, Manufacturer: 'Intel' },
  VCpuInfo: { DefaultVCpus: 2, DefaultCores: 1, DefaultThreadsPerCore: 2 },
  MemoryInfo: { SizeInMiB: 8192 },
  InstanceStorageSupported: false,
  EbsInfo: {
    EbsOptimizedSupport: 'default',
    EncryptionSupport: 'supported',
    EbsOptimizedInfo: { BaselineBandwidthInMbps: 650, BaselineIops: 3600, MaximumBandwidthInMbps: 4750, MaximumIops: 18750 },
    NvmeSupport: 'required',
  },
  NetworkInfo: {
    NetworkPerformance: 'Up to 10 Gigabit',
    MaximumNetworkInterfaces: 3,
    MaximumNetworkCards: 1,
    DefaultNetworkCardIndex: 0,
    NetworkCards: [
      { NetworkCardIndex: 0, NetworkPerformance: 'Up to 10 Gigabit', MaximumNetworkInterfaces: 3, BaselineBandwidthInGbps: 0.75, PeakBandwidthInGbps: 10 },
    ],
    Ipv4AddressesPerInterface: 10,
    Ipv6AddressesPerInterface: 10,
    Ipv6Supported: true,
    EnaSupport: 'required',
    EfaSupported: false,
    EncryptionInTransitSupported: false,
  },
  HibernationSupported: true,
  BurstablePerformanceSupported: false,
  DedicatedHostsSupported: true,
  AutoRecoverySupported: true,
  SupportedBootModes: ['legacy-bios', 'uefi'],
};

/** inf2.xlarge: one Inferentia2 device with two NeuronCores. */
const inf2Xlarge: Ec2InstanceTypeInfo = {
  InstanceType: 'inf2.xlarge',
  BareMetal: false,
  Hypervisor: 'nitro',
  ProcessorInfo: { SupportedArchitectures: ['x86_64'], SustainedClockSpeedInGhz: 3.6, Manufacturer: 'AMD' },
  VCpuInfo: { DefaultVCpus: 4 },
  MemoryInfo: { SizeInMiB: 16384 },
  EbsInfo: { EbsOptimizedInfo: { BaselineBandwidthInMbps: 1250, MaximumBandwidthInMbps: 10000 } },
  NetworkInfo: {
    MaximumNetworkInterfaces: 4,
    DefaultNetworkCardIndex: 0,
    NetworkCards: [{ NetworkCardIndex: 0, MaximumNetworkInterfaces: 4, BaselineBandwidthInGbps: 2.083, PeakBandwidthInGbps: 15 }],
    Ipv4AddressesPerInterface: 15,
    EfaSupported: false,
    EncryptionInTransitSupported: true,
  },
  NeuronInfo: {
    NeuronDevices: [{ Count: 1, Name: 'Inferentia2', CoreInfo: { Count: 2, Version: 2 }, MemoryInfo: { SizeInMiB: 32768 } }],
    TotalNeuronDeviceMemoryInMiB: 32768,
  },
  BurstablePerformanceSupported: false,
};

/** A type released after the shipped snapshot (not in instance-types.json). */
const m9aLarge: Ec2InstanceTypeInfo = {
  InstanceType: 'm9a.large' as any,
  BareMetal: false,
  Hypervisor: 'nitro',
  ProcessorInfo: { SupportedArchitectures: ['x86_64'], SustainedClockSpeedInGhz: 4.5, Manufacturer: 'AMD' },
  VCpuInfo: { DefaultVCpus: 2 },
  MemoryInfo: { SizeInMiB: 8192 },
  EbsInfo: { EbsOptimizedInfo: { MaximumBandwidthInMbps: 10000 } },
  NetworkInfo: {
    MaximumNetworkInterfaces: 3,
    DefaultNetworkCardIndex: 0,
    NetworkCards: [{ NetworkCardIndex: 0, MaximumNetworkInterfaces: 3, BaselineBandwidthInGbps: 0.937 }],
    Ipv4AddressesPerInterface: 20,
    EfaSupported: false,
    EncryptionInTransitSupported: true,
  },
  BurstablePerformanceSupported: false,
};

const usEast1Zones = [
  { ZoneName: 'us-east-1a', ZoneId: 'use1-az6', ZoneType: 'availability-zone', State: 'available' as const, RegionName: 'us-east-1' },
  { ZoneName: 'us-east-1b', ZoneId: 'use1-az1', ZoneType: 'availability-zone', State: 'available' as const, RegionName: 'us-east-1' },
  { ZoneName: 'us-east-1c', ZoneId: 'use1-az2', ZoneType: 'availability-zone', State: 'available' as const, RegionName: 'us-east-1' },
  { ZoneName: 'us-east-1d', ZoneId: 'use1-az4', ZoneType: 'availability-zone', State: 'available' as const, RegionName: 'us-east-1' },
  { ZoneName: 'us-east-1e', ZoneId: 'use1-az3', ZoneType: 'availability-zone', State: 'available' as const, RegionName: 'us-east-1' },
  { ZoneName: 'us-east-1f', ZoneId: 'use1-az5', ZoneType: 'availability-zone', State: 'available' as const, RegionName: 'us-east-1' },
];

const offering = (InstanceType: string, Location: string) => ({ InstanceType: InstanceType as any, LocationType: 'availability-zone' as const, Location });

const NOW = Date.parse('2026-11-30T09:30:00Z');

function clients() {
  const ec2Client = new EC2Client({ region: 'us-east-1' });
  const pricingClient = new PricingClient({ region: 'us-east-1' });
  // Type check: the real clients satisfy the narrow interfaces.
  const ec2: CatalogEc2Api = ec2Client;
  const pricing: CatalogPricingApi = pricingClient;
  return { ec2, pricing, ec2Mock: mockClient(ec2Client), pricingMock: mockClient(pricingClient) };
}

/** All calls answered with a small, consistent us-east-1 picture. */
function mockUsEast1(c: ReturnType<typeof clients>) {
  c.ec2Mock.on(DescribeAvailabilityZonesCommand).resolves({ AvailabilityZones: usEast1Zones });
  c.ec2Mock
    .on(DescribeInstanceTypeOfferingsCommand)
    .resolvesOnce({
      // m5.large is not offered in us-east-1e (as in real accounts for many older types).
      InstanceTypeOfferings: ['a', 'b', 'c', 'd', 'f'].map((z) => offering('m5.large', `us-east-1${z}`)),
      NextToken: 'page-2',
    })
    .resolvesOnce({ InstanceTypeOfferings: [offering('c6g.large', 'us-east-1a'), offering('c6g.large', 'us-east-1b'), offering('m9a.large', 'us-east-1a')] });
  c.pricingMock
    .on(GetProductsCommand)
    .resolvesOnce({ FormatVersion: 'aws_v1', PriceList: [priceListItem('m5.large', '0.0960000000', '2WTMVJ4RZ2FKNWFB')] as any, NextToken: 'p2' })
    .resolvesOnce({ FormatVersion: 'aws_v1', PriceList: [priceListItem('m9a.large', '0.1290000000', '9QH4Z3A7MEXN2KTR')] as any });
  c.ec2Mock.on(DescribeSpotPriceHistoryCommand).resolves({
    SpotPriceHistory: [spot('m5.large', 'us-east-1a', '0.039400'), spot('m5.large', 'us-east-1b', '0.041200'), spot('m5.large', 'us-east-1f', '0.036900')],
  });
  c.ec2Mock.on(DescribeInstanceTypesCommand).resolves({ InstanceTypes: [m5Large, m9aLarge] });
}

describe('fetchZonesByType (DescribeInstanceTypeOfferings)', () => {
  it('reads every page and groups zones per type', async () => {
    // Prepare
    const c = clients();
    mockUsEast1(c);
    // Act
    const zones = await fetchZonesByType(c.ec2);
    // Assess
    expect(zones).toEqual({
      'm5.large': ['us-east-1a', 'us-east-1b', 'us-east-1c', 'us-east-1d', 'us-east-1f'],
      'c6g.large': ['us-east-1a', 'us-east-1b'],
      'm9a.large': ['us-east-1a'],
    });
    const calls = c.ec2Mock.commandCalls(DescribeInstanceTypeOfferingsCommand);
    expect(calls.map((x) => x.args[0].input)).toEqual([
      { LocationType: 'availability-zone', MaxResults: 1000, NextToken: undefined },
      { LocationType: 'availability-zone', MaxResults: 1000, NextToken: 'page-2' },
    ]);
  });
});

describe('fetchOnDemandPrices (Pricing GetProducts)', () => {
  it('parses the JSON-string PriceList of every page with the Linux / shared / Used filters', async () => {
    const c = clients();
    c.pricingMock
      .on(GetProductsCommand)
      .resolvesOnce({ PriceList: [priceListItem('m5.large', '0.1070000000', 'A'), priceListItem('c6g.large', '0.0730000000', 'B')] as any, NextToken: 'next' })
      .resolvesOnce({ PriceList: [priceListItem('c6g.metal', '2.3360000000', 'C', 'Compute Instance (bare metal)')] as any });

    const prices = await fetchOnDemandPrices(c.pricing, 'eu-west-1');

    expect(prices).toEqual({ 'm5.large': 0.107, 'c6g.large': 0.073, 'c6g.metal': 2.336 });
    const inputs = c.pricingMock.commandCalls(GetProductsCommand).map((x) => x.args[0].input);
    expect(inputs).toHaveLength(2);
    expect(inputs[1].NextToken).toBe('next');
    expect(inputs[0]).toMatchObject({ ServiceCode: 'AmazonEC2', MaxResults: 100 });
    expect(Object.fromEntries(inputs[0].Filters!.map((f) => [f.Field, `${f.Type}:${f.Value}`]))).toEqual({
      regionCode: 'TERM_MATCH:eu-west-1',
      serviceCode: 'TERM_MATCH:AmazonEC2',
      operatingSystem: 'TERM_MATCH:Linux',
      tenancy: 'TERM_MATCH:Shared',
      preInstalledSw: 'TERM_MATCH:NA',
      capacitystatus: 'TERM_MATCH:Used',
      marketoption: 'TERM_MATCH:OnDemand',
    });
  });

  it('skips zero prices, entries without an instance type and unparseable entries', () => {
    const noType = JSON.stringify({ product: { attributes: { regionCode: 'us-east-1' } }, terms: { OnDemand: {} } });
    expect(parsePriceList([priceListItem('m5.large', '0.0000000000', 'Z'), noType, '{not json', priceListItem('c5.large', '0.0850000000', 'Y')])).toEqual({
      'c5.large': 0.085,
    });
  });

  it('fails (so the shipped prices stay) when no price comes back or a page is throttled', async () => {
    const c = clients();
    c.pricingMock.on(GetProductsCommand).resolvesOnce({ PriceList: [] });
    await expect(fetchOnDemandPrices(c.pricing, 'us-east-1')).rejects.toBeInstanceOf(NodefleetError);

    const throttled = Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' });
    c.pricingMock.on(GetProductsCommand).rejects(throttled);
    await expect(fetchOnDemandPrices(c.pricing, 'us-east-1')).rejects.toBeInstanceOf(TransientError);
  });

  it('creates the Pricing client in us-east-1 for a European region, none for GovCloud', async () => {
    expect(await createPricingClient('eu-west-1')!.config.region()).toBe('us-east-1');
    expect(createPricingClient('us-gov-east-1')).toBeUndefined();
  });

  it('uses the us-east-1 Pricing endpoint, none in GovCloud', () => {
    expect(['eu-west-1', 'ap-northeast-2', 'us-west-2', 'us-gov-west-1', 'cn-north-1'].map(pricingApiRegion)).toEqual([
      'us-east-1',
      'us-east-1',
      'us-east-1',
      undefined,
      'cn-northwest-1',
    ]);
  });
});

describe('fetchSpotPrices (DescribeSpotPriceHistory)', () => {
  it('keeps the latest price per type and zone, Linux/UNIX, from now', async () => {
    const c = clients();
    c.ec2Mock
      .on(DescribeSpotPriceHistoryCommand)
      .resolvesOnce({
        SpotPriceHistory: [
          spot('m5.large', 'us-east-1a', '0.039400', '2026-11-30T09:02:11.000Z'),
          spot('m5.large', 'us-east-1a', '0.045100', '2026-11-30T06:40:03.000Z'), // older: ignored
          { ...spot('m5.large', 'us-east-1b', '0.041700'), ProductDescription: 'Linux/UNIX (Amazon VPC)' },
        ],
        NextToken: 'n',
      })
      .resolvesOnce({ SpotPriceHistory: [spot('c6g.large', 'us-east-1a', '0.026300'), spot('c6g.large', 'us-east-1b', 'not-a-number')] });

    const prices = await fetchSpotPrices(c.ec2, NOW);

    expect(prices).toEqual({ 'm5.large': { 'us-east-1a': 0.0394, 'us-east-1b': 0.0417 }, 'c6g.large': { 'us-east-1a': 0.0263 } });
    const input = c.ec2Mock.commandCalls(DescribeSpotPriceHistoryCommand)[0].args[0].input;
    expect(input).toMatchObject({ ProductDescriptions: ['Linux/UNIX', 'Linux/UNIX (Amazon VPC)'], MaxResults: 1000 });
    expect(input.StartTime?.toISOString()).toBe('2026-11-30T09:30:00.000Z');
  });
});

describe('instanceTypeInfoFromEc2 (DescribeInstanceTypes)', () => {
  it('builds the same row as the shipped data for m5.large', () => {
    const shipped = instanceTypeInfos.find((i) => i.name === 'm5.large')!;
    const row = instanceTypeInfoFromEc2(m5Large)!;
    const { podEniCount: _p, ...rest } = row;
    const { podEniCount: _q, maxPodsSource: _s, ...shippedRest } = shipped as typeof shipped & { maxPodsSource?: string };
    expect(rest).toEqual(shippedRest);
    expect(row.maxPods).toBe(29);
    expect(row.karpenterAllocatable).toEqual({ cpuMillicores: 1930, memoryMiB: 6903, ephemeralStorageGiB: 17, pods: 29 });
    expect(row.podEniCount).toBe(0); // not in the API (Karpenter's generated table); shipped says 9
  });

  it('maps Neuron devices to the accelerator (name kebab-case, cores per type)', () => {
    const row = instanceTypeInfoFromEc2(inf2Xlarge)!;
    expect(row).toMatchObject({
      category: 'inf',
      generation: 2,
      cpuManufacturer: 'amd',
      maxPods: 58,
      networkBandwidthMbps: 2083,
      ebsBandwidthMbps: 10000,
      encryptionInTransitSupported: true,
    });
    expect(row.accelerator).toEqual({ count: 1, name: 'inferentia2', manufacturer: 'aws', neuronCores: 2 });
    expect(row.accelerator).toEqual(instanceTypeInfos.find((i) => i.name === 'inf2.xlarge')!.accelerator);
  });

  it('maps GPUs and local NVMe (g5.xlarge: one NVIDIA A10G, 250 GB instance store)', () => {
    const g5: Ec2InstanceTypeInfo = {
      ...m5Large,
      InstanceType: 'g5.xlarge',
      ProcessorInfo: { SupportedArchitectures: ['x86_64'], SustainedClockSpeedInGhz: 3.3, Manufacturer: 'AMD' },
      VCpuInfo: { DefaultVCpus: 4 },
      MemoryInfo: { SizeInMiB: 16384 },
      InstanceStorageSupported: true,
      InstanceStorageInfo: { TotalSizeInGB: 250, Disks: [{ SizeInGB: 250, Count: 1, Type: 'ssd' }], NvmeSupport: 'required' },
      GpuInfo: { Gpus: [{ Name: 'A10G', Manufacturer: 'NVIDIA', Count: 1, MemoryInfo: { SizeInMiB: 24576 } }], TotalGpuMemoryInMiB: 24576 },
      NetworkInfo: {
        ...m5Large.NetworkInfo,
        MaximumNetworkInterfaces: 4,
        NetworkCards: [{ NetworkCardIndex: 0, MaximumNetworkInterfaces: 4, BaselineBandwidthInGbps: 2.5 }],
        Ipv4AddressesPerInterface: 15,
        EncryptionInTransitSupported: true,
      },
    };
    const row = instanceTypeInfoFromEc2(g5)!;
    expect(row).toMatchObject({ category: 'g', generation: 5, vcpu: 4, maxPods: 58, localNvmeGiB: 250, networkBandwidthMbps: 2500, cpuManufacturer: 'amd' });
    expect(row.gpu).toEqual({ count: 1, name: 'a10g', manufacturer: 'nvidia', memoryMiB: 24576 });
  });

  it('skips types it cannot run nodes on', () => {
    expect(instanceTypeInfoFromEc2({ ...m5Large, InstanceType: 'mac2.metal', ProcessorInfo: { SupportedArchitectures: ['arm64_mac'] } })).toBeUndefined();
    expect(instanceTypeInfoFromEc2({ ...m5Large, MemoryInfo: undefined })).toBeUndefined();
  });
});

describe('CatalogRefresher (per-cold-start cache)', () => {
  let c: ReturnType<typeof clients>;
  let errors: [CatalogRefreshPart, Error][];
  const make = (o: Partial<CatalogRefresherOptions> = {}) =>
    new CatalogRefresher({ ec2: c.ec2, pricing: c.pricing, region: 'us-east-1', onError: (p, e) => errors.push([p, e]), ...o });

  beforeEach(() => {
    c = clients();
    errors = [];
  });

  it('feeds loadCatalog: real zones, account zone ids, per-zone spot, live on-demand, new types', async () => {
    mockUsEast1(c);
    const refresher = make();

    const refreshed = await refresher.get(NOW);
    const catalog = loadCatalog({ region: 'us-east-1', refreshed });

    expect(errors).toEqual([]);
    // Only types EC2 offers in the region (per the offerings answer), shipped order then new ones.
    expect(catalog.map((t) => t.name)).toEqual(['c6g.large', 'm5.large', 'm9a.large']);
    const m5 = catalog.find((t) => t.name === 'm5.large')!;
    const rows = m5.offerings.map((o) => `${o.zone}/${o.zoneId}/${o.capacityType}/${instancePriceUsdPerHour(o)}`);
    expect(rows).toEqual([
      'us-east-1a/use1-az6/on-demand/0.096',
      'us-east-1a/use1-az6/spot/0.0394',
      'us-east-1b/use1-az1/on-demand/0.096',
      'us-east-1b/use1-az1/spot/0.0412',
      'us-east-1c/use1-az2/on-demand/0.096', // no spot price in 1c / 1d: no spot offering there
      'us-east-1d/use1-az4/on-demand/0.096',
      'us-east-1f/use1-az5/on-demand/0.096',
      'us-east-1f/use1-az5/spot/0.0369',
    ]);
    // c6g.large: not in the Pricing or spot answers → shipped on-demand 0.068 and regional spot 0.02634.
    const c6g = catalog.find((t) => t.name === 'c6g.large')!;
    expect(c6g.offerings.map((o) => `${o.zone}/${o.capacityType}/${instancePriceUsdPerHour(o)}`)).toEqual([
      'us-east-1a/on-demand/0.068',
      'us-east-1a/spot/0.02634',
      'us-east-1b/on-demand/0.068',
      'us-east-1b/spot/0.02634',
    ]);
    // m9a.large: only known from DescribeInstanceTypes; priced by the Pricing API, no spot data.
    const m9a = catalog.find((t) => t.name === 'm9a.large')!;
    expect(m9a.offerings).toEqual([
      {
        zone: 'us-east-1a',
        zoneId: 'use1-az6',
        capacityType: 'on-demand',
        priceUsdPerHour: 0.129 + (20 * 0.08) / 730,
        volumeUsdPerHour: (20 * 0.08) / 730,
        available: true,
      },
    ]);
    expect(m9a.labels['karpenter.k8s.aws/instance-family']).toBe('m9a');
    expect(m9a.allocatable.cpu).toBe(1930);
    expect(m9a.capacity.pods).toBe(3 * (20 - 1) + 2);
    expect(refreshed.fetchedAtMs).toEqual({ zoneIds: NOW, zonesByType: NOW, onDemandUsdPerHour: NOW, spotUsdPerHour: NOW, instanceTypes: NOW });
  });

  it('fetches each part once per interval (12 h, as Karpenter)', async () => {
    mockUsEast1(c);
    const refresher = make();
    await refresher.get(NOW);
    const callsAfterFirst = c.ec2Mock.calls().length + c.pricingMock.calls().length;
    expect(callsAfterFirst).toBe(1 + 2 + 1 + 1 + 2); // AZs, offerings ×2 pages, spot, types, pricing ×2 pages

    await refresher.get(NOW + CatalogRefreshIntervalMs.spotUsdPerHour - 1);
    expect(c.ec2Mock.calls().length + c.pricingMock.calls().length).toBe(callsAfterFirst);

    c.ec2Mock.on(DescribeSpotPriceHistoryCommand).resolves({ SpotPriceHistory: [spot('m5.large', 'us-east-1a', '0.050000')] });
    const later = await refresher.get(NOW + 12 * 3_600_000);
    expect(c.ec2Mock.commandCalls(DescribeSpotPriceHistoryCommand)).toHaveLength(2);
    expect(later.spotUsdPerHour).toEqual({ 'm5.large': { 'us-east-1a': 0.05 } });
  });

  it('keeps the shipped / previous data when a fetch fails, and retries after a minute', async () => {
    mockUsEast1(c);
    const throttled = Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' });
    c.pricingMock.on(GetProductsCommand).rejects(throttled);
    const refresher = make({ parts: ['zoneIds', 'onDemandUsdPerHour'] });

    const first = await refresher.get(NOW);

    expect(first.onDemandUsdPerHour).toBeUndefined();
    expect(first.zoneIds?.['us-east-1a']).toBe('use1-az6');
    expect(errors.map(([p, e]) => [p, e.name])).toEqual([['onDemandUsdPerHour', 'TransientError']]);
    // The catalog falls back to the shipped on-demand price in every zone of the region.
    const m5 = loadCatalog({ region: 'us-east-1', refreshed: first }).find((t) => t.name === 'm5.large')!;
    expect(m5.offerings.filter((o) => o.capacityType === 'on-demand').map(instancePriceUsdPerHour)).toEqual([0.096, 0.096, 0.096, 0.096, 0.096, 0.096]);

    await refresher.get(NOW + CatalogRefreshRetryAfterFailureMs - 1);
    expect(c.pricingMock.commandCalls(GetProductsCommand)).toHaveLength(1);

    c.pricingMock.on(GetProductsCommand).resolves({ PriceList: [priceListItem('m5.large', '0.0990000000', 'S')] as any });
    const second = await refresher.get(NOW + CatalogRefreshRetryAfterFailureMs);
    expect(second.onDemandUsdPerHour).toEqual({ 'm5.large': 0.099 });

    // A later failure keeps the last good prices.
    c.pricingMock.on(GetProductsCommand).rejects(throttled);
    const third = await refresher.get(NOW + CatalogRefreshRetryAfterFailureMs + CatalogRefreshIntervalMs.onDemandUsdPerHour);
    expect(third.onDemandUsdPerHour).toEqual({ 'm5.large': 0.099 });
    expect(errors).toHaveLength(2);
  });

  it('shares one fetch between concurrent callers and skips Pricing in GovCloud', async () => {
    mockUsEast1(c);
    const refresher = make({ parts: ['spotUsdPerHour'] });
    await Promise.all([refresher.get(NOW), refresher.get(NOW)]);
    expect(c.ec2Mock.commandCalls(DescribeSpotPriceHistoryCommand)).toHaveLength(1);

    const gov = make({ region: 'us-gov-west-1', parts: ['onDemandUsdPerHour'] });
    expect(await gov.get(NOW)).toEqual({ region: 'us-gov-west-1', fetchedAtMs: {} });
    expect(c.pricingMock.calls()).toHaveLength(0);
  });
});
