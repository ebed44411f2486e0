/**
 * The subset of Kubernetes v1 objects nodefleet reads, shaped exactly as
 * `kubectl get -o yaml` prints them (quantities are strings, times RFC 3339).
 * Only fields that matter to scheduling and disruption are typed; everything else passes through.
 */

export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: { apiVersion: string; kind: string; name: string; uid?: string; controller?: boolean }[];
  finalizers?: string[];
}

export interface Taint {
  key: string;
  value?: string;
  effect: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';
  timeAdded?: string;
}

export interface Toleration {
  key?: string;
  operator?: 'Exists' | 'Equal';
  value?: string;
  effect?: '' | 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';
  tolerationSeconds?: number;
}

export interface NodeSelectorRequirement {
  key: string;
  operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' | 'Gt' | 'Lt' | 'Gte' | 'Lte';
  values?: string[];
}

export interface NodeSelectorTerm {
  matchExpressions?: NodeSelectorRequirement[];
  matchFields?: NodeSelectorRequirement[];
}

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist'; values?: string[] }[];
}

export interface PodAffinityTerm {
  labelSelector?: LabelSelector;
  namespaces?: string[];
  namespaceSelector?: LabelSelector;
  topologyKey: string;
  matchLabelKeys?: string[];
  mismatchLabelKeys?: string[];
}

export interface Affinity {
  nodeAffinity?: {
    requiredDuringSchedulingIgnoredDuringExecution?: { nodeSelectorTerms: NodeSelectorTerm[] };
    preferredDuringSchedulingIgnoredDuringExecution?: { weight: number; preference: NodeSelectorTerm }[];
  };
  podAffinity?: {
    requiredDuringSchedulingIgnoredDuringExecution?: PodAffinityTerm[];
    preferredDuringSchedulingIgnoredDuringExecution?: { weight: number; podAffinityTerm: PodAffinityTerm }[];
  };
  podAntiAffinity?: {
    requiredDuringSchedulingIgnoredDuringExecution?: PodAffinityTerm[];
    preferredDuringSchedulingIgnoredDuringExecution?: { weight: number; podAffinityTerm: PodAffinityTerm }[];
  };
}

export interface TopologySpreadConstraint {
  maxSkew: number;
  topologyKey: string;
  whenUnsatisfiable: 'DoNotSchedule' | 'ScheduleAnyway';
  labelSelector?: LabelSelector;
  minDomains?: number;
  matchLabelKeys?: string[];
  nodeAffinityPolicy?: 'Honor' | 'Ignore';
  nodeTaintsPolicy?: 'Honor' | 'Ignore';
}

export interface ResourceRequirements {
  requests?: Record<string, string | number>;
  limits?: Record<string, string | number>;
}

export interface Container {
  name: string;
  image?: string;
  resources?: ResourceRequirements;
  ports?: { containerPort: number; hostPort?: number; protocol?: string; hostIP?: string }[];
  restartPolicy?: string; // "Always" marks a sidecar init container
  lifecycle?: { preStop?: unknown };
}

export interface Volume {
  name: string;
  persistentVolumeClaim?: { claimName: string };
  [k: string]: unknown;
}

export interface PodSpec {
  nodeName?: string;
  nodeSelector?: Record<string, string>;
  affinity?: Affinity;
  tolerations?: Toleration[];
  topologySpreadConstraints?: TopologySpreadConstraint[];
  containers: Container[];
  initContainers?: Container[];
  overhead?: Record<string, string | number>;
  priorityClassName?: string;
  priority?: number;
  preemptionPolicy?: string;
  schedulerName?: string;
  terminationGracePeriodSeconds?: number;
  volumes?: Volume[];
  hostNetwork?: boolean;
}

export interface PodCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
}

export interface Pod {
  apiVersion?: string;
  kind?: 'Pod';
  metadata: ObjectMeta;
  spec: PodSpec;
  status?: { phase?: string; conditions?: PodCondition[]; nominatedNodeName?: string; startTime?: string };
}

