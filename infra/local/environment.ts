/**
 * The embedded environment: nodefleet's functions, state machine and event patterns running
 * against local stand-ins, on one virtual clock.
 *
 * ```
 *  LocalCluster (API server, scheduler, kubelets) ◄── agent (functions/agent) ──► LocalEventBus
 *        ▲  addInstance / removeInstance                                          │ EventRules
 *        │                                                                        ▼
 *  LocalEc2 ◄── EC2 query protocol (LocalAwsServer) ◄── buildDeps clients ◄── provisioner, registration,
 *     │  state-change / spot events ──────────────────────────► bus ──SQS──► interruption
 *     │                                                        scheduler ──► disruption, gc (every minute)
 *  dynalite (.nodefleet/dynamodb) ◄── DynamoDB clients         LocalStepFunctions ◄── termination starter
 * ```
 * Everything AWS-facing goes through the real SDK clients that `buildDeps` creates, with the
 * endpoint overrides pointed here; only the clock, log, event publisher, termination starter and
 * budget counter are injected as ports.
 */
import { AgentSettingNames, parseSettings } from '../../shared/api/settings.ts';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { localRandom, localUuid, seedLocalIds } from './ids.ts';
import { EventRules, InterruptionRuleNames, Env } from '../../shared/api/contract.ts';
import { loadCatalog } from '../../shared/catalog/index.ts';
import type { InstanceType } from '../../shared/catalog/types.ts';
import type { NodeClaim } from '../../shared/api/nodeclaim.ts';
import type { Taint } from '../../shared/api/kube.ts';
import zoneData from '../../shared/catalog/data/zones.json' with { type: 'json' };
import { parse as parseToml } from 'smol-toml';
import { VirtualClock } from './clock.ts';
import { startLocalDynamo, type LocalDynamo } from './dynamo.ts';
import { startLocalS3, type LocalS3 } from './s3.ts';
import { LocalEc2, type Ec2CapacityType, type LocalInstance } from './ec2/local-ec2.ts';
import { LocalAwsServer } from './ec2/server.ts';
import { LocalEventBus } from './bus.ts';
import { LocalCluster } from './kube/index.ts';
import type { ScenarioCluster, ScenarioClusterFactory } from './scenario-cluster.ts';
import { LogTap } from './log.ts';
import { importPart, invokerOf, RepoRoot, type Invoke, type MissingPart } from './functions.ts';
import { FunctionPermissions, TerminationTaskPermissions, policyDocument, type PolicyStatementJson } from '../../shared/api/iam-policy.ts';
import { IamNotEnforced, LocalAuthorizer, type LocalPrincipal } from './iam/authorizer.ts';
import { loadEvaluator } from './iam/evaluate.ts';
import type { Scenario } from './scenario.ts';
import { DynamoFaultProxy, InvocationCrashes, type FaultHooks } from './faults.ts';
import { providerIdOf } from '../../shared/api/provider-id.ts';

/** The disruption and gc functions run every minute (EventBridge Scheduler `rate(1 minute)`, as DESIGN.md). */
export const ScheduleIntervalSeconds = 60;
/** Real milliseconds the shutdown waits for running invocations. */
const ShutdownGraceRealMs = 3000;
/**
 * Real-time floors of the agent's batch window: handler latency does not compress with the clock,
 * so a window scaled below it would cut one burst of pending pods (a drain's evictions) into
 * several batches and NodeClaims.
 */
const AgentBatchIdleFloorMs = 500;
const AgentBatchMaxFloorMs = 2000;
/** The agent's re-send period, in virtual seconds (its batch window is the scenario's BATCH_IDLE_DURATION / BATCH_MAX_DURATION). */
const AgentPendingResendSeconds = 30;
/** The agent's cluster-view publish interval and heartbeat (functions/agent/view-publisher.ts), virtual seconds; real-time floor of the interval. */
const AgentViewIntervalSeconds = 2;
const AgentViewHeartbeatSeconds = 20;
const AgentViewIntervalFloorMs = 100;
const AgentRelistSeconds = 300;
/** With stepped time the agent's re-list (a real timer inside the reflector) runs every 20 real seconds. */
const AgentRelistSteppedRealMs = 20_000;
/** The disruption loop's state machine (engineer D's; run by the local Step Functions). */
export const DisruptionLoopDefinition = 'statemachines/disruption-loop.asl.json';
/** The provisioner's reserved concurrency in the CDK stack (serialised decisions per cluster). */
export const ProvisionerConcurrency = 1;
/** Name of the local event bus (NODEFLEET_EVENT_BUS_NAME). */
export const LocalEventBusName = 'nodefleet-local';
/** Folder under the working directory holding the local state (dynalite data, executions, kubeconfig). */
export const StateDirName = '.nodefleet';
/** Lock file inside the state folder (holds the running demo's pid). */
export const LockFileName = 'demo.lock';

