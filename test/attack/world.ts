/**
 * The honest world of one attack trial, built from its seed: 2–4 nodefleet nodes (each a stored
 * NodeClaim, its EC2 instance tagged as a launch tags it, its live Node) running plain,
 * do-not-disrupt, PDB-protected (0 disruptions allowed) and DaemonSet pods; a managed node group
 * node running CoreDNS; live pending pods; two NodePools (on-demand and spot) with budgets and
 * sometimes a terminationGracePeriod and one claim past its expiry; and the agent's view of it all.
 *
 * It runs over test/fakes (the NodeClaim store on dynalite through the real DynamoDB adapter when
 * asked: malformed items need it) with the real handlers (`run` of functions/*) and the real state
 * machines (statemachines/termination.asl.json, statemachines/disruption-loop.asl.json) in
 * infra/local/sfn.ts. Time is the fakes' FixedClock, moved only by {@link Scheduler}: Wait states
 * sleep on it and it jumps to the earliest wake-up once nothing runs; a wait past the horizon
 * parks for good (the execution stays RUNNING until the trial stops it).
 *
 * Every effect on the cluster and on EC2 is logged with its virtual time and what it touched
 * (pods left on the node, the pod's grace period), and every task or handler error is kept, for
 * test/attack/invariants.ts. `truth` is what the harness knows independently of nodefleet: whose
 * node and instance each claim is, and the earliest instant a cutoff may legitimately come for it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DynamoNodeClaimStore } from '../../shared/aws/dynamo-node-claim-store.ts';
import { createClients } from '../../shared/aws/clients.ts';
import { startLocalDynamo, type LocalDynamo } from '../../infra/local/dynamo.ts';
import { LocalStepFunctions, createLocalTermination } from '../../infra/local/sfn.ts';
import { scheduledEvent } from '../../infra/local/environment.ts';
import { run as provisionerRun, parseInput as parseProvisionerInput } from '../../functions/provisioner/handler.ts';
import { run as disruptionRun } from '../../functions/disruption/handler.ts';
import { DisruptionInputSchema } from '../../functions/disruption/schemas.ts';
import { run as gcRun } from '../../functions/gc/handler.ts';
import { run as interruptionRun } from '../../functions/interruption/handler.ts';
import { run as registrationRun, parseInput as parseRegistrationInput } from '../../functions/registration/handler.ts';
import { SqsEventSchema } from '../../shared/api/events/index.ts';
import { parseWith } from '../../shared/runtime/middleware.ts';
import { parseQuantity } from '../../shared/api/quantity.ts';
import { NodePoolSchema, EC2NodeClassSchema, type NodePool, type EC2NodeClass } from '../../shared/api/nodepool.ts';
import { NodeClaimSchema } from '../../shared/api/nodeclaim.ts';
import type { Node, Pod, PodDisruptionBudget } from '../../shared/api/kube.ts';
import type { NodeClaimStore } from '../../shared/api/ports.ts';
import type { RuntimeEnv } from '../../shared/runtime/env.ts';
import type { Deps } from '../../shared/runtime/deps.ts';
import { RecordingLog, RecordingMetrics } from '../../shared/runtime/observability.ts';
import { nodeClassHash, nodePoolHash } from '../../shared/api/hash.ts';
import { AnnotationLastPodEventTime } from '../../shared/api/agent-events.ts';
import { AgentSchemaVersion, AgentSource, DetailTypeUnschedulablePods } from '../../shared/api/contract.ts';
import {
  TaintUnregistered,
  AnnotationDoNotDisrupt,
  LabelCapacityType,
  LabelInitialized,
  LabelInstanceType,
  LabelNodePool,
  LabelRegistered,
  LabelTopologyZone,
  TagNodeClaim,
  TagNodefleetCluster,
} from '../../shared/api/labels.ts';
import { fakeWorld, node as nodeOf, pdb as pdbOf, pod as podOf, type FakeWorld, InMemoryClusterViewStore } from '../fakes/index.ts';
import { Rng } from '../chaos/rng.ts';
import { parseDurationSeconds } from '../../shared/disruption/index.ts';

export const Region = 'us-east-1';
export const Cluster = 'attack';
export const Account = '123456789012';
export const StateMachineArn = `arn:aws:states:${Region}:${Account}:stateMachine:termination`;
export const Start = '2026-06-01T12:00:00.000Z';
/** Virtual seconds a trial lets the world run after its forged input (a wait beyond parks). */
export const HorizonSeconds = 30 * 60;
/**
 * Minutes after t0 of the scheduled passes (gc and disruption run every minute in AWS, the agent
 * asks for a provisioning pass whenever a node starts going): enough for every timeout that
 * matters here (gc's launch 5 min, registration 15 min) to come round within the horizon.
 */
