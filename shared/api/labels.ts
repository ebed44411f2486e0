/**
 * Well-known label, annotation and taint keys, as Karpenter v1 and its AWS provider use them.
 * Sources: kubernetes-sigs/karpenter pkg/apis/v1/labels.go, taints.go;
 * aws/karpenter-provider-aws pkg/apis/v1/labels.go.
 */
export const LabelTopologyZone = 'topology.kubernetes.io/zone';
export const LabelTopologyRegion = 'topology.kubernetes.io/region';
export const LabelTopologyZoneID = 'topology.k8s.aws/zone-id';
export const LabelInstanceType = 'node.kubernetes.io/instance-type';
export const LabelArch = 'kubernetes.io/arch';
export const LabelOS = 'kubernetes.io/os';
export const LabelHostname = 'kubernetes.io/hostname';
export const LabelWindowsBuild = 'node.kubernetes.io/windows-build';

export const LabelCapacityType = 'karpenter.sh/capacity-type';
/** The id of the capacity reservation a node was launched into (KA pkg/apis/v1/labels.go). */
export const LabelCapacityReservationID = 'karpenter.k8s.aws/capacity-reservation-id';
/** `default` or `capacity-block` (KA labels.go `LabelCapacityReservationType`). */
export const LabelCapacityReservationType = 'karpenter.k8s.aws/capacity-reservation-type';
/** Whether the reservation is interruptible (KA labels.go `LabelCapacityReservationInterruptible`). */
export const LabelCapacityReservationInterruptible = 'karpenter.k8s.aws/capacity-reservation-interruptible';
export const LabelNodePool = 'karpenter.sh/nodepool';
export const LabelRegistered = 'karpenter.sh/registered';
export const LabelInitialized = 'karpenter.sh/initialized';
export const LabelDoNotSync = 'karpenter.sh/do-not-sync-taints';

export const LabelInstanceCategory = 'karpenter.k8s.aws/instance-category';
export const LabelInstanceFamily = 'karpenter.k8s.aws/instance-family';
export const LabelInstanceGeneration = 'karpenter.k8s.aws/instance-generation';
export const LabelInstanceSize = 'karpenter.k8s.aws/instance-size';
export const LabelInstanceCPU = 'karpenter.k8s.aws/instance-cpu';
export const LabelInstanceCPUManufacturer = 'karpenter.k8s.aws/instance-cpu-manufacturer';
export const LabelInstanceCPUSustainedClockSpeedMhz = 'karpenter.k8s.aws/instance-cpu-sustained-clock-speed-mhz';
export const LabelInstanceMemory = 'karpenter.k8s.aws/instance-memory';
export const LabelInstanceEBSBandwidth = 'karpenter.k8s.aws/instance-ebs-bandwidth';
export const LabelInstanceNetworkBandwidth = 'karpenter.k8s.aws/instance-network-bandwidth';
export const LabelInstanceHypervisor = 'karpenter.k8s.aws/instance-hypervisor';
export const LabelInstanceEncryptionInTransit = 'karpenter.k8s.aws/instance-encryption-in-transit-supported';
export const LabelInstanceGPUName = 'karpenter.k8s.aws/instance-gpu-name';
export const LabelInstanceGPUManufacturer = 'karpenter.k8s.aws/instance-gpu-manufacturer';
export const LabelInstanceGPUCount = 'karpenter.k8s.aws/instance-gpu-count';
export const LabelInstanceGPUMemory = 'karpenter.k8s.aws/instance-gpu-memory';
export const LabelInstanceAcceleratorName = 'karpenter.k8s.aws/instance-accelerator-name';
export const LabelInstanceAcceleratorManufacturer = 'karpenter.k8s.aws/instance-accelerator-manufacturer';
export const LabelInstanceAcceleratorCount = 'karpenter.k8s.aws/instance-accelerator-count';
export const LabelInstanceLocalNVME = 'karpenter.k8s.aws/instance-local-nvme';
/** The instance tenancy label (KA pkg/apis/v1/labels.go). */
export const LabelInstanceTenancy = 'karpenter.k8s.aws/instance-tenancy';
export const LabelInstanceCapabilityFlex = 'karpenter.k8s.aws/instance-capability-flex';

