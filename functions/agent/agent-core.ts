/**
 * The agent's state machine, apart from I/O so tests drive it directly: pending pods in,
 * batches out (idle 1 s / max 10 s as Karpenter), pending pods re-sent periodically, node
 * lifecycle changes forwarded, and per node the last time a pod was bound to or removed from it
 * (Karpenter's NodeClaim `status.lastPodEventTime`, which restarts consolidateAfter), sent at most
 * once per node per {@link PodEventMinIntervalMs}, and NodeClaim objects whose deletion waits on
 * karpenter.sh/termination (`kubectl delete nodeclaim`, forwarded as a Node deletion is). Failed publishes are kept and retried: nothing is lost while
 * EventBridge is briefly unavailable.
 */
import { DefaultSettings } from '../../shared/api/settings.ts';
import { createHash } from 'node:crypto';
import type { EventPublisher } from '../../shared/api/ports.ts';
import type { Node, Pod } from '../../shared/api/kube.ts';
import {
  compactNode,
  compactNodeClaim,
  compactPod,
  type AgentNodeClaim,
  type AgentPod,
  type NodeClaimLifecycleDetail,
  type NodeLifecycleDetail,
} from '../../shared/api/agent-events.ts';
import {
  AgentSchemaVersion,
  AgentSource,
  DetailTypeNodeClaimLifecycle,
  DetailTypeNodeLifecycle,
  DetailTypeUnschedulablePods,
} from '../../shared/api/contract.ts';
import { FinalizerTermination, LabelInitialized, LabelNodePool, TaintDisrupted, TaintUnregistered } from '../../shared/api/labels.ts';
import { isProvisionable } from './select.ts';
import { splitDetails } from './split.ts';

/** Karpenter's default `BATCH_IDLE_DURATION` (1 s; shared/api/settings.ts). */
export const BatchIdleMs = DefaultSettings.batchIdleDuration;
/** Karpenter's default `BATCH_MAX_DURATION` (10 s; shared/api/settings.ts). */
export const BatchMaxMs = DefaultSettings.batchMaxDuration;
/**
 * Still-pending pods are sent again after this long. Karpenter re-triggers provisioning every 10 s
 * in-process; here each send is a Lambda invocation, and the provisioner skips pods already on an
 * in-flight claim, so 30 s keeps retries (after ICE, after an unfulfillable claim) without a storm.
 */
export const PendingResendMs = 30_000;

/**
 * Pod activity on one node is reported at most this often. Karpenter patches `lastPodEventTime`
 * on every pod event; here each report is an EventBridge event and a Lambda invocation with a
 * DynamoDB write, so a busy node (a rollout, a Job fan-out) is coalesced: the first event is sent
 * at once, later ones wait until 10 s after the previous send and carry the latest time. A
 * consolidateAfter shorter than 10 s can therefore see a pod event up to 10 s late.
 */
export const PodEventMinIntervalMs = 10_000;

/** What the agent keeps of a pod bound to a node, for pod-event tracking (DaemonSet pods are not tracked). */
export interface PodBinding {
  node: string;
  /** Terminal (Succeeded / Failed) or terminating (deletionTimestamp set): removed from the node. */
  removed: boolean;
}

/** The reflector's view of a pod: its compact form when provisionable, its binding when bound. */
export interface PodView {
  pending?: AgentPod;
  binding?: PodBinding;
}

/** A structured log sink (JSON lines in main.ts). */
export type AgentLog = (level: 'debug' | 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>) => void;

export interface AgentCoreOptions {
  clusterName: string;
  publisher: EventPublisher;
  batchIdleMs?: number;
  batchMaxMs?: number;
  pendingResendMs?: number;
  /** Override of {@link PodEventMinIntervalMs}. */
  podEventMinIntervalMs?: number;
  log?: AgentLog;
  /** Epoch ms (injected for tests). */
  nowMs?: () => number;
  /** Timer source (default the global setTimeout; the embedded environment's chaos runs pass its virtual clock). */
  timers?: AgentTimers;
}