export const PassMinutes = [0, 2, 6, 16, 25];
/** Zones the world's nodes sit in. */
export const Zones = ['us-east-1a', 'us-east-1b', 'us-east-1c'];
/** The managed node group's node (no NodeClaim: never nodefleet's to touch). */
export const ManagedNodeName = 'ip-10-0-200-1.ec2.internal';
export const ManagedInstanceId = 'i-0ffffffffffff0001';
/** Instance types of the world's nodefleet nodes (shipped in the catalog for us-east-1). */
const NodeTypes = [
  { type: 'm5.large', cpu: '1930m', memory: '7220Mi' },
  { type: 'c5.xlarge', cpu: '3920m', memory: '6500Mi' },
  { type: 'm6i.xlarge', cpu: '3920m', memory: '14500Mi' },
];
/** Error names a handler or task may end with on forged input: documented refusals and transient conditions. */
export const DocumentedErrors = new Set([
  'ValidationError',
  'ZodError',
  'TargetRefusedError',
  'TransientError',
  'ConflictError',
  'NotFoundError',
  'InsufficientCapacityError',
  'BudgetExhaustedError',
]);

/** One effect on the cluster or EC2, with the virtual instant it was asked for. */
export type Effect =
  | { kind: 'terminate'; atMs: number; instanceId: string; nodeName?: string; podsLeft: string[] }
  | { kind: 'deleteNode'; atMs: number; nodeName: string; podsLeft: string[] }
  | { kind: 'deletePod'; atMs: number; pod: string; nodeName?: string; graceSeconds: number; pdb: boolean; doNotDisrupt: boolean }
  | { kind: 'evict'; atMs: number; pod: string; nodeName?: string; result: string; pdb: boolean; doNotDisrupt: boolean }
  | { kind: 'patchNode'; atMs: number; nodeName: string; patch: unknown; untaintsTerminating?: boolean }
  | {
      kind: 'create';
      atMs: number;
      nodeClaim: string;
      instanceId: string;
      cpu: number;
      pods: { pod: string; live: 'pending' | 'on-deleting-node' | 'not-needed'; cpu: number }[];
      instanceTypes: string[];
    };

/** An error a handler or a state machine task threw. */
export interface Thrown {
  where: string;
  name: string;
  message: string;
}

/** A nodefleet node of the honest world. */
export interface TrueNode {
  claim: string;
  nodeName: string;
  instanceId: string;
  providerId: string;
  nodePool: string;
  capacityType: 'spot' | 'on-demand';
  zone: string;
  instanceType: string;
  /** namespace/name of its pods. */
  pods: string[];
}

/** What the harness knows, independently of nodefleet. */
export interface Truth {
  t0: number;
  nodes: TrueNode[];
  /** Epoch ms before which no pod of the claim's node may be deleted with too short a grace, by claim (absent = never). */
  legitDeadline: Map<string, number>;
  /**
   * Claims whose node may legitimately be drained in this trial: the claim past its expiry, and
   * those a forged input names that nodefleet rightly obeys (a notice EC2 bears out, a
   * StartExecution for one of this cluster's claims).
   */
  mayDisrupt: Set<string>;
  pendingPods: string[];
  pools: NodePool[];
  /** A claim whose node has joined but is not registered yet (its instance running, its Node tainted unregistered), if the world has one. */
  joining?: TrueNode;
}

export interface WorldOptions {
  seed: number;
  /** 'dynamo': the NodeClaim store is the real DynamoDB adapter over dynalite (one partition per world). */
  store?: 'memory' | 'dynamo';
  /** Unique partition name for the dynamo store (a world per trial and run). */
  partition?: string;
}

/**
 * Virtual time for one world: Wait states and retries sleep here; `run` advances the FixedClock to
 * the earliest wake-up once every task and handler has been quiet for a few event-loop turns.
 */
export class Scheduler {
  private readonly timers: { atMs: number; seq: number; resolve: () => void }[] = [];
  private seq = 0;
  busy = 0;
  activity = 0;

  constructor(
    private readonly w: FakeWorld,
    readonly horizonMs: number,
  ) {}

  /** Resolves after `seconds` of virtual time; never when that is past the horizon (parked). */
  sleep(seconds: number): Promise<void> {
    const atMs = this.w.clock.nowMs() + Math.max(0, seconds) * 1000;
    this.activity += 1;
    if (atMs > this.horizonMs) return new Promise(() => undefined);
    return new Promise((resolve) => {
      this.timers.push({ atMs, seq: this.seq++, resolve });
      this.timers.sort((a, b) => a.atMs - b.atMs || a.seq - b.seq);
    });
  }

  /** Tracks `fn` as work (time does not move while it runs). */
  async work<T>(fn: () => Promise<T>): Promise<T> {
    this.busy += 1;
    this.activity += 1;
    try {
      return await fn();
    } finally {
      this.busy -= 1;
      this.activity += 1;
    }
  }

  /** Resolves once nothing ran for several event-loop turns. */
  async quiet(): Promise<void> {
    for (let stable = 0; stable < 4;) {
      const before = this.activity;
      await new Promise((r) => setImmediate(r));
      stable = this.busy === 0 && this.activity === before ? stable + 1 : 0;
    }
  }

