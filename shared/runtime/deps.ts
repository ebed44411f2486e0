/**
 * The composition root: every SDK client is created once per process (by shared/aws/clients.ts
 * `createClients`, the only place that says `new EC2Client`) and injected into the adapters
 * implementing shared/api/ports.ts.
 *
 * ## Lambda
 * `wrapHandler` (middleware.ts) calls `buildDeps(parseRuntimeEnv(process.env))` on the first
 * invocation. Endpoint overrides: DynamoDB ← `NODEFLEET_DYNAMODB_ENDPOINT`, EC2 and SSM ←
 * `NODEFLEET_EC2_ENDPOINT`. Kubernetes: `NODEFLEET_KUBECONFIG` if set, else EKS DescribeCluster +
 * IAM token (shared/aws/eks.ts).
 *
 * ## Embedded environment (infra/local) and other engineers' functions
 * ```ts
 * const env = parseRuntimeEnv({ NODEFLEET_CLUSTER_NAME: 'local', NODEFLEET_TABLE_NAME: 'nodefleet',
 *   AWS_REGION: 'ap-northeast-2', NODEFLEET_KUBECONFIG: kubeconfigPath,
 *   NODEFLEET_DYNAMODB_ENDPOINT: 'http://127.0.0.1:4567', NODEFLEET_EC2_ENDPOINT: 'http://127.0.0.1:4568' });
 * const deps = buildDeps(env, { clock: virtualClock, log, metrics,
 *   overrides: { termination: localStarter, publisher: localBus, resolver: new StaticNodeClassResolver(...) } });
 * await provisioner.run(event, deps);
 * ```
 * Any port can be replaced through `overrides` (fakes, local stand-ins). `budgets` defaults to the
 * DynamoDB budget counter on the shared table (shared/aws/dynamo-budget-counter.ts), so termination
 * (Finalize releases the slot), disruption, interruption and gc all count against the same items.
 */
import type {
  BudgetCounter,
  Clock,
  ClusterViewStore,
  CloudProvider,
  EventPublisher,
  KubeApi,
  NodeClaimStore,
  TerminationStarter,
  UnavailableOfferings,
} from '../api/ports.ts';
import { NodefleetError } from '../api/errors.ts';
import { createClients, type Clients } from '../aws/clients.ts';
import { CatalogRefresher, createPricingClient } from '../aws/catalog-refresh.ts';
import { DynamoBudgetCounter } from '../aws/dynamo-budget-counter.ts';
import { DynamoNodeClaimStore } from '../aws/dynamo-node-claim-store.ts';
import { DynamoUnavailableOfferings } from '../aws/dynamo-unavailable-offerings.ts';
import { Ec2CloudProvider, catalogArchitecture } from '../aws/ec2.ts';
import { sdkLookups, Ec2NodeClassResolver, type NodeClassResolver } from '../aws/node-class-resolver.ts';
import { EksConnectionProvider } from '../aws/eks.ts';
import { EventBridgePublisher } from '../aws/eventbridge-publisher.ts';
import { SfnTerminationStarter } from '../aws/sfn-termination-starter.ts';
import { S3ClusterViewStore } from '../aws/s3-cluster-view-store.ts';
import type { ClusterInfo } from '../aws/user-data.ts';
import { managedNodeClassGroup } from '../api/nodepool.ts';
import { ClientNodeKubeApi, clusterOfKubeconfig, type KubeConnection, type KubeConnectionProvider } from '../kube/kube-api.ts';
import type { BasePersistenceLayer } from '@aws-lambda-powertools/idempotency/persistence';
import type { RuntimeEnv } from './env.ts';
import { RecordingLog, RecordingMetrics, type Log, type MetricsSink } from './observability.ts';
import { MetricNames } from '../api/metrics.ts';
import { measuredCloud } from './measured-cloud.ts';

/** The SDK clients (created by shared/aws/clients.ts), exposed for adapters other engineers add. */
export type { Clients } from '../aws/clients.ts';

