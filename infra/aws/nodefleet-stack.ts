/**
 * The nodefleet stack: every AWS resource for one EKS cluster.
 *
 *   agent ──PutEvents──► bus ─ rule provisioner ─► SQS FIFO (group = cluster) ─► provisioner
 *   termination Drain ─PutEvents─┘ (capacity due before the cutoff: a full pass, no pods)
 *                            └ rule registration ─► registration
 *   default bus ─ 5 interruption rules ─► SQS (SSE, DLQ) ─► interruption (batch, partial failures)
 *   Scheduler (1 min) ─► gc
 *   Scheduler (1 min) ─StartExecution─► disruption loop state machine ─► disruption (plan → Wait → act)
 *   disruption / interruption ─StartExecution─► termination state machine ─► task functions
 *
 * Function entries come from functions.ts (plus the ASL's task functions); names of env vars, the
 * DynamoDB key design and the event patterns come from shared/api/contract.ts.
 */
import { AgentSettingNames, RuntimeSettingNames } from '../../shared/api/settings.ts';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Annotations, CfnOutput, Duration, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as eks from 'aws-cdk-lib/aws-eks';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as scheduler from 'aws-cdk-lib/aws-scheduler';
import * as schedulerTargets from 'aws-cdk-lib/aws-scheduler-targets';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import {
  AgentDetailTypes,
  AgentSource,
  Env,
  EventRules,
  nodeRoleNameOf,
  Table,
  tableCreateInput,
  TerminationDetailTypes,
  TerminationSource,
  type EventPattern,
} from '../../shared/api/contract.ts';
import { kubernetesGroupOf, type NodefleetConfig } from './config.ts';
import {
  DefaultTerminationTaskPermissions,
  Functions,
  TerminationTaskMemoryMiB,
  TerminationTaskPermissions,
  TerminationTaskTimeoutSeconds,
  type FunctionSpec,
  type Permission,
} from './functions.ts';
import { statementsFor, type IamTargets } from './iam.ts';
import { addNagSuppressions } from './nag.ts';
import { protectBus, protectRuleQueue, protectViewBucket, type BusPublisher } from './resource-policies.ts';
import { Observability, type WatchedQueue } from './observability.ts';
import { MetricsNamespace } from '../../shared/api/metrics.ts';
import { readLoopDefinition, type LoopDefinition } from './loop.ts';
import { readTerminationDefinition, TerminationAslPath, type TerminationDefinition } from './termination.ts';

/**
 * Context flag for template tests only: build every function from a small inline stand-in
 * instead of bundling its entry with esbuild, and build all registry functions whether or not
 * their entry exists. Never set by synth.ts / app.ts, which bundle the real code.
 */
export const InlineCodeContextKey = 'nodefleet:inlineCodeForTests';

/** Managed policies every EKS worker node needs (EKS user guide, "Amazon EKS node IAM role"). */
export const NodeRoleManagedPolicies = [
  'AmazonEKSWorkerNodePolicy',
  'AmazonEKS_CNI_Policy',
  // Pull only (no List/Describe of repositories, images or scan findings): all a kubelet needs.
  'AmazonEC2ContainerRegistryPullOnly',
  'AmazonSSMManagedInstanceCore',
];

/** Interruption queue: Karpenter's CloudFormation keeps messages 300 s (a stale notice is useless). */
const InterruptionRetention = Duration.seconds(300);
/** 2 × the interruption function's timeout: 3 failed receives reach the DLQ (~2 min) before the 300 s retention drops the message. */
const InterruptionVisibility = Duration.seconds(40);
/** esbuild options of every function bundle (local esbuild, never Docker). */
export const BundlingOptions = {
  format: nodejs.OutputFormat.ESM,
  target: 'node22',
  mainFields: ['module', 'main'],
  minify: true,
  sourceMap: true,
  // Maps point at the repository's files instead of embedding them: smaller assets, faster synth.
  sourcesContent: false,
  // Some dependencies are CommonJS and call require(): give ESM output a require.
  banner: "import { createRequire as __nfCreateRequire } from 'node:module'; const require = __nfCreateRequire(import.meta.url);",
  // The locked AWS SDK (package-lock.json, the one the tests run), not the runtime's own copy.
  bundleAwsSDK: true,
  forceDockerBundling: false,
} satisfies nodejs.BundlingOptions;

/** A message failing this many receives goes to its queue's DLQ. */
const MaxReceiveCount = 3;
/** DLQs keep messages the SQS maximum, 14 days, so an operator can inspect and redrive. */
const DlqRetention = Duration.days(14);
/** Days after its last write that a cluster view object expires (an agent rewrites it at least every 20 s). */
export const ViewExpirationDays = 1;

/** Agent events are re-published by the agent's periodic re-list, so an old one is not worth keeping. */
const ProvisionerQueueRetention = Duration.minutes(15);