  /** Runs until no wake-up is left before the horizon (parked waits stay parked). */
  async run(): Promise<void> {
    for (;;) {
      await this.quiet();
      const t = this.timers.shift();
      if (!t) return;
      if (t.atMs > this.w.clock.nowMs()) this.w.clock.set(t.atMs);
      this.w.cloud.settle();
      this.activity += 1;
      t.resolve();
    }
  }

  /** Runs `fn` (tracked) at `epochMs` of virtual time (the scheduled passes). */
  at(epochMs: number, fn: () => Promise<unknown>): void {
    void this.sleep(Math.max(0, (epochMs - this.w.clock.nowMs()) / 1000)).then(() => this.work(fn));
  }
}

let dynamo: Promise<{ local: LocalDynamo; clients: ReturnType<typeof createClients> }> | undefined;
/** One dynalite per process, started on first use. */
export function localDynamo(): Promise<{ local: LocalDynamo; clients: ReturnType<typeof createClients> }> {
  dynamo ??= (async () => {
    process.env.AWS_ACCESS_KEY_ID ??= 'local';
    process.env.AWS_SECRET_ACCESS_KEY ??= 'local';
    const local = await startLocalDynamo({ region: Region });
    return { local, clients: createClients({ region: Region, dynamodbEndpoint: local.endpoint }) };
  })();
  return dynamo;
}

/** Stops the process's dynalite, if started. */
export async function stopLocalDynamo(): Promise<void> {
  const d = dynamo;
  dynamo = undefined;
  if (d) await (await d).local.stop();
}

function nodePool(name: 'od' | 'spot', rng: Rng): NodePool {
  const tgp = rng.chance(0.4) ? rng.pick(['2m', '5m', '10m']) : undefined;
  return NodePoolSchema.parse({
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name },
    spec: {
      template: {
        spec: {
          requirements: [
            { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] },
            { key: 'kubernetes.io/os', operator: 'In', values: ['linux'] },
            { key: LabelCapacityType, operator: 'In', values: [name === 'od' ? 'on-demand' : 'spot'] },
            { key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: ['c', 'm', 'r'] },
            { key: 'karpenter.k8s.aws/instance-generation', operator: 'Gt', values: ['4'] },
            { key: 'karpenter.k8s.aws/instance-cpu', operator: 'Lt', values: ['33'] },
          ],
          nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
          expireAfter: '720h',
          ...(tgp ? { terminationGracePeriod: tgp } : {}),
        },
      },
      // Every claim saw a pod event at t0: with 1h no voluntary disruption is due within the
      // horizon; with 0s the honest world consolidates too (a forged input must not add to it).
      disruption: {
        consolidationPolicy: 'WhenEmptyOrUnderutilized',
        consolidateAfter: rng.chance(0.7) ? '1h' : '0s',
        budgets: [{ nodes: rng.pick(['0', '1', '50%', '100%']) }],
      },
      limits: { cpu: '1000' },
    },
  });
}

function nodeClass(): EC2NodeClass {
  return EC2NodeClassSchema.parse({
    apiVersion: 'karpenter.k8s.aws/v1',
    kind: 'EC2NodeClass',
    metadata: { name: 'default' },
    spec: {
      role: `KarpenterNodeRole-${Cluster}`,
      amiSelectorTerms: [{ alias: 'al2023@v20250228' }],
      subnetSelectorTerms: [{ tags: { 'karpenter.sh/discovery': Cluster } }],
      securityGroupSelectorTerms: [{ tags: { 'karpenter.sh/discovery': Cluster } }],
    },
  });
}

/** The world. Build with {@link buildWorld}. */
export class AttackWorld {
  readonly effects: Effect[] = [];
  readonly thrown: Thrown[] = [];
  readonly log = new RecordingLog();
  readonly metrics = new RecordingMetrics();
  readonly views = new InMemoryClusterViewStore();
  readonly scheduler: Scheduler;
  readonly sfn: LocalStepFunctions;
  readonly env: RuntimeEnv & { stateMachineArn: string };
  readonly deps: Deps & { views: InMemoryClusterViewStore };
  /** Nodes, pods and PDBs of the honest world at t0 (for the view and the invariants). */
  readonly initial: { nodes: Node[]; pods: Pod[]; pdbs: PodDisruptionBudget[] };
  private executions = 0;

