/**
 * Reading workloads as `kubectl get -o json|yaml` prints them (or as scenario cases write them):
 * Pods, workload controllers expanded to the pods they stand for, DaemonSet pod templates,
 * PodDisruptionBudgets, Nodes, and the zone of persistent volumes.
 *
 * Expansion convention (test/cases/FORMAT.md): a Deployment, ReplicaSet, StatefulSet or Job
 * with no pods of its own listed stands for `replicas` (Job: `parallelism`, default 1) pending
 * pods named `<name>-0 … <name>-(n-1)` with the template's labels and spec.
 */
import type { KubeObject, LabelSelector, Node, Pod, PodDisruptionBudget, PodSpec, ObjectMeta } from './kube.ts';

/** A DaemonSet's pod template with the DaemonSet's own metadata (name, namespace). */
export interface DaemonSetPodTemplate {
  metadata: ObjectMeta;
  spec: PodSpec;
}

/** Everything scheduling and disruption read from a set of objects. */
export interface Workloads {
  /** Pods without `spec.nodeName` that are not finished (including DaemonSet-owned ones: callers skip those). */
  pendingPods: Pod[];
  /** Pods bound to a node (`spec.nodeName`) and not finished. */
  boundPods: Pod[];
  daemonSets: DaemonSetPodTemplate[];
  pdbs: PodDisruptionBudget[];
  nodes: Node[];
  /** `namespace/claimName` → zones the claim's volume lives in (bound PV node affinity, or StorageClass allowedTopologies). */
  volumes: Record<string, string[]>;
  /** Any other object (NodePools, EC2NodeClasses, PriorityClasses, …), unchanged. */
  others: KubeObject[];
}

const ExpandedKinds = new Set(['Deployment', 'ReplicaSet', 'StatefulSet', 'Job']);
const ZoneKeys = new Set(['topology.kubernetes.io/zone', 'topology.ebs.csi.aws.com/zone', 'failure-domain.beta.kubernetes.io/zone']);

function isObject(o: unknown): o is KubeObject {
  return typeof o === 'object' && o !== null && typeof (o as KubeObject).kind === 'string' && typeof (o as KubeObject).metadata === 'object';
}

function selects(selector: LabelSelector | undefined, labels: Record<string, string> | undefined): boolean {
  if (!selector) return false;
  const l = labels ?? {};
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (l[k] !== v) return false;
  for (const e of selector.matchExpressions ?? []) {
    const v = l[e.key];
    if (e.operator === 'In' && (v === undefined || !(e.values ?? []).includes(v))) return false;
    if (e.operator === 'NotIn' && v !== undefined && (e.values ?? []).includes(v)) return false;
    if (e.operator === 'Exists' && v === undefined) return false;
    if (e.operator === 'DoesNotExist' && v !== undefined) return false;
  }
  return true;
}

/**
 * Whether a listed pod is one of the controller's own: its owner is the controller (or, for a
 * Deployment, one of its `<name>-<hash>` ReplicaSets), or it has no owner and carries the
 * controller's `<name>-` prefix. A pod that merely shares labels does not count.
 */
function ownedBy(p: Pod, o: KubeObject): boolean {
  const refs = p.metadata.ownerReferences ?? [];
  if (refs.length === 0) return p.metadata.name.startsWith(`${o.metadata.name}-`);
  return refs.some((r) => (o.kind === 'Deployment' ? r.kind === 'ReplicaSet' && r.name.startsWith(`${o.metadata.name}-`) : r.kind === o.kind && r.name === o.metadata.name));
}

function finished(p: Pod): boolean {
  return p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed';
}

function zonesFromTerms(terms: { matchExpressions?: { key: string; operator: string; values?: string[] }[] }[] | undefined): string[] {
  const zones = new Set<string>();
  for (const t of terms ?? []) for (const e of t.matchExpressions ?? []) if (ZoneKeys.has(e.key) && e.operator === 'In') for (const v of e.values ?? []) zones.add(v);
  return [...zones].sort();
}

/**
 * The pending pods one controller stands for.
 * @param kind Deployment, ReplicaSet, StatefulSet or Job.
 */
