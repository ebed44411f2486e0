/**
 * Reading workloads as `kubectl get -o json|yaml` prints them (or as scenario cases write them):
 * Pods, workload controllers expanded to the pods they stand for, DaemonSet pod templates,
 * PodDisruptionBudgets, Nodes, and the storage objects pods' volumes use.
 *
 * Expansion convention (test/cases/FORMAT.md): a Deployment, ReplicaSet, StatefulSet or Job
 * with no pods of its own listed stands for `replicas` (Job: `parallelism`, default 1) pending
 * pods named `<name>-0 … <name>-(n-1)` with the template's labels and spec. A StatefulSet pod
 * also mounts, per `volumeClaimTemplates` entry `T`, the claim `T-<name>-<i>` in a volume named
 * `T`, as the StatefulSet controller gives it; when the input holds storage objects and that
 * claim is not among them, the claim the controller would create is added to `storage.claims`
 * (the template's spec, marked {@link PlannedClaimAnnotation}), so its volume is checked too.
 */
import type { KubeObject, LabelSelector, Node, Pod, PodDisruptionBudget, PodSpec, ObjectMeta } from './kube.ts';
import { daemonSetOwnerName } from './kube.ts';
import { parseQuantity } from './quantity.ts';
import { matchesSelector } from './label-selector.ts';
import { isProvisionable } from './agent-events.ts';

/** A DaemonSet's pod template with the DaemonSet's own metadata (name, namespace). */
export interface DaemonSetPodTemplate {
  metadata: ObjectMeta;
  spec: PodSpec;
}

/** Everything scheduling and disruption read from a set of objects. */
export interface Workloads {
  /**
   * Pods the provisioner would solve for: unbound and provisionable by its own rule
   * (shared/api/agent-events.ts `isProvisionable`; a pod with no PodScheduled condition, as
   * manifests and cases write them, counts as Unschedulable).
   */
  pendingPods: Pod[];
  /** Unbound, unfinished pods the provisioner skips (nominated, terminating, DaemonSet-owned, mirror, not yet Unschedulable). */
  notProvisionable: Pod[];
  /** Pods bound to a node (`spec.nodeName`) and not finished. */
  boundPods: Pod[];
  daemonSets: DaemonSetPodTemplate[];
  /**
   * `namespace/name` of the DaemonSets of `daemonSets` known only from their pods (readWorkloads
   * option `daemonSetsFromPods`: the input lists pods a DaemonSet controls but not the DaemonSet).
   */
  daemonSetsFromPods: string[];
  pdbs: PodDisruptionBudget[];
  nodes: Node[];
  /** PersistentVolumeClaims, PersistentVolumes and StorageClasses (also kept in `others`); checked by shared/scheduling/volumes.ts. */
  storage: { claims: KubeObject[]; volumes: KubeObject[]; classes: KubeObject[] };
  /** Any other object (NodePools, EC2NodeClasses, PriorityClasses, …), unchanged. */
  others: KubeObject[];
}

const ExpandedKinds = new Set(['Deployment', 'ReplicaSet', 'StatefulSet', 'Job']);

/**
 * Marks a PersistentVolumeClaim that is not in the input but that a StatefulSet's
 * `volumeClaimTemplates` would create for an expanded pod; the value names the StatefulSet and
 * the template (`StatefulSet <ns>/<name> volumeClaimTemplates <T>`). Like any new claim it gets
 * the default StorageClass when its template names none (shared/scheduling/volumes.ts).
 */
export const PlannedClaimAnnotation = 'nodefleet.io/planned-claim';

