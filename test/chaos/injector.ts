/**
 * The fault schedule of one chaos run and the {@link FaultHooks} that carry it out.
 *
 * A run's faults are drawn from its seed: `count` faults at random virtual instants in the
 * active window, each of a kind from {@link FaultKinds}. At its instant a fault is armed: a
 * one-shot hook fault (drop the next event, crash the next provisioner invocation before its
 * 2nd effect, …) waits for the call it applies to; a window fault (EC2 throttling for 20 s)
 * applies to every call in its window; an action fault (terminate an instance out of band)
 * happens at once. A fault is counted as injected only when it actually changed something.
 * When the active window ends everything is disarmed (`stop`), so the run can show it recovers.
 */
import type { LocalEnvironment } from '../../infra/local/environment.ts';
import type { BusAction, CrashPlan, FaultHooks, FaultResponse } from '../../infra/local/faults.ts';
import { Ec2ApiError } from '../../infra/local/ec2/local-ec2.ts';
import { AnnotationSimulateStuckPreStop } from '../../infra/local/kube/controllers.ts';
import type { Pod } from '../../shared/api/kube.ts';
import { Rng } from './rng.ts';
import type { World } from './world.ts';

/** Every fault kind the harness injects (issue 11's list). */
export const FaultKinds = [
  'bus-drop',
  'bus-duplicate',
  'bus-delay',
  'sqs-redelivery',
  'crash-before',
  'crash-after',
  'ec2-throttle',
  'ec2-error',
  'ice',
  'fleet-partial',
  'terminate-fail-transient',
  'terminate-fail-long',
  'oob-terminate',
  'oob-stop',
  'dynamo-throttle',
  'dynamo-conflict',
  'kube-429',
  'kube-500',
  'kube-410',
  'node-delete',
  'agent-restart',
  'stuck-prestop',
  'pdb-zero',
  'never-register',
  'never-ready',
  'spot-interruption',
  'rebalance',
  'sfn-task-fail',
] as const;
/**
 * The real API's own faults, on the real control-plane tier (`--cluster real`): kube-apiserver
 * restarted (every watch ends, requests are refused until it is ready), and a watch expiry (etcd
 * compacted to its current revision, then kube-apiserver restarted: its watch cache starts over
 * from etcd, so every watch resumed from an older resourceVersion gets 410 Gone and lists again).
 * Throttling of evictions is the server's own there: its PDBs answer 429 (`pdb-zero`, `stuck-prestop`).
 */
export const RealApiFaultKinds = ['apiserver-restart', 'watch-expiry'] as const;
export type FaultKind = (typeof FaultKinds)[number] | (typeof RealApiFaultKinds)[number];
/**
 * Faults that answer requests of the embedded API server (its HTTP fault hook): none reaches a real
 * kube-apiserver, whose own faults ({@link RealApiFaultKinds}) replace them on the real tier.
 */
const EmbeddedApiFaultKinds: readonly FaultKind[] = ['kube-429', 'kube-500', 'kube-410'];
/** Every fault kind of the real tier: the harness's own but the embedded API server's, plus the real API's. */
export const RealTierFaultKinds: readonly FaultKind[] = [...FaultKinds.filter((k) => !EmbeddedApiFaultKinds.includes(k)), ...RealApiFaultKinds];

/**
 * Runs a harness write to the cluster (a user's kubectl, not nodefleet's). The embedded cluster's
 * writes are synchronous; the real tier's are promises, and one refused while kube-apiserver
 * restarts is sent again a second later (at most a minute), as a user would, so a fault of the API
 * never loses the harness's own change (a PDB left at zero would keep a run from settling).
 */
export function clusterWrite(write: () => unknown, onGiveUp: (err: Error) => void = () => {}, attempt = 1): void {
  const r = write();
  if (!(r instanceof Promise)) return;
  r.catch((err: Error) => {
    if (attempt >= 60) onGiveUp(err);
    else setTimeout(() => clusterWrite(write, onGiveUp, attempt + 1), 1_000).unref?.();
  });
}

