/**
 * The API server's semantics, independent of HTTP: defaulting on create, optimistic concurrency,
 * status subresources, graceful pod deletion, finalizers, the Eviction API with PDB checks, the
 * scale and binding subresources. The HTTP layer (server.ts) and the LocalCluster facade both
 * call this, so what a test does through the facade is what a client sees over the wire.
 *
 * Rule sources: kube-apiserver pkg/registry/core/pod (graceful deletion, eviction.go),
 * pkg/registry/apps/deployment (scale), apiserver pkg/registry/generic/registry/store.go
 * (finalizers, deletionTimestamp), plugin/pkg/admission/defaulttolerationseconds.
 */
import type { KubeObject, Pod, PodDisruptionBudget } from '../../../shared/api/kube.ts';
import { ApiError, clone, rfc3339, type ObjectStore } from './store.ts';
import { findType, type ResourceType } from './resources.ts';
import { applyPatch } from './patch.ts';
import { matchesLabelSelector, parseFieldSelector, parseLabelSelector } from './selectors.ts';
import { computePdbStatus, isTerminal } from './pods.ts';

/** Types the semantics below need by name. */
export const T = {
  namespaces: findType('', 'v1', 'namespaces')!,
  nodes: findType('', 'v1', 'nodes')!,
  pods: findType('', 'v1', 'pods')!,
  events: findType('', 'v1', 'events')!,
  deployments: findType('apps', 'v1', 'deployments')!,
  replicasets: findType('apps', 'v1', 'replicasets')!,
  daemonsets: findType('apps', 'v1', 'daemonsets')!,
  statefulsets: findType('apps', 'v1', 'statefulsets')!,
  pdbs: findType('policy', 'v1', 'poddisruptionbudgets')!,
  priorityclasses: findType('scheduling.k8s.io', 'v1', 'priorityclasses')!,
  nodepools: findType('karpenter.sh', 'v1', 'nodepools')!,
  ec2nodeclasses: findType('karpenter.k8s.aws', 'v1', 'ec2nodeclasses')!,
};

/** metav1.DeleteOptions subset. */
export interface DeleteOptions {
  /** Seconds; 0 deletes a pod at once (force). Default: the pod's terminationGracePeriodSeconds (30). */
  gracePeriodSeconds?: number;
  propagationPolicy?: 'Foreground' | 'Background' | 'Orphan';
  preconditions?: { uid?: string; resourceVersion?: string };
}

/** List / watch query options. */
export interface ListOptions {
  labelSelector?: string;
  fieldSelector?: string;
}

/** Default grace period of a pod without terminationGracePeriodSeconds (core/v1 default). */
export const DEFAULT_TERMINATION_GRACE_SECONDS = 30;
/**
 * Seconds of the not-ready / unreachable NoExecute tolerations the DefaultTolerationSeconds
 * admission plugin adds to every pod (its `--default-not-ready-toleration-seconds` default).
 */
export const DEFAULT_TOLERATION_SECONDS = 300;

/**
 * Reason and message of the 429 the Eviction API answers when a PDB forbids the disruption
 * (kube-apiserver pkg/registry/core/pod/storage/eviction.go; sample in
 * test/fixtures/events/eviction-429.json, which a test compares with).
 */
export const EVICTION_BLOCKED = { reason: 'TooManyRequests', message: "Cannot evict pod as it would violate the pod's disruption budget." } as const;

const NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** The API server semantics over an {@link ObjectStore}. */
export class ApiCore {
  private seed = 0x2f6b_1a3d;
  /** The last {@link listShared} result and its key (type, namespace, selectors, resourceVersion). */
  private lastList?: { key: string; items: readonly KubeObject[] };

  /**
   * @param store where objects live.
   * @param now the cluster clock.
   * @param onWrite called after every successful write (the cluster schedules a reconcile).
   */
  /** Evictions refused with 429 because a PDB allowed no disruption (pod and PDB namespace/name, RFC 3339 time), for scenario checks. */
  readonly evictionsRefused: { pod: string; pdb: string; at: string }[] = [];

