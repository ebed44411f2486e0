/**
 * One consistent picture of the cluster for the scheduling simulation: nodes and bound pods
 * (the agent's cluster view, or live — shared/runtime/cluster-picture.ts), pending pods (live),
 * NodePools / EC2NodeClasses / DaemonSets (Kubernetes API), in-flight NodeClaims (store, the
 * authority on what nodefleet launched), the ICE cache, the EC2NodeClasses' subnets (the launch's
 * resolver) and the instance catalog per EC2NodeClass, offered only in the zones those subnets cover.
 *
 * The view is a cache, never an authority (DESIGN.md "Trust"): a launch is decided only on live
 * objects and the view's pods of live nodes. The nodes are the live Node list (one list per pass),
 * so a node the view shows but the API server does not is no room; the pods of a node being
 * deleted, which the pass provisions for like pending pods, are listed live for that node
 * (the Node live is really being deleted, the pods exist and are bound to it).
 */
import { catalogSettingsOf, reservedCapacityOf, type Settings } from '../../shared/api/settings.ts';
import type { Node, Pod, PodDisruptionBudget, Taint } from '../../shared/api/kube.ts';
import { objectKey } from '../../shared/api/kube.ts';
import { InFlightPhases, NominationSeconds, nominates, type NodeClaim } from '../../shared/api/nodeclaim.ts';
import type { EC2NodeClass, NodePool } from '../../shared/api/nodepool.ts';
import type { ClusterViewStore, KubeApi, NodeClaimStore, UnavailableOfferings } from '../../shared/api/ports.ts';
import { isProvisionable } from '../../shared/api/agent-events.ts';
import { MaxViewAgeSeconds, readClusterPicture, type ClusterPicture } from '../../shared/runtime/cluster-picture.ts';
import type { Log, MetricsSink } from '../../shared/runtime/observability.ts';
import { loadCatalog, subnetCoverage, type InstanceType } from '../../shared/catalog/index.ts';
import { resolveNodeClasses, type NodeClassResolver } from '../../shared/aws/node-class-resolver.ts';
import type { CatalogRefresh } from '../../shared/catalog/refresh.ts';
import type { DaemonSetTemplate, ExistingNode, UnavailableOffering } from '../../shared/scheduling/index.ts';
import { existingFromClaim, existingFromNode } from '../../shared/scheduling/existing-capacity.ts';
import { deletingNodePods, isCurrentlyReschedulable, isNodeDeleting, isReschedulable, PdbLimits, podKey } from '../../shared/disruption/pods.ts';
import { instanceIdOfProviderId } from '../../shared/api/provider-id.ts';

/**
 * The provisioner reads only the claims initialized less than this long ago (plus every claim not
 * yet initialized: NodeClaimStore `listInFlight`): an initialized claim still matters while it
 * nominates pods ({@link NominationSeconds}) and while the cluster picture may predate its node
 * (a view is used up to MaxViewAgeSeconds old, shared/runtime/cluster-picture.ts). Older ones are
 * nodes in the picture like any other, and reading them all made every pass grow with the cluster.
 */
export const InFlightWindowSeconds = NominationSeconds + MaxViewAgeSeconds;

export interface Snapshot {
  nodePools: NodePool[];
  nodeClasses: Map<string, EC2NodeClass>;
  claims: NodeClaim[];
  nodes: Node[];
  /** Bound pods and pending pods (the view's and the live ones). */
  livePods: Pod[];
  /** Where bound pods came from (view or live), its age, and the nodes whose pods were listed live. */
  picture: Pick<ClusterPicture, 'source' | 'ageSeconds' | 'refused' | 'livePodsOf'>;
  existingNodes: ExistingNode[];
  boundPods: Pod[];
  daemonSets: DaemonSetTemplate[];
  unavailable: UnavailableOffering[];
  /**
   * Instance types per NodePool (catalog for its EC2NodeClass, ICE entries marked unavailable;
   * offered only in the zones the class's subnets cover when a resolver resolved them).
   */
  instanceTypes: (np: NodePool) => InstanceType[];
  /** EC2NodeClass name → why its selector terms resolve to nothing launchable (the class is not ready). */
  nodeClassProblems: Map<string, string>;
  /** EC2NodeClass name → the zones its selected subnets cover (classes the resolver resolved). */
  subnetZones: Record<string, string[]>;
  /** `namespace/name` of pending pods already assigned to an in-flight claim → claim name. */
  assigned: Map<string, string>;
  /**
   * The pods of nodes being deleted, to schedule like pending pods (shared/disruption/pods.ts
   * deletingNodePods; copies without nodeName, left out of their node's pods), but for those an
   * in-flight claim was launched for: those sit on that claim in `existingNodes` (while it
   * nominates), as a pending pod assigned to it does.
   */
  deletingPods: Pod[];
}

