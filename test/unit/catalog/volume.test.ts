import { describe, expect, it } from 'vitest';
import { parseNodeClass } from '../../../shared/api/validate.ts';
import { loadCatalog } from '../../../shared/catalog/index.ts';
import { nodeVolumes, nodeVolumesUsdPerHour } from '../../../shared/catalog/volume.ts';
import { instancePriceUsdPerHour } from '../../../shared/catalog/types.ts';
import { solve } from '../../../shared/scheduling/index.ts';
import { input, nodePool, pendingPods } from '../scheduling/builders.ts';

const nodeClass = (spec: Record<string, unknown>) =>
  parseNodeClass({
    apiVersion: 'karpenter.k8s.aws/v1',
    kind: 'EC2NodeClass',
    metadata: { name: 'default' },
    spec: {
      role: 'KarpenterNodeRole',
      amiSelectorTerms: [{ alias: 'al2023@latest' }],
      subnetSelectorTerms: [{ tags: { k: 'v' } }],
      securityGroupSelectorTerms: [{ tags: { k: 'v' } }],
      ...spec,
    },
  });

describe('node volumes in the node price', () => {
  it('prices the default AL2023 root volume: 20 GiB gp3 at $0.08/GB-month over 730 h', () => {
    expect(nodeVolumes()).toEqual([{ sizeGiB: 20, volumeType: 'gp3' }]);
    expect(nodeVolumesUsdPerHour()).toBeCloseTo(1.6 / 730, 12);
  });

  it('prices every mapping of the EC2NodeClass: size, type, gp3 IOPS and throughput above the included ones', () => {
    const nc = nodeClass({
      blockDeviceMappings: [
        { deviceName: '/dev/xvda', rootVolume: true, ebs: { volumeSize: '100Gi', volumeType: 'gp3', iops: 6000, throughput: 250 } },
        { deviceName: '/dev/xvdb', ebs: { volumeSize: '50Gi', volumeType: 'io2', iops: 1000 } },
      ],
    });
    // 100 × 0.08 + 3000 × 0.005 + 125 × 0.04 = 28; 50 × 0.125 + 1000 × 0.065 = 71.25 (USD/month).
    expect(nodeVolumesUsdPerHour(nc)).toBeCloseTo((28 + 71.25) / 730, 12);
  });

  it('uses the family defaults: Bottlerocket 6 GiB + 20 GiB, Windows 50 GiB', () => {
    expect(nodeVolumes(nodeClass({ amiSelectorTerms: [{ alias: 'bottlerocket@latest' }] })).map((v) => v.sizeGiB)).toEqual([6, 20]);
    expect(nodeVolumes(nodeClass({ amiSelectorTerms: [{ alias: 'windows2022@latest' }] })).map((v) => v.sizeGiB)).toEqual([50]);
  });

  it('adds the volumes to every offering and to the price of a planned claim', () => {
    const nc = nodeClass({ blockDeviceMappings: [{ deviceName: '/dev/xvda', rootVolume: true, ebs: { volumeSize: '200Gi', volumeType: 'gp3' } }] });
    const types = loadCatalog({ region: 'us-east-1', nodeClass: nc });
    const m5 = types.find((t) => t.name === 'm5.large')!;
    const od = m5.offerings.find((o) => o.capacityType === 'on-demand')!;
    expect(instancePriceUsdPerHour(od)).toBe(0.096);
    expect(od.priceUsdPerHour).toBeCloseTo(0.096 + 16 / 730, 9);
    const pool = nodePool('default', {
      requirements: [
        { key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['m5.large'] },
        { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
      ],
    });
    const r = solve(input(pendingPods('web', 1, { cpu: '1' }), types, [pool]));
    expect(r.newNodeClaims[0].priceUsdPerHour).toBeCloseTo(0.096 + 16 / 730, 9);
  });
});
