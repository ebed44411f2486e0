/**
 * Reads one consistent-enough cluster snapshot for disruption from the ports: Nodes listed live
 * (one list a run; the view is a cache, never an authority on which nodes exist — DESIGN.md
 * "Trust"), bound pods from the cluster picture (the agent's view when fresh, else listed live —
 * shared/runtime/cluster-picture.ts) for the nodes the live list has, pending pods, NodePools, EC2NodeClasses, PDBs and
 * DaemonSets from Kubernetes, the NodeClaim store, the ICE cache, the budget counters, the
 * EC2NodeClasses resolved (AMIs, subnets) and the catalog for the function's region, offered in
 * the zones each class's subnets cover.
 *
 * Before a command acts (`recheck`: its candidates' node names) the candidates are read live —
 * one GET of the node and one list of the pods bound to it each — and replace what the view said
 * about them, so a command is validated against the cluster as it is, not as the view saw it.
 */
import { catalogSettingsOf, DefaultSettings, reservedCapacityOf, schedulingSettingsOf } from '../../shared/api/settings.ts';
import type { Deps } from '../../shared/runtime/deps.ts';
import type { NodePool, EC2NodeClass } from '../../shared/api/nodepool.ts';
import { resolveNodeClasses, resolvedImageIds, type NodeClassResolver, type SubnetInfo } from '../../shared/aws/node-class-resolver.ts';
import type { CapacityReservation } from '../../shared/api/capacity-reservation.ts';
import { nodeClassHash, nodePoolHash } from '../../shared/api/hash.ts';
import { LabelOS } from '../../shared/api/labels.ts';
import { loadCatalog } from '../../shared/catalog/index.ts';
import { AmiFamilyFeatureTable, amiFamilyOf } from '../../shared/catalog/capacity.ts';
import type { InstanceType } from '../../shared/catalog/types.ts';
import type { DaemonSetTemplate } from '../../shared/scheduling/index.ts';
import type { DisruptionSnapshot } from '../../shared/disruption/index.ts';
import type { InstanceNetwork } from '../../shared/disruption/types.ts';
import { choosePacking } from '../../shared/api/packing.ts';
import type { Node, Pod } from '../../shared/api/kube.ts';
import { inView } from '../../shared/api/cluster-view.ts';
import { readClusterPicture, readStorage } from '../../shared/runtime/cluster-picture.ts';
import type { Log } from '../../shared/runtime/observability.ts';

/** The ports the snapshot reads; `resolver` (optional) gives what node classes resolve to now (AMI drift, the zones replacements may launch in). */
export type SnapshotDeps = Pick<Deps, 'kube' | 'store' | 'unavailable' | 'budgets' | 'env' | 'catalogRefresher' | 'views'> & {
  resolver?: NodeClassResolver;
  log?: Deps['log'];
  cloud?: Pick<Deps['cloud'], 'list'>;
};

const silent: Log = { debug() {}, info() {}, warn() {}, error() {} };

/**
 * Nodes and pods with the named nodes (and the pods bound to them) replaced by their live state:
 * a node gone live is dropped with its pods. Reads 2 objects-worth per name, never a list of the cluster.
 */
export async function withLiveNodes(
  kube: Deps['kube'],
  nodes: readonly Node[],
  pods: readonly Pod[],
  names: readonly string[],
): Promise<{ nodes: Node[]; pods: Pod[] }> {
  const wanted = new Set(names);
  const live = await Promise.all([...wanted].map(async (n) => ({ node: await kube.getNode(n), pods: await kube.listPods({ nodeName: n }) })));
  return {
    nodes: [...nodes.filter((n) => !wanted.has(n.metadata.name)), ...live.flatMap((l) => (l.node ? [l.node] : []))],
    pods: [...pods.filter((p) => !wanted.has(p.spec.nodeName ?? '')), ...live.flatMap((l) => (l.node ? l.pods.filter(inView) : []))],
  };
}