  constructor(
    readonly store: ObjectStore,
    readonly now: () => Date,
    private readonly onWrite: () => void = () => {},
  ) {}

  /** A 5-character suffix as generateName / ReplicaSets produce (deterministic sequence). */
  randomSuffix(length = 5): string {
    let s = '';
    for (let i = 0; i < length; i++) {
      this.seed = (Math.imul(this.seed, 1103515245) + 12345) >>> 0;
      s += NAME_ALPHABET[(this.seed >>> 16) % NAME_ALPHABET.length];
    }
    return s;
  }

  private requireNamespace(t: ResourceType, namespace: string | undefined): void {
    if (!t.namespaced) return;
    if (!namespace) throw ApiError.badRequest('the server could not find the requested resource: a namespace is required');
    if (!this.store.get(T.namespaces, undefined, namespace)) throw ApiError.notFound(T.namespaces, namespace);
  }

  /** Object or 404. */
  get(t: ResourceType, namespace: string | undefined, name: string): KubeObject {
    const o = this.store.get(t, namespace, name);
    if (!o) throw ApiError.notFound(t, name);
    return o;
  }

  /** Objects matching the selectors (all namespaces when `namespace` is undefined). */
  list(t: ResourceType, namespace: string | undefined, opts: ListOptions = {}): { items: KubeObject[]; resourceVersion: string } {
    const { items, resourceVersion } = this.listShared(t, namespace, opts);
    return { items: items.map((o) => clone(o)), resourceVersion };
  }

  /**
   * The stored objects matching the selectors, sorted by namespace/name, uncopied (read-only: the
   * HTTP layer copies only the page it sends). The last result is reused while nothing was
   * written, so the pages of one paged list cost one filter and sort, not one each (as the real
   * API server serves pages from its watch cache).
   */
  listShared(t: ResourceType, namespace: string | undefined, opts: ListOptions = {}): { items: readonly KubeObject[]; resourceVersion: string } {
    const resourceVersion = String(this.store.resourceVersion);
    const cacheKey = `${t.group}/${t.plural}|${namespace ?? ''}|${opts.labelSelector ?? ''}|${opts.fieldSelector ?? ''}|${resourceVersion}`;
    if (this.lastList?.key === cacheKey) return { items: this.lastList.items, resourceVersion };
    const label = parseLabelSelector(opts.labelSelector);
    const field = parseFieldSelector(opts.fieldSelector);
    const keyed = this.store
      .listShared(t, namespace)
      .filter((o) => label(o.metadata.labels ?? {}) && field(o))
      .map((o) => ({ k: `${o.metadata.namespace ?? ''}/${o.metadata.name}`, o }));
    keyed.sort((a, b) => (a.k < b.k ? -1 : a.k > b.k ? 1 : 0));
    const items = keyed.map((x) => x.o);
    this.lastList = { key: cacheKey, items };
    return { items, resourceVersion };
  }

  /**
   * Creates an object (POST). Applies generateName and per-kind defaults.
   * @throws ApiError 400 (namespace mismatch, no name), 404 (namespace missing), 409 AlreadyExists.
   */
  create(t: ResourceType, namespace: string | undefined, body: KubeObject): KubeObject {
    const o = clone(body) as KubeObject;
    o.metadata = o.metadata ?? ({} as KubeObject['metadata']);
    if (t.namespaced) {
      if (o.metadata.namespace && namespace && o.metadata.namespace !== namespace) {
        throw ApiError.badRequest('the namespace of the provided object does not match the namespace sent on the request');
      }
      o.metadata.namespace = namespace ?? o.metadata.namespace ?? 'default';
    }
    const generateName = (o.metadata as { generateName?: string }).generateName;
    if (!o.metadata.name && generateName) o.metadata.name = `${generateName}${this.randomSuffix()}`;
    if (!o.metadata.name) throw ApiError.invalid(t, '', 'metadata.name: Required value: name or generateName is required');
    this.requireNamespace(t, o.metadata.namespace);
    this.applyDefaults(t, o);
    const created = this.store.create(t, o);
    this.onWrite();
    return created;
  }

