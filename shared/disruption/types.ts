/**
 * Disruption: input and output shapes of {@link planDisruption} (shared/disruption/plan.ts).
 *
 * Mirrors Karpenter's disruption controller (kubernetes-sigs/karpenter pkg/controllers/disruption):
 * a cluster snapshot and `now` go in, a plain-data {@link DisruptionPlan} comes out (JSON-safe, so
 * it can be logged, stored, passed to Step Functions and asserted). Nothing is launched or deleted
 * here. Units: prices in USD per hour, times RFC 3339 strings, resources as Kubernetes quantities.
 */
import type { Node, Pod, PodDisruptionBudget, StorageObjects } from '../api/kube.ts';
import type { StaticCapacityPlan } from './static-capacity.ts';
import type { NodePool, EC2NodeClass } from '../api/nodepool.ts';
import type { NodeClaim } from '../api/nodeclaim.ts';
import type { RequirementSpec } from '../api/requirements.ts';
import type { Taint } from '../api/kube.ts';
import type { CapacityType } from '../api/labels.ts';
import type { InstanceType } from '../catalog/types.ts';
import type { DaemonSetTemplate, UnavailableOffering, SchedulingSettings } from '../scheduling/index.ts';

/**
 * Karpenter's disruption reasons (KC pkg/apis/v1 `DisruptionReason`), plus two nodefleet
 * extensions: Expired (graceful expiration) and Rebalance (replacement on an EC2 rebalance
 * recommendation). The extensions are governed by the budgets that list no reasons.
 */
export type DisruptionReason = 'Empty' | 'Drifted' | 'Underutilized' | 'Expired' | 'Rebalance';

/** The graceful methods, in the order {@link Methods} runs them (shared/disruption/methods.ts). */
/**
 * Karpenter's disruption classes (KC pkg/controllers/disruption/types.go): graceful methods never
 * pass a pod's do-not-disrupt or a blocking PDB; eventual ones (drift) do when the NodeClaim has a
 * terminationGracePeriod, since its drain then ends at that deadline.
 */
export type DisruptionClass = 'graceful' | 'eventual';

export type MethodName =
  'rebalance' | 'emptiness' | 'static-drift' | 'graceful-expiration' | 'drift' | 'multi-node-consolidation' | 'single-node-consolidation';

/** Why a node is drifted (KC `nodeclaim/disruption/drift.go`, KA `cloudprovider/drift.go`). */
export type DriftReason =
  'NodePoolDrifted' | 'RequirementsDrifted' | 'InstanceTypeNotFound' | 'NodeClassDrift' | 'AMIDrift' | 'SubnetDrift' | 'SecurityGroupDrift';

/** Where an instance sits in the VPC, as EC2 lists it (DescribeInstances). */
export interface InstanceNetwork {
  subnetId?: string;
  securityGroupIds?: string[];
}

/** Knobs (Karpenter settings / feature gates that change disruption). */
export interface DisruptionSettings {
  /**
   * Spot-to-spot consolidation (Karpenter gate `SpotToSpotConsolidation`, shared/api/settings.ts):
   * off by default, as Karpenter; when on, with the 15-cheaper-types rule for single nodes.
   */
  spotToSpotConsolidation?: boolean;
  /** The StaticCapacity gate (off by default, as Karpenter): static NodePools are kept at spec.replicas (static-capacity.ts). */
  staticCapacity?: boolean;
  /** Max candidates the multi-node binary search looks at (Karpenter: 100). */
  multiNodeMaxCandidates?: number;
  /** Upper bound on scheduling simulations in one plan (time guard, replaces Karpenter's timeouts). */
  maxSimulations?: number;
  /** Passed to the scheduling simulation. */
  scheduling?: SchedulingSettings;
}

/**
 * One consistent snapshot of the cluster, as the handler reads it from Kubernetes, the NodeClaim
 * store, the budget counters and the catalog.
 */
