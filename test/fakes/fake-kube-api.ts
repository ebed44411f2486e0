import type { Clock, KubeApi } from '../../shared/api/ports.ts';
import type { KubeObject, LabelSelector, Node, Pod, PodDisruptionBudget, Taint } from '../../shared/api/kube.ts';
import { objectKey } from '../../shared/api/kube.ts';
import type { EC2NodeClass, NodePool } from '../../shared/api/nodepool.ts';
import type { KubeNodeClaim } from '../../shared/api/nodeclaim.ts';
import { FinalizerTermination } from '../../shared/api/labels.ts';
import { NotFoundError } from '../../shared/api/errors.ts';
import { FakeBase, clone } from './fake-base.ts';
import { DefaultPodGraceSeconds } from '../../shared/disruption/pods.ts';
import { FixedClock } from './fixed-clock.ts';

type Method =
  | 'listNodePools'
  | 'listNodePoolNames'
  | 'listNodeClasses'
  | 'listNodes'
  | 'getNode'
  | 'listPods'
  | 'listPodDisruptionBudgets'
  | 'listObjects'
  | 'patchNode'
  | 'deleteNode'
  | 'setNodeFinalizer'
  | 'evictPod'
  | 'deletePod'
  | 'listNodeClaimObjects'
  | 'getNodeClaimObject'
  | 'putNodeClaimObject'
  | 'deleteNodeClaimObject';

/**
 * How a pod leaves after an eviction or a delete:
 * - 'normal': as the fake's `podTermination` option says;
 * - 'until-force': stays Terminating (a preStop hook that hangs) until deleted with grace 0;
 * - 'forever': never leaves (a finalizer nobody removes), not even on force delete.
 */
export type PodExit = 'normal' | 'until-force' | 'forever';

export interface FakeKubeApiOptions {
  clock?: Clock;
  /**
   * 'immediate' (default): an evicted/deleted pod disappears at once.
   * 'graceful': it gets deletionTimestamp = now + its grace period (the delete's grace, else
   * pod.spec.terminationGracePeriodSeconds, else 30 s) and disappears once the clock reaches it.
   */
  podTermination?: 'immediate' | 'graceful';
  /** Delete pods bound to a node when the node is deleted, as the pod GC controller does (default true). */
  podGcOnNodeDelete?: boolean;
}

export { DefaultPodGraceSeconds };

/**
 * KubeApi in memory. Eviction follows the API server's policy/v1 rules closely enough for drain
 * logic: absent pod → 'gone'; a matching PodDisruptionBudget with status.disruptionsAllowed ≤ 0, or
 * more than one matching PDB → 'blocked' (the 429 / 500 Karpenter retries); otherwise the PDB's
 * disruptionsAllowed is decremented and the pod starts terminating. `karpenter.sh/do-not-disrupt`
 * is not enforced here: like the real API server, only the caller honours it.
 */
export class FakeKubeApi extends FakeBase<Method> implements KubeApi {
  private readonly nodes = new Map<string, Node>();
  private readonly pods = new Map<string, Pod>();
  private readonly pdbs = new Map<string, PodDisruptionBudget>();
  private nodePools: NodePool[] = [];
  private nodePoolCrdInstalled = true;
  private nodeClasses: EC2NodeClass[] = [];
  private objects: KubeObject[] = [];
  /** NodeClaim objects by name (an API server's karpenter.sh/v1 nodeclaims). */
  readonly nodeClaimObjects = new Map<string, KubeNodeClaim>();
  private readonly exits = new Map<string, PodExit>();
  /** Pod key → epoch ms when a terminating pod disappears (absent: never on its own). */
  private readonly removeAt = new Map<string, number>();
  private readonly clock: Clock;

  constructor(private readonly opts: FakeKubeApiOptions = {}) {
    super();
    this.clock = opts.clock ?? new FixedClock();
  }

  // ---- seeding (no calls recorded) ----

  addNode(...nodes: Node[]): this {
    for (const n of nodes) this.nodes.set(n.metadata.name, clone(n));
    return this;
  }

  /** Adds pods; `exit` sets how they leave (see PodExit). */
  addPod(pod: Pod, exit: PodExit = 'normal'): this {
    const key = podKey(pod);
    this.pods.set(key, clone(pod));
    this.exits.set(key, exit);
    return this;
  }