  constructor(
    readonly w: FakeWorld,
    readonly store: NodeClaimStore,
    readonly truth: Truth,
    readonly rng: Rng,
    random: () => number,
    readonly malformedReported: string[],
    /** The DynamoDB partition (cluster key) of the world's claims, with the dynamo store. */
    readonly partition?: string,
  ) {
    this.scheduler = new Scheduler(w, truth.t0 + HorizonSeconds * 1000);
    this.env = { clusterName: Cluster, tableName: 'nodefleet-attack', region: Region, logLevel: 'INFO', stateMachineArn: StateMachineArn };
    this.sfn = new LocalStepFunctions({
      clock: w.clock,
      region: Region,
      accountId: Account,
      wait: (s) => this.scheduler.sleep(s),
      retryPauseMs: 0,
      task: (machine, state, call) => this.scheduler.work(() => this.keepThrown(`${machine}.${state}`, call)),
    });
    const { starter } = createLocalTermination(
      { kube: w.kube, cloud: w.cloud, store, budgets: w.budgets, clock: w.clock, clusterName: Cluster, log: this.log },
      { sfn: this.sfn },
    );
    this.deps = {
      env: this.env,
      clock: w.clock,
      log: this.log,
      metrics: this.metrics,
      store,
      unavailable: w.unavailable,
      cloud: w.cloud,
      kube: w.kube,
      termination: starter,
      budgets: w.budgets,
      views: this.views,
      random,
      clusterInfo: async () =>
        ({
          name: Cluster,
          endpoint: 'https://example.eks.amazonaws.com',
          certificateAuthority: 'Y2E=',
          serviceCidr: '10.100.0.0/16',
          kubernetesVersion: '1.32',
        }) as never,
    };
    const loop = JSON.parse(readFileSync(join(import.meta.dirname, '../../statemachines/disruption-loop.asl.json'), 'utf8'));
    // As the Lambda's middleware parses it (wrapHandler schema).
    this.sfn.register('disruption', loop, {
      DisruptionFunctionArn: (input: unknown) => disruptionRun(parseWith(DisruptionInputSchema, input, 'disruption input'), this.deps) as never,
    });
    this.initial = { nodes: [], pods: [], pdbs: [] };
    this.instrument();
  }

