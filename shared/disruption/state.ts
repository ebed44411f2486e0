/**
 * The cluster as disruption sees it, built once per plan from a {@link DisruptionSnapshot}:
 * candidates (managed, initialized nodes not being deleted) with their pods, price, drift,
 * expiry and blocks; budget status per NodePool and reason; and the pieces the scheduling
 * simulation reuses across runs.
 *
 * Candidate rules follow KC pkg/controllers/disruption/types.go `NewCandidate` and
 * pkg/controllers/nodeclaim/disruption/consolidation.go (`Consolidatable`).
 */
import { podsByNode as groupPodsByNode, type Node, type Pod } from '../api/kube.ts';
import { isLaunchableNodeClassRef, type NodePool, type EC2NodeClass } from '../api/nodepool.ts';
import type { NodeClaim } from '../api/nodeclaim.ts';
import { isTrue, getCondition } from '../api/nodeclaim.ts';
import {
  AnnotationDoNotDisrupt,
  AnnotationRebalanceRecommendedAt,
  LabelCapacityType,
  LabelInitialized,
  LabelInstanceType,
  LabelTopologyZone,
  TaintDisrupted,
  type CapacityType,
} from '../api/labels.ts';
import type { InstanceType } from '../catalog/types.ts';
import { budgetStatus, counterLimit } from './budgets.ts';
import { disruptionCost } from './cost.ts';
import { driftReason } from './drift-detection.ts';
import { parseDurationSeconds } from '../api/duration.ts';
import { claimExpireAt } from './claim-expiry.ts';
import { isActive, isDoNotDisruptActive, isEvictable, isReschedulable, isTerminal, PdbLimits, podKey } from './pods.ts';
import type { BlockedCandidate, BudgetStatus, Candidate, DisruptionReason, DisruptionSnapshot } from './types.ts';
import { instanceIdOfClaim } from '../api/provider-id.ts';

/** A Node of a NodeClaim in the store, with its facts, whether or not it can be a candidate. */
export interface ManagedNode {
  node: Node;
  claim: NodeClaim;
  nodePool?: NodePool;
  initialized: boolean;
  ready: boolean;
  deleting: boolean;
}

/** Node counts of one NodePool for its budgets. */
export interface PoolCounts {
  nodes: number;
  /** NotReady or being deleted. */
  disrupting: number;
  /** Of `disrupting`, those without a budget counter slot (the counter does not count them). */
  disruptingNonHolders: number;
}

/** Everything the methods read. Built by {@link buildState}; treat as read-only. */
export interface ClusterState {
  now: Date;
  snapshot: DisruptionSnapshot;
  nodePools: Map<string, NodePool>;
  nodeClasses: Map<string, EC2NodeClass>;
  /** Instance types by name (prices, labels). */
  catalog: Map<string, InstanceType>;
  managed: ManagedNode[];
  /** Nodes that could be disrupted (blocked ones included, with `blockedBy`). */
  candidates: Candidate[];
  /** Blocks common to every method (not initialized, being deleted, unknown NodePool). */
  blocked: BlockedCandidate[];
  /** Pods per node name (non-terminal). */
  podsByNode: Map<string, Pod[]>;
  /** Managed, initialized node counts and disrupting counts per NodePool (and how many of those hold no counter slot). */
  poolCounts: Map<string, PoolCounts>;
  /** Budget status per `pool/reason`, computed lazily. */
  budgetCache: Map<string, BudgetStatus>;
  /** Names of nodes to treat as leaving (forceful expirations found this pass). */
  leaving: Set<string>;
  /** The cluster's PDBs with what each allows now. */
  pdbLimits: PdbLimits;
}

function isNodeReady(n: Node): boolean {
  return n.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
}

/**
 * Whether `node` is the Node of `claim`: the same instance (the claim's providerID) and, once the
 * claim has registered, the same name. A Node that names another claim's instance is nobody's.
 */
export function isNodeOfClaim(node: Node, claim: NodeClaim): boolean {
  return (
    claim.providerId !== undefined && node.spec?.providerID === claim.providerId && (claim.nodeName === undefined || claim.nodeName === node.metadata.name)
  );
}

/**
 * Why the live Node (GET, undefined = absent) does not let `claim` be acted on, or undefined when
 * it does: a Node must be the claim's ({@link isNodeOfClaim}), or be absent while the claim never
 * registered one (phase Pending or Launched, no node name).
 */
export function liveNodeProblem(claim: NodeClaim, live: Node | undefined): string | undefined {
  if (live)
    return isNodeOfClaim(live, claim)
      ? undefined
      : `node ${live.metadata.name} has providerID ${live.spec?.providerID ?? 'none'}, nodeclaim ${claim.name} has ${claim.providerId ?? 'none'}`;
  if (claim.nodeName === undefined && (claim.phase === 'Pending' || claim.phase === 'Launched')) return undefined;
  return `node ${claim.nodeName ?? claim.name} of nodeclaim ${claim.name} (${claim.phase}) is not in the cluster`;
}