export interface LocalEnvironmentOptions {
  scenario: Scenario;
  /** Virtual seconds per real second; default the scenario's `speed`. */
  speed?: number;
  /** Working directory whose `.nodefleet/` holds the state (default: process.cwd()). */
  workDir?: string;
  /** Keep dynalite data and execution histories on disk (default true). */
  persist?: boolean;
  /**
   * Discrete-event time (clock.ts `stepped`): virtual time jumps to the next timer whenever
   * everything is quiet, instead of following wall time × speed. The chaos harness uses it.
   */
  stepped?: boolean;
  /** Fault hooks the stand-ins consult (faults.ts); none = no faults. */
  faults?: FaultHooks;
  /**
   * Seed for every id the stand-ins make and every random draw the functions make here
   * (ids.ts): the same seed gives the same instance ids, event ids and NodeClaim names. Default:
   * random. The chaos harness passes the run's seed.
   */
  seed?: number;
  /**
   * Tests only: keeps a statement of a function's IAM policy only when this returns true (e.g.
   * drop the provisioner's PassRole to watch a scenario fail with UnauthorizedOperation).
   */
  policyFilter?: (functionName: string, statement: PolicyStatementJson) => boolean;
  /**
   * The Kubernetes side: default the embedded LocalCluster; the real control-plane tier passes
   * its factory (test/real/scenarios). A factory's cluster runs on wall time, so the clock does too
   * (clock.ts `wall`: speed 1, the start taken when the timeline begins).
   */
  cluster?: ScenarioClusterFactory;
}

/**
 * The local caller identities: each function's SDK clients sign with its own access key id, and
 * the local EC2/SSM endpoint authorizes the call against that function's policy. The termination
 * state machine's tasks share one set of deps here, and only its TerminateInstance task calls
 * EC2, so they sign as that task.
 */
export const LocalIdentities = {
  provisioner: 'provisioner',
  registration: 'registration',
  interruption: 'interruption',
  disruption: 'disruption',
  gc: 'gc',
  termination: 'terminationTerminateInstance',
} as const;

/** Functions the environment binds, with their files. */
export const FunctionFiles = {
  provisioner: 'functions/provisioner/handler.ts',
  registration: 'functions/registration/handler.ts',
  interruption: 'functions/interruption/handler.ts',
  disruption: 'functions/disruption/handler.ts',
  gc: 'functions/gc/handler.ts',
} as const;

/** The running environment. */
export class LocalEnvironment {
  readonly scenario: Scenario;
  readonly clock: VirtualClock;
  readonly logs: LogTap;
  readonly missing: MissingPart[] = [];
  /** The DynamoDB endpoint the functions use (the fault proxy when faults are on). */
  private dynamoEndpoint = '';
  readonly stateDir: string;
  ec2!: LocalEc2;
  aws!: LocalAwsServer;
  /** Authorizes every local EC2/SSM call against the calling function's IAM policy. */
  authorizer!: LocalAuthorizer;
  dynamo!: LocalDynamo;
  /** s3rver holding the cluster view the agent publishes. */
  s3!: LocalS3;
  cluster!: ScenarioCluster;
  bus!: LocalEventBus;
  /** T's LocalStepFunctions (infra/local/sfn.ts) when it loaded. */
  sfn?: any;
  /** NodeClaim store of the environment's own deps (reads for the view and expectations). */
  store?: { list(): Promise<NodeClaim[]> };
  /** Every metric every function emitted (one recorder for all, as CloudWatch gathers them). */
  metrics?: { emitted: readonly { name: string; value: number; dimensions: Record<string, string> }[] };
  kubeconfigPath!: string;
  readonly invokers: Partial<Record<keyof typeof FunctionFiles, Invoke>> = {};
  private catalog = new Map<string, InstanceType>();
  private agent?: { stop(): Promise<void> | void };
  private agentModule?: any;
  /** The cluster-view store the agent writes (the functions' deps read the same bucket). */
  private views?: unknown;
  /** The disruption loop's own Step Functions runner (its executions are not termination records). */
  disruptionSfn?: any;
  private disruptionRuns = 0;
  private stopping = false;
  private agentStopRegistered = false;
  /** Per-invocation crash injection (only with `faults`). */
  crashes?: InvocationCrashes;
  private readonly stops: (() => Promise<void> | void)[] = [];

  constructor(private readonly opts: LocalEnvironmentOptions) {
    this.scenario = opts.scenario;
    if (opts.seed !== undefined) seedLocalIds(opts.seed);
    this.clock = new VirtualClock({
      start: opts.scenario.start,
      speed: opts.speed ?? opts.scenario.speed,
      frozen: true,
      stepped: opts.stepped ? {} : undefined,
      wall: opts.cluster !== undefined,
    });
    if (opts.faults)
      this.crashes = new InvocationCrashes(
        () => this.opts.faults,
        () => this.clock.nowMs(),
      );
    this.logs = new LogTap(this.clock);
    this.stateDir = resolve(opts.workDir ?? process.cwd(), StateDirName);
  }

  /** The embedded cluster (chaos faults reach into it). @throws Error on the real tier. */
  get localCluster(): LocalCluster {
    if (!(this.cluster instanceof LocalCluster)) throw new Error('this environment runs on the real control-plane tier, not the embedded cluster');
    return this.cluster;
  }

  /** Log for the environment's own lines (controller "local"). */
  get log() {
    return this.logs.forFunction('environment');
  }