interface ClaimTemplate {
  metadata?: { name?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: Record<string, unknown>;
}

function claimTemplates(o: KubeObject): ClaimTemplate[] {
  const t = o.kind === 'StatefulSet' ? o.spec?.volumeClaimTemplates : undefined;
  return Array.isArray(t) ? (t as ClaimTemplate[]).filter((c) => typeof c?.metadata?.name === 'string') : [];
}

function isObject(o: unknown): o is KubeObject {
  return typeof o === 'object' && o !== null && typeof (o as KubeObject).kind === 'string' && typeof (o as KubeObject).metadata === 'object';
}

/**
 * Whether a listed pod is one of the controller's own: its owner is the controller (or, for a
 * Deployment, one of its `<name>-<hash>` ReplicaSets), or it has no owner and carries the
 * controller's `<name>-` prefix. A pod that merely shares labels does not count.
 */
function ownedBy(p: Pod, o: KubeObject): boolean {
  const refs = p.metadata.ownerReferences ?? [];
  if (refs.length === 0) return p.metadata.name.startsWith(`${o.metadata.name}-`);
  return refs.some((r) =>
    o.kind === 'Deployment' ? r.kind === 'ReplicaSet' && r.name.startsWith(`${o.metadata.name}-`) : r.kind === o.kind && r.name === o.metadata.name,
  );
}

function finished(p: Pod): boolean {
  return p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed';
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
  const templates = claimTemplates(o);
  const pods: Pod[] = [];
  for (let i = 0; i < n; i++) {
    const spec: PodSpec = structuredClone(template.spec ?? { containers: [] });
    if (templates.length > 0) {
      // The StatefulSet controller gives each pod its own claims, replacing a template volume of the same name.
      const names = new Set(templates.map((c) => c.metadata!.name!));
      spec.volumes = [
        ...(spec.volumes ?? []).filter((v) => !names.has(v.name)),
        ...templates.map((c) => ({ name: c.metadata!.name!, persistentVolumeClaim: { claimName: `${c.metadata!.name}-${o.metadata.name}-${i}` } })),
      ];
    }
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
      spec,
      status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }] },
    });
  }
  return pods;
}

/**
 * The claims a StatefulSet's controller would create for its expanded pods and that `existing`
 * does not hold: each template's metadata and spec, named `<T>-<name>-<i>`, unbound.
 */
function plannedClaims(o: KubeObject, expanded: readonly Pod[], existing: readonly KubeObject[]): KubeObject[] {
  const ns = o.metadata.namespace ?? 'default';
  const have = new Set(existing.map((c) => `${c.metadata.namespace}/${c.metadata.name}`));
  const out: KubeObject[] = [];
  for (const t of claimTemplates(o)) {
    expanded.forEach((_, i) => {
      const name = `${t.metadata!.name}-${o.metadata.name}-${i}`;
      if (have.has(`${ns}/${name}`)) return;
      out.push({
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: {
          name,
          namespace: ns,
          labels: { ...(t.metadata?.labels ?? {}) },
          annotations: {
            ...(t.metadata?.annotations ?? {}),
            [PlannedClaimAnnotation]: `StatefulSet ${ns}/${o.metadata.name} volumeClaimTemplates ${t.metadata!.name}`,
          },
        },
        spec: structuredClone(t.spec ?? {}),
        status: { phase: 'Pending' },
      });
    });
  }
  return out;
}

/** The DaemonSet (`namespace/name`) that owns a pod, if any. */
function daemonSetOwner(p: Pod): string | undefined {
  const name = daemonSetOwnerName(p);
  return name === undefined ? undefined : `${p.metadata.namespace ?? 'default'}/${name}`;
}

/**
 * Per DaemonSet (`namespace/name`), the pod that stands for it: the newest of its listed pods by
 * creationTimestamp, the first listed on a tie (KC state/cluster.go `UpdateDaemonSet` keeps the
 * newest pod the DaemonSet controls).
 */
function newestDaemonSetPods(pods: readonly Pod[]): Map<string, Pod> {
  const out = new Map<string, Pod>();
  const time = (p: Pod) => Date.parse(p.metadata.creationTimestamp ?? '') || 0;
  for (const p of pods) {
    const owner = daemonSetOwner(p);
    if (!owner) continue;
    const seen = out.get(owner);
    if (!seen || time(p) > time(seen)) out.set(owner, p);
  }
  return out;
}

