/**
 * Drift detection: does a running node still match what its NodePool and EC2NodeClass would
 * launch today?
 *
 * Sources: KC pkg/controllers/nodeclaim/disruption/drift.go (NodePoolDrifted: template hash;
 * RequirementsDrifted: every NodePool requirement must hold for the claim's labels;
 * InstanceTypeNotFound), KA pkg/cloudprovider/drift.go (NodeClassDrift: static hash; AMIDrift:
 * the instance's image is not among the resolved AMIs). Budgets, weight and limits are not part
 * of either hash, so editing them never drifts a node.
 */
import type { Node } from '../api/kube.ts';
import type { NodePool, EC2NodeClass } from '../api/nodepool.ts';
import type { NodeClaim } from '../api/nodeclaim.ts';
import { getCondition } from '../api/nodeclaim.ts';
import { Requirement, Requirements } from '../api/requirements.ts';
import { AnnotationNodeClassHash, AnnotationNodePoolHash, AnnotationNodePoolHashVersion, LabelOS } from '../api/labels.ts';
import { NodeClassHashVersion, NodePoolHashVersion } from '../api/hash.ts';

/** KA's node class hash-version annotation (pkg/apis/v1 `AnnotationEC2NodeClassHashVersion`). */
export const AnnotationNodeClassHashVersion = 'karpenter.k8s.aws/ec2nodeclass-hash-version';
import { AmiFamilyFeatureTable, amiFamilyOf } from '../catalog/capacity.ts';
import type { DriftReason, InstanceNetwork } from './types.ts';

/** What drift detection looks at for one node. */
export interface DriftInput {
  node: Node;
  claim?: NodeClaim;
  nodePool: NodePool;
  nodeClass?: EC2NodeClass;
  /** The node's labels merged with its instance type's labels (what the NodeClaim carries). */
  labels: Record<string, string>;
  /** False when the instance type is absent from the catalog. */
  instanceTypeKnown: boolean;
  /** Current hashes, when the caller computed them. */
  nodePoolHash?: string;
  nodeClassHash?: string;
  /** AMI ids the node class resolves to now (see DisruptionSnapshot.resolvedImageIds). */
  resolvedImageIds?: string[];
  /** Subnets and security groups the node class resolves to now (DisruptionSnapshot.resolvedNetworks). */
  resolvedNetwork?: { subnetIds: string[]; securityGroupIds: string[] };
  /** The instance's subnet and security groups as EC2 lists them now. */
  instanceNetwork?: InstanceNetwork;
}

/**
 * The NodePool's requirements plus what its EC2NodeClass implies (`kubernetes.io/os` from the AMI
 * family: a Windows node under an AL2023 class can never be launched again).
 */
export function effectiveRequirements(nodePool: NodePool, nodeClass: EC2NodeClass | undefined): Requirements {
  const os = AmiFamilyFeatureTable[amiFamilyOf(nodeClass)].os;
  return Requirements.fromSpecs(nodePool.spec.template.spec.requirements).add(Requirement.single(LabelOS, os));
}

/** The node's drift reason, or undefined when it is not drifted. Checks run cheapest first. */
export function driftReason(d: DriftInput): DriftReason | undefined {
  const stored = d.claim ? getCondition(d.claim, 'Drifted') : undefined;
  if (stored?.status === 'True' && stored.reason) return stored.reason as DriftReason;

  // A hash written by another hash version (e.g. Karpenter's own v3 on a migrated cluster) is not
  // comparable: Karpenter then re-hashes instead of calling it drift, and so do we.
  const annotations = { ...(d.node.metadata.annotations ?? {}), ...(d.claim?.annotations ?? {}) };
  const poolVersionOk = (annotations[AnnotationNodePoolHashVersion] ?? NodePoolHashVersion) === NodePoolHashVersion;
  const claimPoolHash = d.claim?.nodePoolHash ?? annotations[AnnotationNodePoolHash];
  if (poolVersionOk && d.nodePoolHash !== undefined && claimPoolHash !== undefined && claimPoolHash !== d.nodePoolHash) return 'NodePoolDrifted';

  if (!d.instanceTypeKnown) return 'InstanceTypeNotFound';

  if (!effectiveRequirements(d.nodePool, d.nodeClass).matchesLabels(d.labels)) return 'RequirementsDrifted';

  const classVersionOk = (annotations[AnnotationNodeClassHashVersion] ?? NodeClassHashVersion) === NodeClassHashVersion;
  const claimClassHash = d.claim?.nodeClassHash ?? annotations[AnnotationNodeClassHash];
  if (classVersionOk && d.nodeClassHash !== undefined && claimClassHash !== undefined && claimClassHash !== d.nodeClassHash) return 'NodeClassDrift';

  const statusAmis = (d.nodeClass?.status as { amis?: { id?: string }[] } | undefined)?.amis;
  const current = d.resolvedImageIds ?? (Array.isArray(statusAmis) ? statusAmis.map((a) => a.id).filter((x): x is string => !!x) : undefined);
  const imageId = d.claim?.imageId;
  if (imageId && current && current.length > 0 && !current.includes(imageId)) return 'AMIDrift';

  return networkDrift(d.instanceNetwork, d.resolvedNetwork);
}

/**
 * SecurityGroupDrift when the instance's security groups are not exactly the class's (as sets),
 * then SubnetDrift when its subnet is not one of the class's; no verdict when either side is
 * unknown or the class resolves to none (KA cloudprovider/drift.go `areSecurityGroupsDrifted`,
 * `isSubnetDrifted`: no subnets / groups resolved is an error there, no drift).
 */
export function networkDrift(
  instance: InstanceNetwork | undefined,
  resolved: { subnetIds: readonly string[]; securityGroupIds: readonly string[] } | undefined,
): DriftReason | undefined {
  if (!instance || !resolved) return undefined;
  const want = new Set(resolved.securityGroupIds);
  const have = instance.securityGroupIds ? new Set(instance.securityGroupIds) : undefined;
  if (want.size > 0 && have && (have.size !== want.size || [...have].some((g) => !want.has(g)))) return 'SecurityGroupDrift';
  if (resolved.subnetIds.length > 0 && instance.subnetId && !resolved.subnetIds.includes(instance.subnetId)) return 'SubnetDrift';
  return undefined;
}
