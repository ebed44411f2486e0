/**
 * Conformance against an EC2 nodefleet did not write: moto's server (test/moto/moto-server.ts).
 * nodefleet's own adapters run unchanged (shared/aws/clients.ts createClients with the endpoint
 * override, Ec2CloudProvider, Ec2NodeClassResolver on sdkLookups), driven by the real provisioner,
 * termination state machine and gc. moto refusing a request fails the test. What moto does not
 * implement, and what these tests therefore cannot prove, is listed in docs/moto-conformance.md.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';
import {
  CreateSecurityGroupCommand,
  CreateSubnetCommand,
  CreateTagsCommand,
  CreateVpcCommand,
  DeleteLaunchTemplateCommand,
  DescribeInstancesCommand,
  DescribeLaunchTemplateVersionsCommand,
  DescribeLaunchTemplatesCommand,
  type Instance,
} from '@aws-sdk/client-ec2';
import { PutParameterCommand } from '@aws-sdk/client-ssm';
import { startMoto, type MotoServer } from './moto-server.ts';
import { createClients, type Clients } from '../../shared/aws/clients.ts';
import { Ec2CloudProvider, catalogArchitecture } from '../../shared/aws/ec2.ts';
import { CatalogRefresher } from '../../shared/aws/catalog-refresh.ts';
import { instanceTypeInfos } from '../../shared/catalog/index.ts';
import { Ec2NodeClassResolver, StaticNodeClassResolver, al2023AmiParameter, sdkLookups } from '../../shared/aws/node-class-resolver.ts';
import { EC2NodeClassSchema, type EC2NodeClass } from '../../shared/api/nodepool.ts';
import { ValidationError } from '../../shared/api/errors.ts';
import { accountLookups, readAccountFiles } from '../../shared/aws/account-file.ts';
import { run as provision, parseInput } from '../../functions/provisioner/handler.ts';
import { run as gc } from '../../functions/gc/handler.ts';
import { createLocalTermination } from '../../infra/local/sfn.ts';
import { RecordingLog, RecordingMetrics } from '../../shared/runtime/observability.ts';
import { fakeWorld, node, nodeClaim, type FakeWorld } from '../fakes/index.ts';
import { Cluster, Region, env, nodePool, pendingPod, unschedulableEvent } from '../unit/provisioner/world.ts';
import { readLaunchTemplateUserData } from '../unit/aws/nodeadm-reader.ts';

const DiscoveryTag = 'karpenter.sh/discovery';
const clusterInfo = {
  name: Cluster,
  endpoint: 'https://ABC.gr7.ap-northeast-2.eks.amazonaws.com',
  certificateAuthority: 'Q0E=',
  serviceCidr: '10.100.0.0/16',
  kubernetesVersion: '1.31',
};
/** The images of test/moto/amis.json (moto loads them in place of its default AMIs). */
const Ami = { amd64Old: 'ami-0a1b2c3d4e5f60001', amd64: 'ami-0a1b2c3d4e5f60002', arm64: 'ami-0a1b2c3d4e5f60003', custom: 'ami-0a1b2c3d4e5f60004' };
/** A parameter of the account (moto refuses, as AWS does, to write one under /aws/). */
const AmiParameter = '/nodefleet/conformance/ami-amd64';

interface Seeded {
  vpcId: string;
  /** Tagged for discovery: 2a (big), 2a (small), 2b. */
  subnets: { a: string; aSmall: string; b: string };
  /** Not tagged: in 2c, must never be used. */
  untaggedSubnet: string;
  nodesSg: string;
  otherSg: string;
}

let moto: MotoServer;
/** nodefleet's clients: every request they send is recorded and checked against the API model. */
let clients: Clients;
/** The test's own clients (seeding the account, reading it back): not recorded. */
let probe: Clients;
let seeded: Seeded;

/** What nodefleet's clients sent: service, operation, input. */
const sent: { service: string; operation: string; input: unknown }[] = [];

function record(c: Clients): void {
  const recorder = (service: string) => ({
    middleware: (next: (args: { input: object }) => Promise<unknown>, context: { commandName?: string }) => async (args: { input: object }) => {
      sent.push({ service, operation: String(context.commandName).replace(/Command$/, ''), input: structuredClone(args.input) });
      return next(args);
    },
    options: { step: 'initialize' as const, name: 'conformanceRecorder' },
  });
  const ec2 = recorder('ec2');
  c.ec2.middlewareStack.add(ec2.middleware as never, ec2.options);
  const ssm = recorder('ssm');
  c.ssm.middlewareStack.add(ssm.middleware as never, ssm.options);
}