/**
 * A DaemonSet pod's spec as its template says it: without the node it is bound to and the
 * `metadata.name` field the DaemonSet controller adds to each required node-affinity term to pin
 * the pod to that node (the question is which nodes the DaemonSet runs on, not where this pod is).
 */
function asTemplateSpec(spec: PodSpec): PodSpec {
  const { nodeName: _bound, ...rest } = spec;
  const terms = rest.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  if (!terms?.some((t) => t.matchFields?.some((f) => f.key === 'metadata.name'))) return rest;
  const unpinned = terms.map(({ matchFields, ...t }) => {
    const kept = (matchFields ?? []).filter((f) => f.key !== 'metadata.name');
    return kept.length > 0 ? { ...t, matchFields: kept } : t;
  });
  // A term left empty held only the pin (the template had no required node affinity, or no such term).
  const kept = unpinned.filter((t) => t.matchExpressions?.length || 'matchFields' in t);
  const nodeAffinity = { ...rest.affinity!.nodeAffinity };
  if (kept.length === 0) delete nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution;
  else nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution = { nodeSelectorTerms: kept };
  return { ...rest, affinity: { ...rest.affinity, nodeAffinity } };
}

/**
 * Sorts objects into {@link Workloads}. Objects without `kind`/`metadata` are ignored.
 * `daemonSetsFromPods`: a DaemonSet the objects do not hold but whose pods they list (plain
 * `kubectl get pods -A`) counts too, its newest pod standing for its template (`plan`; a case or
 * cluster holds its DaemonSets, and a DaemonSet pod left without its DaemonSet runs nowhere new).
 * Never throws.
 */
