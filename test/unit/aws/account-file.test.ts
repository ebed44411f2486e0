/**
 * shared/aws/account-file.ts: `aws ec2 describe-*` output answering the production resolver's
 * queries with EC2's filter semantics, and the parts the files lack answered as placeholders.
 */
import { describe, expect, it } from 'vitest';
import { accountLookups, readAccountFiles } from '../../../shared/aws/account-file.ts';
import { Ec2NodeClassResolver } from '../../../shared/aws/node-class-resolver.ts';
import { ValidationError } from '../../../shared/api/errors.ts';
import { EC2NodeClassSchema, type EC2NodeClass } from '../../../shared/api/nodepool.ts';

const tags = (t: Record<string, string>) => Object.entries(t).map(([Key, Value]) => ({ Key, Value }));
const account = readAccountFiles([
  {
    file: 'subnets.json',
    text: JSON.stringify({
      Subnets: [
        {
          SubnetId: 'subnet-0a',
          AvailabilityZone: 'us-east-1a',
          AvailabilityZoneId: 'use1-az4',
          AvailableIpAddressCount: 10,
          OwnerId: '111122223333',
          Tags: tags({ 'karpenter.sh/discovery': 'demo', Name: 'demo-private-a' }),
        },
        {
          SubnetId: 'subnet-0b',
          AvailabilityZone: 'us-east-1b',
          AvailabilityZoneId: 'use1-az6',
          AvailableIpAddressCount: 20,
          OwnerId: '111122223333',
          Tags: tags({ 'karpenter.sh/discovery': 'other', Name: 'demo-private-b' }),
        },
        { SubnetId: 'subnet-0c', AvailabilityZone: 'us-east-1c', AvailableIpAddressCount: 30, Tags: tags({ tier: 'public' }) },
      ],
    }),
  },
  {
    file: 'rest.json',
    text: `${JSON.stringify({
      SecurityGroups: [
        { GroupId: 'sg-0nodes', GroupName: 'demo-nodes', OwnerId: '111122223333' },
        { GroupId: 'sg-0web', GroupName: 'web', Tags: tags({ team: 'web' }) },
      ],
    })}
${JSON.stringify({
  Images: [
    { ImageId: 'ami-0mine-old', Name: 'golden-2025', Architecture: 'x86_64', CreationDate: '2025-01-01T00:00:00.000Z', OwnerId: '111122223333' },
    { ImageId: 'ami-0mine-new', Name: 'golden-2026', Architecture: 'x86_64', CreationDate: '2026-01-01T00:00:00.000Z', OwnerId: '111122223333' },
    { ImageId: 'ami-0theirs', Name: 'golden-2027', Architecture: 'x86_64', CreationDate: '2027-01-01T00:00:00.000Z', OwnerId: '999988887777' },
    {
      ImageId: 'ami-0amazon',
      Name: 'golden-arm',
      Architecture: 'arm64',
      CreationDate: '2026-01-01T00:00:00.000Z',
      OwnerId: '137112412989',
      ImageOwnerAlias: 'amazon',
    },
  ],
})}`,
  },
]);
const resolver = () => new Ec2NodeClassResolver(accountLookups(account, { placeholderZones: [] }), '1.32');

function nodeClass(spec: Record<string, unknown>): EC2NodeClass {
  return EC2NodeClassSchema.parse({
    apiVersion: 'karpenter.k8s.aws/v1',
    kind: 'EC2NodeClass',
    metadata: { name: 'default' },
    spec: {
      role: 'r',
      amiSelectorTerms: [{ name: 'golden-*' }],
      subnetSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'demo' } }],
      securityGroupSelectorTerms: [{ id: 'sg-0nodes' }],
      ...spec,
    },
  });
}