/** Everything a handler's `run` may use. Tests build a Deps from test/fakes. */
export interface Deps {
  env: RuntimeEnv;
  clock: Clock;
  log: Log;
  metrics: MetricsSink;
  store: NodeClaimStore;
  unavailable: UnavailableOfferings;
  cloud: CloudProvider;
  kube: KubeApi;
  /** EventBridge publisher (NODEFLEET_EVENT_BUS_NAME; absent when not configured). */
  publisher?: EventPublisher;
  /** Step Functions termination starter (NODEFLEET_TERMINATION_STATE_MACHINE_ARN; absent when not configured). */
  termination?: TerminationStarter;
  /** Uniform random in [0, 1) for generated names (NodeClaim suffixes); default crypto-backed (shared/runtime/random.ts). Seeded in tests and chaos runs. */
  random?: () => number;
  /**
   * EC2NodeClass resolution (subnets with zones and free IPs, security groups, AMIs): the one the
   * EC2 cloud provider launches with, so the scheduler's zones are the launch's. Optional so tests
   * may build Deps by hand (then every zone of the region is assumed).
   */
  resolver?: NodeClassResolver;
  /** Disruption budget counters; buildDeps: DynamoBudgetCounter (optional so tests may build Deps by hand). */
  budgets?: BudgetCounter;
  /** Cluster endpoint / CA / CIDR / version for user data. */
  clusterInfo: () => Promise<ClusterInfo>;
  /** SDK clients (undefined members when a test builds Deps by hand). */
  clients?: Clients;
  /**
   * Live catalog data (prices, zone offerings, instance types) refreshed every 12 h, one cache per
   * container; pass `await catalogRefresher?.get(nowMs)` to `loadCatalog({ refreshed })`. Absent in
   * the embedded environment (NODEFLEET_EC2_ENDPOINT set: the shipped data is used) and in tests.
   */
  catalogRefresher?: Pick<CatalogRefresher, 'get'>;
  /**
   * The cluster view (docs/cluster-state.md): S3 when NODEFLEET_VIEW_BUCKET is set. Absent = the
   * functions list nodes and pods live (tests with fakes; a stack without the bucket).
   */
  views?: ClusterViewStore;
  /** Powertools idempotency persistence; default: DynamoDB on the shared table (middleware.ts idempotencyStore). */
  idempotency?: BasePersistenceLayer;
}

/** Options of {@link buildDeps}. */
export interface BuildDepsOptions {
  log?: Log;
  metrics?: MetricsSink;
  clock?: Clock;
  functionName?: string;
  /** Node-class resolution (subnets / security groups / AMIs); default EC2 + SSM. */
  resolver?: NodeClassResolver;
  /** Cluster info when not from EKS (default: EKS DescribeCluster, or the kubeconfig + defaults). */
  clusterInfo?: ClusterInfo;
  /** Replaces any port. */
  overrides?: Partial<Omit<Deps, 'env' | 'clients'>>;
  /** Static credentials for the EC2/SSM clients on a local endpoint (shared/aws/clients.ts ClientOptions.credentials). */
  credentials?: { accessKeyId: string; secretAccessKey: string };
  /** Where the SDK clients wait a retry's backoff (shared/aws/clients.ts ClientOptions.sleep); default real time. */
  sleep?: (ms: number) => Promise<void>;
}

/** Service CIDR / version assumed for a kubeconfig cluster (embedded environment) unless given. */
export const LocalClusterDefaults = { serviceCidr: '10.100.0.0/16', kubernetesVersion: '1.31' } as const;

const systemClock: Clock = { now: () => new Date() };

