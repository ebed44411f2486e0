/**
 * Random NodePools and EC2NodeClasses (fast-check) for the validation differential: each field
 * is absent or drawn from values around the CRDs' rules (valid ones, boundary ones, wrong ones),
 * so most manifests exercise a rule and about half are valid. The values are nodefleet's own.
 */
import fc from 'fast-check';

type Obj = Record<string, unknown>;

/** Present with weight 1, absent with weight `absent`. */
const opt = <T>(a: fc.Arbitrary<T>, absent = 1): fc.Arbitrary<T | undefined> =>
  fc.oneof({ weight: absent, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: a });
const pick = <T>(...xs: T[]) => fc.constantFrom(...xs);
/** Mostly one of `valid`, sometimes anything of `any`. */
const mix = <T>(valid: fc.Arbitrary<T>, any: fc.Arbitrary<T>, weight = 3) => fc.oneof({ weight, arbitrary: valid }, { weight: 1, arbitrary: any });
/** Drops the undefined fields (as JSON does). */
const clean = (o: Obj): Obj => JSON.parse(JSON.stringify(o)) as Obj;

const anyLabelKey = pick(
  'team',
  'example.com/team',
  'karpenter.sh/nodepool',
  'karpenter.sh/capacity-type',
  'karpenter.k8s.aws/instance-family',
  'kubernetes.io/hostname',
  'kubernetes.io/os',
  'node.kubernetes.io/instance-type',
  'topology.kubernetes.io/zone',
  'node-restriction.kubernetes.io/x',
  'kubelet.kubernetes.io/x',
  'example.kubernetes.io/x',
  'k8s.io/x',
  'karpenter.sh/custom',
  'Bad Key',
  'a/b/c',
  '-lead',
  'x'.repeat(64),
  `${'d'.repeat(250)}/k`,
);
const anyLabelValue = pick('blue', '', 'bad value', 'x'.repeat(63), 'x'.repeat(64), '-x', 'a.b_c-d', 'spot', 'on-demand', 'reserved');
const anyDuration = pick('720h', 'Never', '1h30m', '10m10s', '0s', '30s', '5x', '', '-1h', '1.5h', '1d', '100h0m0s', '1h0m', 'never');
const labelKey = mix(
  pick('team', 'example.com/team', 'karpenter.sh/capacity-type', 'topology.kubernetes.io/zone', 'node.kubernetes.io/instance-type'),
  anyLabelKey,
);
const labelValue = mix(pick('blue', 'spot', 'x'.repeat(63), 'a.b_c-d'), anyLabelValue);
const duration = mix(pick('720h', 'Never', '1h30m', '30s', '0s', '10m10s'), anyDuration);
const effect = pick('NoSchedule', 'NoExecute', 'PreferNoSchedule', 'Bogus', '');
const taint = fc.record({ key: labelKey, value: opt(labelValue), effect, timeAdded: opt(pick('2026-01-01T00:00:00Z', 'yesterday'), 8) });

const reqKey = pick(
  'karpenter.k8s.aws/instance-category',
  'karpenter.k8s.aws/instance-cpu',
  'karpenter.k8s.aws/instance-generation',
  'karpenter.k8s.aws/instance-family',
  'karpenter.sh/capacity-type',
  'karpenter.sh/nodepool',
  'kubernetes.io/arch',
  'kubernetes.io/os',
  'kubernetes.io/hostname',
  'node.kubernetes.io/instance-type',
  'topology.kubernetes.io/zone',
  'topology.k8s.aws/zone-id',
  'example.com/team',
  'kubernetes.io/custom',
  'karpenter.sh/unknown',
  'karpenter.k8s.aws/unknown',
  'Bad Key',
  '',
);
const operator = pick('In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt', 'Gte', 'Lte', 'Bogus');
const reqValues = pick<string[] | undefined>(
  undefined,
  [],
  ['c'],
  ['c', 'm', 'r'],
  ['5'],
  ['-1'],
  ['1.5'],
  ['5', '6'],
  ['x y'],
  ['spot', 'on-demand'],
  ['amd64'],
  ['us-east-1a'],
  ['0'],
);
const anyRequirement = fc.record({ key: reqKey, operator, values: reqValues, minValues: opt(pick(0, 1, 2, 3, 50, 51), 3) });
const validRequirement = fc.oneof(
  fc.record({
    key: pick(
      'karpenter.k8s.aws/instance-category',
      'kubernetes.io/arch',
      'karpenter.sh/capacity-type',
      'topology.kubernetes.io/zone',
      'example.com/team',
      'karpenter.k8s.aws/instance-family',
    ),
    operator: pick('In', 'NotIn'),
    values: pick(['c', 'm'], ['amd64'], ['spot', 'on-demand'], ['us-east-1a']),
    minValues: opt(pick(1, 2), 3),
  }),
  fc.record({
    key: pick('karpenter.k8s.aws/instance-cpu', 'karpenter.k8s.aws/instance-generation', 'karpenter.k8s.aws/instance-memory'),
    operator: pick('Gt', 'Lt', 'Gte', 'Lte'),
    values: pick(['5'], ['0'], ['64']),
  }),
  fc.record({ key: pick('example.com/team', 'kubernetes.io/os', 'karpenter.k8s.aws/instance-gpu-count'), operator: pick('Exists', 'DoesNotExist') }),
);
const requirement = mix(validRequirement, anyRequirement, 4);