/** What a function bundle can depend on: the code folders and the lock file (tests excluded). */
const BundleInputs = ['functions', 'shared', 'statemachines', 'package-lock.json', 'tsconfig.json'];

const treeHashes = new Map<string, string>();

/**
 * SHA-256 over every file a bundle can be built from. Used as each function's asset hash (with
 * its entry and bundling options), so an unchanged tree reuses the previous synth's bundles in
 * cdk.out instead of running esbuild again; any change in these files rebundles.
 */
export function sourceTreeHash(repoRoot: string): string {
  const cached = treeHashes.get(repoRoot);
  if (cached) return cached;
  const hash = createHash('sha256');
  const walk = (rel: string): void => {
    const abs = join(repoRoot, rel);
    if (!existsSync(abs)) return;
    if (statSync(abs).isDirectory()) {
      for (const name of readdirSync(abs).sort()) {
        if (name !== 'node_modules' && !name.endsWith('.test.ts')) walk(join(rel, name));
      }
      return;
    }
    hash.update(rel).update('\0').update(readFileSync(abs)).update('\0');
  };
  for (const input of BundleInputs) walk(input);
  const digest = hash.digest('hex');
  treeHashes.set(repoRoot, digest);
  return digest;
}

export interface NodefleetStackProps extends StackProps {
  config: NodefleetConfig;
  /** Absolute path of the repository root: function entries and the ASL are read relative to it. */
  repoRoot: string;
  /** Override of the ASL path relative to repoRoot (template tests pin a fixture definition). */
  terminationAslPath?: string;
  /** Override of the function registry (template tests of alternative triggers); default functions.ts `Functions`. */
  functions?: readonly FunctionSpec[];
}

/** A built function and how it was declared. */
interface BuiltFunction {
  name: string;
  spec: { entry: string; permissions: readonly Permission[]; reservedConcurrency?: number };
  fn: lambda.Function;
  role: iam.Role;
  /** Invoked asynchronously (EventBridge rule or Scheduler). */
  async: boolean;
}

export class NodefleetStack extends Stack {
  readonly config: NodefleetConfig;
  readonly table: dynamodb.Table;
  readonly bus: events.EventBus;
  /** The cluster view the agent writes and provisioning / disruption read (docs/cluster-state.md). */
  readonly viewBucket: s3.Bucket;
  readonly nodeRole: iam.Role;
  readonly instanceProfile: iam.InstanceProfile;
  readonly agentRole: iam.Role;
  readonly stateMachine?: sfn.StateMachine;
  /** Loop state machines (functions.ts trigger `loop`) by function name, e.g. `disruption`. */
  readonly loops = new Map<string, sfn.StateMachine>();
  readonly functions = new Map<string, BuiltFunction>();
  /** Registry entries skipped because their entry file does not exist yet. */
  readonly missingEntries: string[] = [];

  private readonly repoRoot: string;
  private readonly inlineCode: boolean;
  private readonly vpcPlacement?: { vpc: ec2.IVpc; subnets: ec2.SubnetSelection };
  private readonly deadLetterQueues: WatchedQueue[] = [];
  private readonly sourceQueues: WatchedQueue[] = [];
  private readonly deliveryDlq: sqs.Queue;
  /**
   * Principals other than the agent that put events on the bus: the termination's Drain task
   * (permission putTerminationEvents, its source and detail-types only) and a termination
   * definition with an events:putEvents task.
   */
  private readonly busPublishers: BusPublisher[] = [];