  private applyDefaults(t: ResourceType, o: KubeObject): void {
    if (t === T.pods) {
      const spec = (o.spec = o.spec ?? { containers: [] });
      spec.schedulerName = spec.schedulerName ?? 'default-scheduler';
      spec.terminationGracePeriodSeconds = spec.terminationGracePeriodSeconds ?? DEFAULT_TERMINATION_GRACE_SECONDS;
      spec.restartPolicy = spec.restartPolicy ?? 'Always';
      // Priority admission: the PriorityClass's value, or the global default class's, or 0
      const classes = this.store.list(T.priorityclasses) as unknown as { metadata: { name: string }; value?: number; globalDefault?: boolean }[];
      const pc = spec.priorityClassName ? classes.find((c) => c.metadata.name === spec.priorityClassName) : classes.find((c) => c.globalDefault);
      if (spec.priorityClassName && !pc && !['system-cluster-critical', 'system-node-critical'].includes(spec.priorityClassName)) {
        throw new ApiError(403, 'Forbidden', `pods "${o.metadata.name}" is forbidden: no PriorityClass with name ${spec.priorityClassName} was found`, {
          name: o.metadata.name,
          kind: 'pods',
        });
      }
      const builtin =
        spec.priorityClassName === 'system-node-critical' ? 2000001000 : spec.priorityClassName === 'system-cluster-critical' ? 2000000000 : undefined;
      spec.priority = spec.priority ?? pc?.value ?? builtin ?? 0;
      spec.tolerations = spec.tolerations ?? [];
      for (const key of ['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable']) {
        const has = (spec.tolerations as { key?: string; effect?: string; operator?: string }[]).some(
          (x) => (x.key === key || (!x.key && x.operator === 'Exists')) && (!x.effect || x.effect === 'NoExecute'),
        );
        if (!has) spec.tolerations.push({ key, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: DEFAULT_TOLERATION_SECONDS });
      }
      o.status = { phase: 'Pending', qosClass: 'Burstable', ...(o.status ?? {}) };
    } else if (t === T.deployments || t === T.replicasets || t === T.statefulsets) {
      o.spec = o.spec ?? {};
      o.spec.replicas = o.spec.replicas ?? 1;
      o.status = o.status ?? {};
    } else if (t === T.daemonsets) {
      o.status = o.status ?? {};
    } else if (t === T.namespaces) {
      o.status = { phase: 'Active' };
    } else if (t === T.pdbs) {
      o.status = o.status ?? { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 };
    }
  }

  /**
   * Replaces an object (PUT). On the main resource the stored status is kept; on `status` only
   * the status is taken (types with a status subresource, as the real API server).
   * @throws ApiError 404, 409 Conflict, 400 name mismatch.
   */
  replace(t: ResourceType, namespace: string | undefined, name: string, body: KubeObject, subresource?: string): KubeObject {
    const current = this.get(t, namespace, name);
    if (body.metadata?.name && body.metadata.name !== name)
      throw ApiError.badRequest(`the name of the object (${body.metadata.name}) does not match the name on the URL (${name})`);
    const next = this.mergeForWrite(t, current, clone(body), subresource);
    next.metadata.resourceVersion = body.metadata?.resourceVersion;
    return this.write(t, next);
  }

  /**
   * Patches an object (PATCH) in the format of `contentType` (merge, strategic, json, apply).
   * @throws ApiError 404, 415, 422.
   */
  patch(t: ResourceType, namespace: string | undefined, name: string, contentType: string, body: unknown, subresource?: string): KubeObject {
    const current = this.get(t, namespace, name);
    const patched = applyPatch(contentType, current, body) as KubeObject;
    const next = this.mergeForWrite(t, current, patched, subresource);
    // a patch carrying a resourceVersion is a precondition; otherwise it applies to the latest
    const patchRv = (patched.metadata as { resourceVersion?: string } | undefined)?.resourceVersion;
    next.metadata.resourceVersion = patchRv !== current.metadata.resourceVersion ? patchRv : undefined;
    return this.write(t, next);
  }