  addPods(...pods: Pod[]): this {
    for (const p of pods) this.addPod(p);
    return this;
  }

  addPdb(...pdbs: PodDisruptionBudget[]): this {
    for (const p of pdbs) this.pdbs.set(objectKey(p), clone(p));
    return this;
  }

  setNodePools(pools: NodePool[]): this {
    this.nodePools = clone(pools);
    return this;
  }

  setNodeClasses(classes: EC2NodeClass[]): this {
    this.nodeClasses = clone(classes);
    return this;
  }

  addObject(...objs: KubeObject[]): this {
    this.objects.push(...objs.map(clone));
    return this;
  }

  /** Sets status.disruptionsAllowed of a PDB (the disruption controller recomputing it). */
  setDisruptionsAllowed(namespace: string, name: string, allowed: number): void {
    const p = this.pdbs.get(`${namespace}/${name}`);
    if (!p) throw new NotFoundError(`pdb ${namespace}/${name} not found`);
    p.status = { ...p.status, disruptionsAllowed: allowed };
  }

  /** Changes how a pod leaves. */
  setPodExit(namespace: string, name: string, exit: PodExit): void {
    this.exits.set(`${namespace}/${name}`, exit);
  }

  // ---- inspection (no calls recorded) ----

  peekNode(name: string): Node | undefined {
    const n = this.nodes.get(name);
    return n && clone(n);
  }

  peekPod(namespace: string, name: string): Pod | undefined {
    this.sweep();
    const p = this.pods.get(`${namespace}/${name}`);
    return p && clone(p);
  }

  /** Pods still present (terminating ones included), optionally on one node. */
  peekPods(nodeName?: string): Pod[] {
    this.sweep();
    return [...this.pods.values()].filter((p) => !nodeName || p.spec.nodeName === nodeName).map(clone);
  }

  peekPdb(namespace: string, name: string): PodDisruptionBudget | undefined {
    const p = this.pdbs.get(`${namespace}/${name}`);
    return p && clone(p);
  }

  // ---- KubeApi ----

  async listNodePools(): Promise<NodePool[]> {
    this.record('listNodePools');
    return clone(this.nodePools);
  }

  /** The NodePools set (a `metadata.deletionTimestamp` = being deleted); undefined once `nodePoolCrd(false)`. */
  async listNodePoolNames(): Promise<{ name: string; deleting: boolean }[] | undefined> {
    this.record('listNodePoolNames');
    if (!this.nodePoolCrdInstalled) return undefined;
    return this.nodePools.map((p) => ({ name: p.metadata.name, deleting: !!(p.metadata as { deletionTimestamp?: string }).deletionTimestamp }));
  }

  /** Whether the NodePool CRD is installed (listNodePoolNames answers undefined when not). */
  nodePoolCrd(installed: boolean): this {
    this.nodePoolCrdInstalled = installed;
    return this;
  }

  async listNodeClasses(): Promise<EC2NodeClass[]> {
    this.record('listNodeClasses');
    return clone(this.nodeClasses);
  }

  async listNodes(): Promise<Node[]> {
    this.record('listNodes');
    return [...this.nodes.values()].map(clone);
  }

  async getNode(name: string): Promise<Node | undefined> {
    this.record('getNode', name);
    const n = this.nodes.get(name);
    return n && clone(n);
  }

  async listPods(opts?: { nodeName?: string; unbound?: boolean }): Promise<Pod[]> {
    this.record('listPods', opts);
    const pods = this.peekPods(opts?.nodeName);
    return opts?.unbound ? pods.filter((p) => !p.spec.nodeName) : pods;
  }

  async listPodDisruptionBudgets(): Promise<PodDisruptionBudget[]> {
    this.record('listPodDisruptionBudgets');
    return [...this.pdbs.values()].map(clone);
  }

  async listObjects(apiVersion: string, kind: string): Promise<KubeObject[]> {
    this.record('listObjects', apiVersion, kind);
    return this.objects.filter((o) => o.apiVersion === apiVersion && o.kind === kind).map(clone);
  }