  constructor(scope: Construct, id: string, props: NodefleetStackProps) {
    super(scope, id, props);
    const cfg = (this.config = props.config);
    this.repoRoot = props.repoRoot;
    this.inlineCode = Boolean(this.node.tryGetContext(InlineCodeContextKey));
    this.templateOptions.description = `nodefleet: serverless node autoscaler for EKS cluster ${cfg.clusterName}`;

    // ---- state -------------------------------------------------------------------------------
    // Keys and indexes from contract.ts tableCreateInput, the definition dynalite creates locally.
    // An LSI can only be created with its table: adding `inFlight` to a deployed stack replaced the
    // table (README, upgrading).
    const schema = tableCreateInput('schema');
    const attribute = (name: string): dynamodb.Attribute => {
      const def = schema.AttributeDefinitions.find((a) => a.AttributeName === name);
      if (!def) throw new Error(`contract.ts tableCreateInput: no AttributeDefinition for ${name}`);
      return { name, type: def.AttributeType === 'N' ? dynamodb.AttributeType.NUMBER : dynamodb.AttributeType.STRING };
    };
    const keyOf = (ks: readonly { AttributeName: string; KeyType: 'HASH' | 'RANGE' }[], type: 'HASH' | 'RANGE') => {
      const k = ks.find((x) => x.KeyType === type);
      return k ? attribute(k.AttributeName) : undefined;
    };
    this.table = new dynamodb.Table(this, 'Table', {
      partitionKey: keyOf(schema.KeySchema, 'HASH')!,
      sortKey: keyOf(schema.KeySchema, 'RANGE'),
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      timeToLiveAttribute: Table.ttlAttribute,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      // Deleting the table loses which instances nodefleet owns (docs/deploy.md: turn this off to delete it).
      deletionProtection: true,
      encryption: dynamodb.TableEncryption.AWS_MANAGED,
      // NodeClaims are the record of which instances nodefleet owns: keep them if the stack goes
      // (and, on a replacement, the old table: CDK sets UpdateReplacePolicy Retain too).
      removalPolicy: RemovalPolicy.RETAIN,
    });
    for (const gsi of schema.GlobalSecondaryIndexes) {
      this.table.addGlobalSecondaryIndex({
        indexName: gsi.IndexName,
        partitionKey: keyOf(gsi.KeySchema, 'HASH')!,
        sortKey: keyOf(gsi.KeySchema, 'RANGE'),
        projectionType: dynamodb.ProjectionType[gsi.Projection.ProjectionType],
      });
    }
    for (const lsi of schema.LocalSecondaryIndexes) {
      this.table.addLocalSecondaryIndex({
        indexName: lsi.IndexName,
        sortKey: keyOf(lsi.KeySchema, 'RANGE')!,
        projectionType: dynamodb.ProjectionType[lsi.Projection.ProjectionType],
      });
    }

    const busName = `nodefleet-${cfg.clusterName}`;
    this.bus = new events.EventBus(this, 'Bus', { eventBusName: busName });

    // One gzip object per cluster, rewritten by the agent every few seconds: derived data (the
    // agent rebuilds it from its watches), so no versioning and no retention; a view nobody
    // rewrites for a day (agent gone) expires, so the bucket empties itself after an uninstall.
    this.viewBucket = new s3.Bucket(this, 'ViewBucket', {
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      versioned: false,
      lifecycleRules: [{ id: 'ExpireAbandonedViews', expiration: Duration.days(ViewExpirationDays), abortIncompleteMultipartUploadAfter: Duration.days(1) }],
      removalPolicy: RemovalPolicy.DESTROY,
    });

    // ---- node role ---------------------------------------------------------------------------
    const nodeRoleName = nodeRoleNameOf(cfg.clusterName);
    this.nodeRole = new iam.Role(this, 'NodeRole', {
      roleName: nodeRoleName,
      description: `Instance role of nodes nodefleet launches for ${cfg.clusterName}`,
      assumedBy: new iam.ServicePrincipal('ec2.amazonaws.com'),
      managedPolicies: NodeRoleManagedPolicies.map((p) => iam.ManagedPolicy.fromAwsManagedPolicyName(p)),
    });
    this.instanceProfile = new iam.InstanceProfile(this, 'NodeInstanceProfile', {
      role: this.nodeRole,
      instanceProfileName: nodeRoleName,
    });
    new eks.CfnAccessEntry(this, 'NodeAccessEntry', {
      clusterName: cfg.clusterName,
      principalArn: this.nodeRole.roleArn,
      type: 'EC2_LINUX',
    });

    // ---- shared plumbing ---------------------------------------------------------------------
    this.deliveryDlq = this.queue('DeliveryDlq', { dlq: true });
    this.deadLetterQueues.push({ name: 'delivery', queue: this.deliveryDlq });
    const alarmTopic = new sns.Topic(this, 'AlarmTopic', {
      displayName: `nodefleet ${cfg.clusterName} alarms`,
      masterKey: kms.Alias.fromAliasName(this, 'SnsKey', 'alias/aws/sns'),
      enforceSSL: true,
    });
    if (cfg.vpc) this.vpcPlacement = this.resolveVpc(cfg.vpc);

    // ---- termination state machine and its task functions -------------------------------------
    const aslPath = props.terminationAslPath ?? TerminationAslPath;
    const definition = readTerminationDefinition(this.repoRoot, aslPath);
    if (!definition) {
      Annotations.of(this).addWarningV2('nodefleet:missing-asl', `${aslPath} does not exist yet: no termination state machine`);
      this.missingEntries.push(aslPath);
    } else {
      this.stateMachine = this.buildStateMachine(definition);
    }

    // ---- event-driven and scheduled functions ------------------------------------------------
    for (const spec of props.functions ?? Functions) {
      if (spec.trigger.kind === 'queue' && spec.trigger.optional === 'interruption' && !cfg.interruption) continue;
      if (spec.permissions.includes('startTermination') && !this.stateMachine) {
        Annotations.of(this).addWarningV2('nodefleet:no-state-machine', `${spec.name} skipped: it starts terminations and there is no state machine`);
        this.missingEntries.push(spec.entry);
        continue;
      }
      let loop: LoopDefinition | undefined;
      if (spec.trigger.kind === 'loop') {
        loop = readLoopDefinition(this.repoRoot, spec.trigger.definition, spec.name);
        if (!loop) {
          // Invoked directly, a loop function only does its first step (disruption: plans, never acts): build nothing rather than that.
          Annotations.of(this).addWarningV2(`nodefleet:missing-loop:${spec.name}`, `${spec.name} skipped: ${spec.trigger.definition} does not exist yet`);
          this.missingEntries.push(spec.trigger.definition);
          continue;
        }
      }
      // Loop functions are invoked synchronously by their state machine (its Retry/Catch handle failures).
      const built = this.buildFunction(spec.name, spec, { async: spec.trigger.kind === 'rule' || spec.trigger.kind === 'schedule' });
      if (built) this.wireTrigger(spec, built.fn, loop);
    }

    // ---- the agent's identity ----------------------------------------------------------------
    this.agentRole = this.buildAgentRole();

    // ---- who may call the entry points (resource policies, docs/security.md) -----------------
    const viewReaders = [...this.functions.values()].filter((f) => f.spec.permissions.includes('viewRead')).map((f) => f.role);
    protectViewBucket(this.viewBucket, [this.agentRole], viewReaders);
    protectBus(this.bus, busName, [{ role: this.agentRole, source: AgentSource, detailTypes: AgentDetailTypes }, ...this.busPublishers]);

    // ---- observability ------------------------------------------------------------------------
    const obs = new Observability(this, 'Observability', {
      clusterName: cfg.clusterName,
      topic: alarmTopic,
      functions: [...this.functions.values()].map((f) => ({ name: f.name, fn: f.fn, serialised: f.spec.reservedConcurrency !== undefined, async: f.async })),
      deadLetterQueues: this.deadLetterQueues,
      sourceQueues: this.sourceQueues,
      stateMachine: this.stateMachine,
      loops: [...this.loops].map(([name, stateMachine]) => ({ name, stateMachine })),
    });

    // ---- outputs (docs/deploy.md, the agent's config and the CLI read them) -------------------
    new CfnOutput(this, 'EventBusName', { value: this.bus.eventBusName, description: `${Env.eventBusName} for the agent` });
    new CfnOutput(this, 'TableName', { value: this.table.tableName, description: Env.tableName });
    const agentSettings = AgentSettingNames.filter((n) => cfg.settings[n] !== undefined).map((n) => `${n}=${cfg.settings[n]}`);
    if (agentSettings.length)
      new CfnOutput(this, 'AgentSettings', {
        value: agentSettings.join(' '),
        description: 'lines for infra/k8s/agent.env (the agent batches pending pods with them)',
      });
    new CfnOutput(this, 'ViewBucketName', { value: this.viewBucket.bucketName, description: `${Env.viewBucket} for the agent` });
    new CfnOutput(this, 'NodeRoleName', { value: this.nodeRole.roleName, description: 'EC2NodeClass spec.role' });
    new CfnOutput(this, 'InstanceProfileName', { value: this.instanceProfile.instanceProfileName });
    new CfnOutput(this, 'AgentRoleArn', { value: this.agentRole.roleArn, description: `IAM role of the agent (${cfg.agentIdentity})` });
    new CfnOutput(this, 'AlarmTopicArn', { value: alarmTopic.topicArn, description: 'Subscribe to receive alarms' });
    new CfnOutput(this, 'DashboardName', { value: obs.dashboard.dashboardName });
    if (this.stateMachine) {
      new CfnOutput(this, 'TerminationStateMachineArn', { value: this.stateMachine.stateMachineArn, description: Env.stateMachineArn });
    }
    const disruptionLoop = this.loops.get('disruption');
    if (disruptionLoop) {
      new CfnOutput(this, 'DisruptionLoopStateMachineArn', { value: disruptionLoop.stateMachineArn, description: 'Disruption runs (one execution a minute)' });
    }

    addNagSuppressions(this, { vpc: Boolean(cfg.vpc) });
  }

