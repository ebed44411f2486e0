/**
 * The simulated control plane and kubelets of the local cluster: ReplicaSet, Deployment,
 * DaemonSet and StatefulSet controllers, the scheduler, pod and owner garbage collection, PDB
 * status, and per-instance kubelets (registration after a boot delay, Ready after a further
 * delay, startup-taint removal, pod start and graceful termination).
 *
 * Nothing here runs by itself: {@link Controllers.reconcile} does one pass at the cluster's
 * current time, so the embedded environment controls time (and can compress it).
 */
import type { KubeObject, Node, Pod, Taint, Toleration, PodCondition, LabelSelector } from '../../../shared/api/kube.ts';
import { LabelArch, LabelCapacityType, LabelHostname, LabelInstanceType, LabelOS, LabelTopologyRegion, LabelTopologyZone } from '../../../shared/api/labels.ts';
import { fits, formatResource, parseResources, subtractResources, addResources, type Resources } from '../../../shared/api/quantity.ts';
import type { CapacityType } from '../../../shared/api/labels.ts';
import { T, type ApiCore } from './api.ts';
import { ApiError, rfc3339 } from './store.ts';
import { isNodeReady, isTerminal, matchesNodeSelection, podRequests, tolerates, untoleratedTaint } from './pods.ts';
import { matchesLabelSelector } from './selectors.ts';
import { providerIdOf } from '../../../shared/api/provider-id.ts';
import { fnv1a32 } from '../../../shared/api/hash.ts';

/** Pod annotation: the pod's preStop hook hangs, so it finishes terminating only when its grace period ends (the kubelet kills it), is force-deleted (gracePeriodSeconds=0) or its node is gone. */
export const AnnotationSimulateStuckPreStop = 'nodefleet.io/simulate-stuck-prestop';
/** Pod annotation: seconds the pod takes to stop after deletion (capped at its grace period). Default 0. */
export const AnnotationSimulateTerminationSeconds = 'nodefleet.io/simulate-termination-seconds';

/**
 * Seconds a pod's preStop hooks take in the simulation: Infinity when it carries
 * {@link AnnotationSimulateStuckPreStop}, else the longest `sleep N` of an exec hook (`N` seconds)
 * or a hook's own `sleep: { seconds: N }` action; 0 without hooks. The kubelet caps the total at
 * the pod's grace period.
 */
export function preStopSeconds(pod: Pod): number {
  if (pod.metadata.annotations?.[AnnotationSimulateStuckPreStop] === 'true') return Infinity;
  let longest = 0;
  for (const c of pod.spec.containers ?? []) {
    const hook = (c as { lifecycle?: { preStop?: { exec?: { command?: string[] }; sleep?: { seconds?: number } } } }).lifecycle?.preStop;
    if (!hook) continue;
    if (typeof hook.sleep?.seconds === 'number') longest = Math.max(longest, hook.sleep.seconds);
    const m = /\bsleep\s+(\d+(?:\.\d+)?)/.exec((hook.exec?.command ?? []).join(' '));
    if (m) longest = Math.max(longest, Number(m[1]));
  }
  return longest;
}

/**
 * When a deleted pod has stopped (epoch ms): its preStop hooks, then its termination time
 * ({@link AnnotationSimulateTerminationSeconds}, else `defaultTerminationSeconds`), never past the
 * end of its grace period (deletionTimestamp). The real tier holds its pods that long too.
 */
export function podStopsAtMs(pod: Pod, defaultTerminationSeconds = 0): number {
  const meta = pod.metadata as Pod['metadata'] & { deletionGracePeriodSeconds?: number };
  const deadlineMs = Date.parse(meta.deletionTimestamp ?? '');
  const startMs = deadlineMs - (meta.deletionGracePeriodSeconds ?? 0) * 1000;
  const stopSeconds = Number(pod.metadata.annotations?.[AnnotationSimulateTerminationSeconds] ?? defaultTerminationSeconds);
  return Math.min(deadlineMs, startMs + (preStopSeconds(pod) + stopSeconds) * 1000);
}

