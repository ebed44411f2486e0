/**
 * One consistent picture of the cluster for the scheduling simulation: live pods and nodes,
 * NodePools / EC2NodeClasses (Kubernetes API), in-flight NodeClaims (store), DaemonSets, the
 * ICE cache and the instance catalog per EC2NodeClass.
 */
import type { Node, Pod, Taint } from '../../shared/api/kube.ts';
import { objectKey } from '../../shared/api/kube.ts';
import { getCondition, type NodeClaim } from '../../shared/api/nodeclaim.ts';
import type { EC2NodeClass, NodePool } from '../../shared/api/nodepool.ts';
import type { KubeApi, NodeClaimStore, UnavailableOfferings } from '../../shared/api/ports.ts';
import { parseResources } from '../../shared/api/quantity.ts';
import { Requirements } from '../../shared/api/requirements.ts';
import * as L from '../../shared/api/labels.ts';
import { loadCatalog, type InstanceType } from '../../shared/catalog/index.ts';
import type { CatalogRefresh } from '../../shared/catalog/refresh.ts';
import type { DaemonSetTemplate, ExistingNode, UnavailableOffering } from '../../shared/scheduling/index.ts';

/** Claims in these phases hold (or will hold) capacity. */
const InFlightPhases = new Set<NodeClaim['phase']>(['Pending', 'Launched', 'Registered', 'Initialized']);
/**
 * How long the pods a claim was made for still count as placed on it once its node is
 * initialized: Karpenter's nomination period (2 × the 10 s batch window). Past it, a pod still
 * pending did not fit there (other pods took the room, or it was re-created) and needs capacity
 * again; counting it as assigned for ever left such pods Pending for good (chaos seed 8).
 */
export const NominationSeconds = 20;

export interface Snapshot {
  nodePools: NodePool[];
  nodeClasses: Map<string, EC2NodeClass>;
  claims: NodeClaim[];
  nodes: Node[];
  livePods: Pod[];
  existingNodes: ExistingNode[];
  boundPods: Pod[];
  daemonSets: DaemonSetTemplate[];
  unavailable: UnavailableOffering[];
  /** Instance types per NodePool (catalog for its EC2NodeClass, ICE entries marked unavailable). */
  instanceTypes: (np: NodePool) => InstanceType[];
  /** `namespace/name` of pending pods already assigned to an in-flight claim → claim name. */
  assigned: Map<string, string>;
}

function isTerminating(o: { metadata: { deletionTimestamp?: string } }): boolean {
  return !!o.metadata.deletionTimestamp;
}

/**
 * Loads everything in parallel. `refreshed`: live catalog data (deps.catalogRefresher) for
 * `region`; without it, or for any part it lacks, the shipped catalog data is used.
 */
