/**
 * Scheduling simulation: input and output shapes of {@link solve} (shared/scheduling/index.ts).
 *
 * Mirrors Karpenter's `Scheduler.Solve` (kubernetes-sigs/karpenter
 * pkg/controllers/provisioning/scheduling/scheduler.go): a snapshot goes in, plain data comes
 * out, nothing is launched. Units: resources in canonical units (shared/api/quantity.ts:
 * cpu millicores, memory bytes, pods count), prices in USD per hour.
 */
import type { Pod, PodSpec, ObjectMeta, StorageObjects, Taint } from '../api/kube.ts';
import type { NodePool } from '../api/nodepool.ts';
import type { Resources } from '../api/quantity.ts';
import type { Requirements } from '../api/requirements.ts';
import type { CapacityType } from '../api/labels.ts';
import type { InstanceType } from '../catalog/types.ts';
import type { SchedulingCache } from './cache.ts';

/**
 * A node that already exists, or an in-flight NodeClaim (launched or launching, no node yet).
 * Pods are placed on these before any new NodeClaim is considered.
 */
export interface ExistingNode {
  /** Node name (or NodeClaim name for a claim with no node yet); also its hostname domain. */
  name: string;
  /** Node labels (zone, instance type, capacity type, karpenter.sh/nodepool, …). */
  labels: Record<string, string>;
  /** Node taints. Startup taints of a launching claim must not be listed here. */
  taints?: Taint[];
  /** Allocatable in canonical units (cpu millicores, memory bytes, pods). */
  allocatable: Resources;
  /** Capacity in canonical units, counted against NodePool limits; defaults to `allocatable`. */
  capacity?: Resources;
  /** Pods already bound to (or nominated for) this node: they use its allocatable and count for topology. */
  pods?: Pod[];
  /** True for an in-flight NodeClaim that has no Node yet. */
  launching?: boolean;
  /** The NodePool managing it (label karpenter.sh/nodepool), undefined for unmanaged capacity. */
  nodePool?: string;
  /** Cordoned (`spec.unschedulable`) or being deleted: no new pods land here, it still counts for limits. */
  unschedulable?: boolean;
  /**
   * Pods (keys `namespace/name`) that may not land here, whatever else allows it. A consolidation
   * simulation lists the candidates' pods on a node still within its NodePool's consolidateAfter
   * (shared/disruption/simulate.ts); pending pods stay welcome.
   */
  refusedPods?: ReadonlySet<string>;
  /**
   * For an in-flight claim whose instance type is not decided yet: its requirements. When set,
   * labels not pinned by it are unknown, and pods are matched against the requirements.
   */
  requirements?: Requirements;
}

/** A DaemonSet's pod template, used to compute per-node overhead on new NodeClaims. */
export interface DaemonSetTemplate {
  metadata: ObjectMeta;
  spec: PodSpec;
}

/** An offering marked out of capacity (ICE cache): skipped when choosing offerings. */
export interface UnavailableOffering {
  instanceType: string;
  zone: string;
  capacityType: string;
}

/** Knobs (Karpenter settings / feature gates that change scheduling). */
export interface SchedulingSettings {
  /**
   * `Strict` (default): a NodePool whose minValues cannot be met schedules nothing.
   * `BestEffort`: minValues are relaxed to what is available (KC options.go `MinValuesPolicy`).
   */
  minValuesPolicy?: 'Strict' | 'BestEffort';
  /** `Respect` (default) treats preferences as required then relaxes them; `Ignore` skips them (KC `PREFERENCE_POLICY`). */
  preferencePolicy?: 'Respect' | 'Ignore';
  /** Max instance types kept on a NodeClaim (default 600, KC nodeclaimtemplate.go MaxInstanceTypes). */
  maxInstanceTypes?: number;
  /** Max instance types sent to one launch (default 60, KA instance.go maxInstanceTypes). */
  maxLaunchInstanceTypes?: number;
  /**
   * `cost` (default): a new NodeClaim stops taking pods once none of the pool's cheapest types
   * per vCPU or per GiB (template.ts `EfficientPriceMargin`) could hold it, so big batches go
   * to several efficient nodes rather than one node of a rare, dearer giant size; a claim
   * refuses a pod that would move it onto types selling its shape (cpu, memory, pods and
   * extended resources such as GPUs) dearer (more than 2 %) than the types it had, accelerator
   * claims included (two 1-GPU pods: two 1-GPU nodes rather than one 4-GPU node); and the queue interleaves memory-heavy and cpu-heavy pods so
   * claims match the ratio of the type that sells the whole batch cheapest (scheduler.ts
   * `balanceShapes`); last, a claim its pods fill under 90 % is split when several claims hold them
   * for less (scheduler.ts `splitClaims`).
   * `karpenter`: a claim grows until no instance type can hold more, as Karpenter does.
   */
  packing?: 'cost' | 'karpenter';
  /** Cost-aware packing margin (default template.ts `EfficientPriceMargin`, 0.1). */
  efficientPriceMargin?: number;
}

