import { describe, expect, it } from 'vitest';
import { formatTable, listInstanceTypes } from '../../../functions/cli/commands/instance-types.ts';
import { parseNodeClass, parseNodePool } from '../../../shared/api/validate.ts';

const pool = (name: string, requirements: unknown[], nodeClass = 'default') =>
  parseNodePool({
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name },
    spec: { template: { spec: { nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: nodeClass }, requirements } } },
  });

describe('instance-types command', () => {
  it('lists c5a.2xlarge in ap-northeast-2 with the reference numbers', () => {
    const rows = listInstanceTypes('ap-northeast-2');
    const c5a = rows.find((r) => r.name === 'c5a.2xlarge')!;
    expect(c5a.capacity).toMatchObject({ cpu: '8', memory: '15155Mi', pods: '58', 'ephemeral-storage': '20Gi' });
    expect(c5a.allocatable).toMatchObject({ cpu: '7910m', memory: '14162Mi', pods: '58', 'ephemeral-storage': '17Gi' });
    expect(c5a.offerings[0]).toEqual({ zone: 'ap-northeast-2a', capacityType: 'spot', price: 0.135267 + (20 * 0.08) / 730, available: true });
    expect(rows[0].name).toBe('t3.nano');
  });

  it('filters by the NodePool and uses its EC2NodeClass root volume', () => {
    const nc = parseNodeClass({
      apiVersion: 'karpenter.k8s.aws/v1',
      kind: 'EC2NodeClass',
      metadata: { name: 'big-disk' },
      spec: {
        amiSelectorTerms: [{ alias: 'al2023@latest' }],
        role: 'r',
        subnetSelectorTerms: [{ id: 'subnet-1' }],
        securityGroupSelectorTerms: [{ id: 'sg-1' }],
        blockDeviceMappings: [{ deviceName: '/dev/xvda', rootVolume: true, ebs: { volumeSize: '100Gi' } }],
      },
    });
    const np = pool(
      'c',
      [
        { key: 'karpenter.k8s.aws/instance-family', operator: 'In', values: ['c5a'] },
        { key: 'karpenter.k8s.aws/instance-cpu', operator: 'In', values: ['8'] },
        { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
      ],
      'big-disk',
    );
    const rows = listInstanceTypes('ap-northeast-2', [np], [nc]);
    expect(rows.map((r) => r.name)).toEqual(['c5a.2xlarge']);
    expect(rows[0].allocatable['ephemeral-storage']).toBe('89Gi');
    expect(rows[0].offerings.every((o) => o.capacityType === 'on-demand')).toBe(true);
  });

  it('prints a readable table', () => {
    const rows = listInstanceTypes('ap-northeast-2', [pool('x', [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['c5a.2xlarge'] }])]);
    const lines = formatTable(rows).trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^NAME\s+CPU\s+MEMORY\s+PODS\s+ALLOC CPU/);
    expect(lines[1]).toMatch(/^c5a\.2xlarge\s+8\s+15155Mi\s+58\s+7910m\s+14162Mi\s+17Gi\s+.*0\.3462\s+0\.1375\s+4$/);
  });
});
