/**
 * Karpenter's exact schema (karpenter.sh/v1 NodePool, karpenter.k8s.aws/v1 EC2NodeClass at
 * v1.14.1; docs/karpenter-schema.md): a NodePool and an EC2NodeClass setting every field the CRDs
 * define validate, and each CRD rule rejects what the API server rejects, with Karpenter's quirks.
 * The manifests are nodefleet's own, covering the fields of Karpenter's reference manifests.
 */
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { validateObject } from '../../../shared/api/validate.ts';

const fullNodePool = parse(`
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: everything}
spec:
  template:
    metadata:
      labels: {team: payments, karpenter.sh/capacity-type: spot}
      annotations: {example.com/owner: payments}
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: everything}
      taints: [{key: example.com/gpu, value: "true", effect: NoSchedule}]
      startupTaints: [{key: example.com/agent-not-ready, effect: NoExecute, timeAdded: "2026-01-01T00:00:00Z"}]
      expireAfter: 336h
      terminationGracePeriod: 48h
      requirements:
        - {key: karpenter.k8s.aws/instance-category, operator: In, values: [c, m, r], minValues: 2}
        - {key: karpenter.k8s.aws/instance-generation, operator: Gte, values: ["5"]}
        - {key: karpenter.k8s.aws/instance-cpu, operator: Lte, values: ["64"]}
        - {key: karpenter.k8s.aws/ec2nodeclass, operator: Exists}
        - {key: kubernetes.io/os, operator: NotIn, values: [windows]}
        - {key: topology.kubernetes.io/zone, operator: DoesNotExist}
  disruption:
    consolidationPolicy: Balanced
    consolidateAfter: 10m
    budgets:
      - {nodes: "20%", reasons: [Empty, Drifted]}
      - {nodes: "0", schedule: "@daily", duration: 10h0m0s}
      - {nodes: "3", schedule: "0 9 * * mon-fri", duration: 1h30m}
  limits: {cpu: "1000", memory: 4000Gi, nvidia.com/gpu: 8}
  weight: 50
`);

const fullNodeClass = parse(`
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: everything}
spec:
  amiFamily: AL2023
  amiSelectorTerms: [{alias: al2023@v20260101}]
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: prod}}, {id: subnet-0abc123}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: prod}}, {id: sg-0abc123}, {name: prod-nodes}]
  capacityReservationSelectorTerms: [{instanceMatchCriteria: open}, {tags: {team: payments}, ownerID: "123456789012"}, {id: cr-0abc123}]
  role: prod-node-role
  associatePublicIPAddress: false
  kubelet:
    clusterDNS: [10.100.0.10]
    maxPods: 110
    podsPerCore: 4
    systemReserved: {cpu: 100m, memory: 100Mi, ephemeral-storage: 1Gi, pid: "100"}
    kubeReserved: {cpu: 200m, memory: 200Mi}
    evictionHard: {memory.available: 5%, nodefs.available: 10%}
    evictionSoft: {memory.available: 500Mi}
    evictionSoftGracePeriod: {memory.available: 1m30s}
    evictionMaxPodGracePeriod: 60
    imageGCHighThresholdPercent: 85
    imageGCLowThresholdPercent: 80
    cpuCFSQuota: true
  blockDeviceMappings:
    - {deviceName: /dev/xvda, rootVolume: true, ebs: {volumeSize: 100Gi, volumeType: gp3, iops: 3000, throughput: 125, encrypted: true, kmsKeyID: alias/ebs, deleteOnTermination: true}}
    - {deviceName: /dev/xvdb, ebs: {snapshotID: snap-0abc, volumeInitializationRate: 200}}
  instanceStorePolicy: RAID0
  userData: "echo hello"
  tags: {team: payments}
  metadataOptions: {httpEndpoint: enabled, httpProtocolIPv6: disabled, httpPutResponseHopLimit: 2, httpTokens: required}
  detailedMonitoring: true
  context: cr-context
  ipPrefixCount: 2
  networkInterfaces: [{networkCardIndex: 0, deviceIndex: 0, interfaceType: interface}, {networkCardIndex: 1, deviceIndex: 0, interfaceType: efa-only}]
  placementGroupSelector: {name: prod-cluster-pg}
  connectionTracking: {tcpEstablishedTimeout: 3600, udpStreamTimeout: 120, udpTimeout: 30}
  cpuOptions: {nestedVirtualization: disabled}
`);