  /** Starts every stand-in, applies the scenario's cluster, binds the functions. */
  async start(): Promise<void> {
    const s = this.scenario;
    const persist = this.opts.persist ?? true;
    mkdirSync(this.stateDir, { recursive: true });
    this.takeLock();
    // Each run starts from a clean slate; what it leaves stays for `status` / `history`.
    for (const d of ['dynamodb', 's3', 'executions', 'logs.jsonl']) rmSync(join(this.stateDir, d), { recursive: true, force: true });

    for (const t of loadCatalog({ region: s.region })) this.catalog.set(t.name, t);

    this.dynamo = await startLocalDynamo({ path: persist ? join(this.stateDir, 'dynamodb') : undefined, region: s.region });
    this.stops.push(() => this.dynamo.stop());
    if (this.opts.faults) {
      // Throttling and conflicts are answered by a proxy in front of dynalite (faults.ts).
      const proxy = new DynamoFaultProxy(this.dynamo.endpoint, () => this.opts.faults);
      this.dynamoEndpoint = await proxy.start();
      this.stops.push(() => proxy.stop());
    } else this.dynamoEndpoint = this.dynamo.endpoint;

    process.env.AWS_ACCESS_KEY_ID ??= 'local';
    process.env.AWS_SECRET_ACCESS_KEY ??= 'local';
    this.s3 = await startLocalS3({ directory: persist ? join(this.stateDir, 's3') : undefined });
    this.stops.push(() => this.s3.stop());

    const zones = zonesOf(s.region);
    this.ec2 = new LocalEc2({
      clock: this.clock,
      region: s.region,
      zones,
      bootSeconds: s.ec2.bootSeconds,
      shutdownSeconds: s.ec2.shutdownSeconds,
      priceOf: (type, zone, ct) => this.catalog.get(type)?.offerings.find((o) => o.zone === zone && o.capacityType === ct)?.priceUsdPerHour,
    });
    for (const c of s.ec2.capacity) this.ec2.setCapacity(c.instanceType, c.zone, c.capacityType, c.count);

    this.bus = new LocalEventBus({
      clock: this.clock,
      region: s.region,
      onError: (rule, ev, err) => this.log.error('event delivery failed', { rule, 'detail-type': ev['detail-type'], error: errText(err) }),
      fault: this.opts.faults?.bus ? (rule, ev) => this.opts.faults?.bus?.(rule, ev) : undefined,
      work: (fn) => this.clock.work(fn),
    });
    this.stops.push(() => this.bus.close());
    this.authorizer = new LocalAuthorizer(this.principals(), await loadEvaluator());
    if (!this.authorizer.enforced) this.log.warn(IamNotEnforced);
    const nodeRoleArn = this.nodeRoleArn();
    const profile = this.profileName();
    this.aws = new LocalAwsServer({
      ec2: this.ec2,
      clusterName: s.clusterName,
      putEvents: (e) => this.bus.putEntries(e),
      authorizer: this.authorizer,
      roleOfInstanceProfile: (name) => (name === profile ? nodeRoleArn : undefined),
      fault: (action) => this.opts.faults?.ec2?.(action),
    });
    await this.aws.start();
    this.stops.push(() => this.aws.stop());

    if (this.opts.cluster) {
      const log = this.log;
      this.cluster = await this.opts.cluster({ clock: this.clock, log: (line) => log.info(line) });
    } else {
      const local = new LocalCluster({
        clock: this.clock,
        podStartupSeconds: s.kubelet.podStartupSeconds,
        fault: (method, path) => this.opts.faults?.kube?.(method, path),
      });
      await local.start();
      if (this.clock.isStepped) {
        // Kubelet boots, grace periods and pod start-ups are due instants of the cluster's own.
        this.clock.addWakeSource(() => local.nextWakeMs());
        this.clock.onAdvance(() => local.tick());
      }
      this.cluster = local;
    }
    this.stops.push(() => this.cluster.stop());
    this.kubeconfigPath = this.cluster.writeKubeconfig(join(this.stateDir, 'kubeconfig'));

    this.wireEc2ToCluster();
    this.ec2.listeners.onEvent = (e) => this.bus.deliver(e);

    for (const n of s.cluster.nodes) this.addManagedNode(n);
    if (s.cluster.objects.length) await this.cluster.apply(s.cluster.objects as any);
    await this.cluster.settle?.();

    await this.bindFunctions();
    await this.begin();
  }

