/**
 * Accelerated instance types launch the AMI variant they need: an `al2023@` alias resolves the
 * standard, nvidia and neuron images EKS publishes in SSM, and a GPU type's override carries the
 * nvidia image, a Neuron type's the neuron one (KA amifamily/al2023.go, types.go `Variant`).
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { mockClient } from 'aws-sdk-client-mock';
import { DescribeSecurityGroupsCommand, DescribeSubnetsCommand, EC2Client } from '@aws-sdk/client-ec2';
import { GetParameterCommand, ParameterNotFound, SSMClient } from '@aws-sdk/client-ssm';
import { sdkLookups, Ec2NodeClassResolver, resolvedImageIds, type ResolvedNodeClass } from '../../../shared/aws/node-class-resolver.ts';
import { buildLaunchRequests, catalogArchitecture, catalogVariant } from '../../../shared/aws/ec2.ts';
import { nodeClaim } from '../../fakes/index.ts';
import { nodeClass } from '../provisioner/world.ts';

const ec2 = mockClient(EC2Client);
const ssm = mockClient(SSMClient);
const base = '/aws/service/eks/optimized-ami/1.32/amazon-linux-2023';

describe('AL2023 alias: every AMI variant', () => {
  beforeEach(() => {
    ec2.reset();
    ssm.reset();
    ec2.on(DescribeSubnetsCommand).resolves({ Subnets: [{ SubnetId: 'subnet-1', AvailabilityZone: 'ap-northeast-2a', AvailableIpAddressCount: 10 }] });
    ec2.on(DescribeSecurityGroupsCommand).resolves({ SecurityGroups: [{ GroupId: 'sg-1' }] });
  });

  it('reads the standard, nvidia and neuron parameters (arm64: no neuron); a missing one leaves that variant without an image', async () => {
    ssm.on(GetParameterCommand).callsFake((input: { Name: string }) => {
      const m = /amazon-linux-2023\/(x86_64|arm64)\/(standard|nvidia|neuron)\/recommended\/image_id$/.exec(input.Name);
      if (!m || (m[1] === 'arm64' && m[2] === 'nvidia')) throw new ParameterNotFound({ message: 'not found', $metadata: {} });
      return { Parameter: { Value: `ami-0${m[1]}-${m[2]}` } };
    });
    const nc = nodeClass();
    nc.spec.amiSelectorTerms = [{ alias: 'al2023@latest' }];
    const r = await new Ec2NodeClassResolver(sdkLookups(new EC2Client({ region: 'us-east-1' }), new SSMClient({ region: 'us-east-1' })), '1.32').resolve(nc);
    expect(ssm.commandCalls(GetParameterCommand).map((c) => c.args[0].input.Name)).toEqual([
      `${base}/x86_64/standard/recommended/image_id`,
      `${base}/x86_64/nvidia/recommended/image_id`,
      `${base}/x86_64/neuron/recommended/image_id`,
      `${base}/arm64/standard/recommended/image_id`,
      `${base}/arm64/nvidia/recommended/image_id`,
    ]);
    expect(r.images).toEqual({ amd64: 'ami-0x86_64-standard', arm64: 'ami-0arm64-standard' });
    expect(r.variants).toEqual({ nvidia: { amd64: 'ami-0x86_64-nvidia' }, neuron: { amd64: 'ami-0x86_64-neuron' } });
    expect(resolvedImageIds(r).sort()).toEqual(['ami-0arm64-standard', 'ami-0x86_64-neuron', 'ami-0x86_64-nvidia', 'ami-0x86_64-standard']);
  });

  it('a pinned alias names the release of each variant', async () => {
    ssm.on(GetParameterCommand).resolves({ Parameter: { Value: 'ami-0pinned' } });
    const nc = nodeClass();
    await new Ec2NodeClassResolver(sdkLookups(new EC2Client({ region: 'us-east-1' }), new SSMClient({ region: 'us-east-1' })), '1.32').resolve(nc);
    expect(ssm.commandCalls(GetParameterCommand).map((c) => c.args[0].input.Name)).toContain(
      `${base}/x86_64/nvidia/amazon-eks-node-al2023-x86_64-nvidia-1.32-v20250228/image_id`,
    );
  });
});

describe('the launch: each type gets the image of its variant', () => {
  const cluster = {
    name: 'karpenter-demo',
    endpoint: 'https://x.example',
    certificateAuthority: 'Q0E=',
    serviceCidr: '10.100.0.0/16',
    kubernetesVersion: '1.32',
  };
  const subnets = [{ subnetId: 'subnet-a', zone: 'ap-northeast-2a', availableIpAddressCount: 10 }];
  const types = ['c5a.xlarge', 'g5.xlarge', 'inf2.xlarge', 'g5g.xlarge', 'c6g.xlarge'];
  const overrides = (resolved: ResolvedNodeClass) =>
    Object.fromEntries(
      buildLaunchRequests(
        nodeClaim({ name: 'default-abc', phase: 'Pending' }),
        { instanceTypes: types, zones: ['ap-northeast-2a'], capacityTypes: ['on-demand'] },
        nodeClass(),
        resolved,
        { cluster, architectureOf: catalogArchitecture },
      ).createFleet.LaunchTemplateConfigs![0].Overrides!.map((o) => [o.InstanceType, o.ImageId]),
    );

  it('the catalog says which variant a type needs', () => {
    expect(types.map(catalogVariant)).toEqual(['standard', 'nvidia', 'neuron', 'nvidia', 'standard']);
  });

  it('alias resolution: GPU types the nvidia image, Neuron types the neuron image, others the standard one', () => {
    const resolved = {
      subnets,
      securityGroupIds: ['sg-1'],
      images: { amd64: 'ami-std', arm64: 'ami-std-arm' },
      variants: { nvidia: { amd64: 'ami-nv', arm64: 'ami-nv-arm' }, neuron: { amd64: 'ami-neuron' } },
    };
    expect(overrides(resolved)).toEqual({
      'c5a.xlarge': 'ami-std',
      'g5.xlarge': 'ami-nv',
      'inf2.xlarge': 'ami-neuron',
      'g5g.xlarge': 'ami-nv-arm',
      'c6g.xlarge': 'ami-std-arm',
    });
  });

  it('a variant without an image is not launched (never the standard image on a GPU type)', () => {
    const resolved = { subnets, securityGroupIds: ['sg-1'], images: { amd64: 'ami-std', arm64: 'ami-std-arm' }, variants: {} };
    expect(overrides(resolved)).toEqual({ 'c5a.xlarge': 'ami-std', 'c6g.xlarge': 'ami-std-arm' });
  });

  it('AMIs chosen by id, name or tags (no variants): every type launches the image of its architecture, as Karpenter does', () => {
    const resolved = { subnets, securityGroupIds: ['sg-1'], images: { amd64: 'ami-own', arm64: 'ami-own-arm' } };
    expect(overrides(resolved)).toEqual({
      'c5a.xlarge': 'ami-own',
      'g5.xlarge': 'ami-own',
      'inf2.xlarge': 'ami-own',
      'g5g.xlarge': 'ami-own-arm',
      'c6g.xlarge': 'ami-own-arm',
    });
  });
});
