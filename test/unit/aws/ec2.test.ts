import { readFileSync } from 'node:fs';
import { beforeEach, describe, expect, it } from 'vitest';
import { mockClient } from 'aws-sdk-client-mock';
import {
  CreateFleetCommand,
  CreateLaunchTemplateCommand,
  DescribeInstancesCommand,
  DescribeLaunchTemplatesCommand,
  EC2Client,
  TerminateInstancesCommand,
  type CreateFleetCommandOutput,
} from '@aws-sdk/client-ec2';
import { Ec2CloudProvider, buildLaunchRequests, guessArchitecture, catalogArchitecture, launchTemplateData } from '../../../shared/aws/ec2.ts';
import { StaticNodeClassResolver } from '../../../shared/aws/node-class-resolver.ts';
import { launchFailure, launchFailureReason, launchFailuresFrom, unavailableOfferingsFrom } from '../../../shared/aws/ec2-errors.ts';
import { buildAl2023UserData, kubeletMaySetLabel } from '../../../shared/aws/user-data.ts';
import { InsufficientCapacityError, TransientError, ValidationError, launchFailuresOf } from '../../../shared/api/errors.ts';
import { nodeClaim } from '../../fakes/index.ts';
import { nodeClass } from '../provisioner/world.ts';
import { readLaunchTemplateUserData } from './nodeadm-reader.ts';

const fleetErrors = () =>
  JSON.parse(readFileSync(new URL('../../fixtures/events/createfleet-response-errors.json', import.meta.url), 'utf8')) as CreateFleetCommandOutput;

const cluster = {
  name: 'karpenter-demo',
  endpoint: 'https://ABC.gr7.ap-northeast-2.eks.amazonaws.com',
  certificateAuthority: 'Q0E=',
  serviceCidr: '10.100.0.0/16',
  kubernetesVersion: '1.32',
};
const resolved = {
  subnets: [
    { subnetId: 'subnet-a1', zone: 'ap-northeast-2a', availableIpAddressCount: 100 },
    { subnetId: 'subnet-a2', zone: 'ap-northeast-2a', availableIpAddressCount: 4000 },
    { subnetId: 'subnet-b1', zone: 'ap-northeast-2b', availableIpAddressCount: 50 },
    { subnetId: 'subnet-c1', zone: 'ap-northeast-2c', availableIpAddressCount: 50 },
  ],
  securityGroupIds: ['sg-1'],
  images: { amd64: 'ami-0amd64', arm64: 'ami-0arm64' },
};
const claim = () =>
  nodeClaim({
    name: 'default-9hnrc',
    cluster: 'karpenter-demo',
    phase: 'Pending',
    labels: { 'karpenter.sh/nodepool': 'default', team: 'a', 'kubernetes.io/arch': 'amd64', 'karpenter.k8s.aws/instance-category': 'c' },
    startupTaints: [{ key: 'cni/not-ready', effect: 'NoSchedule' }],
  });
const ctx = { cluster, instanceProfileName: 'KarpenterNodeInstanceProfile', architectureOf: catalogArchitecture };

