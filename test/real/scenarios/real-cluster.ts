/**
 * The real control-plane tier as a scenario's cluster (infra/local/scenario-cluster.ts): etcd,
 * kube-apiserver, kube-scheduler, kube-controller-manager and kwok (test/real/control-plane),
 * infra/k8s applied as it ships. The scheduler binds pods, the controller-manager runs
 * Deployments, ReplicaSets, StatefulSets, DaemonSets, PDB status, node lifecycle and garbage
 * collection, kwok keeps the Nodes and their pods alive. An instance's kubelet registers its Node
 * as kubeletNode() builds it (providerID, labels, taints, capacity; Ready=False) after the boot
 * delay, and hands it to kwok (its annotation) after the ready delay; a stopped kubelet is kwok's
 * disregard-status annotation, so the node lifecycle controller marks the Node unreachable. Reads are
 * synchronous snapshots of a list+watch cache of the kinds the scenarios read; writes go to the
 * API server. nodefleet's functions and agent connect with their own identities and RBAC (the
 * termination tasks, which share one client here, as one user in all their groups). Evictions the
 * server refused (429) come from its audit log.
 */
import { request as httpsRequest } from 'node:https';
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { KubeletStoppedAnnotation, startControlPlane, type ControlPlane } from '../control-plane/cluster.ts';
import { applyCrds, applyShipped } from '../control-plane/manifests.ts';
import { karpenterCrds, startKarpenter, type KarpenterController } from '../control-plane/karpenter.ts';
import { until } from '../control-plane/until.ts';
import { agentToken, functionIdentities } from '../rbac.ts';
import { kubernetesGroupOf, AgentNamespace } from '../../../infra/aws/config.ts';
import {
  AnnotationSimulateTerminationSeconds,
  kubeletNode,
  podStopsAtMs,
  preStopSeconds,
  TaintNotReady,
  type InstanceSpec,
  type StoreEvent,
  type WatchEventType,
} from '../../../infra/local/kube/index.ts';
import type { ScenarioCluster, ScenarioClusterFactory } from '../../../infra/local/scenario-cluster.ts';
import type { KubeObject, Node, Pod } from '../../../shared/api/kube.ts';
import { providerIdOf } from '../../../shared/api/provider-id.ts';