/** Builds the production ports from the environment (see module doc). Creates no connection yet. */
export function buildDeps(env: RuntimeEnv, opts: BuildDepsOptions = {}): Deps {
  const region = env.region;
  const clients = createClients({
    region,
    dynamodbEndpoint: env.dynamodbEndpoint,
    ec2Endpoint: env.ec2Endpoint,
    s3Endpoint: env.s3Endpoint,
    credentials: opts.credentials,
    sleep: opts.sleep,
  });
  const log = opts.log ?? new RecordingLog();
  const metrics = opts.metrics ?? new RecordingMetrics();

  let connection: KubeConnectionProvider;
  let clusterInfo: () => Promise<ClusterInfo>;
  if (env.kubeconfig) {
    const c: KubeConnection = { kind: 'kubeconfig', path: env.kubeconfig };
    connection = async () => c;
    clusterInfo = async () => {
      if (opts.clusterInfo) return opts.clusterInfo;
      const { server, caData } = clusterOfKubeconfig(c);
      return { name: env.clusterName, endpoint: server, certificateAuthority: caData, ...LocalClusterDefaults };
    };
  } else {
    const eks = new EksConnectionProvider(clients.eks, clients.sts, env.clusterName, region);
    connection = async () => ({ kind: 'token', ...(await eks.connection()) });
    clusterInfo = opts.clusterInfo ? async () => opts.clusterInfo! : () => eks.clusterInfo();
  }
  // CLUSTER_ENDPOINT / CLUSTER_CA_BUNDLE: what new nodes join and trust, in place of DescribeCluster's.
  const { clusterEndpoint, clusterCABundle } = env.settings ?? {};
  if (clusterEndpoint || clusterCABundle) {
    const discovered = clusterInfo;
    clusterInfo = async () => ({
      ...(await discovered()),
      ...(clusterEndpoint ? { endpoint: clusterEndpoint } : {}),
      ...(clusterCABundle ? { certificateAuthority: clusterCABundle } : {}),
    });
  }
  const resolver = opts.resolver ?? new Ec2NodeClassResolver(sdkLookups(clients.ec2, clients.ssm), async () => (await clusterInfo()).kubernetesVersion);
  const o = opts.overrides ?? {};
  return {
    env,
    clock: o.clock ?? opts.clock ?? systemClock,
    log: o.log ?? log,
    metrics: o.metrics ?? metrics,
    store:
      o.store ??
      new DynamoNodeClaimStore(clients.doc, env.tableName, env.clusterName, (m) => {
        (o.log ?? log).warn('ignoring malformed nodeclaim item', { key: m.key, problem: m.problem });
        (o.metrics ?? metrics).count(MetricNames.malformedNodeClaimItems, {});
      }),
    unavailable: o.unavailable ?? new DynamoUnavailableOfferings(clients.doc, env.tableName, env.clusterName),
    cloud:
      o.cloud ??
      measuredCloud(
        new Ec2CloudProvider({
          ec2: clients.ec2,
          resolver,
          cluster: clusterInfo,
          instanceProfileName: env.instanceProfileName,
          nodeRoleName: env.nodeRoleName,
          architectureOf: catalogArchitecture,
        }),
        o.metrics ?? metrics,
        opts.functionName ?? 'nodefleet',
      ),
    kube:
      o.kube ??
      new ClientNodeKubeApi(
        connection,
        (kind, name, problems) => log.warn('ignoring invalid object', { kind, name, problems }),
        managedNodeClassGroup(env.besideKarpenter),
      ),
    publisher:
      o.publisher ??
      (env.eventBusName
        ? new EventBridgePublisher(clients.eventbridge, {
            eventBusName: env.eventBusName,
            onDropped: (e, reason) => log.error('dropped event', { detailType: e.DetailType, reason }),
          })
        : undefined),
    termination: o.termination ?? (env.stateMachineArn ? new SfnTerminationStarter(clients.sfn, env.stateMachineArn) : undefined),
    budgets: o.budgets ?? new DynamoBudgetCounter(clients.doc, env.tableName, env.clusterName),
    clusterInfo: o.clusterInfo ?? clusterInfo,
    resolver: 'resolver' in o ? o.resolver : resolver,
    views: 'views' in o ? o.views : env.viewBucket ? new S3ClusterViewStore(clients.s3, env.viewBucket, env.clusterName) : undefined,
    catalogRefresher:
      'catalogRefresher' in o ? o.catalogRefresher : env.ec2Endpoint ? undefined : catalogRefresher(clients, region, log, env.settings?.isolatedVPC ?? false),
    ...(o.random ? { random: o.random } : {}),
    clients,
  };
}

/**
 * The per-container catalog refresher (EC2 in `region`, Pricing in us-east-1). Failed fetches are
 * logged as warnings and the shipped data is used for that part. IAM: ec2:DescribeAvailabilityZones,
 * ec2:DescribeInstanceTypeOfferings, ec2:DescribeSpotPriceHistory, ec2:DescribeInstanceTypes,
 * pricing:GetProducts.
 */
function catalogRefresher(clients: Clients, region: string, log: Log, isolatedVPC: boolean): CatalogRefresher {
  return new CatalogRefresher({
    ec2: clients.ec2,
    // ISOLATED_VPC: no Pricing endpoint is reachable, so on-demand prices stay the shipped ones (as Karpenter's static prices).
    ...(isolatedVPC ? {} : { pricing: createPricingClient(region) }),
    region,
    onError: (part, error) => log.warn('failed to refresh catalog data, using the previous or shipped data', { part, error: error.message }),
  });
}

/** The termination starter, or a clear error naming the missing variable. */
export function requireTermination(deps: Pick<Deps, 'termination'>): TerminationStarter {
  if (!deps.termination) throw new NodefleetError('termination state machine not configured (NODEFLEET_TERMINATION_STATE_MACHINE_ARN)');
  return deps.termination;
}