/** A one-shot timer source: `set` runs `fn` after `ms`; the returned handle cancels it. */
export interface AgentTimers {
  set(fn: () => void, ms: number): { cancel(): void };
}

/** The default timer source: Node's setTimeout, unref'd so an idle agent never holds a process open. */
export const RealTimers: AgentTimers = {
  set(fn, ms) {
    const t = setTimeout(fn, ms);
    t.unref?.();
    return { cancel: () => clearTimeout(t) };
  },
};

interface PendingPod {
  pod: AgentPod;
  lastSentMs?: number;
}

interface NodeState {
  fingerprint: string;
  ready: boolean;
  providerID?: string;
  /** The node as last seen, while nodefleet has not finished registering it (see {@link registrationUnfinished}). */
  unfinished?: Node;
  /** When an event for this node was last queued (epoch ms). */
  sentMs?: number;
  /** Being deleted ({@link nodeDeleting}). */
  deleting: boolean;
}

/**
 * Whether the node is being deleted: a deletionTimestamp, or the karpenter.sh/disrupted taint
 * termination's Cordon task puts on it. The agent only reports the change (an `Unschedulable Pods`
 * event without pods, {@link AgentCore.nodeChanged}); which of its pods need capacity the
 * provisioner decides (shared/disruption/pods.ts deletingNodePods).
 */
export function nodeDeleting(n: Node): boolean {
  return !!n.metadata.deletionTimestamp || !!n.spec?.taints?.some((t) => t.key === TaintDisrupted.key && t.effect === TaintDisrupted.effect);
}

/**
 * A node nodefleet launched whose registration is not finished: it still carries the
 * karpenter.sh/unregistered taint, or has a NodePool label but not karpenter.sh/initialized.
 * Its state is re-sent every pending-resend period, as pending pods are: registration is driven by
 * node events, and one lost event (a dead-lettered delivery) must not leave a claim Registered for ever.
 */
export function registrationUnfinished(n: Node): boolean {
  if (!n.spec?.providerID) return false;
  if (n.spec.taints?.some((t) => t.key === TaintUnregistered.key)) return true;
  return !!n.metadata.labels?.[LabelNodePool] && n.metadata.labels?.[LabelInitialized] !== 'true';
}

/** Pod activity of one node: the latest event, the latest event sent, and when it was sent (epoch ms). */
interface PodActivity {
  lastEventMs: number;
  sentEventMs?: number;
  sentAtMs?: number;
}

function nodeFingerprint(n: Node): NodeState {
  const ready = n.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
  const f = JSON.stringify([
    n.spec?.providerID,
    !!n.metadata.deletionTimestamp,
    n.metadata.labels ?? {},
    n.spec?.taints?.map((t) => `${t.key}=${t.value ?? ''}:${t.effect}`) ?? [],
    n.spec?.unschedulable ?? false,
    ready,
    n.status?.allocatable ?? {},
  ]);
  return {
    fingerprint: createHash('sha1').update(f).digest('hex'),
    ready,
    deleting: nodeDeleting(n),
    ...(n.spec?.providerID ? { providerID: n.spec.providerID } : {}),
  };
}

/** A bound, non-DaemonSet pod's binding; undefined for unbound and DaemonSet pods (KC podevents skips those). */
export function podBinding(p: Pod): PodBinding | undefined {
  if (!p.spec?.nodeName) return undefined;
  if (p.metadata.ownerReferences?.some((o) => o.kind === 'DaemonSet')) return undefined;
  const terminal = p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed';
  return { node: p.spec.nodeName, removed: terminal || !!p.metadata.deletionTimestamp };
}

/**
 * What the agent keeps of a NodeClaim object: its compact form while it is being deleted and
 * holds karpenter.sh/termination (the deletion waits for nodefleet's termination), else nothing.
 * Which stored claim it names, and whether it is nodefleet's, registration decides on the live
 * object (shared/disruption/deletion.ts nodeClaimObjectDeletionRefusal).
 */
