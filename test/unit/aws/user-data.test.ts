/**
 * The user data nodefleet sends, read back as the node reads it (test/unit/aws/nodeadm-reader.ts:
 * MIME parts → YAML NodeConfig), never compared as text.
 */
import { describe, expect, it } from 'vitest';
import { buildLaunchRequests, catalogArchitecture } from '../../../shared/aws/ec2.ts';
import { KubeletSchema, type KubeletConfiguration } from '../../../shared/api/nodepool.ts';
import { ValidationError } from '../../../shared/api/errors.ts';
import { nodeClaim } from '../../fakes/index.ts';
import { nodeClass } from '../provisioner/world.ts';
import { readLaunchTemplateUserData, unreadNodeConfigKeys } from './nodeadm-reader.ts';

const cluster = {
  name: 'karpenter-demo',
  endpoint: 'https://ABC.gr7.ap-northeast-2.eks.amazonaws.com',
  certificateAuthority: 'Q0E=',
  serviceCidr: '10.100.0.0/16',
  kubernetesVersion: '1.32',
};
const resolved = {
  subnets: [{ subnetId: 'subnet-a', zone: 'ap-northeast-2a', availableIpAddressCount: 100 }],
  securityGroupIds: ['sg-1'],
  images: { amd64: 'ami-0amd64', arm64: 'ami-0arm64' },
};
const ctx = { cluster, architectureOf: catalogArchitecture };
const claim = () =>
  nodeClaim({
    name: 'default-9hnrc',
    cluster: 'karpenter-demo',
    phase: 'Pending',
    labels: { 'karpenter.sh/nodepool': 'default', team: 'a', 'kubernetes.io/arch': 'amd64' },
    taints: [{ key: 'example.com/dedicated', value: 'gpu', effect: 'NoSchedule' }],
    startupTaints: [{ key: 'cni/not-ready', effect: 'NoSchedule' }],
  });

/** A value for every field of the EC2NodeClass kubelet block (KubeletConfiguration names). */
const everyKubeletField: Required<KubeletConfiguration> = {
  clusterDNS: ['10.100.0.10', '169.254.20.10'],
  maxPods: 200,
  podsPerCore: 4,
  systemReserved: { cpu: '100m', memory: '100Mi', 'ephemeral-storage': '1Gi' },
  kubeReserved: { cpu: '200m', memory: '1', 'ephemeral-storage': '3Gi' },
  evictionHard: { 'memory.available': '5%', 'nodefs.available': '10%' },
  evictionSoft: { 'memory.available': '500Mi', 'nodefs.available': '15%' },
  evictionSoftGracePeriod: { 'memory.available': '1m', 'nodefs.available': '1m30s' },
  evictionMaxPodGracePeriod: 60,
  imageGCHighThresholdPercent: 85,
  imageGCLowThresholdPercent: 80,
  cpuCFSQuota: false,
};

function sentUserData(kubelet?: KubeletConfiguration, userData?: string) {
  const nc = nodeClass();
  if (kubelet) nc.spec.kubelet = kubelet;
  if (userData !== undefined) nc.spec.userData = userData;
  const r = buildLaunchRequests(claim(), { instanceTypes: ['c5a.2xlarge'], zones: ['ap-northeast-2a'], capacityTypes: ['on-demand'] }, nc, resolved, ctx);
  return readLaunchTemplateUserData(r.launchTemplates[0].LaunchTemplateData!.UserData!);
}