/** The account: one VPC, subnets in two zones tagged for discovery (and one untagged in a third), security groups, an SSM parameter. */
async function seed(c: Clients): Promise<Seeded> {
  const vpcId = (await c.ec2.send(new CreateVpcCommand({ CidrBlock: '10.0.0.0/16' }))).Vpc!.VpcId!;
  const subnet = async (cidr: string, zone: string, tags: Record<string, string>) =>
    (
      await c.ec2.send(
        new CreateSubnetCommand({
          VpcId: vpcId,
          CidrBlock: cidr,
          AvailabilityZone: zone,
          TagSpecifications: [{ ResourceType: 'subnet', Tags: Object.entries(tags).map(([Key, Value]) => ({ Key, Value })) }],
        }),
      )
    ).Subnet!.SubnetId!;
  const discovery = { [DiscoveryTag]: Cluster };
  const subnets = {
    a: await subnet('10.0.1.0/24', 'ap-northeast-2a', { ...discovery, Name: 'nodes-a' }),
    aSmall: await subnet('10.0.2.0/28', 'ap-northeast-2a', discovery),
    b: await subnet('10.0.3.0/24', 'ap-northeast-2b', discovery),
  };
  // Not tagged for discovery, though a tag of it has the cluster's name as its value.
  const untaggedSubnet = await subnet('10.0.4.0/24', 'ap-northeast-2c', { Name: Cluster });
  const sg = async (name: string, tags: Record<string, string>) => {
    const id = (await c.ec2.send(new CreateSecurityGroupCommand({ GroupName: name, Description: name, VpcId: vpcId }))).GroupId!;
    await c.ec2.send(new CreateTagsCommand({ Resources: [id], Tags: Object.entries(tags).map(([Key, Value]) => ({ Key, Value })) }));
    return id;
  };
  const nodesSg = await sg('karpenter-demo-nodes', discovery);
  const otherSg = await sg('other', { team: 'x' });
  await c.ssm.send(new PutParameterCommand({ Name: AmiParameter, Value: Ami.custom, Type: 'String', DataType: 'aws:ec2:image' }));
  return { vpcId, subnets, untaggedSubnet, nodesSg, otherSg };
}

function nodeClass(spec: Partial<EC2NodeClass['spec']> = {}, name = 'default'): EC2NodeClass {
  return EC2NodeClassSchema.parse({
    apiVersion: 'karpenter.k8s.aws/v1',
    kind: 'EC2NodeClass',
    metadata: { name },
    spec: {
      role: 'KarpenterNodeRole-karpenter-demo',
      amiSelectorTerms: [{ name: 'amazon-eks-node-al2023-*-standard-1.31-*' }],
      subnetSelectorTerms: [{ tags: { [DiscoveryTag]: Cluster } }],
      securityGroupSelectorTerms: [{ tags: { [DiscoveryTag]: Cluster } }],
      ...spec,
    },
  });
}

function resolver(): Ec2NodeClassResolver {
  return new Ec2NodeClassResolver(sdkLookups(clients.ec2, clients.ssm), clusterInfo.kubernetesVersion);
}

function cloud(r: Ec2NodeClassResolver = resolver()): Ec2CloudProvider {
  return new Ec2CloudProvider({
    ec2: clients.ec2,
    resolver: r,
    cluster: clusterInfo,
    instanceProfileName: 'KarpenterNodeInstanceProfile',
    nodeRoleName: 'KarpenterNodeRole-karpenter-demo',
    architectureOf: catalogArchitecture,
  });
}

/** The provisioner's deps over fakes for the table and Kubernetes, and nodefleet's EC2 adapters on moto. */
function world(capacityTypes: string[] = ['on-demand']) {
  const w: FakeWorld = fakeWorld({ start: Date.now() });
  w.kube.setNodePools([nodePool(capacityTypes)]).setNodeClasses([nodeClass()]);
  const log = new RecordingLog();
  const metrics = new RecordingMetrics();
  // One resolver for scheduling and launch, as buildDeps wires them (shared/runtime/deps.ts).
  const r = resolver();
  const ec2 = cloud(r);
  const deps = { env, clock: w.clock, log, metrics, store: w.store, unavailable: w.unavailable, cloud: ec2, kube: w.kube, resolver: r };
  return { w, log, metrics, deps, ec2 };
}

async function describeInstance(id: string): Promise<Instance> {
  const out = await probe.ec2.send(new DescribeInstancesCommand({ InstanceIds: [id] }));
  const i = out.Reservations?.flatMap((r) => r.Instances ?? []).find((x) => x.InstanceId === id);
  if (!i) throw new Error(`moto does not describe ${id}`);
  return i;
}

const tagsOf = (t: { Key?: string; Value?: string }[] | undefined) => Object.fromEntries((t ?? []).map((x) => [x.Key ?? '', x.Value ?? '']));

beforeAll(async () => {
  moto = await startMoto({
    env: {
      MOTO_AMIS_PATH: fileURLToPath(new URL('./amis.json', import.meta.url)),
      // moto checks these only when asked: an unknown AMI or instance type in an override fails the launch.
      MOTO_ENABLE_AMI_VALIDATION: 'true',
      MOTO_EC2_ENABLE_INSTANCE_TYPE_VALIDATION: 'true',
    },
  });
  const at = { region: Region, ec2Endpoint: moto.url, credentials: { accessKeyId: 'conformance', secretAccessKey: 'conformance' } };
  clients = createClients(at);
  record(clients);
  probe = createClients(at);
  seeded = await seed(probe);
});