  /**
   * One environment per state folder: a second demo in the same directory would wipe the first
   * one's DynamoDB data and repoint its kubeconfig. A lock file with the owner's pid guards it; a
   * lock left by a process that is gone is taken over.
   * @throws EnvironmentBusyError naming the pid holding the folder.
   */
  private takeLock(): void {
    const lock = join(this.stateDir, LockFileName);
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        writeFileSync(lock, String(process.pid), { flag: 'wx' });
        this.stops.push(() => rmSync(lock, { force: true }));
        return;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        const pid = Number(readFileSync(lock, 'utf8').trim());
        if (pid && pid !== process.pid && isAlive(pid)) throw new EnvironmentBusyError(this.stateDir, pid);
        rmSync(lock, { force: true });
      }
    }
    throw new EnvironmentBusyError(this.stateDir, 0);
  }

  /** Instances reaching `running` start a kubelet; shutting-down stops it; terminated removes the Node (the cloud node lifecycle controller's job in EKS). */
  private wireEc2ToCluster(): void {
    const s = this.scenario;
    this.ec2.listeners.onRunning = (i) => {
      if (i.preexisting || this.stopping) return;
      const kubeletFault = this.opts.faults?.kubelet?.(i.instanceId);
      if (kubeletFault === 'never-register') return;
      const t = this.catalog.get(i.instanceType);
      const flags = kubeletFlags(i.userData);
      try {
        this.cluster.addInstance({
          instanceId: i.instanceId,
          instanceType: i.instanceType,
          zone: i.zone,
          region: s.region,
          capacityType: i.capacityType,
          capacity: t?.capacity ?? {},
          allocatable: t?.allocatable ?? t?.capacity ?? {},
          labels: { ...(t?.labels ?? {}), 'topology.k8s.aws/zone-id': i.zoneId, ...flags.labels },
          taints: flags.taints,
          nodeName: i.privateDnsName,
          privateIp: i.privateIp,
          bootDelaySeconds: s.kubelet.registerSeconds,
          // A node that never turns Ready: its kubelet reports NotReady for a year.
          readyDelaySeconds: kubeletFault === 'never-ready' ? 365 * 86_400 : s.kubelet.readySeconds,
        });
      } catch (err) {
        this.log.error('kubelet could not start', { instance: i.instanceId, error: errText(err) });
      }
    };
    this.ec2.listeners.onStopping = (i) => {
      if (this.stopping) return;
      try {
        this.cluster.removeInstance(i.instanceId, { deleteNode: false });
      } catch {
        // The kubelet never started (terminated while pending): nothing to stop.
      }
    };
    this.ec2.listeners.onTerminated = (i) => {
      if (this.stopping) return;
      const node = this.cluster.nodes().find((n) => n.spec?.providerID === providerIdOf(i.zone, i.instanceId));
      if (node) {
        try {
          void Promise.resolve(this.cluster.delete('v1', 'Node', node.metadata.name)).catch(() => undefined);
        } catch {
          // Already deleted by nodefleet.
        }
      }
    };
  }

  private addManagedNode(n: Scenario['cluster']['nodes'][number]): void {
    const t = this.catalog.get(n.instanceType);
    if (!t) throw new Error(`managed node: instance type ${n.instanceType} is not sold in ${this.scenario.region}`);
    const inst = this.ec2.addExisting({
      instanceType: n.instanceType,
      zone: n.zone,
      capacityType: n.capacityType,
      name: n.name,
      tags: { 'eks:nodegroup-name': n.labels['eks.amazonaws.com/nodegroup'] ?? 'managed', ...n.tags },
    });
    this.cluster.addInstance({
      instanceId: inst.instanceId,
      instanceType: n.instanceType,
      zone: n.zone,
      region: this.scenario.region,
      capacityType: n.capacityType,
      capacity: t.capacity,
      allocatable: t.allocatable,
      labels: { ...t.labels, 'topology.k8s.aws/zone-id': inst.zoneId, ...n.labels },
      taints: n.taints as Taint[],
      nodeName: inst.privateDnsName,
      privateIp: inst.privateIp,
      bootDelaySeconds: 0,
      readyDelaySeconds: 0,
    });
  }

  private nodeRoleArn(): string {
    return `arn:aws:iam::${this.ec2.accountId}:role/KarpenterNodeRole-${this.scenario.clusterName}`;
  }

  private profileName(): string {
    return `KarpenterNodeInstanceProfile-${this.scenario.clusterName}`;
  }

  /**
   * Each function's role and IAM policy, as the CDK stack deploys them (shared/api/iam-policy.ts),
   * in this environment's account and region, keyed by the access key id its clients sign with.
   */
  private principals(): Map<string, LocalPrincipal> {
    const s = this.scenario;
    const account = this.ec2.accountId;
    const targets = {
      partition: 'aws',
      region: s.region,
      account,
      clusterName: s.clusterName,
      tableArn: `arn:aws:dynamodb:${s.region}:${account}:table/${this.dynamo.tableName}`,
      nodeRoleArn: this.nodeRoleArn(),
      eventBusArn: `arn:aws:events:${s.region}:${account}:event-bus/${LocalEventBusName}`,
      stateMachineArn: this.runtimeEnvBase()[Env.stateMachineArn],
    };
    const out = new Map<string, LocalPrincipal>();
    for (const name of Object.values(LocalIdentities)) {
      const task = name.startsWith('termination') ? name.slice('termination'.length) : undefined;
      const permissions = task ? TerminationTaskPermissions[task] : FunctionPermissions[name as keyof typeof FunctionPermissions];
      const doc = policyDocument(permissions, { ...targets, functionName: name });
      const filter = this.opts.policyFilter;
      const policy = filter ? { ...doc, Statement: doc.Statement.filter((st) => filter(name, st)) } : doc;
      out.set(accessKeyOf(name), { name, roleArn: `arn:aws:iam::${account}:role/nodefleet-${s.clusterName}-${name}`, policies: [policy] });
    }
    return out;
  }

  /** The runtime environment variables of every function (as the CDK construct sets them, endpoints local). */
  runtimeEnv(): Record<string, string> {
    return this.runtimeEnvBase();
  }

  private runtimeEnvBase(): Record<string, string> {
    const s = this.scenario;
    return {
      [Env.clusterName]: s.clusterName,
      [Env.tableName]: this.dynamo.tableName,
      [Env.region]: s.region,
      [Env.kubeconfig]: this.kubeconfigPath,
      [Env.dynamodbEndpoint]: this.dynamoEndpoint || this.dynamo.endpoint,
      [Env.ec2Endpoint]: this.aws?.url ?? '',
      [Env.viewBucket]: this.s3?.bucket ?? '',
      [Env.s3Endpoint]: this.s3?.endpoint ?? '',
      [Env.eventBusName]: LocalEventBusName,
      [Env.stateMachineArn]: `arn:aws:states:${s.region}:123456789012:stateMachine:termination`,
      [Env.instanceProfileName]: this.profileName(),
      [Env.nodeRoleName]: `KarpenterNodeRole-${s.clusterName}`,
      ...(s.besideKarpenter ? { [Env.besideKarpenter]: 'true' } : {}),
      // Karpenter's settings under their names, as the stack passes them (shared/api/settings.ts).
      ...s.settings,
    };
  }

  private async bindFunctions(): Promise<void> {
    // The SDK clients need some credentials even against local endpoints; never real ones here.
    process.env.AWS_ACCESS_KEY_ID ??= 'local';
    process.env.AWS_SECRET_ACCESS_KEY ??= 'local';
    process.env.AWS_EC2_METADATA_DISABLED ??= 'true';

    const runtime = await importPart('runtime', 'shared/runtime/deps.ts', this.missing);
    const envMod = await importPart('runtime env', 'shared/runtime/env.ts', this.missing);
    const obs = await importPart('runtime observability', 'shared/runtime/observability.ts', this.missing);
    const budgetsMod = await importPart('budget counter', 'shared/aws/dynamo-budget-counter.ts', this.missing);
    const sfnMod = await importPart('local step functions', 'infra/local/sfn.ts', this.missing);
    if (!runtime || !envMod) return;
    const env = envMod.parseRuntimeEnv(this.runtimeEnv());
    // The environment's own reads (nodeClaims(): the chaos monitor, expectations, status) go to
    // dynalite itself: injected throttling is for nodefleet's functions, and through the fault
    // proxy a throttled read came back as "no NodeClaims" (chaos seed 27: a node being interrupted
    // was then counted against the consolidation budget).
    const ownEnv = envMod.parseRuntimeEnv({ ...this.runtimeEnv(), [Env.dynamodbEndpoint]: this.dynamo.endpoint });

    const metrics = obs?.RecordingMetrics ? new obs.RecordingMetrics() : undefined;
    this.metrics = metrics;
    const depsFor = (name: string, extra: Record<string, unknown> = {}, runtimeEnv: unknown = env): any => {
      const identity = LocalIdentities[name as keyof typeof LocalIdentities];
      // The real tier: each function calls Kubernetes with its own identity (its shipped RBAC).
      const kubeconfig = this.cluster.kubeconfigOf?.(name);
      if (kubeconfig) runtimeEnv = envMod.parseRuntimeEnv({ ...this.runtimeEnv(), [Env.kubeconfig]: kubeconfig });
      const base = runtime.buildDeps(runtimeEnv, {
        functionName: name,
        // Unknown to the local endpoint (AuthFailure on any EC2 call) unless it is a function's.
        credentials: { accessKeyId: accessKeyOf(identity ?? name), secretAccessKey: 'local' },
        clock: this.clock,
        // SDK retry backoff in virtual time (shared/aws/retry.ts), not at the same virtual instant.
        sleep: (ms: number) => this.clock.pause(ms),
        log: this.logs.forFunction(name),
        metrics,
        overrides: {
          clock: this.clock,
          log: this.logs.forFunction(name),
          publisher: this.crashes ? this.crashingPublisher() : this.bus,
          random: localRandom,
          ...extra,
        },
      });
      // What each handler's deps factory adds on top of buildDeps (interruption names the starter `starter`).
      if (base.termination) base.starter = base.termination;
      if (!base.budgets && budgetsMod) {
        const Counter = budgetsMod.DynamoBudgetCounter ?? Object.values(budgetsMod).find((v: any) => typeof v === 'function' && /Budget/.test(v.name));
        if (Counter) base.budgets = new (Counter as any)(base.clients.doc, env.tableName, env.clusterName);
      }
      return base;
    };

    const own = depsFor('environment', {}, ownEnv);
    this.store = own.store;
    this.views = own.views;

    // Step Functions: T's runner, waits on the virtual clock.
    let starter: unknown;
    if (sfnMod?.createLocalTermination) {
      const tdeps = depsFor('termination');
      try {
        const created = sfnMod.createLocalTermination(
          {
            kube: tdeps.kube,
            cloud: tdeps.cloud,
            store: tdeps.store,
            budgets: tdeps.budgets,
            clock: this.clock,
            log: tdeps.log,
            metrics: tdeps.metrics,
            publisher: tdeps.publisher,
          },
          {
            clock: this.clock,
            wait: (seconds: number) => this.clock.sleep(seconds * 1000),
            retryPauseMs: 50,
            task: (machine: string, state: string, call: () => Promise<unknown>) => this.runTask(machine, state, call),
            historyDir: (this.opts.persist ?? true) ? join(this.stateDir, 'executions') : undefined,
            region: this.scenario.region,
            root: RepoRoot,
          },
        );
        this.sfn = created.sfn;
        starter = created.starter;
        this.stops.push(() => this.sfn?.stop());
      } catch (err) {
        this.missing.push({ name: 'termination state machine', file: 'statemachines/termination.asl.json', reason: `not registered: ${errText(err)}` });
      }
    }

    const extra = starter ? { termination: this.crashes ? this.crashingStarter(starter as { start(i: unknown): Promise<string> }) : starter } : {};
    for (const [name, file] of Object.entries(FunctionFiles) as [keyof typeof FunctionFiles, string][]) {
      const mod = await importPart(name, file, this.missing);
      const inv = invokerOf(name, file, mod, depsFor(name, extra), this.missing);
      // Every invocation is tracked work for the stepped clock, and a crash point for faults.
      if (inv) this.invokers[name] = (payload) => this.clock.work(() => (this.crashes ? this.crashes.run(name, () => inv(payload)) : inv(payload)));
    }

    if (this.invokers.provisioner)
      this.bus.addTarget({
        rule: 'provisioner',
        pattern: EventRules.provisioner,
        kind: 'lambda',
        invoke: this.invokers.provisioner,
        concurrency: ProvisionerConcurrency,
      });
    if (this.invokers.registration)
      this.bus.addTarget({ rule: 'registration', pattern: EventRules.registration, kind: 'lambda', invoke: this.invokers.registration });
    if (this.invokers.interruption) {
      for (const r of InterruptionRuleNames)
        this.bus.addTarget({ rule: r, pattern: EventRules[r], kind: 'sqs', invoke: this.invokers.interruption, concurrency: 1 });
    }

    this.agentModule = await importPart('agent', 'functions/agent/agent.ts', this.missing);

    // Disruption runs as its Step Functions loop when the definition exists (plan → Wait → validate/act).
    const loopDef = existsSync(join(RepoRoot, DisruptionLoopDefinition))
      ? JSON.parse(readFileSync(join(RepoRoot, DisruptionLoopDefinition), 'utf8'))
      : undefined;
    if (loopDef && sfnMod?.LocalStepFunctions && this.invokers.disruption) {
      const inv = this.invokers.disruption;
      this.disruptionSfn = new sfnMod.LocalStepFunctions({
        clock: this.clock,
        wait: (seconds: number) => this.clock.sleep(seconds * 1000),
        retryPauseMs: 50,
        region: this.scenario.region,
        task: (machine: string, state: string, call: () => Promise<unknown>) => this.runTask(machine, state, call, false),
      });
      this.disruptionSfn.register('disruption', loopDef, { DisruptionFunctionArn: (input: unknown) => inv(input) });
      this.stops.push(() => this.disruptionSfn?.stop());
    }
  }

  /**
   * One Task invocation of a state machine: tracked work, the `task` fault hook, a crash point.
   * `ownCrashes` false: the Task calls a function whose invocation is already a crash point.
   */
  private runTask(machine: string, state: string, call: () => Promise<unknown>, ownCrashes = true): Promise<unknown> {
    return this.clock.work(async () => {
      this.opts.faults?.task?.(machine, state);
      return this.crashes && ownCrashes ? this.crashes.run(`${machine}.${state}`, call) : call();
    });
  }

  /** The bus as the functions' event publisher, each publish an effect of the invocation (a crash point). */
  private crashingPublisher(): { publish: LocalEventBus['publish'] } {
    return {
      publish: async (entries) => {
        this.crashes?.effect();
        return this.bus.publish(entries);
      },
    };
  }

  /** The termination starter, each start an effect of the invocation (a crash point). */
  private crashingStarter(starter: { start(i: unknown): Promise<string> }): { start(i: unknown): Promise<string> } {
    return {
      start: async (input) => {
        this.crashes?.effect();
        return starter.start(input);
      },
    };
  }

  /** Starts virtual time, the scheduler (disruption and gc every minute) and the agent. */
  private async begin(): Promise<void> {
    this.clock.begin();
    if (this.disruptionSfn) {
      // EventBridge Scheduler starts one loop execution a minute; overlapping executions are allowed.
      const timer = this.clock.setInterval(() => {
        if (this.stopping) return;
        this.disruptionRuns += 1;
        const name = `disruption-${new Date(this.clock.nowMs()).toISOString().replace(/[:.]/g, '-')}-${this.disruptionRuns}`;
        this.disruptionSfn.startExecution('disruption', scheduledEvent(this.scenario.region, 'disruption', this.clock.nowMs()), name);
      }, ScheduleIntervalSeconds * 1000);
      this.stops.push(() => timer.cancel());
    }
    for (const name of ['disruption', 'gc'] as const) {
      const inv = this.invokers[name];
      if (!inv || (name === 'disruption' && this.disruptionSfn)) continue;
      const timer = this.clock.setInterval(async () => {
        if (this.stopping) return;
        try {
          let out = (await inv(scheduledEvent(this.scenario.region, name, this.clock.nowMs()))) as LoopOutput | undefined;
          // The disruption function is re-entrant: an output with retryAfterSeconds is its next input
          // after that wait (validation delay, replacements initializing), as a Step Functions
          // Wait → Task loop runs it.
          while (!this.stopping && out && typeof out.retryAfterSeconds === 'number' && out.command) {
            await this.clock.sleep(out.retryAfterSeconds * 1000);
            if (this.stopping) break;
            out = (await inv({ command: out.command, ...(out.replacementClaims ? { replacementClaims: out.replacementClaims } : {}) })) as
              LoopOutput | undefined;
          }
        } catch (err) {
          this.log.error(`${name} run failed`, { error: errText(err) });
        }
      }, ScheduleIntervalSeconds * 1000);
      this.stops.push(() => timer.cancel());
    }
    if (this.agentModule) await this.startAgent(this.agentModule);
  }

  /** Stops the in-cluster agent and starts a new one (a pod restart: it re-lists and re-sends what is pending). */
  async restartAgent(): Promise<void> {
    if (!this.agentModule || this.stopping) return;
    const old = this.agent;
    this.agent = undefined;
    await old?.stop();
    await this.startAgent(this.agentModule);
  }

  private async startAgent(mod: any): Promise<void> {
    if (typeof mod.Agent !== 'function') {
      this.missing.push({ name: 'agent', file: 'functions/agent/agent.ts', reason: 'exports no Agent class' });
      return;
    }
    const log = this.logs.forFunction('agent');
    const speed = this.clock.speed;
    // The agent's own timers run on wall time: its windows are scaled so they last what they last in AWS in virtual time.
    const batch = parseSettings(this.scenario.settings, AgentSettingNames);
    const agent = new mod.Agent({
      connection: { kind: 'kubeconfig', path: this.cluster.kubeconfigOf?.('agent') ?? this.kubeconfigPath },
      publisher: this.bus,
      clusterName: this.scenario.clusterName,
      ...(this.clock.isStepped
        ? {
            // Stepped time: the agent's windows are virtual timers like every other delay.
            timers: { set: (fn: () => void, ms: number) => this.clock.setTimer(fn, ms) },
            batchIdleMs: batch.batchIdleDuration,
            batchMaxMs: batch.batchMaxDuration,
            pendingResendMs: AgentPendingResendSeconds * 1000,
            relistIntervalMs: AgentRelistSteppedRealMs,
            views: this.views,
            viewIntervalMs: AgentViewIntervalFloorMs,
            viewHeartbeatMs: AgentViewHeartbeatSeconds * 1000,
          }
        : {
            batchIdleMs: Math.max(AgentBatchIdleFloorMs, batch.batchIdleDuration / speed),
            batchMaxMs: Math.max(AgentBatchMaxFloorMs, batch.batchMaxDuration / speed),
            pendingResendMs: (AgentPendingResendSeconds * 1000) / speed,
            relistIntervalMs: (AgentRelistSeconds * 1000) / speed,
            views: this.views,
            viewIntervalMs: Math.max(AgentViewIntervalFloorMs, (AgentViewIntervalSeconds * 1000) / speed),
            viewHeartbeatMs: (AgentViewHeartbeatSeconds * 1000) / speed,
          }),
      log: (level: 'debug' | 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>) => log[level](message, fields),
      nowMs: () => this.clock.nowMs(),
    });
    await agent.start();
    if (!this.agent && !this.agentStopRegistered) {
      this.agentStopRegistered = true;
      this.stops.push(() => this.agent?.stop());
    }
    this.agent = agent;
  }

  /** NodeClaims in the store (empty when the store is not available). */
  async nodeClaims(): Promise<NodeClaim[]> {
    if (!this.store) return [];
    try {
      return await this.store.list();
    } catch {
      return [];
    }
  }

  /** Instances nodefleet launched that are not gone (pending or running). */
  liveInstances(): LocalInstance[] {
    return [...this.ec2.instances.values()].filter((i) => !i.preexisting && (i.state === 'pending' || i.state === 'running'));
  }

  /** kubernetes.io/arch of an instance type from the catalog ('?' when unknown). */
  archOf(type: string): string {
    return this.catalog.get(type)?.labels['kubernetes.io/arch'] ?? '?';
  }

  /** Price of an offering (USD/hour) from the catalog. */
  priceOf(type: string, zone: string, ct: Ec2CapacityType): number | undefined {
    return this.catalog.get(type)?.offerings.find((o) => o.zone === zone && o.capacityType === ct)?.priceUsdPerHour;
  }

  /** Stops everything (timers first, then servers). Safe to call twice. */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    this.clock.stop();
    this.crashes?.close();
    // dynalite throws from a request callback when its database closes under an in-flight request:
    // during shutdown that is expected, and must not crash the process before the exit code is set.
    const ignoreClosedDb = (err: Error & { code?: string }) => {
      if (/^LEVEL_/.test(err?.code ?? '') || /Database is (closed|not open)|is not open/.test(err?.message ?? '')) return;
      // Not ours: with other listeners (a test runner) they report it; alone, fail the process as Node would.
      if (process.listenerCount('uncaughtException') <= 1) {
        process.stderr.write(`${err?.stack ?? String(err)}\n`);
        process.exit(1);
      }
    };
    process.on('uncaughtException', ignoreClosedDb);
    try {
      // Let invocations already running finish (bounded), so they do not hit closed stand-ins.
      await Promise.race([this.bus?.idle(), new Promise((r) => setTimeout(r, ShutdownGraceRealMs))]);
      for (const s of this.stops.reverse()) {
        try {
          await s();
        } catch {
          // Best effort: a stand-in that fails to stop must not hide the run's result.
        }
      }
    } finally {
      setTimeout(() => process.off('uncaughtException', ignoreClosedDb), ShutdownGraceRealMs).unref();
    }
  }
}