  private mergeForWrite(t: ResourceType, current: KubeObject, incoming: KubeObject, subresource?: string): KubeObject {
    const hasStatus = (t.subresources ?? []).includes('status');
    if (subresource === 'status') return { ...current, status: incoming.status };
    const next = { ...incoming, metadata: { ...incoming.metadata, name: current.metadata.name, namespace: current.metadata.namespace } } as KubeObject;
    if (hasStatus) next.status = current.status;
    // deletionTimestamp can only be set by DELETE
    if (current.metadata.deletionTimestamp) next.metadata.deletionTimestamp = current.metadata.deletionTimestamp;
    else delete next.metadata.deletionTimestamp;
    return next;
  }

  /** Stores an update; an object being deleted whose finalizers are now empty is removed. */
  private write(t: ResourceType, next: KubeObject): KubeObject {
    if (next.metadata.deletionTimestamp && (next.metadata.finalizers ?? []).length === 0 && t !== T.pods) {
      const gone = this.store.remove(t, next.metadata.namespace, next.metadata.name);
      this.onWrite();
      return gone;
    }
    const out = this.store.update(t, next);
    this.onWrite();
    return out;
  }

  /**
   * Deletes an object (DELETE). Pods bound to a node terminate gracefully: deletionTimestamp =
   * now + grace period, and the simulated kubelet removes them when their containers stop;
   * unbound pods, terminal pods and gracePeriodSeconds=0 remove at once. Objects with finalizers
   * get a deletionTimestamp and stay until their finalizers are removed. Returns the object's
   * last state (what the real API server returns).
   * @throws ApiError 404 NotFound, 409 Conflict (failed preconditions).
   */
  delete(t: ResourceType, namespace: string | undefined, name: string, opts: DeleteOptions = {}): KubeObject {
    const current = this.get(t, namespace, name);
    const pre = opts.preconditions;
    if (pre?.uid && pre.uid !== current.metadata.uid) {
      throw new ApiError(409, 'Conflict', `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${current.metadata.uid}`, {
        name,
        kind: t.plural,
      });
    }
    if (pre?.resourceVersion && pre.resourceVersion !== current.metadata.resourceVersion) throw ApiError.conflict(t, name);
    let out: KubeObject;
    if (t === T.pods) out = this.deletePod(current as unknown as Pod, opts.gracePeriodSeconds);
    else if ((current.metadata.finalizers ?? []).length > 0) {
      if (current.metadata.deletionTimestamp) return current;
      current.metadata.deletionTimestamp = rfc3339(this.now());
      out = this.store.update(t, current);
    } else {
      out = this.store.remove(t, namespace, name);
      if (t === T.namespaces) this.deleteNamespaceContents(name);
    }
    this.onWrite();
    return out;
  }

  private deleteNamespaceContents(namespace: string): void {
    for (const t of [T.pods, T.deployments, T.replicasets, T.daemonsets, T.statefulsets, T.pdbs, T.events]) {
      for (const o of this.store.list(t, namespace)) this.store.remove(t, namespace, o.metadata.name);
    }
  }

  private deletePod(pod: Pod, gracePeriodSeconds: number | undefined): KubeObject {
    const grace = gracePeriodSeconds ?? pod.spec.terminationGracePeriodSeconds ?? DEFAULT_TERMINATION_GRACE_SECONDS;
    const ns = pod.metadata.namespace;
    if (grace <= 0 || !pod.spec.nodeName || isTerminal(pod)) return this.store.remove(T.pods, ns, pod.metadata.name);
    const nowMs = this.now().getTime();
    const deadline = nowMs + grace * 1000;
    const meta = pod.metadata as Pod['metadata'] & { deletionGracePeriodSeconds?: number };
    if (meta.deletionTimestamp && Date.parse(meta.deletionTimestamp) <= deadline) return pod as unknown as KubeObject;
    meta.deletionTimestamp = rfc3339(new Date(deadline));
    meta.deletionGracePeriodSeconds = grace;
    return this.store.update(T.pods, pod as unknown as KubeObject);
  }

