/**
 * The IAM policies of nodefleet's function roles, as plain IAM JSON: one source for the CDK stack
 * (infra/aws/iam.ts turns each statement into an `iam.PolicyStatement`, with CloudFormation tokens
 * for partition, region, account and ARNs) and the embedded environment (infra/local, which
 * authorizes every local EC2 call against the calling function's documents, with concrete values),
 * as contract.ts is for the event patterns.
 *
 * No action is a wildcard; resources are `*` only for actions without resource-level permissions
 * (EC2 Describe*, pinned to the region by condition; pricing:GetProducts). The EC2 scoping follows
 * Karpenter's controller policy (aws/karpenter-provider-aws, getting-started `cloudformation.yaml`):
 * - what a launch creates (fleet, instance, volume, network interface, launch template, spot
 *   request) must carry, in the request, the cluster tag `kubernetes.io/cluster/<cluster>=owned`,
 *   `eks:eks-cluster-name=<cluster>` and a `karpenter.sh/nodepool` tag; tagging only as part of
 *   those creating calls;
 * - launch templates used, instances terminated and launch templates deleted must carry the
 *   cluster tag and a NodePool tag;
 * - and, beyond Karpenter's policy, all of those carry nodefleet's own `nodefleet.io/cluster=<cluster>`
 *   (labels.ts TagNodefleetCluster, written by every launch: shared/aws/ec2.ts launchTags /
 *   templateTags), so no function can terminate or delete what Karpenter launched in the same cluster;
 * - subnets, security groups, capacity reservations and placement groups may belong to another
 *   account (shared VPC): any account, in this region;
 * - the node role may be passed to EC2 only (`ec2.amazonaws.com`, and `ec2.amazonaws.com.cn` in
 *   the aws-cn partition).
 */

import { AgentDetailTypes, AgentSource, Table, TerminationDetailTypes, TerminationSource, clusterViewKey, keys } from './contract.ts';
import { LabelNodePool, TagNodeClaim, TagNodefleetCluster } from './labels.ts';

/** Named permission sets; each maps to statements in {@link policyStatements}. */
export type Permission =
  /**
   * One DynamoDB item action on the nodefleet table (Query: on the table, the byInstanceId GSI or
   * the in-flight LSI, one permission each), so each function gets exactly the actions its adapter calls send (shared/aws/calls.ts; the IAM simulation test fails
   * on one granted and never sent). See {@link TablePermissionActions}.
   */
  | TablePermission
  /**
   * The function's own Powertools idempotency records (partition `idempotency#<function>`,
   * contract.ts keys.idempotency): {@link IdempotencyActions}. Needs {@link PolicyTargets.functionName}.
   */
  | 'tableIdempotency'
  /** eks:DescribeCluster on this cluster (endpoint + CA for the Kubernetes client); RBAC via the access entry. */
  | 'kube'
  /** ec2:DescribeInstances (the cloud provider's get / list; no resource-level permissions). */
  | 'ec2Describe'
  /** Live catalog data: EC2 zones / offerings / types / spot prices and pricing:GetProducts. */
  | 'catalogRefresh'
  /**
   * CreateFleet / RunInstances / CreateLaunchTemplate, tag-scoped; PassRole of the node role; SSM AMI
   * parameters; the Describe calls of a launch (launch template lookup, node-class resolution).
   */
  | 'ec2Launch'
  /** TerminateInstances on nodefleet's instances of this cluster (tag nodefleet.io/cluster) with a NodePool tag only. */
  | 'ec2Terminate'
  /** DescribeLaunchTemplates, and DeleteLaunchTemplate on nodefleet's launch templates of this cluster only (launch-template GC). */
  | 'launchTemplateGc'
  /** Start executions of the termination state machine. */
  | 'startTermination'
  /** events:PutEvents on nodefleet's bus, of the agent's source and detail-types only (contract.ts). */
  | 'putEvents'
  /** events:PutEvents on nodefleet's bus, of the termination's source and detail-types only (contract.ts TerminationSource). */
  | 'putTerminationEvents'
  /** s3:GetObject of this cluster's view object in the view bucket (docs/cluster-state.md). */
  | 'viewRead'
  /** s3:PutObject of this cluster's view object (the agent). */
  | 'viewWrite';

