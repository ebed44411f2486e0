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
import { TagNodefleetCluster } from '../../../shared/api/labels.ts';
import { IdempotencyActions } from '../../../shared/api/iam-policy.ts';
import { StaticNodeClassResolver } from '../../../shared/aws/node-class-resolver.ts';
import { evaluateAll, type IamRequest, type PolicyDocument, type Verdict } from '../../../infra/local/iam/evaluate.ts';
import { authorizationRequests, tagSpecifications, type RequestContext } from '../../../infra/local/iam/aws-requests.ts';
import { nodeClaim } from '../../fakes/index.ts';
import {
  AgentDetailTypes,
  AgentSource,
  DetailTypeSpotInterruption,
  DetailTypeUnschedulablePods,
  InterruptionRuleNames,
  Table,
  TerminationSource,
  clusterViewKey,
  keys,
} from '../../../shared/api/contract.ts';
import { nodeClass } from '../provisioner/world.ts';
import { arnOf, logicalIdOf, resolve, resourcePolicyOf, rolePolicies, type Deployment } from './iam-template.ts';
import { readdirSync, readFileSync } from 'node:fs';
import * as contract from '../../../shared/api/contract.ts';
import { join } from 'node:path';
import { AdapterCalls, AgentAwsCalls, FunctionAwsCalls, type AdapterCall } from '../../../shared/aws/calls.ts';
import { Functions } from '../../../infra/aws/functions.ts';
import { readTerminationDefinition, TerminationAslPath } from '../../../infra/aws/termination.ts';
import { InstanceId, LaunchTemplateId, record, type CallTargets, type RecordedCall } from './iam-calls.ts';
import { portCalls, sourceClosure } from './source-calls.ts';

const Cluster = 'sim-cluster';
const D: Deployment = { partition: 'aws', region: 'ap-northeast-2', account: '111122223333' };
const BuildTimeoutMs = 240_000;
/** The event each publishing function puts (publisher.publish), when not the agent's. */
const PublishedEvents: Partial<Record<string, CallTargets['event']>> = {
  terminationDrain: { source: TerminationSource, detailType: DetailTypeUnschedulablePods },
};

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
  return vs
    .filter((v) => v.decision !== 'Allowed')
    .map((v) => `${v.request.action} ${v.request.resource} ${JSON.stringify(v.request.context)} → ${v.decision}`);
}

const ec2Ctx = (extra: Partial<RequestContext> = {}): RequestContext => ({ partition: D.partition, region: D.region, account: D.account, ...extra });