  /** Runs `fn`, keeping what it throws (then rethrown). */
  private async keepThrown<T>(where: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      this.thrown.push({ where, name: errName(err), message: (err as Error)?.message ?? String(err) });
      throw err;
    }
  }

  /**
   * One handler invocation as Lambda makes it: what it throws is kept (a crash unless
   * documented) and not rethrown — Lambda reports it, the next event is another invocation.
   */
  async invoke<T>(where: string, fn: () => Promise<T>): Promise<T | undefined> {
    try {
      return await this.scheduler.work(() => this.keepThrown(where, fn));
    } catch {
      return undefined;
    }
  }

  /** A full provisioning pass (an agent event without pods), as after any node starts going. */
  provisionerPass(): Promise<unknown> {
    return this.invoke('provisioner', () =>
      provisionerRun(parseProvisionerInput(unschedulableEvent([], `pass-${this.executions++}`, this.w.clock.now())), this.deps),
    );
  }

  gcPass(): Promise<unknown> {
    return this.invoke('gc', () => gcRun({}, this.deps));
  }

  /** The provisioner invoked with `event` (parsed as its Lambda parses it). */
  provisioner(event: unknown): Promise<unknown> {
    return this.invoke('provisioner', () => provisionerRun(parseProvisionerInput(event), this.deps));
  }

  /** The registration function invoked with `event`. */
  registration(event: unknown): Promise<unknown> {
    return this.invoke('registration', () => registrationRun(parseRegistrationInput(event), { ...this.deps, env: this.env }));
  }

  /** The interruption function invoked with an SQS batch. */
  interruption(batch: unknown): Promise<unknown> {
    return this.invoke('interruption', () =>
      interruptionRun(parseWith(SqsEventSchema, batch, 'interruption input'), { ...this.deps, termination: this.deps.termination!, budgets: this.w.budgets }),
    );
  }

  /** Starts a termination execution with `input` (StartExecution), named `name`. */
  startTermination(input: unknown, name: string): void {
    this.sfn.startExecution('termination', input, name);
  }

  /** Starts a disruption loop execution (the scheduler's, or one with a forged input). */
  startDisruption(input?: unknown): string {
    const name = `disruption-${this.executions++}`;
    this.sfn.startExecution('disruption', input ?? scheduledEvent(Region, 'disruption', this.w.clock.nowMs()), name);
    return name;
  }

  /**
   * The scheduled passes (gc, a full provisioning pass, a disruption loop) at {@link PassMinutes}
   * after t0, and everything they start, until nothing is due before the horizon.
   */
  async settle(): Promise<void> {
    for (const minutes of PassMinutes) {
      this.scheduler.at(this.truth.t0 + minutes * 60_000, async () => {
        await this.gcPass();
        await this.provisionerPass();
        this.startDisruption();
      });
    }
    await this.scheduler.run();
  }

  /** Ends every execution still running (parked at the horizon). */
  async stop(): Promise<void> {
    await this.sfn.stop();
  }

  /** The node a pod is bound to now, and whether a PDB or do-not-disrupt protects it. */
  private podFacts(namespace: string, name: string): { nodeName?: string; pdb: boolean; doNotDisrupt: boolean } {
    const p = this.w.kube.peekPod(namespace, name) ?? this.initial.pods.find((x) => x.metadata.namespace === namespace && x.metadata.name === name);
    if (!p) return { pdb: false, doNotDisrupt: false };
    const labels = p.metadata.labels ?? {};
    const pdb = this.initial.pdbs.some(
      (b) => (b.metadata.namespace ?? 'default') === namespace && Object.entries(b.spec.selector?.matchLabels ?? {}).every(([k, v]) => labels[k] === v),
    );
    return {
      nodeName: p.spec.nodeName,
      pdb,
      doNotDisrupt: !!p.metadata.annotations?.[AnnotationDoNotDisrupt] && p.metadata.annotations[AnnotationDoNotDisrupt] !== 'false',
    };
  }

  /** Pods on the node that a drain must move and that are not already going. */
  podsLeft(nodeName: string | undefined): string[] {
    if (!nodeName) return [];
    return this.w.kube
      .peekPods(nodeName)
      .filter((p) => !p.metadata.deletionTimestamp && !isDaemonOrMirror(p) && p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed')
      .map((p) => `${p.metadata.namespace}/${p.metadata.name}`);
  }

  /** The live node whose providerID names the instance (the honest world's map first). */
  nodeOfInstance(instanceId: string): string | undefined {
    const known = this.truth.nodes.find((n) => n.instanceId === instanceId)?.nodeName ?? (instanceId === ManagedInstanceId ? ManagedNodeName : undefined);
    if (known) return known;
    return this.initial.nodes.find((n) => n.spec?.providerID?.endsWith(`/${instanceId}`))?.metadata.name;
  }

  /** Logs every effect of the fakes with its instant (the fakes still do what they do). */
  private instrument(): void {
    const { kube, cloud, clock } = this.w;
    const terminate = cloud.terminate.bind(cloud);
    cloud.terminate = async (id: string) => {
      const nodeName = this.nodeOfInstance(id);
      const inst = cloud.peek(id);
      if (inst && inst.state !== 'terminated' && inst.state !== 'shutting-down')
        this.effects.push({ kind: 'terminate', atMs: clock.nowMs(), instanceId: id, ...(nodeName ? { nodeName } : {}), podsLeft: this.podsLeft(nodeName) });
      return terminate(id);
    };
    const create = cloud.create.bind(cloud);
    cloud.create = async (claim, launch, nc) => {
      // What each pod the claim is for is, live, at the launch: pending, on a node being deleted, or neither.
      const pods = (claim.pods ?? []).map((key) => {
        const [namespace, name] = key.split('/');
        const p = kube.peekPod(namespace, name);
        const n = p?.spec.nodeName ? kube.peekNode(p.spec.nodeName) : undefined;
        const deleting =
          !!n && (!!n.metadata.deletionTimestamp || !!n.spec?.unschedulable || !!n.spec?.taints?.some((t) => t.key === 'karpenter.sh/disrupted'));
        const live: 'pending' | 'on-deleting-node' | 'not-needed' =
          !p || p.metadata.deletionTimestamp ? 'not-needed' : !p.spec.nodeName ? 'pending' : deleting ? 'on-deleting-node' : 'not-needed';
        const cpu = (p?.spec.containers ?? []).reduce((sum, c) => sum + parseQuantity(c.resources?.requests?.cpu ?? 0), 0);
        return { pod: key, live, cpu };
      });
      const r = await create(claim, launch, nc);
      this.effects.push({
        kind: 'create',
        atMs: clock.nowMs(),
        nodeClaim: claim.name,
        instanceId: r.instanceId,
        cpu: parseQuantity(claim.resources.requests.cpu ?? 0),
        pods,
        instanceTypes: launch.instanceTypes.slice(0, 3),
      });
      return r;
    };
    const deleteNode = kube.deleteNode.bind(kube);
    kube.deleteNode = async (name: string) => {
      if (kube.peekNode(name)) this.effects.push({ kind: 'deleteNode', atMs: clock.nowMs(), nodeName: name, podsLeft: this.podsLeft(name) });
      return deleteNode(name);
    };
    const deletePod = kube.deletePod.bind(kube);
    kube.deletePod = async (namespace: string, name: string, grace?: number) => {
      const p = kube.peekPod(namespace, name);
      if (p) {
        const f = this.podFacts(namespace, name);
        this.effects.push({
          kind: 'deletePod',
          atMs: clock.nowMs(),
          pod: `${namespace}/${name}`,
          ...(f.nodeName ? { nodeName: f.nodeName } : {}),
          graceSeconds: grace ?? p.spec.terminationGracePeriodSeconds ?? 30,
          pdb: f.pdb,
          doNotDisrupt: f.doNotDisrupt,
        });
      }
      return deletePod(namespace, name, grace);
    };
    const evictPod = kube.evictPod.bind(kube);
    kube.evictPod = async (namespace: string, name: string) => {
      const f = this.podFacts(namespace, name);
      const result = await evictPod(namespace, name);
      if (result === 'evicted')
        this.effects.push({
          kind: 'evict',
          atMs: clock.nowMs(),
          pod: `${namespace}/${name}`,
          ...(f.nodeName ? { nodeName: f.nodeName } : {}),
          result,
          pdb: f.pdb,
          doNotDisrupt: f.doNotDisrupt,
        });
      return result;
    };
    const patchNode = kube.patchNode.bind(kube);
    kube.patchNode = async (name, patch) => {
      // Whether this takes karpenter.sh/disrupted off a node whose claim is being terminated.
      const had = !!kube.peekNode(name)?.spec?.taints?.some((t) => t.key === 'karpenter.sh/disrupted');
      const drops = had && patch.taints !== undefined && !patch.taints.some((t) => t.key === 'karpenter.sh/disrupted');
      const claim = this.truth.nodes.find((n) => n.nodeName === name)?.claim;
      const untaintsTerminating = drops && claim !== undefined && (await this.store.get(claim))?.phase === 'Terminating';
      this.effects.push({ kind: 'patchNode', atMs: clock.nowMs(), nodeName: name, patch, ...(untaintsTerminating ? { untaintsTerminating } : {}) });
      return patchNode(name, patch);
    };
  }
}