/** Everything the simulation needs: one consistent snapshot of the cluster. */
export interface SchedulingInput {
  /** Pending pods to place (no spec.nodeName). DaemonSet-owned pods are ignored. */
  pods: Pod[];
  /** Parsed NodePools (shared/api/nodepool.ts); tried by weight, highest first, then name. */
  nodePools: NodePool[];
  /**
   * The instance types a NodePool may use (built by the caller from the catalog and its
   * EC2NodeClass: allocatable depends on kubelet settings). Called once per NodePool.
   */
  instanceTypes: (nodePool: NodePool) => InstanceType[];
  /** Nodes and in-flight NodeClaims, filled first. */
  existingNodes?: ExistingNode[];
  /**
   * Running pods that count for topology spread and pod (anti-)affinity, matched to a node by
   * `spec.nodeName`. Pods in `existingNodes[].pods` count too (deduplicated by namespace/name).
   */
  boundPods?: Pod[];
  /** DaemonSet pod templates: each new node must also hold those that would run on it. */
  daemonSets?: DaemonSetTemplate[];
  /**
   * The cluster's PersistentVolumeClaims, PersistentVolumes and StorageClasses (all of them: a
   * claim missing here is a claim that does not exist). When given, each pending pod's volumes are
   * checked (shared/scheduling/volumes.ts): a pod whose claims cannot be used is unschedulable
   * with `invalid` set, and the others must land where their volumes' topology allows. When
   * absent, volumes are not read at all.
   */
  storage?: StorageObjects;
  /** ICE-cached offerings, not used for new NodeClaims. */
  unavailableOfferings?: UnavailableOffering[];
  /**
   * Why a NodePool launches nothing for a reason outside scheduling (its EC2NodeClass is not
   * ready: shared/api/nodeclass-support.ts `nodeClassNotReady`); undefined when it may launch.
   * The reason is the pool's in every unschedulable pod's reasons.
   */
  nodePoolNotReady?: (nodePool: NodePool) => string | undefined;
  settings?: SchedulingSettings;
  /**
   * Whether cost-aware packing may split a claim its pods fill poorly into two cheaper ones
   * (scheduler.ts `splitClaims`; default true). Disruption simulations turn it off: a consolidation
   * launches at most one replacement, which the unsplit claim is.
   */
  splitClaims?: boolean;
  /**
   * Reuse of per-NodePool templates between calls ({@link createSchedulingCache},
   * shared/scheduling/cache.ts): pass the same cache to every call over the same instance-type
   * arrays. Results are identical with or without it.
   */
  cache?: SchedulingCache;
}

/** A NodeClaim the provisioner should create. */
export interface NewNodeClaim {
  /** NodePool name. */
  nodePool: string;
  /** Simulated hostname (unique within one result), the hostname topology domain of the claim. */
  hostname: string;
  /**
   * The claim's requirements: NodePool requirements ∩ pod requirements ∩ template labels, plus
   * `node.kubernetes.io/instance-type In [launch set]`.
   */
  requirements: Requirements;
  /** Instance types that can hold everything on the claim, cheapest compatible offering first, ≤ 600. */
  instanceTypes: InstanceType[];
  /** The cheapest ≤ 60 of `instanceTypes` (minValues re-checked after the cut): what a launch sends. */
  launchInstanceTypes: InstanceType[];
  /** Sum of the pods' requests plus daemonset overhead (canonical units). */
  requests: Resources;
  /** The daemonset part of `requests` (canonical units). */
  daemonSetRequests: Resources;
  /** Pods placed on this claim. */
  pods: Pod[];
  /** Labels the node will carry: template labels, single-valued requirements, karpenter.sh/nodepool. */
  labels: Record<string, string>;
  taints: Taint[];
  startupTaints: Taint[];
  /** Capacity types the claim may launch with, in preference order (reserved, spot, on-demand). */
  capacityTypes: CapacityType[];
  /** Zones the claim may launch in, sorted. */
  zones: string[];
  /** Price of the cheapest compatible available offering of `launchInstanceTypes[0]`, USD/hour. */
  priceUsdPerHour: number;
}

/** A pod placed on an existing node or in-flight claim. */
export interface Placement {
  pod: Pod;
  /** ExistingNode.name. */
  node: string;
}

/** A pod that cannot run anywhere, with why for each NodePool. */
export interface UnschedulablePod {
  pod: Pod;
  /** NodePool name → message ("incompatible requirements, key X …", "exceeds limits", …). */
  reasons: Record<string, string>;
  /**
   * Set when the pod is not provisioned for at all, whatever the NodePools (its volumes cannot be
   * used yet: shared/scheduling/volumes.ts), naming the claim and why. Such a pod depends on
   * storage objects, not on the scheduling configuration, so it is not backed off as a shape.
   */
  invalid?: string;
}

/** A preference given up so that a pod could be placed (KC preferences.go `Relax`, logged there). */
export interface RelaxedPreference {
  /** Which, e.g. `preferred pod anti-affinity (topologyKey kubernetes.io/hostname, app=web)`. */
  preference: string;
  /** Why: where the pod could not go while the preference held, NodePool name → message (as {@link UnschedulablePod.reasons}). */
  reasons: Record<string, string>;
}

/** A placed pod (new claim or existing node) and the preferences it was placed without, in the order given up. */
export interface RelaxedPod {
  pod: Pod;
  relaxed: RelaxedPreference[];
}

/** The decision. Plain data: log it, store it, assert it. */
export interface SchedulingResult {
  newNodeClaims: NewNodeClaim[];
  placements: Placement[];
  unschedulable: UnschedulablePod[];
  /** Placed pods that had to give up a preference; absent or empty when none did. */
  relaxed?: RelaxedPod[];
}
