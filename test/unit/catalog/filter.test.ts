import { describe, expect, it } from 'vitest';
import { filterInstanceTypes, instanceTypeFromCase, loadCatalog, nodePoolRequirements, sortByPrice } from '../../../shared/catalog/index.ts';
import { Requirements } from '../../../shared/api/requirements.ts';
import { parseNodePool } from '../../../shared/api/validate.ts';

const catalog = loadCatalog({ region: 'us-east-1' });
const reqs = (specs: Parameters<typeof Requirements.fromSpecs>[0]) => Requirements.fromSpecs(specs);

describe('filterInstanceTypes', () => {
  it('selects by AWS labels with Gt/Lte and In', () => {
    const got = filterInstanceTypes(
      catalog,
      reqs([
        { key: 'karpenter.k8s.aws/instance-family', operator: 'In', values: ['c5a'] },
        { key: 'karpenter.k8s.aws/instance-cpu', operator: 'Gt', values: ['2'] },
        { key: 'karpenter.k8s.aws/instance-cpu', operator: 'Lte', values: ['16'] },
      ]),
    );
    expect(got.map((t) => t.name).sort()).toEqual(['c5a.2xlarge', 'c5a.4xlarge', 'c5a.xlarge']);
  });

  it('treats missing well-known labels as absent and ignores custom keys', () => {
    const gpu = filterInstanceTypes(catalog, reqs([{ key: 'karpenter.k8s.aws/instance-gpu-count', operator: 'Exists' }]));
    expect(gpu.length).toBeGreaterThan(10);
    expect(gpu.every((t) => t.exotic)).toBe(true);
    const noGpu = filterInstanceTypes(catalog, reqs([{ key: 'karpenter.k8s.aws/instance-gpu-count', operator: 'DoesNotExist' }]));
    expect(noGpu.length + gpu.length).toBe(catalog.length);
    expect(filterInstanceTypes(catalog, reqs([{ key: 'example.com/team', operator: 'In', values: ['a'] }]))).toHaveLength(catalog.length);
  });

  it('keeps only offerings in the allowed zones and capacity types', () => {
    const [c5a] = filterInstanceTypes(
      catalog,
      reqs([
        { key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['c5a.2xlarge'] },
        { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot'] },
        { key: 'topology.kubernetes.io/zone', operator: 'In', values: ['us-east-1a', 'us-east-1b'] },
      ]),
    );
    expect(c5a.offerings.map((o) => `${o.zone}/${o.capacityType}`).sort()).toEqual(['us-east-1a/spot', 'us-east-1b/spot']);
  });

  it('drops types with no offering left, and unavailable ones when asked', () => {
    const t = instanceTypeFromCase(
      { name: 'small', cpu: 2, memoryMiB: 4096, zones: ['us-east-1a'], capacityTypes: ['spot'], price: { spot: 0.03 } },
      { unavailable: [{ instanceType: 'small', zone: 'us-east-1a', capacityType: 'spot' }] },
    );
    expect(filterInstanceTypes([t], reqs([{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] }]))).toEqual([]);
    expect(filterInstanceTypes([t], new Requirements(), { availableOnly: true })).toEqual([]);
    expect(filterInstanceTypes([t], new Requirements())).toHaveLength(1);
  });

  it('applies NodePool template labels as requirements and sorts cheapest first', () => {
    const np = parseNodePool({
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodePool',
      metadata: { name: 'a' },
      spec: {
        template: {
          metadata: { labels: { 'node.kubernetes.io/instance-type': 'm5.large' } },
          spec: { nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'd' }, requirements: [] },
        },
      },
    });
    expect(filterInstanceTypes(catalog, nodePoolRequirements(np)).map((t) => t.name)).toEqual(['m5.large']);
    const sorted = sortByPrice(filterInstanceTypes(catalog, reqs([{ key: 'karpenter.k8s.aws/instance-family', operator: 'In', values: ['m5'] }])));
    expect(sorted[0].name).toBe('m5.large');
  });
});

describe('per-offering labels', () => {
  it('matches topology.k8s.aws/zone-id against the offering zone id', () => {
    const [c5a] = filterInstanceTypes(
      catalog,
      reqs([
        { key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['c5a.2xlarge'] },
        { key: 'topology.k8s.aws/zone-id', operator: 'In', values: ['use1-az4'] },
      ]),
    );
    expect(new Set(c5a.offerings.map((o) => o.zone))).toEqual(new Set(['us-east-1a']));
  });
});