const budget = fc.record({
  nodes: mix(pick('10%', '0', '5', '100%'), pick('10%', '0', '5', '100%', '101%', '-1', 'abc', '0%', '1000')),
  schedule: opt(pick('@daily', '0 9 * * mon-fri', '* * *', '@every 5m', '@hourly', '0 0 * * *', '61 * * * *', 'bogus'), 2),
  duration: opt(pick('1h', '10h0m0s', '5x', '1d', '30s', '1h30m', 'Never'), 2),
  reasons: opt(pick(['Empty'], ['Drifted', 'Underutilized'], ['Bogus'], [], ['Empty', 'Empty'], ['Unhealthy']), 3),
});

const quantity = mix(pick<unknown>('1000', '4000Gi', '100m', 8, '10'), pick<unknown>('1000', 'abc', '-1', '1.5', '4000Gi', '100m', 8, '1e3', '', '10'));

export const nodePool: fc.Arbitrary<Obj> = fc
  .record({
    labels: opt(fc.dictionary(labelKey, labelValue, { maxKeys: 2 }), 2),
    annotations: opt(fc.dictionary(pick('example.com/owner', 'karpenter.sh/do-not-disrupt', 'Bad Key', 'x'), labelValue, { maxKeys: 2 }), 4),
    taints: opt(fc.array(taint, { maxLength: 2 }), 3),
    startupTaints: opt(fc.array(taint, { maxLength: 2 }), 4),
    expireAfter: opt(duration, 2),
    terminationGracePeriod: opt(duration, 3),
    nodeClassRef: fc.oneof(
      { weight: 15, arbitrary: fc.constant({ group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' }) },
      {
        weight: 1,
        arbitrary: fc.record({
          group: opt(pick('karpenter.k8s.aws', '', 'example.com')),
          kind: opt(pick('EC2NodeClass', '', 'Foo')),
          name: opt(pick('default', '', 'Bad_Name')),
        }),
      },
    ),
    requirements: fc.array(requirement, { maxLength: 3 }),
    consolidationPolicy: opt(pick('WhenEmpty', 'WhenEmptyOrUnderutilized', 'Balanced', 'Bogus'), 2),
    consolidateAfter: opt(duration, 2),
    budgets: opt(fc.array(budget, { maxLength: 2 }), 2),
    limits: opt(fc.dictionary(pick('cpu', 'memory', 'nvidia.com/gpu', 'nodes', 'pods'), quantity, { maxKeys: 2 }), 3),
    weight: opt(pick(0, 1, 50, 100, 101, -1), 3),
    replicas: opt(pick(0, 3), 12),
    unknown: opt(pick('spec', 'template', 'requirement'), 12),
  })
  .map((r) => {
    const spec: Obj = {
      template: {
        metadata: r.labels || r.annotations ? { labels: r.labels, annotations: r.annotations } : undefined,
        spec: {
          nodeClassRef: r.nodeClassRef,
          requirements: r.requirements,
          taints: r.taints,
          startupTaints: r.startupTaints,
          expireAfter: r.expireAfter,
          terminationGracePeriod: r.terminationGracePeriod,
        },
      },
      disruption:
        r.consolidationPolicy !== undefined || r.consolidateAfter !== undefined || r.budgets !== undefined
          ? { consolidationPolicy: r.consolidationPolicy, consolidateAfter: r.consolidateAfter, budgets: r.budgets }
          : undefined,
      limits: r.limits,
      weight: r.weight,
      replicas: r.replicas,
    };
    const o = clean({ apiVersion: 'karpenter.sh/v1', kind: 'NodePool', metadata: { name: 'differential' }, spec });
    if (r.unknown === 'spec') (o.spec as Obj).bogusField = 1;
    if (r.unknown === 'template') ((o.spec as Obj).template as Obj).specc = {};
    if (r.unknown === 'requirement') (((o.spec as Obj).template as Obj).spec as Obj).requirments = [];
    return o;
  });

const tags = pick<Record<string, string>>({ 'karpenter.sh/discovery': 'prod' }, {}, { '': 'x' }, { a: '*' }, { a: '' }, { team: 'blue', env: 'prod' });
const idTerm = (prefix: string) => pick(`${prefix}-0abc1234`, `${prefix}-0123456789abcdef0`, 'bad', `${prefix}-`, `${prefix.toUpperCase()}-0abc`);
const subnetTerm = fc.record({ tags: opt(tags, 1), id: opt(idTerm('subnet'), 1) });
const sgTerm = fc.record({ tags: opt(tags, 1), id: opt(idTerm('sg'), 2), name: opt(pick('prod-nodes', ''), 3) });
const amiTerm = fc.record({
  alias: opt(
    pick(
      'al2023@latest',
      'al2023@v20260101',
      'al2@latest',
      'bottlerocket@latest',
      'bottlerocket@v1.20.0',
      'windows2022@latest',
      'bogus',
      'al2023@',
      'AL2023@latest',
      'al2023@1.0',
    ),
    1,
  ),
  id: opt(idTerm('ami'), 3),
  name: opt(pick('my-ami-*', ''), 4),
  owner: opt(pick('self', 'amazon', '123456789012'), 5),
  tags: opt(tags, 4),
  ssmParameter: opt(pick('/aws/service/eks/x', ''), 8),
});
const crTerm = fc.record({
  id: opt(idTerm('cr'), 2),
  tags: opt(tags, 2),
  ownerID: opt(pick('123456789012', '12345'), 3),
  instanceMatchCriteria: opt(pick('open', 'targeted', 'bogus'), 3),
});

const kubelet = fc.record({
  maxPods: opt(pick(0, 1, 110, -1), 2),
  podsPerCore: opt(pick(0, 4, -1), 3),
  systemReserved: opt(pick<Obj>({ cpu: '100m', memory: '100Mi' }, { bogus: '1' }, { cpu: 'x' }, { pid: '100' }), 3),
  kubeReserved: opt(pick<Obj>({ cpu: '200m', 'ephemeral-storage': '1Gi' }, { gpu: '1' }), 4),
  evictionHard: opt(pick<Obj>({ 'memory.available': '5%' }, { 'memory.available': '100Mi' }, { bogus: '1' }, { 'nodefs.available': '101%' }), 3),
  evictionSoft: opt(pick<Obj>({ 'memory.available': '10%' }, { 'imagefs.available': 'x' }), 4),
  evictionSoftGracePeriod: opt(pick<Obj>({ 'memory.available': '1m' }, { 'memory.available': 'x' }), 4),
  evictionMaxPodGracePeriod: opt(pick(60, -1), 5),
  imageGCHighThresholdPercent: opt(pick(85, 101, 10), 3),
  imageGCLowThresholdPercent: opt(pick(80, 90, -1), 3),
  cpuCFSQuota: opt(fc.boolean(), 5),
  clusterDNS: opt(pick(['10.100.0.10'], ['bad'], []), 4),
});

const blockDevice = fc.record({
  deviceName: pick('/dev/xvda', '/dev/xvdb', ''),
  rootVolume: opt(fc.boolean(), 2),
  ebs: opt(
    fc.record({
      volumeSize: opt(pick<unknown>('20Gi', '100G', 'abc', '100000Gi', '0', 20), 1),
      volumeType: opt(pick('gp3', 'gp2', 'io2', 'bogus'), 1),
      iops: opt(pick(3000, 100, 100000), 3),
      throughput: opt(pick(125, 2000), 3),
      encrypted: opt(fc.boolean(), 2),
      deleteOnTermination: opt(fc.boolean(), 3),
      snapshotID: opt(pick('snap-0abc', 'bad'), 5),
    }),
    1,
  ),
});

export const nodeClass: fc.Arbitrary<Obj> = fc
  .record({
    amiFamily: opt(pick('AL2023', 'AL2', 'Bottlerocket', 'Windows2022', 'Custom', 'Bogus'), 2),
    amiSelectorTerms: opt(fc.array(amiTerm, { maxLength: 2 }), 2),
    subnetSelectorTerms: opt(fc.array(subnetTerm, { maxLength: 2 }), 8),
    securityGroupSelectorTerms: opt(fc.array(sgTerm, { maxLength: 2 }), 8),
    capacityReservationSelectorTerms: opt(fc.array(crTerm, { maxLength: 2 }), 3),
    identity: mix(pick<'role' | 'profile' | 'both' | 'none'>('role', 'role', 'profile'), pick<'role' | 'profile' | 'both' | 'none'>('both', 'none'), 8),
    kubelet: opt(kubelet, 2),
    blockDeviceMappings: opt(fc.array(blockDevice, { maxLength: 2 }), 2),
    metadataOptions: opt(
      fc.record({
        httpEndpoint: opt(pick('enabled', 'disabled', 'bogus'), 2),
        httpProtocolIPv6: opt(pick('enabled', 'disabled'), 3),
        httpPutResponseHopLimit: opt(pick(1, 2, 64, 65, 0), 2),
        httpTokens: opt(pick('required', 'optional', 'bogus'), 2),
      }),
      3,
    ),
    tags: opt(
      pick<Obj>(
        { team: 'blue' },
        { 'kubernetes.io/cluster/prod': 'owned' },
        { 'karpenter.sh/nodepool': 'x' },
        { 'karpenter.sh/nodeclaim': 'x' },
        { 'eks:eks-cluster-name': 'x' },
        { 'karpenter.k8s.aws/ec2nodeclass': 'x' },
        { Name: 'x' },
      ),
      3,
    ),
    userData: opt(pick('#!/bin/bash\necho hi\n', ''), 4),
    associatePublicIPAddress: opt(fc.boolean(), 5),
    detailedMonitoring: opt(fc.boolean(), 5),
    instanceStorePolicy: opt(pick('RAID0', 'bogus'), 5),
    unknown: opt(pick('spec', 'kubelet'), 12),
  })
  .map((r) => {
    const spec: Obj = {
      amiFamily: r.amiFamily,
      amiSelectorTerms: r.amiSelectorTerms ?? [{ alias: 'al2023@latest' }],
      subnetSelectorTerms: r.subnetSelectorTerms ?? [{ tags: { 'karpenter.sh/discovery': 'prod' } }],
      securityGroupSelectorTerms: r.securityGroupSelectorTerms ?? [{ tags: { 'karpenter.sh/discovery': 'prod' } }],
      capacityReservationSelectorTerms: r.capacityReservationSelectorTerms,
      role: r.identity === 'role' || r.identity === 'both' ? 'KarpenterNodeRole-prod' : undefined,
      instanceProfile: r.identity === 'profile' || r.identity === 'both' ? 'KarpenterNodeInstanceProfile-prod' : undefined,
      kubelet: r.kubelet,
      blockDeviceMappings: r.blockDeviceMappings,
      metadataOptions: r.metadataOptions,
      tags: r.tags,
      userData: r.userData,
      associatePublicIPAddress: r.associatePublicIPAddress,
      detailedMonitoring: r.detailedMonitoring,
      instanceStorePolicy: r.instanceStorePolicy,
    };
    const o = clean({ apiVersion: 'karpenter.k8s.aws/v1', kind: 'EC2NodeClass', metadata: { name: 'differential' }, spec });
    if (r.unknown === 'spec') (o.spec as Obj).bogusField = 1;
    if (r.unknown === 'kubelet') (o.spec as Obj).kubelet = { ...((o.spec as Obj).kubelet as Obj), maxPodz: 1 };
    return o;
  });

/** `count` manifests from `seed`: NodePools and EC2NodeClasses alternately. */
export function manifests(seed: number, count: number): Obj[] {
  const pools = fc.sample(nodePool, { seed, numRuns: Math.ceil(count / 2) });
  const classes = fc.sample(nodeClass, { seed: seed + 1, numRuns: Math.floor(count / 2) });
  const out: Obj[] = [];
  for (let i = 0; i < count; i++) out.push(i % 2 === 0 ? pools[i / 2] : classes[(i - 1) / 2]);
  return out;
}