/** The annotation kwok manages a Node by (cluster.ts starts kwok with this selector). */
export const KwokAnnotation = 'kwok.x-k8s.io/node';
/** The kinds the cache watches: everything the runner, expectations and live view read. */
const Watched: { apiVersion: string; kind: string }[] = [
  { apiVersion: 'v1', kind: 'Node' },
  { apiVersion: 'v1', kind: 'Pod' },
  { apiVersion: 'apps/v1', kind: 'Deployment' },
  { apiVersion: 'apps/v1', kind: 'StatefulSet' },
  { apiVersion: 'apps/v1', kind: 'DaemonSet' },
  { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget' },
  { apiVersion: 'karpenter.sh/v1', kind: 'NodePool' },
  { apiVersion: 'karpenter.sh/v1', kind: 'NodeClaim' },
  { apiVersion: 'karpenter.k8s.aws/v1', kind: 'EC2NodeClass' },
  { apiVersion: 'nodefleet.io/v1', kind: 'EC2NodeClass' },
];
/** The function identities that call Kubernetes in the embedded environment's names (LocalIdentities). */
const FunctionsWithKube = ['provisioner', 'registration', 'interruption', 'disruption', 'gc'];
const FieldManager = 'nodefleet-scenario';
/**
 * kwok removes a pod as soon as it is deleted; a pod whose preStop hooks or termination take time
 * in the scenario (infra/local/kube/controllers.ts podStopsAtMs) carries this finalizer, which the
 * harness takes off when the pod would have stopped.
 */
export const FinalizerPodStopping = 'nodefleet.io/simulated-termination';

interface Resource {
  resource: string;
  namespaced: boolean;
}

type Obj = KubeObject & Record<string, any>;

/** One kubelet: its timers and how far it got. */
interface Kubelet {
  spec: InstanceSpec;
  nodeName: string;
  phase: 'booting' | 'registered' | 'ready' | 'stopped';
  timers: { cancel(): void }[];
}

/** Options of the tier's cluster. */
export interface RealClusterOptions {
  /**
   * Karpenter's own controller beside nodefleet (test/real/control-plane/karpenter.ts): Karpenter's
   * CRDs instead of the shipped karpenter.sh ones, its controller started with its chart's RBAC,
   * and every write to Nodes, pods, NodeClaims and NodePools audited (who touched what).
   */
  besideKarpenter?: boolean;
}

/** Starts the tier and returns the scenario cluster on it (the environment's `cluster` option). */
export const realCluster: ScenarioClusterFactory = (ctx) => realClusterWith({})(ctx);

/** {@link realCluster} with options. */
export function realClusterWith(opts: RealClusterOptions): ScenarioClusterFactory {
  return async ({ clock, log }) => {
    const fns = functionIdentities();
    // The embedded environment's termination tasks share one Kubernetes client: one user in every
    // task's group, so it has what each task's RBAC gives (and the admission policy sees a nodefleet identity).
    const termination = { user: 'nodefleet-termination', groups: fns.filter((f) => f.name.startsWith('nodefleet-termination-')).flatMap((f) => f.groups) };
    const cp = await startControlPlane({
      controllers: true,
      kwok: true,
      auditEvictions: true,
      auditWrites: opts.besideKarpenter,
      identities: { ...Object.fromEntries(fns.map((f) => [f.name, { user: f.user, groups: f.groups }])), termination },
      log,
    });
    let karpenter: KarpenterController | undefined;
    try {
      const objects = await applyShipped(cp, opts.besideKarpenter ? { crds: karpenterCrds(cp.bin) } : {});
      // The shipped nodefleet.io EC2NodeClass CRD: served before a scenario applies its classes.
      await applyCrds(
        cp,
        objects.filter((o) => o.kind === 'CustomResourceDefinition'),
      );
      // The agent runs in-process (as in the embedded environment): its shipped Deployment would
      // be one more pod on the managed nodes the scenarios do not count.
      await must(
        cp,
        'PATCH',
        `/apis/apps/v1/namespaces/${AgentNamespace}/deployments/nodefleet-agent/scale`,
        { spec: { replicas: 0 } },
        'application/merge-patch+json',
      );
      await until('the default ServiceAccount', async () =>
        (await cp.request('GET', '/api/v1/namespaces/default/serviceaccounts/default')).status === 200 ? true : undefined,
      );
      const tokens: Record<string, string> = { agent: await agentToken(cp), termination: cp.tokens.termination };
      for (const f of FunctionsWithKube) {
        const group = kubernetesGroupOf(f);
        if (cp.tokens[group]) tokens[f] = cp.tokens[group];
      }
      if (opts.besideKarpenter) karpenter = await startKarpenter(cp, cp.bin, { log });
      const c = new RealCluster(cp, clock, tokens, karpenter);
      await c.startCache();
      return c;
    } catch (err) {
      await karpenter?.stop();
      await cp.stop();
      throw err;
    }
  };
}

async function must(cp: ControlPlane, method: string, path: string, body?: unknown, contentType?: string): Promise<any> {
  const r = await cp.request(method, path, body, { contentType });
  if (r.status >= 300) throw new Error(`${method} ${path}: HTTP ${r.status}: ${r.body?.message ?? JSON.stringify(r.body).slice(0, 300)}`);
  return r.body;
}

export class RealCluster implements ScenarioCluster {
  private readonly resources = new Map<string, Resource>();
  private readonly cache = new Map<string, Map<string, Obj>>();
  private readonly listeners = new Set<(e: StoreEvent) => void>();
  private readonly kubelets = new Map<string, Kubelet>();
  private readonly kubeconfigs = new Map<string, string>();
  private readonly watches: { destroy(): void }[] = [];
  private stopped = false;
  private seq = 0;

  constructor(
    readonly cp: ControlPlane,
    private readonly clock: { nowMs(): number; setTimer(fn: () => void, ms: number): { cancel(): void } },
    private readonly tokens: Record<string, string>,
    /** Karpenter's controller, when it runs beside nodefleet. */
    readonly karpenter?: KarpenterController,
  ) {}

  now(): Date {
    return new Date(this.clock.nowMs());
  }

  private kubeconfigFile(name: string, token: string): string {
    const f = join(this.cp.dir, `${name}.kubeconfig`);
    const ca = Buffer.from(this.cp.caData).toString('base64');
    writeFileSync(
      f,
      [
        'apiVersion: v1',
        'kind: Config',
        `clusters: [{name: real, cluster: {server: "${this.cp.server}", certificate-authority-data: "${ca}"}}]`,
        `users: [{name: ${name}, user: {token: "${token}"}}]`,
        `contexts: [{name: ${name}, context: {cluster: real, user: ${name}}}]`,
        `current-context: ${name}`,
        '',
      ].join('\n'),
    );
    return f;
  }

  /** The admin's kubeconfig at `path` (the environment's own reads, the termination tasks, kubectl). */
  writeKubeconfig(path: string): string {
    const admin = this.kubeconfigFile('admin', this.cp.adminToken);
    writeFileSync(path, readFileSync(admin));
    return path;
  }

  kubeconfigOf(identity: string): string | undefined {
    const token = this.tokens[identity];
    if (!token) return undefined;
    if (!this.kubeconfigs.has(identity)) this.kubeconfigs.set(identity, this.kubeconfigFile(identity, token));
    return this.kubeconfigs.get(identity);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const k of this.kubelets.values()) for (const t of k.timers) t.cancel();
    for (const w of this.watches) w.destroy();
    await this.karpenter?.stop();
    await this.cp.stop();
  }

  // ------------------------------------------------------------------ discovery and paths

  /** The REST resource of a kind, from the server's discovery. @throws Error for a kind it does not serve. */
  async resourceOf(apiVersion: string, kind: string): Promise<Resource> {
    const key = `${apiVersion}/${kind}`;
    const known = this.resources.get(key);
    if (known) return known;
    const r = await this.cp.request('GET', apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`);
    for (const res of (r.body?.resources ?? []) as { name: string; kind: string; namespaced: boolean }[]) {
      if (!res.name.includes('/')) this.resources.set(`${apiVersion}/${res.kind}`, { resource: res.name, namespaced: res.namespaced });
    }
    const found = this.resources.get(key);
    if (!found) throw new Error(`no matches for kind "${kind}" in version "${apiVersion}"`);
    return found;
  }

  private collection(apiVersion: string, res: Resource, namespace?: string): string {
    const base = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
    return `${base}${res.namespaced && namespace ? `/namespaces/${namespace}` : ''}/${res.resource}`;
  }

  // ------------------------------------------------------------------ the watch cache

  /** Lists and watches every kind of {@link Watched}; resolves once each has listed. */
  async startCache(): Promise<void> {
    await Promise.all(Watched.map((w) => this.informer(w.apiVersion, w.kind)));
  }

  private async informer(apiVersion: string, kind: string): Promise<void> {
    const res = await this.resourceOf(apiVersion, kind);
    const typeKey = `${apiVersion}/${res.resource}`;
    const items = new Map<string, Obj>();
    this.cache.set(`${apiVersion}/${kind}`, items);
    const path = this.collection(apiVersion, res);
    const keyOf = (o: Obj) => `${o.metadata.namespace ?? ''}/${o.metadata.name}`;
    const emit = (type: WatchEventType, object: Obj) => {
      const e: StoreEvent = { type, typeKey, object, rv: ++this.seq };
      for (const l of [...this.listeners]) {
        try {
          l(e);
        } catch {
          // a listener's error is its own
        }
      }
    };
    const list = async (): Promise<string> => {
      const body = await must(this.cp, 'GET', path);
      const seen = new Set<string>();
      for (const raw of body.items as Obj[]) {
        const o = { ...raw, apiVersion, kind } as Obj;
        const k = keyOf(o);
        seen.add(k);
        const prev = items.get(k);
        items.set(k, o);
        if (!prev) emit('ADDED', o);
        else if (prev.metadata.resourceVersion !== o.metadata.resourceVersion) emit('MODIFIED', o);
      }
      for (const [k, o] of [...items]) {
        if (!seen.has(k)) {
          items.delete(k);
          emit('DELETED', o);
        }
      }
      return body.metadata.resourceVersion as string;
    };
    let rv = await list();
    const loop = async () => {
      while (!this.stopped) {
        try {
          if (!rv) rv = await list();
          rv = await this.watch(
            `${path}?watch=1&allowWatchBookmarks=true&timeoutSeconds=300&resourceVersion=${rv}`,
            (type, raw) => {
              const o = { ...raw, apiVersion, kind } as Obj;
              if (type === 'DELETED') {
                items.delete(keyOf(o));
                emit('DELETED', o);
              } else {
                items.set(keyOf(o), o);
                emit(type, o);
                if (kind === 'Pod') this.holdStopping(o);
              }
            },
            rv,
          );
        } catch {
          if (this.stopped) return;
          rv = '';
          await new Promise((r) => setTimeout(r, 500));
        }
      }
    };
    void loop();
  }

  /** One watch request; resolves with the last resourceVersion when the server ends it, '' after 410 Gone. */
  private watch(path: string, on: (type: WatchEventType, o: Obj) => void, fromRv: string): Promise<string> {
    let rv = fromRv;
    return new Promise((resolve, reject) => {
      const req = httpsRequest(
        `${this.cp.server}${path}`,
        { method: 'GET', ca: this.cp.caData, headers: { authorization: `Bearer ${this.cp.adminToken}`, accept: 'application/json' } },
        (res) => {
          if (res.statusCode !== 200) {
            res.resume();
            resolve(res.statusCode === 410 ? '' : rv);
            return;
          }
          let buf = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            buf += chunk;
            for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
              const line = buf.slice(0, i).trim();
              buf = buf.slice(i + 1);
              if (!line) continue;
              const ev = JSON.parse(line) as { type: string; object: Obj & { code?: number } };
              if (ev.type === 'ERROR') {
                rv = ev.object.code === 410 ? '' : rv;
                continue;
              }
              rv = ev.object.metadata?.resourceVersion ?? rv;
              if (ev.type === 'BOOKMARK') continue;
              on(ev.type as WatchEventType, ev.object);
            }
          });
          res.on('end', () => resolve(rv));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      this.watches.push(req);
      req.end();
    });
  }

  private cached(apiVersion: string, kind: string): Map<string, Obj> {
    const items = this.cache.get(`${apiVersion}/${kind}`);
    if (!items) throw new Error(`real tier: ${kind} (${apiVersion}) is not watched`);
    return items;
  }

  nodes(): Node[] {
    return [...this.cached('v1', 'Node').values()] as unknown as Node[];
  }

  pods(opts: { namespace?: string; nodeName?: string } = {}): Pod[] {
    return ([...this.cached('v1', 'Pod').values()] as unknown as Pod[]).filter(
      (p) => (opts.namespace === undefined || p.metadata.namespace === opts.namespace) && (opts.nodeName === undefined || p.spec.nodeName === opts.nodeName),
    );
  }

  pendingPods(): Pod[] {
    return this.pods().filter((p) => !p.spec.nodeName && !p.metadata.deletionTimestamp);
  }

  objects(apiVersion: string, kind: string, namespace?: string): KubeObject[] {
    return [...this.cached(apiVersion, kind).values()].filter((o) => namespace === undefined || o.metadata.namespace === namespace);
  }

  get(apiVersion: string, kind: string, name: string, namespace?: string): KubeObject | undefined {
    const items = this.cached(apiVersion, kind);
    return items.get(`${namespace ?? ''}/${name}`) ?? (namespace === undefined ? items.get(`default/${name}`) : undefined);
  }

  onChange(fn: (e: StoreEvent) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  onNodeChange(fn: (type: WatchEventType, node: Node) => void): () => void {
    return this.onChange((e) => {
      if (e.typeKey === 'v1/nodes') fn(e.type, e.object as unknown as Node);
    });
  }

  // ------------------------------------------------------------------ pods that take time to stop

  private readonly stopping = new Set<string>();

  /**
   * A deleted pod carrying {@link FinalizerPodStopping}: the first event with its deletionTimestamp
   * (before kwok's own delete) says when it stops; the finalizer goes then. A force delete after
   * that first event does not shorten it (kwok's delete looks the same).
   */
  private holdStopping(pod: Obj): void {
    if (!pod.metadata.deletionTimestamp || !(pod.metadata.finalizers ?? []).includes(FinalizerPodStopping)) return;
    const key = `${pod.metadata.namespace}/${pod.metadata.name}/${pod.metadata.uid}`;
    if (this.stopping.has(key)) return;
    this.stopping.add(key);
    const release = () => {
      const finalizers = (pod.metadata.finalizers ?? []).filter((f: string) => f !== FinalizerPodStopping);
      void this.cp
        .request(
          'PATCH',
          `/api/v1/namespaces/${pod.metadata.namespace}/pods/${pod.metadata.name}`,
          { metadata: { finalizers } },
          { contentType: 'application/merge-patch+json' },
        )
        .catch(() => undefined);
    };
    const waitMs = podStopsAtMs(pod as unknown as Pod) - this.clock.nowMs();
    if (!(waitMs > 0)) release();
    else this.clock.setTimer(release, waitMs);
  }

  /** The finalizer on a workload's pod template (or a pod) whose pods take time to stop. */
  private withStoppingFinalizer(o: Obj): Obj {
    const tpl = o.kind === 'Pod' ? o : o.spec?.template;
    if (!tpl?.spec) return o;
    const stops =
      preStopSeconds({ metadata: tpl.metadata ?? {}, spec: tpl.spec } as Pod) > 0 ||
      Number(tpl.metadata?.annotations?.[AnnotationSimulateTerminationSeconds] ?? 0) > 0;
    if (!stops) return o;
    const meta = { ...(tpl.metadata ?? {}), finalizers: [...new Set([...(tpl.metadata?.finalizers ?? []), FinalizerPodStopping])] };
    return o.kind === 'Pod' ? { ...o, metadata: meta } : { ...o, spec: { ...o.spec, template: { ...o.spec.template, metadata: meta } } };
  }

  // ------------------------------------------------------------------ writes

  /** Server-side apply of each object (strict field validation), creating its namespace when missing. */
  async apply(objects: KubeObject[]): Promise<void> {
    for (const o of objects) {
      const res = await this.resourceOf(o.apiVersion, o.kind);
      const namespace = res.namespaced ? (o.metadata.namespace ?? 'default') : undefined;
      if (namespace) {
        const ns = await this.cp.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
        if (ns.status >= 300 && ns.status !== 409) throw new Error(`namespace ${namespace}: HTTP ${ns.status}: ${ns.body?.message}`);
      }
      const held = this.withStoppingFinalizer(o as Obj);
      const body = { ...held, metadata: { ...held.metadata, ...(namespace ? { namespace } : {}) } };
      const path = `${this.collection(o.apiVersion, res, namespace)}/${o.metadata.name}?fieldManager=${FieldManager}&force=true&fieldValidation=Strict`;
      await must(this.cp, 'PATCH', path, JSON.stringify(body), 'application/apply-patch+yaml');
    }
  }

  async delete(apiVersion: string, kind: string, name: string, namespace?: string): Promise<void> {
    const res = await this.resourceOf(apiVersion, kind);
    const r = await this.cp.request('DELETE', `${this.collection(apiVersion, res, res.namespaced ? (namespace ?? 'default') : undefined)}/${name}`);
    if (r.status >= 300 && r.status !== 404) throw new Error(`delete ${kind}/${name}: HTTP ${r.status}: ${r.body?.message}`);
  }

  async scale(namespace: string, deployment: string, replicas: number): Promise<void> {
    await must(
      this.cp,
      'PATCH',
      `/apis/apps/v1/namespaces/${namespace}/deployments/${deployment}/scale`,
      { spec: { replicas } },
      'application/merge-patch+json',
    );
  }

  // ------------------------------------------------------------------ kubelets

  addInstance(spec: InstanceSpec): { nodeName: string; providerID: string } {
    const providerID = providerIdOf(spec.zone, spec.instanceId);
    const existing = this.kubelets.get(spec.instanceId);
    if (existing) return { nodeName: existing.nodeName, providerID };
    if (!spec.nodeName || !spec.privateIp) throw new Error(`real tier: instance ${spec.instanceId} has no node name or private IP`);
    const k: Kubelet = { spec, nodeName: spec.nodeName, phase: 'booting', timers: [] };
    this.kubelets.set(spec.instanceId, k);
    const later = (seconds: number, fn: () => Promise<void>) => {
      const run = () => void fn().catch(() => undefined);
      if (seconds <= 0) run();
      else k.timers.push(this.clock.setTimer(run, seconds * 1000));
    };
    later(spec.bootDelaySeconds ?? 0, async () => {
      if (k.phase !== 'booting' || this.stopped) return;
      const region = spec.region ?? spec.zone.replace(/[a-z]$/, '');
      const node = kubeletNode({ spec: { ...spec, region }, nodeName: k.nodeName, providerID, privateIp: spec.privateIp! }, this.now());
      // The node lifecycle controller adds the not-ready taint itself.
      node.spec!.taints = (node.spec!.taints ?? []).filter((t) => t.key !== TaintNotReady.key);
      if ((spec.readyDelaySeconds ?? 0) <= 0) node.metadata.annotations = { ...node.metadata.annotations, [KwokAnnotation]: 'fake' };
      await must(this.cp, 'POST', '/api/v1/nodes', node);
      k.phase = 'registered';
      later(spec.readyDelaySeconds ?? 0, async () => {
        if (k.phase !== 'registered' || this.stopped) return;
        k.phase = 'ready';
        if ((spec.readyDelaySeconds ?? 0) > 0) await this.setKwok(k.nodeName, true);
      });
    });
    return { nodeName: k.nodeName, providerID };
  }

  /**
   * Hands the Node to kwok (its kubelet posts status and runs its pods), or stops its kubelet: kwok
   * keeps a Node it manages when the annotation goes (its informer filters the update out), so a
   * stopped kubelet is kwok's disregard-status annotation (cluster.ts), and the node lifecycle
   * controller marks the Node unreachable after its grace period.
   */
  private async setKwok(nodeName: string, on: boolean): Promise<void> {
    const annotations = on ? { [KwokAnnotation]: 'fake' } : { [KubeletStoppedAnnotation]: 'true' };
    const r = await this.cp.request('PATCH', `/api/v1/nodes/${nodeName}`, { metadata: { annotations } }, { contentType: 'application/merge-patch+json' });
    if (r.status >= 300 && r.status !== 404) throw new Error(`node ${nodeName}: HTTP ${r.status}: ${r.body?.message}`);
  }

  removeInstance(instanceId: string, opts: { deleteNode?: boolean } = {}): void {
    const k = this.kubelets.get(instanceId);
    if (!k) return;
    const had = k.phase === 'registered' || k.phase === 'ready';
    k.phase = 'stopped';
    for (const t of k.timers) t.cancel();
    if (opts.deleteNode) void this.delete('v1', 'Node', k.nodeName).catch(() => undefined);
    else if (had) void this.setKwok(k.nodeName, false).catch(() => undefined);
  }

  stopKubelet(instanceId: string): boolean {
    const k = this.kubelets.get(instanceId);
    if (!k || (k.phase !== 'registered' && k.phase !== 'ready')) return false;
    k.phase = 'stopped';
    for (const t of k.timers) t.cancel();
    void this.setKwok(k.nodeName, false).catch(() => undefined);
    return true;
  }

  /** Every Node Ready, every Deployment's, StatefulSet's and DaemonSet's pods created, no pod unbound (at most 2 minutes, then as it is). */
  async settle(): Promise<void> {
    const settled = () => {
      const names = new Set(this.nodes().map((n) => n.metadata.name));
      const registered = [...this.kubelets.values()].every((k) => (k.spec.bootDelaySeconds ?? 0) > 0 || (k.phase === 'ready' && names.has(k.nodeName)));
      const ready = registered && this.nodes().every((n) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
      const made = [...this.objects('apps/v1', 'Deployment'), ...this.objects('apps/v1', 'StatefulSet')].every(
        (o: Obj) => (o.status?.replicas ?? 0) === (o.spec?.replicas ?? 1) && o.status?.observedGeneration === o.metadata.generation,
      );
      const daemons = this.objects('apps/v1', 'DaemonSet').every(
        (o: Obj) => o.status?.observedGeneration === o.metadata.generation && o.status?.currentNumberScheduled === o.status?.desiredNumberScheduled,
      );
      return ready && made && daemons && this.pendingPods().length === 0 ? true : undefined;
    };
    await until('the starting cluster to settle', async () => settled(), 120_000).catch(() => undefined);
  }

  private auditRead = 0;

  /**
   * Pod deletions the audit log recorded since the last call, by users `who` accepts (the chaos
   * harness asks for nodefleet's: a DELETE instead of an eviction).
   */
  podDeletions(who: (user: string) => boolean): { atMs: number; namespace: string; name: string; user: string }[] {
    const f = this.cp.auditLog;
    if (!f || !existsSync(f)) return [];
    const text = readFileSync(f);
    const fresh = text.subarray(this.auditRead);
    const end = fresh.lastIndexOf(0x0a) + 1;
    this.auditRead += end;
    const out: { atMs: number; namespace: string; name: string; user: string }[] = [];
    for (const line of fresh.subarray(0, end).toString('utf8').split('\n')) {
      if (!line.trim()) continue;
      const e = JSON.parse(line) as {
        verb?: string;
        user?: { username?: string };
        objectRef?: { resource?: string; subresource?: string; name?: string; namespace?: string };
        stageTimestamp?: string;
        requestReceivedTimestamp?: string;
      };
      if (e.verb !== 'delete' || e.objectRef?.resource !== 'pods' || e.objectRef.subresource || !e.objectRef.name) continue;
      const user = e.user?.username ?? '';
      if (!who(user)) continue;
      out.push({
        atMs: Date.parse(e.requestReceivedTimestamp ?? e.stageTimestamp ?? ''),
        namespace: e.objectRef.namespace ?? 'default',
        name: e.objectRef.name,
        user,
      });
    }
    return out;
  }

  /** The server's audit log: each eviction it answered 429 (a PDB allowed no disruption). */
  evictionsRefused(): readonly { pod: string; pdb: string; at: string }[] {
    const f = this.cp.auditLog;
    if (!f || !existsSync(f)) return [];
    const out: { pod: string; pdb: string; at: string }[] = [];
    for (const line of readFileSync(f, 'utf8').split('\n')) {
      if (!line.trim()) continue;
      const e = JSON.parse(line) as {
        objectRef?: { subresource?: string; name?: string; namespace?: string };
        responseStatus?: { code?: number };
        responseObject?: { details?: { causes?: { reason?: string; message?: string }[] } };
        stageTimestamp?: string;
      };
      if (e.objectRef?.subresource !== 'eviction' || e.responseStatus?.code !== 429) continue; // also skips the pod deletions
      const cause = e.responseObject?.details?.causes?.find((c) => c.reason === 'DisruptionBudget')?.message ?? '';
      const name = /disruption budget (\S+)/.exec(cause)?.[1];
      const pdb = name ? `${e.objectRef.namespace}/${name}` : '';
      out.push({ pod: `${e.objectRef.namespace}/${e.objectRef.name}`, pdb, at: e.stageTimestamp ?? '' });
    }
    return out;
  }
}
