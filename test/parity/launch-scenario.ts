/**
 * Launch parity scenarios (issue 24): one EC2NodeClass, one NodeClaim with its instance types and
 * offerings, and the account (subnets, security groups, images, SSM parameters), generated with
 * fast-check over the fields of Karpenter's EC2NodeClass CRD. The same scenario goes to the launch
 * oracle (test/oracle/launch) and to nodefleet's launch path (./launch.ts).
 *
 * Instance types are those the provider's fake DescribeInstanceTypes knows (the oracle resolves
 * them from it; nodefleet's shipped catalog has them too): standard, Graviton, NVIDIA, Neuron,
 * metal and local-NVMe types. Zones and ids are us-west-2's (the fake's region).
 */
import fc from 'fast-check';

export const Cluster = {
  name: 'parity',
  endpoint: 'https://parity.gr7.us-west-2.eks.amazonaws.com',
  caBundle: 'UEFSSVRZLUNB',
  serviceCidr: '10.100.0.0/16',
  /** The cluster DNS IP nodeadm derives from serviceCidr (.10), which the oracle is given as the kube-dns service IP. */
  kubeDnsIp: '10.100.0.10',
  kubernetesVersion: '1.33',
} as const;

export const AccountId = '111122223333';
export const InstanceProfile = 'parity-node-profile';
export const Zones = [
  { zone: 'us-west-2a', zoneId: 'usw2-az2' },
  { zone: 'us-west-2b', zoneId: 'usw2-az1' },
  { zone: 'us-west-2c', zoneId: 'usw2-az3' },
  { zone: 'us-west-2d', zoneId: 'usw2-az4' },
] as const;

export const InstanceTypes = [
  'm5.large',
  'm5.xlarge',
  't3.large',
  'm7i-flex.large',
  'c6g.large',
  't4g.small',
  't4g.medium',
  't4g.xlarge',
  'g4dn.8xlarge',
  'g5.12xlarge',
  'g6.12xlarge',
  'p5.48xlarge',
  'inf2.xlarge',
  'inf2.24xlarge',
  'trn1.2xlarge',
  'm5.metal',
  'm6idn.32xlarge',
] as const;

/** The types above with EFA devices (the fake's and the catalog's MaximumEfaInterfaces: 1, 1, 1, 32, 2): an EFA claim's launch set. */
export const EfaInstanceTypes = ['g4dn.8xlarge', 'g5.12xlarge', 'g6.12xlarge', 'p5.48xlarge', 'm6idn.32xlarge'] as const;
/** The extended resource an EFA claim's pods request. */
export const EfaResource = 'vpc.amazonaws.com/efa';

/** A pinned alias version the account has SSM parameters for. */
export const PinnedVersion = 'v20250601';
/** Bottlerocket releases the account has SSM parameters for (`latest` is the newest, v1.50.0); 1.45.2 predates the default ephemeral-storage bind. */
export const BottlerocketVersions = ['latest', '1.46.0', '1.45.2'] as const;

type Tag = { Key: string; Value: string };
export interface LaunchScenario {
  nodeClass: { apiVersion: 'karpenter.k8s.aws/v1'; kind: 'EC2NodeClass'; metadata: { name: string }; spec: Record<string, unknown> };
  nodeClaim: {
    name: string;
    nodePool: string;
    labels: Record<string, string>;
    taints: { key: string; value?: string; effect: string }[];
    startupTaints: { key: string; value?: string; effect: string }[];
    requirements: { key: string; operator: 'In'; values: string[] }[];
    /** The pods' requests (only `vpc.amazonaws.com/efa` matters to a launch). */
    requests: Record<string, string>;
  };
  instanceTypes: { name: string; offerings: { zone: string; capacityType: 'spot' | 'on-demand'; price: number }[] }[];
  account: {
    subnets: { SubnetId: string; AvailabilityZone: string; AvailabilityZoneId: string; AvailableIpAddressCount: number; OwnerId: string; Tags: Tag[] }[];
    securityGroups: { GroupId: string; GroupName: string; OwnerId: string; Tags: Tag[] }[];
    images: {
      ImageId: string;
      Name: string;
      Architecture: string;
      CreationDate: string;
      State: 'available';
      OwnerId: string;
      ImageOwnerAlias?: string;
      DeprecationTime?: string;
      Tags: Tag[];
    }[];
    ssmParameters: Record<string, string>;
  };
}