export async function loadSnapshot(deps: { kube: KubeApi; store: NodeClaimStore; unavailable: UnavailableOfferings }, region: string, now: Date, refreshed?: CatalogRefresh): Promise<Snapshot> {
  const [nodePools, classes, claims, nodes, livePods, dsObjects, unavailable] = await Promise.all([
    deps.kube.listNodePools(),
    deps.kube.listNodeClasses(),
    deps.store.list(),
    deps.kube.listNodes(),
    deps.kube.listPods(),
    deps.kube.listObjects('apps/v1', 'DaemonSet'),
    deps.unavailable.list(Math.floor(now.getTime() / 1000)),
  ]);
  const nodeClasses = new Map(classes.map((c) => [c.metadata.name, c]));
  const daemonSets: DaemonSetTemplate[] = dsObjects
    .filter((d) => d.spec?.template?.spec)
    .map((d) => ({ metadata: { name: d.metadata.name, namespace: d.metadata.namespace, ...(d.spec.template.metadata ?? {}) }, spec: d.spec.template.spec }));
  const boundPods = livePods.filter((p) => p.spec.nodeName && !['Succeeded', 'Failed'].includes(p.status?.phase ?? ''));

  const byNode = new Map<string, Pod[]>();
  for (const p of boundPods) byNode.set(p.spec.nodeName!, [...(byNode.get(p.spec.nodeName!) ?? []), p]);
  const liveByKey = new Map(livePods.map((p) => [objectKey(p), p]));

  const existing = new Map<string, ExistingNode>();
  for (const n of nodes) {
    const labels = n.metadata.labels ?? {};
    existing.set(n.metadata.name, {
      name: n.metadata.name,
      labels,
      taints: (n.spec?.taints ?? []).filter((t) => t.key !== L.TaintUnregistered.key),
      allocatable: parseResources(n.status?.allocatable ?? n.status?.capacity),
      capacity: parseResources(n.status?.capacity ?? n.status?.allocatable),
      pods: byNode.get(n.metadata.name) ?? [],
      nodePool: labels[L.LabelNodePool],
      unschedulable: !!n.spec?.unschedulable || isTerminating(n),
    });
  }

  const assigned = new Map<string, string>();
  const inFlight = claims.filter((c) => InFlightPhases.has(c.phase));
  for (const c of inFlight) {
    let target = c.nodeName ? existing.get(c.nodeName) : undefined;
    if (!target) {
      const launchedLabels: Record<string, string> = c.instanceType
        ? { [L.LabelInstanceType]: c.instanceType, ...(c.zone ? { [L.LabelTopologyZone]: c.zone } : {}), ...(c.capacityType ? { [L.LabelCapacityType]: c.capacityType } : {}) }
        : {};
      const allocatable = parseResources(c.allocatable ?? {});
      target = {
        name: c.name,
        labels: { ...c.labels, ...launchedLabels, [L.LabelNodePool]: c.nodePool },
        taints: c.taints as Taint[],
        allocatable,
        capacity: parseResources(c.capacity ?? c.allocatable ?? {}),
        pods: [],
        launching: true,
        nodePool: c.nodePool,
        ...(c.instanceType ? {} : { requirements: Requirements.fromSpecs(c.requirements) }),
      };
      existing.set(c.name, target);
    }
    // Pods the claim was made for and that are still pending count as already placed on it
    // (after initialization only within the nomination period).
    const initializedAt = c.phase === 'Initialized' ? Date.parse(getCondition(c, 'Initialized')?.lastTransitionTime ?? '') : NaN;
    if (c.phase === 'Initialized' && !(now.getTime() - initializedAt < NominationSeconds * 1000)) continue;
    for (const key of c.pods) {
      const p = liveByKey.get(key);
      if (!p || p.spec.nodeName) continue;
      assigned.set(key, c.name);
      target.pods = [...(target.pods ?? []), p];
    }
  }

  const catalogs = new Map<string, InstanceType[]>();
  const instanceTypes = (np: NodePool): InstanceType[] => {
    const ref = np.spec.template.spec.nodeClassRef.name;
    const nodeClass = nodeClasses.get(ref);
    if (!nodeClass) return []; // NodePool whose EC2NodeClass is missing: not ready, nothing launches.
    let types = catalogs.get(ref);
    if (!types) {
      types = loadCatalog({ region, nodeClass, unavailable, refreshed });
      catalogs.set(ref, types);
    }
    return types;
  };
  return { nodePools, nodeClasses, claims, nodes, livePods, existingNodes: [...existing.values()], boundPods, daemonSets, unavailable, instanceTypes, assigned };
}

/**
 * Which of the event's pods still need capacity: the live object (fresher than the event) when
 * it is still unbound and not terminating, and not already assigned to an in-flight claim.
 * Karpenter's rule (KC pkg/utils/pod/scheduling.go `IsProvisionable`): unbound, not nominated,
 * not DaemonSet-owned, not mirror, not terminating.
 */
export function provisionablePods(eventPods: readonly Pod[], snap: Pick<Snapshot, 'livePods' | 'assigned'>): Pod[] {
  const live = new Map(snap.livePods.map((p) => [objectKey(p), p]));
  const out: Pod[] = [];
  const seen = new Set<string>();
  for (const ep of eventPods) {
    const key = objectKey(ep);
    if (seen.has(key)) continue;
    seen.add(key);
    const p = live.get(key);
    if (!p || p.spec.nodeName || p.status?.nominatedNodeName || isTerminating(p)) continue;
    if (snap.assigned.has(key)) continue;
    if (p.metadata.ownerReferences?.some((o) => o.kind === 'DaemonSet')) continue;
    if (p.metadata.annotations?.['kubernetes.io/config.mirror']) continue;
    out.push(p);
  }
  return out;
}