export function nodeClaimDeletion(raw: {
  metadata: { name: string; deletionTimestamp?: string; finalizers?: string[] };
  status?: { providerID?: string };
}): AgentNodeClaim | undefined {
  if (!raw.metadata.deletionTimestamp || !(raw.metadata.finalizers ?? []).includes(FinalizerTermination)) return undefined;
  return compactNodeClaim(raw);
}

export class AgentCore {
  readonly pending = new Map<string, PendingPod>();
  private readonly nodes = new Map<string, NodeState>();
  private bindings = new Map<string, PodBinding>();
  private bindingsSynced = false;
  private readonly podActivity = new Map<string, PodActivity>();
  private podEventTimer?: { cancel(): void };
  private readonly batch = new Set<string>();
  private batchStartMs?: number;
  private idleTimer?: { cancel(): void };
  private maxTimer?: { cancel(): void };
  private resendTimer?: { cancel(): void };
  private readonly timers: AgentTimers;
  private stopped = false;
  private readonly nodeOutbox: NodeLifecycleDetail[] = [];
  /** NodeClaim objects being deleted that were reported (by name), and the reports not sent yet. */
  private readonly deletingNodeClaims = new Set<string>();
  private readonly nodeClaimOutbox: NodeClaimLifecycleDetail[] = [];
  /** A node started being deleted since the last flush: ask the provisioner for a full pass. */
  private deletionSeen = false;
  private seq = 0;
  private flushing: Promise<void> = Promise.resolve();
  private readonly nowMs: () => number;
  private readonly log: AgentLog;

  constructor(private readonly opts: AgentCoreOptions) {
    this.nowMs = opts.nowMs ?? (() => Date.now());
    this.log = opts.log ?? (() => {});
    this.timers = opts.timers ?? RealTimers;
  }

  /** Starts the periodic re-send of still-pending pods. */
  start(): void {
    const every = this.opts.pendingResendMs ?? PendingResendMs;
    const period = Math.max(1_000, Math.floor(every / 3));
    const tick = () => {
      if (this.stopped) return;
      this.resendStale();
      this.resendTimer = this.timers.set(tick, period);
    };
    this.resendTimer = this.timers.set(tick, period);
  }

  stop(): void {
    this.stopped = true;
    this.resendTimer?.cancel();
    this.idleTimer?.cancel();
    this.maxTimer?.cancel();
    this.podEventTimer?.cancel();
  }

  /** Reduces a raw pod to what is kept: its compact form when provisionable. */
  static podTransform(raw: Pod): AgentPod | undefined {
    return isProvisionable(raw) ? compactPod(raw) : undefined;
  }

  /** Reduces a raw pod to what the agent keeps (see {@link PodView}); undefined when neither. */
  static podView(raw: Pod): PodView | undefined {
    const pending = AgentCore.podTransform(raw);
    const binding = podBinding(raw);
    if (!pending && !binding) return undefined;
    return { ...(pending ? { pending } : {}), ...(binding ? { binding } : {}) };
  }

  /** A full pod list (initial list or re-list) in the {@link PodView} form. */
  onPodViewSync(items: Map<string, PodView>): void {
    const pending = new Map<string, AgentPod>();
    const bindings = new Map<string, PodBinding>();
    for (const [key, v] of items) {
      if (v.pending) pending.set(key, v.pending);
      if (v.binding) bindings.set(key, v.binding);
    }
    this.onPodSync(pending);
    this.onPodBindingSync(bindings);
  }

  /** One pod watch event in the {@link PodView} form (`view` undefined when dropped or deleted). */
  onPodViewEvent(type: 'ADDED' | 'MODIFIED' | 'DELETED', key: string, view: PodView | undefined): void {
    this.onPodEvent(type, key, view?.pending);
    this.onPodBindingEvent(type, key, view?.binding);
  }

  // ---- pods ----

  onPodSync(items: Map<string, AgentPod>): void {
    for (const key of [...this.pending.keys()]) if (!items.has(key)) this.pending.delete(key);
    for (const [key, pod] of items) this.upsertPod(key, pod);
  }