/** The requests one real launch sends (CreateLaunchTemplate + CreateFleet), recorded from Ec2CloudProvider.create. */
async function launch(capacityType: 'spot' | 'on-demand'): Promise<{ launchTemplate: any; createFleet: any }> {
  const ec2 = mockClient(EC2Client);
  try {
    ec2.on(DescribeLaunchTemplatesCommand).resolves({ LaunchTemplates: [] });
    ec2.on(CreateLaunchTemplateCommand).resolves({ LaunchTemplate: { LaunchTemplateId: 'lt-0123456789abcdef0' } });
    ec2.on(CreateFleetCommand).resolves({
      Instances: [
        {
          InstanceIds: ['i-0123456789abcdef0'],
          InstanceType: 'm5.large',
          Lifecycle: capacityType === 'spot' ? 'spot' : 'on-demand',
          LaunchTemplateAndOverrides: { Overrides: { InstanceType: 'm5.large', AvailabilityZone: `${D.region}a`, SubnetId: 'subnet-0a' } },
        },
      ],
    });
    const cloud = new Ec2CloudProvider({
      ec2: new EC2Client({ region: D.region }),
      resolver: new StaticNodeClassResolver({
        subnets: [{ subnetId: 'subnet-0a', zone: `${D.region}a`, availableIpAddressCount: 100 }],
        securityGroupIds: ['sg-0a'],
        images: { amd64: 'ami-0amd64', arm64: 'ami-0arm64' },
      }),
      cluster: {
        name: Cluster,
        endpoint: 'https://example.eks.amazonaws.com',
        certificateAuthority: 'Q0E=',
        serviceCidr: '10.100.0.0/16',
        kubernetesVersion: '1.32',
      },
      instanceProfileName,
      architectureOf: catalogArchitecture,
    });
    const claim = nodeClaim({
      name: 'default-abcde',
      cluster: Cluster,
      nodePool: 'default',
      phase: 'Pending',
      labels: { 'karpenter.sh/nodepool': 'default' },
    } as any);
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
function launchRequests(l: { launchTemplate: any; createFleet: any }, extra: Partial<RequestContext> = {}): IamRequest[] {
  const stored = {
    id: 'lt-0123456789abcdef0',
    tags: tagSpecifications(l.launchTemplate).get('launch-template') ?? {},
    data: l.launchTemplate.LaunchTemplateData,
  };
  const ctx = ec2Ctx({
    ...extra,
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

/** Where the adapters run: the names and ARNs the synthesized stack gives them. */
function callTargets(): CallTargets {
  const profile = resources[logicalIdOf(resources, 'AWS::IAM::InstanceProfile', 'NodeInstanceProfile')].Properties.InstanceProfileName;
  return {
    region: D.region,
    clusterName: Cluster,
    tableName: resolve({ Ref: logicalIdOf(resources, 'AWS::DynamoDB::Table', 'Table') }, resources, D),
    stateMachineArn: arnOf(resources, logicalIdOf(resources, 'AWS::StepFunctions::StateMachine', 'Termination'), D),
    eventBusName: resolve({ Ref: logicalIdOf(resources, 'AWS::Events::EventBus', 'Bus') }, resources, D),
    instanceProfileName: profile,
    nodeRoleName: resources[logicalIdOf(resources, 'AWS::IAM::Role', 'NodeRole')].Properties.RoleName,
    viewBucket: resolve({ Ref: logicalIdOf(resources, 'AWS::S3::Bucket', 'ViewBucket') }, resources, D),
  };
}

/**
 * The authorization requests of a function's calls, each built from what the real adapter sent:
 * launches on-demand and spot; EC2 knows the launch template and instance a launch created.
 */
async function requestsOf(calls: readonly AdapterCall[], event?: CallTargets['event']): Promise<IamRequest[]> {
  const t = { ...callTargets(), ...(event ? { event } : {}) };
  const launches = [await launch('on-demand'), await launch('spot')];
  const lt = launches[0].launchTemplate;
  const stored = { id: LaunchTemplateId, tags: tagSpecifications(lt).get('launch-template') ?? {}, data: lt.LaunchTemplateData };
  const instanceTags = { ...(tagSpecifications(launches[0].createFleet).get('instance') ?? {}), 'aws:ec2launchtemplate:id': LaunchTemplateId };
  const out: IamRequest[] = [];
  for (const call of calls) {
    if (call === 'queue.consume') {
      const queue = arnOf(resources, logicalIdOf(resources, 'AWS::SQS::Queue', 'InterruptionQueue'), D);
      out.push(...AdapterCalls['queue.consume'].map((action) => ({ action, resource: queue, context: {} })));
      continue;
    }
    const recorded: RecordedCall[] = [];
    for (const capacityType of call === 'cloud.create' ? (['on-demand', 'spot'] as const) : [undefined])
      recorded.push(...(await record(call, { ...t, capacityType })));
    expect(recorded.length, `${call} sent nothing`).toBeGreaterThan(0);
    for (const r of recorded) {
      const ltNow =
        r.action === 'ec2:CreateFleet'
          ? launches.find(
              (l) => l.createFleet.TargetCapacitySpecification.DefaultTargetCapacityType === r.input.TargetCapacitySpecification.DefaultTargetCapacityType,
            )!.launchTemplate
          : lt;
      const ctx = ec2Ctx({
        tagsOf: (id) => (id === InstanceId ? instanceTags : undefined),
        launchTemplate: () => ({ ...stored, tags: tagSpecifications(ltNow).get('launch-template') ?? {}, data: ltNow.LaunchTemplateData }),
        roleOfInstanceProfile: (p) => (p === instanceProfileName ? nodeRoleArn : undefined),
      });
      out.push(...authorizationRequests(r.action, r.input, ctx));
    }
  }
  return out;
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
        expect(reqs.map((r) => r.action)).toEqual(
          expect.arrayContaining(['ec2:CreateLaunchTemplate', 'ec2:CreateFleet', 'ec2:RunInstances', 'ec2:CreateTags', 'iam:PassRole']),
        );
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

  describe('reserved launches (capacity reservations)', () => {
    /**
     * nodefleet does not launch into capacity reservations yet (README "Limits"): the reserved
     * launch is the real on-demand launch with what Karpenter's reserved launch templates add, a
     * CapacityReservationTarget (aws/karpenter-provider-aws pkg/providers/launchtemplate), so the
     * policy is ready for it. Own reservations and ones shared from another account (RAM).
     */
    const reserved = async (id: string) => {
      const l = await launch('on-demand');
      l.launchTemplate.LaunchTemplateData.CapacityReservationSpecification = { CapacityReservationTarget: { CapacityReservationId: id } };
      return l;
    };
    for (const fn of ['Provisioner', 'Disruption']) {
      it(`${fn}: a launch into this account's capacity reservation is allowed`, async () => {
        const reqs = launchRequests(await reserved('cr-0123456789abcdef0'));
        const cr = reqs.filter((r) => r.resource === `arn:aws:ec2:${D.region}:${D.account}:capacity-reservation/cr-0123456789abcdef0`);
        expect(cr.map((r) => r.action).sort()).toEqual(['ec2:CreateFleet', 'ec2:RunInstances']);
        expect(denied(await verdicts(fn, reqs))).toEqual([]);
      });
    }
    it('Provisioner: a launch into a capacity reservation shared from another account is allowed', async () => {
      const owner = '444455556666';
      const share = {
        Version: '2012-10-17',
        Statement: [
          { Effect: 'Allow' as const, Principal: { AWS: `arn:aws:iam::${D.account}:root` }, Action: ['ec2:RunInstances', 'ec2:CreateFleet'], Resource: '*' },
        ],
      };
      const reqs = launchRequests(await reserved('cr-0fedcba9876543210'), { ownerOf: (id) => (id.startsWith('cr-') ? owner : undefined) }).map((r) =>
        r.resource.includes(`:${owner}:`) ? { ...r, resourcePolicy: share as any } : r,
      );
      expect(reqs.some((r) => r.resource === `arn:aws:ec2:${D.region}:${owner}:capacity-reservation/cr-0fedcba9876543210`)).toBe(true);
      expect(denied(await verdicts('Provisioner', reqs))).toEqual([]);
    });
    it('no function but the launching ones may use a capacity reservation', async () => {
      const cr = launchRequests(await reserved('cr-0123456789abcdef0')).filter((r) => r.resource.includes(':capacity-reservation/'));
      for (const fn of ['Gc', 'Registration', 'Interruption', 'TerminationTerminateInstance']) {
        expect(
          (await verdicts(fn, cr)).map((v) => v.decision),
          fn,
        ).toEqual(cr.map(() => 'ImplicitlyDenied'));
      }
    });
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
        const other = Object.fromEntries(
          Object.entries(tags)
            .filter(([k]) => !k.includes(Cluster))
            .map(([k, v]) => [k, v === Cluster ? 'other' : v]),
        );
        other['kubernetes.io/cluster/other'] = 'owned';
        const reqs = authorizationRequests('ec2:TerminateInstances', { InstanceIds: ['i-0ffffffffffffffff'] }, ec2Ctx({ tagsOf: () => other }));
        expect((await verdicts(fn, reqs)).map((v) => v.decision)).toEqual(['ImplicitlyDenied']);
      });
    }
  });

  describe('every AWS call of every function (shared/aws/calls.ts FunctionAwsCalls)', () => {
    /** Every function: the registry's and the termination tasks (from the real ASL). */
    const all = [
      ...Functions.map((f) => ({ name: f.name, entry: f.entry, queue: f.trigger.kind === 'queue' })),
      ...readTerminationDefinition(RepoRoot, TerminationAslPath)!.tasks.map((t) => ({ name: `termination${t.name}`, entry: t.entry, queue: false })),
    ];

    it("each function's row is what its source calls (port methods, plus what they imply)", () => {
      // (Only methods the ports declare: a local `unavailable` Set or `budgets` array shares the name.)
      const portMethods = new Set([...readFileSync(join(RepoRoot, 'shared/api/ports.ts'), 'utf8').matchAll(/^\s+(\w+)\(/gm)].map((m) => m[1]));
      for (const f of all) {
        const scanned = portCalls(f.entry);
        // A call on an AWS-backed port with no AdapterCalls row would be silently unreviewed (budgets.renew was).
        const unlisted = scanned.filter((c) => !c.startsWith('kube.') && portMethods.has(c.split('.')[1]) && !(c in AdapterCalls));
        expect(unlisted, `${f.name} (${f.entry}): port calls with no row in shared/aws/calls.ts AdapterCalls`).toEqual([]);
        const derived = new Set<string>(scanned.filter((c) => c in AdapterCalls));
        if (scanned.some((c) => c.startsWith('kube.')) || derived.has('cloud.create')) derived.add('eks.connect');
        if (derived.has('cloud.create')) derived.add('resolver.resolve');
        if (sourceClosure(f.entry).some((file) => /\bidempotentOn\(/.test(readFileSync(join(RepoRoot, file), 'utf8')))) derived.add('idempotency');
        if (f.queue) derived.add('queue.consume');
        expect([...derived].sort(), `${f.name} (${f.entry})`).toEqual([...(FunctionAwsCalls[f.name] ?? [])].sort());
      }
    });

    for (const [fn, calls] of Object.entries(FunctionAwsCalls)) {
      it(`${fn}: every call is allowed, and the role grants no action none of them needs`, async () => {
        const id = fn.charAt(0).toUpperCase() + fn.slice(1);
        const requests = await requestsOf(calls, PublishedEvents[fn]);
        expect(denied(await verdicts(id, requests))).toEqual([]);
        const needed = new Set(requests.map((r) => r.action));
        const granted = roleOf(id).docs.flatMap((d) => d.Statement.flatMap((st) => (Array.isArray(st.Action) ? st.Action : [st.Action])));
        // Aside: Lambda's own calls on the role (logs, X-Ray, sqs:SendMessage to an async function's
        // failure DLQ), sqs:GetQueueUrl (part of CDK's SqsEventSource consume grant; Lambda's event
        // source mapping does not need it). DynamoDB actions count: each function gets only those its calls send.
        const unused = [...new Set(granted)].filter((a) => !/^(logs|xray):/.test(a) && a !== 'sqs:SendMessage' && a !== 'sqs:GetQueueUrl' && !needed.has(a));
        expect(unused, `${fn}: granted but never called`).toEqual([]);
      });
    }

    for (const [fn, calls] of Object.entries(FunctionAwsCalls)) {
      it(`${fn}: queries only the table and indexes its calls read (index by index, no index/*)`, async () => {
        const id = fn.charAt(0).toUpperCase() + fn.slice(1);
        const read = new Set((await requestsOf(calls)).filter((r) => r.action === 'dynamodb:Query').map((r) => r.resource));
        const granted = new Set(
          roleOf(id).docs.flatMap((d) =>
            d.Statement.filter((st) => (Array.isArray(st.Action) ? st.Action : [st.Action]).includes('dynamodb:Query')).flatMap((st) =>
              Array.isArray(st.Resource) ? st.Resource : [st.Resource],
            ),
          ),
        );
        expect([...granted].sort(), fn).toEqual([...read].sort());
      });
    }

    it('only the provisioner may query the in-flight LSI; besides it, only the byInstanceId GSI (termination deadlines)', async () => {
      const table = resolve({ 'Fn::GetAtt': [logicalIdOf(resources, 'AWS::DynamoDB::Table', 'Table'), 'Arn'] }, resources, D);
      const q = (resource: string): IamRequest => ({ action: 'dynamodb:Query', resource, context: { 'dynamodb:LeadingKeys': [keys.cluster(Cluster)] } });
      const inFlight = q(`${table}/index/${Table.inFlightIndex}`);
      const byInstance = q(`${table}/index/${Table.instanceIdIndex}`);
      const other = q(`${table}/index/another`);
      expect((await verdicts('Provisioner', [inFlight, byInstance, other])).map((v) => v.decision)).toEqual(['Allowed', 'Allowed', 'ImplicitlyDenied']);
      for (const fn of ['Registration', 'Disruption', 'Gc', 'Interruption']) {
        expect((await verdicts(fn, [inFlight]))[0].decision, fn).toBe('ImplicitlyDenied');
      }
    });
  });

  describe('the agent role (AgentRole: the in-cluster agent, shared/aws/calls.ts AgentAwsCalls)', () => {
    it('publishing events and its cluster view is allowed; it grants nothing else', async () => {
      // Prepare: the requests of the agent's calls, as the real adapters send them
      const requests = await requestsOf(AgentAwsCalls);
      // Act
      const vs = await verdicts('Agent', requests);
      // Assess
      expect(denied(vs)).toEqual([]);
      expect(requests.map((r) => r.action).sort()).toEqual(['events:PutEvents', 's3:PutObject']);
      const granted = roleOf('Agent').docs.flatMap((d) => d.Statement.flatMap((st) => (Array.isArray(st.Action) ? st.Action : [st.Action])));
      expect([...new Set(granted)].sort()).toEqual(['events:PutEvents', 's3:PutObject']);
    });

    it("the agent's code publishes only the source and detail-types its role and the bus admit (contract.ts AgentSource, AgentDetailTypes)", () => {
      const dir = join(RepoRoot, 'functions/agent');
      const published = readdirSync(dir)
        .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
        .flatMap((f) => [...readFileSync(join(dir, f), 'utf8').matchAll(/\.publish\(([^;]*)/g)].map((m) => m[1]));
      expect(published.length).toBeGreaterThan(0);
      for (const call of published) {
        const pairs = [...call.matchAll(/source:\s*(\w+),\s*detailType:\s*(\w+)/g)].map((m) => [
          contract[m[1] as keyof typeof contract],
          contract[m[2] as keyof typeof contract],
        ]);
        expect(pairs.length, call).toBeGreaterThan(0);
        for (const [source, detailType] of pairs) {
          expect(source, call).toBe(AgentSource);
          expect(AgentDetailTypes as readonly unknown[], call).toContain(detailType);
        }
      }
    });

    it("the functions read only their own cluster view; the agent may not read it, no one may write another cluster's", async () => {
      const bucket = callTargets().viewBucket!;
      const other = { action: 's3:PutObject', resource: `arn:${D.partition}:s3:::${bucket}/clusters/another/view.json.gz`, context: {} };
      expect(denied(await verdicts('Agent', [other]))).toHaveLength(1);
      const read = { action: 's3:GetObject', resource: `arn:${D.partition}:s3:::${bucket}/clusters/${Cluster}/view.json.gz`, context: {} };
      expect(denied(await verdicts('Agent', [read]))).toHaveLength(1);
      expect(denied(await verdicts('Provisioner', [read]))).toEqual([]);
      expect(denied(await verdicts('Provisioner', [{ ...read, action: 's3:PutObject' }]))).toHaveLength(1);
      expect(denied(await verdicts('Gc', [read]))).toHaveLength(1);
    });
  });

  describe('resource policies: the intended callers are allowed, any other principal of the account is denied (infra/aws/resource-policies.ts)', () => {
    /** Another principal of the account whose identity policy allows everything. */
    const Intruder = `arn:aws:iam::${D.account}:role/intruder`;
    const Everything: PolicyDocument = { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: '*', Resource: '*' }] };
    const tls = { 'aws:SecureTransport': 'true' };
    /** Decisions of `requests` for a function role (its own policies) or another principal, with the resource's policy. */
    const decide = async (who: string | { arn: string; docs: PolicyDocument[] }, resourceId: string, requests: IamRequest[]) => {
      const p = typeof who === 'string' ? roleOf(who) : who;
      const withPolicy = requests.map((r) => ({ ...r, resourcePolicy: resourcePolicyOf(resources, resourceId, D) }));
      return (await evaluateAll(p.arn, p.docs, withPolicy)).map((v) => v.decision);
    };
    const intruder = { arn: Intruder, docs: [Everything] };

    describe('the view bucket', () => {
      const bucketId = () => logicalIdOf(resources, 'AWS::S3::Bucket', 'ViewBucket');
      const object = () => `arn:${D.partition}:s3:::${callTargets().viewBucket}/${clusterViewKey(Cluster)}`;
      const put = (): IamRequest => ({ action: 's3:PutObject', resource: object(), context: tls });
      const get = (): IamRequest => ({ action: 's3:GetObject', resource: object(), context: tls });

      it('the agent may write the view, the provisioner and disruption read it', async () => {
        expect(await decide('Agent', bucketId(), [put()])).toEqual(['Allowed']);
        for (const fn of ['Provisioner', 'Disruption']) expect(await decide(fn, bucketId(), [get()]), fn).toEqual(['Allowed']);
      });
      it('another principal allowed everything may neither write nor read it; nor may a function that does not read it, given s3:*', async () => {
        expect(await decide(intruder, bucketId(), [put(), get()])).toEqual(['ExplicitlyDenied', 'ExplicitlyDenied']);
        const gc = { arn: roleOf('Gc').arn, docs: [Everything] };
        expect(await decide(gc, bucketId(), [put(), get()])).toEqual(['ExplicitlyDenied', 'ExplicitlyDenied']);
        // A reader is not a writer, whatever its identity policy.
        expect(await decide({ arn: roleOf('Provisioner').arn, docs: [Everything] }, bucketId(), [put()])).toEqual(['ExplicitlyDenied']);
      });
      it('not over plain HTTP, even for the agent', async () => {
        expect(await decide('Agent', bucketId(), [{ ...put(), context: { 'aws:SecureTransport': 'false' } }])).toEqual(['ExplicitlyDenied']);
      });
      it('administration is not locked out: the account can still change the bucket policy and empty the bucket', async () => {
        const bucket = `arn:${D.partition}:s3:::${callTargets().viewBucket}`;
        const admin: IamRequest[] = [
          { action: 's3:PutBucketPolicy', resource: bucket, context: tls },
          { action: 's3:DeleteBucketPolicy', resource: bucket, context: tls },
          { action: 's3:DeleteObject', resource: object(), context: tls },
        ];
        expect(await decide(intruder, bucketId(), admin)).toEqual(['Allowed', 'Allowed', 'Allowed']);
      });
    });

    describe('the bus', () => {
      const busId = () => logicalIdOf(resources, 'AWS::Events::EventBus', 'Bus');
      const busArn = () => `arn:${D.partition}:events:${D.region}:${D.account}:event-bus/${callTargets().eventBusName}`;
      const putEvents = (source: string, detailType: string): IamRequest => ({
        action: 'events:PutEvents',
        resource: busArn(),
        context: { 'events:source': source, 'events:detail-type': detailType },
      });
      const agentEvents = () => AgentDetailTypes.map((t) => putEvents(AgentSource, t));
      const forged = () => [
        putEvents('aws.ec2', DetailTypeSpotInterruption),
        putEvents(AgentSource, DetailTypeSpotInterruption),
        putEvents('nodefleet.other', DetailTypeUnschedulablePods),
      ];

      it('the agent may publish its own source and detail-types', async () => {
        expect(await decide('Agent', busId(), agentEvents())).toEqual(AgentDetailTypes.map(() => 'Allowed'));
      });
      it('the agent may publish nothing else: its role allows only those (even without the bus policy)', async () => {
        expect((await verdicts('Agent', forged())).map((v) => v.decision)).toEqual(forged().map(() => 'ImplicitlyDenied'));
      });
      it('the bus refuses anything else from the agent even if its role allowed everything', async () => {
        const agent = { arn: roleOf('Agent').arn, docs: [Everything] };
        expect(await decide(agent, busId(), forged())).toEqual(forged().map(() => 'ExplicitlyDenied'));
        expect(await decide(agent, busId(), agentEvents())).toEqual(AgentDetailTypes.map(() => 'Allowed'));
      });
      it('another principal allowed everything may not publish, not even what the agent sends; nor may a function', async () => {
        expect(await decide(intruder, busId(), [...agentEvents(), ...forged()])).toEqual([...agentEvents(), ...forged()].map(() => 'ExplicitlyDenied'));
        const provisioner = { arn: roleOf('Provisioner').arn, docs: [Everything] };
        expect(await decide(provisioner, busId(), agentEvents())).toEqual(AgentDetailTypes.map(() => 'ExplicitlyDenied'));
      });
      it("the Drain task may publish only the termination source's Unschedulable Pods; the bus refuses it anything else, and refuses that source to the agent", async () => {
        const request = putEvents(TerminationSource, DetailTypeUnschedulablePods);
        expect(await decide('TerminationDrain', busId(), [request])).toEqual(['Allowed']);
        expect((await verdicts('TerminationDrain', [...agentEvents(), ...forged()])).map((v) => v.decision)).toEqual(
          [...agentEvents(), ...forged()].map(() => 'ImplicitlyDenied'),
        );
        const drain = { arn: roleOf('TerminationDrain').arn, docs: [Everything] };
        expect(await decide(drain, busId(), [...agentEvents(), ...forged()])).toEqual([...agentEvents(), ...forged()].map(() => 'ExplicitlyDenied'));
        const agent = { arn: roleOf('Agent').arn, docs: [Everything] };
        expect(await decide(agent, busId(), [request])).toEqual(['ExplicitlyDenied']);
        expect(await decide(intruder, busId(), [request])).toEqual(['ExplicitlyDenied']);
      });
      it('administration is not locked out: the account can still update, describe and delete the bus', async () => {
        // (events:PutPermission, which sets its policy, has no resource-level permissions: no bus policy applies to it.)
        const admin = ['events:UpdateEventBus', 'events:DescribeEventBus', 'events:DeleteEventBus'].map((action) => ({
          action,
          resource: busArn(),
          context: {},
        }));
        expect(await decide(intruder, busId(), admin)).toEqual(['Allowed', 'Allowed', 'Allowed']);
      });
    });

    describe('the interruption queue', () => {
      const queueId = () => logicalIdOf(resources, 'AWS::SQS::Queue', 'InterruptionQueue');
      const queueArn = () => arnOf(resources, queueId(), D);
      const ruleArn = (rule: string) => arnOf(resources, logicalIdOf(resources, 'AWS::Events::Rule', `Rule${rule}`), D);
      const send = (context: Record<string, string> = {}): IamRequest => ({ action: 'sqs:SendMessage', resource: queueArn(), context: { ...tls, ...context } });
      const Events = 'events.amazonaws.com';

      it("EventBridge may deliver for each of the stack's interruption rules", async () => {
        const reqs = InterruptionRuleNames.map((r) => send({ 'aws:SourceArn': ruleArn(r), 'aws:SourceAccount': D.account }));
        expect(await decide({ arn: Events, docs: [] }, queueId(), reqs)).toEqual(reqs.map(() => 'Allowed'));
      });
      it('EventBridge delivering for another rule of the account is denied', async () => {
        const other = `arn:${D.partition}:events:${D.region}:${D.account}:rule/forged`;
        expect(await decide({ arn: Events, docs: [] }, queueId(), [send({ 'aws:SourceArn': other, 'aws:SourceAccount': D.account })])).toEqual([
          'ExplicitlyDenied',
        ]);
      });
      it('another principal allowed everything may not send; nor may the interruption function, given sqs:*', async () => {
        expect(await decide(intruder, queueId(), [send()])).toEqual(['ExplicitlyDenied']);
        expect(await decide({ arn: roleOf('Interruption').arn, docs: [Everything] }, queueId(), [send()])).toEqual(['ExplicitlyDenied']);
      });
      it('the interruption function still consumes it; administration is not locked out', async () => {
        const consume = AdapterCalls['queue.consume'].map((action) => ({ action, resource: queueArn(), context: tls }));
        expect(await decide('Interruption', queueId(), consume)).toEqual(consume.map(() => 'Allowed'));
        expect(await decide(intruder, queueId(), [{ action: 'sqs:SetQueueAttributes', resource: queueArn(), context: tls }])).toEqual(['Allowed']);
      });
    });
  });

  describe('partitions and shared VPCs', () => {
    it('in the aws-cn partition a launch passes the node role to ec2.amazonaws.com.cn, allowed', async () => {
      const cn: Deployment = { ...D, partition: 'aws-cn', region: 'cn-north-1' };
      const docs = rolePolicies({ Resources: resources }, cn).get(logicalIdOf(resources, 'AWS::IAM::Role', 'ProvisionerRole'))!;
      const roleArn = arnOf(resources, logicalIdOf(resources, 'AWS::IAM::Role', 'ProvisionerRole'), cn);
      const nodeRole = arnOf(resources, logicalIdOf(resources, 'AWS::IAM::Role', 'NodeRole'), cn);
      const l = await launch('spot');
      const stored = {
        id: 'lt-0123456789abcdef0',
        tags: tagSpecifications(l.launchTemplate).get('launch-template') ?? {},
        data: l.launchTemplate.LaunchTemplateData,
      };
      const ctx: RequestContext = {
        partition: 'aws-cn',
        region: 'cn-north-1',
        account: D.account,
        launchTemplate: () => stored,
        roleOfInstanceProfile: () => nodeRole,
      };
      const reqs = [
        ...authorizationRequests('ec2:CreateLaunchTemplate', l.launchTemplate, ctx),
        ...authorizationRequests('ec2:CreateFleet', l.createFleet, ctx),
      ];
      expect(reqs.find((r) => r.action === 'iam:PassRole')?.context).toEqual({ 'iam:PassedToService': 'ec2.amazonaws.com.cn' });
      expect(denied(await evaluateAll(roleArn, docs, reqs))).toEqual([]);
    });

    it('a launch into a subnet and security group shared from another account is allowed', async () => {
      const l = await launch('on-demand');
      const owner = '444455556666';
      // The owner shares them with this account through AWS RAM: the share is the owner's grant (a resource policy).
      const share = {
        Version: '2012-10-17',
        Statement: [
          { Effect: 'Allow' as const, Principal: { AWS: `arn:aws:iam::${D.account}:root` }, Action: ['ec2:RunInstances', 'ec2:CreateFleet'], Resource: '*' },
        ],
      };
      const reqs = launchRequests(l, { ownerOf: () => owner }).map((r) => (r.resource.includes(`:${owner}:`) ? { ...r, resourcePolicy: share as any } : r));
      expect(reqs.some((r) => r.resource === `arn:aws:ec2:${D.region}:${owner}:subnet/subnet-0a`)).toBe(true);
      expect(denied(await verdicts('Provisioner', reqs))).toEqual([]);
    });
  });

  describe('must never', () => {
    it('no function may launch without the cluster tags', async () => {
      const l = await launch('on-demand');
      for (const s of l.createFleet.TagSpecifications) s.Tags = s.Tags.filter((t: any) => !String(t.Key).startsWith('kubernetes.io/cluster/'));
      const instance = launchRequests(l).filter((r) => r.resource.endsWith(':instance/*') && r.action === 'ec2:RunInstances');
      expect(instance).toHaveLength(1);
      for (const fn of ['Provisioner', 'Disruption']) expect((await verdicts(fn, instance)).map((v) => v.decision)).toEqual(['ImplicitlyDenied']);
    });
    it('terminating an instance of this cluster without a NodePool tag is denied (gc, TerminateInstance)', async () => {
      const tags = await launchedInstanceTags();
      delete tags['karpenter.sh/nodepool'];
      const reqs = authorizationRequests('ec2:TerminateInstances', { InstanceIds: ['i-0123456789abcdef0'] }, ec2Ctx({ tagsOf: () => tags }));
      for (const fn of ['Gc', 'TerminationTerminateInstance']) expect((await verdicts(fn, reqs)).map((v) => v.decision)).toEqual(['ImplicitlyDenied']);
    });
    it('no function but gc and the TerminateInstance task may terminate, and none but gc delete a launch template', async () => {
      const tags = await launchedInstanceTags();
      const term = authorizationRequests('ec2:TerminateInstances', { InstanceIds: ['i-0123456789abcdef0'] }, ec2Ctx({ tagsOf: () => tags }));
      const lt = { id: 'lt-0123456789abcdef0', tags, data: {} };
      const del = authorizationRequests('ec2:DeleteLaunchTemplate', { LaunchTemplateId: lt.id }, ec2Ctx({ launchTemplate: () => lt }));
      for (const fn of ['Provisioner', 'Disruption', 'Registration', 'Interruption', 'TerminationCordon', 'TerminationDrain']) {
        expect(
          (await verdicts(fn, [...term, ...del])).map((v) => v.decision),
          fn,
        ).toEqual(['ImplicitlyDenied', 'ImplicitlyDenied']);
      }
      expect((await verdicts('Gc', del)).map((v) => v.decision)).toEqual(['Allowed']);
      const foreign = authorizationRequests(
        'ec2:DeleteLaunchTemplate',
        { LaunchTemplateId: lt.id },
        ec2Ctx({ launchTemplate: () => ({ ...lt, tags: { 'kubernetes.io/cluster/other': 'owned', 'karpenter.sh/nodepool': 'default' } }) }),
      );
      expect((await verdicts('Gc', foreign)).map((v) => v.decision)).toEqual(['ImplicitlyDenied']);
    });
    it('no tagging outside a launch (CreateTags with no ec2:CreateAction)', async () => {
      const tags = await launchedInstanceTags();
      const req: IamRequest = {
        action: 'ec2:CreateTags',
        resource: `arn:aws:ec2:${D.region}:${D.account}:instance/i-0ffffffffffffffff`,
        context: Object.fromEntries(Object.entries(tags).map(([k, v]) => [`aws:RequestTag/${k}`, v])),
      };
      for (const fn of ['Provisioner', 'Disruption', 'Gc']) expect((await verdicts(fn, [req]))[0].decision, fn).toBe('ImplicitlyDenied');
    });
    it('no function may touch another table, queue or state machine', async () => {
      const other = (service: string, resource: string) => `arn:aws:${service}:${D.region}:${D.account}:${resource}`;
      const loop = arnOf(resources, logicalIdOf(resources, 'AWS::StepFunctions::StateMachine', 'DisruptionLoop'), D);
      const dlq = arnOf(resources, logicalIdOf(resources, 'AWS::SQS::Queue', 'DeliveryDlq'), D);
      for (const fn of Object.keys(FunctionAwsCalls)) {
        const id = fn.charAt(0).toUpperCase() + fn.slice(1);
        const v = await verdicts(id, [
          { action: 'dynamodb:PutItem', resource: other('dynamodb', 'table/other'), context: {} },
          { action: 'dynamodb:GetItem', resource: other('dynamodb', 'table/other'), context: {} },
          { action: 'sqs:ReceiveMessage', resource: dlq, context: {} },
          { action: 'states:StartExecution', resource: loop, context: {} },
          { action: 'states:StartExecution', resource: other('states', 'stateMachine:other'), context: {} },
        ]);
        expect(
          v.map((x) => x.decision),
          fn,
        ).toEqual(Array(5).fill('ImplicitlyDenied'));
      }
    });
    it('functions that never delete or update an item may not (DynamoDB narrowed per function)', async () => {
      const table = resolve({ 'Fn::GetAtt': [logicalIdOf(resources, 'AWS::DynamoDB::Table', 'Table'), 'Arn'] }, resources, D);
      const inCluster = { 'dynamodb:LeadingKeys': [keys.cluster(Cluster)] };
      const del: IamRequest = { action: 'dynamodb:DeleteItem', resource: table, context: inCluster };
      const upd: IamRequest = { action: 'dynamodb:UpdateItem', resource: table, context: inCluster };
      for (const fn of ['Registration', 'Interruption', 'TerminationCordon', 'TerminationDrain', 'TerminationTerminateInstance', 'TerminationRecordFailure']) {
        expect(
          (await verdicts(fn, [del, upd])).map((v) => v.decision),
          fn,
        ).toEqual(['ImplicitlyDenied', 'ImplicitlyDenied']);
      }
      // Cutoff reads its NodeClaim (target and deadline: functions/termination/target.ts) but never deletes or updates it.
      expect((await verdicts('TerminationCutoff', [del, upd])).map((v) => v.decision)).toEqual(['ImplicitlyDenied', 'ImplicitlyDenied']);
      expect((await verdicts('Gc', [del]))[0].decision).toBe('Allowed');
    });
    it("no function may launch without nodefleet's own cluster tag (nodefleet.io/cluster), Karpenter's tags notwithstanding", async () => {
      const l = await launch('on-demand');
      for (const spec of [...l.createFleet.TagSpecifications, ...l.launchTemplate.TagSpecifications])
        spec.Tags = spec.Tags.filter((t: any) => t.Key !== TagNodefleetCluster);
      const reqs = launchRequests(l).filter(
        (r) => (r.resource.endsWith(':instance/*') && r.action === 'ec2:RunInstances') || r.action === 'ec2:CreateLaunchTemplate',
      );
      expect(reqs).toHaveLength(2);
      for (const fn of ['Provisioner', 'Disruption'])
        expect(
          (await verdicts(fn, reqs)).map((v) => v.decision),
          fn,
        ).toEqual(['ImplicitlyDenied', 'ImplicitlyDenied']);
    });
    it('a Karpenter instance or launch template of this cluster (its tags, not nodefleet.io/cluster) may not be terminated or deleted', async () => {
      const karpenter = await launchedInstanceTags();
      delete karpenter[TagNodefleetCluster];
      const term = authorizationRequests('ec2:TerminateInstances', { InstanceIds: ['i-0123456789abcdef0'] }, ec2Ctx({ tagsOf: () => karpenter }));
      for (const fn of ['Gc', 'TerminationTerminateInstance'])
        expect(
          (await verdicts(fn, term)).map((v) => v.decision),
          fn,
        ).toEqual(['ImplicitlyDenied']);
      const del = authorizationRequests(
        'ec2:DeleteLaunchTemplate',
        { LaunchTemplateId: 'lt-0123456789abcdef0' },
        ec2Ctx({ launchTemplate: () => ({ id: 'lt-0123456789abcdef0', tags: karpenter, data: {} }) }),
      );
      expect((await verdicts('Gc', del)).map((v) => v.decision)).toEqual(['ImplicitlyDenied']);
    });
    it("each function reaches only its cluster's partition of the table, and only the provisioner its own idempotency records (dynamodb:LeadingKeys)", async () => {
      const table = resolve({ 'Fn::GetAtt': [logicalIdOf(resources, 'AWS::DynamoDB::Table', 'Table'), 'Arn'] }, resources, D);
      const itemActions = ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:Query'];
      const at = (action: string, pk?: string): IamRequest => ({ action, resource: table, context: pk === undefined ? {} : { 'dynamodb:LeadingKeys': [pk] } });
      for (const fn of Object.keys(FunctionAwsCalls)) {
        const id = fn.charAt(0).toUpperCase() + fn.slice(1);
        // The actions its statements on the table itself grant (indexes and the provisioner's idempotency statement aside).
        const onTable = (st: { Sid?: string; Resource: string | string[] }) => st.Sid !== 'OwnIdempotencyRecords' && [st.Resource].flat().includes(table);
        const granted = new Set(
          roleOf(id).docs.flatMap((d) => d.Statement.filter(onTable).flatMap((st) => (Array.isArray(st.Action) ? st.Action : [st.Action]))),
        );
        const actions = itemActions.filter((a) => granted.has(a));
        expect(actions.length, fn).toBeGreaterThan(0);
        // Its own cluster's partition: allowed.
        expect(
          (
            await verdicts(
              id,
              actions.map((a) => at(a, keys.cluster(Cluster))),
            )
          ).map((v) => v.decision),
          fn,
        ).toEqual(actions.map(() => 'Allowed'));
        // Another cluster's partition, a request naming none, another function's idempotency records: denied.
        const forged = actions.flatMap((a) => [at(a, keys.cluster('other')), at(a), at(a, keys.idempotency('disruption'))]);
        expect(
          (await verdicts(id, forged)).map((v) => v.decision),
          fn,
        ).toEqual(forged.map(() => 'ImplicitlyDenied'));
        // The provisioner's idempotency records: the provisioner only (put, get, update, delete; no query).
        const idem = IdempotencyActions.map((a) => at(a, keys.idempotency('provisioner')));
        expect(
          (await verdicts(id, idem)).map((v) => v.decision),
          fn,
        ).toEqual(idem.map(() => (fn === 'provisioner' ? 'Allowed' : 'ImplicitlyDenied')));
      }
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
