/**
 * IAM simulation over the synthesized template: each function's role policies (resolved to one
 * account and region) are evaluated by an independent implementation of AWS policy semantics
 * (@cloud-copilot/iam-simulate, infra/local/iam/evaluate.ts) against the authorization requests
 * of the calls the real code makes (infra/local/iam/aws-requests.ts), built from the inputs the
 * real adapters send (recorded with aws-sdk-client-mock). Every call a function makes must be
 * Allowed; the must-never list must be Denied.
 */
import { App } from 'aws-cdk-lib';
import { mockClient } from 'aws-sdk-client-mock';
import { CreateFleetCommand, CreateLaunchTemplateCommand, DescribeLaunchTemplatesCommand, EC2Client } from '@aws-sdk/client-ec2';
import { beforeAll, describe, expect, it } from 'vitest';
import { RepoRoot } from '../../../infra/aws/app.ts';
import { readConfig } from '../../../infra/aws/config.ts';
import { InlineCodeContextKey, NodefleetStack } from '../../../infra/aws/nodefleet-stack.ts';
import { Ec2CloudProvider, catalogArchitecture } from '../../../shared/aws/ec2.ts';
import { StaticNodeClassResolver } from '../../../shared/aws/node-class-resolver.ts';
import { evaluateAll, type IamRequest, type PolicyDocument, type Verdict } from '../../../infra/local/iam/evaluate.ts';
import { authorizationRequests, tagSpecifications, type RequestContext } from '../../../infra/local/iam/aws-requests.ts';
import { nodeClaim } from '../../fakes/index.ts';
import { nodeClass } from '../provisioner/world.ts';
import { arnOf, logicalIdOf, rolePolicies, type Deployment } from './iam-template.ts';

const Cluster = 'sim-cluster';
const D: Deployment = { partition: 'aws', region: 'ap-northeast-2', account: '111122223333' };
const BuildTimeoutMs = 240_000;

type Resources = Record<string, { Type: string; Properties?: any }>;

let resources: Resources;
let policies: Map<string, PolicyDocument[]>;
let nodeRoleArn: string;
let instanceProfileName: string;

/** A function's role ARN and resolved policies (role logical id `<Name>Role<hash>`). */
function roleOf(functionId: string): { arn: string; docs: PolicyDocument[] } {
  const id = logicalIdOf(resources, 'AWS::IAM::Role', `${functionId}Role`);
  return { arn: arnOf(resources, id, D), docs: policies.get(id) ?? [] };
}

async function verdicts(functionId: string, requests: IamRequest[]): Promise<Verdict[]> {
  const role = roleOf(functionId);
  return evaluateAll(role.arn, role.docs, requests);
}

/** `action resource → decision` lines of the denied ones (readable failures). */
function denied(vs: Verdict[]): string[] {
  return vs.filter((v) => v.decision !== 'Allowed').map((v) => `${v.request.action} ${v.request.resource} ${JSON.stringify(v.request.context)} → ${v.decision}`);
}

const ec2Ctx = (extra: Partial<RequestContext> = {}): RequestContext => ({ partition: D.partition, region: D.region, account: D.account, ...extra });

/** The requests one real launch sends (CreateLaunchTemplate + CreateFleet), recorded from Ec2CloudProvider.create. */
async function launch(capacityType: 'spot' | 'on-demand'): Promise<{ launchTemplate: any; createFleet: any }> {
  const ec2 = mockClient(EC2Client);
  try {
    ec2.on(DescribeLaunchTemplatesCommand).resolves({ LaunchTemplates: [] });
    ec2.on(CreateLaunchTemplateCommand).resolves({ LaunchTemplate: { LaunchTemplateId: 'lt-0123456789abcdef0' } });
    ec2.on(CreateFleetCommand).resolves({ Instances: [{ InstanceIds: ['i-0123456789abcdef0'], InstanceType: 'm5.large', Lifecycle: capacityType === 'spot' ? 'spot' : 'on-demand', LaunchTemplateAndOverrides: { Overrides: { InstanceType: 'm5.large', AvailabilityZone: `${D.region}a`, SubnetId: 'subnet-0a' } } }] });
    const cloud = new Ec2CloudProvider({
      ec2: new EC2Client({ region: D.region }),
      resolver: new StaticNodeClassResolver({ subnets: [{ subnetId: 'subnet-0a', zone: `${D.region}a`, availableIpAddressCount: 100 }], securityGroupIds: ['sg-0a'], images: { amd64: 'ami-0amd64', arm64: 'ami-0arm64' } }),
      cluster: { name: Cluster, endpoint: 'https://example.eks.amazonaws.com', certificateAuthority: 'Q0E=', serviceCidr: '10.100.0.0/16', kubernetesVersion: '1.32' },
      instanceProfileName,
      architectureOf: catalogArchitecture,
    });
    const claim = nodeClaim({ name: 'default-abcde', cluster: Cluster, nodePool: 'default', phase: 'Pending', labels: { 'karpenter.sh/nodepool': 'default' } } as any);
    await cloud.create(claim, { instanceTypes: ['m5.large'], zones: [`${D.region}a`], capacityTypes: [capacityType] }, nodeClass());
    return {
      launchTemplate: ec2.commandCalls(CreateLaunchTemplateCommand)[0].args[0].input,
      createFleet: ec2.commandCalls(CreateFleetCommand)[0].args[0].input,
    };
  } finally {
    ec2.restore();
  }
}