export function expandWorkload(o: KubeObject): Pod[] {
  const spec = (o.spec ?? {}) as { replicas?: number; parallelism?: number; template?: { metadata?: Partial<ObjectMeta>; spec?: PodSpec } };
  const n = o.kind === 'Job' ? (spec.parallelism ?? 1) : (spec.replicas ?? 1);
  const template = spec.template ?? {};
  const namespace = o.metadata.namespace ?? 'default';
  const ownerKind = o.kind === 'Deployment' ? 'ReplicaSet' : o.kind;
  const pods: Pod[] = [];
  for (let i = 0; i < n; i++) {
    pods.push({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: `${o.metadata.name}-${i}`,
        namespace,
        labels: { ...(template.metadata?.labels ?? {}) },
        annotations: template.metadata?.annotations ? { ...template.metadata.annotations } : undefined,
        ownerReferences: [{ apiVersion: 'apps/v1', kind: ownerKind, name: o.metadata.name, controller: true }],
      },
      spec: structuredClone(template.spec ?? { containers: [] }),
      status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }] },
    });
  }
  return pods;
}

/**
 * Sorts objects into {@link Workloads}. Objects without `kind`/`metadata` are ignored.
 * Never throws.
 */
export function readWorkloads(objects: readonly unknown[]): Workloads {
  const out: Workloads = { pendingPods: [], boundPods: [], daemonSets: [], pdbs: [], nodes: [], volumes: {}, others: [] };
  const objs = objects.filter(isObject);
  const pods = objs.filter((o) => o.kind === 'Pod') as unknown as Pod[];
  const deploymentNames = new Set(objs.filter((o) => o.kind === 'Deployment').map((o) => `${o.metadata.namespace ?? 'default'}/${o.metadata.name}`));
  const pvs = new Map<string, KubeObject>();
  const classes = new Map<string, KubeObject>();
  const claims: KubeObject[] = [];
  for (const o of objs) {
    if (o.kind === 'PersistentVolume') pvs.set(o.metadata.name, o);
    if (o.kind === 'StorageClass') classes.set(o.metadata.name, o);
    if (o.kind === 'PersistentVolumeClaim') claims.push(o);
  }
  for (const p of pods) {
    if (finished(p)) continue;
    p.metadata.namespace ??= 'default';
    if (p.spec.nodeName) out.boundPods.push(p);
    else out.pendingPods.push(p);
  }
  for (const o of objs) {
    if (o.kind === 'Pod' || o.kind === 'PersistentVolume' || o.kind === 'StorageClass' || o.kind === 'PersistentVolumeClaim') {
      if (o.kind !== 'Pod') out.others.push(o);
      continue;
    }
    if (ExpandedKinds.has(o.kind)) {
      const ns = o.metadata.namespace ?? 'default';
      // A ReplicaSet owned by a listed Deployment is that Deployment's pods: do not count twice.
      if (o.kind === 'ReplicaSet' && o.metadata.ownerReferences?.some((r) => r.kind === 'Deployment' && deploymentNames.has(`${ns}/${r.name}`))) continue;
      const selector = (o.spec?.selector ?? { matchLabels: o.spec?.template?.metadata?.labels }) as LabelSelector;
      const hasPods = pods.some((p) => (p.metadata.namespace ?? 'default') === ns && selects(selector, p.metadata.labels) && ownedBy(p, o));
      if (!hasPods) out.pendingPods.push(...expandWorkload(o));
      out.others.push(o);
      continue;
    }
    if (o.kind === 'DaemonSet') {
      const t = (o.spec?.template ?? {}) as { metadata?: Partial<ObjectMeta>; spec?: PodSpec };
      out.daemonSets.push({
        metadata: { name: o.metadata.name, namespace: o.metadata.namespace ?? 'default', labels: t.metadata?.labels ?? {} },
        spec: t.spec ?? { containers: [] },
      });
      continue;
    }
    if (o.kind === 'PodDisruptionBudget') {
      out.pdbs.push(o as unknown as PodDisruptionBudget);
      continue;
    }
    if (o.kind === 'Node') {
      out.nodes.push(o as unknown as Node);
      continue;
    }
    out.others.push(o);
  }
  for (const c of claims) {
    const key = `${c.metadata.namespace ?? 'default'}/${c.metadata.name}`;
    const pv = c.spec?.volumeName ? pvs.get(c.spec.volumeName) : undefined;
    let zones = zonesFromTerms(pv?.spec?.nodeAffinity?.required?.nodeSelectorTerms);
    if (zones.length === 0 && !pv) {
      const sc = classes.get(c.spec?.storageClassName ?? '');
      const at = (sc?.allowedTopologies ?? []) as { matchLabelExpressions?: { key: string; values?: string[] }[] }[];
      zones = [...new Set(at.flatMap((t) => (t.matchLabelExpressions ?? []).filter((e) => ZoneKeys.has(e.key)).flatMap((e) => e.values ?? [])))].sort();
    }
    if (zones.length > 0) out.volumes[key] = zones;
  }
  return out;
}
