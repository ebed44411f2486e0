/**
 * The one conversion from the cluster picture (Nodes, the pods bound to them, in-flight
 * NodeClaims) to the scheduler's existing capacity ({@link ExistingNode}). The provisioner
 * (functions/provisioner/snapshot.ts), disruption's simulation (shared/disruption/simulate.ts) and
 * the case runner (functions/cli/cases/snapshot.ts) all call it, so a node means the same room,
 * labels, taints and schedulability everywhere. Which nodes and claims count is the caller's
 * decision (disruption leaves out nodes being deleted; the provisioner adds nominated pods).
 *
 * Rules (Karpenter's cluster state, kubernetes-sigs/karpenter pkg/controllers/state/statenode.go):
 * - room is `status.allocatable` (capacity when a node reports none yet) less its pods' requests;
 * - `karpenter.sh/unregistered` is not a taint pods must tolerate (it is removed at registration);
 * - a node cordoned, being deleted, or tainted `karpenter.sh/disrupted` takes no new pods but still
 *   counts for NodePool limits;
 * - the hostname label defaults to the node's name;
 * - a managed node not yet initialized (no `karpenter.sh/initialized` label) is placed on without
 *   its ephemeral and startup taints, which go away as it comes up (statenode.go `Taints`), and
 *   any resource its kubelet reports as zero or not at all counts at its NodeClaim's allocatable:
 *   kubelet reports extended resources such as GPUs as 0 until their device plugin registers
 *   (statenode.go `Allocatable`), and counting them as 0 would launch a second node for the pods
 *   this one was launched for;
 * - an in-flight claim without a node is capacity coming soon: its launched instance type, zone and
 *   capacity type as labels, or, before launch, its requirements; its allocatable, else its type's.
 */
import type { Node, Pod, Taint } from '../api/kube.ts';
import * as L from '../api/labels.ts';
import { parseResources } from '../api/quantity.ts';
import { Requirements, type RequirementSpec } from '../api/requirements.ts';
import type { InstanceType } from '../catalog/index.ts';
import { schedulingTaints } from './taints.ts';
import type { ExistingNode } from './types.ts';

export { podsByNode } from '../api/kube.ts';

/**
 * A Node holding `pods` (the pods bound to it) as existing capacity.
 * @param startupTaints the startup taints of the node's NodeClaim (its NodePool's).
 * @param claimAllocatable the allocatable its NodeClaim records (quantities by resource name),
 *   used while the node is not initialized for what the kubelet reports as zero or not at all.
 */
export function existingFromNode(
  node: Node,
  pods: readonly Pod[],
  startupTaints: readonly Taint[] = [],
  claimAllocatable?: Record<string, string>,
): ExistingNode {
  const labels = node.metadata.labels?.[L.LabelHostname]
    ? (node.metadata.labels ?? {})
    : { ...(node.metadata.labels ?? {}), [L.LabelHostname]: node.metadata.name };
  const all = node.spec?.taints ?? [];
  const registered = all.some((t) => t.key === L.TaintUnregistered.key) ? all.filter((t) => t.key !== L.TaintUnregistered.key) : all;
  const managed = labels[L.LabelNodePool] !== undefined;
  const taints = managed ? schedulingTaints(registered, labels[L.LabelInitialized] === 'true', startupTaints) : registered;
  const allocatable = node.status?.allocatable ?? node.status?.capacity;
  const room = parseResources(allocatable);
  if (managed && claimAllocatable && labels[L.LabelInitialized] !== 'true') {
    const fromClaim = parseResources(claimAllocatable);
    for (const k in fromClaim) if (!room[k]) room[k] = fromClaim[k];
  }
  return {
    name: node.metadata.name,
    labels,
    taints,
    allocatable: room,
    capacity: parseResources(node.status?.capacity ?? allocatable),
    pods: [...pods],
    nodePool: labels[L.LabelNodePool],
    unschedulable: !!node.spec?.unschedulable || !!node.metadata.deletionTimestamp || all.some((t) => t.key === L.TaintDisrupted.key),
  };
}

/** What {@link existingFromClaim} reads of a NodeClaim (the stored NodeClaim has these fields). */
export interface InFlightClaim {
  name: string;
  nodePool: string;
  labels: Record<string, string>;
  taints: readonly Taint[];
  requirements: readonly RequirementSpec[];
  /** Set once launched. */
  instanceType?: string;
  zone?: string;
  capacityType?: string;
  allocatable?: Record<string, string>;
  capacity?: Record<string, string>;
}

/**
 * An in-flight claim that has no Node yet as capacity coming soon (no pods; the caller adds the
 * pods it nominates). `types`: the catalog by name, for the labels of its type (launched, or the one
 * its requirements leave) and the allocatable when the claim records none. undefined when its allocatable is unknown (nothing to place on).
 */
export function existingFromClaim(c: InFlightClaim, types: ReadonlyMap<string, InstanceType> = new Map()): ExistingNode | undefined {
  const requirements = Requirements.fromSpecs([...c.requirements]);
  // Before launch the type is known when the requirements leave one.
  const typeName = c.instanceType ?? requirements.singleValueLabels()[L.LabelInstanceType];
  const type = typeName ? types.get(typeName) : undefined;
  const allocatable = c.allocatable ? parseResources(c.allocatable) : type?.allocatable;
  if (!allocatable) return undefined;
  const launched: Record<string, string> = c.instanceType
    ? {
        [L.LabelInstanceType]: c.instanceType,
        ...(c.zone ? { [L.LabelTopologyZone]: c.zone } : {}),
        ...(c.capacityType ? { [L.LabelCapacityType]: c.capacityType } : {}),
      }
    : {};
  return {
    name: c.name,
    labels: {
      ...(type?.labels ?? {}),
      ...(c.instanceType ? {} : requirements.singleValueLabels()),
      ...c.labels,
      ...launched,
      [L.LabelNodePool]: c.nodePool,
      [L.LabelHostname]: c.name,
    },
    taints: [...c.taints],
    allocatable,
    capacity: c.capacity ? parseResources(c.capacity) : (type?.capacity ?? allocatable),
    pods: [],
    launching: true,
    nodePool: c.nodePool,
    ...(c.instanceType ? {} : { requirements }),
  };
}