/** Authorization requests of a recorded launch, with EC2 knowing the launch template it created. */
function launchRequests(l: { launchTemplate: any; createFleet: any }): IamRequest[] {
  const stored = { id: 'lt-0123456789abcdef0', tags: tagSpecifications(l.launchTemplate).get('launch-template') ?? {}, data: l.launchTemplate.LaunchTemplateData };
  const ctx = ec2Ctx({
    launchTemplate: (key) => (key === l.launchTemplate.LaunchTemplateName || key === stored.id ? stored : undefined),
    roleOfInstanceProfile: (p) => (p === instanceProfileName ? nodeRoleArn : undefined),
  });
  return [...authorizationRequests('ec2:CreateLaunchTemplate', l.launchTemplate, ctx), ...authorizationRequests('ec2:CreateFleet', l.createFleet, ctx)];
}

/** Tags of an instance nodefleet launched for NodePool `default` (what CreateFleet tagged it with). */
async function launchedInstanceTags(): Promise<Record<string, string>> {
  const l = await launch('on-demand');
  return tagSpecifications(l.createFleet).get('instance') ?? {};
}

describe('IAM simulation of the synthesized policies', { timeout: BuildTimeoutMs }, () => {
  beforeAll(() => {
    const app = new App({ context: { clusterName: Cluster, [InlineCodeContextKey]: true } });
    const stack = new NodefleetStack(app, 'Sim', { config: readConfig(app.node), repoRoot: RepoRoot });
    const template = app.synth().getStackByName(stack.stackName).template as { Resources: Resources };
    resources = template.Resources;
    policies = rolePolicies(template, D);
    nodeRoleArn = arnOf(resources, logicalIdOf(resources, 'AWS::IAM::Role', 'NodeRole'), D);
    instanceProfileName = resources[logicalIdOf(resources, 'AWS::IAM::InstanceProfile', 'NodeInstanceProfile')].Properties.InstanceProfileName;
  }, BuildTimeoutMs);

  describe('launches (provisioner and disruption)', () => {
    for (const fn of ['Provisioner', 'Disruption']) {
      it(`${fn}: an on-demand launch is allowed (CreateLaunchTemplate, CreateFleet, RunInstances, CreateTags, PassRole)`, async () => {
        const reqs = launchRequests(await launch('on-demand'));
        expect(reqs.map((r) => r.action)).toEqual(expect.arrayContaining(['ec2:CreateLaunchTemplate', 'ec2:CreateFleet', 'ec2:RunInstances', 'ec2:CreateTags', 'iam:PassRole']));
        expect(denied(await verdicts(fn, reqs))).toEqual([]);
      });
      // Issue 14: the spot-instances-request a spot launch creates must carry the cluster tags (the spot launch template tags it).
      it(`${fn}: a spot launch is allowed, including the spot-instances-request it creates`, async () => {
        const reqs = launchRequests(await launch('spot'));
        expect(reqs.some((r) => r.resource.includes(':spot-instances-request/'))).toBe(true);
        expect(denied(await verdicts(fn, reqs))).toEqual([]);
      });
    }
  });

  describe('terminations (gc and the termination TerminateInstance task)', () => {
    for (const fn of ['Gc', 'TerminationTerminateInstance']) {
      it(`${fn}: terminating an instance of this cluster and NodePool is allowed`, async () => {
        const tags = await launchedInstanceTags();
        const reqs = authorizationRequests('ec2:TerminateInstances', { InstanceIds: ['i-0123456789abcdef0'] }, ec2Ctx({ tagsOf: () => tags }));
        expect(denied(await verdicts(fn, reqs))).toEqual([]);
      });
      it(`${fn}: terminating an instance of another cluster is denied`, async () => {
        const tags = await launchedInstanceTags();
        const other = Object.fromEntries(Object.entries(tags).filter(([k]) => !k.includes(Cluster)).map(([k, v]) => [k, v === Cluster ? 'other' : v]));
        other['kubernetes.io/cluster/other'] = 'owned';
        const reqs = authorizationRequests('ec2:TerminateInstances', { InstanceIds: ['i-0ffffffffffffffff'] }, ec2Ctx({ tagsOf: () => other }));
        expect((await verdicts(fn, reqs)).map((v) => v.decision)).toEqual(['ImplicitlyDenied']);
      });
    }
  });

  describe('must never', () => {
    it('no function may launch without the cluster tags', async () => {
      const l = await launch('on-demand');
      for (const s of l.createFleet.TagSpecifications) s.Tags = s.Tags.filter((t: any) => !String(t.Key).startsWith('kubernetes.io/cluster/'));
      const instance = launchRequests(l).filter((r) => r.resource.endsWith(':instance/*') && r.action === 'ec2:RunInstances');
      expect(instance).toHaveLength(1);
      for (const fn of ['Provisioner', 'Disruption']) expect((await verdicts(fn, instance)).map((v) => v.decision)).toEqual(['ImplicitlyDenied']);
    });
    it('no function may pass another role', async () => {
      const other = `arn:aws:iam::${D.account}:role/admin`;
      for (const fn of ['Provisioner', 'Disruption']) {
        const v = await verdicts(fn, [{ action: 'iam:PassRole', resource: other, context: { 'iam:PassedToService': 'ec2.amazonaws.com' } }]);
        expect(v[0].decision).toBe('ImplicitlyDenied');
      }
    });
  });
});
