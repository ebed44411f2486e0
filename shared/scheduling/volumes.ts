/**
 * What a pending pod's persistent volumes say before any node is chosen: whether nodefleet may
 * provision for the pod at all, and which node topologies its volumes allow.
 *
 * The one home of the volume rules: `solve()` runs {@link checkPodVolumes} on every pending pod
 * when its input carries {@link StorageObjects} (the provisioner lists them, the case runner
 * and `plan` read them from their objects).
 *
 * Rules, in behaviour as Karpenter v1 (kubernetes-sigs/karpenter
 * pkg/controllers/provisioning/scheduling/volumetopology.go `ValidatePersistentVolumeClaims`
 * and `GetRequirements`, which follow kube-scheduler's volume binding plugin):
 * - a pod is not provisioned for when one of its claims does not exist, is being deleted or is
 *   Lost; when the claim names a volume that does not exist, is being deleted, or is not bound
 *   yet (no `pv.kubernetes.io/bind-completed` annotation); when an unbound claim has no storage
 *   class (or `""`), its class does not exist, or its class binds `Immediate` (the volume is
 *   provisioned before scheduling, so kube-scheduler waits for it, and so does nodefleet; an
 *   unset `volumeBindingMode` is `Immediate`, as the API server defaults it);
 * - a bound claim's volume allows the terms of its PersistentVolume's required node affinity
 *   (ORed; on a `local` or `hostPath` volume hostname expressions are dropped, a pod moving to a
 *   new node cannot keep them); an unbound claim allows its StorageClass's `allowedTopologies`
 *   terms (ORed, expressions within a term ANDed, every key, not only zones);
 * - a pod's alternatives are the cross product of its volumes' terms, keeping only the
 *   combinations whose requirements can hold together (all of them when none can, so the pod
 *   fails with the conflict as its reason).
 *
 * A generic ephemeral volume uses the claim `<pod>-<volume>`. Until the ephemeral-volume
 * controller has created it (Karpenter refuses the pod then and waits for the next batch),
 * nodefleet checks the claim it will create: unbound, with the template's storage class, or when
 * the template names none the cluster's default StorageClass (annotation
 * `storageclass.kubernetes.io/is-default-class: "true"`; the newest wins, then the first name,
 * as the API server's DefaultStorageClass admission picks it). A claim `plan` adds for an
 * expanded StatefulSet pod (annotation `nodefleet.io/planned-claim`, shared/api/workloads.ts) is
 * checked the same way: unbound, with its template's class or the default one.
 */
import { hasClaimVolumes, volumeClaimName, type KubeObject, type Pod, type StorageObjects, type Volume } from '../api/kube.ts';
import * as L from '../api/labels.ts';
import { Requirement, Requirements } from '../api/requirements.ts';
import { PlannedClaimAnnotation } from '../api/workloads.ts';

export type { StorageObjects };

/**
 * A pod's volumes: `invalid` (why no node may be launched for it: names the claim and the reason),
 * or the node requirement alternatives its volumes allow (ORed; empty = no volume topology) with
 * `constraints`, one phrase per claim that narrows them, naming the claim, where its topology
 * comes from and what it allows (for the pod's unschedulable reason).
 */
export type VolumeCheck = { invalid: string } | { alternatives: Requirements[]; constraints: string[] };

/** kube-controller-manager's mark on a claim whose binding to `spec.volumeName` is complete. */
export const BindCompletedAnnotation = 'pv.kubernetes.io/bind-completed';
/** The StorageClass annotations that make it the default (GA, then the beta one still honoured). */
export const DefaultStorageClassAnnotations = ['storageclass.kubernetes.io/is-default-class', 'storageclass.beta.kubernetes.io/is-default-class'];

/**
 * Label keys a volume's topology may use for a well-known label, mapped to it (Karpenter's
 * `NormalizedLabels`, plus the EBS CSI driver's zone key that its AWS provider adds).
 */
const NormalizedKeys: Record<string, string> = {
  'failure-domain.beta.kubernetes.io/zone': L.LabelTopologyZone,
  'topology.ebs.csi.aws.com/zone': L.LabelTopologyZone,
  'failure-domain.beta.kubernetes.io/region': 'topology.kubernetes.io/region',
  'beta.kubernetes.io/arch': 'kubernetes.io/arch',
  'beta.kubernetes.io/os': 'kubernetes.io/os',
  'beta.kubernetes.io/instance-type': 'node.kubernetes.io/instance-type',
};

interface Claim {
  name: string;
  deleting: boolean;
  lost: boolean;
  volumeName?: string;
  bindCompleted: boolean;
  storageClassName?: string;
  /** For a claim not created yet (generic ephemeral volume, StatefulSet template): who will create it and where its class came from. */
  planned?: { by: string; classFrom: string };
}

export { hasClaimVolumes };

