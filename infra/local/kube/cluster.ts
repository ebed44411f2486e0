/**
 * LocalCluster: the Kubernetes stand-in of the embedded environment. A loopback API server
 * (server.ts) over an in-memory store, with simulated controllers, scheduler and kubelets
 * (controllers.ts) driven by an injectable clock, and a typed facade for the orchestration and
 * tests: apply YAML, scale Deployments, add/remove instances, read snapshots, hook events.
 *
 * Time: controllers run (a) right after every API write, (b) on `tick()`, (c) every
 * `reconcileIntervalMs` of real time while started. Delays (boot, ready, grace periods) are
 * measured on the cluster clock, so a compressed clock compresses them.
 */
import { parseAllDocuments } from 'yaml';
import type { KubeObject, Node, Pod } from '../../../shared/api/kube.ts';
import type { Clock } from '../../../shared/api/ports.ts';
import { ApiCore, T } from './api.ts';
import { Controllers, type InstanceSpec, type InstanceState } from './controllers.ts';
import { findTypeByKind } from './resources.ts';
import { startApiServer, type RequestFault, type RequestLogger, type RunningServer } from './server.ts';
import { ObjectStore, rfc3339, type StoreEvent, type WatchEventType } from './store.ts';
import { kubeconfigYaml, writeKubeconfig } from './kubeconfig.ts';

/** Options of {@link LocalCluster}. */
export interface LocalClusterOptions {
  /** The cluster clock. Default: system time. `tick(now)` overrides it from then on. */
  clock?: Clock;
  /** Listen address; default 127.0.0.1. */
  host?: string;
  /** Listen port; default 0 (ephemeral). */
  port?: number;
  /** Real-time milliseconds between background reconciles while started; 0 = only on writes and tick(). Default 100. */
  reconcileIntervalMs?: number;
  /** Cluster-clock seconds from binding (on a Ready node) until a pod is Running. Default 0. */
  podStartupSeconds?: number;
  /** Cluster-clock seconds a deleted pod takes to stop (capped at its grace period) unless annotated otherwise. Default 0. */
  podTerminationSeconds?: number;
  /** Watch events kept for resuming watches (older resourceVersions get 410 Expired). Default 20 000. */
  eventLogSize?: number;
  /** Namespaces that exist from the start. Default: default, kube-system, kube-public, kube-node-lease. */
  namespaces?: string[];
  /** Called for every HTTP request (method, path, status). */
  logRequest?: RequestLogger;
  /** Fault injection: an error status to answer instead of serving a request (off when absent). */
  fault?: RequestFault;
  /** Called when a simulated controller step throws (the others still run). Default: ignored. */
  onControllerError?: (step: string, err: unknown) => void;
}

/** Default real-time interval of background reconciles. */
export const DEFAULT_RECONCILE_INTERVAL_MS = 100;

/** A pod the scheduler could not place, with kube-scheduler's message. */
export type PodPendingListener = (pod: Pod, message: string) => void;
/** A Node was added, modified or deleted. */
export type NodeChangeListener = (type: WatchEventType, node: Node) => void;

/** The local cluster facade. */
export class LocalCluster {
  /** API semantics (escape hatch for tests; writes through it are what HTTP clients see). */
  readonly api: ApiCore;
  readonly store: ObjectStore;
  private readonly controllers: Controllers;
  private server?: RunningServer;
  private manualNow?: Date;
  private reconcileQueued = false;
  private reconciling = false;
  /** Store version after the last pass (a later one means writes happened since). */
  private settledVersion = -1;
  private interval?: NodeJS.Timeout;
  private readonly pendingListeners = new Set<PodPendingListener>();

