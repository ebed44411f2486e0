/**
 * The one source of truth shared by the CDK stack (infra/aws), the embedded environment
 * (infra/local) and the functions: DynamoDB key design, EventBridge event patterns,
 * event sources / detail-types, and environment variable names.
 */

/** How often the Scheduler starts the disruption loop (seconds): its plan step runs once per period. */
export const DisruptionLoopPeriodSeconds = 60;

/** Event source and detail-types the in-cluster agent publishes. */
export const AgentSource = 'nodefleet.agent';
export const DetailTypeUnschedulablePods = 'Unschedulable Pods';
export const DetailTypeNodeLifecycle = 'Node Lifecycle';
/** A karpenter.sh/v1 NodeClaim object started being deleted (`kubectl delete nodeclaim`): registration starts its termination. */
export const DetailTypeNodeClaimLifecycle = 'NodeClaim Lifecycle';
/** Every detail-type the agent publishes: all the bus's policy and the agent's role let it send (with {@link AgentSource}). */
export const AgentDetailTypes = [DetailTypeUnschedulablePods, DetailTypeNodeLifecycle, DetailTypeNodeClaimLifecycle] as const;
/**
 * Event source of the termination's Drain task: an `Unschedulable Pods` event without pods when
 * capacity is due for pods only the terminationGracePeriod cutoff will move (a full provisioner
 * pass; the provisioner reads the pods live and the deadline from the NodeClaim record).
 */
export const TerminationSource = 'nodefleet.termination';
/** Every detail-type the Drain task publishes (with {@link TerminationSource}). */
export const TerminationDetailTypes = [DetailTypeUnschedulablePods] as const;
/** Schema version carried in every agent event's detail (`schemaVersion`). */
export const AgentSchemaVersion = '1';

/** EC2 / Health event kinds the interruption function handles (as EventBridge delivers them). */
export const DetailTypeSpotInterruption = 'EC2 Spot Instance Interruption Warning';
export const DetailTypeRebalance = 'EC2 Instance Rebalance Recommendation';
export const DetailTypeStateChange = 'EC2 Instance State-change Notification';
export const DetailTypeCapacityReservationInterruption = 'EC2 Capacity Reservation Instance Interruption Warning';
export const DetailTypeHealth = 'AWS Health Event';

/** An EventBridge event pattern (the subset nodefleet uses: exact values and prefix/anything-but are not needed). */
export interface EventPattern {
  source: string[];
  'detail-type': string[];
  detail?: Record<string, unknown>;
}

/** EventBridge rules, by name: the CDK stack creates exactly these; the local bus routes with them. */
export const EventRules = {
  /** Unschedulable pods (the agent's, or the termination's request for a full pass) → provisioner. */
  provisioner: { source: [AgentSource, TerminationSource], 'detail-type': [DetailTypeUnschedulablePods] },
  /** Node added / ready / deleted, NodeClaim object being deleted → registration. */
  registration: { source: [AgentSource], 'detail-type': [DetailTypeNodeLifecycle, DetailTypeNodeClaimLifecycle] },
  spotInterruption: { source: ['aws.ec2'], 'detail-type': [DetailTypeSpotInterruption] },
  rebalance: { source: ['aws.ec2'], 'detail-type': [DetailTypeRebalance] },
  stateChange: { source: ['aws.ec2'], 'detail-type': [DetailTypeStateChange] },
  capacityReservationInterruption: { source: ['aws.ec2'], 'detail-type': [DetailTypeCapacityReservationInterruption] },
  scheduledChange: {
    source: ['aws.health'],
    'detail-type': [DetailTypeHealth],
    detail: { service: ['EC2'], eventTypeCategory: ['scheduledChange'] },
  },
} satisfies Record<string, EventPattern>;

/** Rules whose target is the interruption queue (SQS → interruption function). */
export const InterruptionRuleNames = ['spotInterruption', 'rebalance', 'stateChange', 'capacityReservationInterruption', 'scheduledChange'] as const;

/**
 * Whether `event` matches `pattern` (EventBridge exact-match semantics: every pattern key must be
 * present and its value one of the listed values; nested objects recurse).
 */
export function matchesPattern(pattern: Record<string, unknown>, event: Record<string, unknown>): boolean {
  for (const [k, want] of Object.entries(pattern)) {
    const got = event[k];
    if (Array.isArray(want)) {
      const values = Array.isArray(got) ? got : [got];
      if (!values.some((v) => want.includes(v))) return false;
    } else if (want && typeof want === 'object') {
      if (!got || typeof got !== 'object') return false;
      if (!matchesPattern(want as Record<string, unknown>, got as Record<string, unknown>)) return false;
    }
  }
  return true;
}

