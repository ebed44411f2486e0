/**
 * The AWS calls nodefleet's code makes, as IAM actions: per adapter method (the adapters of this
 * folder) and per function (the adapter methods its code uses). Reviewed when a call is added:
 * - test/unit/infra/iam-calls.test.ts drives every adapter method against mocked SDK clients and
 *   fails when a method sends an action its row does not list (or lists one it never sends);
 * - test/unit/infra/iam-simulation.test.ts derives each function's port calls from its source and
 *   fails when they differ from its row here, then evaluates every call of the row, built by the
 *   real adapters, against the function's synthesized IAM policy (must be Allowed), and fails on a
 *   permission no call of the row needs.
 * Nothing at run time reads these tables.
 */

/** IAM actions each adapter method sends. */
export const AdapterCalls = {
  /** Ec2CloudProvider.create (ec2.ts): the launch template (looked up, created once) and the fleet. */
  'cloud.create': ['ec2:DescribeLaunchTemplates', 'ec2:CreateLaunchTemplate', 'ec2:CreateFleet'],
  'cloud.terminate': ['ec2:TerminateInstances'],
  'cloud.get': ['ec2:DescribeInstances'],
  'cloud.list': ['ec2:DescribeInstances'],
  'cloud.collectLaunchTemplates': ['ec2:DescribeLaunchTemplates', 'ec2:DeleteLaunchTemplate'],
  /** Ec2NodeClassResolver.resolve (node-class-resolver.ts), part of every launch: subnets, security groups, AMIs (alias → public SSM parameter), capacity reservations. */
  'resolver.resolve': ['ec2:DescribeSubnets', 'ec2:DescribeSecurityGroups', 'ec2:DescribeImages', 'ec2:DescribeCapacityReservations', 'ssm:GetParameter'],
  /** EksConnectionProvider (eks.ts): endpoint + CA for the Kubernetes client and the launch's user data. */
  'eks.connect': ['eks:DescribeCluster'],
  /** DynamoNodeClaimStore (dynamo-node-claim-store.ts). create: the claims epoch (conditional put) and the claim. */
  'store.create': ['dynamodb:PutItem'],
  /** The claims epoch: read, recorded when absent (conditional put). */
  'store.claimsEpochMs': ['dynamodb:GetItem', 'dynamodb:PutItem'],
  'store.get': ['dynamodb:GetItem'],
  'store.list': ['dynamodb:Query'],
  'store.listInFlight': ['dynamodb:Query'],
  'store.getByInstanceId': ['dynamodb:Query'],
  'store.update': ['dynamodb:PutItem'],
  'store.delete': ['dynamodb:DeleteItem'],
  /** DynamoUnavailableOfferings (dynamo-unavailable-offerings.ts). */
  'unavailable.mark': ['dynamodb:PutItem'],
  'unavailable.list': ['dynamodb:Query'],
  /** DynamoBudgetCounter (dynamo-budget-counter.ts). */
  'budgets.take': ['dynamodb:PutItem', 'dynamodb:GetItem', 'dynamodb:UpdateItem'],
  'budgets.release': ['dynamodb:UpdateItem'],
  /** The disruption loop renewing its slot's lease at each step (conditional update). */
  'budgets.renew': ['dynamodb:UpdateItem'],
  'budgets.holders': ['dynamodb:GetItem'],
  /** SfnTerminationStarter (sfn-termination-starter.ts). */
  'termination.start': ['states:StartExecution'],
  /** S3ClusterViewStore (s3-cluster-view-store.ts): the functions read the cluster view, the agent writes it. */
  'views.get': ['s3:GetObject'],
  'views.put': ['s3:PutObject'],
  /** EventBridgePublisher (eventbridge-publisher.ts). */
  'publisher.publish': ['events:PutEvents'],
  /** CatalogRefresher.get (catalog-refresh.ts): zones, offerings, types, spot prices; on-demand prices. */
  'catalogRefresher.get': [
    'ec2:DescribeAvailabilityZones',
    'ec2:DescribeInstanceTypeOfferings',
    'ec2:DescribeInstanceTypes',
    'ec2:DescribeSpotPriceHistory',
    'pricing:GetProducts',
  ],
  /**
   * Powertools idempotency on the table (shared/runtime/middleware.ts idempotencyStore): record in
   * progress, then completed; read when a failed conditional put returns no old item; deleted when
   * the handler throws.
   */
  idempotency: ['dynamodb:PutItem', 'dynamodb:GetItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'],
  /** Lambda's SQS event source mapping, on the function's role (not an adapter: the trigger of a queue function). */
  'queue.consume': ['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:ChangeMessageVisibility', 'sqs:GetQueueAttributes'],
} as const satisfies Record<string, readonly string[]>;