  constructor(private readonly options: LocalClusterOptions = {}) {
    const now = () => this.now();
    this.store = new ObjectStore(now, options.eventLogSize);
    this.api = new ApiCore(this.store, now, () => this.queueReconcile());
    this.controllers = new Controllers(
      this.api,
      { podPending: (p, m) => this.notifyPending(p, m), error: options.onControllerError },
      { podStartupSeconds: options.podStartupSeconds, podTerminationSeconds: options.podTerminationSeconds },
    );
    for (const ns of options.namespaces ?? ['default', 'kube-system', 'kube-public', 'kube-node-lease']) {
      this.store.create(T.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns }, status: { phase: 'Active' } } as KubeObject);
    }
  }

  /** The cluster's current time. */
  now(): Date {
    return this.manualNow ?? this.options.clock?.now() ?? new Date();
  }

  /**
   * Starts the API server on loopback.
   * @returns its base URL, e.g. `{ url: "http://127.0.0.1:41235" }`.
   */
  async start(): Promise<{ url: string }> {
    if (this.server) return { url: this.server.url };
    this.server = await startApiServer(this.api, { host: this.options.host, port: this.options.port, log: this.options.logRequest, fault: this.options.fault });
    const ms = this.options.reconcileIntervalMs ?? DEFAULT_RECONCILE_INTERVAL_MS;
    if (ms > 0) {
      // skip idle passes: nothing was written since the last settled pass and nothing is due yet
      this.interval = setInterval(() => {
        if (this.store.resourceVersion === this.settledVersion && this.now().getTime() < this.controllers.nextWakeMs) return;
        this.reconcileNow();
      }, ms);
      this.interval.unref();
    }
    return { url: this.server.url };
  }

  /** Stops the server (open watches end) and the background reconciles. Safe to call twice. */
  async stop(): Promise<void> {
    if (this.interval) clearInterval(this.interval);
    this.interval = undefined;
    const s = this.server;
    this.server = undefined;
    await s?.close();
  }

  /**
   * Ends every open watch stream, as an API server restart or a load balancer timeout would;
   * clients resume from their resourceVersion (or re-list after 410). Returns how many ended.
   */
  dropWatches(): number {
    return this.server?.closeWatches() ?? 0;
  }

  /** Virtual epoch ms of the next timed change a controller waits for (a kubelet boot, a grace period). */
  nextWakeMs(): number {
    return this.controllers.nextWakeMs;
  }

  /** Base URL while started. @throws Error when not started. */
  get url(): string {
    if (!this.server) throw new Error('LocalCluster is not started');
    return this.server.url;
  }

  /** The kubeconfig YAML for this cluster. @throws Error when not started. */
  kubeconfig(): string {
    return kubeconfigYaml(this.url);
  }

  /** Writes the kubeconfig to `path` (client-node `loadFromFile` reads it); returns `path`. @throws Error when not started. */
  writeKubeconfig(path: string): string {
    return writeKubeconfig(path, this.url);
  }

  /**
   * Advances the cluster to `now` (when given: the clock then stays there until the next
   * `tick(now)`) and runs every controller until nothing changes.
   * @returns how many controller rounds changed something (0 = already settled).
   */
  tick(now?: Date): number {
    if (now) this.manualNow = now;
    return this.reconcileNow();
  }

  private queueReconcile(): void {
    if (this.reconciling || this.reconcileQueued) return;
    this.reconcileQueued = true;
    setImmediate(() => {
      this.reconcileQueued = false;
      this.reconcileNow();
    });
  }

  private reconcileNow(): number {
    if (this.reconciling) return 0;
    this.reconciling = true;
    try {
      return this.controllers.reconcile();
    } finally {
      this.reconciling = false;
      this.settledVersion = this.store.resourceVersion;
    }
  }

  /**
   * Creates or updates objects: YAML text (multi-document, `kind: List` allowed) or parsed objects.
   * Missing namespaces are created. An existing object gets the new spec, labels, annotations
   * (and status when the input has one). Nodes without conditions are taken as Ready.
   * @returns the stored objects.
   * @throws Error for a kind the server does not serve; ApiError for invalid objects.
   */
  apply(input: string | KubeObject | KubeObject[]): KubeObject[] {
    const objects = typeof input === 'string' ? parseYamlObjects(input) : Array.isArray(input) ? input : [input];
    const out: KubeObject[] = [];
    for (const obj of objects) {
      const t = findTypeByKind(obj.apiVersion, obj.kind);
      if (!t) throw new Error(`no matches for kind "${obj.kind}" in version "${obj.apiVersion}"`);
      const o = structuredClone(obj);
      o.metadata = { ...o.metadata };
      if (t.namespaced) {
        o.metadata.namespace = o.metadata.namespace ?? 'default';
        if (!this.store.get(T.namespaces, undefined, o.metadata.namespace)) {
          this.api.create(T.namespaces, undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: o.metadata.namespace } } as KubeObject);
        }
      }
      if (t === T.nodes) {
        o.status = o.status ?? {};
        if (!o.status.conditions) o.status.conditions = [{ type: 'Ready', status: 'True', reason: 'KubeletReady', lastTransitionTime: rfc3339(this.now()) }];
        if (!o.status.capacity && o.status.allocatable) o.status.capacity = o.status.allocatable;
      }
      const existing = this.store.get(t, o.metadata.namespace, o.metadata.name);
      let stored: KubeObject;
      if (existing) {
        stored = this.store.update(t, {
          ...existing,
          ...o,
          metadata: {
            ...existing.metadata,
            labels: o.metadata.labels ?? existing.metadata.labels,
            annotations: o.metadata.annotations ?? existing.metadata.annotations,
            resourceVersion: undefined,
          },
          status: o.status ?? existing.status,
        } as KubeObject);
      } else {
        stored = this.api.create(t, o.metadata.namespace, o);
        if (obj.status && t !== T.pods) stored = this.store.update(t, { ...stored, status: { ...(stored.status ?? {}), ...obj.status } });
      }
      out.push(stored);
    }
    this.queueReconcile();
    return out;
  }

  /**
   * Deletes an object as `DELETE` would (pods terminate gracefully; `gracePeriodSeconds: 0` forces).
   * Absent counts as success.
   */
  delete(apiVersion: string, kind: string, name: string, namespace?: string, opts: { gracePeriodSeconds?: number } = {}): void {
    const t = findTypeByKind(apiVersion, kind);
    if (!t) throw new Error(`no matches for kind "${kind}" in version "${apiVersion}"`);
    const ns = t.namespaced ? (namespace ?? 'default') : undefined;
    if (this.store.get(t, ns, name)) this.api.delete(t, ns, name, opts);
  }

  /**
   * Sets a Deployment's replicas (as the scale subresource); the controllers react at once.
   * @throws ApiError 404 when the Deployment does not exist.
   */
  scale(namespace: string, deployment: string, replicas: number): void {
    this.api.setScale(T.deployments, namespace, deployment, { body: { spec: { replicas } } });
    this.reconcileNow();
  }

  /**
   * Starts a simulated instance: its Node registers after `bootDelaySeconds` and turns Ready
   * `readyDelaySeconds` later (cluster clock). Idempotent per instanceId.
   * @returns the node name and providerID the Node will carry.
   */
  addInstance(spec: InstanceSpec): { nodeName: string; providerID: string; privateIp: string } {
    const st = this.controllers.addInstance(spec);
    this.reconcileNow();
    return { nodeName: st.nodeName, providerID: st.providerID, privateIp: st.privateIp };
  }

  /**
   * The instance is gone: its Node turns NotReady (Ready=Unknown, unreachable taints) and its
   * pods are deleted at once; with `deleteNode` the Node object goes too. Unknown ids are ignored.
   */
  removeInstance(instanceId: string, opts: { deleteNode?: boolean } = {}): void {
    this.controllers.removeInstance(instanceId, opts);
    this.reconcileNow();
  }

  /** The instance's kubelet stops posting status; the instance runs on (controllers.ts stopKubelet). @returns false when it has no live kubelet. */
  stopKubelet(instanceId: string): boolean {
    const stopped = this.controllers.stopKubelet(instanceId);
    this.reconcileNow();
    return stopped;
  }

  /** The simulated instances and their kubelet phase. */
  instances(): InstanceState[] {
    return [...this.controllers.instances.values()].map((s) => structuredClone(s));
  }

  /** Snapshot of every Node. */
  nodes(): Node[] {
    return this.store.list(T.nodes) as unknown as Node[];
  }

  /** Snapshot of pods (all namespaces unless given; only one node's when `nodeName` is given). */
  pods(opts: { namespace?: string; nodeName?: string } = {}): Pod[] {
    return (this.store.list(T.pods, opts.namespace) as unknown as Pod[]).filter((p) => opts.nodeName === undefined || p.spec.nodeName === opts.nodeName);
  }

  /** Pods not bound to a node and not terminating (what the agent reports as pending). */
  pendingPods(): Pod[] {
    return this.pods().filter((p) => !p.spec.nodeName && !p.metadata.deletionTimestamp);
  }

  /** Snapshot of any served kind, e.g. `objects('karpenter.sh/v1', 'NodePool')`. @throws Error for an unknown kind. */
  objects(apiVersion: string, kind: string, namespace?: string): KubeObject[] {
    const t = findTypeByKind(apiVersion, kind);
    if (!t) throw new Error(`no matches for kind "${kind}" in version "${apiVersion}"`);
    return this.store.list(t, namespace);
  }

  /** One object or undefined. */
  get(apiVersion: string, kind: string, name: string, namespace?: string): KubeObject | undefined {
    const t = findTypeByKind(apiVersion, kind);
    if (!t) throw new Error(`no matches for kind "${kind}" in version "${apiVersion}"`);
    return this.store.get(t, t.namespaced ? (namespace ?? 'default') : undefined, name);
  }

  private notifyPending(pod: Pod, message: string): void {
    for (const l of [...this.pendingListeners]) {
      try {
        l(structuredClone(pod), message);
      } catch (e) {
        this.options.onControllerError?.('onPodPending listener', e);
      }
    }
  }

  /** Calls `fn` whenever the scheduler marks a pod unschedulable (again). Returns the unsubscribe function. */
  onPodPending(fn: PodPendingListener): () => void {
    this.pendingListeners.add(fn);
    return () => this.pendingListeners.delete(fn);
  }

  /** Calls `fn` on every Node change. Returns the unsubscribe function. */
  onNodeChange(fn: NodeChangeListener): () => void {
    return this.store.subscribe((e) => {
      if (e.typeKey === 'v1/nodes') fn(e.type, e.object as unknown as Node);
    });
  }

  /** Evictions the Eviction API refused because a PDB allowed no disruption, in order. */
  evictionsRefused(): readonly { pod: string; pdb: string; at: string }[] {
    return this.api.evictionsRefused;
  }

  /** Calls `fn` on every stored change of any type. Returns the unsubscribe function. */
  onChange(fn: (e: StoreEvent) => void): () => void {
    return this.store.subscribe(fn);
  }
}

/** Parses multi-document YAML into objects (`kind: List` flattened, empty documents skipped). */
export function parseYamlObjects(text: string): KubeObject[] {
  const out: KubeObject[] = [];
  for (const doc of parseAllDocuments(text)) {
    if (doc.errors.length > 0) throw new Error(`invalid YAML: ${doc.errors[0].message}`);
    const o = doc.toJS() as KubeObject | null;
    if (!o) continue;
    if (o.kind === 'List' && Array.isArray((o as { items?: unknown }).items)) out.push(...(o as unknown as { items: KubeObject[] }).items);
    else out.push(o);
  }
  return out;
}