/** Each function's permission sets, from the ports its code uses (infra/aws/functions.ts builds the roles from these). */
export const FunctionPermissions = {
  // NodeClaims (create, get, in-flight list = LSI query, update = put, delete), the ICE cache (put, query), its idempotency records.
  // The termination deadline of a deleting node's claim by instance id (GSI): capacity due before its cutoff.
  provisioner: [
    'tableGet',
    'tablePut',
    'tableDelete',
    'tableQuery',
    'tableQueryInFlight',
    'tableQueryByInstanceId',
    'tableIdempotency',
    'kube',
    'ec2Launch',
    'catalogRefresh',
    'viewRead',
  ],
  // NodeClaims by id and by instance id (GSI), marked Registered / Initialized; DescribeInstances for the node-name check (PrivateDnsName).
  // Start executions of the termination state machine for a deleted Node holding the finalizer.
  registration: ['tableGet', 'tablePut', 'tableQueryByInstanceId', 'kube', 'ec2Describe', 'startTermination'],
  // The provisioner's table use plus budget counters (take: put/get/update, release: update);
  // DescribeInstances for subnet and security-group drift.
  disruption: [
    'tableGet',
    'tablePut',
    'tableUpdate',
    'tableDelete',
    'tableQuery',
    'kube',
    'ec2Describe',
    'ec2Launch',
    'catalogRefresh',
    'startTermination',
    'viewRead',
  ],
  // NodeClaims (get, list, update, delete) and budget slots (holders: get, release: update).
  gc: ['tableGet', 'tablePut', 'tableUpdate', 'tableDelete', 'tableQuery', 'kube', 'ec2Describe', 'ec2Terminate', 'launchTemplateGc', 'startTermination'],
  // NodeClaims by instance id (GSI) and list, marked; ICE cache marks; budget holders: no update, no delete;
  // DescribeInstances to confirm a notice with EC2 before any cutoff.
  interruption: ['tableGet', 'tablePut', 'tableQuery', 'tableQueryByInstanceId', 'kube', 'startTermination', 'ec2Describe'],
} as const satisfies Record<string, readonly Permission[]>;

/** A function of {@link FunctionPermissions}. */
export type FunctionName = keyof typeof FunctionPermissions;

/**
 * Permissions of the termination state machine's task functions, by task name (the `Xxx` of
 * `${XxxFunctionArn}` in statemachines/termination.asl.json), from the ports each
 * functions/termination/<task>.ts uses. A task not listed gets {@link DefaultTerminationTaskPermissions}.
 */
export const TerminationTaskPermissions: Record<string, readonly Permission[]> = {
  /** Checks the claim's Node and instance agree (DescribeInstances), taints/cordons the Node, marks the NodeClaim (get, put). */
  Cordon: ['tableGet', 'tablePut', 'kube', 'ec2Describe'],
  /**
   * Evicts pods (Eviction API), deletes pods of a done node; heartbeats on the NodeClaim (get, put);
   * asks the provisioner for capacity due before the cutoff (PutEvents, the termination's source).
   */
  Drain: ['tableGet', 'tablePut', 'kube', 'ec2Describe', 'putTerminationEvents'],
  /** Reads the NodeClaim (its target and deadline), deletes whatever is left at the grace-period deadline. */
  Cutoff: ['tableGet', 'tablePut', 'kube', 'ec2Describe'],
  /** TerminateInstances on the claim's (cluster- and NodePool-tagged) instance, marks the NodeClaim. */
  TerminateInstance: ['tableGet', 'tablePut', 'kube', 'ec2Describe', 'ec2Terminate'],
  /** Reads the NodeClaim (its target), deletes the Node object. */
  DeleteNode: ['tableGet', 'tablePut', 'kube', 'ec2Describe'],
  /** Marks the NodeClaim terminated (get, put) and releases the budget slot (update). */
  Finalize: ['tableGet', 'tablePut', 'tableUpdate'],
  /** Records a failed termination on the NodeClaim (get, put). */
  RecordFailure: ['tableGet', 'tablePut'],
};

/** A new task's default until it is listed above: the NodeClaim (DynamoDB get, put) and the Node / its pods (Kubernetes). */
export const DefaultTerminationTaskPermissions: readonly Permission[] = ['tableGet', 'tablePut', 'kube'];