function isTerminating(o: { metadata: { deletionTimestamp?: string } }): boolean {
  return !!o.metadata.deletionTimestamp;
}

/** What loadSnapshot reads through. */
export interface SnapshotPorts {
  kube: KubeApi;
  store: NodeClaimStore;
  unavailable: UnavailableOfferings;
  views?: ClusterViewStore;
  env: { clusterName: string; settings?: Settings };
  log: Log;
  metrics?: MetricsSink;
  /** Subnets (zones) per EC2NodeClass, the launch's resolver; absent = every zone of the region. */
  resolver?: NodeClassResolver;
}

/**
 * Loads everything in parallel. `refreshed`: live catalog data (deps.catalogRefresher) for
 * `region`; without it, or for any part it lacks, the shipped catalog data is used. `pre`: the
 * live pending pods and the claims when the caller read them already (not read again).
 */
export async function loadSnapshot(
  deps: SnapshotPorts,
  region: string,
  now: Date,
  refreshed?: CatalogRefresh,
  pre: { pending?: Pod[]; claims?: NodeClaim[] } = {},
): Promise<Snapshot> {
  const [nodePools, classes, claims, picture, dsObjects, unavailable, pdbs] = await Promise.all([
    deps.kube.listNodePools(),
    deps.kube.listNodeClasses(),
    pre.claims ?? inFlightClaims(deps, now),
    // Nodes from the live list; the pods of deleting nodes listed live (module doc).
    readClusterPicture(deps, now, { pending: pre.pending, liveNodes: true, livePodsFor: (n) => isNodeDeleting(n) }),
    deps.kube.listObjects('apps/v1', 'DaemonSet'),
    deps.unavailable.list(Math.floor(now.getTime() / 1000)),
    deps.kube.listPodDisruptionBudgets(),
  ]);
  const nodes = picture.nodes;
  const livePods = [...picture.boundPods, ...picture.pendingPods];
  const nodeClasses = new Map(classes.map((c) => [c.metadata.name, c]));
  // The classes the NodePools launch with, resolved as the launch resolves them: offerings only
  // where a selected subnet is, so a claim is never placed in a zone it cannot launch in. A class
  // whose terms select nothing launchable is not ready; a failed resolution (throttled) fails the pass.
  const used = new Set(nodePools.map((np) => np.spec.template.spec.nodeClassRef.name));
  const resolutions = deps.resolver
    ? await resolveNodeClasses(
        deps.resolver,
        classes.filter((c) => used.has(c.metadata.name)),
      )
    : undefined;
  const failure = resolutions?.failures.values().next().value;
  if (failure) throw failure;
  const daemonSets: DaemonSetTemplate[] = dsObjects
    .filter((d) => d.spec?.template?.spec)
    .map((d) => ({ metadata: { name: d.metadata.name, namespace: d.metadata.namespace, ...(d.spec.template.metadata ?? {}) }, spec: d.spec.template.spec }));
  const boundPods = picture.boundPods;

  // Nominated pods are pending ones: a map of those, not of every pod of the cluster.
  const liveByKey = new Map(picture.pendingPods.map((p) => [objectKey(p), p]));
  // A pod the view shows on a deleting node but that is pending live was re-created under its
  // name (a StatefulSet's): the view is seconds behind, the live pending pod is the one need
  // (provisioned for, or assigned, as pending). Scheduling the view's copy too launched a second
  // claim for the same pod (chaos seeds 26, 30, 37, 49).
  const deadlines = await terminationDeadlines(deps.store, nodes, picture.podsByNode, pdbs, now);
  const deletingPods = deletingNodePods(nodes, picture.podsByNode, pdbs, now, { deadlines }).filter((p) => !liveByKey.has(objectKey(p)));
  const moved = new Set(deletingPods.map(podKey));
  const byNode = moved.size === 0 ? picture.podsByNode : withoutPods(picture.podsByNode, nodes, moved);

  const existing = new Map<string, ExistingNode>();
  // A node coming up is placed on without its NodeClaim's startup taints (existing-capacity.ts).
  const startupByNode = new Map(claims.filter((c) => c.nodeName).map((c) => [c.nodeName!, c.startupTaints as Taint[]]));
  const allocatableByNode = new Map(claims.filter((c) => c.nodeName && c.allocatable).map((c) => [c.nodeName!, c.allocatable!]));
  for (const n of nodes)
    existing.set(
      n.metadata.name,
      existingFromNode(n, byNode.get(n.metadata.name) ?? [], startupByNode.get(n.metadata.name) ?? [], allocatableByNode.get(n.metadata.name)),
    );

  const assigned = new Map<string, string>();
  // A deleting node's pod that an in-flight claim was launched for sits on that claim's room (like
  // a pending pod assigned to it), and is not scheduled again. Left free, the room went to a
  // pending pod solved first, the deleting pod got a second claim, and once re-created pending
  // (a StatefulSet's) it was the reason for two launching claims (chaos seed 1055).
  const deletingByKey = new Map(deletingPods.map((p) => [objectKey(p), p]));
  const held = new Set<string>();
  const inFlight = claims.filter((c) => InFlightPhases.has(c.phase));
  for (const c of inFlight) {
    let target = c.nodeName ? existing.get(c.nodeName) : undefined;
    if (!target) {
      // Capacity coming soon (a claim that records no allocatable holds room for nothing).
      target = existingFromClaim({ ...c, allocatable: c.allocatable ?? {} })!;
      existing.set(c.name, target);
    }
    // Pods the claim was made for and that are still pending count as already placed on it
    // (after initialization only within the nomination period).
    if (!nominates(c, now)) continue;
    for (const key of c.pods) {
      const d = deletingByKey.get(key);
      if (d && !held.has(key)) {
        held.add(key);
        target.pods = [...(target.pods ?? []), d];
        continue;
      }
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
      types = loadCatalog({
        region,
        nodeClass,
        unavailable,
        refreshed,
        subnets: resolutions?.resolved.get(ref)?.subnets,
        settings: catalogSettingsOf(deps.env.settings),
        capacityReservations: reservedCapacityOf(deps.env.settings) ? resolutions?.resolved.get(ref)?.capacityReservations : undefined,
      });
      catalogs.set(ref, types);
    }
    return types;
  };
  return {
    nodePools,
    nodeClasses,
    claims,
    nodes,
    livePods,
    picture: {
      source: picture.source,
      ...(picture.ageSeconds !== undefined ? { ageSeconds: picture.ageSeconds } : {}),
      ...(picture.refused ? { refused: picture.refused } : {}),
      ...(picture.livePodsOf ? { livePodsOf: picture.livePodsOf } : {}),
    },
    existingNodes: [...existing.values()],
    boundPods,
    daemonSets,
    unavailable,
    instanceTypes,
    nodeClassProblems: resolutions?.problems ?? new Map(),
    subnetZones: Object.fromEntries([...(resolutions?.resolved ?? [])].map(([name, r]) => [name, [...subnetCoverage(r.subnets).keys()].sort()])),
    assigned,
    deletingPods: held.size ? deletingPods.filter((p) => !held.has(objectKey(p))) : deletingPods,
  };
}

