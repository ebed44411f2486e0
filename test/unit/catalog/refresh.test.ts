import { describe, expect, it } from 'vitest';
import {
  instanceTypeInfos,
  loadCatalog,
  mergeInstanceTypeInfos,
  shippedRegionData,
  zoneOfferingPrices,
  type CatalogRefresh,
  type InstanceTypeInfo,
} from '../../../shared/catalog/index.ts';
import { ValidationError } from '../../../shared/api/errors.ts';
import { instancePriceUsdPerHour } from '../../../shared/catalog/types.ts';

const m5 = instanceTypeInfos.find((i) => i.name === 'm5.large')!;

describe('zoneOfferingPrices', () => {
  it('without refreshed data: every shipped zone, shipped on-demand and regional-average spot, example zone ids', () => {
    const rows = zoneOfferingPrices('m5.large', shippedRegionData('ap-northeast-2'));
    expect(rows).toEqual([
      { zone: 'ap-northeast-2a', zoneId: 'apne2-az1', onDemandUsdPerHour: 0.118, spotUsdPerHour: 0.03375 },
      { zone: 'ap-northeast-2b', zoneId: 'apne2-az2', onDemandUsdPerHour: 0.118, spotUsdPerHour: 0.03375 },
      { zone: 'ap-northeast-2c', zoneId: 'apne2-az3', onDemandUsdPerHour: 0.118, spotUsdPerHour: 0.03375 },
      { zone: 'ap-northeast-2d', zoneId: 'apne2-az4', onDemandUsdPerHour: 0.118, spotUsdPerHour: 0.03375 },
    ]);
  });

  it('refreshed spot prices are per zone; a zone without one has no spot; other types keep the shipped average', () => {
    const shipped = shippedRegionData('us-east-1');
    const refreshed: CatalogRefresh = { region: 'us-east-1', spotUsdPerHour: { 'm5.large': { 'us-east-1a': 0.0394, 'us-east-1c': 0.0371 } } };
    const m5Rows = zoneOfferingPrices('m5.large', shipped, refreshed);
    expect(m5Rows.map((r) => [r.zone, r.onDemandUsdPerHour, r.spotUsdPerHour])).toEqual([
      ['us-east-1a', 0.096, 0.0394],
      ['us-east-1b', 0.096, undefined],
      ['us-east-1c', 0.096, 0.0371],
      ['us-east-1d', 0.096, undefined],
      ['us-east-1e', 0.096, undefined],
      ['us-east-1f', 0.096, undefined],
    ]);
    expect(zoneOfferingPrices('c6g.large', shipped, refreshed).map((r) => r.spotUsdPerHour)).toEqual(Array(6).fill(0.02634));
  });

  it('refreshed zones: only where EC2 offers the type, in region order; a type missing is offered nowhere', () => {
    const shipped = shippedRegionData('us-east-1');
    const refreshed: CatalogRefresh = {
      region: 'us-east-1',
      zoneIds: { 'us-east-1b': 'use1-az1', 'us-east-1a': 'use1-az6', 'us-east-1c': 'use1-az2' },
      zonesByType: { 'm5.large': ['us-east-1c', 'us-east-1a', 'us-east-1-bos-1a'] },
      onDemandUsdPerHour: { 'm5.large': 0.099 },
    };
    expect(zoneOfferingPrices('m5.large', shipped, refreshed)).toEqual([
      { zone: 'us-east-1a', zoneId: 'use1-az6', onDemandUsdPerHour: 0.099, spotUsdPerHour: 0.04366 },
      { zone: 'us-east-1c', zoneId: 'use1-az2', onDemandUsdPerHour: 0.099, spotUsdPerHour: 0.04366 },
    ]);
    expect(zoneOfferingPrices('c6g.large', shipped, refreshed)).toEqual([]);
  });

  it('a region without shipped zones uses the zones EC2 lists', () => {
    const refreshed: CatalogRefresh = {
      region: 'xx-test-1',
      zonesByType: { 'm5.large': ['xx-test-1b', 'xx-test-1a'] },
      onDemandUsdPerHour: { 'm5.large': 0.1 },
    };
    expect(zoneOfferingPrices('m5.large', shippedRegionData('xx-test-1'), refreshed).map((r) => r.zone)).toEqual(['xx-test-1a', 'xx-test-1b']);
  });
});

describe('mergeInstanceTypeInfos', () => {
  it('keeps shipped rows and appends unknown types by name', () => {
    const newer: InstanceTypeInfo[] = [
      { ...m5, name: 'm9a.xlarge', family: 'm9a' },
      { ...m5, name: 'm5.large', vcpu: 99 },
      { ...m5, name: 'm9a.large', family: 'm9a' },
    ];
    const merged = mergeInstanceTypeInfos(instanceTypeInfos, newer);
    expect(merged).toHaveLength(instanceTypeInfos.length + 2);
    expect(merged.slice(-2).map((i) => i.name)).toEqual(['m9a.large', 'm9a.xlarge']);
    expect(merged.find((i) => i.name === 'm5.large')!.vcpu).toBe(2);
    expect(mergeInstanceTypeInfos(instanceTypeInfos, [])).toBe(instanceTypeInfos);
  });
});

describe('loadCatalog with refreshed data', () => {
  it('an empty refresh changes nothing', () => {
    expect(loadCatalog({ region: 'us-east-1', refreshed: { region: 'us-east-1' } })).toEqual(loadCatalog({ region: 'us-east-1' }));
  });

  it('rejects data from another region', () => {
    expect(() => loadCatalog({ region: 'us-east-1', refreshed: { region: 'eu-west-1' } })).toThrow(ValidationError);
  });

  it('marks ICE-cached offerings unavailable on refreshed per-zone spot offerings', () => {
    const refreshed: CatalogRefresh = {
      region: 'us-east-1',
      zonesByType: { 'm5.large': ['us-east-1a', 'us-east-1b'] },
      spotUsdPerHour: { 'm5.large': { 'us-east-1a': 0.04, 'us-east-1b': 0.05 } },
    };
    const catalog = loadCatalog({ region: 'us-east-1', refreshed, unavailable: [{ instanceType: 'm5.large', zone: 'us-east-1b', capacityType: 'spot' }] });
    expect(catalog.map((t) => t.name)).toEqual(['m5.large']);
    expect(catalog[0].offerings.map((o) => `${o.zone}/${o.capacityType}/${instancePriceUsdPerHour(o)}/${o.available}`)).toEqual([
      'us-east-1a/on-demand/0.096/true',
      'us-east-1a/spot/0.04/true',
      'us-east-1b/on-demand/0.096/true',
      'us-east-1b/spot/0.05/false',
    ]);
  });

  it('works in a region the shipped zone data lacks when zones were refreshed', () => {
    expect(() => loadCatalog({ region: 'xx-test-1' })).toThrow(/no zone data/);
    const catalog = loadCatalog({
      region: 'xx-test-1',
      refreshed: { region: 'xx-test-1', zoneIds: { 'xx-test-1a': 'xxt1-az1' }, onDemandUsdPerHour: { 'c5.large': 0.09 } },
    });
    expect(catalog.map((t) => [t.name, t.offerings.map((o) => `${o.zone}/${o.zoneId}/${o.capacityType}/${instancePriceUsdPerHour(o)}`)])).toEqual([
      ['c5.large', ['xx-test-1a/xxt1-az1/on-demand/0.09']],
    ]);
  });
});