export interface DisruptionSnapshot {
  /** Parsed NodePools (defaults applied). */
  nodePools: NodePool[];
  nodeClasses?: EC2NodeClass[];
  /** Every Node in the cluster, as the live API lists it (destinations for moved pods). */
  nodes: Node[];
  /**
   * NodeClaims from the store. Only a Node of one of them (same providerID, same node name) is a
   * candidate or counts in a budget; its NodePool, instance, creation and expiry are the claim's.
   */
  nodeClaims?: NodeClaim[];
  /** Every pod: bound ones (spec.nodeName) are what disruption moves; pending ones are ignored. */
  pods: Pod[];
  pdbs?: PodDisruptionBudget[];
  /** The instance types a NodePool may launch (same function the provisioner gives `solve`). */
  instanceTypes: (nodePool: NodePool) => InstanceType[];
  /** Every known instance type (prices of running nodes, InstanceTypeNotFound drift). Default: union of `instanceTypes`. */
  catalog?: InstanceType[];
  daemonSets?: DaemonSetTemplate[];
  unavailableOfferings?: UnavailableOffering[];
  /**
   * The cluster's claims, volumes and storage classes (when some pod mounts a claim): the
   * simulations keep moved pods where their volumes allow, and a pod whose claim cannot be used
   * finds no place, so its node is not consolidated (shared/scheduling/volumes.ts).
   */
  storage?: StorageObjects;
  /**
   * Current NodePool template hash per NodePool name (shared/api/hash.ts `nodePoolHash`);
   * a claim whose `nodePoolHash` differs is drifted (NodePoolDrifted). Absent = not compared.
   */
  nodePoolHashes?: Record<string, string>;
  /** Current EC2NodeClass hash per node class name (NodeClassDrift). Absent = not compared. */
  nodeClassHashes?: Record<string, string>;
  /**
   * AMI ids each EC2NodeClass resolves to now (per node class name), e.g. the current AL2023
   * image of an `al2023@latest` alias; a claim launched from another image is drifted (AMIDrift).
   * Absent = falls back to the node class's `status.amis`.
   */
  resolvedImageIds?: Record<string, string[]>;
  /**
   * Subnet ids and security group ids each EC2NodeClass resolves to now (per node class name): an
   * instance outside the subnets, or whose security groups are not exactly these, is drifted
   * (SubnetDrift, SecurityGroupDrift). Absent or empty for a class = not compared.
   */
  resolvedNetworks?: Record<string, { subnetIds: string[]; securityGroupIds: string[] }>;
  /** The subnet and security groups of each instance as EC2 lists it now, by instance id. Absent = not compared. */
  instanceNetworks?: Record<string, InstanceNetwork>;
  /**
   * EC2NodeClass name → why its selector terms resolve to nothing launchable now (no subnet,
   * security group or image; or the resolution failed): its NodePools launch no replacement.
   */
  nodeClassProblems?: Record<string, string>;
  /** Budget counter holders per NodePool (claim or node names being disrupted by nodefleet now). */
  budgetHolders?: Record<string, string[]>;
  settings?: DisruptionSettings;
}

/** A node the plan could disrupt, with the facts every method needs. */
export interface Candidate {
  nodeName: string;
  /** NodeClaim name when the store knows one, else the node name. */
  nodeClaim: string;
  nodePool: string;
  instanceType: string;
  zone: string;
  capacityType: CapacityType;
  /** Current price of the node's offering, USD/hour; undefined when unknown (then it is never consolidated). */
  priceUsdPerHour?: number;
  instanceId?: string;
  providerID?: string;
  /** Pods a drain would evict and the simulation must re-place (not DaemonSet, mirror, terminal or terminating). */
  reschedulablePods: Pod[];
  /** Karpenter's disruption cost (shared/disruption/cost.ts): lower goes first in drift, expiration and rebalance. */
  disruptionCost: number;
  /** RFC 3339 creation time. */
  createdAt: string;
  /** Drift reason when drifted. */
  drifted?: DriftReason;
  /** RFC 3339 time the claim's Drifted condition turned True; absent when drift was found just now. */
  driftedAt?: string;
  /** What drift detection finds now, leaving out a recorded Drifted condition: what the claim's Drifted condition should say (claim-conditions.ts). */
  driftObserved?: DriftReason;
  /** RFC 3339 time the node expires (creation + expireAfter), undefined for Never. */
  expireAt?: string;
  /** True once consolidateAfter has passed since the last pod event (Karpenter `Consolidatable`). */
  consolidatable: boolean;
  /** Why graceful disruption is blocked (do-not-disrupt, PDB), undefined when it is not. */
  blockedBy?: string;
  /** `blockedBy` is a pod's do-not-disrupt or a PDB, not the node's own annotation or a nomination. */
  blockedByPods?: boolean;
  /** The NodeClaim's terminationGracePeriod (seconds), which bounds its drain; absent = unbounded. */
  terminationGracePeriodSeconds?: number;
  /** RFC 3339 time of the EC2 rebalance recommendation recorded on the claim (`nodefleet.io/rebalance-recommended-at`). */
  rebalanceRecommendedAt?: string;
}

