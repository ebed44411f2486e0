import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CreateFleetCommand, DescribeInstancesCommand, EC2Client, TerminateInstancesCommand, CreateTagsCommand, CreateLaunchTemplateCommand, DescribeLaunchTemplatesCommand } from '@aws-sdk/client-ec2';
import { SSMClient, GetParameterCommand } from '@aws-sdk/client-ssm';
import { VirtualClock } from '../clock.ts';
import { LocalEc2 } from './local-ec2.ts';
import { LocalAwsServer } from './server.ts';

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
    await client.send(new CreateLaunchTemplateCommand({ LaunchTemplateName: 'nodefleet/abc', LaunchTemplateData: { UserData: Buffer.from('--node-labels=karpenter.sh/nodepool=default').toString('base64') } }));
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
    expect(out.Errors?.map((e) => [e.ErrorCode, e.LaunchTemplateAndOverrides?.Overrides?.InstanceType, e.LaunchTemplateAndOverrides?.Overrides?.AvailabilityZone, e.Lifecycle])).toEqual([
      ['InsufficientInstanceCapacity', 'c5a.2xlarge', 'ap-northeast-2a', 'on-demand'],
      ['InsufficientInstanceCapacity', 'c5a.2xlarge', 'ap-northeast-2b', 'on-demand'],
    ]);
  });

  it('returns only errors (and the fleet-level UnfulfillableCapacity) when nothing can launch', async () => {
    ec2.addFault({ capacityType: 'spot' });
    const out = await client.send(fleet('spot'));
    expect(out.Instances ?? []).toEqual([]);
    expect(out.Errors).toHaveLength(7);
    expect(out.Errors!.at(-1)).toEqual({ ErrorCode: 'UnfulfillableCapacity', ErrorMessage: 'Failed to fulfill capacity. Please review errors in the response.' });
  });

  it('terminates, emitting shutting-down then terminated, and rejects unknown ids as EC2 does', async () => {
    const out = await client.send(fleet('on-demand'));
    const id = out.Instances![0].InstanceIds![0];
    const t = await client.send(new TerminateInstancesCommand({ InstanceIds: [id] }));
    expect(t.TerminatingInstances?.[0]).toMatchObject({ InstanceId: id, CurrentState: { Code: 32, Name: 'shutting-down' }, PreviousState: { Code: 0, Name: 'pending' } });
    await expect(client.send(new TerminateInstancesCommand({ InstanceIds: ['i-0ffffffffffffffff'] }))).rejects.toMatchObject({ name: 'InvalidInstanceID.NotFound' });
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
    await client.send(new CreateLaunchTemplateCommand({ LaunchTemplateName: 'nodefleet/x', LaunchTemplateData: { ImageId: 'ami-1' }, TagSpecifications: [{ ResourceType: 'launch-template', Tags: [{ Key: 'k', Value: 'v' }] }] }));
    const lts = await client.send(new DescribeLaunchTemplatesCommand({ Filters: [{ Name: 'tag:k', Values: ['v'] }] }));
    expect(lts.LaunchTemplates?.map((l) => l.LaunchTemplateName)).toEqual(['nodefleet/x']);
    await expect(client.send(new DescribeLaunchTemplatesCommand({ LaunchTemplateNames: ['nope'] }))).rejects.toMatchObject({ name: 'InvalidLaunchTemplateName.NotFoundException' });
    const ssm = new SSMClient({ endpoint: server.url, region: 'ap-northeast-2', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
    const p = await ssm.send(new GetParameterCommand({ Name: '/aws/service/eks/optimized-ami/1.32/amazon-linux-2023/arm64/standard/recommended/image_id' }));
    expect(p.Parameter?.Value).toBe('ami-0b1c2d3e4f5a60719');
  });
});