/**
 * The termination deadlines of the deleting nodes that hold a pod only the cutoff will move (a
 * fully blocking PDB, do-not-disrupt): node name → the deadline its Terminating claim records
 * (the earlier of the termination's deadline and a verified interruption notice), read from the
 * store by the node's instance (the byInstanceId index). The store is the authority: no event
 * or object in the cluster says when a node's cutoff comes. Nodes without such a pod are not read.
 */
async function terminationDeadlines(
  store: NodeClaimStore,
  nodes: readonly Node[],
  podsByNode: ReadonlyMap<string, readonly Pod[]>,
  pdbs: readonly PodDisruptionBudget[],
  now: Date,
): Promise<Map<string, number>> {
  const limits = new PdbLimits(pdbs, []);
  const held = nodes.filter(
    (n) => isNodeDeleting(n) && (podsByNode.get(n.metadata.name) ?? []).some((p) => isReschedulable(p) && !isCurrentlyReschedulable(p, limits, now)),
  );
  const out = new Map<string, number>();
  await Promise.all(
    held.map(async (n) => {
      const instanceId = instanceIdOfProviderId(n.spec?.providerID);
      const claim = instanceId ? await store.getByInstanceId(instanceId) : undefined;
      if (!claim || claim.phase !== 'Terminating' || claim.providerId !== n.spec?.providerID) return;
      const recorded = [claim.termination?.deadlineEpochMs, claim.noticeDeadlineEpochMs].filter((d): d is number => d !== undefined);
      if (recorded.length) out.set(n.metadata.name, Math.min(...recorded));
    }),
  );
  return out;
}