/** Capacity types, in Karpenter's launch preference order (reserved > spot > on-demand). */
export const CapacityTypeReserved = 'reserved';
export const CapacityTypeSpot = 'spot';
export const CapacityTypeOnDemand = 'on-demand';
export type CapacityType = 'reserved' | 'spot' | 'on-demand';

/** Annotations. */
export const AnnotationDoNotDisrupt = 'karpenter.sh/do-not-disrupt';
export const AnnotationNodePoolHash = 'karpenter.sh/nodepool-hash';
export const AnnotationNodePoolHashVersion = 'karpenter.sh/nodepool-hash-version';
export const AnnotationNodeClassHash = 'karpenter.k8s.aws/ec2nodeclass-hash';
export const AnnotationPodDeletionCost = 'controller.kubernetes.io/pod-deletion-cost';
/** Pod annotation (int32) steering which nodes disruption takes first; wins over pod-deletion-cost (Karpenter v1.15). */
export const AnnotationDisruptionCost = 'karpenter.sh/disruption-cost';
/** nodefleet extension: expiration waits for budgets and pre-spins the replacement. */
export const AnnotationGracefulExpiration = 'nodefleet.io/graceful-expiration';
/** nodefleet: the packing mode (`cost` | `karpenter`) of rounds over this NodePool; precedence in shared/api/packing.ts. */
export const AnnotationPacking = 'nodefleet.io/packing';
/** nodefleet extension: a rebalance recommendation launches the replacement early and drains within budgets. */
export const AnnotationRebalanceReplace = 'nodefleet.io/rebalance-replace';
/**
 * nodefleet: set on a NodeClaim (RFC 3339 time) when EC2 sent a rebalance recommendation for its
 * instance; in a pool with {@link AnnotationRebalanceReplace} the disruption run replaces it first.
 */
export const AnnotationRebalanceRecommendedAt = 'nodefleet.io/rebalance-recommended-at';

/** The finalizer on every Node (and NodeClaim) nodefleet owns: deleting one runs its termination first (KC v1.TerminationFinalizer). */
export const FinalizerTermination = 'karpenter.sh/termination';
/** Put on a node when its drain starts, so load balancers stop sending it traffic (k8s corev1.LabelNodeExcludeBalancers). */
export const LabelExcludeFromExternalLoadBalancers = 'node.kubernetes.io/exclude-from-external-load-balancers';

/** The extended resource of EFA devices (KA v1.ResourceEFA): pods requesting it get a claim launched with EFA interfaces (shared/aws/ec2.ts). */
export const ResourceEFA = 'vpc.amazonaws.com/efa';

/** Taints. */
export const TaintDisrupted = { key: 'karpenter.sh/disrupted', effect: 'NoSchedule' } as const;
export const TaintUnregistered = { key: 'karpenter.sh/unregistered', effect: 'NoExecute' } as const;

/** Label domains reserved to Karpenter/nodefleet: users may not set labels there in NodePool templates. */
export const RestrictedLabelDomains = ['karpenter.sh', 'karpenter.k8s.aws', 'kubernetes.io', 'k8s.io'];

/** Instance tag: nodefleet's own cluster ownership tag (value = cluster name), set at launch (shared/aws/ec2.ts launchTags). */
export const TagNodefleetCluster = 'nodefleet.io/cluster';
/**
 * Annotation on the karpenter.sh/v1 NodeClaim objects nodefleet writes (value = cluster name): the
 * objects it mirrors from its records. One without it (Karpenter's, beside nodefleet) is never changed.
 */
export const AnnotationNodeClaimMirror = 'nodefleet.io/cluster';
/** Instance tag: the NodeClaim the instance was launched for (Karpenter's key), set at launch. */
export const TagNodeClaim = 'karpenter.sh/nodeclaim';