export interface NodeCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  lastTransitionTime?: string;
}

export interface Node {
  apiVersion?: string;
  kind?: 'Node';
  metadata: ObjectMeta;
  spec?: { providerID?: string; taints?: Taint[]; unschedulable?: boolean };
  status?: {
    capacity?: Record<string, string>;
    allocatable?: Record<string, string>;
    conditions?: NodeCondition[];
  };
}

export interface PodDisruptionBudget {
  apiVersion?: string;
  kind?: 'PodDisruptionBudget';
  metadata: ObjectMeta;
  spec: { minAvailable?: number | string; maxUnavailable?: number | string; selector?: LabelSelector; unhealthyPodEvictionPolicy?: string };
  status?: { currentHealthy?: number; desiredHealthy?: number; expectedPods?: number; disruptionsAllowed?: number };
}

/** Any Kubernetes object as read from YAML/JSON (apiVersion + kind + metadata). */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  spec?: any;
  status?: any;
  [k: string]: unknown;
}

/**
 * A cluster's PersistentVolumeClaims, PersistentVolumes and StorageClasses (`storage.k8s.io/v1`),
 * as the API returns them: what scheduling reads of storage (shared/scheduling/volumes.ts).
 */
export interface StorageObjects {
  claims: readonly KubeObject[];
  volumes: readonly KubeObject[];
  classes: readonly KubeObject[];
}

/** A VolumeAttachment (storage.k8s.io/v1): a volume attached to a node by its CSI driver. */
export interface VolumeAttachment {
  apiVersion?: string;
  kind?: 'VolumeAttachment';
  metadata: ObjectMeta;
  spec: { attacher: string; nodeName: string; source: { persistentVolumeName?: string } };
  status?: { attached?: boolean };
}

/** The PersistentVolumeClaim a pod volume uses: its own claim, or `<pod>-<volume>` for a generic ephemeral volume; undefined otherwise. */
export function volumeClaimName(pod: { metadata: ObjectMeta }, v: Volume): string | undefined {
  if (v.persistentVolumeClaim) return v.persistentVolumeClaim.claimName;
  return v.ephemeral ? `${pod.metadata.name}-${v.name}` : undefined;
}

/** Whether a pod mounts a PersistentVolumeClaim, directly or through a generic ephemeral volume (claim `<pod>-<volume>`). */
export function hasClaimVolumes(pod: { spec: { volumes?: Volume[] } }): boolean {
  return (pod.spec.volumes ?? []).some((v) => v.persistentVolumeClaim || v.ephemeral);
}

/** `namespace/name` of a namespaced object, `name` otherwise. */
export function objectKey(o: { metadata: ObjectMeta }): string {
  return o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : o.metadata.name;
}

/** Bound pods grouped by `spec.nodeName` (pods without one are left out). */
export function podsByNode(pods: readonly Pod[]): Map<string, Pod[]> {
  const out = new Map<string, Pod[]>();
  for (const p of pods) {
    const n = p.spec?.nodeName;
    if (!n) continue;
    const list = out.get(n);
    if (list) list.push(p);
    else out.set(n, [p]);
  }
  return out;
}

/**
 * A DaemonSet's pod: any owner reference of kind DaemonSet (apps/v1), controller or not (KC
 * pkg/utils/pod `IsOwnedByDaemonSet`). The one rule for the agent, scheduling and disruption.
 */
export function isDaemonSetPod(pod: { metadata: ObjectMeta }): boolean {
  return daemonSetOwnerName(pod) !== undefined;
}

/** The name of the DaemonSet owning the pod ({@link isDaemonSetPod}'s owner reference), or undefined. */
export function daemonSetOwnerName(pod: { metadata: ObjectMeta }): string | undefined {
  return pod.metadata.ownerReferences?.find((o) => o.kind === 'DaemonSet' && (o.apiVersion === undefined || o.apiVersion === 'apps/v1'))?.name;
}