export function isDaemonOrMirror(p: Pod): boolean {
  return p.metadata.annotations?.['kubernetes.io/config.mirror'] !== undefined || !!p.metadata.ownerReferences?.some((o) => o.kind === 'DaemonSet');
}

export function errName(err: unknown): string {
  if (err && typeof err === 'object' && 'name' in err) return String((err as Error).name);
  return typeof err;
}

/** The agent's `Unschedulable Pods` event for `pods` (none = "a full pass"). */
export function unschedulableEvent(pods: Pod[], id: string, at: Date, cluster = Cluster): Record<string, unknown> {
  return {
    version: '0',
    id,
    'detail-type': DetailTypeUnschedulablePods,
    source: AgentSource,
    account: Account,
    time: at.toISOString(),
    region: Region,
    resources: [],
    detail: { schemaVersion: AgentSchemaVersion, cluster, batchId: id, part: 0, parts: 1, observedAt: at.toISOString(), pods },
  };
}

/** A pod kube-scheduler marked Unschedulable. */
export function pendingPod(name: string, cpu: string): Pod {
  const p = podOf({ name, cpu, memory: '512Mi', phase: 'Pending' });
  p.status = { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }] };
  return p;
}

/**
 * A 32-bit hash of `n` (murmur3's finalizer): trial seeds are consecutive, and a generator seeded
 * with nearby integers draws nearly the same first numbers, so every seed is mixed first.
 */
export function mixSeed(n: number, salt = 0): number {
  let h = (n ^ salt) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b) >>> 0;
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35) >>> 0;
  return (h ^ (h >>> 16)) | 0;
}

/** The hex instance id of the n-th nodefleet instance of the world. */
function instanceIdOf(n: number): string {
  return `i-0a${n.toString(16).padStart(15, '0')}`;
}