/** The access key id a function's local SDK clients sign with. */
export function accessKeyOf(identity: string): string {
  return `LOCAL-${identity}`;
}

/** Another embedded environment is running on the same state folder. */
export class EnvironmentBusyError extends Error {
  override name = 'EnvironmentBusyError';
  constructor(
    readonly stateDir: string,
    readonly pid: number,
  ) {
    super(`another nodefleet demo (pid ${pid}) is using ${stateDir}; wait for it to finish or run from another directory`);
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The part of a re-entrant function's output that asks to be called again. */
interface LoopOutput {
  retryAfterSeconds?: number;
  command?: unknown;
  replacementClaims?: string[];
}

/** Zones (name + id) of a region from the shipped catalog data. */
export function zonesOf(region: string): { zone: string; zoneId: string }[] {
  const r = (zoneData as { regions: Record<string, { zoneNames: string[]; zoneIds: string[]; exampleNameToId?: Record<string, string> }> }).regions[region];
  if (!r) throw new Error(`no zone data for region ${region}`);
  return r.zoneNames.map((z, i) => ({ zone: z, zoneId: r.exampleNameToId?.[z] ?? r.zoneIds[i] ?? `${region}-az${i + 1}` }));
}

/**
 * The labels and taints a kubelet registers with, read from the launch template's user data:
 * Bottlerocket settings TOML (`settings.kubernetes.node-labels` / `node-taints`), else the kubelet
 * flags `--node-labels=k=v,…` and `--register-with-taints=k=v:Effect,…` (nodeadm's, or quoted in
 * the Windows bootstrap's `-KubeletExtraArgs`).
 */
export function kubeletFlags(userDataBase64: string | undefined): { labels: Record<string, string>; taints: Taint[] } {
  const out = { labels: {} as Record<string, string>, taints: [] as Taint[] };
  if (!userDataBase64) return out;
  const text = Buffer.from(userDataBase64, 'base64').toString('utf8');
  const effect = (e: string) => (['NoSchedule', 'PreferNoSchedule', 'NoExecute'].includes(e) ? (e as Taint['effect']) : undefined);
  if (/^\s*\[settings/m.test(text) && !/^MIME-Version:/im.test(text)) {
    let k: { 'node-labels'?: Record<string, string>; 'node-taints'?: Record<string, string[]> } = {};
    try {
      k = (parseToml(text) as { settings?: { kubernetes?: typeof k } }).settings?.kubernetes ?? {};
    } catch {
      return out;
    }
    Object.assign(out.labels, k['node-labels'] ?? {});
    for (const [key, values] of Object.entries(k['node-taints'] ?? {})) {
      for (const v of values) {
        const i = v.lastIndexOf(':');
        const e = effect(v.slice(i + 1));
        if (e) out.taints.push({ key, ...(v.slice(0, i) ? { value: v.slice(0, i) } : {}), effect: e });
      }
    }
    return out;
  }
  const labels = /--node-labels="?([^\s"']+)/.exec(text)?.[1];
  for (const kv of labels?.split(',') ?? []) {
    const i = kv.indexOf('=');
    if (i > 0) out.labels[kv.slice(0, i)] = kv.slice(i + 1);
  }
  const taints = /--register-with-taints="?([^\s"']+)/.exec(text)?.[1];
  for (const t of taints?.split(',') ?? []) {
    const m = /^([^=:]+)(?:=([^:]*))?:(NoSchedule|PreferNoSchedule|NoExecute)$/.exec(t);
    if (m) out.taints.push({ key: m[1], ...(m[2] ? { value: m[2] } : {}), effect: m[3] as Taint['effect'] });
  }
  return out;
}

/** An EventBridge Scheduler / scheduled-rule event, as the disruption and gc functions receive it. */
export function scheduledEvent(region: string, name: string, nowMs: number): Record<string, unknown> {
  return {
    version: '0',
    id: localUuid(),
    'detail-type': 'Scheduled Event',
    source: 'aws.events',
    account: '123456789012',
    time: new Date(Math.floor(nowMs / 1000) * 1000).toISOString().replace('.000Z', 'Z'),
    region,
    resources: [`arn:aws:events:${region}:123456789012:rule/nodefleet-${name}-every-minute`],
    detail: {},
  };
}

function errText(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}