/** `byNode` with the pods named in `moved` left out of `nodes`' lists (only those lists are copied). */
function withoutPods(byNode: ReadonlyMap<string, Pod[]>, nodes: readonly Node[], moved: ReadonlySet<string>): Map<string, Pod[]> {
  const out = new Map(byNode);
  for (const n of nodes) {
    const pods = byNode.get(n.metadata.name);
    if (pods?.some((p) => moved.has(podKey(p))))
      out.set(
        n.metadata.name,
        pods.filter((p) => !moved.has(podKey(p))),
      );
  }
  return out;
}

/** The claims a provisioning pass reads at `now` (see {@link InFlightWindowSeconds}). */
export function inFlightClaims(deps: { store: NodeClaimStore }, now: Date): Promise<NodeClaim[]> {
  return deps.store.listInFlight(now.getTime() - InFlightWindowSeconds * 1000);
}

/**
 * Which of the event's pods still need capacity: the live object (fresher than the event) when
 * it is still unbound and not terminating, and not already assigned to an in-flight claim.
 * Karpenter's rule (KC pkg/utils/pod/scheduling.go `IsProvisionable`): unbound, not nominated,
 * not DaemonSet-owned, not mirror, not terminating.
 *
 * `others` (the pass's second half): every other live pod kube-scheduler gave up on
 * (agent-events.ts `isProvisionable`) and no claim holds, appended after the event's. One pass
 * thus solves the parts of a batch the agent split over several events, and pods of batches still
 * on their way, together — as Karpenter solves all pending pods in one pass.
 */
export function provisionablePods(eventPods: readonly Pod[], snap: Pick<Snapshot, 'livePods' | 'assigned'>, opts: { others?: boolean } = {}): Pod[] {
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
  if (opts.others) {
    for (const [key, p] of live) {
      if (seen.has(key) || snap.assigned.has(key) || !isProvisionable(p)) continue;
      seen.add(key);
      out.push(p);
    }
  }
  return out;
}

/**
 * `namespace/name` of pending pods already assigned to an in-flight claim → claim name: the
 * claim's `pods` that are still pending in `live` (unbound pods by key), while the claim still
 * nominates them ({@link nominates}).
 */
export function assignedPods(claims: readonly NodeClaim[], live: ReadonlyMap<string, Pod>, now: Date): Map<string, string> {
  const out = new Map<string, string>();
  for (const c of claims) {
    if (!InFlightPhases.has(c.phase) || !nominates(c, now)) continue;
    for (const key of c.pods) {
      const p = live.get(key);
      if (p && !p.spec.nodeName) out.set(key, c.name);
    }
  }
  return out;
}
