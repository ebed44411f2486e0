/**
 * Ports: the small interfaces the functions need from the outside world. Adapters in
 * shared/aws and shared/kube implement them against AWS / Kubernetes; infra/local and the test
 * fakes implement the same interfaces. Each method documents the typed errors it throws.
 */
import type { KubeNodeClaim, NodeClaim } from './nodeclaim.ts';
import type { Node, Pod, PodDisruptionBudget, KubeObject, Taint } from './kube.ts';
import type { NodePool, EC2NodeClass } from './nodepool.ts';
import type { LaunchFailure } from './errors.ts';

/** NodeClaim storage (DynamoDB). Every write is conditional on `version`. */
export interface NodeClaimStore {
  /**
   * Creates a claim; throws ConflictError if the name exists. Before the claim it records the
   * claims epoch as the claim's `createdAt` when none is recorded yet (see {@link claimsEpochMs}), so
   * every claim — and every instance launched for one — is at or after the epoch.
   */
  create(claim: NodeClaim): Promise<NodeClaim>;
  /**
   * When this table began keeping the cluster's claims (epoch ms): the recorded epoch, or `nowMs`
   * recorded as the epoch when there is none yet (a new, replaced or emptied table). The record is a
   * conditional write: the first writer wins and every caller gets the recorded value. gc's orphan
   * rule trusts "no claim owns this instance" only for instances launched after it
   * (shared/disruption/gc.ts `tableEpochMs`). Throws TransientError (throttled).
   */
  claimsEpochMs(nowMs: number): Promise<number>;
  /** undefined when absent. */
  get(name: string): Promise<NodeClaim | undefined>;
  list(): Promise<NodeClaim[]>;
  /**
   * The claims that may still hold capacity the cluster picture does not show, or nominate pending
   * pods: phase Pending, Launched or Registered, and Initialized ones whose Initialized condition
   * turned True at or after `initializedSinceMs` (epoch ms; also when that time is unknown).
   * Read consistently, as `list` (a claim the previous provisioning pass created is never missed).
   */
  listInFlight(initializedSinceMs: number): Promise<NodeClaim[]>;
  /** Finds by EC2 instance id (GSI). */
  getByInstanceId(instanceId: string): Promise<NodeClaim | undefined>;
  /** Writes `claim` if the stored version equals `claim.version`; returns it with version + 1. Throws ConflictError otherwise. */
  update(claim: NodeClaim): Promise<NodeClaim>;
  /** Deletes; absent counts as success. */
  delete(name: string): Promise<void>;
}

/** Instance types per CreateFleet request, cheapest first (KA instance.go `maxInstanceTypes`). */
export const MaxLaunchInstanceTypes = 60;

/**
 * How long an offering stays unavailable after an insufficient-capacity error or an interruption:
 * 3 minutes (KA pkg/cache/cache.go `UnavailableOfferingsTTL`).
 */
export const UnavailableOfferingsTtlSeconds = 180;

/** The unavailable-offerings cache (ICE): entries of {@link UnavailableOfferingsTtlSeconds}. */
export interface UnavailableOfferings {
  /** Marks (type, zone, capacity type) unavailable until `untilEpochSeconds`. */
  mark(entries: { instanceType: string; zone: string; capacityType: string; reason: string }[], untilEpochSeconds: number): Promise<void>;
  /** Entries not yet expired at `nowEpochSeconds`. */
  list(nowEpochSeconds: number): Promise<{ instanceType: string; zone: string; capacityType: string }[]>;
}

/** Disruption budget counters: one conditional update takes a slot. */
export interface BudgetCounter {
  /** Takes a slot for `holder` if in-flight < allowed; false when none is free. Idempotent per holder. */
  take(nodePool: string, holder: string, allowed: number, nowIso: string): Promise<boolean>;
  /** Releases `holder`'s slot; absent counts as success. */
  release(nodePool: string, holder: string): Promise<void>;
  /**
   * Renews `holder`'s lease on its slot (its time := `nowIso`) if it still holds one; false when it
   * does not (gc reclaimed an expired lease: shared/disruption/gc.ts DisruptionLeaseSeconds).
   */
  renew(nodePool: string, holder: string, nowIso: string): Promise<boolean>;
  /** Current holders (holder → RFC 3339 time taken or last renewed), for gc reclaiming crashed runs' slots. */
  holders(nodePool: string): Promise<Record<string, string>>;
}

