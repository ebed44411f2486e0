import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  CreateFleetCommand,
  DescribeInstancesCommand,
  EC2Client,
  TerminateInstancesCommand,
  CreateTagsCommand,
  CreateLaunchTemplateCommand,
  DescribeLaunchTemplatesCommand,
  type _InstanceType,
} from '@aws-sdk/client-ec2';
import { SSMClient, GetParameterCommand } from '@aws-sdk/client-ssm';
import { VirtualClock } from '../clock.ts';
import { LocalEc2 } from './local-ec2.ts';
import { LocalAwsServer, SpotRequestTagsOnOnDemandMessage } from './server.ts';
import { LocalAuthorizer } from '../iam/authorizer.ts';
import { evaluate } from '../iam/evaluate.ts';
import { policyDocument, type Permission } from '../../../shared/api/iam-policy.ts';

const prices: Record<string, number> = { 'c5a.2xlarge': 0.344, 'c5.2xlarge': 0.384, 'm5.2xlarge': 0.472 };

describe('local EC2 endpoint (real @aws-sdk/client-ec2 against it)', () => {
  let clock: VirtualClock;
  let ec2: LocalEc2;
  let server: LocalAwsServer;
  let client: EC2Client;
  const events: Record<string, any>[] = [];

  beforeEach(async () => {
    // Prepare
    clock = new VirtualClock({ start: '2026-03-06T15:57:00Z', speed: 100 });
    ec2 = new LocalEc2({
      clock,
      region: 'ap-northeast-2',
      zones: [
        { zone: 'ap-northeast-2a', zoneId: 'apne2-az1' },
        { zone: 'ap-northeast-2b', zoneId: 'apne2-az2' },
      ],
      bootSeconds: 300,
      priceOf: (t, _z, ct) => (ct === 'spot' ? prices[t] / 3 : prices[t]),
    });
    events.length = 0;
    ec2.listeners.onEvent = (e) => events.push(e);
    server = new LocalAwsServer({ ec2, clusterName: 'karpenter-demo' });
    const url = await server.start();
    client = new EC2Client({ endpoint: url, region: 'ap-northeast-2', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
    await client.send(
      new CreateLaunchTemplateCommand({
        LaunchTemplateName: 'nodefleet/abc',
        LaunchTemplateData: { UserData: Buffer.from('--node-labels=karpenter.sh/nodepool=default').toString('base64') },
      }),
    );
  });

  afterEach(async () => {
    clock.stop();
    await server.stop();
  });

  const fleet = (capacityType: 'on-demand' | 'spot') =>
    new CreateFleetCommand({
      Type: 'instant',
      TargetCapacitySpecification: { TotalTargetCapacity: 1, DefaultTargetCapacityType: capacityType },
      OnDemandOptions: { AllocationStrategy: 'lowest-price' },
      SpotOptions: { AllocationStrategy: 'price-capacity-optimized' },
      LaunchTemplateConfigs: [
        {
          LaunchTemplateSpecification: { LaunchTemplateName: 'nodefleet/abc', Version: '$Latest' },
          Overrides: ['m5.2xlarge', 'c5.2xlarge', 'c5a.2xlarge'].flatMap((t) => [
            { InstanceType: t as any, SubnetId: ec2.zones[0].subnetId },
            { InstanceType: t as any, SubnetId: ec2.zones[1].subnetId },
          ]),
        },
      ],
      TagSpecifications: [{ ResourceType: 'instance', Tags: [{ Key: 'karpenter.sh/nodeclaim', Value: 'default-n4xc5' }] }],
    });

  it('launches the cheapest on-demand override and describes it with its tags', async () => {
    // Act
    const out = await client.send(fleet('on-demand'));
    // Assess
    expect(out.Errors ?? []).toEqual([]);
    expect(out.Instances?.[0].InstanceType).toBe('c5a.2xlarge');
    expect(out.Instances?.[0].Lifecycle).toBe('on-demand');
    expect(out.Instances?.[0].LaunchTemplateAndOverrides?.Overrides?.AvailabilityZone).toBe('ap-northeast-2a');
    const id = out.Instances![0].InstanceIds![0];
    const d = await client.send(new DescribeInstancesCommand({ Filters: [{ Name: 'tag:karpenter.sh/nodeclaim', Values: ['default-n4xc5'] }] }));
    const inst = d.Reservations![0].Instances![0];
    expect(inst.InstanceId).toBe(id);
    expect(inst.State?.Name).toBe('pending');
    expect(inst.Placement?.AvailabilityZone).toBe('ap-northeast-2a');
    expect(inst.Tags).toContainEqual({ Key: 'karpenter.sh/nodeclaim', Value: 'default-n4xc5' });
    expect(Buffer.from(ec2.instances.get(id)!.userData!, 'base64').toString()).toBe('--node-labels=karpenter.sh/nodepool=default');
    await clock.sleep(301_000);
    const d2 = await client.send(new DescribeInstancesCommand({ InstanceIds: [id] }));
    expect(d2.Reservations![0].Instances![0].State?.Name).toBe('running');
    expect(events.map((e) => e.detail.state)).toEqual(['pending', 'running']);
  });

  it('reports insufficient capacity per override like CreateFleet does, then falls through to the next offering', async () => {
    // Prepare
    ec2.addFault({ instanceTypes: ['c5a.2xlarge'], capacityType: 'on-demand' });
    // Act
    const out = await client.send(fleet('on-demand'));
    // Assess
    expect(out.Instances?.[0].InstanceType).toBe('c5.2xlarge');
    expect(
      out.Errors?.map((e) => [
        e.ErrorCode,
        e.LaunchTemplateAndOverrides?.Overrides?.InstanceType,
        e.LaunchTemplateAndOverrides?.Overrides?.AvailabilityZone,
        e.Lifecycle,
      ]),
    ).toEqual([
      ['InsufficientInstanceCapacity', 'c5a.2xlarge', 'ap-northeast-2a', 'on-demand'],
      ['InsufficientInstanceCapacity', 'c5a.2xlarge', 'ap-northeast-2b', 'on-demand'],
    ]);
  });

  it('returns only errors (and the fleet-level UnfulfillableCapacity) when nothing can launch', async () => {
    ec2.addFault({ capacityType: 'spot' });
    const out = await client.send(fleet('spot'));
    expect(out.Instances ?? []).toEqual([]);
    expect(out.Errors).toHaveLength(7);
    expect(out.Errors!.at(-1)).toEqual({
      ErrorCode: 'UnfulfillableCapacity',
      ErrorMessage: 'Failed to fulfill capacity. Please review errors in the response.',
    });
  });

  it('terminates, emitting shutting-down then terminated, and rejects unknown ids as EC2 does', async () => {
    const out = await client.send(fleet('on-demand'));
    const id = out.Instances![0].InstanceIds![0];
    const t = await client.send(new TerminateInstancesCommand({ InstanceIds: [id] }));
    expect(t.TerminatingInstances?.[0]).toMatchObject({
      InstanceId: id,
      CurrentState: { Code: 32, Name: 'shutting-down' },
      PreviousState: { Code: 0, Name: 'pending' },
    });
    await expect(client.send(new TerminateInstancesCommand({ InstanceIds: ['i-0ffffffffffffffff'] }))).rejects.toMatchObject({
      name: 'InvalidInstanceID.NotFound',
    });
    await clock.sleep(11_000);
    expect(ec2.instances.get(id)?.state).toBe('terminated');
    expect(events.map((e) => e.detail.state)).toEqual(['pending', 'shutting-down', 'terminated']);
  });

  it('emits a spot interruption warning shaped like the AWS event and reclaims after 2 minutes', async () => {
    const out = await client.send(fleet('spot'));
    const id = out.Instances![0].InstanceIds![0];
    expect(out.Instances![0].InstanceType).toBe('c5a.2xlarge');
    await clock.sleep(2500);
    ec2.interruptSpot(id);
    const warning = events.find((e) => e['detail-type'] === 'EC2 Spot Instance Interruption Warning')!;
    expect(Object.keys(warning).sort()).toEqual(['account', 'detail', 'detail-type', 'id', 'region', 'resources', 'source', 'time', 'version']);
    expect(warning.detail).toEqual({ 'instance-id': id, 'instance-action': 'terminate' });
    expect(warning.resources).toEqual([`arn:aws:ec2:ap-northeast-2:123456789012:instance/${id}`]);
    await clock.sleep(121_000);
    const reclaimed = ec2.instances.get(id)!;
    expect(reclaimed.terminatedBy).toBe('spot-reclaim');
    expect(['shutting-down', 'terminated']).toContain(reclaimed.state);
    expect(reclaimed.terminatingAtMs! - reclaimed.interruptionNoticeAtMs!).toBeGreaterThanOrEqual(120_000);
  });

  it('tags, launch templates and SSM AMI parameters', async () => {
    const out = await client.send(fleet('on-demand'));
    const id = out.Instances![0].InstanceIds![0];
    await client.send(new CreateTagsCommand({ Resources: [id], Tags: [{ Key: 'Name', Value: 'n1' }] }));
    expect(ec2.instances.get(id)?.tags.Name).toBe('n1');
    await client.send(
      new CreateLaunchTemplateCommand({
        LaunchTemplateName: 'nodefleet/x',
        LaunchTemplateData: { ImageId: 'ami-1' },
        TagSpecifications: [{ ResourceType: 'launch-template', Tags: [{ Key: 'k', Value: 'v' }] }],
      }),
    );
    const lts = await client.send(new DescribeLaunchTemplatesCommand({ Filters: [{ Name: 'tag:k', Values: ['v'] }] }));
    expect(lts.LaunchTemplates?.map((l) => l.LaunchTemplateName)).toEqual(['nodefleet/x']);
    await expect(client.send(new DescribeLaunchTemplatesCommand({ LaunchTemplateNames: ['nope'] }))).rejects.toMatchObject({
      name: 'InvalidLaunchTemplateName.NotFoundException',
    });
    const ssm = new SSMClient({ endpoint: server.url, region: 'ap-northeast-2', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
    const p = await ssm.send(new GetParameterCommand({ Name: '/aws/service/eks/optimized-ami/1.32/amazon-linux-2023/arm64/standard/recommended/image_id' }));
    expect(p.Parameter?.Value).toBe('ami-0b1c2d3e4f5a60719');
  });
});

describe('local EC2 endpoint: what EC2 refuses, and IAM enforcement per calling function', () => {
  let clock: VirtualClock;
  let ec2: LocalEc2;
  let server: LocalAwsServer;
  let url: string;
  const region = 'ap-northeast-2';
  const cluster = 'karpenter-demo';

  const client = (accessKeyId: string) => new EC2Client({ endpoint: url, region, credentials: { accessKeyId, secretAccessKey: 'local' } });
  const template = (name: string, capacityType: 'spot' | 'on-demand') =>
    new CreateLaunchTemplateCommand({
      LaunchTemplateName: name,
      LaunchTemplateData: {
        IamInstanceProfile: { Name: 'KarpenterNodeInstanceProfile' },
        TagSpecifications: (capacityType === 'spot' ? (['network-interface', 'spot-instances-request'] as const) : (['network-interface'] as const)).map(
          (ResourceType) => ({ ResourceType, Tags: tags() }),
        ),
      },
      TagSpecifications: [{ ResourceType: 'launch-template', Tags: tags() }],
    });
  // The tags every nodefleet launch writes (shared/aws/ec2.ts launchTags / templateTags).
  const tags = () => [
    { Key: 'nodefleet.io/cluster', Value: cluster },
    { Key: `kubernetes.io/cluster/${cluster}`, Value: 'owned' },
    { Key: 'eks:eks-cluster-name', Value: cluster },
    { Key: 'karpenter.sh/nodepool', Value: 'default' },
  ];
  const launch = (name: string, capacityType: 'spot' | 'on-demand') =>
    new CreateFleetCommand({
      Type: 'instant',
      TargetCapacitySpecification: { TotalTargetCapacity: 1, DefaultTargetCapacityType: capacityType },
      LaunchTemplateConfigs: [
        {
          LaunchTemplateSpecification: { LaunchTemplateName: name, Version: '$Latest' },
          Overrides: [{ InstanceType: 'c5a.2xlarge', SubnetId: ec2.zones[0].subnetId, ImageId: 'ami-0a1b2c3d4e5f60718' }],
        },
      ],
      TagSpecifications: (['instance', 'volume', 'fleet'] as const).map((ResourceType) => ({
        ResourceType,
        Tags: [...tags(), { Key: 'karpenter.sh/nodeclaim', Value: 'default-abcde' }],
      })),
    });

  async function start(permissions: readonly Permission[]) {
    clock = new VirtualClock({ start: '2026-03-06T15:57:00Z', speed: 100 });
    ec2 = new LocalEc2({ clock, region, zones: [{ zone: 'ap-northeast-2a', zoneId: 'apne2-az1' }], bootSeconds: 300, priceOf: () => 0.3 });
    const account = ec2.accountId;
    const nodeRoleArn = `arn:aws:iam::${account}:role/KarpenterNodeRole`;
    const policy = policyDocument(permissions, {
      partition: 'aws',
      region,
      account,
      clusterName: cluster,
      tableArn: `arn:aws:dynamodb:${region}:${account}:table/t`,
      nodeRoleArn,
      eventBusArn: `arn:aws:events:${region}:${account}:event-bus/b`,
    });
    const authorizer = new LocalAuthorizer(
      new Map([['provisioner-key', { name: 'provisioner', roleArn: `arn:aws:iam::${account}:role/provisioner`, policies: [policy] }]]),
      evaluate,
    );
    server = new LocalAwsServer({
      ec2,
      clusterName: cluster,
      authorizer,
      roleOfInstanceProfile: (p) => (p === 'KarpenterNodeInstanceProfile' ? nodeRoleArn : undefined),
    });
    url = await server.start();
    return authorizer;
  }

  afterEach(async () => {
    clock.stop();
    await server.stop();
  });

  it('refuses spot-request tag specifications on an on-demand fleet, as EC2 does (every override fails, nothing launches)', async () => {
    // Prepare
    await start(['ec2Launch']);
    const c = client('provisioner-key');
    await c.send(template('spot-template', 'spot'));
    // Act
    const out = await c.send(launch('spot-template', 'on-demand'));
    // Assess
    expect(out.Instances ?? []).toEqual([]);
    expect(out.Errors?.map((e) => [e.ErrorCode, e.ErrorMessage, e.Lifecycle])).toEqual([
      ['InvalidParameterValue', SpotRequestTagsOnOnDemandMessage, 'on-demand'],
    ]);
    expect(ec2.instances.size).toBe(0);
  });

  it('allows a spot launch from a spot template that tags its spot request, and tags the instance with its template id', async () => {
    // Prepare
    const authorizer = await start(['ec2Launch']);
    const c = client('provisioner-key');
    const lt = await c.send(template('spot-template', 'spot'));
    // Act
    const out = await c.send(launch('spot-template', 'spot'));
    // Assess
    expect(out.Instances?.[0]?.InstanceIds).toHaveLength(1);
    expect(authorizer.denials).toEqual([]);
    expect([...ec2.instances.values()][0].tags['aws:ec2launchtemplate:id']).toBe(lt.LaunchTemplate?.LaunchTemplateId);
  });

  it('denies a spot launch whose template does not tag the spot request (UnauthorizedOperation naming RunInstances on the spot request)', async () => {
    // Prepare
    const authorizer = await start(['ec2Launch']);
    const c = client('provisioner-key');
    await c.send(template('od-template', 'on-demand'));
    // Act
    const sent = c.send(launch('od-template', 'spot'));
    // Assess
    await expect(sent).rejects.toMatchObject({ name: 'UnauthorizedOperation', $metadata: { httpStatusCode: 403 } });
    await expect(sent).rejects.toThrow(/ec2:RunInstances on resource: arn:aws:ec2:ap-northeast-2:\d+:spot-instances-request\/\*/);
    expect(authorizer.denials.map((d) => d.request?.action)).toEqual(['ec2:RunInstances']);
    expect(ec2.instances.size).toBe(0);
  });

  it('a launch naming a launch template that no longer exists (gc collected it) is NotFound, as EC2 answers, not a denial', async () => {
    // Prepare
    const authorizer = await start(['ec2Launch']);
    const c = client('provisioner-key');
    // Act
    const sent = c.send(launch('collected-template', 'on-demand'));
    // Assess
    await expect(sent).rejects.toMatchObject({ name: 'InvalidLaunchTemplateName.NotFoundException' });
    expect(authorizer.denials).toEqual([]);
  });

  // A fleet names one template per kubelet maxPods (shared/aws/ec2.ts): two configs, each its own types.
  const launchTwo = (first: string, second: string, secondType: _InstanceType) =>
    new CreateFleetCommand({
      Type: 'instant',
      TargetCapacitySpecification: { TotalTargetCapacity: 1, DefaultTargetCapacityType: 'on-demand' },
      LaunchTemplateConfigs: [
        {
          LaunchTemplateSpecification: { LaunchTemplateName: first, Version: '$Latest' },
          Overrides: [{ InstanceType: 'c5a.2xlarge', SubnetId: ec2.zones[0].subnetId, ImageId: 'ami-0a1b2c3d4e5f60718', Priority: 2 }],
        },
        {
          LaunchTemplateSpecification: { LaunchTemplateName: second, Version: '$Latest' },
          Overrides: [{ InstanceType: secondType, SubnetId: ec2.zones[0].subnetId, ImageId: 'ami-0a1b2c3d4e5f60718', Priority: 1 }],
        },
      ],
      TagSpecifications: (['instance', 'volume', 'fleet'] as const).map((ResourceType) => ({
        ResourceType,
        Tags: [...tags(), { Key: 'karpenter.sh/nodeclaim', Value: 'default-abcde' }],
      })),
    });

  it('a fleet whose second launch template no longer exists is NotFound, not a denial (chaos seeds 1090, 1136)', async () => {
    // Prepare
    const authorizer = await start(['ec2Launch']);
    const c = client('provisioner-key');
    await c.send(template('od-template', 'on-demand'));
    // Act
    const sent = c.send(launchTwo('od-template', 'collected-template', 'm5.large'));
    // Assess
    await expect(sent).rejects.toMatchObject({ name: 'InvalidLaunchTemplateName.NotFoundException' });
    expect(authorizer.denials).toEqual([]);
    expect(ec2.instances.size).toBe(0);
  });

  it("an instance launched from a fleet's second config carries that config's template id and user data", async () => {
    // Prepare
    await start(['ec2Launch']);
    const c = client('provisioner-key');
    await c.send(template('od-template', 'on-demand'));
    const second = await c.send(
      new CreateLaunchTemplateCommand({
        ...template('od-template-2', 'on-demand').input,
        LaunchTemplateName: 'od-template-2',
        LaunchTemplateData: { ...template('x', 'on-demand').input.LaunchTemplateData, UserData: Buffer.from('second').toString('base64') },
      }),
    );
    // Act
    const out = await c.send(
      new CreateFleetCommand({ ...launchTwo('od-template', 'od-template-2', 'm5.large').input, OnDemandOptions: { AllocationStrategy: 'prioritized' } }),
    );
    // Assess
    expect(out.Instances?.[0]?.InstanceType).toBe('m5.large');
    const inst = [...ec2.instances.values()][0];
    expect(inst.tags['aws:ec2launchtemplate:id']).toBe(second.LaunchTemplate?.LaunchTemplateId);
    expect(inst.launchTemplateName).toBe('od-template-2');
    expect(Buffer.from(inst.userData ?? '', 'base64').toString()).toBe('second');
  });

  it("denies what the caller's policy does not grant (no ec2Terminate) and callers it does not know (AuthFailure)", async () => {
    // Prepare
    await start(['ec2Launch', 'ec2Describe']);
    const c = client('provisioner-key');
    await c.send(template('od-template', 'on-demand'));
    const id = (await c.send(launch('od-template', 'on-demand'))).Instances![0].InstanceIds![0];
    // Act + Assess
    await expect(c.send(new TerminateInstancesCommand({ InstanceIds: [id] }))).rejects.toMatchObject({ name: 'UnauthorizedOperation' });
    await expect(client('stranger').send(new DescribeInstancesCommand({}))).rejects.toMatchObject({ name: 'AuthFailure' });
    expect((await c.send(new DescribeInstancesCommand({ InstanceIds: [id] }))).Reservations).toHaveLength(1);
  });
});