/** Claims by providerID, for {@link claimOfNode}. */
export function claimsByProviderId(claims: readonly NodeClaim[]): Map<string, NodeClaim[]> {
  const out = new Map<string, NodeClaim[]>();
  for (const c of claims) if (c.providerId !== undefined) out.set(c.providerId, [...(out.get(c.providerId) ?? []), c]);
  return out;
}

/** The NodeClaim `node` belongs to ({@link isNodeOfClaim}), if any. */
export function claimOfNode(node: Node, byProviderId: Map<string, NodeClaim[]>): NodeClaim | undefined {
  const pid = node.spec?.providerID;
  return pid === undefined ? undefined : byProviderId.get(pid)?.find((c) => isNodeOfClaim(node, c));
}

function priceOf(it: InstanceType | undefined, zone: string, capacityType: string, claim?: NodeClaim): number | undefined {
  const offering = it?.offerings.find((o) => o.zone === zone && o.capacityType === capacityType);
  if (offering) return offering.priceUsdPerHour;
  const any = it?.offerings.filter((o) => o.capacityType === capacityType).map((o) => o.priceUsdPerHour);
  if (any && any.length > 0) return Math.min(...any);
  return claim?.priceUsdPerHour;
}

function latest(times: (string | undefined)[]): number {
  let best = Number.NEGATIVE_INFINITY;
  for (const t of times) {
    const v = t ? Date.parse(t) : NaN;
    if (!Number.isNaN(v) && v > best) best = v;
  }
  return best;
}

/**
 * Why a node's graceful disruption is forbidden: do-not-disrupt on the node or a pod, or a PDB.
 * `pods` marks a block by the node's pods (a pod's do-not-disrupt, a PDB: KC `PodBlockEvictionError`),
 * which eventual disruption passes when the claim has a terminationGracePeriod (method.ts `candidateBlock`).
 */
function gracefulBlock(node: Node, pods: readonly Pod[], pdbs: PdbLimits, now: Date): { reason: string; pods: boolean } | undefined {
  if (node.metadata.annotations?.[AnnotationDoNotDisrupt] === 'true') return { reason: `node has "${AnnotationDoNotDisrupt}" annotation`, pods: false };
  // Only active pods block with do-not-disrupt (mirror and DaemonSet pods included); only pods
  // the drain would evict can be held back by a PDB (KC `ValidatePodsDisruptable`).
  for (const p of pods)
    if (isActive(p) && isDoNotDisruptActive(p, now)) return { reason: `pod ${podKey(p)} has "${AnnotationDoNotDisrupt}" annotation`, pods: true };
  for (const p of pods) {
    if (!isEvictable(p, now)) continue;
    const why = pdbs.blocks(p);
    if (why) return { reason: why, pods: true };
  }
  return undefined;
}

function blockFields(b: { reason: string; pods: boolean } | undefined): Pick<Candidate, 'blockedBy' | 'blockedByPods'> {
  return b ? { blockedBy: b.reason, ...(b.pods ? { blockedByPods: true } : {}) } : {};
}

/**
 * Builds the state for one plan at `now`.
 * @throws ValidationError when a NodePool budget schedule or duration does not parse.
 */
