import { beforeEach, describe, expect, it } from 'vitest';
import { mockClient } from 'aws-sdk-client-mock';
import { DescribeImagesCommand, DescribeSecurityGroupsCommand, DescribeSubnetsCommand, EC2Client } from '@aws-sdk/client-ec2';
import { GetParameterCommand, ParameterNotFound, SSMClient } from '@aws-sdk/client-ssm';
import { sdkLookups, Ec2NodeClassResolver } from '../../../shared/aws/node-class-resolver.ts';
import { ValidationError } from '../../../shared/api/errors.ts';
import { EC2NodeClassSchema, type EC2NodeClass } from '../../../shared/api/nodepool.ts';

const ec2 = mockClient(EC2Client);
const ssm = mockClient(SSMClient);

function withAmiTerms(amiSelectorTerms: unknown[]): EC2NodeClass {
  return EC2NodeClassSchema.parse({
    apiVersion: 'karpenter.k8s.aws/v1',
    kind: 'EC2NodeClass',
    metadata: { name: 'custom' },
    spec: { role: 'r', amiSelectorTerms, subnetSelectorTerms: [{ id: 'subnet-1' }], securityGroupSelectorTerms: [{ id: 'sg-1' }] },
  });
}

const image = (id: string, created = '2026-01-01T00:00:00.000Z') => ({ ImageId: id, Architecture: 'x86_64' as const, CreationDate: created });

describe('Ec2NodeClassResolver: AMI terms as the AWS provider queries them', () => {
  beforeEach(() => {
    ec2.reset();
    ssm.reset();
    ec2.on(DescribeSubnetsCommand).resolves({ Subnets: [{ SubnetId: 'subnet-1', AvailabilityZone: 'us-east-1a', AvailableIpAddressCount: 10 }] });
    ec2.on(DescribeSecurityGroupsCommand).resolves({ SecurityGroups: [{ GroupId: 'sg-1' }] });
  });
  const resolver = () => new Ec2NodeClassResolver(sdkLookups(new EC2Client({ region: 'us-east-1' }), new SSMClient({ region: 'us-east-1' })), '1.32');

  it('an ssmParameter term reads the parameter and asks EC2 for that image only, never for every image', async () => {
    ssm.on(GetParameterCommand, { Name: '/team/golden-ami' }).resolves({ Parameter: { Value: 'ami-0golden' } });
    ec2.on(DescribeImagesCommand).resolves({ Images: [image('ami-0golden')] });
    const r = await resolver().resolve(withAmiTerms([{ ssmParameter: '/team/golden-ami' }]));
    expect(r.images.amd64).toBe('ami-0golden');
    const queries = ec2.commandCalls(DescribeImagesCommand).map((c) => c.args[0].input);
    expect(queries).toEqual([{ Filters: [{ Name: 'image-id', Values: ['ami-0golden'] }] }]);
  });

  it('a missing parameter, or one whose value is not an AMI id, matches no image (the EC2NodeClass is refused)', async () => {
    ssm.on(GetParameterCommand, { Name: '/missing' }).rejects(new ParameterNotFound({ message: 'not found', $metadata: {} }));
    ssm.on(GetParameterCommand, { Name: '/not-an-ami' }).resolves({ Parameter: { Value: 'hello' } });
    ec2.on(DescribeImagesCommand).resolves({ Images: [image('ami-0anyone')] });
    await expect(resolver().resolve(withAmiTerms([{ ssmParameter: '/missing' }, { ssmParameter: '/not-an-ami' }]))).rejects.toThrow(ValidationError);
    expect(ec2.commandCalls(DescribeImagesCommand)).toHaveLength(0);
  });

  it('a name term without owner is restricted to self and amazon; with owner, to that owner', async () => {
    ec2.on(DescribeImagesCommand).resolves({ Images: [image('ami-0mine')] });
    await resolver().resolve(withAmiTerms([{ name: 'my-ami-*' }, { name: 'shared-*', owner: '123456789012' }, { tags: { team: 'a' } }]));
    const queries = ec2.commandCalls(DescribeImagesCommand).map((c) => c.args[0].input);
    expect(queries).toEqual([
      { Filters: [{ Name: 'name', Values: ['my-ami-*'] }], Owners: ['self', 'amazon'] },
      { Filters: [{ Name: 'name', Values: ['shared-*'] }], Owners: ['123456789012'] },
      { Filters: [{ Name: 'tag:team', Values: ['a'] }] },
    ]);
  });

  it('id terms are asked for in one query; the newest image per architecture wins', async () => {
    ec2.on(DescribeImagesCommand).resolves({ Images: [image('ami-0old', '2025-01-01T00:00:00.000Z'), image('ami-0new', '2026-06-01T00:00:00.000Z')] });
    const r = await resolver().resolve(withAmiTerms([{ id: 'ami-0old' }, { id: 'ami-0new' }]));
    expect(ec2.commandCalls(DescribeImagesCommand).map((c) => c.args[0].input)).toEqual([
      { Filters: [{ Name: 'image-id', Values: ['ami-0old', 'ami-0new'] }] },
    ]);
    expect(r.images.amd64).toBe('ami-0new');
  });
  it('a deprecated image only when no other is left; on the same creation second, the greater name (KA compareAMI)', async () => {
    const at = Date.parse('2026-03-01T00:00:00.000Z');
    const resolve = async (images: object[]) => {
      ec2.on(DescribeImagesCommand).resolves({ Images: images });
      return (
        await new Ec2NodeClassResolver(sdkLookups(new EC2Client({ region: 'us-east-1' }), new SSMClient({ region: 'us-east-1' })), '1.32', () => at).resolve(
          withAmiTerms([{ tags: { team: 'a' } }]),
        )
      ).images.amd64;
    };
    expect(
      await resolve([
        { ...image('ami-0a'), Name: 'node-neuron' },
        { ...image('ami-0b'), Name: 'node-standard' },
      ]),
    ).toBe('ami-0b');
    expect(
      await resolve([
        { ...image('ami-0new', '2026-02-01T00:00:00.000Z'), DeprecationTime: '2026-02-15T00:00:00.000Z' },
        image('ami-0old', '2025-01-01T00:00:00.000Z'),
      ]),
    ).toBe('ami-0old');
    expect(
      await resolve([
        { ...image('ami-0new', '2026-02-01T00:00:00.000Z'), DeprecationTime: '2027-01-01T00:00:00.000Z' },
        image('ami-0old', '2025-01-01T00:00:00.000Z'),
      ]),
    ).toBe('ami-0new');
  });
});