  onPodEvent(type: 'ADDED' | 'MODIFIED' | 'DELETED', key: string, pod: AgentPod | undefined): void {
    if (type === 'DELETED' || !pod) {
      this.pending.delete(key);
      return;
    }
    this.upsertPod(key, pod);
  }

  private upsertPod(key: string, pod: AgentPod): void {
    const prev = this.pending.get(key);
    this.pending.set(key, { pod, lastSentMs: prev?.lastSentMs });
    if (!prev) this.enqueue(key);
  }

  private resendStale(): void {
    const cutoff = this.nowMs() - (this.opts.pendingResendMs ?? PendingResendMs);
    for (const [key, p] of this.pending) if (p.lastSentMs !== undefined && p.lastSentMs <= cutoff) this.enqueue(key);
    for (const st of this.nodes.values()) if (st.unfinished && (st.sentMs ?? 0) <= cutoff) this.queueNode('updated', st.unfinished, st);
  }

  private enqueue(key: string): void {
    this.batch.add(key);
    const now = this.nowMs();
    this.batchStartMs ??= now;
    this.idleTimer?.cancel();
    this.idleTimer = this.timers.set(() => void this.flush(), this.opts.batchIdleMs ?? BatchIdleMs);
    if (!this.maxTimer) this.maxTimer = this.timers.set(() => void this.flush(), this.opts.batchMaxMs ?? BatchMaxMs);
  }

  /** Sends the current batch (and queued node events) now. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.doFlush());
    return this.flushing;
  }

  private async doFlush(): Promise<void> {
    this.idleTimer?.cancel();
    this.maxTimer?.cancel();
    this.idleTimer = this.maxTimer = undefined;
    this.batchStartMs = undefined;
    const keys = [...this.batch].filter((k) => this.pending.has(k));
    this.batch.clear();
    if (keys.length) {
      const now = this.nowMs();
      const batchId = `${this.opts.clusterName}-${now}-${++this.seq}`;
      const details = splitDetails(
        keys.map((k) => this.pending.get(k)!.pod),
        { cluster: this.opts.clusterName, batchId, observedAt: new Date(now).toISOString() },
      );
      const r = await this.opts.publisher.publish(details.map((detail) => ({ source: AgentSource, detailType: DetailTypeUnschedulablePods, detail })));
      if (r.failed > 0) {
        // Which entries failed is not known: send the whole batch again (the provisioner deduplicates).
        this.log('warn', 'publishing unschedulable pods failed, will retry', { pods: keys.length, failedEntries: r.failed });
        for (const k of keys) this.enqueue(k);
      } else {
        for (const k of keys) {
          const p = this.pending.get(k);
          if (p) p.lastSentMs = now;
        }
        this.log('info', 'sent unschedulable pods', { pods: keys.length, events: details.length, batchId });
      }
    }
    await this.flushNodes();
    await this.flushNodeClaims();
    await this.flushDeletion();
  }

  /**
   * An `Unschedulable Pods` event without pods when a node started being deleted: the provisioner
   * then runs a full pass, which provisions ahead for that node's pods before they are evicted
   * (functions/provisioner/provision.ts). Retried on the next flush when the publish fails.
   */
  private async flushDeletion(): Promise<void> {
    if (!this.deletionSeen) return;
    this.deletionSeen = false;
    const now = this.nowMs();
    const detail = {
      schemaVersion: AgentSchemaVersion,
      cluster: this.opts.clusterName,
      batchId: `${this.opts.clusterName}-${now}-${++this.seq}`,
      part: 0,
      parts: 1,
      observedAt: new Date(now).toISOString(),
      pods: [],
    };
    const r = await this.opts.publisher.publish([{ source: AgentSource, detailType: DetailTypeUnschedulablePods, detail }]);
    if (r.failed > 0) {
      this.deletionSeen = true;
      this.timers.set(() => void this.flush(), this.opts.batchIdleMs ?? BatchIdleMs);
    } else this.log('info', 'sent node deletion for provisioning', { batchId: detail.batchId });
  }