/** Least time between two kube-apiserver restarts of the real tier (apiserver-restart, watch-expiry). */
export const MinRestartGapMs = 60_000;

/** The real tier's record of pod deletions (test/real/scenarios/real-cluster.ts RealCluster). */
interface RealPodDeletions {
  podDeletions(who: (user: string) => boolean): { atMs: number; namespace: string; name: string }[];
}

/** What the injector does to a real control plane (test/real/control-plane/cluster.ts ControlPlane). */
export interface RealControlPlane {
  restartApiServer(): Promise<void>;
  compactEtcd(): Promise<number>;
}

/** One planned fault. */
export interface PlannedFault {
  /** Position in the run's schedule (replay keeps a subset with `--only`). */
  index: number;
  /** Virtual ms from the start of the run. */
  atMs: number;
  kind: FaultKind;
  /** Kind-specific choices, drawn with the schedule (window length, effect number, target function). */
  windowMs: number;
  n: number;
  pick: number;
}

/** A fault that happened. */
export interface InjectedFault {
  index: number;
  kind: FaultKind;
  atMs: number;
  detail: string;
}

/** Functions a crash can hit (Lambda names; `termination.` / `disruption.` = any Task of that state machine). */
const CrashTargets = ['provisioner', 'registration', 'interruption', 'gc', 'disruption', 'termination.'];
const InterruptionRules = new Set(['spotInterruption', 'rebalance', 'stateChange', 'capacityReservationInterruption', 'scheduledChange']);

/** Draws the schedule of `seed`: `count` faults of `kinds` (default {@link FaultKinds}) in [15 s, activeMs). */
export function planFaults(seed: number, count: number, activeMs: number, kinds: readonly FaultKind[] = FaultKinds): PlannedFault[] {
  const rng = new Rng(seed ^ 0xfa17);
  const out: PlannedFault[] = [];
  // Every kind once (in a seeded order) before any repeats, so even a short run mixes kinds.
  const order = [...kinds];
  for (let i = order.length - 1; i > 0; i--) {
    const j = rng.int(0, i);
    [order[i], order[j]] = [order[j], order[i]];
  }
  for (let i = 0; i < count; i++) {
    const kind = i < order.length ? order[i] : rng.pick(kinds);
    out.push({
      index: i,
      atMs: rng.int(15, Math.floor(activeMs / 1000) - 1) * 1000,
      kind,
      windowMs: rng.int(5, 40) * 1000,
      n: rng.int(1, 4),
      pick: rng.int(0, 1_000_000),
    });
  }
  return out.sort((a, b) => a.atMs - b.atMs || a.index - b.index);
}

interface Armed {
  fault: PlannedFault;
  untilMs?: number;
  used?: boolean;
}

/** The hooks of one run. */
export class ChaosInjector implements FaultHooks {
  readonly injected: InjectedFault[] = [];
  /** Pod deletions (not evictions) nodefleet sent to the API server, for the PDB / force-delete invariant. */
  readonly podDeletes: { atMs: number; namespace: string; name: string; nodeName?: string; graceSeconds: number }[] = [];
  /** Evictions nodefleet sent, with the API server's answer unknown here (the server enforces PDBs). */
  private armed: Armed[] = [];
  /** Windows (virtual epoch ms) in which EC2 refuses TerminateInstances (terminate-fail-*). */
  private readonly refusals: { fromMs: number; untilMs: number }[] = [];
  private stopped = false;
  private readonly crashPlans = new Map<CrashPlan, PlannedFault>();
  private readonly restores: (() => void)[] = [];
  private env!: LocalEnvironment;
  /** The real tier: pods as last seen (node, grace period), for the deletions read from the audit log. */
  private podInfo?: Map<string, { nodeName?: string; graceSeconds: number }>;
  /** When the last real-API restart was armed (epoch ms). */
  private lastRestartMs = -Infinity;
  /** The real API's restarts in progress (one at a time: a second waits for the first). */
  private restarting: Promise<void> = Promise.resolve();