afterAll(async () => {
  await moto?.stop();
});

describe('EC2NodeClass discovery on moto (DescribeSubnets / DescribeSecurityGroups / DescribeImages / SSM GetParameter)', () => {
  it('tag terms find the seeded subnets (zone, zone id, free IPs) and security groups, and nothing untagged', async () => {
    const r = await resolver().resolve(nodeClass());
    expect(r.subnets.map((s) => s.subnetId).sort()).toEqual(Object.values(seeded.subnets).sort());
    const a = r.subnets.find((s) => s.subnetId === seeded.subnets.a)!;
    expect(a).toMatchObject({ zone: 'ap-northeast-2a', availableIpAddressCount: 251 });
    expect(a.zoneId).toMatch(/^apne2-az\d$/);
    expect(r.subnets.find((s) => s.subnetId === seeded.subnets.aSmall)!.availableIpAddressCount).toBe(11);
    expect(r.securityGroupIds).toEqual([seeded.nodesSg]);
  });

  it('id, Name-tag and group-name terms: one query per term, the id terms in one filter', async () => {
    const r = await resolver().resolve(
      nodeClass({
        subnetSelectorTerms: [{ id: seeded.untaggedSubnet }, { tags: { Name: 'nodes-a' } }, { id: 'subnet-0000000000000000' }],
        securityGroupSelectorTerms: [{ name: 'other' }, { id: seeded.nodesSg }],
      }),
    );
    expect(r.subnets.map((s) => s.subnetId).sort()).toEqual([seeded.subnets.a, seeded.untaggedSubnet].sort());
    expect(r.securityGroupIds).toEqual([seeded.nodesSg, seeded.otherSg].sort());
  });

  it('AMIs: a name term (owners self and amazon) picks the newest image per architecture; tag, id and ssmParameter terms', async () => {
    const byName = await resolver().resolve(nodeClass());
    expect(byName.images).toEqual({ amd64: Ami.amd64, arm64: Ami.arm64 });
    const byTag = await resolver().resolve(nodeClass({ amiSelectorTerms: [{ tags: { 'nodefleet.io/conformance': 'al2023' } }] }));
    expect(byTag.images).toEqual({ amd64: Ami.amd64, arm64: Ami.arm64 });
    const byId = await resolver().resolve(nodeClass({ amiSelectorTerms: [{ id: Ami.amd64Old }] }));
    expect(byId.images).toEqual({ amd64: Ami.amd64Old });
    const bySsm = await resolver().resolve(nodeClass({ amiSelectorTerms: [{ ssmParameter: AmiParameter }] }));
    expect(bySsm.images).toEqual({ amd64: Ami.custom });
  });

  it("`plan --account` files (the AWS CLI's describe output of this account) resolve every class as EC2 itself does", async () => {
    const account = readAccountFiles([{ file: 'account.json', text: cliDump() }], Region);
    const fromFiles = new Ec2NodeClassResolver(accountLookups(account, { placeholderZones: [] }), clusterInfo.kubernetesVersion);
    const classes = [
      nodeClass(),
      nodeClass({
        subnetSelectorTerms: [{ id: seeded.untaggedSubnet }, { tags: { Name: 'nodes-a' } }],
        securityGroupSelectorTerms: [{ name: 'other' }, { id: seeded.nodesSg }],
      }),
      nodeClass({
        subnetSelectorTerms: [{ tags: { Name: Cluster } }, { tags: { [DiscoveryTag]: '*' } }],
        securityGroupSelectorTerms: [{ tags: { team: '*' } }],
      }),
      nodeClass({ amiSelectorTerms: [{ tags: { 'nodefleet.io/conformance': 'al2023' } }] }),
      nodeClass({ amiSelectorTerms: [{ name: 'amazon-eks-node-al2023-x86_64-standard-1.31-v2025010?' }, { id: Ami.custom }] }),
      nodeClass({ amiSelectorTerms: [{ name: 'custom-node-*', owner: '602401143452' }] }),
      nodeClass({ amiSelectorTerms: [{ name: 'custom-node-*', owner: 'self' }] }),
      nodeClass({ amiSelectorTerms: [{ ssmParameter: AmiParameter }] }),
    ];
    for (const c of classes) {
      const live = await resolver()
        .resolve(c)
        .catch((e: Error) => e.message);
      expect(await fromFiles.resolve(c).catch((e: Error) => e.message)).toEqual(live);
    }
  });

  it('an alias reads the EKS parameters with GetParameter; moto serves none, and its ParameterNotFound is read as "no image"', async () => {
    // moto ships no /aws/service/eks/optimized-ami parameters and refuses writes under /aws/ (as AWS does):
    // the call and its not-found answer are what can be checked here (docs/moto-conformance.md).
    const lookups = sdkLookups(clients.ec2, clients.ssm);
    expect(await lookups.getParameter(al2023AmiParameter('1.31', 'amd64', 'latest'))).toBeUndefined();
    expect(await lookups.getParameter(AmiParameter)).toBe(Ami.custom);
    await expect(resolver().resolve(nodeClass({ amiSelectorTerms: [{ alias: 'al2023@latest' }] }))).rejects.toThrow(
      new ValidationError('ec2nodeclass default: amiSelectorTerms match no image'),
    );
  });
});