describe('buildLaunchRequests', () => {
  it('a reserved launch targets its reservation: template capacity-reservations-only with the id (one template per reservation), an on-demand fleet (KA launchtemplate/types.go, instance/types.go)', () => {
    const launch = (id: string) => ({
      instanceTypes: ['c5a.2xlarge'],
      zones: ['ap-northeast-2a'],
      capacityTypes: ['reserved'],
      offerings: [{ instanceType: 'c5a.2xlarge', zone: 'ap-northeast-2a' }],
      capacityReservation: { id, type: 'default' as const, interruptible: false },
    });
    const r = buildLaunchRequests(claim(), launch('cr-0a1'), nodeClass(), resolved, ctx);
    expect(r.capacityType).toBe('reserved');
    expect(r.launchTemplates[0].LaunchTemplateData!.CapacityReservationSpecification).toEqual({
      CapacityReservationPreference: 'capacity-reservations-only',
      CapacityReservationTarget: { CapacityReservationId: 'cr-0a1' },
    });
    expect(r.createFleet.TargetCapacitySpecification!.DefaultTargetCapacityType).toBe('on-demand');
    expect(r.createFleet.OnDemandOptions).toEqual({ AllocationStrategy: 'lowest-price' });
    expect(r.createFleet.LaunchTemplateConfigs![0].Overrides).toHaveLength(1);
    const other = buildLaunchRequests(claim(), launch('cr-0b2'), nodeClass(), resolved, ctx);
    expect(other.launchTemplates[0].LaunchTemplateName).not.toBe(r.launchTemplates[0].LaunchTemplateName);
    // Spot and on-demand launches stay out of open reservations.
    const od = buildLaunchRequests(claim(), { ...launch('cr-0a1'), capacityTypes: ['on-demand'] }, nodeClass(), resolved, ctx);
    expect(od.launchTemplates[0].LaunchTemplateData!.CapacityReservationSpecification).toEqual({ CapacityReservationPreference: 'none' });
  });

  it('a capacity block or an interruptible reservation is refused with one line', () => {
    const launch = (type: 'default' | 'capacity-block', interruptible: boolean) => ({
      instanceTypes: ['c5a.2xlarge'],
      zones: ['ap-northeast-2a'],
      capacityTypes: ['reserved'],
      capacityReservation: { id: 'cr-0a1', type, interruptible },
    });
    expect(() => buildLaunchRequests(claim(), launch('capacity-block', false), nodeClass(), resolved, ctx)).toThrow(
      /capacity blocks are not supported by nodefleet/,
    );
    expect(() => buildLaunchRequests(claim(), launch('default', true), nodeClass(), resolved, ctx)).toThrow(
      /interruptible capacity reservations are not supported/,
    );
  });

  it('one launch template per maxPods value: each type launches with the pods it was planned with, unless the class sets kubelet.maxPods', () => {
    const launch = {
      instanceTypes: ['c5a.2xlarge', 'c6g.2xlarge', 'c5a.xlarge'],
      zones: ['ap-northeast-2a'],
      capacityTypes: ['on-demand'],
      maxPods: { 'c5a.2xlarge': 58, 'c6g.2xlarge': 58, 'c5a.xlarge': 29 },
    };
    const r = buildLaunchRequests(claim(), launch, nodeClass(), resolved, ctx);
    const maxPodsOf = (name: string | undefined) =>
      readLaunchTemplateUserData(r.launchTemplates.find((t) => t.LaunchTemplateName === name)!.LaunchTemplateData!.UserData!).nodeConfigs[0].spec?.kubelet
        ?.config?.maxPods;
    const byConfig = r.createFleet.LaunchTemplateConfigs!.map((c) => ({
      maxPods: maxPodsOf(c.LaunchTemplateSpecification!.LaunchTemplateName),
      types: c.Overrides!.map((o) => o.InstanceType),
    }));
    expect(r.launchTemplates).toHaveLength(2);
    expect(byConfig).toEqual([
      { maxPods: 58, types: ['c5a.2xlarge', 'c6g.2xlarge'] },
      { maxPods: 29, types: ['c5a.xlarge'] },
    ]);
    const base = nodeClass();
    const fixed = buildLaunchRequests(claim(), launch, { ...base, spec: { ...base.spec, kubelet: { maxPods: 40 } } }, resolved, ctx);
    expect(fixed.launchTemplates).toHaveLength(1);
    expect(readLaunchTemplateUserData(fixed.launchTemplates[0].LaunchTemplateData!.UserData!).nodeConfigs[0].spec?.kubelet?.config?.maxPods).toBe(40);
  });
  it('CreateFleet instant, lowest-price on-demand, types × one subnet per admitted zone (most free IPs), AMI per arch', () => {
    const r = buildLaunchRequests(
      claim(),
      { instanceTypes: ['c5a.2xlarge', 'c6g.2xlarge'], zones: ['ap-northeast-2a', 'ap-northeast-2b'], capacityTypes: ['on-demand'] },
      nodeClass(),
      resolved,
      ctx,
    );
    const f = r.createFleet;
    expect(f.Type).toBe('instant');
    expect(f.TargetCapacitySpecification).toEqual({ TotalTargetCapacity: 1, DefaultTargetCapacityType: 'on-demand' });
    expect(f.OnDemandOptions).toEqual({ AllocationStrategy: 'lowest-price' });
    expect(f.SpotOptions).toBeUndefined();
    expect(f.LaunchTemplateConfigs![0].Overrides).toEqual([
      { InstanceType: 'c5a.2xlarge', SubnetId: 'subnet-a2', AvailabilityZone: 'ap-northeast-2a', ImageId: 'ami-0amd64' },
      { InstanceType: 'c5a.2xlarge', SubnetId: 'subnet-b1', AvailabilityZone: 'ap-northeast-2b', ImageId: 'ami-0amd64' },
      { InstanceType: 'c6g.2xlarge', SubnetId: 'subnet-a2', AvailabilityZone: 'ap-northeast-2a', ImageId: 'ami-0arm64' },
      { InstanceType: 'c6g.2xlarge', SubnetId: 'subnet-b1', AvailabilityZone: 'ap-northeast-2b', ImageId: 'ami-0arm64' },
    ]);
    const tags = Object.fromEntries(f.TagSpecifications![0].Tags!.map((t) => [t.Key, t.Value]));
    expect(tags).toMatchObject({
      'nodefleet.io/cluster': 'karpenter-demo',
      'karpenter.sh/nodepool': 'default',
      'karpenter.sh/nodeclaim': 'default-9hnrc',
      'kubernetes.io/cluster/karpenter-demo': 'owned',
    });
    expect(f.TagSpecifications!.map((t) => t.ResourceType)).toEqual(['instance', 'volume', 'fleet']);
    const data = r.launchTemplates[0].LaunchTemplateData!;
    expect(data.MetadataOptions).toEqual({ HttpEndpoint: 'enabled', HttpProtocolIpv6: 'disabled', HttpPutResponseHopLimit: 1, HttpTokens: 'required' });
    expect(data.BlockDeviceMappings).toEqual([{ DeviceName: '/dev/xvda', Ebs: { VolumeSize: 20, VolumeType: 'gp3', Encrypted: true } }]);
    expect(data.CapacityReservationSpecification).toEqual({ CapacityReservationPreference: 'none' });
    expect(data.IamInstanceProfile).toEqual({ Name: 'KarpenterNodeInstanceProfile' });
    const [nodeConfig] = readLaunchTemplateUserData(data.UserData!).nodeConfigs;
    expect(nodeConfig.spec?.cluster?.apiServerEndpoint).toBe('https://ABC.gr7.ap-northeast-2.eks.amazonaws.com');
    expect(nodeConfig.spec?.kubelet?.flags).toEqual([
      '--node-labels=karpenter.k8s.aws/instance-category=c,karpenter.sh/capacity-type=on-demand,karpenter.sh/do-not-sync-taints=true,karpenter.sh/nodepool=default,team=a',
      '--register-with-taints=cni/not-ready:NoSchedule,karpenter.sh/unregistered:NoExecute',
    ]);
    expect(r.launchTemplates[0].LaunchTemplateName).toMatch(/^nodefleet\/karpenter-demo\/default\/[0-9a-f]{16}$/);
  });

  it('with offerings, a (type, zone) marked unavailable is not offered even while its zone stays open for other types', () => {
    const r = buildLaunchRequests(
      claim(),
      {
        instanceTypes: ['c5a.2xlarge', 'c6g.2xlarge'],
        zones: ['ap-northeast-2a', 'ap-northeast-2b'],
        capacityTypes: ['spot'],
        // c5a.2xlarge spot in 2a is out of capacity (ICE cache); c6g.2xlarge is fine in both zones.
        offerings: [
          { instanceType: 'c5a.2xlarge', zone: 'ap-northeast-2b' },
          { instanceType: 'c6g.2xlarge', zone: 'ap-northeast-2a' },
          { instanceType: 'c6g.2xlarge', zone: 'ap-northeast-2b' },
        ],
      },
      nodeClass(),
      resolved,
      ctx,
    );
    expect(r.createFleet.LaunchTemplateConfigs![0].Overrides!.map((o) => `${o.InstanceType}/${o.AvailabilityZone}`)).toEqual([
      'c5a.2xlarge/ap-northeast-2b',
      'c6g.2xlarge/ap-northeast-2a',
      'c6g.2xlarge/ap-northeast-2b',
    ]);
  });

  it('spot uses price-capacity-optimized; the same claim and launch give the same ClientToken', () => {
    const a = buildLaunchRequests(
      claim(),
      { instanceTypes: ['c5a.2xlarge'], zones: ['ap-northeast-2a'], capacityTypes: ['spot', 'on-demand'] },
      nodeClass(),
      resolved,
      ctx,
    );
    const b = buildLaunchRequests(
      claim(),
      { instanceTypes: ['c5a.2xlarge'], zones: ['ap-northeast-2a'], capacityTypes: ['spot', 'on-demand'] },
      nodeClass(),
      resolved,
      ctx,
    );
    expect(a.createFleet.SpotOptions).toEqual({ AllocationStrategy: 'price-capacity-optimized' });
    expect(a.createFleet.TargetCapacitySpecification!.DefaultTargetCapacityType).toBe('spot');
    expect(a.createFleet.ClientToken).toBe(b.createFleet.ClientToken);
    expect(a.createFleet.ClientToken!.length).toBeLessThanOrEqual(64);
  });

  it('at most 60 instance types per fleet', () => {
    const types = Array.from({ length: 80 }, (_, i) => `m5.type${i}`);
    const r = buildLaunchRequests(claim(), { instanceTypes: types, zones: ['ap-northeast-2c'], capacityTypes: ['on-demand'] }, nodeClass(), resolved, ctx);
    expect(r.createFleet.LaunchTemplateConfigs![0].Overrides).toHaveLength(60);
  });
});