  /** `real`: the run's control plane on the real tier (undefined: the embedded cluster). */
  constructor(
    private readonly world: World,
    private readonly real?: () => RealControlPlane,
  ) {}

  attach(env: LocalEnvironment): void {
    this.env = env;
  }

  /**
   * The real tier: nodefleet's pod deletions since the last call, from the API server's audit log
   * (the embedded API server reports each through the `kube` hook instead), with the pod's node and
   * grace period as last seen. Call before each check.
   */
  pullRealPodDeletes(): void {
    const cluster = this.env.cluster as Partial<RealPodDeletions>;
    if (!this.real || typeof cluster.podDeletions !== 'function') return;
    if (!this.podInfo) {
      const info = new Map<string, { nodeName?: string; graceSeconds: number }>();
      this.podInfo = info;
      const remember = (p: Pod) =>
        info.set(`${p.metadata.namespace ?? 'default'}/${p.metadata.name}`, {
          nodeName: p.spec?.nodeName ?? info.get(`${p.metadata.namespace ?? 'default'}/${p.metadata.name}`)?.nodeName,
          graceSeconds: p.spec?.terminationGracePeriodSeconds ?? 30,
        });
      for (const p of this.env.cluster.pods()) remember(p);
      this.env.cluster.onChange((e) => {
        if (e.typeKey === 'v1/pods' && e.type !== 'DELETED') remember(e.object as unknown as Pod);
      });
    }
    for (const d of cluster.podDeletions!((u) => u.startsWith('nodefleet-'))) {
      const p = this.podInfo.get(`${d.namespace}/${d.name}`);
      this.podDeletes.push({ atMs: d.atMs, namespace: d.namespace, name: d.name, nodeName: p?.nodeName, graceSeconds: p?.graceSeconds ?? 30 });
    }
  }

  private now(): number {
    return this.env.clock.nowMs();
  }

  private record(f: PlannedFault, detail: string): void {
    this.injected.push({ index: f.index, kind: f.kind, atMs: this.now() - this.env.clock.startEpochMs(), detail });
  }

  /** Takes the first armed fault of one of `kinds` that `ok` accepts (one-shot) or that is in its window. */
  private take(kinds: FaultKind[], ok: (f: PlannedFault) => boolean = () => true): PlannedFault | undefined {
    if (this.stopped) return undefined;
    const now = this.now();
    for (const a of this.armed) {
      if (!kinds.includes(a.fault.kind) || !ok(a.fault)) continue;
      if (a.untilMs !== undefined) {
        if (now >= a.untilMs) continue;
        if (!a.used) {
          a.used = true;
          this.record(a.fault, `window ${a.fault.windowMs / 1000}s`);
        }
        return a.fault;
      }
      this.armed = this.armed.filter((x) => x !== a);
      return a.fault;
    }
    return undefined;
  }