export function readWorkloads(objects: readonly unknown[], opts: { daemonSetsFromPods?: boolean } = {}): Workloads {
  const out: Workloads = {
    pendingPods: [],
    notProvisionable: [],
    boundPods: [],
    daemonSets: [],
    daemonSetsFromPods: [],
    pdbs: [],
    nodes: [],
    storage: { claims: [], volumes: [], classes: [] },
    others: [],
  };
  const objs = objects.filter(isObject);
  const pods = objs.filter((o) => o.kind === 'Pod') as unknown as Pod[];
  const deploymentNames = new Set(objs.filter((o) => o.kind === 'Deployment').map((o) => `${o.metadata.namespace ?? 'default'}/${o.metadata.name}`));
  for (const o of objs) {
    if (o.kind === 'PersistentVolume') out.storage.volumes.push(o);
    if (o.kind === 'StorageClass') out.storage.classes.push(o);
    if (o.kind === 'PersistentVolumeClaim') out.storage.claims.push({ ...o, metadata: { ...o.metadata, namespace: o.metadata.namespace ?? 'default' } });
  }
  const hasStorageObjects = out.storage.claims.length + out.storage.volumes.length + out.storage.classes.length > 0;
  const daemonSetPods = newestDaemonSetPods(pods);
  for (const p of pods) {
    if (finished(p)) continue;
    p.metadata.namespace ??= 'default';
    if (p.spec.nodeName) out.boundPods.push(p);
    else if (isProvisionable(p, { assumeUnschedulable: true })) out.pendingPods.push(p);
    else out.notProvisionable.push(p);
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
      const hasPods = pods.some((p) => (p.metadata.namespace ?? 'default') === ns && matchesSelector(selector, p.metadata.labels) && ownedBy(p, o));
      if (!hasPods) {
        const expanded = expandWorkload(o);
        out.pendingPods.push(...expanded);
        if (hasStorageObjects) out.storage.claims.push(...plannedClaims(o, expanded, out.storage.claims));
      }
      out.others.push(o);
      continue;
    }
    if (o.kind === 'DaemonSet') {
      const t = (o.spec?.template ?? {}) as { metadata?: Partial<ObjectMeta>; spec?: PodSpec };
      // A pod the DaemonSet already runs says what it really asks for (admission may have changed
      // its resources): prefer its spec to the template's, as Karpenter's daemonset cache does.
      const ns = o.metadata.namespace ?? 'default';
      const own = daemonSetPods.get(`${ns}/${o.metadata.name}`);
      daemonSetPods.delete(`${ns}/${o.metadata.name}`);
      out.daemonSets.push({
        metadata: { name: o.metadata.name, namespace: ns, labels: t.metadata?.labels ?? {} },
        spec: own ? asTemplateSpec(own.spec) : (t.spec ?? { containers: [] }),
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
  if (opts.daemonSetsFromPods) {
    for (const [key, p] of daemonSetPods) {
      out.daemonSets.push({
        metadata: { name: key.slice(key.indexOf('/') + 1), namespace: p.metadata.namespace ?? 'default', labels: p.metadata.labels ?? {} },
        spec: asTemplateSpec(p.spec),
      });
      out.daemonSetsFromPods.push(key);
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Input checks: what `plan` (and case files) must reject before scheduling reads the objects.

/**
 * Largest replica count (parallelism for Jobs) a workload may expand to: plan simulates every
 * pod, so an absurd count (a typo, 100000000) would run for hours; Kubernetes' own scalability
 * limit is 150000 pods per cluster.
 */
export const MaxReplicas = 150_000;

/** Kinds whose `spec.template.spec` is a pod spec. */
const TemplateKinds = new Set([...ExpandedKinds, 'DaemonSet']);

function isMapping(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'string') return `text ${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v)}`;
  return `${typeof v} ${JSON.stringify(v)}`;
}

function quantityProblems(list: unknown, path: string): string[] {
  if (list === undefined || list === null) return [];
  if (!isMapping(list)) return [`${path}: must be a mapping of resource name to quantity, got ${describe(list)}`];
  const out: string[] = [];
  for (const [k, v] of Object.entries(list)) {
    if (typeof v !== 'string' && typeof v !== 'number') out.push(`${path}.${k}: must be a quantity such as 500m, 2 or 1Gi, got ${describe(v)}`);
    else {
      try {
        if (parseQuantity(v) < 0) out.push(`${path}.${k}: must not be negative, got ${JSON.stringify(v)}`);
      } catch {
        out.push(`${path}.${k}: ${JSON.stringify(v)} is not a Kubernetes quantity (e.g. 500m, 2, 1Gi)`);
      }
    }
  }
  return out;
}

/** Problems of a pod spec at `path` (`spec` or `spec.template.spec`). */
function podSpecProblems(spec: unknown, path: string): string[] {
  if (spec === undefined) return [`${path}: required (a pod spec with containers)`];
  if (!isMapping(spec)) return [`${path}: must be a mapping, got ${describe(spec)}`];
  const out: string[] = [];
  for (const field of ['containers', 'initContainers']) {
    const list = spec[field];
    if (list === undefined && field === 'initContainers') continue;
    if (!Array.isArray(list)) {
      out.push(`${path}.${field}: ${list === undefined ? 'required (a list of containers)' : `must be a list, got ${describe(list)}`}`);
      continue;
    }
    list.forEach((c, i) => {
      const at = `${path}.${field}[${i}]`;
      if (!isMapping(c)) return out.push(`${at}: must be a container (a mapping), got ${describe(c)}`);
      const res = c.resources;
      if (res === undefined) return;
      if (!isMapping(res)) return out.push(`${at}.resources: must be a mapping, got ${describe(res)}`);
      out.push(...quantityProblems(res.requests, `${at}.resources.requests`), ...quantityProblems(res.limits, `${at}.resources.limits`));
    });
  }
  out.push(...quantityProblems(spec.overhead, `${path}.overhead`));
  out.push(...nodeAffinityProblems(spec.affinity, `${path}.affinity.nodeAffinity`));
  out.push(...schedulingFieldProblems(spec, path));
  out.push(...podVolumeProblems(spec.volumes, `${path}.volumes`));
  return out;
}

/**
 * Problems the Kubernetes API server refuses in a pod's other scheduling fields (its pod
 * validation rules): nodeSelector values that are not strings; a topology spread constraint whose
 * maxSkew is not an integer ≥ 1, whose whenUnsatisfiable is not DoNotSchedule / ScheduleAnyway,
 * without a topologyKey, or with minDomains < 1 or set with ScheduleAnyway; a toleration whose
 * operator is not Exists / Equal, whose effect is not NoSchedule / PreferNoSchedule / NoExecute,
 * or with a value under Exists.
 */
function schedulingFieldProblems(spec: Record<string, unknown>, path: string): string[] {
  const out: string[] = [];
  const sel = spec.nodeSelector;
  if (sel !== undefined) {
    if (!isMapping(sel)) out.push(`${path}.nodeSelector: must be a mapping of label to value, got ${describe(sel)}`);
    else
      for (const [k, v] of Object.entries(sel))
        if (typeof v !== 'string') out.push(`${path}.nodeSelector.${k}: must be a string (quote it), got ${describe(v)}`);
  }
  const spreads = spec.topologySpreadConstraints;
  if (spreads !== undefined && !Array.isArray(spreads)) out.push(`${path}.topologySpreadConstraints: must be a list, got ${describe(spreads)}`);
  if (Array.isArray(spreads)) {
    spreads.forEach((c, i) => {
      const at = `${path}.topologySpreadConstraints[${i}]`;
      if (!isMapping(c)) return out.push(`${at}: must be a mapping, got ${describe(c)}`);
      if (typeof c.maxSkew !== 'number' || !Number.isInteger(c.maxSkew) || c.maxSkew < 1)
        out.push(`${at}.maxSkew: must be an integer ≥ 1, got ${describe(c.maxSkew)}`);
      if (typeof c.topologyKey !== 'string' || c.topologyKey === '') out.push(`${at}.topologyKey: required`);
      if (!SpreadWhenUnsatisfiable.includes(c.whenUnsatisfiable as string))
        out.push(`${at}.whenUnsatisfiable: ${describe(c.whenUnsatisfiable)} is not valid; expected one of ${SpreadWhenUnsatisfiable.join(', ')}`);
      if (c.minDomains !== undefined) {
        if (typeof c.minDomains !== 'number' || !Number.isInteger(c.minDomains) || c.minDomains < 1)
          out.push(`${at}.minDomains: must be an integer ≥ 1, got ${describe(c.minDomains)}`);
        else if (c.whenUnsatisfiable === 'ScheduleAnyway') out.push(`${at}.minDomains: may only be set with whenUnsatisfiable DoNotSchedule`);
      }
    });
  }
  const tolerations = spec.tolerations;
  if (tolerations !== undefined && !Array.isArray(tolerations)) out.push(`${path}.tolerations: must be a list, got ${describe(tolerations)}`);
  if (Array.isArray(tolerations)) {
    tolerations.forEach((t, i) => {
      const at = `${path}.tolerations[${i}]`;
      if (!isMapping(t)) return out.push(`${at}: must be a mapping, got ${describe(t)}`);
      if (t.operator !== undefined && !TolerationOperators.includes(t.operator as string))
        out.push(`${at}.operator: ${describe(t.operator)} is not valid; expected one of ${TolerationOperators.join(', ')}`);
      if (t.effect !== undefined && t.effect !== '' && !TaintEffects.includes(t.effect as string))
        out.push(`${at}.effect: ${describe(t.effect)} is not valid; expected one of ${TaintEffects.join(', ')}`);
      if (t.operator === 'Exists' && t.value !== undefined && t.value !== '') out.push(`${at}.value: must be empty when operator is Exists`);
    });
  }
  return out;
}

const SpreadWhenUnsatisfiable = ['DoNotSchedule', 'ScheduleAnyway'];
const TolerationOperators = ['Exists', 'Equal'];
const TaintEffects = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];

/** Operators of a pod's node selector terms (the Kubernetes API's NodeSelectorOperator). */
const NodeSelectorOperators = ['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt'];

/**
 * Problems of a pod's node affinity expressions (required and preferred terms): an operator the
 * Kubernetes API rejects, and Gt / Lt without exactly one integer value (the API server's rules).
 */
function nodeAffinityProblems(affinity: unknown, path: string): string[] {
  const na = isMapping(affinity) && isMapping(affinity.nodeAffinity) ? affinity.nodeAffinity : undefined;
  if (!na) return [];
  const required = isMapping(na.requiredDuringSchedulingIgnoredDuringExecution)
    ? na.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms
    : undefined;
  const terms: [unknown, string][] = [
    ...(Array.isArray(required)
      ? required.map((t, i): [unknown, string] => [t, `${path}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[${i}]`])
      : []),
    ...(Array.isArray(na.preferredDuringSchedulingIgnoredDuringExecution)
      ? na.preferredDuringSchedulingIgnoredDuringExecution.map((p, i): [unknown, string] => [
          isMapping(p) ? p.preference : undefined,
          `${path}.preferredDuringSchedulingIgnoredDuringExecution[${i}].preference`,
        ])
      : []),
  ];
  return terms.flatMap(([term, at]) => (isMapping(term) ? nodeSelectorTermProblems(term, at) : []));
}

/** Problems of one node selector term's expressions (operators and Gt / Lt values, as the API server checks them). */
function nodeSelectorTermProblems(term: Record<string, unknown>, at: string): string[] {
  const out: string[] = [];
  for (const field of ['matchExpressions', 'matchFields']) {
    const list = term[field];
    if (list === undefined) continue;
    if (!Array.isArray(list)) {
      out.push(`${at}.${field}: must be a list, got ${describe(list)}`);
      continue;
    }
    list.forEach((e, i) => {
      const where = `${at}.${field}[${i}]`;
      if (!isMapping(e)) return out.push(`${where}: must be a mapping with key, operator and values, got ${describe(e)}`);
      if (typeof e.key !== 'string' || e.key === '') return out.push(`${where}.key: required`);
      if (typeof e.operator !== 'string' || !NodeSelectorOperators.includes(e.operator)) {
        return out.push(
          `${where}.operator: unsupported operator ${typeof e.operator === 'string' ? JSON.stringify(e.operator) : describe(e.operator)}; valid operators are ${NodeSelectorOperators.join(', ')}`,
        );
      }
      const values = e.values;
      if (values !== undefined && !(Array.isArray(values) && values.every((v) => typeof v === 'string')))
        return out.push(`${where}.values: must be a list of strings, got ${describe(values)}`);
      if ((e.operator === 'Gt' || e.operator === 'Lt') && !(Array.isArray(values) && values.length === 1 && /^-?\d+$/.test(String(values[0])))) {
        out.push(`${where}.values: operator ${e.operator} needs exactly one integer value, got ${JSON.stringify(values) ?? 'none'}`);
      }
    });
  }
  return out;
}

/** StorageClass `volumeBindingMode` values (storage.k8s.io/v1 VolumeBindingMode). */
const VolumeBindingModes = ['Immediate', 'WaitForFirstConsumer'];

/**
 * Problems of a pod spec's `volumes` that the volume check reads (shared/scheduling/volumes.ts):
 * a volume without a name, a `persistentVolumeClaim` without `claimName`, an `ephemeral` volume
 * without a `volumeClaimTemplate.spec` (the API server's pod validation requires each).
 */
function podVolumeProblems(volumes: unknown, path: string): string[] {
  if (volumes === undefined || volumes === null) return [];
  if (!Array.isArray(volumes)) return [`${path}: must be a list, got ${describe(volumes)}`];
  const out: string[] = [];
  volumes.forEach((v, i) => {
    const at = `${path}[${i}]`;
    if (!isMapping(v)) return out.push(`${at}: must be a volume (a mapping), got ${describe(v)}`);
    if (typeof v.name !== 'string' || v.name === '') out.push(`${at}.name: required`);
    const pvc = v.persistentVolumeClaim;
    if (pvc !== undefined && !(isMapping(pvc) && typeof pvc.claimName === 'string' && pvc.claimName !== ''))
      out.push(`${at}.persistentVolumeClaim.claimName: required`);
    const eph = v.ephemeral;
    if (eph !== undefined && !(isMapping(eph) && isMapping(eph.volumeClaimTemplate) && isMapping(eph.volumeClaimTemplate.spec)))
      out.push(`${at}.ephemeral.volumeClaimTemplate.spec: required`);
  });
  return out;
}

/**
 * Problems of the storage objects the volume check reads, as the API server would refuse them:
 * a PersistentVolumeClaim whose `spec` is not a mapping or whose `volumeName` / `storageClassName`
 * is not text; a PersistentVolume without a `spec` or with node affinity terms that are not a list
 * of node selector terms; a StorageClass without `provisioner`, with an unknown `volumeBindingMode`,
 * or `allowedTopologies` terms whose expressions lack a key or values.
 */
function storageObjectProblems(kind: string, o: Record<string, unknown>): string[] {
  const out: string[] = [];
  if (kind === 'PersistentVolumeClaim') {
    const spec = o.spec;
    if (spec === undefined) return [];
    if (!isMapping(spec)) return [`spec: must be a mapping, got ${describe(spec)}`];
    if (spec.volumeName !== undefined && typeof spec.volumeName !== 'string') out.push(`spec.volumeName: must be text, got ${describe(spec.volumeName)}`);
    if (spec.storageClassName !== undefined && spec.storageClassName !== null && typeof spec.storageClassName !== 'string')
      out.push(`spec.storageClassName: must be text, got ${describe(spec.storageClassName)}`);
  } else if (kind === 'PersistentVolume') {
    const spec = o.spec;
    if (!isMapping(spec)) return [`spec: ${spec === undefined ? 'required' : `must be a mapping, got ${describe(spec)}`}`];
    const na = spec.nodeAffinity;
    if (na === undefined || na === null) return [];
    const required = isMapping(na) ? na.required : na;
    if (required === undefined || required === null) return [];
    const terms = isMapping(required) ? required.nodeSelectorTerms : undefined;
    if (!Array.isArray(terms)) return [`spec.nodeAffinity.required.nodeSelectorTerms: must be a list of node selector terms, got ${describe(terms)}`];
    terms.forEach((t, i) => {
      const at = `spec.nodeAffinity.required.nodeSelectorTerms[${i}]`;
      if (!isMapping(t)) out.push(`${at}: must be a mapping with matchExpressions, got ${describe(t)}`);
      else out.push(...nodeSelectorTermProblems(t, at));
    });
  } else if (kind === 'StorageClass') {
    if (typeof o.provisioner !== 'string' || o.provisioner === '') out.push('provisioner: required');
    const mode = o.volumeBindingMode;
    if (mode !== undefined && !VolumeBindingModes.includes(mode as string))
      out.push(`volumeBindingMode: ${describe(mode)} is not valid; expected one of ${VolumeBindingModes.join(', ')}`);
    const topologies = o.allowedTopologies;
    if (topologies === undefined || topologies === null) return out;
    if (!Array.isArray(topologies)) return [...out, `allowedTopologies: must be a list, got ${describe(topologies)}`];
    topologies.forEach((t, i) => {
      const at = `allowedTopologies[${i}].matchLabelExpressions`;
      const exprs = isMapping(t) ? t.matchLabelExpressions : undefined;
      if (!Array.isArray(exprs)) return out.push(`${at}: must be a list, got ${describe(exprs)}`);
      exprs.forEach((e, j) => {
        if (!isMapping(e) || typeof e.key !== 'string' || e.key === '') return out.push(`${at}[${j}].key: required`);
        if (!Array.isArray(e.values) || e.values.length === 0 || !e.values.every((v) => typeof v === 'string'))
          out.push(`${at}[${j}].values: ${e.values === undefined ? 'required' : `must be a non-empty list of strings, got ${describe(e.values)}`}`);
      });
    });
  }
  return out;
}

/**
 * Problems of the objects of a workloads file (`kubectl get pods,deployments,nodes -A -o yaml`),
 * each `<where>: <field path>: <reason>` with `<where>` = `Kind namespace/name` or `document N`:
 * not an object, no kind or name, a pod spec without containers, a quantity that does not parse
 * (requests, limits, overhead, node capacity / allocatable), a replica count that is not a whole
 * number, a pod volume or storage object the volume check cannot read ({@link storageObjectProblems}).
 * Objects of other kinds pass unchecked. Empty when scheduling can read everything.
 */
export function workloadInputProblems(objects: readonly { document: number; item?: number; object: unknown }[]): string[] {
  const out: string[] = [];
  for (const { document, item, object } of objects) {
    const doc = `document ${document}${item ? ` item ${item}` : ''}`;
    if (!isMapping(object)) {
      out.push(`${doc}: expected a Kubernetes object (a mapping with apiVersion, kind and metadata), got ${describe(object)}`);
      continue;
    }
    if (typeof object.kind !== 'string' || object.kind === '') {
      const hint = Array.isArray(object.items) ? ' (a list needs kind: List, as kubectl prints it)' : '';
      out.push(`${doc}: kind: required${hint}`);
      continue;
    }
    const meta = object.metadata;
    const name = isMapping(meta) && typeof meta.name === 'string' ? meta.name : undefined;
    if (!name) {
      out.push(`${doc}: ${object.kind}: metadata.name: required`);
      continue;
    }
    const ns = isMapping(meta) && typeof meta.namespace === 'string' ? meta.namespace : undefined;
    const where = `${object.kind} ${ns ? `${ns}/` : ''}${name}`;
    const problems: string[] = [];
    const spec = object.spec;
    if (object.kind === 'Pod') problems.push(...podSpecProblems(spec, 'spec'));
    else if (TemplateKinds.has(object.kind)) {
      const template = isMapping(spec) ? spec.template : undefined;
      problems.push(...podSpecProblems(isMapping(template) ? template.spec : undefined, 'spec.template.spec'));
      for (const f of ['replicas', 'parallelism']) {
        const v = isMapping(spec) ? spec[f] : undefined;
        if (v !== undefined && (typeof v !== 'number' || !Number.isInteger(v) || v < 0))
          problems.push(`spec.${f}: must be a whole number ≥ 0, got ${describe(v)}`);
        else if (typeof v === 'number' && v > MaxReplicas) problems.push(`spec.${f}: ${v} is more than the ${MaxReplicas} pods plan simulates per workload`);
      }
    } else if (object.kind === 'PersistentVolumeClaim' || object.kind === 'PersistentVolume' || object.kind === 'StorageClass') {
      problems.push(...storageObjectProblems(object.kind, object));
    } else if (object.kind === 'Node') {
      const status = isMapping(object.status) ? object.status : {};
      problems.push(...quantityProblems(status.capacity, 'status.capacity'), ...quantityProblems(status.allocatable, 'status.allocatable'));
    }
    for (const p of problems) out.push(`${where}: ${p}`);
  }
  return out;
}