/** Builds the honest world of `seed`. */
export async function buildWorld(o: WorldOptions): Promise<AttackWorld> {
  const rng = new Rng(mixSeed(o.seed, 0xa77ac));
  const w = fakeWorld({ start: Start, cloud: { terminateState: 'shutting-down' }, kube: { podTermination: 'graceful' } });
  const t0 = w.clock.nowMs();
  const malformed: string[] = [];
  let store: NodeClaimStore = w.store;
  const partition = o.partition ?? `${Cluster}-${o.seed}`;
  if (o.store === 'dynamo') {
    const d = await localDynamo();
    store = new DynamoNodeClaimStore(d.clients.doc, d.local.tableName, partition, (m) => malformed.push(`${m.key}: ${m.problem}`));
  }
  const pools = [nodePool('od', rng), nodePool('spot', rng)];
  const nc = nodeClass();
  w.kube.setNodePools(pools).setNodeClasses([nc]);
  const draw = new Rng(mixSeed(o.seed, 0x5eed));
  const truth: Truth = { t0, nodes: [], legitDeadline: new Map(), mayDisrupt: new Set(), pendingPods: [], pools };
  const world = new AttackWorld(w, store, truth, rng, () => draw.int(0, 0x7fffffff) / 0x80000000, malformed, o.store === 'dynamo' ? partition : undefined);

  const nodes: Node[] = [];
  const pods: Pod[] = [];
  const pdbs: PodDisruptionBudget[] = [];
  // The managed node group's node: CoreDNS under a PDB, no claim, an instance without nodefleet's tags.
  w.cloud.addInstance({
    instanceId: ManagedInstanceId,
    instanceType: 'm5.large',
    zone: Zones[0],
    tags: { 'eks:nodegroup-name': 'system', [`kubernetes.io/cluster/${Cluster}`]: 'owned' },
    privateDnsName: ManagedNodeName,
  });
  const mng = nodeOf({
    name: ManagedNodeName,
    providerID: `aws:///${Zones[0]}/${ManagedInstanceId}`,
    labels: {
      'eks.amazonaws.com/nodegroup': 'system',
      [LabelInstanceType]: 'm5.large',
      [LabelTopologyZone]: Zones[0],
      'kubernetes.io/arch': 'amd64',
      'kubernetes.io/os': 'linux',
    },
  });
  mng.metadata.creationTimestamp = '2025-01-01T00:00:00Z';
  nodes.push(mng);
  for (let i = 1; i <= 2; i++)
    pods.push(
      podOf({
        name: `coredns-${i}`,
        namespace: 'kube-system',
        nodeName: ManagedNodeName,
        labels: { 'k8s-app': 'kube-dns' },
        priorityClassName: 'system-cluster-critical',
        cpu: '100m',
        memory: '70Mi',
      }),
    );
  pdbs.push(pdbOf({ name: 'coredns', namespace: 'kube-system', matchLabels: { 'k8s-app': 'kube-dns' }, disruptionsAllowed: rng.pick([0, 1]) }));

  const count = rng.int(2, 4);
  const expiredIndex = rng.chance(0.3) ? rng.int(1, count) : 0;
  for (let i = 1; i <= count; i++) {
    const pool = rng.pick(pools);
    const capacityType: 'spot' | 'on-demand' = pool.metadata.name === 'spot' ? 'spot' : 'on-demand';
    const zone = rng.pick(Zones);
    const t = rng.pick(NodeTypes);
    const instanceId = instanceIdOf(i);
    const nodeName = `ip-10-0-${i}-${10 + i}.ec2.internal`;
    const claimName = `${pool.metadata.name}-${'abcdefghij'[i]}${rng.int(1000, 9999)}`;
    const providerId = `aws:///${zone}/${instanceId}`;
    const created = new Date(t0 - rng.int(2, 48) * 3600_000).toISOString();
    w.cloud.addInstance({
      instanceId,
      instanceType: t.type,
      zone,
      capacityType,
      launchTime: created,
      privateDnsName: nodeName,
      tags: {
        [TagNodefleetCluster]: Cluster,
        [`kubernetes.io/cluster/${Cluster}`]: 'owned',
        'karpenter.sh/nodepool': pool.metadata.name,
        [TagNodeClaim]: claimName,
        'karpenter.k8s.aws/ec2nodeclass': 'default',
      },
    });
    const n = nodeOf({
      name: nodeName,
      providerID: providerId,
      allocatable: { cpu: t.cpu, memory: t.memory, pods: '58' },
      labels: {
        [LabelNodePool]: pool.metadata.name,
        [LabelInstanceType]: t.type,
        [LabelTopologyZone]: zone,
        [LabelCapacityType]: capacityType,
        'kubernetes.io/arch': 'amd64',
        'kubernetes.io/os': 'linux',
        [LabelInitialized]: 'true',
        [LabelRegistered]: 'true',
        'karpenter.k8s.aws/instance-category': t.type[0],
      },
    });
    n.metadata.creationTimestamp = created;
    nodes.push(n);
    const tgp = parseDurationSeconds(pool.spec.template.spec.terminationGracePeriod);
    const expired = i === expiredIndex;
    const at = (ms: number) => new Date(ms).toISOString();
    const claim = NodeClaimSchema.parse({
      name: claimName,
      cluster: Cluster,
      nodePool: pool.metadata.name,
      nodeClass: 'default',
      requirements: pool.spec.template.spec.requirements,
      resources: { requests: { cpu: '1', memory: '1Gi' } },
      labels: { [LabelNodePool]: pool.metadata.name },
      instanceType: t.type,
      zone,
      capacityType,
      instanceId,
      providerId,
      nodeName,
      capacity: { cpu: t.cpu, memory: t.memory, pods: '58' },
      allocatable: { cpu: t.cpu, memory: t.memory, pods: '58' },
      conditions: ['Launched', 'Registered', 'Initialized', 'Ready'].map((type) => ({ type, status: 'True', lastTransitionTime: created })),
      phase: 'Initialized',
      nodePoolHash: nodePoolHash(pool),
      nodeClassHash: nodeClassHash(nc),
      createdAt: created,
      expireAt: expired ? at(t0 - 60_000) : at(Date.parse(created) + 720 * 3600_000),
      ...(tgp !== undefined ? { terminationGracePeriodSeconds: tgp } : {}),
      annotations: { [AnnotationLastPodEventTime]: at(t0) },
    });
    await store.create(claim);
    // A claim past its expiry is terminated by the honest world itself: its cutoff may come tgp after t0, not before.
    if (expired && tgp !== undefined) truth.legitDeadline.set(claimName, t0 + tgp * 1000);
    if (expired) truth.mayDisrupt.add(claimName);
    const tn: TrueNode = {
      claim: claimName,
      nodeName,
      instanceId,
      providerId,
      nodePool: pool.metadata.name,
      capacityType,
      zone,
      instanceType: t.type,
      pods: [],
    };
    const add = (p: Pod) => {
      pods.push(p);
      tn.pods.push(`${p.metadata.namespace}/${p.metadata.name}`);
    };
    add(podOf({ name: `agent-${i}`, nodeName, owner: 'DaemonSet', cpu: '50m', memory: '64Mi' }));
    for (let k = 0, m = rng.int(0, 3); k < m; k++) {
      const kind = rng.pick(['plain', 'dnd', 'pdb', 'pdb']);
      const name = `${kind === 'pdb' ? 'db' : kind === 'dnd' ? 'batch' : 'web'}-${i}-${k}`;
      add(
        podOf({
          name,
          nodeName,
          labels: { app: kind === 'pdb' ? 'db' : name },
          ...(kind === 'dnd' ? { annotations: { [AnnotationDoNotDisrupt]: 'true' } } : {}),
          owner: kind === 'pdb' ? 'StatefulSet' : 'ReplicaSet',
          cpu: rng.pick(['100m', '250m', '500m']),
          memory: '256Mi',
          terminationGracePeriodSeconds: rng.pick([5, 30, 60]),
        }),
      );
    }
    truth.nodes.push(tn);
  }
  if (rng.chance(0.5)) {
    // A node that joined a minute ago: its claim Launched, its kubelet's Node still tainted unregistered.
    const i = count + 1;
    const pool = rng.pick(pools);
    const capacityType: 'spot' | 'on-demand' = pool.metadata.name === 'spot' ? 'spot' : 'on-demand';
    const zone = rng.pick(Zones);
    const instanceId = instanceIdOf(i);
    const nodeName = `ip-10-0-${i}-${10 + i}.ec2.internal`;
    const claimName = `${pool.metadata.name}-j${rng.int(1000, 9999)}`;
    const providerId = `aws:///${zone}/${instanceId}`;
    const launched = new Date(t0 - 60_000).toISOString();
    w.cloud.addInstance({
      instanceId,
      instanceType: 'm5.large',
      zone,
      capacityType,
      launchTime: launched,
      privateDnsName: nodeName,
      tags: {
        [TagNodefleetCluster]: Cluster,
        [`kubernetes.io/cluster/${Cluster}`]: 'owned',
        'karpenter.sh/nodepool': pool.metadata.name,
        [TagNodeClaim]: claimName,
        'karpenter.k8s.aws/ec2nodeclass': 'default',
      },
    });
    const n = nodeOf({
      name: nodeName,
      providerID: providerId,
      labels: {
        [LabelNodePool]: pool.metadata.name,
        [LabelInstanceType]: 'm5.large',
        [LabelTopologyZone]: zone,
        [LabelCapacityType]: capacityType,
        'kubernetes.io/arch': 'amd64',
        'kubernetes.io/os': 'linux',
      },
      taints: [{ key: TaintUnregistered.key, effect: TaintUnregistered.effect }],
    });
    n.metadata.creationTimestamp = new Date(t0 - 20_000).toISOString();
    nodes.push(n);
    await store.create(
      NodeClaimSchema.parse({
        name: claimName,
        cluster: Cluster,
        nodePool: pool.metadata.name,
        nodeClass: 'default',
        requirements: pool.spec.template.spec.requirements,
        resources: { requests: { cpu: '500m', memory: '512Mi' } },
        labels: { [LabelNodePool]: pool.metadata.name },
        instanceType: 'm5.large',
        zone,
        capacityType,
        instanceId,
        providerId,
        conditions: [{ type: 'Launched', status: 'True', lastTransitionTime: launched }],
        phase: 'Launched',
        nodePoolHash: nodePoolHash(pool),
        nodeClassHash: nodeClassHash(nc),
        createdAt: new Date(t0 - 70_000).toISOString(),
      }),
    );
    const tn: TrueNode = {
      claim: claimName,
      nodeName,
      instanceId,
      providerId,
      nodePool: pool.metadata.name,
      capacityType,
      zone,
      instanceType: 'm5.large',
      pods: [],
    };
    truth.nodes.push(tn);
    truth.joining = tn;
  }
  if (pods.some((p) => p.metadata.labels?.app === 'db')) pdbs.push(pdbOf({ name: 'db', matchLabels: { app: 'db' }, disruptionsAllowed: 0 }));
  for (let k = 0, m = rng.int(0, 2); k < m; k++) {
    // Bigger than any node's free room: it needs a launch.
    const p = pendingPod(`pending-${k}`, rng.pick(['5', '6']));
    pods.push(p);
    truth.pendingPods.push(`default/${p.metadata.name}`);
  }
  w.kube.addNode(...nodes);
  w.kube.addPods(...pods);
  w.kube.addPdb(...pdbs);
  world.initial.nodes.push(...nodes.map((n) => structuredClone(n)));
  world.initial.pods.push(...pods.map((p) => structuredClone(p)));
  world.initial.pdbs.push(...pdbs.map((p) => structuredClone(p)));
  // The agent's view, current at t0.
  world.views.publish(
    Cluster,
    nodes,
    pods.filter((p) => p.spec.nodeName),
    w.clock.now(),
  );
  return world;
}