const withSpec = (spec: Record<string, unknown>) => ({ ...fullNodeClass, spec: { ...fullNodeClass.spec, ...spec } });
const without = (...keys: string[]) => ({ ...fullNodeClass, spec: Object.fromEntries(Object.entries(fullNodeClass.spec).filter(([k]) => !keys.includes(k))) });

describe('every field of the CRDs', () => {
  it('a NodePool setting every field is valid', () => expect(validateObject(fullNodePool)).toEqual([]));
  it('an EC2NodeClass setting every field is valid', () => expect(validateObject(fullNodeClass)).toEqual([]));
});

describe('EC2NodeClass rules, as the API server applies them', () => {
  it.each<[string, Record<string, unknown>, string[]]>([
    [
      'connectionTracking uses the *Timeout names',
      { connectionTracking: { tcpEstablished: 3600 } },
      [
        'spec.connectionTracking.tcpEstablished: unknown field "tcpEstablished" (Karpenter names it tcpEstablishedTimeout)',
        'spec.connectionTracking: set at least one of tcpEstablishedTimeout, udpStreamTimeout, udpTimeout',
      ],
    ],
    ['udpTimeout is 30–60 s', { connectionTracking: { udpTimeout: 61 } }, ['spec.connectionTracking.udpTimeout: must be at most 60, got 61']],
    ['a capacity reservation term of only instanceMatchCriteria is valid', { capacityReservationSelectorTerms: [{ instanceMatchCriteria: 'targeted' }] }, []],
    [
      "an empty capacityReservationSelectorTerms is rejected (Karpenter's !self.all rule)",
      { capacityReservationSelectorTerms: [] },
      ["spec.capacityReservationSelectorTerms: 'id' is mutually exclusive with tags, ownerID and instanceMatchCriteria (and the list may not be empty)"],
    ],
    ['role "" is rejected', { role: '' }, ['spec.role: must not be empty (the IAM role name of the nodes)']],
    [
      'an amiFamily contradicting the alias is rejected',
      { amiFamily: 'AL2' },
      ['spec.amiFamily: contradicts the amiSelectorTerms alias: leave amiFamily out, set it to the alias family (al2023@latest → AL2023), or to Custom'],
    ],
    ['amiFamily Custom goes with any alias', { amiFamily: 'Custom' }, []],
    [
      'placementGroupSelector takes name or id, not both',
      { placementGroupSelector: { name: 'pg', id: 'pg-0abc' } },
      ["spec.placementGroupSelector: 'name' and 'id' are mutually exclusive"],
    ],
    [
      'placementGroupSelector id pattern',
      { placementGroupSelector: { id: 'placement-1' } },
      ['spec.placementGroupSelector.id: "placement-1" must be a placement group id such as pg-0123456789abcdef0'],
    ],
    [
      'a subnet term with id and tags is rejected when it is the only term',
      { subnetSelectorTerms: [{ id: 'subnet-1', tags: { a: 'b' } }] },
      ["spec.subnetSelectorTerms: 'id' and 'tags' are mutually exclusive"],
    ],
    [
      "…but not when another term has only tags (Karpenter's !self.all rule)",
      { subnetSelectorTerms: [{ id: 'subnet-1', tags: { a: 'b' } }, { tags: { a: 'b' } }] },
      [],
    ],
    [
      'subnet terms take no alias',
      { subnetSelectorTerms: [{ alias: 'al2023@latest' }] },
      ['spec.subnetSelectorTerms[0].alias: unknown field "alias" (allowed fields: id, tags)', 'spec.subnetSelectorTerms: every term needs one of tags, id'],
    ],
    [
      'a primary network interface is required',
      { networkInterfaces: [{ networkCardIndex: 1, deviceIndex: 0, interfaceType: 'interface' }] },
      ['spec.networkInterfaces: needs a primary interface: networkCardIndex 0, deviceIndex 0, interfaceType interface'],
    ],
    [
      'volumeInitializationRate needs a snapshot',
      { blockDeviceMappings: [{ ebs: { volumeSize: '10Gi', volumeInitializationRate: 150 } }] },
      ['spec.blockDeviceMappings[0].ebs.snapshotID: required when volumeInitializationRate is set'],
    ],
    [
      'an ebs mapping needs a size or a snapshot',
      { blockDeviceMappings: [{ deviceName: '/dev/xvdb', ebs: { volumeType: 'gp3' } }] },
      ['spec.blockDeviceMappings[0].ebs: needs volumeSize or snapshotID'],
    ],
    [
      'volumeSize follows the CRD pattern',
      { blockDeviceMappings: [{ ebs: { volumeSize: '60000Gi' } }] },
      ['spec.blockDeviceMappings[0].ebs.volumeSize: "60000Gi" must be a size such as 20Gi or 100G (1–59000Gi, 1–64000G, 1–58Ti, 1–64T)'],
    ],
    [
      'evictionSoft without any grace period fails (CEL evaluation error rejects too)',
      { kubelet: { evictionSoft: { 'memory.available': '1Gi' } } },
      ['spec.kubelet.evictionSoftGracePeriod: every evictionSoft signal needs a grace period'],
    ],
    [
      'Windows aliases only at latest',
      { amiFamily: undefined, amiSelectorTerms: [{ alias: 'windows2022@v1' }] },
      ['spec.amiSelectorTerms[0].alias: Windows families only support the version latest (e.g. windows2022@latest)'],
    ],
    [
      'restricted tags',
      { tags: { 'kubernetes.io/cluster/prod': 'owned' } },
      ['spec.tags: tags starting with kubernetes.io/cluster are restricted (Karpenter sets them itself)'],
    ],
  ])('%s', (_name, spec, problems) => {
    expect(validateObject(withSpec(spec))).toEqual(problems);
  });

  it('exactly one of role and instanceProfile; an alias-less AMI selection needs amiFamily', () => {
    expect(validateObject(without('role'))).toEqual(["spec: must specify exactly one of ['role', 'instanceProfile']"]);
    expect(validateObject(withSpec({ instanceProfile: 'p' }))).toEqual(["spec: must specify exactly one of ['role', 'instanceProfile']"]);
    expect(validateObject(withSpec({ amiFamily: undefined, amiSelectorTerms: [{ id: 'ami-0abc' }] }))).toEqual([
      'spec.amiFamily: required when amiSelectorTerms does not use an alias (must specify amiFamily if amiSelectorTerms does not contain an alias)',
    ]);
    expect(validateObject(without('amiSelectorTerms'))).toEqual(['spec.amiSelectorTerms: required: which AMIs to use, e.g. - alias: al2023@latest']);
  });
});