/** Indexes of {@link StorageObjects}, built once per solve. */
class StorageIndex {
  readonly claims = new Map<string, KubeObject>();
  readonly volumes = new Map<string, KubeObject>();
  readonly classes = new Map<string, KubeObject>();
  readonly defaultClass: string | undefined;

  constructor(storage: StorageObjects) {
    for (const c of storage.claims) this.claims.set(`${c.metadata.namespace ?? 'default'}/${c.metadata.name}`, c);
    for (const v of storage.volumes) this.volumes.set(v.metadata.name, v);
    for (const c of storage.classes) this.classes.set(c.metadata.name, c);
    const defaults = storage.classes
      .filter((c) => DefaultStorageClassAnnotations.some((a) => c.metadata.annotations?.[a] === 'true'))
      .sort(
        (a, b) =>
          Date.parse(b.metadata.creationTimestamp ?? '') - Date.parse(a.metadata.creationTimestamp ?? '') || (a.metadata.name < b.metadata.name ? -1 : 1),
      );
    this.defaultClass = defaults[0]?.metadata.name;
  }
}

const indexes = new WeakMap<StorageObjects, StorageIndex>();
function indexOf(storage: StorageObjects): StorageIndex {
  let i = indexes.get(storage);
  if (!i) indexes.set(storage, (i = new StorageIndex(storage)));
  return i;
}

/** The claim a pod volume uses, as found or (ephemeral, not created yet) as it will be created; undefined for other volume kinds. */
function claimOf(pod: Pod, v: Volume, idx: StorageIndex): Claim | { missing: string } | undefined {
  const ns = pod.metadata.namespace ?? 'default';
  const ephemeral = v.ephemeral as { volumeClaimTemplate?: { spec?: { storageClassName?: string | null } } } | undefined;
  const name = volumeClaimName(pod, v);
  if (name === undefined) return undefined;
  const o = idx.claims.get(`${ns}/${name}`);
  if (!o) {
    if (!ephemeral) return { missing: `persistentvolumeclaim "${ns}/${name}" does not exist` };
    const { storageClassName, classFrom } = plannedClass(ephemeral.volumeClaimTemplate?.spec?.storageClassName, 'its ephemeral volume template', idx);
    return { name: `${ns}/${name}`, deleting: false, lost: false, bindCompleted: false, storageClassName, planned: { by: 'its ephemeral volume', classFrom } };
  }
  const plannedBy = o.metadata.annotations?.[PlannedClaimAnnotation];
  if (plannedBy !== undefined) {
    const { storageClassName, classFrom } = plannedClass(o.spec?.storageClassName, 'the template', idx);
    return { name: `${ns}/${name}`, deleting: false, lost: false, bindCompleted: false, storageClassName, planned: { by: plannedBy, classFrom } };
  }
  return {
    name: `${ns}/${name}`,
    deleting: !!o.metadata.deletionTimestamp,
    lost: o.status?.phase === 'Lost',
    volumeName: o.spec?.volumeName || undefined,
    bindCompleted: o.metadata.annotations?.[BindCompletedAnnotation] !== undefined,
    storageClassName: o.spec?.storageClassName ?? undefined,
  };
}

/** A new claim's class: its template's, else (unset, as admission does) the default StorageClass. */
function plannedClass(fromTemplate: string | null | undefined, template: string, idx: StorageIndex): { storageClassName?: string; classFrom: string } {
  if (fromTemplate !== undefined && fromTemplate !== null) return { storageClassName: fromTemplate || undefined, classFrom: template };
  return idx.defaultClass
    ? { storageClassName: idx.defaultClass, classFrom: 'the default storage class' }
    : { classFrom: 'none: its template names none and the cluster has no default' };
}

/** Why no node may be launched for a pod using this claim, or undefined (KC `ValidatePersistentVolumeClaims`). */
function claimProblem(c: Claim, idx: StorageIndex): string | undefined {
  const pvc = `persistentvolumeclaim "${c.name}"`;
  if (c.deleting) return `${pvc} is being deleted`;
  if (c.lost) return `${pvc} is Lost: its persistentvolume${c.volumeName ? ` "${c.volumeName}"` : ''} no longer exists`;
  if (c.volumeName) {
    const pv = idx.volumes.get(c.volumeName);
    if (!pv) return `${pvc} names persistentvolume "${c.volumeName}", which does not exist`;
    if (pv.metadata.deletionTimestamp) return `persistentvolume "${c.volumeName}" of ${pvc} is being deleted`;
    if (!c.bindCompleted) return `${pvc} names persistentvolume "${c.volumeName}" but is not bound yet (no ${BindCompletedAnnotation} annotation)`;
    return undefined;
  }
  const via = c.planned ? ` (not created yet: ${c.planned.by} will create it; class from ${c.planned.classFrom})` : '';
  if (!c.storageClassName) return `${pvc}${via} is unbound and names no storage class, so no volume can be provisioned for it`;
  const sc = idx.classes.get(c.storageClassName);
  if (!sc) return `storageclass "${c.storageClassName}" of unbound ${pvc}${via} does not exist`;
  // The API server defaults an unset volumeBindingMode to Immediate (storage.k8s.io/v1 StorageClass):
  // a class written without one binds Immediate once applied.
  if ((sc.volumeBindingMode ?? 'Immediate') === 'Immediate') {
    const unset = sc.volumeBindingMode === undefined ? ' (volumeBindingMode unset: the API default)' : '';
    return `${pvc}${via} is unbound and its storageclass "${c.storageClassName}" binds Immediate${unset}: the volume must be bound before the pod is scheduled`;
  }
  return undefined;
}