const ssmArch = { amd64: 'x86_64', arm64: 'arm64' } as const;

/** The EKS AL2023, Bottlerocket and Windows images of the account and the public SSM parameters naming them (latest and pinned releases). */
function eksImages(): { images: LaunchScenario['account']['images']; params: Record<string, string> } {
  const images: LaunchScenario['account']['images'] = [];
  const params: Record<string, string> = {};
  for (const arch of ['amd64', 'arm64'] as const) {
    for (const variant of arch === 'amd64' ? ['standard', 'nvidia', 'neuron'] : ['standard', 'nvidia']) {
      for (const version of ['latest', PinnedVersion]) {
        const id = `ami-eks${arch === 'amd64' ? 'x86' : 'arm'}${variant}${version === 'latest' ? 'latest' : 'pinned'}`;
        images.push({
          ImageId: id,
          Name: `amazon-eks-node-al2023-${ssmArch[arch]}-${variant}-${Cluster.kubernetesVersion}-${version}`,
          Architecture: ssmArch[arch],
          CreationDate: version === 'latest' ? '2025-09-01T00:00:00.000Z' : '2025-06-01T00:00:00.000Z',
          State: 'available',
          OwnerId: '602401143452',
          ImageOwnerAlias: 'amazon',
          Tags: [],
        });
        const base = `/aws/service/eks/optimized-ami/${Cluster.kubernetesVersion}/amazon-linux-2023/${ssmArch[arch]}/${variant}`;
        params[
          version === 'latest'
            ? `${base}/recommended/image_id`
            : `${base}/amazon-eks-node-al2023-${ssmArch[arch]}-${variant}-${Cluster.kubernetesVersion}-${version}/image_id`
        ] = id;
      }
    }
  }
  for (const arch of ['amd64', 'arm64'] as const) {
    for (const flavour of ['', '-nvidia']) {
      for (const version of BottlerocketVersions) {
        const v = version === 'latest' ? '1.50.0' : version;
        const id = `ami-br${arch === 'amd64' ? 'x86' : 'arm'}${flavour ? 'nvidia' : 'std'}${v.replace(/\./g, '')}`;
        images.push({
          ImageId: id,
          Name: `bottlerocket-aws-k8s-${Cluster.kubernetesVersion}${flavour}-${ssmArch[arch]}-v${v}-0a1b2c3d`,
          Architecture: ssmArch[arch],
          CreationDate: `2025-0${BottlerocketVersions.length - BottlerocketVersions.indexOf(version) + 4}-01T00:00:00.000Z`,
          State: 'available',
          OwnerId: '092701018921',
          ImageOwnerAlias: 'amazon',
          Tags: [{ Key: 'os', Value: 'bottlerocket' }],
        });
        params[`/aws/service/bottlerocket/aws-k8s-${Cluster.kubernetesVersion}${flavour}/${ssmArch[arch]}/${version}/image_id`] = id;
      }
    }
  }
  for (const year of ['2019', '2022', '2025']) {
    const id = `ami-win${year}core`;
    images.push({
      ImageId: id,
      Name: `Windows_Server-${year}-English-Core-EKS_Optimized-${Cluster.kubernetesVersion}-2025.09.01`,
      Architecture: 'x86_64',
      CreationDate: '2025-09-01T00:00:00.000Z',
      State: 'available',
      OwnerId: '801119661308',
      ImageOwnerAlias: 'amazon',
      Tags: [],
    });
    params[`/aws/service/ami-windows-latest/Windows_Server-${year}-English-Core-EKS_Optimized-${Cluster.kubernetesVersion}/image_id`] = id;
  }
  return { images, params };
}