  /** Removes a pod at once (force deletion; pod GC, lost nodes). Absent counts as success. */
  forceDeletePod(namespace: string, name: string): void {
    if (this.store.get(T.pods, namespace, name)) {
      this.store.remove(T.pods, namespace, name);
      this.onWrite();
    }
  }

  /**
   * Why an eviction of `pod` would be refused now, or undefined when {@link evict} would accept it.
   * Pods that are Pending, terminal or already terminating are deleted without a PDB check
   * (canIgnorePDB); otherwise the one PDB selecting the pod must allow a disruption, or the pod be
   * unhealthy with the PDB satisfied (or its unhealthyPodEvictionPolicy AlwaysAllow). More than one
   * PDB: refused (the eviction subresource does not support it).
   */
  evictionRefusal(pod: Pod): { kind: 'several-pdbs' } | { kind: 'pdb'; pdb: PodDisruptionBudget; status: ReturnType<typeof computePdbStatus> } | undefined {
    const canIgnorePdb = isTerminal(pod) || pod.status?.phase === 'Pending' || !!pod.metadata.deletionTimestamp;
    if (canIgnorePdb) return undefined;
    const pdbs = this.pdbsFor(pod);
    if (pdbs.length > 1) return { kind: 'several-pdbs' };
    if (pdbs.length === 0) return undefined;
    const pdb = pdbs[0];
    const st = this.pdbStatus(pdb);
    const healthy = pod.status?.phase === 'Running' && (pod.status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
    const unhealthyMayGo = !healthy && (pdb.spec.unhealthyPodEvictionPolicy === 'AlwaysAllow' || st.currentHealthy >= st.desiredHealthy);
    return !unhealthyMayGo && st.disruptionsAllowed <= 0 ? { kind: 'pdb', pdb, status: st } : undefined;
  }

  /** PDBs in the pod's namespace whose selector matches the pod. */
  pdbsFor(pod: Pod): PodDisruptionBudget[] {
    return (this.store.listShared(T.pdbs, pod.metadata.namespace) as unknown as PodDisruptionBudget[]).filter((p) =>
      matchesLabelSelector(p.spec.selector, pod.metadata.labels),
    );
  }

  /** Live status of a PDB (what the disruption controller would write). */
  pdbStatus(pdb: PodDisruptionBudget): ReturnType<typeof computePdbStatus> {
    const pods = (this.store.listShared(T.pods, pdb.metadata.namespace) as unknown as Pod[]).filter(
      (p) => !isTerminal(p) && matchesLabelSelector(pdb.spec.selector, p.metadata.labels),
    );
    return computePdbStatus(pdb, pods, (p) => this.controllerScale(p));
  }

  /** The replicas of the pod's scalable controller (Deployment via its ReplicaSet, ReplicaSet, StatefulSet). */
  controllerScale(pod: Pod): { uid: string; replicas: number } | undefined {
    const ref = pod.metadata.ownerReferences?.find((r) => r.controller);
    if (!ref) return undefined;
    const t = ref.kind === 'ReplicaSet' ? T.replicasets : ref.kind === 'StatefulSet' ? T.statefulsets : undefined;
    if (!t) return undefined;
    const owner = this.store.get(t, pod.metadata.namespace, ref.name);
    if (!owner) return undefined;
    const dref = owner.metadata.ownerReferences?.find((r) => r.controller && r.kind === 'Deployment');
    if (dref) {
      const d = this.store.get(T.deployments, pod.metadata.namespace, dref.name);
      if (d) return { uid: d.metadata.uid ?? d.metadata.name, replicas: d.spec?.replicas ?? 1 };
    }
    return { uid: owner.metadata.uid ?? owner.metadata.name, replicas: owner.spec?.replicas ?? 1 };
  }

  /**
   * policy/v1 Eviction (POST pods/NAME/eviction). Pods that are Pending, terminal or already
   * terminating are deleted without a PDB check (canIgnorePDB); otherwise the one PDB selecting
   * the pod must allow a disruption.
   * @returns the Status body of a 201 answer.
   * @throws ApiError 404 (pod), 429 TooManyRequests (the body of test/fixtures/events/eviction-429.json,
   *   with this PDB's name and numbers), 500 (more than one PDB).
   */
  evict(namespace: string, name: string, body: { deleteOptions?: DeleteOptions } = {}): object {
    const pod = this.get(T.pods, namespace, name) as unknown as Pod;
    const grace = body.deleteOptions?.gracePeriodSeconds;
    const refusal = this.evictionRefusal(pod);
    if (refusal?.kind === 'several-pdbs')
      throw new ApiError(500, 'InternalError', 'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.');
    if (refusal?.kind === 'pdb') {
      const { pdb, status: st } = refusal;
      this.evictionsRefused.push({ pod: `${namespace}/${name}`, pdb: `${pdb.metadata.namespace ?? namespace}/${pdb.metadata.name}`, at: rfc3339(this.now()) });
      throw new ApiError(429, EVICTION_BLOCKED.reason, EVICTION_BLOCKED.message, {
        causes: [
          {
            reason: 'DisruptionBudget',
            message: `The disruption budget ${pdb.metadata.name} needs ${st.desiredHealthy} healthy pods and has ${st.currentHealthy} currently`,
          },
        ],
      });
    }
    this.delete(T.pods, namespace, name, { gracePeriodSeconds: grace });
    return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 };
  }