/**
 * The node classes resolved now, as a launch resolves them: AMI ids per class (AMI drift), subnets
 * per class (replacements are offered only where a selected subnet is) and, for a class that
 * resolves to nothing launchable or whose resolution failed, why (its NodePools launch no
 * replacement, and its nodes get no AMI drift verdict). Undefined without a resolver.
 */
async function resolveClasses(
  deps: SnapshotDeps,
  nodeClasses: readonly EC2NodeClass[],
): Promise<
  | {
      imageIds: Record<string, string[]>;
      subnets: Map<string, SubnetInfo[]>;
      reservations: Map<string, CapacityReservation[] | undefined>;
      networks: Record<string, { subnetIds: string[]; securityGroupIds: string[] }>;
      problems: Record<string, string>;
    }
  | undefined
> {
  if (!deps.resolver) return undefined;
  const r = await resolveNodeClasses(deps.resolver, nodeClasses);
  const problems: Record<string, string> = Object.fromEntries(r.problems);
  for (const [name, err] of r.failures) problems[name] = `resolving its selector terms failed: ${err.message}`;
  for (const [name, problem] of Object.entries(problems))
    deps.log?.warn('cannot resolve node class; AMI drift not checked and no replacement launched from it', { nodeClass: name, error: problem });
  return {
    imageIds: Object.fromEntries([...r.resolved].map(([name, res]) => [name, resolvedImageIds(res)])),
    subnets: new Map([...r.resolved].map(([name, res]) => [name, res.subnets])),
    reservations: new Map([...r.resolved].map(([name, res]) => [name, res.capacityReservations])),
    networks: Object.fromEntries(
      [...r.resolved].map(([name, res]) => [name, { subnetIds: res.subnets.map((s) => s.subnetId), securityGroupIds: res.securityGroupIds }]),
    ),
    problems,
  };
}

/**
 * Each instance's subnet and security groups as EC2 lists them (subnet / security-group drift);
 * undefined, and no such drift verdict this pass, without the port or when the list fails.
 */
async function instanceNetworks(deps: SnapshotDeps): Promise<Record<string, InstanceNetwork> | undefined> {
  if (!deps.cloud) return undefined;
  try {
    const instances = await deps.cloud.list();
    return Object.fromEntries(
      instances.map((i) => [
        i.instanceId,
        { ...(i.subnetId ? { subnetId: i.subnetId } : {}), ...(i.securityGroupIds ? { securityGroupIds: i.securityGroupIds } : {}) },
      ]),
    );
  } catch (err) {
    deps.log?.warn('cannot list instances; subnet and security group drift not checked', { error: (err as Error).message });
    return undefined;
  }
}

/**
 * Reads the snapshot at `now`; `recheck`: node names to read live over the picture (see module doc).
 * @throws whatever the ports throw (TransientError when throttled).
 */