/** The account's own images: names, tags, owners and creation dates for the name / tags / id / ssmParameter terms. */
const customImages = fc
  .uniqueArray(
    fc.record({
      n: fc.integer({ min: 1, max: 6 }),
      arch: fc.constantFrom('x86_64', 'arm64'),
      owner: fc.constantFrom('self', 'amazon', 'other'),
      day: fc.integer({ min: 1, max: 4 }),
      team: fc.constantFrom('a', 'b'),
      deprecated: fc.constantFrom(undefined, undefined, '2025-12-01T00:00:00.000Z', '2027-01-01T00:00:00.000Z'),
    }),
    { minLength: 1, maxLength: 5, selector: (i) => i.n },
  )
  .map((xs) =>
    xs.map((i) => ({
      ImageId: `ami-custom${i.n}`,
      Name: `custom-node-${i.team}-${i.n}`,
      Architecture: i.arch,
      CreationDate: `2025-03-${String(i.day).padStart(2, '0')}T00:00:00.000Z`,
      State: 'available' as const,
      OwnerId: i.owner === 'self' ? AccountId : i.owner === 'amazon' ? '137112412989' : '999988887777',
      ...(i.owner === 'amazon' ? { ImageOwnerAlias: 'amazon' } : {}),
      Tags: [{ Key: 'team', Value: i.team }],
      ...(i.deprecated ? { DeprecationTime: i.deprecated } : {}),
    })),
  );

const subnets = fc
  .uniqueArray(
    fc.record({
      n: fc.integer({ min: 1, max: 8 }),
      zone: fc.integer({ min: 0, max: 3 }),
      ips: fc.constantFrom(10, 100, 100, 250, 4000),
      tier: fc.constantFrom('private', 'public'),
    }),
    { minLength: 1, maxLength: 6, selector: (s) => s.n },
  )
  .map((xs) =>
    xs.map((s) => ({
      SubnetId: `subnet-0${s.n}`,
      AvailabilityZone: Zones[s.zone].zone,
      AvailabilityZoneId: Zones[s.zone].zoneId,
      AvailableIpAddressCount: s.ips,
      OwnerId: AccountId,
      Tags: [
        { Key: 'karpenter.sh/discovery', Value: Cluster.name },
        { Key: 'tier', Value: s.tier },
      ],
    })),
  );

const securityGroups = fc
  .uniqueArray(fc.record({ n: fc.integer({ min: 1, max: 4 }), role: fc.constantFrom('node', 'extra') }), { minLength: 1, maxLength: 3, selector: (g) => g.n })
  .map((xs) =>
    xs.map((g) => ({
      GroupId: `sg-0${g.n}`,
      GroupName: `parity-${g.role}-${g.n}`,
      OwnerId: AccountId,
      Tags: [
        { Key: 'karpenter.sh/discovery', Value: Cluster.name },
        { Key: 'role', Value: g.role },
      ],
    })),
  );

/** `a` with probability `presence`, else undefined. */
const opt = <T>(a: fc.Arbitrary<T>, presence = 0.4): fc.Arbitrary<T | undefined> =>
  fc.oneof({ weight: Math.round((1 - presence) * 100), arbitrary: fc.constant(undefined) }, { weight: Math.round(presence * 100), arbitrary: a });
/** Drops undefined values (fast-check records keep the keys). */
const defined = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

/** Reserved amounts by resource (sizes a node of the types above keeps positive allocatable with). */
const reserved = fc
  .record(
    {
      cpu: opt(fc.constantFrom('100m', '250m', '1')),
      memory: opt(fc.constantFrom('100Mi', '256Mi', '512Mi')),
      'ephemeral-storage': opt(fc.constantFrom('500Mi', '1Gi', '2Gi')),
    },
    { requiredKeys: [] },
  )
  .map(defined);