/** A launched (or failed) instance, as CloudProvider.create returns it. */
export interface LaunchResult {
  instanceId: string;
  instanceType: string;
  zone: string;
  /** The zone's id (topology.k8s.aws/zone-id), from the subnet launched into, when known. */
  zoneId?: string;
  capacityType: 'reserved' | 'spot' | 'on-demand';
  /** For `reserved`: the reservation the instance was launched into. */
  capacityReservation?: { id: string; type: 'default' | 'capacity-block'; interruptible: boolean };
  imageId?: string;
  priceUsdPerHour?: number;
  /** Pools EC2 refused for capacity while launching this instance (CreateFleet `Errors[]`): mark them unavailable. */
  unavailableOfferings?: { instanceType: string; zone: string; capacityType: string }[];
  /** Every CreateFleet error entry of the launch, as Karpenter counts launch failures. */
  launchFailures?: LaunchFailure[];
}

/** An EC2 instance nodefleet may own. */
export interface CloudInstance {
  instanceId: string;
  instanceType: string;
  zone: string;
  capacityType: 'reserved' | 'spot' | 'on-demand';
  state: 'pending' | 'running' | 'shutting-down' | 'terminated' | 'stopping' | 'stopped';
  /** RFC 3339. */
  launchTime: string;
  tags: Record<string, string>;
  /** EC2 `PrivateDnsName` (the name EKS authenticates the node's kubelet as); absent until EC2 assigns one. */
  privateDnsName?: string;
  /** EC2 `SubnetId` (subnet drift); absent when EC2 gave none. */
  subnetId?: string;
  /** EC2 `SecurityGroups[].GroupId` (security-group drift); absent when EC2 gave none. */
  securityGroupIds?: string[];
}

/** EC2. */
export interface CloudProvider {
  /**
   * Launches one instance for the claim (CreateFleet instant).
   * @throws InsufficientCapacityError when every offering in the launch set failed for capacity
   *   (its `offerings` lists what to mark unavailable).
   * @throws TransientError on throttling.
   */
  create(
    claim: NodeClaim,
    launch: {
      instanceTypes: string[];
      zones: string[];
      capacityTypes: string[];
      /** When given, only these (type, zone) pairs are launched: an offering marked unavailable (ICE) is never retried while its zone is still open for other types. */
      offerings?: { instanceType: string; zone: string }[];
      /** Each type's pod capacity: its node's kubelet maxPods when the EC2NodeClass sets none (shared/aws/ec2.ts LaunchSpec). */
      maxPods?: Record<string, number>;
      /** Each type's EFA devices (its `vpc.amazonaws.com/efa` capacity): its interfaces when the claim requests EFA (shared/aws/ec2.ts LaunchSpec). */
      efaCount?: Record<string, number>;
      /** Capacity type `reserved`: the reservation the launch targets (shared/aws/ec2.ts LaunchSpec). */
      capacityReservation?: { id: string; type: 'default' | 'capacity-block'; interruptible: boolean };
    },
    nodeClass?: EC2NodeClass,
  ): Promise<LaunchResult>;
  /** Terminates; an instance already gone counts as success. */
  terminate(instanceId: string): Promise<void>;
  /** undefined when the instance does not exist (or is long gone). */
  get(instanceId: string): Promise<CloudInstance | undefined>;
  /** Instances tagged with this cluster (any state but terminated). */
  list(): Promise<CloudInstance[]>;
  /**
   * Deletes this cluster's launch templates that none of `instances` uses and that are at least
   * `minAgeSeconds` old (default: the provider's); returns their names. Optional: providers without
   * launch templates do not implement it.
   */
  collectLaunchTemplates?(instances: readonly CloudInstance[], nowMs: number, minAgeSeconds?: number): Promise<string[]>;
}