  // ---- pod events per node (lastPodEventTime) ----

  /**
   * Bound pods from a list. The first list is the baseline (nothing reported: the claims keep the
   * times they have); a re-list reports what the watch missed (pods bound, removed or gone).
   * The first list's map is kept as the core's own: the caller must not change it afterwards.
   */
  onPodBindingSync(items: Map<string, PodBinding>): void {
    if (!this.bindingsSynced) {
      this.bindingsSynced = true;
      // The baseline is the list's map itself (taken over, not copied: 100 000 pods at scale).
      if (this.bindings.size === 0) this.bindings = items;
      else for (const [key, b] of items) this.bindings.set(key, b);
      return;
    }
    for (const key of [...this.bindings.keys()]) if (!items.has(key)) this.podBindingChanged(key, undefined);
    for (const [key, b] of items) this.podBindingChanged(key, b);
  }

  onPodBindingEvent(type: 'ADDED' | 'MODIFIED' | 'DELETED', key: string, binding: PodBinding | undefined): void {
    this.podBindingChanged(key, type === 'DELETED' ? undefined : binding);
  }

  private podBindingChanged(key: string, b: PodBinding | undefined): void {
    const prev = this.bindings.get(key);
    if (b) this.bindings.set(key, b);
    else this.bindings.delete(key);
    // Karpenter's pod events: bound to a node, or went terminal / terminating (deleted outright too).
    if (prev && !prev.removed && (!b || b.node !== prev.node)) this.podEvent(prev.node);
    if (b && (!prev || prev.node !== b.node)) this.podEvent(b.node);
    else if (b && prev && !prev.removed && b.removed) this.podEvent(b.node);
  }

  private podEvent(node: string): void {
    const a = this.podActivity.get(node);
    const now = this.nowMs();
    if (a) a.lastEventMs = now;
    else this.podActivity.set(node, { lastEventMs: now });
    this.sendDuePodEvents();
  }

  /** Queues a pod-activity event for every node whose news is due; re-arms one timer for the rest. */
  private sendDuePodEvents(): void {
    this.podEventTimer?.cancel();
    this.podEventTimer = undefined;
    const now = this.nowMs();
    const every = this.opts.podEventMinIntervalMs ?? PodEventMinIntervalMs;
    let next: number | undefined;
    let queued = false;
    for (const [name, a] of this.podActivity) {
      if (a.sentEventMs !== undefined && a.sentEventMs >= a.lastEventMs) continue;
      const due = a.sentAtMs === undefined ? now : a.sentAtMs + every;
      if (due > now) {
        next = Math.min(next ?? due, due);
        continue;
      }
      const providerID = this.nodes.get(name)?.providerID;
      if (!providerID) continue; // node not seen yet (or no providerID): sent once it is (nodeChanged)
      this.nodeOutbox.push({
        schemaVersion: AgentSchemaVersion,
        cluster: this.opts.clusterName,
        change: 'updated',
        observedAt: new Date(now).toISOString(),
        node: { metadata: { name }, spec: { providerID } },
        lastPodEventTime: new Date(a.lastEventMs).toISOString(),
      });
      a.sentEventMs = a.lastEventMs;
      a.sentAtMs = now;
      queued = true;
    }
    if (queued) void this.flush();
    if (next !== undefined) {
      this.podEventTimer = this.timers.set(() => this.sendDuePodEvents(), next - now);
    }
  }

  // ---- nodes ----

  onNodeSync(items: Map<string, Node>): void {
    for (const name of [...this.nodes.keys()]) if (!items.has(name)) this.nodeChanged('DELETED', name, undefined);
    for (const [name, n] of items) this.nodeChanged(this.nodes.has(name) ? 'MODIFIED' : 'ADDED', name, n);
  }