/** Key of a cluster's view object in the view bucket (docs/cluster-state.md). */
export function clusterViewKey(cluster: string): string {
  return `clusters/${cluster}/view.json.gz`;
}

/**
 * DynamoDB: one table.
 * - NodeClaim:        pk = `CLUSTER#<cluster>`, sk = `NODECLAIM#<name>`; `instanceId` (GSI), `version`,
 *                     `inFlightKeyMs` (LSI sort key, only while the claim is in flight)
 * - Budget counter:   pk = `CLUSTER#<cluster>`, sk = `BUDGET#<nodePool>`; `inFlight` (number), `holders` (map claim → since)
 * - ICE cache:        pk = `CLUSTER#<cluster>`, sk = `ICE#<type>#<zone>#<capacityType>`; `ttl`
 * - Idempotency:      pk = `idempotency#<function>`, sk = idempotency key (Powertools, `ttl` as expiry attribute)
 * - Disruption state: pk = `CLUSTER#<cluster>`, sk = `DISRUPTION#<command id>` (pending validation)
 * - Claims epoch:     pk = `CLUSTER#<cluster>`, sk = `META#claims-epoch`; `createdAt` (RFC 3339): when this
 *                     table began keeping the cluster's claims, written once (conditional put) by the first
 *                     claim write or gc pass (NodeClaimStore.claimsEpochMs; gc's orphan guard)
 */
export const Table = {
  partitionKey: 'pk',
  sortKey: 'sk',
  ttlAttribute: 'ttl',
  instanceIdIndex: 'byInstanceId',
  instanceIdAttribute: 'instanceId',
  /**
   * Sparse local secondary index of the claims in flight: hash `pk`, range {@link Table.inFlightAttribute}.
   * Local, not global, because an LSI can be read strongly consistently (a claim the previous
   * provisioning pass wrote is never missed) and a GSI cannot.
   */
  inFlightIndex: 'inFlight',
  /**
   * Number, epoch ms: shared/api/nodeclaim.ts `inFlightKeyMs` — present only while the claim is
   * Pending, Launched, Registered or Initialized, so only those claims are in {@link Table.inFlightIndex}.
   */
  inFlightAttribute: 'inFlightKeyMs',
} as const;

/**
 * The table as a DynamoDB `CreateTable` input (API shape, plain data): the CDK stack and the
 * embedded environment (dynalite) both create the table and its indexes from this one definition.
 * On-demand billing; GSI `byInstanceId` (hash `instanceId`, all attributes) for interruption and
 * registration lookups; LSI `inFlight` (hash `pk`, range `inFlightKeyMs` number, all attributes:
 * a consistent Query of it reads no table item) for the provisioner; TTL on `ttl` is enabled
 * separately (UpdateTimeToLive / CDK `timeToLiveAttribute`).
 *
 * An LSI exists only from the table's creation: adding one replaces the table (README, upgrade
 * notes). With an LSI, each partition (one cluster's items with their index entries) is limited
 * to 10 GB (NodeClaims are ≤ ~2.5 KB: millions of them).
 */
export function tableCreateInput(tableName: string) {
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST' as const,
    AttributeDefinitions: [
      { AttributeName: Table.partitionKey, AttributeType: 'S' as const },
      { AttributeName: Table.sortKey, AttributeType: 'S' as const },
      { AttributeName: Table.instanceIdAttribute, AttributeType: 'S' as const },
      { AttributeName: Table.inFlightAttribute, AttributeType: 'N' as const },
    ],
    KeySchema: [
      { AttributeName: Table.partitionKey, KeyType: 'HASH' as const },
      { AttributeName: Table.sortKey, KeyType: 'RANGE' as const },
    ],
    GlobalSecondaryIndexes: [
      {
        IndexName: Table.instanceIdIndex,
        KeySchema: [{ AttributeName: Table.instanceIdAttribute, KeyType: 'HASH' as const }],
        Projection: { ProjectionType: 'ALL' as const },
      },
    ],
    LocalSecondaryIndexes: [
      {
        IndexName: Table.inFlightIndex,
        KeySchema: [
          { AttributeName: Table.partitionKey, KeyType: 'HASH' as const },
          { AttributeName: Table.inFlightAttribute, KeyType: 'RANGE' as const },
        ],
        Projection: { ProjectionType: 'ALL' as const },
      },
    ],
  };
}

export const keys = {
  cluster: (cluster: string) => `CLUSTER#${cluster}`,
  nodeClaim: (name: string) => `NODECLAIM#${name}`,
  budget: (nodePool: string) => `BUDGET#${nodePool}`,
  ice: (instanceType: string, zone: string, capacityType: string) => `ICE#${instanceType}#${zone}#${capacityType}`,
  /** The cluster's claims epoch item (one per cluster partition; outside the `NODECLAIM#` prefix, so no claim list reads it). */
  claimsEpoch: () => 'META#claims-epoch',
  /** Partition of a function's Powertools idempotency records. */
  idempotency: (functionName: string) => `idempotency#${functionName}`,
};