export async function readSnapshot(deps: SnapshotDeps, now: Date, opts: { recheck?: readonly string[] } = {}): Promise<DisruptionSnapshot> {
  const [nodePools, nodeClasses, picture, pdbs, daemonSetObjects, nodeClaims, unavailable, listed] = await Promise.all([
    deps.kube.listNodePools(),
    deps.kube.listNodeClasses(),
    readClusterPicture({ ...deps, log: deps.log ?? silent }, now),
    deps.kube.listPodDisruptionBudgets(),
    deps.kube.listObjects('apps/v1', 'DaemonSet'),
    deps.store.list(),
    deps.unavailable.list(Math.floor(now.getTime() / 1000)),
    // the view's nodes are not trusted: with a view store, list the nodes live beside it
    deps.views ? deps.kube.listNodes() : undefined,
  ]);
  let nodes = picture.source === 'live' || !listed ? picture.nodes : listed;
  // A view's pods bound to a node the live list does not have are nobody's.
  const live = new Set(nodes.map((n) => n.metadata.name));
  let pods = [...(nodes === picture.nodes ? picture.boundPods : picture.boundPods.filter((p) => live.has(p.spec.nodeName!))), ...picture.pendingPods];
  if (opts.recheck?.length && picture.source === 'view') ({ nodes, pods } = await withLiveNodes(deps.kube, nodes, pods, opts.recheck));
  // Pods with claims keep to their volumes' topology when consolidation moves them.
  const [resolved, storage, networks] = await Promise.all([resolveClasses(deps, nodeClasses), readStorage(deps.kube, pods), instanceNetworks(deps)]);
  const refreshed = await deps.catalogRefresher?.get(now.getTime()); // live prices / offerings (shipped data locally)
  const budgetHolders: Record<string, string[]> = {};
  if (deps.budgets) {
    const lists = await Promise.all(nodePools.map((p) => deps.budgets!.holders(p.metadata.name)));
    nodePools.forEach((p, i) => (budgetHolders[p.metadata.name] = Object.keys(lists[i])));
  }
  const classByName = new Map(nodeClasses.map((c) => [c.metadata.name, c]));
  const byClass = new Map<string, InstanceType[]>();
  const typesOfClass = (name: string): InstanceType[] => {
    let types = byClass.get(name);
    if (!types) {
      types = loadCatalog({
        region: deps.env.region,
        nodeClass: classByName.get(name),
        unavailable,
        refreshed,
        subnets: resolved?.subnets.get(name),
        settings: catalogSettingsOf(deps.env.settings),
        capacityReservations: reservedCapacityOf(deps.env.settings) ? resolved?.reservations.get(name) : undefined,
      });
      byClass.set(name, types);
    }
    return types;
  };
  // A NodePool launches only the types its node class has an image for (AMI family → OS).
  // Memoized: every simulation asks again for every pool.
  const byPool = new Map<string, InstanceType[]>();
  const instanceTypes = (pool: NodePool): InstanceType[] => {
    const cached = byPool.get(pool.metadata.name);
    if (cached) return cached;
    const name = pool.spec.template.spec.nodeClassRef.name;
    const os = AmiFamilyFeatureTable[amiFamilyOf(classByName.get(name))].os;
    const types = typesOfClass(name).filter((t) => (t.labels[LabelOS] ?? 'linux') === os);
    byPool.set(pool.metadata.name, types);
    return types;
  };
  const packing = choosePacking(nodePools, deps.env.packing).packing;
  const catalog = new Map<string, InstanceType>();
  for (const p of nodePools) for (const t of typesOfClass(p.spec.template.spec.nodeClassRef.name)) if (!catalog.has(t.name)) catalog.set(t.name, t);
  const daemonSets: DaemonSetTemplate[] = daemonSetObjects
    .filter((o) => o.spec?.template)
    .map((o) => ({ metadata: { name: o.metadata.name, namespace: o.metadata.namespace, ...(o.spec.template.metadata ?? {}) }, spec: o.spec.template.spec }));
  return {
    nodePools,
    nodeClasses,
    nodes,
    nodeClaims,
    pods,
    pdbs,
    instanceTypes,
    catalog: [...catalog.values()],
    daemonSets,
    unavailableOfferings: unavailable,
    ...(storage ? { storage } : {}),
    nodePoolHashes: Object.fromEntries(nodePools.map((p) => [p.metadata.name, nodePoolHash(p)])),
    nodeClassHashes: Object.fromEntries(nodeClasses.map((c) => [c.metadata.name, nodeClassHash(c)])),
    budgetHolders,
    ...(resolved ? { resolvedImageIds: resolved.imageIds, resolvedNetworks: resolved.networks, nodeClassProblems: resolved.problems } : {}),
    ...(networks ? { instanceNetworks: networks } : {}),
    // The consolidation simulations schedule and pack as the provisioner would (shared/api/packing.ts).
    settings: {
      spotToSpotConsolidation: (deps.env.settings ?? DefaultSettings).featureGates.SpotToSpotConsolidation,
      staticCapacity: (deps.env.settings ?? DefaultSettings).featureGates.StaticCapacity,
      scheduling: { ...schedulingSettingsOf(deps.env.settings), ...(packing ? { packing } : {}) },
    },
  };
}