  /** Arms `f` now (called at its instant). */
  arm(f: PlannedFault): void {
    if (this.stopped) return;
    const env = this.env;
    const rng = new Rng(f.pick);
    const windowed: FaultKind[] = ['ec2-throttle', 'dynamo-throttle', 'kube-429', 'kube-500', 'terminate-fail-transient', 'terminate-fail-long'];
    if (windowed.includes(f.kind)) {
      const ms = f.kind === 'terminate-fail-long' ? rng.int(6, 12) * 60_000 : f.kind === 'terminate-fail-transient' ? rng.int(20, 90) * 1000 : f.windowMs;
      this.armed.push({ fault: f, untilMs: this.now() + ms });
      if (f.kind.startsWith('terminate-fail')) this.refusals.push({ fromMs: this.now(), untilMs: this.now() + ms });
      return;
    }
    switch (f.kind) {
      case 'ice':
      case 'fleet-partial': {
        const zones = f.kind === 'ice' ? undefined : [rng.pick(['us-east-1a', 'us-east-1b', 'us-east-1c', 'us-east-1d'])];
        const capacityType = f.kind === 'ice' ? rng.pick(['spot', 'on-demand'] as const) : undefined;
        env.ec2.addFault({ zones, capacityType, untilMs: this.now() + rng.int(60, 240) * 1000 });
        this.record(f, f.kind === 'ice' ? `no ${capacityType} capacity` : `no capacity in ${zones![0]}`);
        return;
      }
      case 'oob-terminate':
      case 'oob-stop': {
        const inst = this.randomInstance(rng);
        if (!inst) return;
        if (f.kind === 'oob-terminate') env.ec2.terminate([inst], 'spot-reclaim');
        else env.ec2.stopOutOfBand(inst);
        this.record(f, inst);
        return;
      }
      case 'spot-interruption':
      case 'rebalance': {
        const inst = this.spotDuringWork(rng);
        if (!inst) return;
        if (f.kind === 'spot-interruption') env.ec2.interruptSpot(inst);
        else env.ec2.rebalanceRecommendation(inst);
        this.record(f, inst);
        return;
      }
      case 'node-delete': {
        const nodes = env.cluster.nodes().filter((n) => n.metadata.labels?.['karpenter.sh/nodepool']);
        if (!nodes.length) return;
        const n = rng.pick(nodes);
        clusterWrite(() => env.cluster.delete('v1', 'Node', n.metadata.name));
        this.record(f, n.metadata.name);
        return;
      }
      case 'apiserver-restart':
      case 'watch-expiry': {
        const real = this.real?.();
        // At most one restart a minute (a planned one closer to the last is not injected): a server
        // restart takes seconds to tens of seconds here, and back to back they would keep the API down.
        if (!real || this.now() - this.lastRestartMs < MinRestartGapMs) return;
        this.lastRestartMs = this.now();
        const kind = f.kind;
        this.restarting = this.restarting.then(async () => {
          if (this.stopped) return;
          try {
            const revision = kind === 'watch-expiry' ? await real.compactEtcd() : undefined;
            const t = Date.now();
            await real.restartApiServer();
            this.record(
              f,
              `${revision ? `etcd compacted at revision ${revision}, ` : ''}kube-apiserver restarted (${((Date.now() - t) / 1000).toFixed(1)} s down)`,
            );
          } catch (err) {
            this.record(f, `restart failed: ${(err as Error).message}`);
          }
        });
        return;
      }
      case 'agent-restart': {
        if (this.real || rng.chance(0.5)) {
          void env.restartAgent();
          this.record(f, 'agent restarted');
        } else {
          this.record(f, `${env.localCluster.dropWatches()} watches dropped`);
        }
        return;
      }
      case 'stuck-prestop': {
        const pool = rng.pick(this.world.pools);
        const name = `stuck-${f.index}`;
        clusterWrite(() =>
          env.cluster.apply([
            {
              apiVersion: 'policy/v1',
              kind: 'PodDisruptionBudget',
              metadata: { name, namespace: 'default' },
              spec: { maxUnavailable: 0, selector: { matchLabels: { app: name } } },
            },
            {
              apiVersion: 'apps/v1',
              kind: 'Deployment',
              metadata: { name, namespace: 'default' },
              spec: {
                replicas: 1,
                selector: { matchLabels: { app: name } },
                template: {
                  metadata: { labels: { app: name }, annotations: { [AnnotationSimulateStuckPreStop]: 'true' } },
                  spec: {
                    nodeSelector: { 'karpenter.sh/nodepool': pool.name },
                    ...(pool.tainted ? { tolerations: [{ key: 'chaos/dedicated', operator: 'Equal', value: pool.name, effect: 'NoSchedule' }] } : {}),
                    terminationGracePeriodSeconds: 30,
                    containers: [{ name: 'main', image: 'public.ecr.aws/chaos/stuck:1', resources: { requests: { cpu: '250m', memory: '256Mi' } } }],
                  },
                },
              },
            },
          ] as any),
        );
        this.record(f, `${name} in ${pool.name} (preStop hangs, PDB maxUnavailable 0)`);
        return;
      }
      case 'pdb-zero': {
        const pdbs = env.cluster.objects('policy/v1', 'PodDisruptionBudget', 'default').filter((p) => !p.metadata.name.startsWith('stuck-'));
        if (!pdbs.length) return;
        const pdb = rng.pick(pdbs) as any;
        const spec = structuredClone(pdb.spec);
        clusterWrite(() => env.cluster.apply([{ ...pdb, spec: { ...spec, maxUnavailable: 0 } }]));
        const until = rng.int(60, 300) * 1000;
        const restore = () => clusterWrite(() => env.cluster.apply([{ ...pdb, spec }]));
        this.restores.push(restore);
        env.clock.setTimer(() => {
          this.restores.splice(this.restores.indexOf(restore), 1);
          restore();
        }, until);
        this.record(f, `PDB ${pdb.metadata.name} at zero for ${until / 1000}s`);
        return;
      }
      default:
        this.armed.push({ fault: f });
    }
  }