/** Taint the node lifecycle controller keeps on a node until it is Ready (TaintNodesByCondition). */
export const TaintNotReady: Taint = { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' };
/** Taints of a node whose kubelet stopped reporting (instance gone). */
export const TaintsUnreachable: Taint[] = [
  { key: 'node.kubernetes.io/unreachable', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' },
];

/** A simulated EC2 instance whose kubelet joins the cluster. */
export interface InstanceSpec {
  /** EC2 instance id, e.g. "i-0abc…". */
  instanceId: string;
  instanceType: string;
  /** Availability zone, e.g. "ap-northeast-2a". */
  zone: string;
  /** Default: the zone without its last letter. */
  region?: string;
  /** Default on-demand. Sets `karpenter.sh/capacity-type`. */
  capacityType?: CapacityType;
  /** Node capacity: Kubernetes quantity strings (`{cpu: "8", memory: "16Gi"}`) or canonical numbers (cpu millicores, memory bytes). */
  capacity: Record<string, string | number>;
  /** Node allocatable, same units as `capacity`. Default: capacity. */
  allocatable?: Record<string, string | number>;
  /** Extra node labels (e.g. `karpenter.sh/nodepool`, `eks.amazonaws.com/nodegroup`); they win over the well-known ones set here. */
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  /** Taints registered with the node and kept. */
  taints?: Taint[];
  /** Taints registered with the node and removed `startupTaintsRemovalSeconds` after Ready (when set). */
  startupTaints?: Taint[];
  /** Seconds after Ready at which the startup taints go (a CNI/agent daemon finishing). Undefined = they stay. */
  startupTaintsRemovalSeconds?: number;
  /** Seconds from addInstance until the Node object registers. Default 0. */
  bootDelaySeconds?: number;
  /** Seconds from registration until Ready=True. Default 0. */
  readyDelaySeconds?: number;
  /** Node name; default derived from `privateIp`: ip-10-0-x-y.<region>.compute.internal (ec2.internal in us-east-1). */
  nodeName?: string;
  /** Default: the next free 10.0.x.y address. */
  privateIp?: string;
}

/** What the cluster knows of a simulated instance. */
export interface InstanceState {
  spec: InstanceSpec;
  nodeName: string;
  /** aws:///<zone>/<instanceId> */
  providerID: string;
  privateIp: string;
  /** booting → registered → ready; unreachable after stopKubelet; removed after removeInstance; deleted when the Node object was deleted. */
  phase: 'booting' | 'registered' | 'ready' | 'unreachable' | 'removed' | 'deleted';
  launchedAtMs: number;
  registeredAtMs?: number;
  readyAtMs?: number;
}

/** Hooks the cluster facade forwards. */
export interface ControllerHooks {
  /** A pod was (re)marked unschedulable; `message` as kube-scheduler's FailedScheduling. */
  podPending?: (pod: Pod, message: string) => void;
  /** A controller step threw; the pass goes on with the next step. Default: ignored. */
  error?: (step: string, err: unknown) => void;
}

/** Kubernetes version the simulated kubelets report. */
export const KUBELET_VERSION = 'v1.31.4-eks-local';

/** pod-template-hash as the Deployment controller computes it (fnv32a, then SafeEncodeString). */
export function podTemplateHash(template: unknown): string {
  const alphabet = 'bcdfghjklmnpqrstvwxz2456789';
  return [...String(fnv1a32(JSON.stringify(template)))].map((c) => alphabet[c.charCodeAt(0) % alphabet.length]).join('');
}

function condition(type: string, status: 'True' | 'False' | 'Unknown', now: Date, reason?: string, message?: string): PodCondition {
  return { type, status, lastTransitionTime: rfc3339(now), ...(reason ? { reason } : {}), ...(message ? { message } : {}) };
}

function setCondition(conds: PodCondition[], c: PodCondition): PodCondition[] {
  const prev = conds.find((x) => x.type === c.type);
  if (prev && prev.status === c.status && prev.reason === c.reason && prev.message === c.message) return conds;
  const next = { ...c, lastTransitionTime: prev && prev.status === c.status ? prev.lastTransitionTime : c.lastTransitionTime };
  return [...conds.filter((x) => x.type !== c.type), next];
}

function toQuantities(r: Record<string, string | number>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(r)) out[k] = typeof v === 'number' ? formatResource(k, v) : v;
  return out;
}

/** Tolerations the DaemonSet controller adds to its pods (pkg/controller/daemon/util). */
const DAEMONSET_TOLERATIONS: Toleration[] = [
  { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' },
  { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute' },
  { key: 'node.kubernetes.io/disk-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/memory-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/pid-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' },
];

/** The simulated controllers; one instance per cluster. */
export class Controllers {
  readonly instances = new Map<string, InstanceState>();
  private nextIp = 10;
  private wakeAtMs = Infinity;

  /**
   * Cluster-clock epoch ms at which the next time-driven change is due (a boot or ready delay,
   * a pod start, the end of a termination, a toleration expiring); Infinity when nothing waits
   * on time. A reconcile before then with no new writes would change nothing.
   */
  get nextWakeMs(): number {
    return this.wakeAtMs;
  }

  private wake(atMs: number): void {
    if (atMs < this.wakeAtMs) this.wakeAtMs = atMs;
  }

  /**
   * @param api the API semantics (writes go through the store so watches see them).
   * @param options.podStartupSeconds seconds from binding (on a Ready node) to Running. Default 0.
   * @param options.podTerminationSeconds seconds a deleted pod takes to stop when it has no
   *   `nodefleet.io/simulate-termination-seconds` annotation (capped at its grace period). Default 0.
   */
  constructor(
    private readonly api: ApiCore,
    private readonly hooks: ControllerHooks = {},
    private readonly options: { podStartupSeconds?: number; podTerminationSeconds?: number } = {},
  ) {}

  private get now(): Date {
    return this.api.now();
  }

  // ---------------------------------------------------------------- instances / kubelets

  /** Registers a simulated instance; its Node appears after `bootDelaySeconds` (at a reconcile). */
  addInstance(spec: InstanceSpec): InstanceState {
    const existing = this.instances.get(spec.instanceId);
    if (existing) return existing;
    const region = spec.region ?? spec.zone.replace(/[a-z]$/, '');
    const privateIp = spec.privateIp ?? this.allocateIp();
    const dashed = privateIp.replace(/\./g, '-');
    const nodeName = spec.nodeName ?? (region === 'us-east-1' ? `ip-${dashed}.ec2.internal` : `ip-${dashed}.${region}.compute.internal`);
    const st: InstanceState = {
      spec: { ...spec, region },
      nodeName,
      providerID: providerIdOf(spec.zone, spec.instanceId),
      privateIp,
      phase: 'booting',
      launchedAtMs: this.now.getTime(),
    };
    this.instances.set(spec.instanceId, st);
    return st;
  }

  private allocateIp(): string {
    const used = new Set([...this.instances.values()].map((i) => i.privateIp));
    for (;;) {
      const n = this.nextIp++;
      const ip = `10.0.${Math.floor(n / 250) + 1}.${(n % 250) + 4}`;
      if (!used.has(ip)) return ip;
    }
  }

  /**
   * The instance's kubelet stops posting status (a hung node) while the instance keeps running: its
   * node turns NotReady as removeInstance's does, but its pods stay (until the taint manager's
   * tolerations run out) and it never turns Ready again. @returns false when it has no live kubelet.
   */
  stopKubelet(instanceId: string): boolean {
    const st = this.instances.get(instanceId);
    if (!st || (st.phase !== 'registered' && st.phase !== 'ready')) return false;
    st.phase = 'unreachable';
    const node = this.api.store.get(T.nodes, undefined, st.nodeName) as Node | undefined;
    if (node) this.markUnreachable(node);
    return true;
  }

  /** Ready=Unknown (the node lifecycle controller's NodeStatusUnknown) and the unreachable taints. */
  private markUnreachable(node: Node): void {
    const now = this.now;
    node.status = node.status ?? {};
    node.status.conditions = (node.status.conditions ?? []).map((c) =>
      c.type === 'Ready'
        ? { ...c, status: 'Unknown', reason: 'NodeStatusUnknown', message: 'Kubelet stopped posting node status.', lastTransitionTime: rfc3339(now) }
        : c,
    ) as never;
    node.spec = node.spec ?? {};
    const taints = (node.spec.taints ?? []).filter((t) => !TaintsUnreachable.some((u) => u.key === t.key && u.effect === t.effect));
    node.spec.taints = [...taints, ...TaintsUnreachable.map((t) => ({ ...t, timeAdded: rfc3339(now) }))];
    this.api.store.update(T.nodes, node as unknown as KubeObject);
  }

  /**
   * The instance is gone (terminated, interrupted): its node turns NotReady (Ready=Unknown,
   * unreachable taints) and its pods are deleted at once. The Node object stays until someone
   * deletes it (as with a real cluster before the cloud node controller catches up), unless
   * `deleteNode` is true.
   */
  removeInstance(instanceId: string, opts: { deleteNode?: boolean } = {}): void {
    const st = this.instances.get(instanceId);
    if (!st || st.phase === 'removed' || st.phase === 'deleted') return;
    const alreadyUnreachable = st.phase === 'unreachable';
    st.phase = 'removed';
    const node = this.api.store.get(T.nodes, undefined, st.nodeName) as Node | undefined;
    if (!node) return;
    for (const p of this.podsOnNode(st.nodeName)) this.api.forceDeletePod(p.metadata.namespace ?? 'default', p.metadata.name);
    if (opts.deleteNode) {
      this.api.store.remove(T.nodes, undefined, st.nodeName);
      return;
    }
    if (!alreadyUnreachable) this.markUnreachable(node);
  }

  private podsOnNode(nodeName: string): Pod[] {
    return (this.api.store.list(T.pods) as unknown as Pod[]).filter((p) => p.spec.nodeName === nodeName);
  }

  private kubelets(): void {
    const nowMs = this.now.getTime();
    const now = this.now;
    for (const st of this.instances.values()) {
      const s = st.spec;
      const node = this.api.store.get(T.nodes, undefined, st.nodeName) as Node | undefined;
      if ((st.phase === 'registered' || st.phase === 'ready' || st.phase === 'unreachable') && !node) {
        st.phase = 'deleted'; // deleted through the API: the simulated kubelet does not re-register
        continue;
      }
      if (st.phase === 'booting') this.wake(st.launchedAtMs + (s.bootDelaySeconds ?? 0) * 1000);
      if (st.phase === 'booting' && nowMs >= st.launchedAtMs + (s.bootDelaySeconds ?? 0) * 1000) {
        if (!node) this.api.store.create(T.nodes, kubeletNode(st, this.now) as unknown as KubeObject);
        st.phase = 'registered';
        st.registeredAtMs = nowMs;
      }
      if (st.phase === 'registered') this.wake((st.registeredAtMs ?? nowMs) + (s.readyDelaySeconds ?? 0) * 1000);
      if (st.phase === 'registered' && nowMs >= (st.registeredAtMs ?? nowMs) + (s.readyDelaySeconds ?? 0) * 1000) {
        const n = this.api.store.get(T.nodes, undefined, st.nodeName) as Node | undefined;
        if (n) {
          n.status!.conditions = (n.status!.conditions ?? []).map((c) =>
            c.type === 'Ready'
              ? { type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status', lastTransitionTime: rfc3339(now) }
              : c,
          ) as never;
          n.spec!.taints = (n.spec!.taints ?? []).filter((t) => t.key !== TaintNotReady.key);
          this.api.store.update(T.nodes, n as unknown as KubeObject);
        }
        st.phase = 'ready';
        st.readyAtMs = nowMs;
      }
      if (st.phase === 'ready' && s.startupTaints?.length && s.startupTaintsRemovalSeconds !== undefined) {
        const dueMs = (st.readyAtMs ?? nowMs) + s.startupTaintsRemovalSeconds * 1000;
        const n = this.api.store.get(T.nodes, undefined, st.nodeName) as Node | undefined;
        const taints = n?.spec?.taints ?? [];
        const kept = taints.filter((t) => !s.startupTaints!.some((x) => x.key === t.key && x.effect === t.effect));
        if (kept.length !== taints.length && nowMs < dueMs) {
          this.wake(dueMs);
          continue;
        }
        if (n && kept.length !== taints.length) {
          n.spec!.taints = kept;
          this.api.store.update(T.nodes, n as unknown as KubeObject);
        }
      }
    }
  }

  /**
   * Node lifecycle controller (TaintNodesByCondition): a Ready node never keeps the not-ready
   * taint, even when a client wrote back a taint list it read before the node turned Ready.
   */
  private nodeLifecycle(nodes: Node[]): void {
    for (const n of nodes) {
      const taints = n.spec?.taints ?? [];
      if (isNodeReady(n) && taints.some((t) => t.key === TaintNotReady.key)) {
        this.api.store.update(T.nodes, { ...n, spec: { ...n.spec, taints: taints.filter((t) => t.key !== TaintNotReady.key) } } as unknown as KubeObject);
      }
    }
  }

  /**
   * Taint manager: pods that do not tolerate a node's NoExecute taint are deleted (gracefully),
   * at once or after their toleration's `tolerationSeconds` counted from the taint's `timeAdded`.
   */
  private noExecuteEvictions(pods: Pod[], nodes: Map<string, Node>): void {
    const nowMs = this.now.getTime();
    for (const pod of pods) {
      if (!pod.spec.nodeName || pod.metadata.deletionTimestamp || isTerminal(pod)) continue;
      const node = nodes.get(pod.spec.nodeName);
      for (const taint of node?.spec?.taints ?? []) {
        if (taint.effect !== 'NoExecute') continue;
        const tol = (pod.spec.tolerations ?? []).find((t) => tolerates(t, taint));
        const addedMs = Date.parse(taint.timeAdded ?? '') || nowMs;
        if (tol?.tolerationSeconds !== undefined) this.wake(addedMs + Math.max(0, tol.tolerationSeconds) * 1000);
        if (!tol || (tol.tolerationSeconds !== undefined && nowMs >= addedMs + Math.max(0, tol.tolerationSeconds) * 1000)) {
          this.api.delete(T.pods, pod.metadata.namespace, pod.metadata.name);
          break;
        }
      }
    }
  }

  /** Starts bound pods on Ready nodes and finishes terminating pods. */
  private podLifecycle(pods: Pod[], nodes: Map<string, Node>): void {
    const now = this.now;
    const nowMs = now.getTime();
    for (let pod of pods) {
      const ns = pod.metadata.namespace ?? 'default';
      if (!pod.spec.nodeName) continue;
      const node = nodes.get(pod.spec.nodeName);
      if (!node) {
        // pod GC: a pod bound to a node that no longer exists is force-deleted
        this.api.forceDeletePod(ns, pod.metadata.name);
        continue;
      }
      const meta = pod.metadata as Pod['metadata'] & { deletionGracePeriodSeconds?: number };
      if (meta.deletionTimestamp) {
        // The kubelet runs the preStop hooks, then SIGTERM; whatever is still running when the
        // grace period (deletionTimestamp) ends is killed: a hanging preStop delays the pod to
        // the end of its grace period, never beyond (a force delete, grace 0, ends it at once).
        const doneMs = podStopsAtMs(pod, this.options.podTerminationSeconds ?? 0);
        if (nowMs >= doneMs) this.api.forceDeletePod(ns, pod.metadata.name);
        else this.wake(doneMs);
        continue;
      }
      if (pod.status?.phase === 'Pending' && isNodeReady(node)) {
        pod = structuredClone(pod);
        const scheduled = pod.status?.conditions?.find((c) => c.type === 'PodScheduled' && c.status === 'True');
        const boundMs = Date.parse(scheduled?.lastTransitionTime ?? pod.metadata.creationTimestamp ?? rfc3339(now));
        if (nowMs < boundMs + (this.options.podStartupSeconds ?? 0) * 1000) {
          this.wake(boundMs + (this.options.podStartupSeconds ?? 0) * 1000);
          continue;
        }
        const ip = `10.0.${128 + (fnv1a32(pod.metadata.name) % 120)}.${(fnv1a32(ns + pod.metadata.name) % 250) + 2}`;
        const hostIP =
          node.status && (node.status as { addresses?: { type: string; address: string }[] }).addresses?.find((a) => a.type === 'InternalIP')?.address;
        let conds = pod.status?.conditions ?? [];
        for (const t of ['PodScheduled', 'Initialized', 'ContainersReady', 'Ready']) conds = setCondition(conds, condition(t, 'True', now));
        pod.status = {
          ...pod.status,
          phase: 'Running',
          conditions: conds,
          startTime: rfc3339(now),
          ...(hostIP ? { hostIP } : {}),
          podIP: ip,
          containerStatuses: (pod.spec.containers ?? []).map((c) => ({
            name: c.name,
            image: c.image ?? '',
            imageID: '',
            ready: true,
            started: true,
            restartCount: 0,
            state: { running: { startedAt: rfc3339(now) } },
          })),
        } as Pod['status'];
        this.api.store.update(T.pods, pod as unknown as KubeObject);
      }
    }
  }

  // ---------------------------------------------------------------- workload controllers

  private ownedPods(pods: Pod[], uid: string | undefined): Pod[] {
    return pods.filter((p) => p.metadata.ownerReferences?.some((r) => r.controller && r.uid === uid));
  }

  private createPod(
    owner: KubeObject,
    name: string,
    template: { metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> }; spec: Pod['spec'] },
    extra: { nodeName?: string; tolerations?: Toleration[]; labels?: Record<string, string> } = {},
  ): void {
    const spec = structuredClone(template.spec);
    if (extra.nodeName) spec.nodeName = extra.nodeName;
    if (extra.tolerations) spec.tolerations = [...(spec.tolerations ?? []), ...extra.tolerations];
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name,
        namespace: owner.metadata.namespace,
        labels: { ...(template.metadata?.labels ?? {}), ...(extra.labels ?? {}) },
        annotations: { ...(template.metadata?.annotations ?? {}) },
        ownerReferences: [
          { apiVersion: owner.apiVersion, kind: owner.kind, name: owner.metadata.name, uid: owner.metadata.uid, controller: true, blockOwnerDeletion: true },
        ],
      },
      spec,
    } as unknown as KubeObject;
    if (extra.nodeName) pod.status = { phase: 'Pending', conditions: [condition('PodScheduled', 'True', this.now)] };
    for (let attempt = 0; ; attempt++) {
      try {
        this.api.create(T.pods, owner.metadata.namespace, pod);
        return;
      } catch (e) {
        // a random-suffix name collision: draw another suffix, as generateName retries
        const collided = e instanceof ApiError && e.reason === 'AlreadyExists' && name.length > owner.metadata.name.length + 1 && !/-\d+$/.test(name);
        if (!collided || attempt >= 3) throw e;
        pod.metadata.name = `${owner.metadata.name}-${this.api.randomSuffix()}`;
      }
    }
  }

  /** Ranks pods for deletion on scale down as the ReplicaSet controller: unassigned, pending, not ready, then newest first. */
  private deletionOrder(a: Pod, b: Pod): number {
    const rank = (p: Pod) =>
      !p.spec.nodeName
        ? 0
        : p.status?.phase === 'Pending'
          ? 1
          : p.status?.phase !== 'Running'
            ? 2
            : (p.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True')
              ? 3
              : 2;
    const ra = rank(a);
    const rb = rank(b);
    if (ra !== rb) return ra - rb;
    const cost = (p: Pod) => Number(p.metadata.annotations?.['controller.kubernetes.io/pod-deletion-cost'] ?? 0);
    if (cost(a) !== cost(b)) return cost(a) - cost(b);
    return (b.metadata.creationTimestamp ?? '').localeCompare(a.metadata.creationTimestamp ?? '') || b.metadata.name.localeCompare(a.metadata.name);
  }

  private replicaSets(pods: Pod[]): void {
    for (const rs of this.api.store.listShared(T.replicasets)) {
      if (rs.metadata.deletionTimestamp) continue;
      const owned = this.ownedPods(pods, rs.metadata.uid).filter((p) => !isTerminal(p));
      const active = owned.filter((p) => !p.metadata.deletionTimestamp);
      const want = rs.spec?.replicas ?? 1;
      if (active.length < want) {
        for (let i = active.length; i < want; i++) this.createPod(rs, `${rs.metadata.name}-${this.api.randomSuffix()}`, rs.spec.template);
      } else if (active.length > want) {
        for (const p of [...active].sort((a, b) => this.deletionOrder(a, b)).slice(0, active.length - want)) {
          this.api.delete(T.pods, p.metadata.namespace, p.metadata.name);
        }
      }
      const ready = active.filter(
        (p) => p.status?.phase === 'Running' && (p.status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True'),
      ).length;
      const status = {
        replicas: Math.min(active.length, Math.max(want, active.length)),
        fullyLabeledReplicas: active.length,
        readyReplicas: ready,
        availableReplicas: ready,
        observedGeneration: rs.metadata.generation,
      };
      if (JSON.stringify(status) !== JSON.stringify(rs.status)) this.api.store.update(T.replicasets, { ...rs, status });
    }
  }

  private deployments(): void {
    const allRs = this.api.store.listShared(T.replicasets);
    for (const d of this.api.store.listShared(T.deployments)) {
      if (d.metadata.deletionTimestamp) continue;
      const template = d.spec?.template ?? { spec: { containers: [] } };
      const hash = podTemplateHash(template);
      const rsName = `${d.metadata.name}-${hash}`;
      const owned = allRs.filter(
        (rs) => rs.metadata.namespace === d.metadata.namespace && rs.metadata.ownerReferences?.some((r) => r.controller && r.uid === d.metadata.uid),
      );
      const replicas = d.spec?.replicas ?? 1;
      let current = owned.find((rs) => rs.metadata.name === rsName);
      if (!current) {
        const labels = { ...(template.metadata?.labels ?? {}), 'pod-template-hash': hash };
        current = this.api.create(T.replicasets, d.metadata.namespace, {
          apiVersion: 'apps/v1',
          kind: 'ReplicaSet',
          metadata: {
            name: rsName,
            namespace: d.metadata.namespace,
            labels,
            annotations: { 'deployment.kubernetes.io/desired-replicas': String(replicas), 'deployment.kubernetes.io/revision': String(owned.length + 1) },
            ownerReferences: [
              { apiVersion: 'apps/v1', kind: 'Deployment', name: d.metadata.name, uid: d.metadata.uid, controller: true, blockOwnerDeletion: true },
            ],
          },
          spec: {
            replicas,
            selector: {
              matchLabels: { ...(d.spec?.selector?.matchLabels ?? {}), 'pod-template-hash': hash },
              ...(d.spec?.selector?.matchExpressions ? { matchExpressions: d.spec.selector.matchExpressions } : {}),
            },
            template: { ...template, metadata: { ...(template.metadata ?? {}), labels } },
          },
        } as unknown as KubeObject);
      } else if ((current.spec?.replicas ?? 1) !== replicas) {
        current = this.api.store.update(T.replicasets, {
          ...current,
          metadata: {
            ...current.metadata,
            annotations: { ...(current.metadata.annotations ?? {}), 'deployment.kubernetes.io/desired-replicas': String(replicas) },
          },
          spec: { ...current.spec, replicas },
        });
      }
      // old template revisions scale to zero (a Recreate-style rollout; enough for the simulation)
      for (const old of owned) {
        if (old.metadata.name !== rsName && (old.spec?.replicas ?? 1) !== 0)
          this.api.store.update(T.replicasets, { ...old, spec: { ...old.spec, replicas: 0 } });
      }
      const rsNow = this.api.store
        .listShared(T.replicasets, d.metadata.namespace)
        .filter((rs) => rs.metadata.ownerReferences?.some((r) => r.controller && r.uid === d.metadata.uid));
      const sum = (f: (s: Record<string, number>) => number | undefined) => rsNow.reduce((a, rs) => a + (f(rs.status ?? {}) ?? 0), 0);
      const total = sum((s) => s.replicas);
      const ready = sum((s) => s.readyReplicas);
      const updated = current.status?.replicas ?? 0;
      const status = {
        observedGeneration: d.metadata.generation,
        replicas: total,
        updatedReplicas: updated,
        readyReplicas: ready,
        availableReplicas: ready,
        ...(total - ready > 0 ? { unavailableReplicas: total - ready } : {}),
        conditions: [
          {
            type: 'Available',
            status: ready >= replicas ? 'True' : 'False',
            reason: ready >= replicas ? 'MinimumReplicasAvailable' : 'MinimumReplicasUnavailable',
          },
        ],
      };
      if (JSON.stringify(status) !== JSON.stringify(d.status)) this.api.store.update(T.deployments, { ...d, status });
    }
  }

  private statefulSets(pods: Pod[]): void {
    for (const sts of this.api.store.listShared(T.statefulsets)) {
      if (sts.metadata.deletionTimestamp) continue;
      const owned = this.ownedPods(pods, sts.metadata.uid);
      const want = sts.spec?.replicas ?? 1;
      for (let i = 0; i < want; i++) {
        const name = `${sts.metadata.name}-${i}`;
        if (!owned.some((p) => p.metadata.name === name))
          this.createPod(sts, name, sts.spec.template, { labels: { 'statefulset.kubernetes.io/pod-name': name, 'apps.kubernetes.io/pod-index': String(i) } });
      }
      for (const p of owned) {
        const idx = Number(p.metadata.name.slice(sts.metadata.name.length + 1));
        if (idx >= want && !p.metadata.deletionTimestamp) this.api.delete(T.pods, p.metadata.namespace, p.metadata.name);
      }
      const ready = owned.filter((p) => p.status?.phase === 'Running').length;
      const status = {
        observedGeneration: sts.metadata.generation,
        replicas: Math.min(owned.length, want),
        readyReplicas: ready,
        availableReplicas: ready,
        currentReplicas: Math.min(owned.length, want),
      };
      if (JSON.stringify(status) !== JSON.stringify(sts.status)) this.api.store.update(T.statefulsets, { ...sts, status });
    }
  }

  private daemonSets(pods: Pod[], nodes: Node[]): void {
    for (const ds of this.api.store.listShared(T.daemonsets)) {
      if (ds.metadata.deletionTimestamp) continue;
      const template = ds.spec?.template ?? { spec: { containers: [] } };
      const probe = {
        metadata: { name: 'probe', labels: template.metadata?.labels },
        spec: { ...template.spec, tolerations: [...(template.spec?.tolerations ?? []), ...DAEMONSET_TOLERATIONS] },
      } as Pod;
      const owned = this.ownedPods(pods, ds.metadata.uid);
      let desired = 0;
      for (const node of nodes) {
        if (node.metadata.deletionTimestamp) continue;
        const eligible = matchesNodeSelection(probe, node) && !untoleratedTaint(node.spec?.taints, probe.spec.tolerations);
        const mine = owned.filter((p) => p.spec.nodeName === node.metadata.name && !p.metadata.deletionTimestamp);
        if (eligible) {
          desired++;
          if (mine.length === 0)
            this.createPod(ds, `${ds.metadata.name}-${this.api.randomSuffix()}`, template, {
              nodeName: node.metadata.name,
              tolerations: DAEMONSET_TOLERATIONS,
            });
        } else {
          for (const p of mine) this.api.delete(T.pods, p.metadata.namespace, p.metadata.name);
        }
      }
      const current = owned.filter((p) => !p.metadata.deletionTimestamp);
      const ready = current.filter((p) => p.status?.phase === 'Running').length;
      const status = {
        observedGeneration: ds.metadata.generation,
        desiredNumberScheduled: desired,
        currentNumberScheduled: current.length,
        numberReady: ready,
        numberAvailable: ready,
        updatedNumberScheduled: current.length,
        numberMisscheduled: 0,
      };
      if (JSON.stringify(status) !== JSON.stringify(ds.status)) this.api.store.update(T.daemonsets, { ...ds, status });
    }
  }

  /** Owner GC: ReplicaSets whose Deployment is gone and pods whose controller is gone are deleted (background propagation). */
  private garbageCollect(pods: Pod[]): void {
    const uids = new Set<string>();
    for (const t of [T.deployments, T.replicasets, T.daemonsets, T.statefulsets]) for (const o of this.api.store.listShared(t)) uids.add(o.metadata.uid ?? '');
    for (const rs of [...this.api.store.listShared(T.replicasets)]) {
      const ref = rs.metadata.ownerReferences?.find((r) => r.controller);
      if (ref && ref.kind === 'Deployment' && !uids.has(ref.uid ?? '')) this.api.store.remove(T.replicasets, rs.metadata.namespace, rs.metadata.name);
    }
    for (const p of pods) {
      const ref = p.metadata.ownerReferences?.find((r) => r.controller);
      if (!ref || !['ReplicaSet', 'DaemonSet', 'StatefulSet'].includes(ref.kind) || uids.has(ref.uid ?? '') || p.metadata.deletionTimestamp) continue;
      if (this.api.store.get(T.pods, p.metadata.namespace, p.metadata.name)) this.api.delete(T.pods, p.metadata.namespace, p.metadata.name);
    }
  }

  private pdbStatuses(): void {
    for (const pdb of this.api.store.listShared(T.pdbs)) {
      const st = this.api.pdbStatus(pdb as never);
      const status = { ...(pdb.status ?? {}), ...st, observedGeneration: pdb.metadata.generation };
      if (JSON.stringify(status) !== JSON.stringify(pdb.status)) this.api.store.update(T.pdbs, { ...pdb, status });
    }
  }

  // ---------------------------------------------------------------- scheduler

  /**
   * Binds pending pods (default scheduler, not terminating) to Ready, schedulable nodes that fit
   * them, highest priority and oldest first. Pods that fit nowhere get PodScheduled=False,
   * reason Unschedulable, with kube-scheduler's message ("0/3 nodes are available: 3 Insufficient cpu.").
   */
  private schedule(pods: Pod[], nodes: Node[]): void {
    const pending = pods
      .filter(
        (p) => !p.spec.nodeName && !p.metadata.deletionTimestamp && !isTerminal(p) && (p.spec.schedulerName ?? 'default-scheduler') === 'default-scheduler',
      )
      .sort(
        (a, b) =>
          (b.spec.priority ?? 0) - (a.spec.priority ?? 0) ||
          (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? '') ||
          a.metadata.name.localeCompare(b.metadata.name),
      );
    if (pending.length === 0) return;
    const bound = pods.filter((p) => p.spec.nodeName && !isTerminal(p));
    const used = new Map<string, Resources>();
    for (const p of bound) used.set(p.spec.nodeName!, addResources(used.get(p.spec.nodeName!) ?? {}, podRequests(p)));
    const now = this.now;
    for (let pod of pending) {
      const reasons = new Map<string, number>();
      const add = (r: string) => reasons.set(r, (reasons.get(r) ?? 0) + 1);
      const requests = podRequests(pod);
      let chosen: Node | undefined;
      let bestFree = -Infinity;
      for (const node of nodes) {
        const why = this.filterNode(pod, node, requests, used, bound, nodes);
        if (why.length > 0) {
          why.forEach(add);
          continue;
        }
        // LeastAllocated-like scoring: the node with the most free cpu wins, name breaks ties
        const free = parseResources(node.status?.allocatable).cpu - (used.get(node.metadata.name)?.cpu ?? 0);
        if (free > bestFree) {
          bestFree = free;
          chosen = node;
        }
      }
      if (chosen) {
        pod = structuredClone(pod);
        pod.spec.nodeName = chosen.metadata.name;
        pod.status = { ...(pod.status ?? {}), conditions: setCondition(pod.status?.conditions ?? [], condition('PodScheduled', 'True', now)) };
        this.api.store.update(T.pods, pod as unknown as KubeObject);
        used.set(chosen.metadata.name, addResources(used.get(chosen.metadata.name) ?? {}, requests));
        bound.push(pod);
        continue;
      }
      const message =
        nodes.length === 0
          ? 'no nodes available to schedule pods'
          : `0/${nodes.length} nodes are available: ${[...reasons.entries()]
              .map(([r, n]) => `${n} ${r}`)
              .sort()
              .join(', ')}.`;
      const conds = setCondition(pod.status?.conditions ?? [], condition('PodScheduled', 'False', now, 'Unschedulable', message));
      if (conds !== pod.status?.conditions) {
        pod = { ...pod, status: { ...(pod.status ?? {}), phase: 'Pending', conditions: conds } };
        this.api.store.update(T.pods, pod as unknown as KubeObject);
        this.hooks.podPending?.(pod, message);
      }
    }
  }

  /** Reasons (kube-scheduler wording) why `node` cannot take `pod`; empty when it can. */
  private filterNode(pod: Pod, node: Node, requests: Resources, used: Map<string, Resources>, bound: Pod[], nodes: Node[]): string[] {
    if (node.metadata.deletionTimestamp) return ['node(s) were being deleted'];
    if (node.spec?.unschedulable) return ['node(s) were unschedulable'];
    const taint = untoleratedTaint(node.spec?.taints, pod.spec.tolerations);
    if (taint) return [`node(s) had untolerated taint {${taint.key}: ${taint.value ?? ''}}`];
    if (!isNodeReady(node)) return ['node(s) had untolerated taint {node.kubernetes.io/not-ready: }'];
    if (!matchesNodeSelection(pod, node)) return ["node(s) didn't match Pod's node affinity/selector"];
    const free = subtractResources(parseResources(node.status?.allocatable), used.get(node.metadata.name) ?? {});
    if (!fits(requests, free)) {
      const out: string[] = [];
      for (const [k, v] of Object.entries(requests)) if (v > 0 && v > (free[k] ?? 0)) out.push(k === 'pods' ? 'Too many pods' : `Insufficient ${k}`);
      return out;
    }
    // kube-scheduler's default filter order: PodTopologySpread before InterPodAffinity
    const spread = this.topologySpread(pod, node, bound, nodes);
    if (spread) return [spread];
    const affinity = this.interPodAffinity(pod, node, bound, nodes);
    if (affinity) return [affinity];
    return [];
  }

  private selects(sel: LabelSelector | undefined, p: Pod, namespaces: string[]): boolean {
    return namespaces.includes(p.metadata.namespace ?? 'default') && matchesLabelSelector(sel ?? {}, p.metadata.labels);
  }

  /** Required pod affinity / anti-affinity (any topology key present as a node label). */
  private interPodAffinity(pod: Pod, node: Node, bound: Pod[], nodes: Node[]): string | undefined {
    const byName = new Map(nodes.map((n) => [n.metadata.name, n]));
    const domainOf = (p: Pod, key: string) => byName.get(p.spec.nodeName ?? '')?.metadata.labels?.[key];
    const ns = pod.metadata.namespace ?? 'default';
    for (const term of pod.spec.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? []) {
      const value = node.metadata.labels?.[term.topologyKey];
      if (value === undefined) continue;
      if (
        bound.some(
          (p) => !p.metadata.deletionTimestamp && this.selects(term.labelSelector, p, term.namespaces ?? [ns]) && domainOf(p, term.topologyKey) === value,
        )
      )
        return "node(s) didn't match pod anti-affinity rules";
    }
    // existing pods' anti-affinity against the incoming pod
    for (const p of bound) {
      for (const term of p.spec.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? []) {
        const value = node.metadata.labels?.[term.topologyKey];
        if (
          value !== undefined &&
          domainOf(p, term.topologyKey) === value &&
          this.selects(term.labelSelector, pod, term.namespaces ?? [p.metadata.namespace ?? 'default'])
        )
          return "node(s) didn't satisfy existing pods anti-affinity rules";
      }
    }
    for (const term of pod.spec.affinity?.podAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? []) {
      const value = node.metadata.labels?.[term.topologyKey];
      const matching = bound.filter((p) => this.selects(term.labelSelector, p, term.namespaces ?? [ns]));
      // the first pod of a group that matches its own term may go anywhere (kube-scheduler's special case)
      if (matching.length === 0 && this.selects(term.labelSelector, pod, term.namespaces ?? [ns])) continue;
      if (value === undefined || !matching.some((p) => domainOf(p, term.topologyKey) === value)) return "node(s) didn't match pod affinity rules";
    }
    return undefined;
  }

  /** DoNotSchedule topology spread constraints; domains are the values among nodes the pod may use. */
  private topologySpread(pod: Pod, node: Node, bound: Pod[], nodes: Node[]): string | undefined {
    const ns = pod.metadata.namespace ?? 'default';
    for (const c of pod.spec.topologySpreadConstraints ?? []) {
      if (c.whenUnsatisfiable !== 'DoNotSchedule') continue;
      const value = node.metadata.labels?.[c.topologyKey];
      if (value === undefined) return "node(s) didn't match pod topology spread constraints (missing required label)";
      const eligible = nodes.filter(
        (n) =>
          n.metadata.labels?.[c.topologyKey] !== undefined &&
          (c.nodeAffinityPolicy === 'Ignore' || matchesNodeSelection(pod, n)) &&
          (c.nodeTaintsPolicy !== 'Honor' || !untoleratedTaint(n.spec?.taints, pod.spec.tolerations)),
      );
      const counts = new Map<string, number>();
      for (const n of eligible) counts.set(n.metadata.labels![c.topologyKey], 0);
      const domainOf = new Map(nodes.map((n) => [n.metadata.name, n.metadata.labels?.[c.topologyKey]]));
      for (const p of bound) {
        if (p.metadata.deletionTimestamp || (p.metadata.namespace ?? 'default') !== ns || !matchesLabelSelector(c.labelSelector ?? {}, p.metadata.labels))
          continue;
        const d = domainOf.get(p.spec.nodeName ?? '');
        if (d !== undefined && counts.has(d)) counts.set(d, (counts.get(d) ?? 0) + 1);
      }
      const min = counts.size < (c.minDomains ?? 1) ? 0 : Math.min(...counts.values());
      const selfMatch = matchesLabelSelector(c.labelSelector ?? {}, pod.metadata.labels) ? 1 : 0;
      if ((counts.get(value) ?? 0) + selfMatch - min > c.maxSkew) return "node(s) didn't match pod topology spread constraints";
    }
    return undefined;
  }

  // ---------------------------------------------------------------- the pass

  /** Runs one controller; a throw is reported and does not stop the others (a real controller would retry). */
  private step(name: string, fn: () => void): void {
    try {
      fn();
    } catch (e) {
      this.hooks.error?.(name, e);
    }
  }

  /**
   * One pass of every controller at the cluster's current time, repeated while something changed
   * (at most `maxRounds`). Returns the number of rounds that changed something.
   */
  reconcile(maxRounds = 10): number {
    let changedRounds = 0;
    for (let round = 0; round < maxRounds; round++) {
      const before = this.api.store.resourceVersion;
      this.wakeAtMs = Infinity;
      // read-only views; every step copies an object before changing it
      const pods = () => this.api.store.listShared(T.pods) as unknown as Pod[];
      const nodes = () => this.api.store.listShared(T.nodes) as unknown as Node[];
      const byName = () => new Map(nodes().map((n) => [n.metadata.name, n]));
      this.step('kubelets', () => this.kubelets());
      this.step('deployments', () => this.deployments());
      this.step('replicasets', () => this.replicaSets(pods()));
      this.step('statefulsets', () => this.statefulSets(pods()));
      this.step('daemonsets', () => this.daemonSets(pods(), nodes()));
      this.step('garbage-collector', () => this.garbageCollect(pods()));
      this.step('scheduler', () => this.schedule(pods(), nodes()));
      this.step('node-lifecycle', () => this.nodeLifecycle(nodes()));
      this.step('taint-manager', () => this.noExecuteEvictions(pods(), byName()));
      this.step('pod-lifecycle', () => this.podLifecycle(pods(), byName()));
      this.step('disruption', () => this.pdbStatuses());
      if (this.api.store.resourceVersion === before) break;
      changedRounds++;
    }
    return changedRounds;
  }
}

/**
 * The Node a kubelet registers for an instance: well-known labels (the spec's win), the registered
 * taints with the not-ready one, Ready=False, addresses and node info. The real tier registers the
 * same object (without the not-ready taint, which its node lifecycle controller adds).
 */
export function kubeletNode(st: Pick<InstanceState, 'spec' | 'nodeName' | 'providerID' | 'privateIp'>, now: Date): Node {
  const s = st.spec;
  const capacity = toQuantities(s.capacity);
  const allocatable = toQuantities(s.allocatable ?? s.capacity);
  const labels: Record<string, string> = {
    [LabelArch]: 'amd64',
    [LabelOS]: 'linux',
    'beta.kubernetes.io/arch': s.labels?.[LabelArch] ?? 'amd64',
    'beta.kubernetes.io/os': 'linux',
    'beta.kubernetes.io/instance-type': s.instanceType,
    'failure-domain.beta.kubernetes.io/region': s.region!,
    'failure-domain.beta.kubernetes.io/zone': s.zone,
    [LabelHostname]: st.nodeName,
    [LabelInstanceType]: s.instanceType,
    [LabelTopologyRegion]: s.region!,
    [LabelTopologyZone]: s.zone,
    [LabelCapacityType]: s.capacityType ?? 'on-demand',
    ...(s.labels ?? {}),
  };
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: st.nodeName,
      labels,
      annotations: { 'node.alpha.kubernetes.io/ttl': '0', 'alpha.kubernetes.io/provided-node-ip': st.privateIp, ...(s.annotations ?? {}) },
    },
    spec: {
      providerID: st.providerID,
      taints: [...(s.taints ?? []), ...(s.startupTaints ?? []), { ...TaintNotReady, timeAdded: rfc3339(now) }],
    },
    status: {
      capacity,
      allocatable,
      conditions: [
        { type: 'MemoryPressure', status: 'False', reason: 'KubeletHasSufficientMemory', lastTransitionTime: rfc3339(now) },
        { type: 'DiskPressure', status: 'False', reason: 'KubeletHasNoDiskPressure', lastTransitionTime: rfc3339(now) },
        { type: 'PIDPressure', status: 'False', reason: 'KubeletHasSufficientPID', lastTransitionTime: rfc3339(now) },
        { type: 'Ready', status: 'False', reason: 'KubeletNotReady', lastTransitionTime: rfc3339(now) },
      ],
      addresses: [
        { type: 'InternalIP', address: st.privateIp },
        { type: 'InternalDNS', address: st.nodeName },
        { type: 'Hostname', address: st.nodeName },
      ],
      nodeInfo: {
        architecture: labels[LabelArch],
        operatingSystem: 'linux',
        kubeletVersion: KUBELET_VERSION,
        kubeProxyVersion: KUBELET_VERSION,
        containerRuntimeVersion: 'containerd://1.7.27',
        osImage: 'Amazon Linux 2023.6.20250115',
        kernelVersion: '6.1.119-129.201.amzn2023.x86_64',
        machineID: st.spec.instanceId.replace(/^i-/, '').padEnd(32, '0'),
        systemUUID: st.spec.instanceId,
        bootID: st.spec.instanceId,
      },
    },
  } as Node;
}