describe('EC2 error mapping (fixture: createfleet-response-errors.json)', () => {
  it('capacity errors with overrides become offerings; the summary error marks nothing', () => {
    const errs = fleetErrors().Errors!.map((e) => ({
      errorCode: e.ErrorCode,
      lifecycle: e.Lifecycle,
      instanceType: e.LaunchTemplateAndOverrides?.Overrides?.InstanceType,
      zone: e.LaunchTemplateAndOverrides?.Overrides?.AvailabilityZone,
    }));
    expect(unavailableOfferingsFrom(errs, 'on-demand')).toEqual([
      { instanceType: 'c4.xlarge', zone: 'us-east-1a', capacityType: 'on-demand' },
      { instanceType: 'c5.xlarge', zone: 'us-east-1b', capacityType: 'spot' },
    ]);
    expect(launchFailure(errs, 'on-demand')).toBeInstanceOf(InsufficientCapacityError);
    expect(launchFailure([{ errorCode: 'RequestLimitExceeded' }], 'spot')).toBeInstanceOf(TransientError);
    expect(launchFailure([{ errorCode: 'InvalidParameterValue', instanceType: 'x', zone: 'z' }], 'spot').name).toBe('CreateFleetError');
  });

  it('each error entry is a launch failure with the reason Karpenter derives from its code (KA ToReasonMessage)', () => {
    expect(launchFailureReason('InsufficientInstanceCapacity', 'We currently do not have sufficient c5.large capacity')).toBe('LaunchFailed');
    expect(launchFailureReason('UnfulfillableCapacity', 'Unable to fulfill capacity')).toBe('LaunchFailed');
    expect(launchFailureReason('VcpuLimitExceeded', 'You have requested more vCPU capacity')).toBe('VCPULimitExceeded');
    expect(launchFailureReason('MaxSpotInstanceCountExceeded', '')).toBe('SpotQuotaExceeded');
    expect(launchFailureReason('UnauthorizedOperation', 'You are not authorized to perform this operation.')).toBe('Unauthorized');
    expect(launchFailureReason('AuthFailure.ServiceLinkedRoleCreationNotPermitted', '')).toBe('SpotSLRCreationFailed');
    expect(launchFailureReason('InvalidAMIID.NotFound', 'The image id does not exist')).toBe('AMINotFound');
    expect(launchFailureReason('RequestLimitExceeded', '')).toBe('RequestLimitExceeded');
    const errs = [{ errorCode: 'InsufficientInstanceCapacity', instanceType: 'c5.large', zone: 'us-east-1a' }, { errorCode: 'VcpuLimitExceeded' }];
    expect(launchFailuresFrom(errs, 'spot', (z) => (z === 'us-east-1a' ? 'use1-az1' : undefined))).toEqual([
      { zone: 'us-east-1a', zoneId: 'use1-az1', capacityType: 'spot', reason: 'LaunchFailed' },
      { zone: '', capacityType: 'spot', reason: 'VCPULimitExceeded' },
    ]);
    // Carried by the error a launch that placed nothing throws, whatever its kind.
    expect(launchFailuresOf(launchFailure(errs.slice(0, 1), 'spot'))).toHaveLength(1);
    expect(launchFailuresOf(launchFailure([{ errorCode: 'RequestLimitExceeded' }], 'spot'))).toEqual([
      { zone: '', capacityType: 'spot', reason: 'RequestLimitExceeded' },
    ]);
    expect(launchFailuresOf(launchFailure([{ errorCode: 'InvalidParameterValue', instanceType: 'x', zone: 'z' }], 'spot'))[0].reason).toBe('LaunchFailed');
  });
});