  /** @throws NotFoundError when the node does not exist. */
  async patchNode(
    name: string,
    patch: { labels?: Record<string, string | null>; annotations?: Record<string, string | null>; taints?: Taint[]; unschedulable?: boolean },
  ): Promise<Node> {
    this.record('patchNode', name, patch);
    const n = this.nodes.get(name);
    if (!n) throw new NotFoundError(`node ${name} not found`);
    if (patch.labels) n.metadata.labels = mergeMap(n.metadata.labels, patch.labels);
    if (patch.annotations) n.metadata.annotations = mergeMap(n.metadata.annotations, patch.annotations);
    if (patch.taints !== undefined || patch.unschedulable !== undefined) n.spec = { ...n.spec };
    if (patch.taints !== undefined) n.spec!.taints = clone(patch.taints);
    if (patch.unschedulable !== undefined) n.spec!.unschedulable = patch.unschedulable;
    return clone(n);
  }

  async deleteNode(name: string): Promise<void> {
    this.record('deleteNode', name);
    const n = this.nodes.get(name);
    if (!n) return;
    if (n.metadata.finalizers?.length) {
      n.metadata.deletionTimestamp ??= this.clock.now().toISOString();
      return;
    }
    this.removeNode(name);
  }

  async setNodeFinalizer(name: string, finalizer: string, present: boolean): Promise<Node | undefined> {
    this.record('setNodeFinalizer', name, finalizer, present);
    const n = this.nodes.get(name);
    if (!n) return undefined;
    const current = n.metadata.finalizers ?? [];
    if (current.includes(finalizer) === present) return clone(n);
    n.metadata.finalizers = present ? [...current, finalizer] : current.filter((f) => f !== finalizer);
    if (n.metadata.deletionTimestamp && n.metadata.finalizers.length === 0) {
      this.removeNode(name);
      return undefined;
    }
    return clone(n);
  }

  private removeNode(name: string): void {
    if (!this.nodes.delete(name)) return;
    if (this.opts.podGcOnNodeDelete === false) return;
    for (const [key, p] of this.pods) {
      if (p.spec.nodeName === name && this.exits.get(key) !== 'forever') this.removePod(key);
    }
  }

  async evictPod(namespace: string, name: string): Promise<'evicted' | 'blocked' | 'gone'> {
    this.record('evictPod', namespace, name);
    this.sweep();
    const key = `${namespace}/${name}`;
    const pod = this.pods.get(key);
    if (!pod) return 'gone';
    if (pod.metadata.deletionTimestamp) return 'evicted';
    const matching = [...this.pdbs.values()].filter(
      (b) => (b.metadata.namespace ?? 'default') === (pod.metadata.namespace ?? 'default') && selectorMatches(b.spec.selector, pod.metadata.labels ?? {}),
    );
    if (matching.length > 1) return 'blocked';
    const pdb = matching[0];
    if (pdb) {
      const allowed = pdb.status?.disruptionsAllowed ?? 0;
      if (allowed <= 0) return 'blocked';
      pdb.status = { ...pdb.status, disruptionsAllowed: allowed - 1 };
    }
    this.beginDelete(key, pod, undefined);
    return 'evicted';
  }

  async deletePod(namespace: string, name: string, gracePeriodSeconds?: number): Promise<void> {
    this.record('deletePod', namespace, name, gracePeriodSeconds);
    this.sweep();
    const key = `${namespace}/${name}`;
    const pod = this.pods.get(key);
    if (!pod) return;
    this.beginDelete(key, pod, gracePeriodSeconds);
  }

  async listNodeClaimObjects(): Promise<KubeNodeClaim[]> {
    this.record('listNodeClaimObjects');
    return [...this.nodeClaimObjects.values()].map(clone);
  }

  async getNodeClaimObject(name: string): Promise<KubeNodeClaim | undefined> {
    this.record('getNodeClaimObject', name);
    const o = this.nodeClaimObjects.get(name);
    return o ? clone(o) : undefined;
  }