const kubelet = fc
  .record(
    {
      maxPods: opt(fc.integer({ min: 8, max: 250 }), 0.5),
      podsPerCore: opt(fc.integer({ min: 1, max: 20 })),
      systemReserved: opt(reserved),
      kubeReserved: opt(reserved),
      evictionHard: opt(
        fc.dictionary(fc.constantFrom('memory.available', 'nodefs.available', 'imagefs.available'), fc.constantFrom('5%', '10%', '100Mi'), { maxKeys: 2 }),
      ),
      evictionSoft: opt(fc.constant({ 'memory.available': '15%' })),
      evictionSoftGracePeriod: opt(fc.constant({ 'memory.available': '1m0s' })),
      evictionMaxPodGracePeriod: opt(fc.integer({ min: 10, max: 600 })),
      imageGCHighThresholdPercent: opt(fc.integer({ min: 60, max: 95 })),
      imageGCLowThresholdPercent: opt(fc.integer({ min: 20, max: 55 })),
      cpuCFSQuota: opt(fc.boolean()),
      clusterDNS: opt(fc.constant(['10.100.0.53'])),
    },
    { requiredKeys: [] },
  )
  .map(defined);

const blockDevice = fc
  .record({
    deviceName: fc.constantFrom('/dev/xvda', '/dev/xvdb'),
    rootVolume: opt(fc.boolean()),
    ebs: fc
      .record(
        {
          volumeSize: opt(fc.constantFrom('20Gi', '100Gi', '1Ti', '50G'), 0.8),
          volumeType: opt(fc.constantFrom('gp3', 'gp2', 'io2')),
          iops: opt(fc.constantFrom(3000, 6000)),
          throughput: opt(fc.constantFrom(125, 500)),
          encrypted: opt(fc.boolean()),
          kmsKeyID: opt(fc.constant('arn:aws:kms:us-west-2:111122223333:key/parity')),
          deleteOnTermination: opt(fc.boolean()),
          snapshotID: opt(fc.constant('snap-0123456789abcdef0')),
          volumeInitializationRate: opt(fc.constantFrom(100, 300)),
        },
        { requiredKeys: [] },
      )
      .map(defined),
  })
  .map(defined);

/** spec.userData in the AL2023 forms: shell script, NodeConfig YAML, MIME multi-part with both. */
const userData = fc.constantFrom(
  '#!/bin/bash\necho parity > /etc/parity',
  'apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  kubelet:\n    config:\n      shutdownGracePeriod: 30s\n',
  'MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="BOUNDARY"\n\n--BOUNDARY\nContent-Type: text/x-shellscript; charset="us-ascii"\n\n#!/bin/bash\necho first\n\n--BOUNDARY\nContent-Type: application/node.eks.aws\n\napiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  kubelet:\n    config:\n      shutdownGracePeriod: 45s\n\n--BOUNDARY--\n',
);

/** Bottlerocket user data forms: other settings, Kubernetes settings Karpenter overrides or merges, a bootstrap command, a key Karpenter drops, not TOML. */
const bottlerocketUserData = fc.constantFrom(
  '[settings]\nmotd = "parity"\n\n[settings.kernel.sysctl]\n"net.ipv4.ip_forward" = "1"\n',
  '[settings.kubernetes]\nmax-pods = 42\ncluster-name = "user-name"\ncluster-dns-ip = "10.0.0.2"\nallowed-unsafe-sysctls = ["net.core.somaxconn"]\nshutdown-grace-period = "30s"\n\n[settings.kubernetes.node-labels]\n"example.com/from-user-data" = "yes"\nteam = "user"\n\n[settings.kubernetes.node-taints]\n"example.com/user" = ["x:NoSchedule"]\n\n[settings.kubernetes.eviction-hard]\n"memory.available" = "200Mi"\n',
  '[settings.bootstrap-commands.parity]\ncommands = [["echo", "parity"]]\nmode = "once"\nessential = false\n\n[settings.host-containers.admin]\nenabled = true\n',
  '[settings.kubernetes]\nnot-a-bottlerocket-setting = 1\n',
  '#!/bin/bash\necho parity > /etc/parity',
);

const isBottlerocket = (ami: { terms: readonly object[]; amiFamily?: string }) =>
  ami.amiFamily === 'Bottlerocket' || String((ami.terms[0] as { alias?: string } | undefined)?.alias).startsWith('bottlerocket@');

