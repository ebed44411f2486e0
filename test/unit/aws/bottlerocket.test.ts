/**
 * Bottlerocket as Karpenter's AWS provider launches it (KA amifamily/bottlerocket.go,
 * bootstrap/bottlerocket.go): the alias's SSM parameters, the settings TOML read back parsed (the
 * node reads TOML, so the tests do too), the merge with the class's own `userData`, the RAID0
 * bootstrap command by release, and the two default volumes.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { parse } from 'smol-toml';
import { mockClient } from 'aws-sdk-client-mock';
import { DescribeSecurityGroupsCommand, DescribeSubnetsCommand, EC2Client } from '@aws-sdk/client-ec2';
import { GetParameterCommand, ParameterNotFound, SSMClient } from '@aws-sdk/client-ssm';
import { Ec2NodeClassResolver, bottlerocketAmiParameters, sdkLookups, type ResolvedNodeClass } from '../../../shared/aws/node-class-resolver.ts';
import { buildLaunchRequests, catalogArchitecture } from '../../../shared/aws/ec2.ts';
import { bottlerocketVersion, buildBottlerocketUserData, supportsDefaultBind } from '../../../shared/aws/bottlerocket.ts';
import { clusterDnsIp } from '../../../shared/aws/user-data.ts';
import { formatGoDuration } from '../../../shared/api/duration.ts';
import type { EC2NodeClass } from '../../../shared/api/nodepool.ts';
import { nodeClaim } from '../../fakes/index.ts';
import { nodeClass } from '../provisioner/world.ts';

const cluster = { name: 'demo', endpoint: 'https://x.example', certificateAuthority: 'Q0E=', serviceCidr: '10.100.0.0/16', kubernetesVersion: '1.33' };
type Settings = { settings: { kubernetes: Record<string, unknown>; 'bootstrap-commands'?: Record<string, unknown>; [k: string]: unknown } };
const toml = (text: string) => parse(text) as unknown as Settings;
const build = (over: Partial<Parameters<typeof buildBottlerocketUserData>[0]> = {}, version?: string) =>
  toml(
    buildBottlerocketUserData(
      {
        cluster,
        labels: { 'karpenter.sh/nodepool': 'default', 'kubernetes.io/arch': 'amd64' },
        taints: [{ key: 'karpenter.sh/unregistered', effect: 'NoExecute' }],
        ...over,
      },
      version,
    ),
  );

describe('Bottlerocket alias: SSM parameters', () => {
  const ec2 = mockClient(EC2Client);
  const ssm = mockClient(SSMClient);
  beforeEach(() => {
    ec2.reset();
    ssm.reset();
    ec2.on(DescribeSubnetsCommand).resolves({ Subnets: [{ SubnetId: 'subnet-1', AvailabilityZone: 'us-west-2a', AvailableIpAddressCount: 10 }] });
    ec2.on(DescribeSecurityGroupsCommand).resolves({ SecurityGroups: [{ GroupId: 'sg-1' }] });
  });

  it('names the standard and nvidia parameters per architecture, the version without its v', () => {
    expect(bottlerocketAmiParameters('1.33', 'v1.46.0')).toEqual([
      { name: '/aws/service/bottlerocket/aws-k8s-1.33/x86_64/1.46.0/image_id', arch: 'amd64', variants: ['standard', 'neuron'] },
      { name: '/aws/service/bottlerocket/aws-k8s-1.33/arm64/1.46.0/image_id', arch: 'arm64', variants: ['standard'] },
      { name: '/aws/service/bottlerocket/aws-k8s-1.33-nvidia/x86_64/1.46.0/image_id', arch: 'amd64', variants: ['nvidia'] },
      { name: '/aws/service/bottlerocket/aws-k8s-1.33-nvidia/arm64/1.46.0/image_id', arch: 'arm64', variants: ['nvidia'] },
    ]);
    expect(bottlerocketAmiParameters('1.33', 'latest')[0].name).toBe('/aws/service/bottlerocket/aws-k8s-1.33/x86_64/latest/image_id');
  });

  it('resolves them: Neuron types get the standard x86_64 image, GPU types the nvidia one', async () => {
    ssm.on(GetParameterCommand).callsFake((input: { Name: string }) => {
      const m = /aws-k8s-1\.33(-nvidia)?\/(x86_64|arm64)\/latest\/image_id$/.exec(input.Name);
      if (!m) throw new ParameterNotFound({ message: 'not found', $metadata: {} });
      return { Parameter: { Value: `ami-br-${m[2]}${m[1] ?? ''}` } };
    });
    const nc = nodeClass();
    nc.spec.amiSelectorTerms = [{ alias: 'bottlerocket@latest' }];
    const r = await new Ec2NodeClassResolver(sdkLookups(new EC2Client({ region: 'us-west-2' }), new SSMClient({ region: 'us-west-2' })), '1.33').resolve(nc);
    expect(r.images).toEqual({ amd64: 'ami-br-x86_64', arm64: 'ami-br-arm64' });
    expect(r.variants).toEqual({ neuron: { amd64: 'ami-br-x86_64' }, nvidia: { amd64: 'ami-br-x86_64-nvidia', arm64: 'ami-br-arm64-nvidia' } });
  });
});

describe('Bottlerocket settings TOML', () => {
  it('sets the cluster, DNS IP, max pods, labels the kubelet may set and taints as key → ["value:Effect"]', () => {
    const k = build({
      maxPods: 29,
      taints: [
        { key: 'dedicated', value: 'gpu', effect: 'NoSchedule' },
        { key: 'dedicated', effect: 'NoExecute' },
        { key: 'karpenter.sh/unregistered', effect: 'NoExecute' },
      ],
    }).settings.kubernetes;
    expect(k).toEqual({
      'cluster-name': 'demo',
      'api-server': 'https://x.example',
      'cluster-certificate': 'Q0E=',
      'cluster-dns-ip': '10.100.0.10',
      'max-pods': 29,
      'node-labels': { 'karpenter.sh/nodepool': 'default' },
      'node-taints': { dedicated: ['gpu:NoSchedule', ':NoExecute'], 'karpenter.sh/unregistered': [':NoExecute'] },
    });
  });

  it('maps the kubelet fields to their settings (durations as Go writes them, GC thresholds as strings)', () => {
    const k = build({
      kubelet: {
        maxPods: 50,
        clusterDNS: ['10.100.0.53'],
        systemReserved: { cpu: '100m' },
        kubeReserved: { memory: '256Mi' },
        evictionHard: { 'memory.available': '5%' },
        evictionSoft: { 'memory.available': '10%' },
        evictionSoftGracePeriod: { 'memory.available': '1m' },
        evictionMaxPodGracePeriod: 30,
        imageGCHighThresholdPercent: 85,
        imageGCLowThresholdPercent: 60,
        cpuCFSQuota: false,
        podsPerCore: 4,
      },
      maxPods: 29,
    }).settings.kubernetes;
    expect(k).toMatchObject({
      'max-pods': 50,
      'cluster-dns-ip': '10.100.0.53',
      'system-reserved': { cpu: '100m' },
      'kube-reserved': { memory: '256Mi' },
      'eviction-hard': { 'memory.available': '5%' },
      'eviction-soft': { 'memory.available': '10%' },
      'eviction-soft-grace-period': { 'memory.available': '1m0s' },
      'eviction-max-pod-grace-period': 30,
      'image-gc-high-threshold-percent': '85',
      'image-gc-low-threshold-percent': '60',
      'cpu-cfs-quota-enforced': false,
    });
    // Bottlerocket has no podsPerCore setting (Karpenter's catalog ignores it for the family too).
    expect(Object.keys(k).some((x) => x.includes('per-core'))).toBe(false);
  });

  it("merges the class userData: other settings kept, labels merged (Karpenter wins), its taints replace the user's, kubelet fields replace", () => {
    const custom = [
      '[settings]',
      'motd = "hi"',
      '[settings.kubernetes]',
      'cluster-name = "mine"',
      'max-pods = 7',
      'shutdown-grace-period = "30s"',
      '[settings.kubernetes.node-labels]',
      'team = "a"',
      '"karpenter.sh/nodepool" = "mine"',
      '[settings.kubernetes.node-taints]',
      'user = ["x:NoSchedule"]',
      '[settings.kubernetes.eviction-hard]',
      '"memory.available" = "1Gi"',
      '[settings.bootstrap-commands.hello]',
      'commands = [["echo", "hi"]]',
      'mode = "once"',
    ].join('\n');
    const s = build({ custom, maxPods: 29, kubelet: { evictionHard: { 'nodefs.available': '5%' } } }).settings;
    expect(s.motd).toBe('hi');
    expect(s.kubernetes['cluster-name']).toBe('demo');
    expect(s.kubernetes['max-pods']).toBe(29);
    expect(s.kubernetes['shutdown-grace-period']).toBe('30s');
    expect(s.kubernetes['node-labels']).toEqual({ team: 'a', 'karpenter.sh/nodepool': 'default' });
    expect(s.kubernetes['node-taints']).toEqual({ 'karpenter.sh/unregistered': [':NoExecute'] });
    expect(s.kubernetes['eviction-hard']).toEqual({ 'nodefs.available': '5%' });
    expect(s['bootstrap-commands']).toEqual({ hello: { commands: [['echo', 'hi']], mode: 'once', essential: false } });
  });

  it('RAID0: a bootstrap command mounts the instance store; releases before 1.46 bind the directories by name', () => {
    const cmd = (version?: string) =>
      (build({ instanceStorePolicy: 'RAID0' }, version).settings['bootstrap-commands'] as Record<string, { commands: string[][] }>)[
        '000-mount-instance-storage'
      ];
    expect(cmd('latest')).toEqual({
      commands: [
        ['apiclient', 'ephemeral-storage', 'init'],
        ['apiclient', 'ephemeral-storage', 'bind'],
      ],
      mode: 'always',
      essential: true,
    });
    expect(cmd('v1.45.2').commands[1]).toEqual([
      'apiclient',
      'ephemeral-storage',
      'bind',
      '--dirs',
      '/var/lib/containerd',
      '/var/lib/kubelet',
      '/var/log/pods',
    ]);
    expect(cmd(undefined).commands[1]).toContain('--dirs');
    expect(build({}).settings['bootstrap-commands']).toBeUndefined();
  });

  it('the release: alias, else a name term, else the image an id term chose, else any chosen Bottlerocket image', () => {
    expect(bottlerocketVersion([{ alias: 'bottlerocket@v1.46.0' }])).toBe('v1.46.0');
    expect(bottlerocketVersion([{ name: 'bottlerocket-aws-k8s-1.33-x86_64-v1.47.1-abcdef' }])).toBe('v1.47.1');
    expect(
      bottlerocketVersion(
        [{ id: 'ami-2' }],
        [
          { id: 'ami-1', name: 'bottlerocket-aws-k8s-1.33-arm64-v1.40.0-x' },
          { id: 'ami-2', name: 'bottlerocket-aws-k8s-1.33-x86_64-v1.48.0-x' },
        ],
      ),
    ).toBe('v1.48.0');
    expect(
      bottlerocketVersion(
        [{ tags: { a: 'b' } } as never],
        [
          { id: 'ami-1', name: 'custom-1.2.3' },
          { id: 'ami-2', name: 'bottlerocket-aws-k8s-1.33-x86_64-v1.44.0-x' },
        ],
      ),
    ).toBe('v1.44.0');
    expect([
      supportsDefaultBind('1.46.0'),
      supportsDefaultBind('v1.45.9'),
      supportsDefaultBind('2.0.0'),
      supportsDefaultBind('latest'),
      supportsDefaultBind('1.46'),
    ]).toEqual([true, false, true, true, false]);
  });

  it('helpers: the .10 DNS address of the service CIDR, Go durations', () => {
    expect([clusterDnsIp('10.100.0.0/16'), clusterDnsIp('172.20.0.0/16'), clusterDnsIp('fd00::/108')]).toEqual(['10.100.0.10', '172.20.0.10', undefined]);
    expect([formatGoDuration(60_000), formatGoDuration(90_000), formatGoDuration(3_600_000), formatGoDuration(1500), formatGoDuration(0)]).toEqual([
      '1m0s',
      '1m30s',
      '1h0m0s',
      '1.5s',
      '0s',
    ]);
  });
});

describe('the launch template of a Bottlerocket class', () => {
  const resolved: ResolvedNodeClass = {
    subnets: [{ subnetId: 'subnet-a', zone: 'us-west-2a', availableIpAddressCount: 10 }],
    securityGroupIds: ['sg-1'],
    images: { amd64: 'ami-br' },
  };
  const launch = (spec: Partial<EC2NodeClass['spec']>) => {
    const nc = nodeClass();
    nc.spec = { ...nc.spec, amiSelectorTerms: [{ alias: 'bottlerocket@latest' }], ...spec };
    return buildLaunchRequests(
      nodeClaim({ name: 'default-abc', phase: 'Pending' }),
      { instanceTypes: ['m5.large'], zones: ['us-west-2a'], capacityTypes: ['on-demand'], maxPods: { 'm5.large': 29 } },
      nc,
      resolved,
      { cluster, architectureOf: catalogArchitecture },
    ).launchTemplates[0].LaunchTemplateData!;
  };

  it("user data is the settings TOML (no MIME), the type's pod capacity as max-pods", () => {
    const text = Buffer.from(launch({}).UserData!, 'base64').toString();
    expect(text).not.toMatch(/MIME-Version/);
    expect(toml(text).settings.kubernetes['max-pods']).toBe(29);
  });

  it('default volumes: a 6 GiB OS volume and a 20 GiB data volume, gp3, encrypted', () => {
    expect(launch({}).BlockDeviceMappings).toEqual([
      { DeviceName: '/dev/xvda', Ebs: { VolumeSize: 6, VolumeType: 'gp3', Encrypted: true } },
      { DeviceName: '/dev/xvdb', Ebs: { VolumeSize: 20, VolumeType: 'gp3', Encrypted: true } },
    ]);
    expect(launch({ blockDeviceMappings: [{ deviceName: '/dev/xvdb', ebs: { volumeSize: '100Gi' } }] }).BlockDeviceMappings).toEqual([
      { DeviceName: '/dev/xvdb', Ebs: { VolumeSize: 100 } },
    ]);
  });
});