describe('Ec2NodeClassResolver: subnet and security group terms as the AWS provider queries them', () => {
  beforeEach(() => {
    ec2.reset();
    ssm.reset();
    ec2.on(DescribeImagesCommand).resolves({ Images: [image('ami-0a')] });
  });

  it('one query per tag term, every id term in one subnet-id / group-id filter (an id EC2 does not know matches nothing)', async () => {
    ec2
      .on(DescribeSubnetsCommand)
      .resolves({ Subnets: [{ SubnetId: 'subnet-1', AvailabilityZone: 'us-east-1a', AvailabilityZoneId: 'use1-az4', AvailableIpAddressCount: 10 }] });
    ec2.on(DescribeSecurityGroupsCommand).resolves({ SecurityGroups: [{ GroupId: 'sg-1' }] });
    const nc = withAmiTerms([{ id: 'ami-0a' }]);
    nc.spec.subnetSelectorTerms = [{ id: 'subnet-1' }, { tags: { 'karpenter.sh/discovery': 'demo' } }, { id: 'subnet-2' }];
    nc.spec.securityGroupSelectorTerms = [{ id: 'sg-1' }, { name: 'nodes' }];
    const r = await new Ec2NodeClassResolver(sdkLookups(new EC2Client({ region: 'us-east-1' }), new SSMClient({ region: 'us-east-1' })), '1.32').resolve(nc);
    expect(ec2.commandCalls(DescribeSubnetsCommand).map((c) => c.args[0].input)).toEqual([
      { Filters: [{ Name: 'tag:karpenter.sh/discovery', Values: ['demo'] }] },
      { Filters: [{ Name: 'subnet-id', Values: ['subnet-1', 'subnet-2'] }] },
    ]);
    expect(ec2.commandCalls(DescribeSecurityGroupsCommand).map((c) => c.args[0].input)).toEqual([
      { Filters: [{ Name: 'group-name', Values: ['nodes'] }] },
      { Filters: [{ Name: 'group-id', Values: ['sg-1'] }] },
    ]);
    expect(r.subnets).toEqual([{ subnetId: 'subnet-1', zone: 'us-east-1a', zoneId: 'use1-az4', availableIpAddressCount: 10 }]);
  });
});