describe('AL2023 user data, parsed as nodeadm reads it', () => {
  it('the fixture sets every kubelet field the EC2NodeClass schema has', () => {
    expect(Object.keys(everyKubeletField).sort()).toEqual(Object.keys(KubeletSchema.shape).sort());
  });

  it('every EC2NodeClass kubelet field lands in spec.kubelet.config under its KubeletConfiguration name; labels and taints are flags', () => {
    const { parts, nodeConfigs } = sentUserData(everyKubeletField);
    expect(parts.map((p) => p.headers['content-type'])).toEqual(['application/node.eks.aws']);
    const [config] = nodeConfigs;
    expect(unreadNodeConfigKeys(config)).toEqual([]);
    expect(config.apiVersion).toBe('node.eks.aws/v1alpha1');
    expect(config.kind).toBe('NodeConfig');
    expect(config.spec?.cluster).toEqual({ name: 'karpenter-demo', apiServerEndpoint: cluster.endpoint, certificateAuthority: 'Q0E=', cidr: '10.100.0.0/16' });
    const kubeletConfig = config.spec?.kubelet?.config ?? {};
    for (const [field, value] of Object.entries(everyKubeletField)) expect({ field, value: kubeletConfig[field] }).toEqual({ field, value });
    expect(Object.keys(kubeletConfig).sort()).toEqual(Object.keys(everyKubeletField).sort());
    const flags = config.spec?.kubelet?.flags ?? [];
    const flag = (name: string) =>
      flags
        .find((f) => f.startsWith(`${name}=`))
        ?.slice(name.length + 1)
        .split(',');
    // kubernetes.io/arch is the kubelet's own (left out, as KA RejectForbiddenLabels); the capacity type and do-not-sync-taints as Karpenter adds them.
    expect(flag('--node-labels')).toEqual([
      'karpenter.sh/capacity-type=on-demand',
      'karpenter.sh/do-not-sync-taints=true',
      'karpenter.sh/nodepool=default',
      'team=a',
    ]);
    expect(flag('--register-with-taints')?.sort()).toEqual([
      'cni/not-ready:NoSchedule',
      'example.com/dedicated=gpu:NoSchedule',
      'karpenter.sh/unregistered:NoExecute',
    ]);
  });

  it('no kubelet block: no kubelet config (nodeadm keeps its defaults, maxPods from the ENI limits)', () => {
    const [config] = sentUserData().nodeConfigs;
    expect(unreadNodeConfigKeys(config)).toEqual([]);
    expect(config.spec?.kubelet?.config ?? {}).toEqual({});
  });
});

describe('AL2023 spec.userData, merged part by part', () => {
  const userMime = [
    'MIME-Version: 1.0',
    'Content-Type: multipart/mixed; boundary="USER-BOUNDARY"',
    '',
    '--USER-BOUNDARY',
    'Content-Type: application/node.eks.aws',
    '',
    'apiVersion: node.eks.aws/v1alpha1',
    'kind: NodeConfig',
    'spec:',
    '  kubelet:',
    '    config:',
    '      shutdownGracePeriod: 30s',
    '--USER-BOUNDARY',
    'Content-Type: text/x-shellscript; charset="us-ascii"',
    '',
    '#!/bin/bash',
    'echo "--//" > /etc/marker',
    '--USER-BOUNDARY--',
    '',
  ].join('\n');

  it("a MIME multi-part document keeps the user's parts, in order, with nodefleet's NodeConfig after them", () => {
    const { parts, nodeConfigs } = sentUserData({ maxPods: 42 }, userMime);
    expect(parts.map((p) => p.headers['content-type'])).toEqual([
      'application/node.eks.aws',
      'text/x-shellscript; charset="us-ascii"',
      'application/node.eks.aws',
    ]);
    expect(parts[1].body).toBe('#!/bin/bash\necho "--//" > /etc/marker');
    expect(nodeConfigs).toHaveLength(2);
    for (const c of nodeConfigs) expect(unreadNodeConfigKeys(c)).toEqual([]);
    expect(nodeConfigs[0].spec?.kubelet?.config).toEqual({ shutdownGracePeriod: '30s' });
    expect(nodeConfigs[1].spec?.kubelet?.config).toEqual({ maxPods: 42 });
    expect(nodeConfigs[1].spec?.cluster?.name).toBe('karpenter-demo');
  });

  it('a shell script or a NodeConfig YAML becomes one part of its type', () => {
    const script = sentUserData(undefined, '#!/bin/bash\necho hi\n');
    expect(script.parts.map((p) => [p.headers['content-type'], p.body])).toEqual([
      ['text/x-shellscript; charset="us-ascii"', '#!/bin/bash\necho hi'],
      ['application/node.eks.aws', expect.any(String)],
    ]);
    const yaml = sentUserData(
      undefined,
      'apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  kubelet:\n    config:\n      shutdownGracePeriod: 30s\n',
    );
    expect(yaml.parts.map((p) => p.headers['content-type'])).toEqual(['application/node.eks.aws', 'application/node.eks.aws']);
    expect(yaml.nodeConfigs[0].spec?.kubelet?.config).toEqual({ shutdownGracePeriod: '30s' });
  });

  it('a MIME document that cannot be read is refused, naming the field and the reason', () => {
    const unclosed = userMime.replace('--USER-BOUNDARY--\n', '');
    expect(() => sentUserData(undefined, unclosed)).toThrow(ValidationError);
    expect(() => sentUserData(undefined, unclosed)).toThrow('spec.userData: MIME document is not closed: no "--USER-BOUNDARY--" line');
    expect(() => sentUserData(undefined, 'MIME-Version: 1.0\nContent-Type: text/plain\n\nhello\n')).toThrow(
      'spec.userData: MIME Content-Type "text/plain" is not multipart/*',
    );
  });
});