/** Environment variable names (the CDK construct sets these; each function parses them once). */
/**
 * Values of {@link Env.packing} (and of the NodePool annotation nodefleet.io/packing, the CDK
 * context `packing`, `plan --packing`): `cost`, nodefleet's default, or `karpenter`
 * (shared/scheduling/types.ts `SchedulingSettings.packing`; precedence in shared/api/packing.ts).
 */
export const PackingModes = ['cost', 'karpenter'] as const;
export type PackingMode = (typeof PackingModes)[number];

/** EKS cluster names: 1–100 characters, alphanumerics, hyphens and underscores, starting alphanumeric (EKS CreateCluster). */
const ClusterNamePattern = /^[0-9A-Za-z][A-Za-z0-9_-]{0,99}$/;

/**
 * Why `name` cannot be an EKS cluster name, or undefined when it can. One rule for the CDK context
 * `clusterName` (infra/aws/config.ts) and the CLI's `--cluster-name`.
 */
export function clusterNameProblem(name: string): string | undefined {
  return ClusterNamePattern.test(name)
    ? undefined
    : `must be an EKS cluster name (letters, digits, '-' and '_', starting with a letter or digit, max 100), got '${name}'`;
}

/** IAM role names are at most 64 characters; past that the CDK stack lets CloudFormation name the role. */
const MaxRoleNameLength = 64;

/**
 * The node role the CDK stack deploys for a cluster (`nodefleet-node-<cluster>`; its instance
 * profile has the same name), or undefined when that name is too long and CloudFormation
 * generates one (read it from the stack output NodeRoleName). Nodes launch only with this role:
 * the functions may pass no other (shared/api/iam-policy.ts).
 */
export function nodeRoleNameOf(clusterName: string): string | undefined {
  const name = `nodefleet-node-${clusterName}`;
  return name.length <= MaxRoleNameLength ? name : undefined;
}

/**
 * Why an EC2NodeClass `spec.role` cannot be used with the stack's node role `nodeRoleName`, or
 * undefined when it can (the same role, or `spec.instanceProfile` set instead). One message for
 * `validate --cluster-name` and the launch (shared/aws/ec2.ts), which both refuse it.
 */
export function nodeRoleProblem(spec: { role?: string; instanceProfile?: string }, nodeRoleName: string): string | undefined {
  if (spec.instanceProfile || !spec.role || spec.role === nodeRoleName) return undefined;
  return `spec.role: "${spec.role}" is not the node role nodefleet deploys ("${nodeRoleName}", stack output NodeRoleName): nodes launch only with that role's instance profile, so set spec.role: ${nodeRoleName}`;
}

export const Env = {
  clusterName: 'NODEFLEET_CLUSTER_NAME',
  tableName: 'NODEFLEET_TABLE_NAME',
  region: 'AWS_REGION',
  stateMachineArn: 'NODEFLEET_TERMINATION_STATE_MACHINE_ARN',
  eventBusName: 'NODEFLEET_EVENT_BUS_NAME',
  nodeRoleName: 'NODEFLEET_NODE_ROLE_NAME',
  instanceProfileName: 'NODEFLEET_INSTANCE_PROFILE_NAME',
  /** Kubeconfig path: set only in the embedded environment (otherwise EKS token auth). */
  kubeconfig: 'NODEFLEET_KUBECONFIG',
  /** Endpoint overrides for the embedded environment. */
  dynamodbEndpoint: 'NODEFLEET_DYNAMODB_ENDPOINT',
  ec2Endpoint: 'NODEFLEET_EC2_ENDPOINT',
  /** S3 bucket of the cluster view (agent writes, functions read); unset = functions list the cluster live. */
  viewBucket: 'NODEFLEET_VIEW_BUCKET',
  /** S3 endpoint override (the embedded environment's s3rver). */
  s3Endpoint: 'NODEFLEET_S3_ENDPOINT',
  logLevel: 'POWERTOOLS_LOG_LEVEL',
  /** Packing mode of the provisioner's rounds (`cost` | `karpenter`); NodePool annotations win (shared/api/packing.ts). */
  packing: 'NODEFLEET_PACKING',
  /** `true`: the deployment runs beside Karpenter and manages only NodePools of nodefleet.io EC2NodeClasses (docs/migration.md). */
  besideKarpenter: 'NODEFLEET_BESIDE_KARPENTER',
} as const;