describe('NodePool rules', () => {
  const pool = (patch: (p: any) => void) => {
    const p = structuredClone(fullNodePool);
    patch(p);
    return validateObject(p);
  };
  it('nodeClassRef.group has no version; budget durations follow the CRD pattern; reasons ≤ 50', () => {
    expect(pool((p) => (p.spec.template.spec.nodeClassRef.group = 'karpenter.k8s.aws/v1'))).toEqual([
      'spec.template.spec.nodeClassRef.group: "karpenter.k8s.aws/v1" must be an API group without a version, e.g. karpenter.k8s.aws',
    ]);
    expect(pool((p) => (p.spec.disruption.budgets[1].duration = '1h1h'))).toEqual([
      'spec.disruption.budgets[1].duration: "1h1h" must be a duration in h/m such as 8h, 30m or 1h30m',
    ]);
  });
  it('taint values are qualified names; karpenter.k8s.aws/ec2nodeclass is a well-known key', () => {
    expect(pool((p) => (p.spec.template.spec.taints[0].value = 'example.com/yes'))).toEqual([]);
    expect(pool((p) => (p.spec.template.spec.taints[0].value = 'not ok'))).toEqual([
      'spec.template.spec.taints[0].value: "not ok" is not a valid taint value ([prefix/]name: 1–63 characters of [A-Za-z0-9-_.], starting and ending alphanumeric)',
    ]);
  });
});
