/**
 * Least-privilege IAM statements for the function roles, one builder per {@link Permission}.
 * No action is a wildcard; resources are `*` only for EC2 Describe calls (pinned to this region
 * by condition) and pricing:GetProducts, which have no resource-level permissions.
 *
 * The EC2 scoping follows Karpenter's controller policy (aws/karpenter-provider-aws
 * website/content/en/docs/reference/cloudformation.md, `KarpenterControllerPolicy`): resources an
 * instance launch creates must carry the cluster tag in the request; only resources carrying the
 * cluster tag may be terminated.
 */
import { Aws, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { Permission } from './functions.ts';

/** Tag every EC2 resource nodefleet creates carries (Karpenter's and the EKS cloud provider's ownership tag). */
export function clusterTagKey(clusterName: string): string {
  return `kubernetes.io/cluster/${clusterName}`;
}
/** Value of {@link clusterTagKey}. */
export const ClusterTagValue = 'owned';

/**
 * EC2 Describe calls of the cloud provider (shared/aws/ec2.ts: instances, launch templates) and
 * the node-class resolver (shared/aws/node-class-resolver.ts: images, subnets, security groups).
 */
export const Ec2DescribeActions = [
  'ec2:DescribeImages',
  'ec2:DescribeInstances',
  'ec2:DescribeLaunchTemplates',
  'ec2:DescribeSecurityGroups',
  'ec2:DescribeSubnets',
];

/** EC2 Describe calls of the catalog refresh (shared/aws/catalog-refresh.ts: zones, offerings, types, spot prices). */
export const CatalogDescribeActions = [
  'ec2:DescribeAvailabilityZones',
  'ec2:DescribeInstanceTypeOfferings',
  'ec2:DescribeInstanceTypes',
  'ec2:DescribeSpotPriceHistory',
];

/** Pricing API calls of the catalog refresh (on-demand prices). */
export const PricingActions = ['pricing:GetProducts'];

/** DynamoDB item actions the NodeClaim store, budget counters, ICE cache and Powertools idempotency use. */
export const TableActions = [
  'dynamodb:BatchGetItem',
  'dynamodb:BatchWriteItem',
  'dynamodb:ConditionCheckItem',
  'dynamodb:DeleteItem',
  'dynamodb:GetItem',
  'dynamodb:PutItem',
  'dynamodb:Query',
  'dynamodb:TransactWriteItems',
  'dynamodb:UpdateItem',
];

/** The resources the statements refer to. */
export interface IamTargets {
  clusterName: string;
  tableArn: string;
  nodeRoleArn: string;
  eventBusArn: string;
  /** Undefined when the state machine does not exist yet (its definition file is missing). */
  stateMachineArn?: string;
}

function ec2Arn(stack: Stack, resource: string, account: string = Aws.ACCOUNT_ID): string {
  return `arn:${Aws.PARTITION}:ec2:${stack.region}:${account}:${resource}`;
}

/** Resources created by a launch: every one must carry the cluster tag in the request. */
const CreatedByLaunch = ['fleet/*', 'instance/*', 'volume/*', 'network-interface/*', 'launch-template/*', 'spot-instances-request/*'];

/**
 * The statements for one permission set.
 * @throws Error when `startTermination` is asked for and there is no state machine.
 */
export function statementsFor(stack: Stack, permission: Permission, t: IamTargets): iam.PolicyStatement[] {
  const tag = clusterTagKey(t.clusterName);
  const inRegion = { StringEquals: { 'aws:RequestedRegion': stack.region } };
  switch (permission) {
    case 'table':
      return [new iam.PolicyStatement({ sid: 'NodefleetTable', actions: TableActions, resources: [t.tableArn, `${t.tableArn}/index/*`] })];
    case 'kube':
      return [
        new iam.PolicyStatement({
          sid: 'DescribeThisCluster',
          actions: ['eks:DescribeCluster'],
          resources: [`arn:${Aws.PARTITION}:eks:${stack.region}:${Aws.ACCOUNT_ID}:cluster/${t.clusterName}`],
        }),
      ];
    case 'ec2Describe':
      return [new iam.PolicyStatement({ sid: 'Ec2DescribeInRegion', actions: Ec2DescribeActions, resources: ['*'], conditions: inRegion })];
    case 'catalogRefresh':
      return [
        new iam.PolicyStatement({ sid: 'CatalogDescribeInRegion', actions: CatalogDescribeActions, resources: ['*'], conditions: inRegion }),
        // GetProducts has no resource-level permissions, and the request goes to the Pricing API's
        // endpoint region (us-east-1; shared/aws/catalog-refresh.ts pricingApiRegion), not this
        // stack's: no aws:RequestedRegion pin. Read-only public price list data.
        new iam.PolicyStatement({ sid: 'ReadOnDemandPrices', actions: PricingActions, resources: ['*'] }),
      ];
    case 'ec2Launch':
      return [
        // Existing resources a launch uses (no tags in the request apply to them).
        new iam.PolicyStatement({
          sid: 'LaunchUsesExistingResources',
          actions: ['ec2:RunInstances', 'ec2:CreateFleet'],
          resources: [
            ec2Arn(stack, 'image/*', ''),
            ec2Arn(stack, 'snapshot/*', ''),
            ec2Arn(stack, 'subnet/*'),
            ec2Arn(stack, 'security-group/*'),
            ec2Arn(stack, 'capacity-reservation/*'),
          ],
        }),
        // nodefleet's own launch templates (created with the cluster tag).
        new iam.PolicyStatement({
          sid: 'LaunchUsesOwnLaunchTemplates',
          actions: ['ec2:RunInstances', 'ec2:CreateFleet'],
          resources: [ec2Arn(stack, 'launch-template/*')],
          conditions: { StringEquals: { [`aws:ResourceTag/${tag}`]: ClusterTagValue } },
        }),
        // What a launch creates must be tagged with this cluster in the same request.
        new iam.PolicyStatement({
          sid: 'LaunchCreatesClusterTaggedResources',
          actions: ['ec2:RunInstances', 'ec2:CreateFleet', 'ec2:CreateLaunchTemplate'],
          resources: CreatedByLaunch.map((r) => ec2Arn(stack, r)),
          conditions: { StringEquals: { [`aws:RequestTag/${tag}`]: ClusterTagValue } },
        }),
        // Tagging only as part of those creating calls, and only with the cluster tag present.
        new iam.PolicyStatement({
          sid: 'TagOnLaunchOnly',
          actions: ['ec2:CreateTags'],
          resources: CreatedByLaunch.map((r) => ec2Arn(stack, r)),
          conditions: {
            StringEquals: {
              [`aws:RequestTag/${tag}`]: ClusterTagValue,
              'ec2:CreateAction': ['RunInstances', 'CreateFleet', 'CreateLaunchTemplate'],
            },
          },
        }),
        new iam.PolicyStatement({
          sid: 'PassNodeRoleToEc2',
          actions: ['iam:PassRole'],
          resources: [t.nodeRoleArn],
          conditions: { StringEquals: { 'iam:PassedToService': 'ec2.amazonaws.com' } },
        }),
        // EKS-optimised AMI aliases (EC2NodeClass amiSelectorTerms alias) resolve through public SSM parameters.
        new iam.PolicyStatement({
          sid: 'ReadPublicAmiParameters',
          actions: ['ssm:GetParameter'],
          resources: [`arn:${Aws.PARTITION}:ssm:${stack.region}::parameter/aws/service/*`],
        }),
      ];
    case 'ec2Terminate':
      return [
        new iam.PolicyStatement({
          sid: 'TerminateClusterTaggedOnly',
          actions: ['ec2:TerminateInstances'],
          resources: [ec2Arn(stack, 'instance/*')],
          conditions: { StringEquals: { [`aws:ResourceTag/${tag}`]: ClusterTagValue } },
        }),
      ];
    case 'startTermination': {
      // StartExecution only (shared/aws/sfn-termination-starter.ts): nothing a function runs reads executions back.
      if (!t.stateMachineArn) throw new Error('startTermination needs the termination state machine');
      return [new iam.PolicyStatement({ sid: 'StartTermination', actions: ['states:StartExecution'], resources: [t.stateMachineArn] })];
    }
    case 'putEvents':
      return [new iam.PolicyStatement({ sid: 'PutEventsOnNodefleetBus', actions: ['events:PutEvents'], resources: [t.eventBusArn] })];
  }
}