/** Windows user data: PowerShell the class runs before the bootstrap. */
const windowsUserData = fc.constantFrom('Write-Host "parity"', 'New-Item -Path C:\\parity -ItemType Directory\nSet-Content C:\\parity\\ok "1"');
const isWindows = (ami: { terms: readonly object[]; amiFamily?: string }) =>
  !!ami.amiFamily?.startsWith('Windows') || String((ami.terms[0] as { alias?: string } | undefined)?.alias).startsWith('windows');

/** AMI selector terms: an alias (AL2023 or Bottlerocket latest / pinned, Windows latest; AL2, which nodefleet refuses), or id / name / tags / ssmParameter terms (AL2023, Bottlerocket, Windows). */
const amiTerms = (images: LaunchScenario['account']['images']) =>
  fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom('al2023@latest', `al2023@${PinnedVersion}`).map((alias) => ({ terms: [{ alias }] })) },
    { weight: 4, arbitrary: fc.constantFrom('bottlerocket@latest', 'bottlerocket@v1.46.0', 'bottlerocket@1.45.2').map((alias) => ({ terms: [{ alias }] })) },
    { weight: 3, arbitrary: fc.constantFrom('windows2019@latest', 'windows2022@latest', 'windows2025@latest').map((alias) => ({ terms: [{ alias }] })) },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom(...images.filter((i) => i.Name.startsWith('Windows_Server-')).map((i) => i.ImageId))
        .map((id) => ({ terms: [{ id }], amiFamily: 'Windows2022' })),
    },
    { weight: 1, arbitrary: fc.constantFrom('al2@latest').map((alias) => ({ terms: [{ alias }] })) },
    {
      weight: 2,
      arbitrary: fc
        .array(
          fc.oneof(
            fc.constantFrom(...images.filter((i) => i.Name.startsWith('bottlerocket-')).map((i) => ({ id: i.ImageId }))),
            fc.constantFrom(...images.filter((i) => i.Name.startsWith('bottlerocket-')).map((i) => i.Name)).map((name) => ({ name })),
            fc.constant({ tags: { os: 'bottlerocket' } }),
            fc.constantFrom(...images.filter((i) => i.ImageId.startsWith('ami-custom')).map((i) => ({ id: i.ImageId }))),
          ),
          { minLength: 1, maxLength: 2 },
        )
        .map((terms) => ({ terms, amiFamily: 'Bottlerocket' })),
    },
    {
      weight: 3,
      arbitrary: fc
        .array(
          fc.oneof(
            fc.constantFrom(...images.map((i) => ({ id: i.ImageId }))),
            fc.constantFrom(...images.map((i) => i.Name)).map((name) => ({ name })),
            fc.record({ name: fc.constant('custom-node-*'), owner: fc.constantFrom(AccountId, 'self', 'amazon') }),
            fc.constantFrom('a', 'b').map((team) => ({ tags: { team } })),
            fc.constant({ ssmParameter: '/parity/ami/custom' }),
          ),
          { minLength: 1, maxLength: 2 },
        )
        .map((terms) => ({ terms, amiFamily: 'AL2023' })),
    },
  );

/** Fields nodefleet refuses (shared/api/nodeclass-support.ts): each appears now and then, so refusal is compared too. */
const refusedFields = fc
  .record(
    {
      context: opt(fc.constant('fc-0123456789abcdef0'), 0.03),
      ipPrefixCount: opt(fc.constant(1), 0.03),
      networkInterfaces: opt(fc.constant([{ networkCardIndex: 0, deviceIndex: 0, interfaceType: 'interface' }]), 0.03),
      placementGroupSelector: opt(fc.constant({ name: 'parity-pg' }), 0.03),
      connectionTracking: opt(fc.constant({ tcpEstablishedTimeout: 3600 }), 0.03),
      cpuOptions: opt(fc.constant({ nestedVirtualization: 'enabled' }), 0.03),
      capacityReservationSelectorTerms: opt(fc.constant([{ id: 'cr-0123456789abcdef0' }]), 0.03),
    },
    { requiredKeys: [] },
  )
  .map(defined);