export function buildState(snapshot: DisruptionSnapshot, now: Date): ClusterState {
  const nodePools = new Map(snapshot.nodePools.map((p) => [p.metadata.name, p]));
  const nodeClasses = new Map((snapshot.nodeClasses ?? []).map((c) => [c.metadata.name, c]));
  const catalog = new Map<string, InstanceType>();
  if (snapshot.catalog) for (const it of snapshot.catalog) catalog.set(it.name, it);
  else for (const p of snapshot.nodePools) for (const it of snapshot.instanceTypes(p)) if (!catalog.has(it.name)) catalog.set(it.name, it);

  const podsByNode = groupPodsByNode(snapshot.pods.filter((p) => !isTerminal(p)));
  const pdbs = new PdbLimits(snapshot.pdbs ?? [], snapshot.pods);
  // Nodes a pending pod is nominated to (status.nominatedNodeName): kept for that pod, not
  // disrupted gracefully (Karpenter's "node is nominated for a pending pod").
  const nominated = new Set(
    snapshot.pods.filter((p) => !p.spec.nodeName && isActive(p) && p.status?.nominatedNodeName).map((p) => p.status!.nominatedNodeName!),
  );
  const byProviderId = claimsByProviderId(snapshot.nodeClaims ?? []);
  const holders = new Set(Object.values(snapshot.budgetHolders ?? {}).flat());

  const managed: ManagedNode[] = [];
  const candidates: Candidate[] = [];
  const blocked: BlockedCandidate[] = [];
  const poolCounts = new Map<string, PoolCounts>();

  for (const node of snapshot.nodes) {
    // Only a Node of a NodeClaim in the store is nodefleet's (DESIGN.md "Trust"): a node group's
    // node, another Karpenter's, or a node only a view claims exists, is capacity pods may use,
    // never a candidate and never counted in a budget. Its NodePool, instance and age are the claim's.
    const claim = claimOfNode(node, byProviderId);
    if (!claim) continue;
    const poolName = claim.nodePool;
    const name = node.metadata.name;
    const nodePool = nodePools.get(poolName);
    if (nodePool && !isLaunchableNodeClassRef(nodePool.spec.template.spec.nodeClassRef)) continue; // another provider's node
    const labels = node.metadata.labels ?? {};
    const initialized = labels[LabelInitialized] === 'true' || isTrue(claim, 'Initialized');
    const ready = isNodeReady(node);
    const holder = holders.has(name) || holders.has(claim.name);
    const deleting =
      holder ||
      !!node.metadata.deletionTimestamp ||
      claim.phase === 'Terminating' ||
      claim.phase === 'Terminated' ||
      isTrue(claim, 'InstanceTerminating') ||
      !!node.spec?.taints?.some((t) => t.key === TaintDisrupted.key);
    managed.push({ node, claim, nodePool, initialized, ready, deleting });

    if (initialized) {
      const c = poolCounts.get(poolName) ?? { nodes: 0, disrupting: 0, disruptingNonHolders: 0 };
      c.nodes++;
      if (!ready || deleting) {
        c.disrupting++;
        if (!holder) c.disruptingNonHolders++;
      }
      poolCounts.set(poolName, c);
    }
    if (!nodePool) {
      blocked.push({ nodeName: name, nodePool: poolName, method: 'candidates', reason: `nodepool "${poolName}" not found` });
      continue;
    }
    if (!initialized) {
      blocked.push({ nodeName: name, nodePool: poolName, method: 'candidates', reason: 'node is not initialized' });
      continue;
    }
    if (deleting) {
      blocked.push({ nodeName: name, nodePool: poolName, method: 'candidates', reason: 'node is being deleted' });
      continue;
    }

    const instanceTypeName = claim.instanceType ?? labels[LabelInstanceType] ?? '';
    const zone = claim.zone ?? labels[LabelTopologyZone] ?? '';
    const capacityType = (claim.capacityType ?? labels[LabelCapacityType] ?? 'on-demand') as CapacityType;
    const it = catalog.get(instanceTypeName);
    const pods = podsByNode.get(name) ?? [];
    const reschedulablePods = pods.filter(isReschedulable);
    const createdAt = claim.createdAt;
    const createdMs = Date.parse(createdAt);
    const expireAfterSeconds = parseDurationSeconds(nodePool.spec.template.spec.expireAfter);
    const expireAt = claimExpireAt(claim, nodePool);
    const nodeClassName = nodePool.spec.template.spec.nodeClassRef.name;
    const driftInput = {
      node,
      claim,
      nodePool,
      nodeClass: nodeClasses.get(nodeClassName),
      labels: { ...(it?.labels ?? {}), ...labels },
      instanceTypeKnown: catalog.size === 0 || it !== undefined,
      nodePoolHash: snapshot.nodePoolHashes?.[poolName],
      nodeClassHash: snapshot.nodeClassHashes?.[nodeClassName],
      resolvedImageIds: snapshot.resolvedImageIds?.[nodeClassName],
      resolvedNetwork: snapshot.resolvedNetworks?.[nodeClassName],
      instanceNetwork: snapshot.instanceNetworks?.[instanceIdOfClaim(claim) ?? ''],
    };
    const drifted = driftReason(driftInput);
    // A recorded Drifted condition is this loop's own earlier finding: re-checked without it, so it clears once the drift is gone.
    const driftObserved = getCondition(claim, 'Drifted')
      ? driftReason({ ...driftInput, claim: { ...claim, conditions: claim.conditions.filter((x) => x.type !== 'Drifted') } })
      : drifted;
    // Karpenter's Consolidatable: consolidateAfter has passed since the last pod event (or since
    // initialization when no pod ever came or went).
    const consolidateAfterSeconds = parseDurationSeconds(nodePool.spec.disruption?.consolidateAfter ?? '0s');
    const initializedAt = getCondition(claim, 'Initialized')?.lastTransitionTime;
    const lastPodEvent = latest([
      claim.annotations?.['nodefleet.io/last-pod-event-time'],
      initializedAt,
      createdAt,
      node.metadata.creationTimestamp, // the live Node's: a later start only delays consolidation
      ...pods.map((p) => p.status?.startTime ?? p.metadata.creationTimestamp),
    ]);
    const consolidatable = consolidateAfterSeconds !== undefined && now.getTime() - lastPodEvent >= consolidateAfterSeconds * 1000;

    candidates.push({
      nodeName: name,
      nodeClaim: claim.name,
      nodePool: poolName,
      instanceType: instanceTypeName,
      zone,
      capacityType,
      priceUsdPerHour: priceOf(it, zone, capacityType, claim),
      instanceId: instanceIdOfClaim(claim),
      providerID: claim.providerId,
      reschedulablePods,
      disruptionCost: disruptionCost(reschedulablePods, (now.getTime() - createdMs) / 1000, expireAfterSeconds),
      createdAt,
      drifted,
      ...(drifted && getCondition(claim, 'Drifted')?.status === 'True' ? { driftedAt: getCondition(claim, 'Drifted')!.lastTransitionTime } : {}),
      ...(driftObserved ? { driftObserved } : {}),
      expireAt,
      consolidatable,
      ...blockFields(nominated.has(name) ? { reason: 'node is nominated for a pending pod', pods: false } : gracefulBlock(node, pods, pdbs, now)),
      ...(claim.terminationGracePeriodSeconds !== undefined ? { terminationGracePeriodSeconds: claim.terminationGracePeriodSeconds } : {}),
      ...(claim.annotations?.[AnnotationRebalanceRecommendedAt] ? { rebalanceRecommendedAt: claim.annotations[AnnotationRebalanceRecommendedAt] } : {}),
    });
  }

  return {
    now,
    snapshot,
    nodePools,
    nodeClasses,
    catalog,
    managed,
    candidates,
    blocked,
    podsByNode,
    poolCounts,
    budgetCache: new Map(),
    leaving: new Set(),
    pdbLimits: pdbs,
  };
}