/** A node some method could not take, and why (log line + metric label). */
export interface BlockedCandidate {
  nodeName: string;
  nodePool?: string;
  /** Method or phase that found the block ('candidates' for blocks common to every method). */
  method: MethodName | 'candidates';
  reason: string;
}

/** A replacement NodeClaim to create before the candidates are drained. JSON-safe. */
export interface ReplacementClaim {
  nodePool: string;
  /** Requirements including `node.kubernetes.io/instance-type In [launch set]`. */
  requirements: RequirementSpec[];
  /** Launch set, cheapest first (Karpenter filters it to types cheaper than the candidates). */
  instanceTypes: string[];
  labels: Record<string, string>;
  taints: Taint[];
  startupTaints: Taint[];
  /** Sum of pod requests plus daemonset overhead, Kubernetes quantities. */
  requests: Record<string, string>;
  capacityTypes: CapacityType[];
  zones: string[];
  /** Price of the cheapest launchable offering, USD/hour. */
  priceUsdPerHour: number;
  /** Pods (namespace/name) the simulation put on it. */
  pods: string[];
}

/** A node the command disrupts. */
export interface CommandCandidate {
  nodeName: string;
  nodeClaim: string;
  nodePool: string;
  instanceType: string;
  zone: string;
  capacityType: CapacityType;
  priceUsdPerHour?: number;
  instanceId?: string;
  providerID?: string;
  driftReason?: DriftReason;
  /** Pods (namespace/name) to move. */
  pods: string[];
}

/**
 * What one disruption run decided: delete some nodes, or replace them with new claims that must
 * be created and Initialized before the old nodes are drained. JSON-safe.
 */
export interface DisruptionCommand {
  /** Deterministic id: method, candidates and creation time. */
  id: string;
  method: MethodName;
  reason: DisruptionReason;
  decision: 'delete' | 'replace';
  candidates: CommandCandidate[];
  replacements: ReplacementClaim[];
  /** Candidates' price minus replacements' price, USD/hour (negative for drift replacements that cost more). */
  savingsUsdPerHour?: number;
  /** RFC 3339: when the plan was made. */
  createdAt: string;
  /** RFC 3339: createdAt + {@link CommandValidationDelaySeconds}; re-validate at or after it, then act. */
  validateAfter: string;
}

/** A NodeClaim past its expireAfter: terminated forcefully, outside budgets (Karpenter v1). */
export interface Expiration {
  nodeName: string;
  nodeClaim: string;
  nodePool: string;
  instanceId?: string;
  /** RFC 3339. */
  expiredAt: string;
}

/** Budget state of one NodePool for one reason. */
export interface BudgetStatus {
  nodePool: string;
  reason: DisruptionReason;
  /** Managed, initialized nodes of the pool. */
  nodes: number;
  /** Min over active budgets of ceil(pct × nodes) or the count; undefined = no active budget applies (unbounded). */
  cap?: number;
  /** Nodes NotReady or being deleted (they use up the budget). */
  disrupting: number;
  /** cap − disrupting, at least 0; Infinity when unbounded. */
  allowed: number;
}

/** The result of one planning pass. */
export interface DisruptionPlan {
  /** Forceful expirations (act on all of them, no budget). */
  expirations: Expiration[];
  /** Static NodePools' claims to create and to terminate (static-capacity.ts). */
  staticCapacity: StaticCapacityPlan;
  /** The graceful command, if any method found one. */
  command?: DisruptionCommand;
  blocked: BlockedCandidate[];
  budgets: BudgetStatus[];
  /** Scheduling simulations run. */
  simulations: number;
  /** Methods that stopped on their time budget (constants.ts): the next runs reach the rest. */
  timedOut: MethodName[];
  /** Claims whose Drifted / Consolidatable condition this pass changed, to record (claim-conditions.ts). */
  claimConditions: NodeClaim[];
  /** Per reason of the methods run this pass (in order, until one gave a command): their candidates before budgets. */
  eligibleNodes: { reason: DisruptionReason; count: number }[];
}
