/**
 * A scenario case as a scheduling snapshot: NodePools parsed, instance types from the case (or
 * the real catalog of its region), nodes and in-flight NodeClaims as existing capacity with
 * their bound pods, workloads expanded into pending pods (shared/api/workloads.ts).
 */
import { catalogSettingsOf, schedulingSettingsOf, settingsFromCase } from '../../../shared/api/settings.ts';
import { podsByNode, type KubeObject, type Node, type Pod, type Taint } from '../../../shared/api/kube.ts';
import * as L from '../../../shared/api/labels.ts';
import type { EC2NodeClass, NodePool } from '../../../shared/api/nodepool.ts';
import type { RequirementSpec } from '../../../shared/api/requirements.ts';
import { parseNodeClass, parseNodePool } from '../../../shared/api/validate.ts';
import { readWorkloads, type Workloads } from '../../../shared/api/workloads.ts';
import { AmiFamilyFeatureTable, amiFamilyOf, instanceTypeFromCase, loadCatalog, type CaseInstanceType } from '../../../shared/catalog/index.ts';
import type { InstanceType } from '../../../shared/catalog/types.ts';
import type { ExistingNode, SchedulingInput, UnavailableOffering } from '../../../shared/scheduling/index.ts';
import { existingFromClaim as existingFromInFlightClaim, existingFromNode as existingFromNodeOnly } from '../../../shared/scheduling/existing-capacity.ts';
import { deletingNodePods, podKey } from '../../../shared/disruption/pods.ts';
import { nodeClassReadiness } from '../../../shared/api/nodeclass-support.ts';
import { readAccountFiles, resolveAgainstAccount } from '../../../shared/aws/account-file.ts';
import type { NodeClassResolutions } from '../../../shared/aws/node-class-resolver.ts';
import { caseNow } from './disruption.ts';

/** Everything a provisioning check needs from a case. */
export interface CaseSnapshot {
  input: SchedulingInput;
  workloads: Workloads;
  nodePools: NodePool[];
  /** Instance types per NodePool name (what `input.instanceTypes` returns). */
  typesByPool: Map<string, InstanceType[]>;
  /** Pending pods that count for `scheduled`: those the provisioner would solve for (shared/api/workloads.ts `pendingPods`). */
  countedPending: Pod[];
}

/**
 * Node objects as existing capacity, each holding those of `boundPods` that name it (grouped once;
 * the conversion: shared/scheduling/existing-capacity.ts). `startupTaints`: a node's NodePool's.
 */
export function existingFromNodes(
  nodes: readonly Node[],
  boundPods: readonly Pod[],
  startupTaints: (n: Node) => readonly Taint[] = () => [],
  claimAllocatable: (n: Node) => Record<string, string> | undefined = () => undefined,
): ExistingNode[] {
  const byNode = podsByNode(boundPods);
  return nodes.map((n) => existingFromNodeOnly(n, byNode.get(n.metadata.name) ?? [], startupTaints(n), claimAllocatable(n)));
}

/** A case's in-flight NodeClaim object (no Node yet) as capacity coming soon (shared/scheduling/existing-capacity.ts). */
export function existingFromClaim(claim: KubeObject, types: ReadonlyMap<string, InstanceType>): ExistingNode | undefined {
  const spec = (claim.spec ?? {}) as { requirements?: RequirementSpec[]; taints?: ExistingNode['taints'] };
  const status = (claim.status ?? {}) as { allocatable?: Record<string, string>; capacity?: Record<string, string> };
  const labels = claim.metadata.labels ?? {};
  return existingFromInFlightClaim(
    {
      name: claim.metadata.name,
      nodePool: labels[L.LabelNodePool] ?? '',
      labels,
      taints: spec.taints ?? [],
      requirements: spec.requirements ?? [],
      // Karpenter labels a NodeClaim with its instance type once launched.
      ...(labels[L.LabelInstanceType] ? { instanceType: labels[L.LabelInstanceType] } : {}),
      ...(status.allocatable ? { allocatable: status.allocatable } : {}),
      ...(status.capacity ? { capacity: status.capacity } : {}),
    },
    types,
  );
}

/**
 * The case's EC2NodeClasses resolved against its `account` (the JSON of `aws ec2 describe-*`, as
 * `plan --account` reads it) with the production resolver; undefined without an account.
 * @throws ValidationError for a bad account (one line: field and reason).
 */
export async function caseResolutions(doc: Record<string, any>): Promise<Pick<NodeClassResolutions, 'resolved' | 'problems'> | undefined> {
  if (doc.account === undefined) return undefined;
  const region: string = doc.region ?? 'us-east-1';
  const account = readAccountFiles([{ file: 'account', text: JSON.stringify(doc.account) }], region);
  const nodePools = ((doc.nodePools ?? []) as unknown[]).map(parseNodePool);
  const nodeClasses: EC2NodeClass[] = ((doc.nodeClasses ?? []) as unknown[]).map(parseNodeClass);
  return (await resolveAgainstAccount(account, nodePools, nodeClasses, { region, clusterName: 'case' })).resolutions;
}

/**
 * Builds the snapshot. `resolutions` (from {@link caseResolutions}): offerings only in the zones
 * each class's subnets cover, and a class whose terms select nothing is not ready.
 * @throws ValidationError when a NodePool, EC2NodeClass or made-up instance type is invalid.
 */