  nodeChanged(type: 'ADDED' | 'MODIFIED' | 'DELETED', name: string, n: Node | undefined): void {
    const prev = this.nodes.get(name);
    if (type === 'DELETED' || !n) {
      if (!prev) return;
      this.nodes.delete(name);
      this.podActivity.delete(name);
      this.queueNode('deleted', { metadata: { name } });
      return;
    }
    const cur: NodeState = { ...nodeFingerprint(n), sentMs: prev?.sentMs, ...(registrationUnfinished(n) ? { unfinished: n } : {}) };
    this.nodes.set(name, cur);
    if (cur.deleting && !prev?.deleting) {
      this.deletionSeen = true;
      void this.flush();
    }
    if (!prev) this.queueNode('added', n, cur);
    else if (cur.ready && !prev.ready) this.queueNode('ready', n, cur);
    else if (cur.fingerprint !== prev.fingerprint) this.queueNode('updated', n, cur);
    if (cur.providerID && !prev?.providerID && this.podActivity.has(name)) this.sendDuePodEvents();
  }

  private queueNode(change: NodeLifecycleDetail['change'], n: Node, st?: NodeState): void {
    if (st) st.sentMs = this.nowMs();
    this.nodeOutbox.push({
      schemaVersion: AgentSchemaVersion,
      cluster: this.opts.clusterName,
      change,
      observedAt: new Date(this.nowMs()).toISOString(),
      node: compactNode(n),
    });
    void this.flush();
  }

  // ---- NodeClaim objects ----

  /** A full NodeClaim list ({@link nodeClaimDeletion} form): deletions not reported yet are (a restarted agent reports each again). */
  onNodeClaimSync(items: Map<string, AgentNodeClaim>): void {
    for (const name of [...this.deletingNodeClaims]) if (!items.has(name)) this.deletingNodeClaims.delete(name);
    for (const [name, c] of items) this.nodeClaimChanged('MODIFIED', name, c);
  }

  /** One NodeClaim watch event; `c` undefined when the object is not being deleted (or is gone). */
  nodeClaimChanged(type: 'ADDED' | 'MODIFIED' | 'DELETED', name: string, c: AgentNodeClaim | undefined): void {
    if (type === 'DELETED' || !c) {
      this.deletingNodeClaims.delete(name);
      return;
    }
    if (this.deletingNodeClaims.has(name)) return;
    this.deletingNodeClaims.add(name);
    this.nodeClaimOutbox.push({
      schemaVersion: AgentSchemaVersion,
      cluster: this.opts.clusterName,
      change: 'deleting',
      observedAt: new Date(this.nowMs()).toISOString(),
      nodeClaim: c,
    });
    void this.flush();
  }

  private async flushNodeClaims(): Promise<void> {
    if (this.nodeClaimOutbox.length === 0) return;
    const out = this.nodeClaimOutbox.splice(0);
    const r = await this.opts.publisher.publish(out.map((detail) => ({ source: AgentSource, detailType: DetailTypeNodeClaimLifecycle, detail })));
    if (r.failed > 0) {
      this.log('warn', 'publishing nodeclaim events failed, will retry', { failedEntries: r.failed });
      this.nodeClaimOutbox.unshift(...out.slice(out.length - r.failed));
      this.timers.set(() => void this.flush(), this.opts.batchIdleMs ?? BatchIdleMs);
    } else this.log('info', 'sent nodeclaim deletions', { nodeClaims: out.map((d) => d.nodeClaim.metadata.name) });
  }

  private async flushNodes(): Promise<void> {
    if (this.nodeOutbox.length === 0) return;
    const out = this.nodeOutbox.splice(0);
    const r = await this.opts.publisher.publish(out.map((detail) => ({ source: AgentSource, detailType: DetailTypeNodeLifecycle, detail })));
    if (r.failed > 0) {
      this.log('warn', 'publishing node events failed, will retry', { failedEntries: r.failed });
      this.nodeOutbox.unshift(...out.slice(out.length - r.failed));
      this.timers.set(() => void this.flush(), this.opts.batchIdleMs ?? BatchIdleMs);
    }
  }
}