/** Core well-known labels (KC pkg/apis/v1/labels.go `WellKnownLabels`). */
export const CoreWellKnownLabels: readonly string[] = [
  LabelNodePool,
  LabelTopologyZone,
  LabelTopologyRegion,
  LabelInstanceType,
  LabelArch,
  LabelOS,
  LabelCapacityType,
  LabelWindowsBuild,
];

/** Deprecated kubernetes.io keys the API server still accepts (mapped to the ones above). */
export const DeprecatedKubernetesLabels: readonly string[] = [
  'beta.kubernetes.io/instance-type',
  'failure-domain.beta.kubernetes.io/region',
  'failure-domain.beta.kubernetes.io/zone',
  'beta.kubernetes.io/os',
  'beta.kubernetes.io/arch',
];

/** AWS well-known labels (KA pkg/apis/v1/labels.go `init()`). Zone id is under topology.k8s.aws. */
export const AWSWellKnownLabels: readonly string[] = [
  LabelInstanceCategory,
  LabelInstanceFamily,
  LabelInstanceGeneration,
  LabelInstanceSize,
  LabelInstanceCPU,
  LabelInstanceCPUManufacturer,
  LabelInstanceCPUSustainedClockSpeedMhz,
  LabelInstanceMemory,
  LabelInstanceHypervisor,
  LabelInstanceEncryptionInTransit,
  LabelInstanceCapabilityFlex,
  LabelInstanceLocalNVME,
  LabelInstanceEBSBandwidth,
  LabelInstanceNetworkBandwidth,
  LabelInstanceTenancy,
  LabelInstanceGPUName,
  LabelInstanceGPUManufacturer,
  LabelInstanceGPUCount,
  LabelInstanceGPUMemory,
  LabelInstanceAcceleratorName,
  LabelInstanceAcceleratorManufacturer,
  LabelInstanceAcceleratorCount,
  LabelCapacityReservationID,
  LabelCapacityReservationType,
  LabelCapacityReservationInterruptible,
  'karpenter.k8s.aws/placement-group-id',
  'karpenter.k8s.aws/placement-group-partition',
  'karpenter.k8s.aws/ec2nodeclass',
  LabelTopologyZoneID,
];

/**
 * Every well-known label: core and AWS (Karpenter's `v1.WellKnownLabels`, which the AWS provider
 * extends at start). A NodePool may narrow them; a pod may require one its NodePool does not
 * mention (KC scheduling `AllowUndefinedWellKnownLabels`): the value comes from the instance type
 * or offering.
 */
export const WellKnownLabels: ReadonlySet<string> = new Set([...CoreWellKnownLabels, ...AWSWellKnownLabels]);

/**
 * Well-known labels whose values form a known set (KC labels.go `WellKnownValuesForRequirements`,
 * KA adds instance tenancy): a NodePool `In` requirement on one of them that lists none of these
 * values can launch nothing, and Karpenter marks the NodePool not ready.
 */
export const WellKnownValuesForRequirements: Readonly<Record<string, readonly string[]>> = {
  [LabelCapacityType]: [CapacityTypeOnDemand, CapacityTypeSpot, CapacityTypeReserved],
  [LabelInstanceTenancy]: ['dedicated', 'default'],
};

/**
 * Why an `In` requirement on a label with known values cannot be honoured (no known value, or
 * fewer known values than its minValues), in Karpenter's words; undefined when it can.
 */
export function wellKnownValuesProblem(req: { key: string; operator: string; values?: readonly string[]; minValues?: number }): string | undefined {
  const known = WellKnownValuesForRequirements[req.key];
  if (!known || req.operator !== 'In') return undefined;
  const values = req.values ?? [];
  const valid = values.filter((v) => known.includes(v));
  if (valid.length === 0)
    return `no valid values found in [${values.join(' ')}] for ${req.key}, expected one of: [${known.join(' ')}], got: [${values.join(' ')}]`;
  if (req.minValues !== undefined && valid.length < req.minValues)
    return `not enough valid values found in [${values.join(' ')}] for ${req.key}, expected at least ${req.minValues} valid values from: [${known.join(' ')}], got: ${valid.length}`;
  return undefined;
}