  /** POST pods/NAME/binding: assigns the pod to a node. @throws ApiError 404, 409 when already bound. */
  bind(namespace: string, name: string, nodeName: string): object {
    const pod = this.get(T.pods, namespace, name) as unknown as Pod;
    if (pod.spec.nodeName) {
      throw new ApiError(
        409,
        'Conflict',
        `Operation cannot be fulfilled on pods/binding "${name}": pod ${name} is already assigned to node "${pod.spec.nodeName}"`,
        { name, kind: 'pods/binding' },
      );
    }
    pod.spec.nodeName = nodeName;
    this.store.update(T.pods, pod as unknown as KubeObject);
    this.onWrite();
    return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 };
  }

  /** autoscaling/v1 Scale of a Deployment, ReplicaSet or StatefulSet. */
  getScale(t: ResourceType, namespace: string, name: string): object {
    const o = this.get(t, namespace, name);
    const sel = o.spec?.selector?.matchLabels ?? {};
    return {
      kind: 'Scale',
      apiVersion: 'autoscaling/v1',
      metadata: { name, namespace, uid: o.metadata.uid, resourceVersion: o.metadata.resourceVersion, creationTimestamp: o.metadata.creationTimestamp },
      spec: { replicas: o.spec?.replicas ?? 1 },
      status: {
        replicas: o.status?.replicas ?? 0,
        selector: Object.entries(sel)
          .map(([k, v]) => `${k}=${v}`)
          .join(','),
      },
    };
  }

  /**
   * Writes `spec.replicas` from a Scale (PUT) or a patch of the Scale (PATCH).
   * @throws ApiError 404, 422 for a negative or missing count.
   */
  setScale(t: ResourceType, namespace: string, name: string, scaleOrPatch: { contentType?: string; body: unknown }): object {
    const scale = scaleOrPatch.contentType
      ? (applyPatch(scaleOrPatch.contentType, this.getScale(t, namespace, name), scaleOrPatch.body) as { spec?: { replicas?: number } })
      : (scaleOrPatch.body as { spec?: { replicas?: number } });
    const replicas = scale?.spec?.replicas;
    if (typeof replicas !== 'number' || replicas < 0 || !Number.isInteger(replicas)) {
      throw new ApiError(
        422,
        'Invalid',
        `Scale.autoscaling "${name}" is invalid: spec.replicas: Invalid value: ${JSON.stringify(replicas)}: must be greater than or equal to 0`,
        { name, group: 'autoscaling', kind: 'Scale' },
      );
    }
    const o = this.get(t, namespace, name);
    o.spec = { ...(o.spec ?? {}), replicas };
    this.store.update(t, o);
    this.onWrite();
    return this.getScale(t, namespace, name);
  }
}
