/**
 * `plan --account FILE`: the EC2NodeClasses resolved against the account's `aws ec2 describe-*`
 * output with the production resolver, so the plan is what a launch would do — claims only in the
 * zones the subnets cover, zone ids from the subnets, the subnet per zone with the most free IPs.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { runCli } from '../../../functions/cli/program.ts';

async function capture(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const o = vi.spyOn(process.stdout, 'write').mockImplementation((s: string | Uint8Array) => ((out += String(s)), true));
  const e = vi.spyOn(process.stderr, 'write').mockImplementation((s: string | Uint8Array) => ((err += String(s)), true));
  try {
    return { code: await runCli(['node', 'nodefleet', ...args], {}), out, err };
  } finally {
    o.mockRestore();
    e.mockRestore();
  }
}

const dir = mkdtempSync(join(tmpdir(), 'nodefleet-plan-account-'));
const file = (name: string, text: string) => (writeFileSync(join(dir, name), text), join(dir, name));

const np = file(
  'np.yaml',
  `apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements: [{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}]
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: default}
spec:
  role: KarpenterNodeRole
  amiSelectorTerms: [{alias: al2023@latest}]
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
`,
);
const spread = file(
  'spread.yaml',
  `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 6
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      topologySpreadConstraints: [{maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: web}}}]
      containers: [{name: c, image: i, resources: {requests: {cpu: "1", memory: 2Gi}}}]
`,
);
const tag = '[{"Key": "karpenter.sh/discovery", "Value": "demo"}]';
// This account pairs us-east-1a with use1-az1 (the shipped example pairing says use1-az4).
const subnets = `{"Subnets": [
  {"SubnetId": "subnet-0a1", "AvailabilityZone": "us-east-1a", "AvailabilityZoneId": "use1-az1", "AvailableIpAddressCount": 100, "OwnerId": "111122223333", "Tags": ${tag}},
  {"SubnetId": "subnet-0a2", "AvailabilityZone": "us-east-1a", "AvailabilityZoneId": "use1-az1", "AvailableIpAddressCount": 3000, "OwnerId": "111122223333", "Tags": ${tag}},
  {"SubnetId": "subnet-0b1", "AvailabilityZone": "us-east-1b", "AvailabilityZoneId": "use1-az2", "AvailableIpAddressCount": 500, "OwnerId": "111122223333", "Tags": ${tag}},
  {"SubnetId": "subnet-0c1", "AvailabilityZone": "us-east-1c", "AvailabilityZoneId": "use1-az3", "AvailableIpAddressCount": 900, "OwnerId": "111122223333", "Tags": [{"Key": "team", "Value": "other"}]}
]}`;
const groups = `{"SecurityGroups": [{"GroupId": "sg-0nodes", "GroupName": "nodes", "OwnerId": "111122223333", "Tags": ${tag}}]}`;
const ssm = (arch: string, variant: string) => `/aws/service/eks/optimized-ami/1.32/amazon-linux-2023/${arch}/${variant}/recommended/image_id`;
// aws ssm get-parameters for the AMIs of al2023@latest (every variant EKS publishes).
const parameters = `{"Parameters": [
  {"Name": "${ssm('x86_64', 'standard')}", "Value": "ami-0x86"},
  {"Name": "${ssm('x86_64', 'nvidia')}", "Value": "ami-0x86nvidia"},
  {"Name": "${ssm('x86_64', 'neuron')}", "Value": "ami-0x86neuron"},
  {"Name": "${ssm('arm64', 'standard')}", "Value": "ami-0arm"},
  {"Name": "${ssm('arm64', 'nvidia')}", "Value": "ami-0armnvidia"}
]}`;
// The output of three commands appended in one file.
const account = file('account.json', `${subnets}\n${groups}\n${parameters}\n`);

type Claim = {
  zones: string[];
  launchRequest: { LaunchTemplateConfigs: { Overrides: { SubnetId: string; AvailabilityZone: string; ImageId: string }[] }[] };
  launchTemplates: { LaunchTemplateData: { SecurityGroupIds: string[] } }[];
};

describe('plan --account', () => {
  it('claims only in the zones the selected subnets cover (without it: every zone of the region)', async () => {
    const r = await capture(['plan', '--nodepools', np, '--pods', spread, '--account', account, '-o', 'json', '--launch-requests']);
    expect(r.code).toBe(0);
    const claims = (JSON.parse(r.out) as { nodeClaims: Claim[] }).nodeClaims;
    expect(claims.map((c) => c.zones).sort()).toEqual([['us-east-1a'], ['us-east-1b']]);
    expect(r.err).toBe('');
    const without = await capture(['plan', '--nodepools', np, '--pods', spread, '--launch-requests']);
    expect(new Set((JSON.parse(without.out) as { nodeClaims: Claim[] }).nodeClaims.flatMap((c) => c.zones)).size).toBe(6);
    expect(without.err).toBe(
      'no --account: subnets, security groups and AMIs are placeholders (every zone of us-east-1 assumed, zone ids as in the shipped catalog)\n',
    );
  });

  it('the launch requests name the account’s ids: per zone the subnet with the most free IPs, its security groups, the AMIs of its parameters', async () => {
    const r = await capture(['plan', '--nodepools', np, '--pods', spread, '--account', account, '--launch-requests']);
    const claims = (JSON.parse(r.out) as { nodeClaims: Claim[] }).nodeClaims;
    const overrides = claims.flatMap((c) => c.launchRequest.LaunchTemplateConfigs[0].Overrides);
    expect(Object.fromEntries(overrides.map((o) => [o.AvailabilityZone, o.SubnetId]))).toEqual({ 'us-east-1a': 'subnet-0a2', 'us-east-1b': 'subnet-0b1' });
    expect(new Set(overrides.map((o) => o.ImageId))).toEqual(new Set(['ami-0x86', 'ami-0arm']));
    expect(claims[0].launchTemplates[0].LaunchTemplateData.SecurityGroupIds).toEqual(['sg-0nodes']);
  });

  it('a topology.k8s.aws/zone-id requirement restricts placement, by the account’s zone ids', async () => {
    const pods = file(
      'zone-id.yaml',
      `apiVersion: v1
kind: Pod
metadata: {name: pinned, namespace: default}
spec:
  nodeSelector: {topology.k8s.aws/zone-id: use1-az1}
  containers: [{name: c, image: i, resources: {requests: {cpu: "1", memory: 2Gi}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: uncovered, namespace: default}
spec:
  nodeSelector: {topology.k8s.aws/zone-id: use1-az3}
  containers: [{name: c, image: i, resources: {requests: {cpu: "1", memory: 2Gi}}}]
`,
    );
    const r = JSON.parse((await capture(['plan', '--nodepools', np, '--pods', pods, '--account', account, '--launch-requests'])).out) as {
      nodeClaims: (Claim & { pods: string[] })[];
      unschedulable: { pod: string }[];
    };
    expect(r.nodeClaims.map((c) => [c.pods, c.zones])).toEqual([[['default/pinned'], ['us-east-1a']]]);
    expect(r.unschedulable.map((u) => u.pod)).toEqual(['default/uncovered']);
    // Without the account, use1-az1 is us-east-1c in the shipped example pairing.
    const offline = JSON.parse((await capture(['plan', '--nodepools', np, '--pods', pods, '--launch-requests'])).out) as {
      nodeClaims: (Claim & { pods: string[] })[];
    };
    expect(offline.nodeClaims.find((c) => c.pods.includes('default/pinned'))?.zones).toEqual(['us-east-1c']);
  });

  it('several files, the parts they lack said as placeholders; a class whose terms select no subnet launches nothing', async () => {
    const r = await capture(['plan', '--nodepools', np, '--pods', spread, '--account', file('subnets.json', subnets), '-o', 'json']);
    expect(r.code).toBe(0);
    expect(r.err).toBe(
      `${join(dir, 'subnets.json')}: placeholders for AMIs of aliases (the files hold no such public SSM parameter: aws ssm get-parameters --names …); security groups (the files hold no SecurityGroups)\n`,
    );
    const two = await capture([
      'plan',
      '--nodepools',
      np,
      '--pods',
      spread,
      '--account',
      join(dir, 'subnets.json'),
      '--account',
      file('groups.json', `[${groups}, ${parameters}]`),
    ]);
    expect(two.err).toBe('');
    const elsewhere = file('elsewhere.json', subnets.replaceAll('karpenter.sh/discovery', 'team'));
    const none = await capture(['plan', '--nodepools', np, '--pods', spread, '--account', elsewhere, '--account', join(dir, 'groups.json')]);
    expect(none.code).toBe(0);
    expect(none.err.split('\n')[0]).toBe(
      `${elsewhere}, ${join(dir, 'groups.json')}: EC2NodeClass/default: subnetSelectorTerms match no subnet (nodefleet launches nothing from this class)`,
    );
    expect(none.out).toContain('No new NodeClaims.');
    expect(none.out).toContain('unschedulable default/web-0: default: ec2nodeclass default is not ready: subnetSelectorTerms match no subnet');
  });
});