describe('Ec2CloudProvider (aws-sdk-client-mock)', () => {
  const ec2 = mockClient(EC2Client);
  beforeEach(() => ec2.reset());
  const provider = () =>
    new Ec2CloudProvider({
      ec2: new EC2Client({ region: 'us-east-1' }),
      resolver: new StaticNodeClassResolver({
        ...resolved,
        subnets: [
          { subnetId: 'subnet-1a', zone: 'us-east-1a', availableIpAddressCount: 10 },
          { subnetId: 'subnet-1b', zone: 'us-east-1b', availableIpAddressCount: 10 },
        ],
      }),
      cluster,
      architectureOf: guessArchitecture,
    });

  it('creates the launch template once, launches, and reports the pools that failed alongside', async () => {
    ec2.on(DescribeLaunchTemplatesCommand).rejects(Object.assign(new Error('not found'), { name: 'InvalidLaunchTemplateName.NotFoundException' }));
    ec2.on(CreateLaunchTemplateCommand).resolves({});
    ec2.on(CreateFleetCommand).resolves(fleetErrors());
    const p = provider();
    const launch = { instanceTypes: ['c5.large', 'c4.xlarge', 'c5.xlarge'], zones: ['us-east-1a', 'us-east-1b'], capacityTypes: ['on-demand'] };
    const r = await p.create(claim(), launch, nodeClass());
    expect(r).toMatchObject({
      instanceId: 'i-0abc1234def567891',
      instanceType: 'c5.large',
      zone: 'us-east-1a',
      capacityType: 'on-demand',
      imageId: 'ami-0amd64',
    });
    expect(r.unavailableOfferings).toEqual([
      { instanceType: 'c4.xlarge', zone: 'us-east-1a', capacityType: 'on-demand' },
      { instanceType: 'c5.xlarge', zone: 'us-east-1b', capacityType: 'spot' },
    ]);
    // Every error entry of the fixture, the summary one included (Karpenter counts each).
    expect(r.launchFailures).toHaveLength(fleetErrors().Errors!.length);
    expect(r.launchFailures?.every((f) => f.capacityType === 'on-demand')).toBe(true);
    await p.create(claim(), launch, nodeClass());
    expect(ec2.commandCalls(CreateLaunchTemplateCommand)).toHaveLength(1);
    expect(ec2.commandCalls(CreateFleetCommand)[0].args[0].input.Type).toBe('instant');
  });

  it('no instance and only capacity errors → InsufficientCapacityError with the offerings', async () => {
    ec2.on(DescribeLaunchTemplatesCommand).resolves({ LaunchTemplates: [{ LaunchTemplateName: 'x' }] });
    ec2.on(CreateFleetCommand).resolves({ ...fleetErrors(), Instances: [] });
    const err = await provider()
      .create(claim(), { instanceTypes: ['c4.xlarge'], zones: ['us-east-1a'], capacityTypes: ['on-demand'] }, nodeClass())
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InsufficientCapacityError);
    expect((err as InsufficientCapacityError).offerings).toHaveLength(2);
  });

  it('terminate of an instance already gone is a success; get of an unknown instance is undefined', async () => {
    const gone = Object.assign(new Error('gone'), { name: 'InvalidInstanceID.NotFound' });
    ec2.on(TerminateInstancesCommand).rejects(gone);
    ec2.on(DescribeInstancesCommand).rejects(gone);
    await expect(provider().terminate('i-1')).resolves.toBeUndefined();
    await expect(provider().get('i-1')).resolves.toBeUndefined();
  });

  it('list pages through DescribeInstances filtered by the cluster tag', async () => {
    ec2
      .on(DescribeInstancesCommand)
      .resolvesOnce({
        Reservations: [
          {
            Instances: [
              {
                InstanceId: 'i-1',
                InstanceType: 'm5.large',
                Placement: { AvailabilityZone: 'us-east-1a' },
                State: { Name: 'running' },
                LaunchTime: new Date('2026-01-01T00:00:00Z'),
                InstanceLifecycle: 'spot',
                Tags: [{ Key: 'karpenter.sh/nodeclaim', Value: 'a' }],
              },
            ],
          },
        ],
        NextToken: 't',
      })
      .resolvesOnce({ Reservations: [{ Instances: [{ InstanceId: 'i-2', State: { Name: 'pending' } }] }] });
    const list = await provider().list();
    expect(list.map((i) => i.instanceId)).toEqual(['i-1', 'i-2']);
    expect(list[0]).toMatchObject({
      capacityType: 'spot',
      zone: 'us-east-1a',
      launchTime: '2026-01-01T00:00:00.000Z',
      tags: { 'karpenter.sh/nodeclaim': 'a' },
    });
    expect(ec2.commandCalls(DescribeInstancesCommand)[0].args[0].input.Filters?.[0]).toEqual({ Name: 'tag:nodefleet.io/cluster', Values: ['karpenter-demo'] });
  });
});