  // ---------------------------------------------------------------------------------------------

  /** An SQS queue with SSE and TLS-only access; `dlq` ones keep messages 14 days. */
  private queue(id: string, opts: { dlq?: boolean; fifo?: boolean; props?: sqs.QueueProps }): sqs.Queue {
    return new sqs.Queue(this, id, {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      fifo: opts.fifo || undefined,
      retentionPeriod: opts.dlq ? DlqRetention : undefined,
      ...opts.props,
    });
  }

  private resolveVpc(v: NonNullable<NodefleetConfig['vpc']>): { vpc: ec2.IVpc; subnets: ec2.SubnetSelection } {
    if (v.subnetIds?.length) {
      const vpc = ec2.Vpc.fromVpcAttributes(this, 'Vpc', { vpcId: v.vpcId, availabilityZones: this.availabilityZones });
      return { vpc, subnets: { subnets: v.subnetIds.map((s, i) => ec2.Subnet.fromSubnetId(this, `Subnet${i}`, s)) } };
    }
    // Discovery by tag needs a lookup (AWS credentials at synth, or a cached cdk.context.json).
    // The lookup groups subnets by the value of the discovery tag's key; pick the group named by its value.
    const tag = v.subnetTag!;
    const vpc = ec2.Vpc.fromLookup(this, 'Vpc', { vpcId: v.vpcId, subnetGroupNameTag: tag.key });
    return { vpc, subnets: { subnetGroupName: tag.value } };
  }