/** Tag every EC2 resource nodefleet creates carries (Karpenter's and the EKS cloud provider's ownership tag). */
export function clusterTagKey(clusterName: string): string {
  return `kubernetes.io/cluster/${clusterName}`;
}
/** Value of {@link clusterTagKey}. */
export const ClusterTagValue = 'owned';
/** Tag with the EKS cluster name (Karpenter's `eks:eks-cluster-name`). */
export const EksClusterNameTagKey = 'eks:eks-cluster-name';
/** Tag with the NodePool name: the same key as the node label, as Karpenter tags. */
export const NodePoolTagKey = LabelNodePool;
/** Tag with the EC2NodeClass name (Karpenter's `karpenter.k8s.aws/ec2nodeclass`). */
export const NodeClassTagKey = 'karpenter.k8s.aws/ec2nodeclass';
/** Tag keys Karpenter sets itself, which an EC2NodeClass's `spec.tags` may not name (KA CRD CEL). */
export const RestrictedTagKeys = [EksClusterNameTagKey, NodePoolTagKey, TagNodeClaim, NodeClassTagKey];

/** EC2 Describe call of the cloud provider's get / list (shared/aws/ec2.ts). */
export const Ec2DescribeActions = ['ec2:DescribeInstances'];

/**
 * EC2 Describe calls of a launch: the launch-template lookup (shared/aws/ec2.ts) and the node-class
 * resolver (shared/aws/node-class-resolver.ts: images, subnets, security groups, capacity reservations).
 */
