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
import { AnnotationNodeClassHash, AnnotationNodePoolHash, LabelOS } from '../api/labels.ts';
import { AmiFamilyFeatureTable, amiFamilyOf } from '../catalog/capacity.ts';
import type { DriftReason } from './types.ts';

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

  const claimPoolHash = d.claim?.nodePoolHash ?? d.node.metadata.annotations?.[AnnotationNodePoolHash];
  if (d.nodePoolHash !== undefined && claimPoolHash !== undefined && claimPoolHash !== d.nodePoolHash) return 'NodePoolDrifted';

  if (!d.instanceTypeKnown) return 'InstanceTypeNotFound';

  if (!effectiveRequirements(d.nodePool, d.nodeClass).matchesLabels(d.labels)) return 'RequirementsDrifted';

  const claimClassHash = d.claim?.nodeClassHash ?? d.node.metadata.annotations?.[AnnotationNodeClassHash];
  if (d.nodeClassHash !== undefined && claimClassHash !== undefined && claimClassHash !== d.nodeClassHash) return 'NodeClassDrift';

  const statusAmis = (d.nodeClass?.status as { amis?: { id?: string }[] } | undefined)?.amis;
  const current = d.resolvedImageIds ?? (Array.isArray(statusAmis) ? statusAmis.map((a) => a.id).filter((x): x is string => !!x) : undefined);
  const imageId = d.claim?.imageId;
  if (imageId && current && current.length > 0 && !current.includes(imageId)) return 'AMIDrift';

  return undefined;
}