describe('honoured EC2NodeClass fields reach the node', () => {
  it('instanceStorePolicy RAID0: nodeadm assembles the instance store (spec.instance.localStorage.strategy)', () => {
    const nc = nodeClass();
    nc.spec.instanceStorePolicy = 'RAID0';
    const r = buildLaunchRequests(claim(), { instanceTypes: ['c5ad.2xlarge'], zones: ['ap-northeast-2a'], capacityTypes: ['on-demand'] }, nc, resolved, ctx);
    const [config] = readLaunchTemplateUserData(r.launchTemplates[0].LaunchTemplateData!.UserData!).nodeConfigs;
    expect(unreadNodeConfigKeys(config)).toEqual([]);
    expect(config.spec?.instance?.localStorage?.strategy).toBe('RAID0');
    expect(sentUserData().nodeConfigs[0].spec?.instance).toBeUndefined();
  });

  it('associatePublicIPAddress, instanceProfile, metadataOptions, detailedMonitoring and tags are sent in the launch template', () => {
    const nc = nodeClass();
    Object.assign(nc.spec, {
      role: undefined,
      instanceProfile: 'my-profile',
      associatePublicIPAddress: false,
      metadataOptions: { httpPutResponseHopLimit: 2, httpTokens: 'optional' },
      detailedMonitoring: true,
      tags: { team: 'blue' },
    });
    const r = buildLaunchRequests(claim(), { instanceTypes: ['c5a.2xlarge'], zones: ['ap-northeast-2a'], capacityTypes: ['on-demand'] }, nc, resolved, ctx);
    const data = r.launchTemplates[0].LaunchTemplateData!;
    expect(data.IamInstanceProfile).toEqual({ Name: 'my-profile' });
    expect(data.NetworkInterfaces).toEqual([{ DeviceIndex: 0, AssociatePublicIpAddress: false, Groups: ['sg-1'] }]);
    expect(data.SecurityGroupIds).toBeUndefined();
    expect(data.MetadataOptions).toEqual({ HttpEndpoint: 'enabled', HttpProtocolIpv6: 'disabled', HttpPutResponseHopLimit: 2, HttpTokens: 'optional' });
    expect(data.Monitoring).toEqual({ Enabled: true });
    for (const spec of [...r.createFleet.TagSpecifications!, ...data.TagSpecifications!, ...r.launchTemplates[0].TagSpecifications!])
      expect(spec.Tags).toContainEqual({ Key: 'team', Value: 'blue' });
  });

  it('blockDeviceMappings[].ebs.volumeInitializationRate is sent in the launch template', () => {
    const nc = nodeClass();
    nc.spec.blockDeviceMappings = [
      { deviceName: '/dev/xvda', rootVolume: true, ebs: { volumeSize: '40Gi', snapshotID: 'snap-0123456789abcdef0', volumeInitializationRate: 250 } },
    ];
    const r = buildLaunchRequests(claim(), { instanceTypes: ['c5a.2xlarge'], zones: ['ap-northeast-2a'], capacityTypes: ['on-demand'] }, nc, resolved, ctx);
    expect(r.launchTemplates[0].LaunchTemplateData!.BlockDeviceMappings).toEqual([
      { DeviceName: '/dev/xvda', Ebs: { VolumeSize: 40, SnapshotId: 'snap-0123456789abcdef0', VolumeInitializationRate: 250 } },
    ]);
  });
});