  private iamTargets(): IamTargets {
    return {
      clusterName: this.config.clusterName,
      tableArn: this.table.tableArn,
      nodeRoleArn: this.nodeRole.roleArn,
      eventBusArn: this.bus.eventBusArn,
      stateMachineArn: this.stateMachine?.stateMachineArn,
      viewBucketArn: this.viewBucket.bucketArn,
    };
  }

  /**
   * One Lambda function: own role (logs + its permission sets), own log group, X-Ray, Powertools
   * env; `async` ones get a DLQ for failed asynchronous invocations.
   * Returns undefined (with a synth warning) when the entry file does not exist yet.
   */
  private buildFunction(
    name: string,
    spec: { entry: string; permissions: readonly Permission[]; timeoutSeconds: number; memoryMiB: number; reservedConcurrency?: number },
    opts: { async: boolean },
  ): BuiltFunction | undefined {
    const cfg = this.config;
    const entry = join(this.repoRoot, spec.entry);
    if (!this.inlineCode && !existsSync(entry)) {
      Annotations.of(this).addWarningV2(`nodefleet:missing-entry:${name}`, `${spec.entry} does not exist yet: function ${name} not built`);
      this.missingEntries.push(spec.entry);
      return undefined;
    }
    const id = name.charAt(0).toUpperCase() + name.slice(1);
    const logGroup = new logs.LogGroup(this, `${id}Logs`, { retention: logs.RetentionDays.ONE_MONTH, removalPolicy: RemovalPolicy.DESTROY });
    const role = new iam.Role(this, `${id}Role`, {
      description: `nodefleet ${cfg.clusterName} ${name} function`,
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
    });
    role.addToPolicy(
      new iam.PolicyStatement({ sid: 'WriteOwnLogs', actions: ['logs:CreateLogStream', 'logs:PutLogEvents'], resources: [`${logGroup.logGroupArn}:*`] }),
    );
    const targets = { ...this.iamTargets(), functionName: name };
    for (const p of spec.permissions) for (const s of statementsFor(this, p, targets)) role.addToPolicy(s);
    if (this.vpcPlacement) role.addManagedPolicy(iam.ManagedPolicy.fromAwsManagedPolicyName('service-role/AWSLambdaVPCAccessExecutionRole'));

    const environment: Record<string, string> = {
      [Env.clusterName]: cfg.clusterName,
      [Env.tableName]: this.table.tableName,
      [Env.eventBusName]: this.bus.eventBusName,
      [Env.logLevel]: cfg.logLevel,
      POWERTOOLS_SERVICE_NAME: name,
      POWERTOOLS_METRICS_NAMESPACE: MetricsNamespace,
      NODE_OPTIONS: '--enable-source-maps',
    };
    if (spec.permissions.includes('ec2Launch')) {
      environment[Env.nodeRoleName] = this.nodeRole.roleName;
      environment[Env.instanceProfileName] = this.instanceProfile.instanceProfileName;
    }
    // The packing mode shapes the provisioner's rounds and disruption's consolidation simulations (shared/api/packing.ts).
    if (cfg.packing && (name === 'provisioner' || name === 'disruption')) environment[Env.packing] = cfg.packing;
    // Karpenter's settings under their own names: every function parses them (shared/runtime/env.ts).
    for (const setting of RuntimeSettingNames) if (cfg.settings[setting] !== undefined) environment[setting] = cfg.settings[setting];
    // Beside Karpenter every function reads only nodefleet.io NodePools (shared/api/nodepool.ts managedNodeClassGroup).
    if (cfg.besideKarpenter) environment[Env.besideKarpenter] = 'true';
    if (spec.permissions.includes('startTermination') && this.stateMachine) {
      environment[Env.stateMachineArn] = this.stateMachine.stateMachineArn;
    }
    if (spec.permissions.includes('viewRead')) environment[Env.viewBucket] = this.viewBucket.bucketName;

    let dlq: sqs.Queue | undefined;
    if (opts.async) {
      dlq = this.queue(`${id}Dlq`, { dlq: true });
      this.deadLetterQueues.push({ name: `${name}-async`, queue: dlq });
    }
    const common = {
      runtime: lambda.Runtime.NODEJS_22_X,
      architecture: lambda.Architecture.ARM_64,
      tracing: lambda.Tracing.ACTIVE,
      timeout: Duration.seconds(spec.timeoutSeconds),
      memorySize: spec.memoryMiB,
      role,
      logGroup,
      environment,
      description: `nodefleet ${cfg.clusterName}: ${spec.entry}`,
      deadLetterQueue: dlq,
      // Lambda's default for async invocations (2 retries), then the function's DLQ.
      retryAttempts: opts.async ? 2 : undefined,
      vpc: this.vpcPlacement?.vpc,
      vpcSubnets: this.vpcPlacement?.subnets,
      reservedConcurrentExecutions: spec.reservedConcurrency,
    } satisfies Partial<lambda.FunctionProps>;

    const fn = this.inlineCode
      ? new lambda.Function(this, id, {
          ...common,
          // Template tests only (see InlineCodeContextKey): a stand-in, never deployed.
          code: lambda.Code.fromInline('exports.handler = async () => { throw new Error("template-test stand-in"); };'),
          handler: 'index.handler',
        })
      : new nodejs.NodejsFunction(this, id, {
          ...common,
          entry,
          handler: 'handler',
          projectRoot: this.repoRoot,
          depsLockFilePath: join(this.repoRoot, 'package-lock.json'),
          bundling: {
            ...BundlingOptions,
            assetHash: createHash('sha256').update(sourceTreeHash(this.repoRoot)).update(spec.entry).update(JSON.stringify(BundlingOptions)).digest('hex'),
          },
        });

    if (spec.permissions.includes('kube')) {
      new eks.CfnAccessEntry(this, `${id}AccessEntry`, {
        clusterName: cfg.clusterName,
        principalArn: role.roleArn,
        type: 'STANDARD',
        // One Kubernetes identity per function: infra/k8s/rbac-controllers.yaml binds each group to only the verbs that function uses.
        kubernetesGroups: [kubernetesGroupOf(name)],
      });
    }
    const built: BuiltFunction = { name, spec, fn, role, async: opts.async };
    this.functions.set(name, built);
    return built;
  }