/**
 * The budget status of a pool for a reason, counting nodes already leaving this pass.
 * @throws ValidationError when a budget schedule does not parse.
 */
export function budgetFor(state: ClusterState, nodePool: string, reason: DisruptionReason): BudgetStatus {
  const key = `${nodePool}/${reason}`;
  const cached = state.budgetCache.get(key);
  if (cached) return cached;
  const pool = state.nodePools.get(nodePool);
  const counts = state.poolCounts.get(nodePool) ?? { nodes: 0, disrupting: 0, disruptingNonHolders: 0 };
  let leaving = 0;
  for (const c of state.candidates) if (c.nodePool === nodePool && state.leaving.has(c.nodeName)) leaving++;
  const status = pool
    ? budgetStatus(pool, reason, counts.nodes, counts.disrupting + leaving, state.now)
    : { nodePool, reason, nodes: counts.nodes, disrupting: counts.disrupting, cap: 0, allowed: 0 };
  state.budgetCache.set(key, status);
  return status;
}

/**
 * Takes candidates in order while their pool's budget for `reason` allows; the rest are
 * reported as blocked by the budget (KC disruption methods filter candidates this way).
 */
export function withinBudgets(
  state: ClusterState,
  candidates: readonly Candidate[],
  reason: DisruptionReason,
  method: BlockedCandidate['method'],
  blocked: BlockedCandidate[],
): Candidate[] {
  const remaining = new Map<string, number>();
  const out: Candidate[] = [];
  for (const c of candidates) {
    const left = remaining.get(c.nodePool) ?? budgetFor(state, c.nodePool, reason).allowed;
    if (left <= 0) {
      blocked.push({
        nodeName: c.nodeName,
        nodePool: c.nodePool,
        method,
        reason: `disruption budget for ${reason} in nodepool "${c.nodePool}" is spent (${describeBudget(budgetFor(state, c.nodePool, reason))})`,
      });
      remaining.set(c.nodePool, 0);
      continue;
    }
    remaining.set(c.nodePool, left - 1);
    out.push(c);
  }
  return out;
}

/**
 * The limit to hand the budget counter for `nodePool` and `reason`: the cap minus disrupting
 * nodes that hold no slot (the counter counts its holders itself). MAX_SAFE_INTEGER = unbounded.
 */
export function counterLimitFor(state: ClusterState, nodePool: string, reason: DisruptionReason): number {
  const b = budgetFor(state, nodePool, reason);
  const counts = state.poolCounts.get(nodePool);
  let leaving = 0;
  for (const c of state.candidates) if (c.nodePool === nodePool && state.leaving.has(c.nodeName)) leaving++;
  return counterLimit(b, (counts?.disruptingNonHolders ?? 0) + leaving);
}

/** A budget status in words, for the reason a candidate is skipped: cap, pool size, nodes already disrupting. */
export function describeBudget(b: BudgetStatus): string {
  return `allows ${b.cap ?? 'unlimited'} of ${b.nodes} nodes, ${b.disrupting} already disrupting`;
}