export const LaunchDescribeActions = [
  'ec2:DescribeCapacityReservations',
  'ec2:DescribeImages',
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

/**
 * The DynamoDB permission sets, one item action each, as the NodeClaim store, ICE cache, budget
 * counters and Powertools idempotency send them (shared/aws/calls.ts `AdapterCalls`).
 */
export const TablePermissionActions = {
  tableGet: 'dynamodb:GetItem',
  tablePut: 'dynamodb:PutItem',
  tableUpdate: 'dynamodb:UpdateItem',
  tableDelete: 'dynamodb:DeleteItem',
  /** On the table only (list by cluster, ICE cache). */
  tableQuery: 'dynamodb:Query',
  /** On the byInstanceId GSI only (NodeClaimStore.getByInstanceId). */
  tableQueryByInstanceId: 'dynamodb:Query',
  /** On the in-flight LSI only (NodeClaimStore.listInFlight: the provisioner). */
  tableQueryInFlight: 'dynamodb:Query',
} as const;
/** A DynamoDB permission set of {@link TablePermissionActions}. */
export type TablePermission = keyof typeof TablePermissionActions;

/**
 * What Powertools idempotency sends (shared/runtime/middleware.ts idempotencyStore): the record in
 * progress (conditional put; a get when the failed put returns no old item), completed (update), or
 * deleted when the handler throws.
 */
export const IdempotencyActions = ['dynamodb:PutItem', 'dynamodb:GetItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'];

/** Service principals the node role may be passed to (EC2; EC2 in the aws-cn partition). */
export const Ec2ServicePrincipals = ['ec2.amazonaws.com', 'ec2.amazonaws.com.cn'];

/** The resources the statements refer to: literal values, or CloudFormation tokens in the CDK stack. */
export interface PolicyTargets {
  partition: string;
  region: string;
  account: string;
  clusterName: string;
  tableArn: string;
  nodeRoleArn: string;
  eventBusArn: string;
  /** Undefined when the state machine does not exist yet (its definition file is missing). */
  stateMachineArn?: string;
  /** The cluster view bucket (`arn:<partition>:s3:::<bucket>`); without it viewRead / viewWrite allow nothing. */
  viewBucketArn?: string;
  /** The function whose role this is (`provisioner`): its idempotency partition (tableIdempotency). */
  functionName?: string;
}

/** One statement as IAM JSON. */
export interface PolicyStatementJson {
  Sid: string;
  Effect: 'Allow';
  Action: string[];
  Resource: string[];
  Condition?: Record<string, Record<string, string | string[]>>;
}

/** An IAM policy document. */
export interface PolicyDocumentJson {
  Version: '2012-10-17';
  Statement: PolicyStatementJson[];
}

/** Resources a launch creates: each must carry the cluster, EKS cluster name and NodePool tags in the request. */
export const CreatedByLaunch = ['fleet', 'instance', 'volume', 'network-interface', 'launch-template', 'spot-instances-request'];
/** Existing resources a launch uses, possibly owned by another account (shared VPC) or by AWS (AMIs, snapshots). */
export const UsedByLaunch = { accountless: ['image', 'snapshot'], anyAccount: ['subnet', 'security-group', 'capacity-reservation', 'placement-group'] };

function allow(Sid: string, Action: string[], Resource: string[], Condition?: PolicyStatementJson['Condition']): PolicyStatementJson {
  return { Sid, Effect: 'Allow', Action, Resource, ...(Condition ? { Condition } : {}) };
}

/**
 * The statements of one permission set.
 * @throws Error when `startTermination` is asked for and there is no state machine.
 */
export function policyStatements(permission: Permission, t: PolicyTargets): PolicyStatementJson[] {
  const ec2 = (resource: string, account: string = t.account) => `arn:${t.partition}:ec2:${t.region}:${account}:${resource}`;
  const tag = clusterTagKey(t.clusterName);
  const inRegion = { StringEquals: { 'aws:RequestedRegion': t.region } };
  // Karpenter's conditions (the cluster's tags with exact values, some NodePool), plus nodefleet's own
  // cluster tag: Karpenter's instances in the same cluster carry Karpenter's tags too, never this one.
  const requestTags = {
    StringEquals: {
      [`aws:RequestTag/${TagNodefleetCluster}`]: t.clusterName,
      [`aws:RequestTag/${tag}`]: ClusterTagValue,
      [`aws:RequestTag/${EksClusterNameTagKey}`]: t.clusterName,
    },
    StringLike: { [`aws:RequestTag/${NodePoolTagKey}`]: '*' },
  };
  const resourceTags = {
    StringEquals: { [`aws:ResourceTag/${TagNodefleetCluster}`]: t.clusterName, [`aws:ResourceTag/${tag}`]: ClusterTagValue },
    StringLike: { [`aws:ResourceTag/${NodePoolTagKey}`]: '*' },
  };
  // Items of one partition only (dynamodb:LeadingKeys, a multivalued key: a set operator, and Null so
  // that a request without leading keys is not allowed vacuously). The table keeps each kind of item
  // of a cluster (NodeClaims, budget counters, ICE cache, claims epoch) in the one partition
  // `CLUSTER#<cluster>` (contract.ts), so keys cannot separate those kinds from one another.
  const inPartition = (pk: string) => ({ 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [pk] }, Null: { 'dynamodb:LeadingKeys': 'false' } });
  const cluster = inPartition(keys.cluster(t.clusterName));
  switch (permission) {
    case 'tableGet':
    case 'tablePut':
    case 'tableUpdate':
    case 'tableDelete':
      return [allow(`NodefleetTable${permission.slice('table'.length)}`, [TablePermissionActions[permission]], [t.tableArn], cluster)];
    case 'tableQuery':
      return [allow('NodefleetTableQuery', [TablePermissionActions.tableQuery], [t.tableArn], cluster)];
    case 'tableQueryByInstanceId':
      // The GSI's leading key is the instance id (any): read-only, on the index only.
      return [allow('NodefleetTableQueryByInstanceId', [TablePermissionActions.tableQueryByInstanceId], [`${t.tableArn}/index/${Table.instanceIdIndex}`])];
    case 'tableQueryInFlight':
      return [allow('NodefleetTableQueryInFlight', [TablePermissionActions.tableQueryInFlight], [`${t.tableArn}/index/${Table.inFlightIndex}`], cluster)];
    case 'tableIdempotency':
      if (!t.functionName) throw new Error('tableIdempotency needs the function name (its idempotency partition)');
      return [allow('OwnIdempotencyRecords', IdempotencyActions, [t.tableArn], inPartition(keys.idempotency(t.functionName)))];
    case 'kube':
      return [allow('DescribeThisCluster', ['eks:DescribeCluster'], [`arn:${t.partition}:eks:${t.region}:${t.account}:cluster/${t.clusterName}`])];
    case 'ec2Describe':
      return [allow('Ec2DescribeInRegion', Ec2DescribeActions, ['*'], inRegion)];
    case 'catalogRefresh':
      return [
        allow('CatalogDescribeInRegion', CatalogDescribeActions, ['*'], inRegion),
        // GetProducts has no resource-level permissions, and the request goes to the Pricing API's
        // endpoint region (shared/aws/catalog-refresh.ts pricingApiRegion), not this stack's: no
        // aws:RequestedRegion pin. Read-only public price list data.
        allow('ReadOnDemandPrices', PricingActions, ['*']),
      ];
    case 'ec2Launch':
      return [
        // Existing resources a launch uses (no request tags apply to them). AMIs and snapshots may
        // be AWS's or another account's (no account in their ARN); subnets and security groups may
        // be shared from another account (RAM), capacity reservations and placement groups too.
        allow(
          'LaunchUsesExistingResources',
          ['ec2:RunInstances', 'ec2:CreateFleet'],
          [...UsedByLaunch.accountless.map((r) => ec2(`${r}/*`, '')), ...UsedByLaunch.anyAccount.map((r) => ec2(`${r}/*`, '*'))],
        ),
        // nodefleet's own launch templates (created with the cluster and NodePool tags).
        allow('LaunchUsesOwnLaunchTemplates', ['ec2:RunInstances', 'ec2:CreateFleet'], [ec2('launch-template/*')], resourceTags),
        // What a launch creates must be tagged with this cluster and a NodePool in the same request.
        allow(
          'LaunchCreatesClusterTaggedResources',
          ['ec2:RunInstances', 'ec2:CreateFleet', 'ec2:CreateLaunchTemplate'],
          CreatedByLaunch.map((r) => ec2(`${r}/*`)),
          requestTags,
        ),
        // Tagging only as part of those creating calls, with the same tags present.
        allow(
          'TagOnLaunchOnly',
          ['ec2:CreateTags'],
          CreatedByLaunch.map((r) => ec2(`${r}/*`)),
          {
            ...requestTags,
            StringEquals: { ...requestTags.StringEquals, 'ec2:CreateAction': ['RunInstances', 'CreateFleet', 'CreateLaunchTemplate'] },
          },
        ),
        allow('PassNodeRoleToEc2', ['iam:PassRole'], [t.nodeRoleArn], { StringEquals: { 'iam:PassedToService': Ec2ServicePrincipals } }),
        // EKS-optimised AMI aliases (EC2NodeClass amiSelectorTerms alias) resolve through public SSM parameters.
        allow('ReadPublicAmiParameters', ['ssm:GetParameter'], [`arn:${t.partition}:ssm:${t.region}::parameter/aws/service/*`]),
        allow('LaunchDescribeInRegion', LaunchDescribeActions, ['*'], inRegion),
      ];
    case 'ec2Terminate':
      return [allow('TerminateClusterNodePoolInstancesOnly', ['ec2:TerminateInstances'], [ec2('instance/*')], resourceTags)];
    case 'launchTemplateGc':
      return [
        allow('DescribeLaunchTemplatesInRegion', ['ec2:DescribeLaunchTemplates'], ['*'], inRegion),
        allow('DeleteClusterNodePoolLaunchTemplatesOnly', ['ec2:DeleteLaunchTemplate'], [ec2('launch-template/*')], resourceTags),
      ];
    case 'startTermination':
      // StartExecution only (shared/aws/sfn-termination-starter.ts): nothing a function runs reads executions back.
      if (!t.stateMachineArn) throw new Error('startTermination needs the termination state machine');
      return [allow('StartTermination', ['states:StartExecution'], [t.stateMachineArn])];
    case 'putEvents':
      // events:source and events:detail-type are multivalued keys (Service Authorization Reference):
      // a set operator, and Null so that an entry without them is not allowed vacuously.
      return [
        allow('PutEventsOnNodefleetBus', ['events:PutEvents'], [t.eventBusArn], {
          'ForAllValues:StringEquals': { 'events:source': [AgentSource], 'events:detail-type': [...AgentDetailTypes] },
          Null: { 'events:source': 'false', 'events:detail-type': 'false' },
        }),
      ];
    case 'putTerminationEvents':
      return [
        allow('PutTerminationEventsOnNodefleetBus', ['events:PutEvents'], [t.eventBusArn], {
          'ForAllValues:StringEquals': { 'events:source': [TerminationSource], 'events:detail-type': [...TerminationDetailTypes] },
          Null: { 'events:source': 'false', 'events:detail-type': 'false' },
        }),
      ];
    case 'viewRead':
    case 'viewWrite': {
      // One object per cluster: only its key, not the bucket (no ListBucket either: a missing view
      // then reads as AccessDenied, which the reader treats like any unreadable view, listing live).
      if (!t.viewBucketArn) return []; // no view bucket (the embedded environment's EC2 authorizer): nothing to allow
      const object = `${t.viewBucketArn}/${clusterViewKey(t.clusterName)}`;
      return permission === 'viewRead' ? [allow('ReadClusterView', ['s3:GetObject'], [object])] : [allow('WriteClusterView', ['s3:PutObject'], [object])];
    }
  }
}

/** The policy document of a set of permissions (statement ids are unique: each set is listed once). */
export function policyDocument(permissions: readonly Permission[], t: PolicyTargets): PolicyDocumentJson {
  return { Version: '2012-10-17', Statement: [...new Set(permissions)].flatMap((p) => policyStatements(p, t)) };
}