  /** The end (virtual epoch ms) of the latest TerminateInstances refusal begun by `nowMs` (0 when none); a refusal cut short by {@link stop} ends there. */
  terminateRefusedUntil(nowMs: number): number {
    return Math.max(0, ...this.refusals.filter((r) => r.fromMs <= nowMs).map((r) => r.untilMs));
  }

  /** True while EC2 refuses TerminateInstances (an armed terminate-fail window covers `nowMs`). */
  terminateRefusedAt(nowMs: number): boolean {
    return this.refusals.some((r) => r.fromMs <= nowMs && nowMs < r.untilMs);
  }

  /** Resolves once no real-API restart is under way (the run's end waits for the server). */
  quiet(): Promise<void> {
    return this.restarting;
  }

  /** Disarms everything and undoes temporary changes (faults stop). */
  stop(): void {
    this.stopped = true;
    for (const r of this.refusals) r.untilMs = Math.min(r.untilMs, this.now());
    this.armed = [];
    for (const r of this.restores.splice(0)) r();
  }

  /** A running instance nodefleet launched (random), or undefined. */
  private randomInstance(rng: Rng): string | undefined {
    const live = this.env.liveInstances().filter((i) => i.state === 'running');
    return live.length ? rng.pick(live).instanceId : undefined;
  }

  /** A spot instance, preferring one whose node is being drained or whose claim is not yet initialized. */
  private spotDuringWork(rng: Rng): string | undefined {
    const spot = this.env.liveInstances().filter((i) => i.capacityType === 'spot');
    if (!spot.length) return undefined;
    const busy = spot.filter((i) => {
      const node = this.env.cluster.nodes().find((n) => n.spec?.providerID?.endsWith(`/${i.instanceId}`));
      return !node || node.spec?.unschedulable || node.spec?.taints?.some((t) => t.key === 'karpenter.sh/disrupted');
    });
    return rng.pick(busy.length ? busy : spot).instanceId;
  }

  // ---- FaultHooks ----

  ec2(action: string): void {
    if (action === 'TerminateInstances') {
      const f = this.take(['terminate-fail-transient', 'terminate-fail-long']);
      if (f) throw new Ec2ApiError('UnauthorizedOperation', 'You are not authorized to perform this operation. (injected)', 403);
    }
    if (this.take(['ec2-throttle'])) throw new Ec2ApiError('RequestLimitExceeded', 'Request limit exceeded. (injected)', 503);
    const f = this.take(['ec2-error'], () =>
      ['CreateFleet', 'DescribeInstances', 'TerminateInstances', 'CreateTags', 'DescribeLaunchTemplates', 'CreateLaunchTemplate'].includes(action),
    );
    if (f) {
      this.record(f, action);
      throw new Ec2ApiError('InternalError', 'An internal error has occurred (injected)', 500);
    }
  }