/** An adapter method of {@link AdapterCalls}. */
export type AdapterCall = keyof typeof AdapterCalls;

/**
 * Each function's AWS calls: the adapter methods its code uses (derived from the source and
 * compared by the simulation test), plus what they imply: `eks.connect` for any Kubernetes call or
 * launch, `resolver.resolve` for a launch, `catalogRefresher.get` and `idempotency` where the
 * handler uses them, `queue.consume` for a queue-triggered function. Keys are the stack's function
 * names (termination tasks: `termination<Task>`).
 */
export const FunctionAwsCalls: Record<string, readonly AdapterCall[]> = {
  provisioner: [
    'cloud.create',
    'resolver.resolve',
    'eks.connect',
    'store.create',
    'store.delete',
    'store.get',
    'store.getByInstanceId',
    'store.listInFlight',
    'store.update',
    'unavailable.list',
    'unavailable.mark',
    'catalogRefresher.get',
    'idempotency',
    'views.get',
  ],
  registration: ['cloud.get', 'eks.connect', 'store.get', 'store.getByInstanceId', 'store.update', 'termination.start'],
  disruption: [
    'budgets.holders',
    'budgets.release',
    'budgets.renew',
    'budgets.take',
    'cloud.create',
    'cloud.list',
    'resolver.resolve',
    'eks.connect',
    'store.create',
    'store.delete',
    'store.get',
    'store.list',
    'store.update',
    'termination.start',
    'unavailable.list',
    'unavailable.mark',
    'catalogRefresher.get',
    'views.get',
  ],
  gc: [
    'budgets.holders',
    'budgets.release',
    'cloud.collectLaunchTemplates',
    'cloud.get',
    'cloud.list',
    'cloud.terminate',
    'eks.connect',
    'store.claimsEpochMs',
    'store.delete',
    'store.get',
    'store.list',
    'store.update',
    'termination.start',
  ],
  interruption: [
    'budgets.holders',
    'cloud.get',
    'eks.connect',
    'store.getByInstanceId',
    'store.list',
    'store.update',
    'termination.start',
    'unavailable.mark',
    'queue.consume',
  ],
  // Every task checks its target through functions/termination/target.ts (the claim, the live Node, the instance).
  terminationCordon: ['cloud.get', 'eks.connect', 'store.get', 'store.update'],
  // …and asks the provisioner for capacity due before the cutoff (source nodefleet.termination).
  terminationDrain: ['cloud.get', 'eks.connect', 'publisher.publish', 'store.get', 'store.update'],
  terminationCutoff: ['cloud.get', 'eks.connect', 'store.get', 'store.update'],
  terminationTerminateInstance: ['cloud.get', 'cloud.terminate', 'eks.connect', 'store.get', 'store.update'],
  terminationDeleteNode: ['cloud.get', 'eks.connect', 'store.get', 'store.update'],
  terminationFinalize: ['budgets.release', 'store.get', 'store.update'],
  terminationRecordFailure: ['store.get', 'store.update'],
};

/**
 * The in-cluster agent's AWS calls (its own role, AgentRole in the stack; not a Lambda): events to
 * the bus and the cluster view.
 */
export const AgentAwsCalls: readonly AdapterCall[] = ['publisher.publish', 'views.put'];