const label = fc.constantFrom<[string, string]>(
  ['team', 'a'],
  ['team', 'b'],
  ['example.com/tier', 'web'],
  ['node-restriction.kubernetes.io/pool', 'x'],
  ['kubernetes.io/arch', 'amd64'],
  ['topology.kubernetes.io/zone', 'us-west-2a'],
);
const taint = fc
  .record({
    key: fc.constantFrom('dedicated', 'example.com/gpu'),
    value: opt(fc.constantFrom('a', 'true'), 0.6),
    effect: fc.constantFrom('NoSchedule', 'NoExecute', 'PreferNoSchedule'),
  })
  .map(defined) as fc.Arbitrary<{ key: string; value?: string; effect: string }>;

export const launchScenario: fc.Arbitrary<LaunchScenario> = fc
  .record({ subnets, securityGroups, customImages })
  .chain(({ subnets, securityGroups, customImages }) => {
    const eks = eksImages();
    const images = [...eks.images, ...customImages];
    const ssmParameters = { ...eks.params, '/parity/ami/custom': customImages[0].ImageId };
    const subnetTerms = fc.oneof(
      fc.constant([{ tags: { 'karpenter.sh/discovery': Cluster.name } }]),
      fc.constantFrom('private', 'public').map((tier) => [{ tags: { tier } }]),
      fc.subarray(
        subnets.map((s) => ({ id: s.SubnetId })),
        { minLength: 1 },
      ),
    );
    const sgTerms = fc.oneof(
      fc.constant([{ tags: { 'karpenter.sh/discovery': Cluster.name } }]),
      fc.subarray(
        securityGroups.map((g) => ({ id: g.GroupId })),
        { minLength: 1 },
      ),
      fc.constantFrom(...securityGroups.map((g) => [{ name: g.GroupName }])),
    );
    const spec = fc
      .record({
        ami: amiTerms(images),
        subnetSelectorTerms: subnetTerms,
        securityGroupSelectorTerms: sgTerms,
        identity: fc.oneof(fc.constant({ role: 'parity-node-role' }), fc.constant({ instanceProfile: 'parity-custom-profile' })),
        kubelet: opt(kubelet, 0.6),
        blockDeviceMappings: opt(fc.uniqueArray(blockDevice, { minLength: 1, maxLength: 2, selector: (b) => b.deviceName })),
        instanceStorePolicy: opt(fc.constant('RAID0')),
        userData: opt(userData, 0.5),
        bottlerocketUserData: opt(bottlerocketUserData, 0.5),
        windowsUserData: opt(windowsUserData, 0.5),
        crossFamilyUserData: fc.integer({ min: 0, max: 19 }).map((n) => n === 0),
        // Now and then an AL2023 script over EC2's 16 KB user data limit.
        hugeUserData: fc.integer({ min: 0, max: 39 }).map((n) => n === 0),
        tags: opt(fc.dictionary(fc.constantFrom('team', 'cost-center', 'Name'), fc.constantFrom('a', 'b'), { maxKeys: 2 })),
        metadataOptions: opt(
          fc
            .record(
              {
                httpEndpoint: opt(fc.constantFrom('enabled', 'disabled'), 0.5),
                httpProtocolIPv6: opt(fc.constantFrom('enabled', 'disabled'), 0.5),
                httpPutResponseHopLimit: opt(fc.integer({ min: 1, max: 3 }), 0.5),
                httpTokens: opt(fc.constantFrom('required', 'optional'), 0.5),
              },
              { requiredKeys: [] },
            )
            .map(defined),
        ),
        detailedMonitoring: opt(fc.boolean()),
        associatePublicIPAddress: opt(fc.boolean()),
        refused: refusedFields,
      })
      .map((s) =>
        defined({
          ...('amiFamily' in s.ami ? { amiFamily: s.ami.amiFamily } : {}),
          amiSelectorTerms: s.ami.terms,
          subnetSelectorTerms: s.subnetSelectorTerms,
          securityGroupSelectorTerms: s.securityGroupSelectorTerms,
          ...s.identity,
          kubelet: s.kubelet,
          blockDeviceMappings: s.blockDeviceMappings,
          instanceStorePolicy: s.instanceStorePolicy,
          // Each family's own forms, and now and then the other family's (which neither launches).
          userData: isWindows(s.ami)
            ? s.crossFamilyUserData
              ? s.userData
              : s.windowsUserData
            : isBottlerocket(s.ami) !== s.crossFamilyUserData
              ? s.bottlerocketUserData
              : s.hugeUserData
                ? `#!/bin/bash\n${'echo parity-padding-line\n'.repeat(700)}`
                : s.userData,
          tags: s.tags,
          metadataOptions: s.metadataOptions,
          detailedMonitoring: s.detailedMonitoring,
          associatePublicIPAddress: s.associatePublicIPAddress,
          ...s.refused,
        }),
      );
    const offering = fc.record({
      zone: fc.constantFrom(...Zones.map((z) => z.zone)),
      capacityType: fc.constantFrom('spot' as const, 'on-demand' as const),
      price: fc.integer({ min: 1, max: 400 }).map((c) => c / 100),
    });
    const typesOf = (names: readonly string[]) =>
      fc.uniqueArray(
        fc.record({
          name: fc.constantFrom(...names),
          offerings: fc.uniqueArray(offering, { minLength: 1, maxLength: 6, selector: (o) => `${o.zone}/${o.capacityType}` }),
        }),
        { minLength: 1, maxLength: 5, selector: (t) => t.name },
      );
    // One claim in six is for pods requesting EFA: its types are the EFA ones (the scheduler gives such a claim no other).
    const claimTypes = fc.oneof(
      { weight: 5, arbitrary: typesOf(InstanceTypes).map((types) => ({ types, requests: {} as Record<string, string> })) },
      { weight: 1, arbitrary: typesOf(EfaInstanceTypes).map((types) => ({ types, requests: { [EfaResource]: '1' } })) },
    );
    return fc
      .record({
        spec,
        claimTypes,
        labels: fc.uniqueArray(label, { maxLength: 3, selector: (l) => l[0] }),
        taints: fc.uniqueArray(taint, { maxLength: 2, selector: (t) => `${t.key}:${t.effect}` }),
        startupTaints: fc.uniqueArray(taint, { maxLength: 1 }),
        capacityTypes: fc.subarray(['spot', 'on-demand'], { minLength: 1 }),
        zoneReq: opt(
          fc.subarray(
            Zones.map((z) => z.zone),
            { minLength: 1 },
          ),
        ),
      })
      .map((r): LaunchScenario => ({
        nodeClass: { apiVersion: 'karpenter.k8s.aws/v1', kind: 'EC2NodeClass', metadata: { name: 'parity' }, spec: r.spec },
        nodeClaim: {
          name: 'parity-abcde',
          nodePool: 'parity',
          labels: Object.fromEntries(r.labels),
          taints: r.taints,
          startupTaints: r.startupTaints,
          requirements: [
            { key: 'node.kubernetes.io/instance-type', operator: 'In', values: r.claimTypes.types.map((t) => t.name) },
            { key: 'karpenter.sh/capacity-type', operator: 'In', values: r.capacityTypes },
            ...(r.zoneReq ? [{ key: 'topology.kubernetes.io/zone', operator: 'In' as const, values: r.zoneReq }] : []),
          ],
          requests: r.claimTypes.requests,
        },
        instanceTypes: r.claimTypes.types,
        account: { subnets, securityGroups, images, ssmParameters },
      }));
  });

/** The oracle's input for a scenario (test/oracle/launch README). */
export function toOracleInput(s: LaunchScenario): unknown {
  const c = s.nodeClaim;
  return {
    cluster: Cluster,
    nodeClass: s.nodeClass,
    nodeClaim: {
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodeClaim',
      metadata: { name: c.name, labels: { ...c.labels, 'karpenter.sh/nodepool': c.nodePool } },
      spec: {
        nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: s.nodeClass.metadata.name },
        requirements: c.requirements,
        taints: c.taints,
        startupTaints: c.startupTaints,
        resources: { requests: c.requests },
      },
    },
    instanceTypes: s.instanceTypes,
    instanceProfile: InstanceProfile,
    account: { id: AccountId, ...s.account },
  };
}
