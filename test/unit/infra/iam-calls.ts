/**
 * Drives each adapter method of shared/aws/calls.ts `AdapterCalls` against mocked SDK clients
 * (aws-sdk-client-mock) and records what the real adapter sent: IAM action + input. The IAM
 * simulation turns those inputs into authorization requests; iam-calls.test.ts checks the table.
 */
import { mockClient } from 'aws-sdk-client-mock';
import {
  CreateFleetCommand,
  CreateLaunchTemplateCommand,
  DeleteLaunchTemplateCommand,
  DescribeImagesCommand,
  DescribeInstancesCommand,
  DescribeLaunchTemplatesCommand,
  DescribeSecurityGroupsCommand,
  DescribeSubnetsCommand,
  EC2Client,
} from '@aws-sdk/client-ec2';
import { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { ConditionalCheckFailedException, DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { SFNClient } from '@aws-sdk/client-sfn';
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { DescribeClusterCommand, EKSClient } from '@aws-sdk/client-eks';
import { STSClient } from '@aws-sdk/client-sts';
import { PricingClient } from '@aws-sdk/client-pricing';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { S3ClusterViewStore } from '../../../shared/aws/s3-cluster-view-store.ts';
import type { AdapterCall } from '../../../shared/aws/calls.ts';
import { Ec2CloudProvider, Tags, catalogArchitecture, launchTags } from '../../../shared/aws/ec2.ts';
import { sdkLookups, Ec2NodeClassResolver, StaticNodeClassResolver } from '../../../shared/aws/node-class-resolver.ts';
import { EksConnectionProvider } from '../../../shared/aws/eks.ts';
import { DynamoNodeClaimStore } from '../../../shared/aws/dynamo-node-claim-store.ts';
import { DynamoUnavailableOfferings } from '../../../shared/aws/dynamo-unavailable-offerings.ts';
import { DynamoBudgetCounter } from '../../../shared/aws/dynamo-budget-counter.ts';
import { SfnTerminationStarter } from '../../../shared/aws/sfn-termination-starter.ts';
import { EventBridgePublisher } from '../../../shared/aws/eventbridge-publisher.ts';
import { CatalogRefresher } from '../../../shared/aws/catalog-refresh.ts';
import { idempotencyStore, idempotentOn } from '../../../shared/runtime/middleware.ts';
import { nodeClaim } from '../../fakes/index.ts';
import { nodeClass } from '../provisioner/world.ts';

/** Where the adapters run: names and ARNs as the deployed stack gives them. */
export interface CallTargets {
  region: string;
  clusterName: string;
  tableName: string;
  stateMachineArn: string;
  eventBusName: string;
  instanceProfileName: string;
  nodeRoleName: string;
  /** The cluster view bucket's name (views.get / views.put). */
  viewBucket?: string;
  /** Launch capacity type (cloud.create). */
  capacityType?: 'spot' | 'on-demand';
  /** The event publisher.publish puts (default: the agent's `Node Lifecycle`). */
  event?: { source: string; detailType: string };
}

/** One call as the adapter sent it. */
export interface RecordedCall {
  /** IAM action, e.g. `ec2:CreateFleet`, `dynamodb:PutItem`. */
  action: string;
  input: Record<string, any>;
}

/** lib-dynamodb command → the DynamoDB operation it sends. */
const DocumentCommands: Record<string, string> = {
  Put: 'PutItem',
  Get: 'GetItem',
  Query: 'Query',
  Update: 'UpdateItem',
  Delete: 'DeleteItem',
  Scan: 'Scan',
  BatchGet: 'BatchGetItem',
  BatchWrite: 'BatchWriteItem',
  TransactWrite: 'TransactWriteItems',
  TransactGet: 'TransactGetItems',
};

const Services: [any, string][] = [
  [EC2Client, 'ec2'],
  [SSMClient, 'ssm'],
  [DynamoDBDocumentClient, 'dynamodb'],
  [DynamoDBClient, 'dynamodb'],
  [SFNClient, 'states'],
  [EventBridgeClient, 'events'],
  [EKSClient, 'eks'],
  [PricingClient, 'pricing'],
  [S3Client, 's3'],
];

export const LaunchTemplateId = 'lt-0123456789abcdef0';
export const InstanceId = 'i-0123456789abcdef0';
const Credentials = { accessKeyId: 'test', secretAccessKey: 'test' };

/**
 * Runs the adapter method `call` with mocked clients and returns what it sent, in order.
 * `queue.consume` is Lambda's, not an adapter's: its requests are built by the caller.
 */
export async function record(call: AdapterCall, t: CallTargets): Promise<RecordedCall[]> {
  const mocks = Services.map(([Client, service]) => ({ service, mock: mockClient(Client) }));
  const [ec2m, ssmm, docm, ddbm, , ebm, eksm] = mocks.map((m) => m.mock);
  try {
    for (const m of mocks) m.mock.onAnyCommand().resolves({});
    ec2m.on(DescribeLaunchTemplatesCommand).resolves({ LaunchTemplates: [] });
    ec2m.on(CreateLaunchTemplateCommand).resolves({ LaunchTemplate: { LaunchTemplateId } });
    ec2m.on(CreateFleetCommand).resolves({
      Instances: [
        {
          InstanceIds: [InstanceId],
          InstanceType: 'm5.large',
          Lifecycle: t.capacityType === 'spot' ? 'spot' : 'on-demand',
          LaunchTemplateAndOverrides: { Overrides: { InstanceType: 'm5.large', AvailabilityZone: `${t.region}a`, SubnetId: 'subnet-0a' } },
        },
      ],
    });
    ec2m.on(DescribeSubnetsCommand).resolves({ Subnets: [{ SubnetId: 'subnet-0a', AvailabilityZone: `${t.region}a`, AvailableIpAddressCount: 100 }] });
    ec2m.on(DescribeSecurityGroupsCommand).resolves({ SecurityGroups: [{ GroupId: 'sg-0a' }] });
    ec2m.on(DescribeImagesCommand).resolves({ Images: [] });
    ssmm.on(GetParameterCommand).resolves({ Parameter: { Value: 'ami-0amd64' } });
    ebm.on(PutEventsCommand).resolves({ FailedEntryCount: 0, Entries: [{ EventId: 'e-1' }] });
    eksm.on(DescribeClusterCommand).resolves({
      cluster: {
        name: t.clusterName,
        endpoint: 'https://example.eks.amazonaws.com',
        certificateAuthority: { data: 'Q0E=' },
        version: '1.32',
        kubernetesNetworkConfig: { serviceIpv4Cidr: '10.100.0.0/16' },
      },
    });

    const ec2 = new EC2Client({ region: t.region, credentials: Credentials });
    const ssm = new SSMClient({ region: t.region, credentials: Credentials });
    const ddb = new DynamoDBClient({ region: t.region, credentials: Credentials });
    const doc = DynamoDBDocumentClient.from(ddb, { marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: true } });
    const cluster = {
      name: t.clusterName,
      endpoint: 'https://example.eks.amazonaws.com',
      certificateAuthority: 'Q0E=',
      serviceCidr: '10.100.0.0/16',
      kubernetesVersion: '1.32',
    };
    const claim = nodeClaim({
      name: 'default-abcde',
      cluster: t.clusterName,
      nodePool: 'default',
      phase: 'Pending',
      labels: { 'karpenter.sh/nodepool': 'default' },
    } as any);
    const cloud = (
      resolver = new StaticNodeClassResolver({
        subnets: [{ subnetId: 'subnet-0a', zone: `${t.region}a`, availableIpAddressCount: 100 }],
        securityGroupIds: ['sg-0a'],
        images: { amd64: 'ami-0amd64', arm64: 'ami-0arm64' },
      }),
    ) =>
      new Ec2CloudProvider({
        ec2,
        resolver,
        cluster,
        instanceProfileName: t.instanceProfileName,
        nodeRoleName: t.nodeRoleName,
        architectureOf: catalogArchitecture,
      });
    const store = new DynamoNodeClaimStore(doc, t.tableName, t.clusterName);
    const budgets = new DynamoBudgetCounter(doc, t.tableName, t.clusterName);
    const nc = nodeClass();
    nc.spec.role = t.nodeRoleName;
    // What CreateFleet tags an instance of this claim with (the adapter's own tag builder), plus EC2's launch-template tag.
    const instanceTags = {
      ...Object.fromEntries(launchTags(claim, nc, t.clusterName).map((x) => [x.Key!, x.Value!])),
      [Tags.launchTemplateId]: LaunchTemplateId,
    };
    const tagList = Object.entries(instanceTags).map(([Key, Value]) => ({ Key, Value }));

    switch (call) {
      case 'cloud.create':
        await cloud().create(claim, { instanceTypes: ['m5.large'], zones: [`${t.region}a`], capacityTypes: [t.capacityType ?? 'on-demand'] }, nc);
        break;
      case 'cloud.terminate':
        await cloud().terminate(InstanceId);
        break;
      case 'cloud.get':
      case 'cloud.list': {
        ec2m
          .on(DescribeInstancesCommand)
          .resolves({ Reservations: [{ Instances: [{ InstanceId, InstanceType: 'm5.large', State: { Name: 'running' }, Tags: tagList }] }] });
        if (call === 'cloud.get') await cloud().get(InstanceId);
        else await cloud().list();
        break;
      }
      case 'cloud.collectLaunchTemplates': {
        ec2m
          .on(DescribeLaunchTemplatesCommand)
          .resolves({ LaunchTemplates: [{ LaunchTemplateId, LaunchTemplateName: 'nodefleet/x/default/0', CreateTime: new Date(0), Tags: tagList }] });
        ec2m.on(DeleteLaunchTemplateCommand).resolves({});
        await cloud().collectLaunchTemplates([], Date.now());
        break;
      }
      case 'resolver.resolve': {
        // An alias (public SSM parameter) and an AMI id term (DescribeImages).
        await new Ec2NodeClassResolver(sdkLookups(ec2, ssm), '1.32').resolve(nc);
        ec2m
          .on(DescribeImagesCommand)
          .resolves({ Images: [{ ImageId: 'ami-0123456789abcdef0', Architecture: 'x86_64', CreationDate: '2026-01-01T00:00:00Z' }] });
        await new Ec2NodeClassResolver(sdkLookups(ec2, ssm), '1.32').resolve({
          ...nc,
          spec: { ...nc.spec, amiSelectorTerms: [{ id: 'ami-0123456789abcdef0' }] },
        });
        // Capacity reservation terms (DescribeCapacityReservations).
        await new Ec2NodeClassResolver(sdkLookups(ec2, ssm), '1.32').resolve({
          ...nc,
          spec: { ...nc.spec, capacityReservationSelectorTerms: [{ id: 'cr-0123456789abcdef0' }] },
        });
        break;
      }
      case 'eks.connect':
        await new EksConnectionProvider(
          new EKSClient({ region: t.region, credentials: Credentials }),
          new STSClient({ region: t.region, credentials: Credentials }),
          t.clusterName,
          t.region,
        ).connection();
        break;
      case 'store.create':
        await store.create(claim);
        break;
      case 'store.claimsEpochMs':
        // No item yet: the read, then the conditional put.
        await store.claimsEpochMs(1_800_000_000_000);
        break;
      case 'store.get':
        await store.get(claim.name);
        break;
      case 'store.list':
        await store.list();
        break;
      case 'store.listInFlight':
        await store.listInFlight(1_800_000_000_000);
        break;
      case 'store.getByInstanceId':
        await store.getByInstanceId(InstanceId);
        break;
      case 'store.update':
        await store.update(claim);
        break;
      case 'store.delete':
        await store.delete(claim.name);
        break;
      case 'unavailable.mark':
        await new DynamoUnavailableOfferings(doc, t.tableName, t.clusterName).mark(
          [{ instanceType: 'm5.large', zone: `${t.region}a`, capacityType: 'spot', reason: 'InsufficientInstanceCapacity' }],
          1_900_000_000,
        );
        break;
      case 'unavailable.list':
        await new DynamoUnavailableOfferings(doc, t.tableName, t.clusterName).list(1_800_000_000);
        break;
      case 'budgets.take': {
        // The first take of a NodePool: the conditional update fails (no item yet), the item is created, the update retried.
        const noItem = Object.assign(new Error('The conditional request failed'), { name: 'ConditionalCheckFailedException' });
        docm.on(UpdateCommand).rejectsOnce(noItem).resolves({});
        await budgets.take('default', claim.name, 1, '2026-03-06T16:00:00Z');
        break;
      }
      case 'budgets.release':
        await budgets.release('default', claim.name);
        break;
      case 'budgets.renew':
        await budgets.renew('default', claim.name, '2026-03-06T16:00:10Z');
        break;
      case 'budgets.holders':
        await budgets.holders('default');
        break;
      case 'termination.start':
        await new SfnTerminationStarter(new SFNClient({ region: t.region, credentials: Credentials }), t.stateMachineArn).start({
          nodeClaim: claim.name,
          reason: 'emptiness',
        });
        break;
      case 'views.get':
      case 'views.put': {
        const views = new S3ClusterViewStore(new S3Client({ region: t.region, credentials: Credentials }), t.viewBucket ?? 'nodefleet-view', t.clusterName);
        if (call === 'views.get') {
          mocks
            .find((m) => m.service === 's3')!
            .mock.on(GetObjectCommand)
            .resolves({
              ETag: '"v1"',
              ContentLength: 2,
              Body: (async function* () {
                yield new Uint8Array([31, 139]);
              })(),
            } as never);
          await views.get();
        } else await views.put(new Uint8Array([31, 139]));
        break;
      }
      case 'publisher.publish':
        await new EventBridgePublisher(new EventBridgeClient({ region: t.region, credentials: Credentials }), { eventBusName: t.eventBusName }).publish([
          { source: t.event?.source ?? 'nodefleet.agent', detailType: t.event?.detailType ?? 'Node Lifecycle', detail: {} },
        ]);
        break;
      case 'catalogRefresher.get':
        await new CatalogRefresher({
          ec2,
          pricing: new PricingClient({ region: 'us-east-1', credentials: Credentials }),
          region: t.region,
          onError: () => undefined,
        }).get(Date.now());
        break;
      case 'idempotency': {
        // Completed; then a handler that throws (its record deleted); then a conditional put that
        // fails without returning the old item (the record read back).
        await idempotentOn(async () => ({ ok: true }), idempotencyStore(ddb, t.tableName, 'provisioner'), 'id')({ id: 'event-1' });
        await idempotentOn(
          async () => Promise.reject(new Error('handler failed')),
          idempotencyStore(ddb, t.tableName, 'provisioner'),
          'id',
        )({ id: 'event-2' }).catch(() => undefined);
        // (Not rejectsOnce: sinon counts the earlier puts of this case as matching calls.)
        for (const m of [docm, ddbm])
          m.on(PutItemCommand).rejects(new ConditionalCheckFailedException({ message: 'The conditional request failed', $metadata: {} }));
        await idempotentOn(async () => ({ ok: true }), idempotencyStore(ddb, t.tableName, 'provisioner'), 'id')({ id: 'event-3' }).catch(() => undefined);
        break;
      }
      case 'queue.consume':
        return [];
    }
    const out: RecordedCall[] = [];
    for (const { service, mock } of mocks) {
      for (const c of mock.calls()) {
        const name = (c.args[0] as { constructor: { name: string } }).constructor.name.replace(/Command$/, '');
        const op = service === 'dynamodb' && mock === docm ? (DocumentCommands[name] ?? name) : name;
        // The document client sends through the base client too: count each call once (the document-level one).
        if (mock === ddbm && docm.calls().some((d) => d.args[0] === c.args[0])) continue;
        out.push({ action: `${service}:${op}`, input: (c.args[0] as { input: Record<string, any> }).input });
      }
    }
    return out;
  } finally {
    for (const m of mocks) m.mock.restore();
  }
}