  private buildStateMachine(def: TerminationDefinition): sfn.StateMachine | undefined {
    const substitutions: Record<string, string> = {};
    const taskFns: lambda.Function[] = [];
    for (const task of def.tasks) {
      const perms = TerminationTaskPermissions[task.name] ?? DefaultTerminationTaskPermissions;
      const built = this.buildFunction(
        `termination${task.name}`,
        { entry: task.entry, permissions: perms, timeoutSeconds: TerminationTaskTimeoutSeconds, memoryMiB: TerminationTaskMemoryMiB },
        { async: false },
      );
      if (!built) continue;
      if (perms.includes('putTerminationEvents')) this.busPublishers.push({ role: built.role, source: TerminationSource, detailTypes: TerminationDetailTypes });
      substitutions[task.substitution] = built.fn.functionArn;
      taskFns.push(built.fn);
    }
    const missing = def.tasks.filter((t) => !(t.substitution in substitutions));
    if (missing.length > 0) {
      Annotations.of(this).addWarningV2(
        'nodefleet:missing-tasks',
        `termination state machine not built: task entries missing (${missing.map((t) => t.entry).join(', ')})`,
      );
      return undefined;
    }
    const resourceValues: Record<string, string> = {
      TableName: this.table.tableName,
      TableArn: this.table.tableArn,
      EventBusName: this.bus.eventBusName,
      EventBusArn: this.bus.eventBusArn,
      ClusterName: this.config.clusterName,
    };
    for (const r of def.resources) substitutions[r] = resourceValues[r];

    const logGroup = new logs.LogGroup(this, 'TerminationLogs', {
      // The /aws/vendedlogs/ prefix keeps CloudWatch Logs' resource policy small (Step Functions guidance).
      logGroupName: `/aws/vendedlogs/states/nodefleet-${this.config.clusterName}-termination`,
      retention: logs.RetentionDays.THREE_MONTHS,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const sm = new sfn.StateMachine(this, 'Termination', {
      stateMachineType: sfn.StateMachineType.STANDARD,
      definitionBody: sfn.DefinitionBody.fromString(def.body),
      definitionSubstitutions: substitutions,
      logs: { destination: logGroup, level: sfn.LogLevel.ALL, includeExecutionData: true },
      tracingEnabled: true,
    });
    for (const fn of taskFns) fn.grantInvoke(sm);
    if (def.dynamodbActions.length > 0) {
      sm.addToRolePolicy(new iam.PolicyStatement({ actions: def.dynamodbActions, resources: [this.table.tableArn, `${this.table.tableArn}/index/*`] }));
    }
    if (def.putsEvents) {
      this.bus.grantPutEventsTo(sm);
      this.busPublishers.push({ role: sm.role });
    }
    return sm;
  }

  private ruleProps(pattern: EventPattern): events.EventPattern {
    return { source: pattern.source, detailType: pattern['detail-type'], detail: pattern.detail };
  }

  private wireTrigger(spec: FunctionSpec, fn: lambda.Function, loop?: LoopDefinition): void {
    const t = spec.trigger;
    const id = spec.name.charAt(0).toUpperCase() + spec.name.slice(1);
    const deliveryRetry = { deadLetterQueue: this.deliveryDlq, retryAttempts: 8, maxEventAge: Duration.hours(1) };
    switch (t.kind) {
      case 'fifoQueue': {
        // One message group per cluster: Lambda processes a group's messages one batch at a time,
        // so two provisioning decisions for this cluster never run concurrently.
        const dlq = this.queue(`${id}QueueDlq`, { dlq: true, fifo: true });
        const queue = this.queue(`${id}Queue`, {
          fifo: true,
          props: {
            contentBasedDeduplication: true,
            retentionPeriod: ProvisionerQueueRetention,
            visibilityTimeout: Duration.seconds(spec.timeoutSeconds * 6),
            deadLetterQueue: { queue: dlq, maxReceiveCount: MaxReceiveCount },
          },
        });
        this.deadLetterQueues.push({ name: `${spec.name}-queue`, queue: dlq });
        this.sourceQueues.push({ name: spec.name, queue });
        const rule = new events.Rule(this, `Rule-${t.rule}`, {
          eventBus: this.bus,
          description: `contract.ts EventRules.${t.rule} → ${spec.name} (FIFO)`,
          eventPattern: this.ruleProps(EventRules[t.rule]),
          targets: [new targets.SqsQueue(queue, { messageGroupId: this.config.clusterName, ...deliveryRetry })],
        });
        protectRuleQueue(queue, [rule]);
        fn.addEventSource(new SqsEventSource(queue, { batchSize: 10, reportBatchItemFailures: true }));
        return;
      }
      case 'rule':
        new events.Rule(this, `Rule-${t.rule}`, {
          eventBus: this.bus,
          description: `contract.ts EventRules.${t.rule} → ${spec.name}`,
          eventPattern: this.ruleProps(EventRules[t.rule]),
          targets: [new targets.LambdaFunction(fn, deliveryRetry)],
        });
        return;
      case 'queue': {
        const dlq = this.queue(`${id}QueueDlq`, { dlq: true });
        const queue = this.queue(`${id}Queue`, {
          props: {
            retentionPeriod: InterruptionRetention,
            visibilityTimeout: InterruptionVisibility,
            deadLetterQueue: { queue: dlq, maxReceiveCount: MaxReceiveCount },
          },
        });
        this.deadLetterQueues.push({ name: `${spec.name}-queue`, queue: dlq });
        this.sourceQueues.push({ name: spec.name, queue });
        // On the default bus: that is where EC2 and AWS Health deliver their events.
        const rules = t.rules.map(
          (rule) =>
            new events.Rule(this, `Rule-${rule}`, {
              description: `contract.ts EventRules.${rule} → ${spec.name} queue`,
              eventPattern: this.ruleProps(EventRules[rule]),
              targets: [new targets.SqsQueue(queue, deliveryRetry)],
            }),
        );
        protectRuleQueue(queue, rules);
        // Karpenter handles 10 messages at a time with 10 workers (ANCHORS §2.8).
        fn.addEventSource(new SqsEventSource(queue, { batchSize: 10, reportBatchItemFailures: true, maxConcurrency: 10 }));
        return;
      }
      case 'schedule':
        new scheduler.Schedule(this, `${id}Schedule`, {
          description: `nodefleet ${this.config.clusterName}: ${spec.name} every ${t.minutes} minute(s)`,
          schedule: scheduler.ScheduleExpression.rate(Duration.minutes(t.minutes)),
          target: new schedulerTargets.LambdaInvoke(fn, {
            deadLetterQueue: this.deliveryDlq,
            // The next tick is a retry: a late invocation is not worth more than one period.
            retryAttempts: 0,
            maxEventAge: Duration.minutes(Math.max(1, t.minutes)),
          }),
        });
        return;
      case 'loop': {
        if (!loop) throw new Error(`${spec.name}: loop trigger without its definition`);
        const sm = this.buildLoop(spec.name, id, loop, fn);
        // Overlapping executions are expected and safe: a new one starts every minute while an
        // earlier one may still wait (15 s validation, minutes for replacements to initialize).
        // Two runs can plan the same candidates, but acting takes each candidate's budget slot
        // with a conditional DynamoDB update, all or nothing (shared/aws/dynamo-budget-counter.ts),
        // so only one of them disrupts a node and the other ends as 'budget-exhausted'; replacement
        // NodeClaim names are derived from the candidates and termination execution names from the
        // NodeClaim (functions/disruption/act.ts), so a repeated step launches or terminates nothing twice.
        new scheduler.Schedule(this, `${id}Schedule`, {
          description: `nodefleet ${this.config.clusterName}: ${spec.name} loop every ${t.minutes} minute(s)`,
          schedule: scheduler.ScheduleExpression.rate(Duration.minutes(t.minutes)),
          target: new schedulerTargets.StepFunctionsStartExecution(sm, {
            // A fresh run: no command (the function plans).
            input: scheduler.ScheduleTargetInput.fromObject({}),
            deadLetterQueue: this.deliveryDlq,
            // The next tick is a retry: a late start is not worth more than one period.
            retryAttempts: 0,
            maxEventAge: Duration.minutes(Math.max(1, t.minutes)),
          }),
        });
        return;
      }
    }
  }

  /**
   * A function's loop state machine (Standard: its Wait states outlast an Express machine's 5
   * minutes when replacements take long), logging ALL and X-Ray like the termination machine.
   * Its role may invoke this function only (the definition's single Task, see loop.ts).
   */
  private buildLoop(name: string, id: string, def: LoopDefinition, fn: lambda.Function): sfn.StateMachine {
    const logGroup = new logs.LogGroup(this, `${id}LoopLogs`, {
      logGroupName: `/aws/vendedlogs/states/nodefleet-${this.config.clusterName}-${name}-loop`,
      retention: logs.RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const sm = new sfn.StateMachine(this, `${id}Loop`, {
      stateMachineType: sfn.StateMachineType.STANDARD,
      definitionBody: sfn.DefinitionBody.fromString(def.body),
      definitionSubstitutions: { [def.substitution]: fn.functionArn },
      logs: { destination: logGroup, level: sfn.LogLevel.ALL, includeExecutionData: true },
      tracingEnabled: true,
    });
    // The definition invokes the unqualified ARN: no `:*` for versions/aliases.
    sm.addToRolePolicy(new iam.PolicyStatement({ sid: `Invoke${id}Function`, actions: ['lambda:InvokeFunction'], resources: [fn.functionArn] }));
    this.loops.set(name, sm);
    return sm;
  }

  /** The agent's role: events:PutEvents on the bus and s3:PutObject of its cluster view, nothing else. Pod Identity by default, IRSA optional. */
  private buildAgentRole(): iam.Role {
    const cfg = this.config;
    const subject = `system:serviceaccount:${cfg.agentNamespace}:${cfg.agentServiceAccount}`;
    let assumedBy: iam.IPrincipal;
    if (cfg.agentIdentity === 'irsa') {
      const arn = cfg.oidcProviderArn!;
      const issuer = arn.slice(arn.indexOf('oidc-provider/') + 'oidc-provider/'.length);
      assumedBy = new iam.OpenIdConnectPrincipal(iam.OpenIdConnectProvider.fromOpenIdConnectProviderArn(this, 'Oidc', arn), {
        StringEquals: { [`${issuer}:sub`]: subject, [`${issuer}:aud`]: 'sts.amazonaws.com' },
      });
    } else {
      // Pod Identity passes these session tags: only this cluster's agent ServiceAccount may assume the role.
      assumedBy = new iam.SessionTagsPrincipal(
        new iam.ServicePrincipal('pods.eks.amazonaws.com').withConditions({
          StringEquals: {
            'aws:SourceAccount': this.account,
            'aws:RequestTag/eks-cluster-name': cfg.clusterName,
            'aws:RequestTag/kubernetes-namespace': cfg.agentNamespace,
            'aws:RequestTag/kubernetes-service-account': cfg.agentServiceAccount,
          },
        }),
      );
    }
    const role = new iam.Role(this, 'AgentRole', { description: `nodefleet agent (${subject}) in ${cfg.clusterName}`, assumedBy });
    for (const p of ['putEvents', 'viewWrite'] as const) for (const s of statementsFor(this, p, this.iamTargets())) role.addToPolicy(s);
    if (cfg.agentIdentity === 'pod-identity') {
      new eks.CfnPodIdentityAssociation(this, 'AgentPodIdentity', {
        clusterName: cfg.clusterName,
        namespace: cfg.agentNamespace,
        serviceAccount: cfg.agentServiceAccount,
        roleArn: role.roleArn,
      });
    }
    return role;
  }
}