function normalised(e: { key: string; operator: string; values?: string[] }): { key: string; operator: string; values?: string[] } {
  const key = NormalizedKeys[e.key];
  return key ? { ...e, key } : e;
}

/** The topology alternatives of one claim (ORed), empty when its volume may be anywhere (KC `getRequirements`). */
function claimAlternatives(c: Claim, idx: StorageIndex): Requirements[] {
  const out: Requirements[] = [];
  if (c.volumeName) {
    const pv = idx.volumes.get(c.volumeName)!;
    const local = !!(pv.spec?.local || pv.spec?.hostPath);
    const terms = (pv.spec?.nodeAffinity?.required?.nodeSelectorTerms ?? []) as { matchExpressions?: { key: string; operator: string; values?: string[] }[] }[];
    for (const t of terms) {
      const all = t.matchExpressions ?? [];
      // A local or hostPath volume pinned to its old host: the pod gets a new node anyway, so the
      // hostname is not a constraint, and a term of hostnames only allows any node.
      const exprs = local ? all.filter((e) => e.key !== L.LabelHostname) : all;
      if (all.length > 0 && exprs.length === 0) out.push(new Requirements());
      else if (exprs.length > 0) out.push(Requirements.fromSpecs(exprs.map(normalised) as Parameters<typeof Requirements.fromSpecs>[0]));
    }
    return out;
  }
  const sc = c.storageClassName ? idx.classes.get(c.storageClassName) : undefined;
  for (const t of (sc?.allowedTopologies ?? []) as { matchLabelExpressions?: { key: string; values?: string[] }[] }[]) {
    const exprs = t.matchLabelExpressions ?? [];
    if (exprs.length > 0)
      out.push(
        new Requirements(
          exprs.map((e) => Requirement.from(normalised({ key: e.key, operator: 'In', values: e.values ?? [] }) as Parameters<typeof Requirement.from>[0])),
        ),
      );
  }
  return out;
}

/** Whether two alternatives can hold together: every key both constrain has a value both allow. */
function compatible(a: Requirements, b: Requirements): boolean {
  for (const r of b.all()) {
    const mine = a.get(r.key);
    if (mine && mine.intersect(r).isEmpty()) return false;
  }
  return true;
}

/**
 * Checks a pending pod's volumes against the storage objects.
 * @returns `{ invalid }` naming the claim and why (the pod is not provisioned for), or its
 *   topology alternatives (empty when its volumes do not constrain the node).
 */
export function checkPodVolumes(pod: Pod, storage: StorageObjects): VolumeCheck {
  const idx = indexOf(storage);
  let alternatives: Requirements[] = [];
  const constraints: string[] = [];
  for (const v of pod.spec.volumes ?? []) {
    const c = claimOf(pod, v, idx);
    if (!c) continue;
    if ('missing' in c) return { invalid: c.missing };
    const problem = claimProblem(c, idx);
    if (problem) return { invalid: problem };
    let mine: Requirements[];
    try {
      mine = claimAlternatives(c, idx);
    } catch (err) {
      // The API server admits only valid operators; a hand-written file may not.
      return { invalid: `persistentvolumeclaim "${c.name}": its volume's topology cannot be read: ${(err as Error).message}` };
    }
    if (mine.length === 0) continue;
    const from = c.volumeName ? `its persistentvolume "${c.volumeName}" allows` : `its storageclass "${c.storageClassName}" allows`;
    constraints.push(`persistentvolumeclaim "${c.name}": ${from} ${mine.map((m) => (m.all().length > 0 ? m.toString() : 'any node')).join(' or ')}`);
    if (alternatives.length === 0) {
      alternatives = mine;
      continue;
    }
    const pairs = alternatives.flatMap((a) => mine.map((b) => [a, b] as const));
    const kept = pairs.filter(([a, b]) => compatible(a, b));
    alternatives = (kept.length > 0 ? kept : pairs).map(([a, b]) => a.intersect(b));
  }
  return { alternatives, constraints };
}