describe('the production resolver over account files', () => {
  it('tag terms (values, "*" = key exists, wildcards), id terms, name terms, ORed; ids that do not exist match nothing', async () => {
    const subnetsOf = async (subnetSelectorTerms: unknown[]) => (await resolver().resolve(nodeClass({ subnetSelectorTerms }))).subnets.map((s) => s.subnetId);
    expect(await subnetsOf([{ tags: { 'karpenter.sh/discovery': 'demo' } }])).toEqual(['subnet-0a']);
    expect(await subnetsOf([{ tags: { 'karpenter.sh/discovery': '*' } }])).toEqual(['subnet-0a', 'subnet-0b']);
    expect(await subnetsOf([{ tags: { Name: 'demo-private-?' } }, { id: 'subnet-0c' }, { id: 'subnet-0gone' }])).toEqual([
      'subnet-0a',
      'subnet-0b',
      'subnet-0c',
    ]);
    await expect(subnetsOf([{ id: 'subnet-0gone' }])).rejects.toThrow(new ValidationError('ec2nodeclass default: subnetSelectorTerms match no subnet'));
    const r = await resolver().resolve(nodeClass({ securityGroupSelectorTerms: [{ name: 'demo-*' }, { tags: { team: 'web' } }] }));
    expect(r.securityGroupIds).toEqual(['sg-0nodes', 'sg-0web']);
    expect(r.subnets).toEqual([{ subnetId: 'subnet-0a', zone: 'us-east-1a', zoneId: 'use1-az4', availableIpAddressCount: 10 }]);
  });

  it('a name term without owner: self (the owner of the account’s subnets) and amazon only, the newest per architecture', async () => {
    expect((await resolver().resolve(nodeClass({}))).images).toEqual({ amd64: 'ami-0mine-new', arm64: 'ami-0amazon' });
    expect((await resolver().resolve(nodeClass({ amiSelectorTerms: [{ name: 'golden-*', owner: '999988887777' }] }))).images).toEqual({ amd64: 'ami-0theirs' });
  });

  it('parts the files lack are placeholders, and said so', async () => {
    const lookups = accountLookups(readAccountFiles([{ file: 'a.json', text: '{"Subnets": []}' }]), {
      placeholderZones: [{ zone: 'us-east-1a', zoneId: 'use1-az4' }],
    });
    const r = await new Ec2NodeClassResolver(lookups, '1.32').resolve(nodeClass({ amiSelectorTerms: [{ alias: 'al2023@latest' }] }));
    expect(r.subnets).toEqual([{ subnetId: 'subnet-placeholder-us-east-1a', zone: 'us-east-1a', zoneId: 'use1-az4', availableIpAddressCount: 4096 }]);
    expect(r.securityGroupIds).toEqual(['sg-placeholder']);
    expect(r.images).toEqual({ amd64: 'ami-placeholder-amd64-standard', arm64: 'ami-placeholder-arm64-standard' });
    expect(lookups.placeholders()).toEqual([
      'AMIs of aliases (the files hold no such public SSM parameter: aws ssm get-parameters --names …)',
      'security groups (the files hold no SecurityGroups)',
      'subnets (the files hold no Subnets: every zone of the region assumed)',
    ]);
  });
});

describe('readAccountFiles', () => {
  it('one object with several keys, objects one after the other, or an array of them; later files replace earlier ids', () => {
    const s = (ips: number) => ({ SubnetId: 'subnet-0a', AvailabilityZone: 'us-east-1a', AvailableIpAddressCount: ips });
    const a = readAccountFiles([
      { file: 'one.json', text: JSON.stringify({ Subnets: [s(1)], SecurityGroups: [{ GroupId: 'sg-1' }] }) },
      { file: 'two.json', text: `[${JSON.stringify({ Subnets: [s(2)] })}, ${JSON.stringify({ Parameter: { Name: '/p', Value: 'ami-1' } })}]` },
    ]);
    expect(a.subnets.map((x) => x.AvailableIpAddressCount)).toEqual([2]);
    expect(a.securityGroups.map((g) => g.GroupId)).toEqual(['sg-1']);
    expect(a.parameters.get('/p')).toBe('ami-1');
  });

  it('the first problem as one line: file, document, field, reason', () => {
    const bad = (text: string) => () => readAccountFiles([{ file: 'acct.json', text }], 'us-east-1');
    expect(bad('{"Subnets": [{"SubnetId": "subnet-1", "AvailabilityZone": "us-east-1a", "AvailableIpAddressCount": -1}]}')).toThrow(
      'acct.json: Subnets[0].AvailableIpAddressCount: expected a number ≥ 0',
    );
    expect(bad('{"Images": [{"ImageId": "ami-1"}]}')).toThrow('acct.json: Images[0].Architecture: required: x86_64 or arm64');
    expect(bad('[{"Subnets": []}, {"Subnets": [{"SubnetId": 7}]}]')).toThrow('acct.json: item 2: Subnets[0].SubnetId: expected text, got 7');
    expect(bad('{"Subnets": {}}')).toThrow('acct.json: Subnets: expected a list (aws ec2 describe-subnets)');
    expect(bad('')).toThrow('acct.json: no JSON object found');
  });
});