/**
 * The account as the AWS CLI prints it: `aws ec2 describe-subnets`, `describe-security-groups`,
 * `describe-images --owners self amazon` and `aws ssm get-parameter`, made with boto3 (botocore, what
 * the CLI is built on) from the venv against moto, without the SDK's ResponseMetadata.
 */
function cliDump(): string {
  const script = `
import json, sys, boto3
kw = dict(endpoint_url=sys.argv[1], region_name=sys.argv[2], aws_access_key_id='conformance', aws_secret_access_key='conformance')
ec2, ssm = boto3.client('ec2', **kw), boto3.client('ssm', **kw)
out = [ec2.describe_subnets(), ec2.describe_security_groups(), ec2.describe_images(Owners=['self', 'amazon']), ssm.get_parameter(Name=sys.argv[3])]
for o in out:
    o.pop('ResponseMetadata', None)
    print(json.dumps(o, default=str, indent=2))
`;
  return execFileSync(moto.python, ['-c', script, moto.url, Region, AmiParameter], { encoding: 'utf8' });
}

describe('catalog refresh on moto (DescribeAvailabilityZones / DescribeInstanceTypeOfferings / DescribeSpotPriceHistory / DescribeInstanceTypes)', () => {
  it('every EC2 part is fetched without error and read: zone ids, offerings by zone, spot prices, instance types', async () => {
    const errors: string[] = [];
    const refresher = new CatalogRefresher({ ec2: clients.ec2, region: Region, onError: (part, e) => errors.push(`${part}: ${e.name}: ${e.message}`) });
    const r = await refresher.get(Date.now());
    expect(errors).toEqual([]);
    expect(r.zoneIds?.['ap-northeast-2a']).toMatch(/^apne2-az\d$/);
    expect(r.zonesByType?.['m5.large']?.length).toBeGreaterThan(0);
    expect(r.instanceTypes?.length ?? 0).toBeGreaterThan(0);
    // moto's DescribeInstanceTypes read into nodefleet's catalog row, as for a type the shipped data lacks.
    expect(r.instanceTypes?.find((t) => t.name === 'm5.large')).toMatchObject({
      vcpu: 2,
      memoryMiB: 8192,
      arch: 'amd64',
      maxPods: 29,
      eni: { maxEnis: 3, ipv4PerEni: 10 },
    });
    // moto's spot prices are one placeholder (0.00001 USD/h), so only their shape is checked.
    expect(Object.keys(r.spotUsdPerHour?.['m5.large'] ?? {})).toContain('ap-northeast-2a');
    expect(Object.keys(r.fetchedAtMs ?? {}).sort()).toEqual(['instanceTypes', 'spotUsdPerHour', 'zoneIds', 'zonesByType']);
  });
});