export function snapshotFromCase(doc: Record<string, any>, resolutions?: Pick<NodeClassResolutions, 'resolved' | 'problems'>): CaseSnapshot {
  const region: string = doc.region ?? 'us-east-1';
  const settings = (doc.settings ?? {}) as Record<string, unknown>;
  const unavailable = (doc.unavailableOfferings ?? []) as UnavailableOffering[];
  const nodePools = ((doc.nodePools ?? []) as unknown[]).map(parseNodePool);
  const nodeClasses: EC2NodeClass[] = ((doc.nodeClasses ?? []) as unknown[]).map(parseNodeClass);
  const classByName = new Map(nodeClasses.map((c) => [c.metadata.name, c]));
  const karpenter = settingsFromCase(settings);
  const catalogSettings = catalogSettingsOf(karpenter);
  const byClass = new Map<string, InstanceType[]>();
  const typesForClass = (name: string): InstanceType[] => {
    let types = byClass.get(name);
    if (!types) {
      const nodeClass = classByName.get(name);
      const subnets = resolutions?.resolved.get(name)?.subnets;
      types = doc.instanceTypes
        ? (doc.instanceTypes as CaseInstanceType[]).map((t) => instanceTypeFromCase(t, { region, nodeClass, unavailable, settings: catalogSettings, subnets }))
        : loadCatalog({ region, nodeClass, unavailable, settings: catalogSettings, subnets });
      byClass.set(name, types);
    }
    return types;
  };
  const typesByPool = new Map<string, InstanceType[]>();
  for (const np of nodePools) {
    const className = np.spec.template.spec.nodeClassRef.name;
    // A NodePool launches only types whose OS its node class's image runs.
    const os = AmiFamilyFeatureTable[amiFamilyOf(classByName.get(className))].os;
    typesByPool.set(
      np.metadata.name,
      typesForClass(className).filter((t) => (t.labels[L.LabelOS] ?? 'linux') === os),
    );
  }
  const workloads = readWorkloads([...((doc.objects ?? []) as unknown[]), ...((doc.nodes ?? []) as unknown[])]);
  const startupOf = (n: Node) =>
    (nodePools.find((p) => p.metadata.name === n.metadata.labels?.[L.LabelNodePool])?.spec.template.spec.startupTaints ?? []) as Taint[];
  // A listed NodeClaim with a node: its recorded allocatable stands in for what that node's kubelet does not report yet.
  const claimAllocatable = new Map<string, Record<string, string>>();
  for (const c of (doc.existingNodeClaims ?? []) as KubeObject[]) {
    const status = (c.status ?? {}) as { nodeName?: string; allocatable?: Record<string, string> };
    if (status.nodeName && status.allocatable) claimAllocatable.set(status.nodeName, status.allocatable);
  }
  // The pods of deleting nodes are scheduled like pending pods, as the provisioner does
  // (shared/disruption/pods.ts deletingNodePods); they leave their node's pods.
  const now = caseNow(doc);
  const rescheduled = deletingNodePods(workloads.nodes, podsByNode(workloads.boundPods), workloads.pdbs, now);
  const movedKeys = new Set(rescheduled.map(podKey));
  const stayingBound = movedKeys.size ? workloads.boundPods.filter((p) => !movedKeys.has(podKey(p))) : workloads.boundPods;
  const existingNodes = existingFromNodes(workloads.nodes, stayingBound, startupOf, (n) => claimAllocatable.get(n.metadata.name));
  const nodeNames = new Set(existingNodes.map((n) => n.name));
  const allTypes = new Map<string, InstanceType>();
  for (const types of typesByPool.values()) for (const t of types) allTypes.set(t.name, t);
  for (const c of (doc.existingNodeClaims ?? []) as KubeObject[]) {
    const nodeName = (c.status as { nodeName?: string } | undefined)?.nodeName;
    if ((nodeName && nodeNames.has(nodeName)) || c.metadata.deletionTimestamp) continue;
    const e = existingFromClaim(c, allTypes);
    if (e) existingNodes.push(e);
  }
  const input: SchedulingInput = {
    pods: [...workloads.pendingPods, ...rescheduled],
    nodePools,
    instanceTypes: (np) => typesByPool.get(np.metadata.name) ?? [],
    existingNodes,
    boundPods: stayingBound,
    daemonSets: workloads.daemonSets,
    // A case states the whole cluster: a claim it does not list does not exist.
    storage: workloads.storage,
    unavailableOfferings: unavailable,
    ...(resolutions?.problems.size ? { nodePoolNotReady: nodeClassReadiness([], resolutions.problems).nodePoolNotReady } : {}),
    settings: {
      ...schedulingSettingsOf(karpenter),
      ...(settings.packing ? { packing: settings.packing as 'cost' | 'karpenter' } : {}),
      ...(settings.maxInstanceTypes !== undefined ? { maxInstanceTypes: Number(settings.maxInstanceTypes) } : {}),
      ...(settings.maxLaunchInstanceTypes !== undefined ? { maxLaunchInstanceTypes: Number(settings.maxLaunchInstanceTypes) } : {}),
    },
  };
  return { input, workloads, nodePools, typesByPool, countedPending: workloads.pendingPods };
}