  /** As the API server with merge patches: a new object keeps its finalizers; an existing one keeps its own and extra labels. */
  async putNodeClaimObject(o: KubeNodeClaim): Promise<void> {
    this.record('putNodeClaimObject', o);
    const have = this.nodeClaimObjects.get(o.metadata.name);
    if (!have) {
      this.nodeClaimObjects.set(
        o.metadata.name,
        clone({
          ...o,
          metadata: {
            ...o.metadata,
            creationTimestamp: this.clock
              .now()
              .toISOString()
              .replace(/\.\d+Z$/, 'Z'),
          },
        }),
      );
      return;
    }
    this.nodeClaimObjects.set(
      o.metadata.name,
      clone({
        ...o,
        metadata: {
          ...have.metadata,
          ...o.metadata,
          creationTimestamp: have.metadata.creationTimestamp,
          finalizers: have.metadata.finalizers,
          labels: { ...have.metadata.labels, ...o.metadata.labels },
          annotations: { ...have.metadata.annotations, ...o.metadata.annotations },
        },
      }),
    );
  }

  /** Deletes the object once no finalizer is left (else it stays, with a deletionTimestamp). */
  async deleteNodeClaimObject(o: KubeNodeClaim): Promise<void> {
    this.record('deleteNodeClaimObject', o.metadata.name);
    const have = this.nodeClaimObjects.get(o.metadata.name);
    if (!have) return;
    const finalizers = have.metadata.finalizers.filter((f) => f !== FinalizerTermination);
    if (finalizers.length === 0) this.nodeClaimObjects.delete(o.metadata.name);
    else this.nodeClaimObjects.set(o.metadata.name, { ...have, metadata: { ...have.metadata, finalizers, deletionTimestamp: this.clock.now().toISOString() } });
  }

  override reset(): void {
    super.reset();
    this.nodeClaimObjects.clear();
    this.nodes.clear();
    this.pods.clear();
    this.pdbs.clear();
    this.exits.clear();
    this.removeAt.clear();
    this.nodePools = [];
    this.nodePoolCrdInstalled = true;
    this.nodeClasses = [];
    this.objects = [];
  }

  /**
   * Starts a pod's deletion as the API server does: deletionTimestamp = now + grace period (the
   * moment the kubelet kills it), shortened by a later delete with a smaller grace, never extended.
   */
  private beginDelete(key: string, pod: Pod, gracePeriodSeconds: number | undefined): void {
    const exit = this.exits.get(key) ?? 'normal';
    const nowMs = this.clock.now().getTime();
    const grace = gracePeriodSeconds ?? pod.spec.terminationGracePeriodSeconds ?? DefaultPodGraceSeconds;
    const at = nowMs + grace * 1000;
    const prev = pod.metadata.deletionTimestamp ? Date.parse(pod.metadata.deletionTimestamp) : Infinity;
    if (at < prev) pod.metadata.deletionTimestamp = new Date(at).toISOString();
    if (exit === 'forever') return;
    if (gracePeriodSeconds === 0) return this.removePod(key);
    if (exit === 'until-force') return;
    if ((this.opts.podTermination ?? 'immediate') === 'immediate') return this.removePod(key);
    this.removeAt.set(key, Math.min(at, this.removeAt.get(key) ?? at));
  }

  private removePod(key: string): void {
    this.pods.delete(key);
    this.removeAt.delete(key);
  }

  /** Removes terminating pods whose grace period has passed. */
  private sweep(): void {
    const nowMs = this.clock.now().getTime();
    for (const [key, at] of this.removeAt) if (at <= nowMs) this.removePod(key);
  }
}

function podKey(p: Pod): string {
  return `${p.metadata.namespace ?? 'default'}/${p.metadata.name}`;
}

function mergeMap(base: Record<string, string> | undefined, patch: Record<string, string | null>): Record<string, string> {
  const out = { ...base };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = v;
  }
  return out;
}

/** Kubernetes label-selector semantics (an empty selector matches everything; absent matches nothing, as policy/v1 PDBs). */
export function selectorMatches(selector: LabelSelector | undefined, labels: Record<string, string>): boolean {
  if (!selector) return false;
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (labels[k] !== v) return false;
  for (const e of selector.matchExpressions ?? []) {
    const has = Object.hasOwn(labels, e.key);
    const values = e.values ?? [];
    switch (e.operator) {
      case 'In':
        if (!has || !values.includes(labels[e.key])) return false;
        break;
      case 'NotIn':
        if (has && values.includes(labels[e.key])) return false;
        break;
      case 'Exists':
        if (!has) return false;
        break;
      case 'DoesNotExist':
        if (has) return false;
        break;
    }
  }
  return true;
}