describe('launch, termination and gc on moto (CreateLaunchTemplate, CreateFleet instant, DescribeInstances, TerminateInstances)', () => {
  it("the provisioner launches a NodeClaim: its launch templates and CreateFleet are accepted, and DescribeInstances finds the instance with nodefleet's tags", async () => {
    const pods = Array.from({ length: 3 }, (_, i) => pendingPod(`inflate-${i}`, '1'));
    const { w, deps } = world();
    for (const p of pods) w.kube.addPod(p);
    const summary = await provision(parseInput(unschedulableEvent(pods)), deps);
    expect(summary.failed).toEqual([]);
    expect(summary.launched).toHaveLength(1);
    const claim = (await w.store.list())[0];
    expect(claim.phase).toBe('Launched');
    // The instance as moto has it: the type, zone and image nodefleet chose, in a discovered subnet.
    const i = await describeInstance(claim.instanceId!);
    expect(i.InstanceType).toBe(claim.instanceType);
    expect(i.Placement?.AvailabilityZone).toBe(claim.zone);
    expect(['ap-northeast-2a', 'ap-northeast-2b']).toContain(claim.zone);
    expect(i.SubnetId).toBe(claim.zone === 'ap-northeast-2a' ? seeded.subnets.a : seeded.subnets.b);
    expect(i.ImageId).toBe(Ami.amd64);
    expect(claim.providerId).toBe(`aws:///${i.Placement?.AvailabilityZone}/${i.InstanceId}`);
    expect(tagsOf(i.Tags)).toMatchObject({
      'nodefleet.io/cluster': Cluster,
      'karpenter.sh/nodepool': 'default',
      'karpenter.sh/nodeclaim': claim.name,
      'karpenter.k8s.aws/ec2nodeclass': 'default',
      [`kubernetes.io/cluster/${Cluster}`]: 'owned',
      'eks:eks-cluster-name': Cluster,
    });
    // The launch templates as moto stored them, read back: user data, metadata options, block devices, tags.
    const lts =
      (await probe.ec2.send(new DescribeLaunchTemplatesCommand({ Filters: [{ Name: 'tag:nodefleet.io/cluster', Values: [Cluster] }] }))).LaunchTemplates ?? [];
    expect(lts.length).toBeGreaterThan(0);
    for (const lt of lts) {
      expect(lt.LaunchTemplateName).toMatch(new RegExp(`^nodefleet/${Cluster}/default/[0-9a-f]{16}$`));
      expect(tagsOf(lt.Tags)).toMatchObject({ 'nodefleet.io/cluster': Cluster, 'karpenter.sh/nodepool': 'default' });
      const v = (await probe.ec2.send(new DescribeLaunchTemplateVersionsCommand({ LaunchTemplateId: lt.LaunchTemplateId, Versions: ['$Latest'] })))
        .LaunchTemplateVersions![0];
      const data = v.LaunchTemplateData!;
      expect(data.MetadataOptions).toMatchObject({ HttpEndpoint: 'enabled', HttpTokens: 'required', HttpPutResponseHopLimit: 1 });
      expect(data.BlockDeviceMappings).toEqual([
        { DeviceName: '/dev/xvda', Ebs: expect.objectContaining({ VolumeSize: 20, VolumeType: 'gp3', Encrypted: true }) },
      ]);
      expect(data.SecurityGroupIds).toEqual([seeded.nodesSg]);
      expect(data.IamInstanceProfile).toEqual({ Name: 'KarpenterNodeInstanceProfile' });
      const [config] = readLaunchTemplateUserData(data.UserData!).nodeConfigs;
      expect(config.spec?.cluster?.apiServerEndpoint).toBe(clusterInfo.endpoint);
      expect(config.spec?.kubelet?.config?.maxPods).toBeGreaterThan(0);
    }
    // The cloud provider's own reads of it (get, and list: the tag and state filters gc uses).
    const ec2 = deps.cloud;
    expect(await ec2.get(claim.instanceId!)).toMatchObject({
      instanceId: claim.instanceId,
      state: 'running',
      capacityType: 'on-demand',
      zone: claim.zone,
      tags: { 'karpenter.sh/nodeclaim': claim.name },
    });
    expect((await ec2.list()).map((x) => x.instanceId)).toContain(claim.instanceId);

    // Termination: the state machine with nodefleet's EC2 adapter. The node registered, then is deleted.
    const nodeName = `ip-10-0-1-${claim.name.length}.ap-northeast-2.compute.internal`;
    await w.store.update({ ...claim, nodeName, phase: 'Initialized' });
    w.kube.addNode(node({ name: nodeName, providerID: claim.providerId!, labels: { 'karpenter.sh/nodepool': 'default' } }));
    const { sfn, starter } = createLocalTermination(
      { kube: w.kube, cloud: ec2, store: w.store, budgets: w.budgets, clock: w.clock },
      { wait: (s) => w.clock.advanceSeconds(s), retryPauseMs: 0 },
    );
    const arn = await starter.start({ nodeClaim: claim.name, reason: 'consolidation' });
    const rec = await sfn.waitForExecution(arn.split(':').pop()!);
    expect(rec.status).toBe('SUCCEEDED');
    expect(['shutting-down', 'terminated']).toContain((await describeInstance(claim.instanceId!)).State?.Name);
    expect(await w.kube.getNode(nodeName)).toBeUndefined();
    expect((await ec2.list()).map((x) => x.instanceId)).not.toContain(claim.instanceId);
  });

  it('a spot launch: spot CreateFleet (price-capacity-optimized) and a spot template moto accepts; the instance is spot', async () => {
    const pods = [pendingPod('spot-0', '1')];
    const { w, deps } = world(['spot']);
    w.kube.addPod(pods[0]);
    const summary = await provision(parseInput(unschedulableEvent(pods, 'evt-spot')), deps);
    expect(summary.failed).toEqual([]);
    const claim = (await w.store.list())[0];
    expect(claim.capacityType).toBe('spot');
    const i = await describeInstance(claim.instanceId!);
    expect(i.InstanceLifecycle).toBe('spot');
    expect(await deps.cloud.get(claim.instanceId!)).toMatchObject({ capacityType: 'spot', tags: { 'karpenter.sh/nodeclaim': claim.name } });
    await deps.cloud.terminate(claim.instanceId!);
    expect(['shutting-down', 'terminated']).toContain((await describeInstance(claim.instanceId!)).State?.Name);
    // Terminating again (an instance already going) is success, as is one EC2 does not know.
    await deps.cloud.terminate(claim.instanceId!);
    await deps.cloud.terminate('i-0123456789abcdef0');
    expect(await deps.cloud.get('i-0123456789abcdef0')).toBeUndefined();
  });

  it('every launch-template field nodefleet honours (volumes, metadata options, public IP, monitoring, tags, user data) is accepted and read back as sent, on a spot template', async () => {
    const ec2 = cloud();
    const full = nodeClass(
      {
        blockDeviceMappings: [
          {
            deviceName: '/dev/xvda',
            rootVolume: true,
            ebs: {
              volumeSize: '100Gi',
              volumeType: 'gp3',
              iops: 4000,
              throughput: 250,
              encrypted: true,
              kmsKeyID: 'arn:aws:kms:ap-northeast-2:123456789012:key/00000000-0000-0000-0000-000000000000',
              deleteOnTermination: true,
            },
          },
          { deviceName: '/dev/xvdb', ebs: { volumeSize: '200Gi', volumeType: 'io2', iops: 10000, deleteOnTermination: false, volumeInitializationRate: 200 } },
        ],
        metadataOptions: { httpEndpoint: 'enabled', httpProtocolIPv6: 'disabled', httpPutResponseHopLimit: 2, httpTokens: 'optional' },
        associatePublicIPAddress: true,
        detailedMonitoring: true,
        tags: { team: 'conformance', 'cost-center': '42' },
        kubelet: { maxPods: 42, systemReserved: { cpu: '100m', memory: '100Mi' } },
        userData: '#!/bin/bash\necho conformance\n',
      },
      'full',
    );
    const claim = nodeClaim({ name: 'full-abcde', cluster: Cluster, nodePool: 'default', nodeClass: 'full', labels: { 'karpenter.sh/nodepool': 'default' } });
    const r = await ec2.create(
      claim,
      { instanceTypes: ['m5.large', 'm6i.large'], zones: ['ap-northeast-2a', 'ap-northeast-2b'], capacityTypes: ['spot'] },
      full,
    );
    expect(r.capacityType).toBe('spot');
    expect((await describeInstance(r.instanceId)).InstanceLifecycle).toBe('spot');
    const lts =
      (await probe.ec2.send(new DescribeLaunchTemplatesCommand({ Filters: [{ Name: 'tag:karpenter.k8s.aws/ec2nodeclass', Values: ['full'] }] })))
        .LaunchTemplates ?? [];
    expect(lts).toHaveLength(1);
    const data = (await probe.ec2.send(new DescribeLaunchTemplateVersionsCommand({ LaunchTemplateId: lts[0].LaunchTemplateId, Versions: ['$Latest'] })))
      .LaunchTemplateVersions![0].LaunchTemplateData!;
    expect(data.BlockDeviceMappings).toEqual([
      {
        DeviceName: '/dev/xvda',
        Ebs: expect.objectContaining({
          VolumeSize: 100,
          VolumeType: 'gp3',
          Iops: 4000,
          Throughput: 250,
          Encrypted: true,
          KmsKeyId: 'arn:aws:kms:ap-northeast-2:123456789012:key/00000000-0000-0000-0000-000000000000',
          DeleteOnTermination: true,
        }),
      },
      { DeviceName: '/dev/xvdb', Ebs: expect.objectContaining({ VolumeSize: 200, VolumeType: 'io2', Iops: 10000, DeleteOnTermination: false }) },
    ]);
    expect(data.MetadataOptions).toMatchObject({ HttpEndpoint: 'enabled', HttpProtocolIpv6: 'disabled', HttpPutResponseHopLimit: 2, HttpTokens: 'optional' });
    expect(data.NetworkInterfaces).toEqual([expect.objectContaining({ DeviceIndex: 0, AssociatePublicIpAddress: true, Groups: [seeded.nodesSg] })]);
    expect(data.SecurityGroupIds ?? []).toEqual([]);
    expect(data.Monitoring).toEqual({ Enabled: true });
    expect(data.CapacityReservationSpecification).toEqual({ CapacityReservationPreference: 'none' });
    // moto copies the request's own TagSpecifications (the template's tags) into the template data; EC2 does not (docs/moto-conformance.md).
    const dataTags = (data.TagSpecifications ?? []).filter((t) => t.ResourceType !== 'launch-template');
    expect(dataTags.map((t) => t.ResourceType).sort()).toEqual(['network-interface', 'spot-instances-request']);
    for (const t of dataTags)
      expect(tagsOf(t.Tags)).toMatchObject({ team: 'conformance', 'nodefleet.io/cluster': Cluster, 'karpenter.sh/nodepool': 'default' });
    const ud = readLaunchTemplateUserData(data.UserData!);
    expect(ud.nodeConfigs[0].spec?.kubelet?.config?.maxPods).toBe(42);
    expect(tagsOf((await describeInstance(r.instanceId)).Tags)).toMatchObject({
      team: 'conformance',
      'cost-center': '42',
      'karpenter.sh/nodeclaim': 'full-abcde',
    });
    await ec2.terminate(r.instanceId);
  });

  it("a long EC2NodeClass name (a Kubernetes name may have 253 characters): the launch template name stays within EC2's 128", async () => {
    const ec2 = cloud();
    const name = `${'team-payments-production-general-purpose-'.repeat(6)}x`.slice(0, 253);
    const claim = nodeClaim({ name: 'long-abcde', cluster: Cluster, nodePool: 'default', nodeClass: name, labels: { 'karpenter.sh/nodepool': 'default' } });
    const mark = sent.length;
    const r = await ec2.create(claim, { instanceTypes: ['m5.large'], zones: ['ap-northeast-2a'], capacityTypes: ['on-demand'] }, nodeClass({}, name));
    const created = sent
      .slice(mark)
      .filter((x) => x.operation === 'CreateLaunchTemplate')
      .map((x) => (x.input as { LaunchTemplateName: string }).LaunchTemplateName);
    expect(created).toHaveLength(1);
    expect(created[0].length).toBeLessThanOrEqual(128);
    expect(tagsOf((await describeInstance(r.instanceId)).Tags)).toMatchObject({ 'karpenter.k8s.aws/ec2nodeclass': name });
    await ec2.terminate(r.instanceId);
  });

  it("many launch templates (two images × 60 types, each with its own pod count × two zones): at most 50 LaunchTemplateConfigs, the API model's limit, and moto launches", async () => {
    const ec2 = cloud();
    const names = instanceTypeInfos
      .filter((t) => /^(m5|c5|r5|m6g|c6g|r6g|m5a|c5a|r5a)\.(large|xlarge|2xlarge|4xlarge|8xlarge|12xlarge|16xlarge)$/.test(t.name))
      .map((t) => t.name)
      .slice(0, 60);
    expect(names).toHaveLength(60);
    const claim = nodeClaim({
      name: 'many-abcde',
      cluster: Cluster,
      nodePool: 'default',
      nodeClass: 'default',
      labels: { 'karpenter.sh/nodepool': 'default' },
    });
    const mark = sent.length;
    const r = await ec2.create(
      claim,
      {
        instanceTypes: names,
        zones: ['ap-northeast-2a', 'ap-northeast-2b'],
        capacityTypes: ['on-demand'],
        maxPods: Object.fromEntries(names.map((n, i) => [n, 10 + i])),
      },
      nodeClass(),
    );
    const fleet = sent.slice(mark).find((x) => x.operation === 'CreateFleet')!.input as { LaunchTemplateConfigs: { Overrides: { ImageId: string }[] }[] };
    expect(fleet.LaunchTemplateConfigs).toHaveLength(50);
    expect(new Set(fleet.LaunchTemplateConfigs.flatMap((c) => c.Overrides.map((o) => o.ImageId)))).toEqual(new Set([Ami.amd64, Ami.arm64]));
    await ec2.terminate(r.instanceId);
    // moto's DescribeLaunchTemplates answers at most 15 templates, without a NextToken (docs/moto-conformance.md): these 50 would hide the gc test's.
    for (const x of sent.slice(mark).filter((y) => y.operation === 'CreateLaunchTemplate'))
      await probe.ec2.send(new DeleteLaunchTemplateCommand({ LaunchTemplateName: (x.input as { LaunchTemplateName: string }).LaunchTemplateName }));
  });

  it("an EFA claim (pods requesting vpc.amazonaws.com/efa): its template's EFA interfaces are accepted and read back as sent", async () => {
    const ec2 = cloud();
    const claim = nodeClaim({
      name: 'efa-abcde',
      cluster: Cluster,
      nodePool: 'default',
      nodeClass: 'default',
      labels: { 'karpenter.sh/nodepool': 'default' },
      resources: { requests: { 'vpc.amazonaws.com/efa': '1' } },
    });
    const r = await ec2.create(
      claim,
      { instanceTypes: ['c5n.18xlarge'], zones: ['ap-northeast-2a'], capacityTypes: ['on-demand'], efaCount: { 'c5n.18xlarge': 1 } },
      nodeClass({}, 'efa'),
    );
    const lts =
      (await probe.ec2.send(new DescribeLaunchTemplatesCommand({ Filters: [{ Name: 'tag:karpenter.k8s.aws/ec2nodeclass', Values: ['efa'] }] })))
        .LaunchTemplates ?? [];
    const data = (await probe.ec2.send(new DescribeLaunchTemplateVersionsCommand({ LaunchTemplateId: lts[0].LaunchTemplateId, Versions: ['$Latest'] })))
      .LaunchTemplateVersions![0].LaunchTemplateData!;
    expect(data.NetworkInterfaces).toEqual([expect.objectContaining({ NetworkCardIndex: 0, DeviceIndex: 0, InterfaceType: 'efa', Groups: [seeded.nodesSg] })]);
    await ec2.terminate(r.instanceId);
  });

  it('moto refuses what EC2 refuses in a launch (its validations are on): an instance type it does not know, an image that does not exist', async () => {
    // On the test's unrecorded clients: these requests are wrong on purpose.
    const images = {
      subnets: [{ subnetId: seeded.subnets.a, zone: 'ap-northeast-2a', availableIpAddressCount: 251 }],
      securityGroupIds: [seeded.nodesSg],
      images: { amd64: Ami.amd64 },
    };
    const provider = (amd64: string) =>
      new Ec2CloudProvider({
        ec2: probe.ec2,
        resolver: new StaticNodeClassResolver({ ...images, images: { amd64 } }),
        cluster: clusterInfo,
        architectureOf: catalogArchitecture,
      });
    const claim = nodeClaim({ name: 'bad-abcde', cluster: Cluster, nodePool: 'default', nodeClass: 'default', labels: { 'karpenter.sh/nodepool': 'default' } });
    const launch = (instanceTypes: string[]) => ({ instanceTypes, zones: ['ap-northeast-2a'], capacityTypes: ['on-demand'] });
    await expect(provider(Ami.amd64).create(claim, launch(['m5.notatype']), nodeClass())).rejects.toThrow(/InvalidInstanceType\.NotFound/);
    await expect(provider('ami-0ffffffffffffffff').create(claim, launch(['m5.large']), nodeClass())).rejects.toThrow(/InvalidAMIID\.NotFound/);
  });

  it('gc: an orphan instance (its claim lost) is found by the tag listing and terminated; unused launch templates are deleted', async () => {
    const pods = [pendingPod('orphan-0', '1')];
    const { w, deps } = world();
    // gc is its own function (its own cloud provider), as deployed: what it deletes, the provisioner's does not know.
    const ec2 = cloud();
    w.kube.addPod(pods[0]);
    await provision(parseInput(unschedulableEvent(pods, 'evt-orphan')), deps);
    const claim = (await w.store.list())[0];
    await w.store.delete(claim.name);
    w.clock.advanceSeconds(60);
    const gcDeps = { env, clock: w.clock, log: new RecordingLog(), metrics: new RecordingMetrics(), store: w.store, cloud: ec2, kube: w.kube };
    const r = await gc({}, gcDeps);
    expect(r.failed).toEqual([]);
    expect(r.terminated).toContain(claim.instanceId);
    expect(['shutting-down', 'terminated']).toContain((await describeInstance(claim.instanceId!)).State?.Name);
    // Launch-template GC. Every instance of the cluster is gone now; moto's CreateTime is read: none is
    // deleted while younger than the minimum age, every one once older (moto does not tag fleet instances
    // with aws:ec2launchtemplate:id, so keeping an in-use template is not shown here: docs/moto-conformance.md).
    const templates = async () =>
      ((await probe.ec2.send(new DescribeLaunchTemplatesCommand({ Filters: [{ Name: 'tag:nodefleet.io/cluster', Values: [Cluster] }] }))).LaunchTemplates ?? [])
        .map((t) => t.LaunchTemplateName!)
        .sort();
    const live = await ec2.list();
    expect(live).toEqual([]);
    const before = await templates();
    expect(before.length).toBeGreaterThanOrEqual(3);
    expect(await ec2.collectLaunchTemplates(live, Date.now())).toEqual([]);
    expect((await ec2.collectLaunchTemplates(live, Date.now() + 11 * 60_000)).sort()).toEqual(before);
    expect(await templates()).toEqual([]);
    // The provisioner's next launch: it remembered its template as created, CreateFleet finds it missing, and it is created again.
    const again = [pendingPod('after-gc-0', '1')];
    w.kube.addPod(again[0]);
    w.clock.advanceSeconds(60);
    const mark = sent.length;
    const s2 = await provision(parseInput(unschedulableEvent(again, 'evt-after-gc')), deps);
    expect(s2.failed).toEqual([]);
    expect(s2.launched).toHaveLength(1);
    expect((await templates()).length).toBeGreaterThan(0);
    const pass = sent.slice(mark).filter((r) => !['DescribeSubnets', 'DescribeSecurityGroups', 'DescribeImages'].includes(r.operation));
    const templatesOfFleet = (pass[0].input as { LaunchTemplateConfigs: unknown[] }).LaunchTemplateConfigs.length;
    expect(pass.map((r) => r.operation)).toEqual([
      'CreateFleet',
      ...Array.from({ length: templatesOfFleet }, () => ['DescribeLaunchTemplates', 'CreateLaunchTemplate']).flat(),
      'CreateFleet',
    ]);
    await ec2.terminate(s2.launched[0].instanceId);
  });
});

describe('the requests nodefleet sent', () => {
  it('cover the calls of shared/aws/ec2.ts that moto implements, and each is valid against the AWS API model (botocore)', () => {
    expect([...new Set(sent.map((r) => r.operation))].sort()).toEqual(
      [
        'CreateFleet',
        'CreateLaunchTemplate',
        'DeleteLaunchTemplate',
        'DescribeImages',
        'DescribeInstances',
        'DescribeLaunchTemplates',
        'DescribeSecurityGroups',
        'DescribeSubnets',
        'GetParameter',
        'TerminateInstances',
        'DescribeAvailabilityZones',
        'DescribeInstanceTypeOfferings',
        'DescribeInstanceTypes',
        'DescribeSpotPriceHistory',
      ].sort(),
    );
    const problems = execFileSync(moto.python, [fileURLToPath(new URL('./validate-requests.py', import.meta.url))], {
      input: sent.map((r) => JSON.stringify(r)).join('\n'),
      encoding: 'utf8',
    });
    expect(problems.split('\n').filter(Boolean)).toEqual([]);
  });
});