  dynamo(op: string, body: string): FaultResponse | undefined {
    if (this.take(['dynamo-throttle']))
      return {
        status: 400,
        code: 'ProvisionedThroughputExceededException',
        message: 'The level of configured provisioned throughput for the table was exceeded (injected)',
      };
    if (['PutItem', 'UpdateItem', 'DeleteItem'].includes(op) && body.includes('ConditionExpression')) {
      const f = this.take(['dynamo-conflict']);
      if (f) {
        this.record(f, op);
        return { status: 400, code: 'ConditionalCheckFailedException', message: 'The conditional request failed (injected)' };
      }
    }
    return undefined;
  }

  kube(method: string, path: string): FaultResponse | undefined {
    if (method === 'DELETE' && /\/api\/v1\/namespaces\/[^/]+\/pods\/[^/?]+/.test(path)) {
      const m = /namespaces\/([^/]+)\/pods\/([^/?]+)/.exec(path)!;
      const name = decodeURIComponent(m[2]);
      const pod = this.env.cluster.pods({ namespace: m[1] }).find((p) => p.metadata.name === name);
      this.podDeletes.push({
        atMs: this.now(),
        namespace: m[1],
        name,
        nodeName: pod?.spec?.nodeName,
        graceSeconds: pod?.spec?.terminationGracePeriodSeconds ?? 30,
      });
    }
    const watch = /[?&]watch=(true|1)/.test(path);
    if (watch) {
      const f = this.take(['kube-410']);
      if (f) {
        this.record(f, path.split('?')[0]);
        return { status: 410, code: 'Expired', message: 'too old resource version (injected)' };
      }
      return undefined;
    }
    if (this.take(['kube-429'])) return { status: 429, code: 'TooManyRequests', message: 'the server has received too many requests (injected)' };
    if (this.take(['kube-500'])) return { status: 500, code: 'InternalError', message: 'Internal error occurred (injected)' };
    return undefined;
  }

  bus(rule: string, event: { id: string; 'detail-type': string }): BusAction | undefined {
    const sqs = InterruptionRules.has(rule);
    const f = this.take(sqs ? ['bus-drop', 'bus-duplicate', 'bus-delay', 'sqs-redelivery'] : ['bus-drop', 'bus-duplicate', 'bus-delay']);
    if (!f) return undefined;
    this.record(f, `${rule} ${event['detail-type']}`);
    if (f.kind === 'bus-drop') return { kind: 'drop' };
    if (f.kind === 'bus-delay') return { kind: 'delay', ms: f.windowMs };
    return { kind: 'duplicate' };
  }

  task(machine: string, state: string): void {
    const f = this.take(['sfn-task-fail'], (x) => (x.n % 2 === 0 ? machine === 'termination' : true));
    if (f) {
      this.record(f, `${machine}.${state}`);
      throw Object.assign(new Error(`Task ${state} failed (injected)`), { name: 'States.TaskFailed' });
    }
  }

  invocation(name: string): CrashPlan | undefined {
    const f = this.take(['crash-before', 'crash-after'], (x) => name.startsWith(CrashTargets[x.pick % CrashTargets.length]));
    if (!f) return undefined;
    const plan: CrashPlan = { effect: f.n, when: f.kind === 'crash-before' ? 'before' : 'after' };
    this.crashPlans.set(plan, f);
    return plan;
  }

  kubelet(_instanceId: string): 'never-register' | 'never-ready' | undefined {
    const f = this.take(['never-register', 'never-ready']);
    if (!f) return undefined;
    this.record(f, _instanceId);
    return f.kind === 'never-register' ? 'never-register' : 'never-ready';
  }

  /** Crashes that actually happened are injected faults too (a planned crash past the invocation's last effect is not). */
  collectCrashes(): void {
    const seen = new Set(this.injected.filter((i) => i.kind.startsWith('crash')).map((i) => i.detail));
    for (const [i, c] of (this.env.crashes?.crashes ?? []).entries()) {
      const key = `${c.name} ${c.when} effect ${c.effect} #${i}`;
      if (seen.has(key)) continue;
      this.injected.push({ index: -1, kind: c.when === 'before' ? 'crash-before' : 'crash-after', atMs: c.atMs - this.env.clock.startEpochMs(), detail: key });
    }
  }
}