/** Kubernetes API operations the functions use. */
export interface KubeApi {
  listNodePools(): Promise<NodePool[]>;
  /**
   * Every NodePool object of nodefleet's NodePool groups, whatever its spec or controller (one
   * listNodePools skips as invalid or another controller's is here too), and whether it is being
   * deleted; undefined when no NodePool CRD is installed (then nothing is known of a deletion).
   */
  listNodePoolNames(): Promise<{ name: string; deleting: boolean }[] | undefined>;
  listNodeClasses(): Promise<EC2NodeClass[]>;
  listNodes(): Promise<Node[]>;
  getNode(name: string): Promise<Node | undefined>;
  /**
   * All pods, those on one node (`nodeName`), or only those bound to no node (`unbound`: field
   * selector `spec.nodeName=`, what kube-scheduler watches; bytes grow with pending pods only).
   */
  listPods(opts?: { nodeName?: string; unbound?: boolean }): Promise<Pod[]>;
  listPodDisruptionBudgets(): Promise<PodDisruptionBudget[]>;
  /** DaemonSets, ReplicaSets etc. when needed (raw objects). */
  listObjects(apiVersion: string, kind: string): Promise<KubeObject[]>;
  /** Strategic/merge patch of labels, annotations, taints, unschedulable. Throws NotFoundError. */
  patchNode(
    name: string,
    patch: { labels?: Record<string, string | null>; annotations?: Record<string, string | null>; taints?: Taint[]; unschedulable?: boolean },
  ): Promise<Node>;
  /**
   * Deletes a node; absent counts as success. A node with finalizers stays, with a
   * deletionTimestamp, until they are removed.
   */
  deleteNode(name: string): Promise<void>;
  /**
   * Adds (`present`) or removes a finalizer on a node, conditional on its resourceVersion (re-read
   * and retried on a conflict). Returns the node as written, or undefined when it is gone (a node
   * being deleted whose last finalizer this removes is gone too).
   */
  setNodeFinalizer(name: string, finalizer: string, present: boolean): Promise<Node | undefined>;
  /**
   * Evicts a pod through policy/v1 Eviction.
   * @returns 'evicted', 'blocked' (429: a PodDisruptionBudget forbids it now) or 'gone' (404).
   */
  evictPod(namespace: string, name: string): Promise<'evicted' | 'blocked' | 'gone'>;
  /** Deletes a pod (grace period seconds optional); absent counts as success. */
  deletePod(namespace: string, name: string, gracePeriodSeconds?: number): Promise<void>;
  /** The karpenter.sh/v1 NodeClaim objects in the cluster (nodefleet's mirrors and, beside it, Karpenter's). */
  listNodeClaimObjects(): Promise<KubeNodeClaim[]>;
  /** One karpenter.sh/v1 NodeClaim object, read live; undefined when it (or the CRD) does not exist. */
  getNodeClaimObject(name: string): Promise<KubeNodeClaim | undefined>;
  /** Creates or updates a NodeClaim object (metadata and spec), then its status subresource. */
  putNodeClaimObject(o: KubeNodeClaim): Promise<void>;
  /** Takes Karpenter's termination finalizer off the object, then deletes it; absent counts as success. */
  deleteNodeClaimObject(o: KubeNodeClaim): Promise<void>;
}

/**
 * Where the cluster view lives (shared/api/cluster-view.ts): one object per cluster, gzip JSON.
 * The agent writes it; provisioning and disruption read it.
 */
export interface ClusterViewStore {
  /** Replaces the object. @throws TransientError when throttled or unreachable. */
  put(body: Uint8Array): Promise<void>;
  /**
   * The object and its ETag; `'unchanged'` when its ETag is still `etag` (conditional GET, nothing
   * transferred); undefined when there is none. @throws TransientError when throttled or unreachable;
   * ClusterViewTooLargeError (shared/api/cluster-view.ts) when the object is larger than
   * MaxViewGzipBytes (refused before it is read).
   */
  get(etag?: string): Promise<{ body: Uint8Array; etag: string } | 'unchanged' | undefined>;
}

/** Starts the termination state machine (one execution per NodeClaim and attempt). */
export interface TerminationStarter {
  /** Starts or finds the execution named after the claim and `input.attempt`; returns its ARN. Already exists = success. */
  start(input: TerminationInput): Promise<string>;
}

/** Input of statemachines/termination.asl.json. */
export interface TerminationInput {
  nodeClaim: string;
  nodeName?: string;
  instanceId?: string;
  reason: 'consolidation' | 'drift' | 'expiration' | 'interruption' | 'emptiness' | 'manual' | 'gc' | 'unhealthy' | 'overprovisioned';
  /** Epoch ms: after it, whatever is left is deleted and the instance terminated. Absent = wait forever. */
  deadlineEpochMs?: number;
  /** NodePool whose budget slot to release at the end, if one was taken. */
  budgetNodePool?: string;
  /** Which execution of this claim's termination this is (1 when absent); names it (shared/api/termination.ts). */
  attempt?: number;
}

/** Publishes events on the bus (EventBridge PutEvents). */
export interface EventPublisher {
  /** Publishes; returns entries that failed after retries (empty on success). */
  publish(entries: { source: string; detailType: string; detail: unknown; resources?: string[] }[]): Promise<{ failed: number }>;
}

/** Time, injected so handlers are testable and the embedded environment can compress it. */
export interface Clock {
  now(): Date;
}