describe('the EC2NodeClass role at launch', () => {
  it('refuses a spec.role other than the deployed node role, with the same line validate --cluster-name prints', () => {
    const withRole = { ...ctx, nodeRoleName: 'nodefleet-node-karpenter-demo' };
    expect(() => launchTemplateData(claim(), nodeClass(), resolved, withRole)).toThrow(ValidationError);
    expect(() => launchTemplateData(claim(), nodeClass(), resolved, withRole)).toThrow(
      'ec2nodeclass default: spec.role: "KarpenterNodeRole-karpenter-demo" is not the node role nodefleet deploys ("nodefleet-node-karpenter-demo", stack output NodeRoleName): nodes launch only with that role\'s instance profile, so set spec.role: nodefleet-node-karpenter-demo',
    );
    const own = nodeClass();
    own.spec.role = 'nodefleet-node-karpenter-demo';
    expect(launchTemplateData(claim(), own, resolved, withRole).IamInstanceProfile).toEqual({ Name: 'KarpenterNodeInstanceProfile' });
  });
});

describe('user data and architecture', () => {
  it('kubelet may not set restricted labels (kubernetes.io / k8s.io domains, as KA RejectForbiddenLabels); registration applies them', () => {
    expect(kubeletMaySetLabel('karpenter.sh/nodepool')).toBe(true);
    expect(kubeletMaySetLabel('example.com/tier')).toBe(true);
    expect(kubeletMaySetLabel('kubernetes.io/arch')).toBe(false);
    expect(kubeletMaySetLabel('node-role.kubernetes.io/worker')).toBe(false);
    expect(kubeletMaySetLabel('node-restriction.kubernetes.io/pool')).toBe(false);
    expect(kubeletMaySetLabel('node.kubernetes.io/instance-type')).toBe(false);
    expect(kubeletMaySetLabel('example.k8s.io/x')).toBe(false);
    const ud = buildAl2023UserData({ cluster, labels: { 'node-role.kubernetes.io/x': '' }, taints: [] });
    expect(ud).not.toContain('--node-labels');
  });
  it('refuses a label or taint that would inject a second one into --node-labels / --register-with-taints (F9)', () => {
    const build =
      (labels: Record<string, string>, taints: { key: string; value?: string; effect: 'NoSchedule' }[] = []) =>
      () =>
        buildAl2023UserData({ cluster, labels, taints });
    // the review's reproductions: a label value carrying a zone label, a taint value carrying a second taint
    expect(build({ team: 'a,topology.kubernetes.io/zone=us-east-1z' })).toThrow(ValidationError);
    expect(build({ team: 'a,topology.kubernetes.io/zone=us-east-1z' })).toThrow(
      /--node-labels: label "team": "a,topology.kubernetes.io\/zone=us-east-1z" is not a valid label value/,
    );
    expect(build({}, [{ key: 'dedicated', value: 'v:NoSchedule,evil', effect: 'NoSchedule' }])).toThrow(
      /--register-with-taints: taint "dedicated": "v:NoSchedule,evil" is not a valid taint value/,
    );
    expect(build({ 'team=x,evil': 'a' })).toThrow(/is not a valid label key/);
    expect(build({}, [{ key: 'a,b', effect: 'NoSchedule' }])).toThrow(/is not a valid taint key/);
    // valid ones pass unchanged
    expect(build({ team: 'a-1.b_2' }, [{ key: 'example.com/dedicated', value: 'gpu', effect: 'NoSchedule' }])()).toContain(
      '--register-with-taints=example.com/dedicated=gpu:NoSchedule',
    );
  });
  it('architecture from the catalog', () => {
    expect(catalogArchitecture('c6g.large')).toBe('arm64');
    expect(catalogArchitecture('c5a.2xlarge')).toBe('amd64');
    expect(guessArchitecture('t4g.micro')).toBe('arm64');
  });
});
