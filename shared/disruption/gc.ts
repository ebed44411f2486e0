/**
 * Garbage collection decisions (pure; functions/gc/handler.ts runs exactly this plan): NodeClaims
 * that never launched or registered in time, NodeClaims whose instance is gone or whose Node was
 * deleted out of band, expired claim
 * records, instances tagged as ours that no NodeClaim owns (only those launched after the table's
 * claims epoch: older ones are reported, see {@link GcInput.tableEpochMs}; and only those without a
 * live Node: see {@link GcPlan.orphansWithNode}), terminations that must be carried on
 * (an execution that ended unfinished or went silent), the deadline backstop, and disruption
 * budget slots / `karpenter.sh/disrupted` taints that nothing is working on any more; and the
 * terminations a deleted Node, NodeClaim object or NodePool asks for (shared/disruption/deletion.ts).
 *
 * Sources: KC pkg/controllers/nodeclaim/lifecycle/liveness.go (launch timeout 5 min,
 * registration timeout 15 min from launch; nodefleet adds an initialization timeout, see
 * {@link InitializationTimeoutSeconds}), pkg/controllers/nodeclaim/garbagecollection/controller.go
 * (claims whose cloud instance is gone), KA pkg/controllers/nodeclaim/garbagecollection
 * (instances without a claim, after a grace period so a launch in progress is not reaped),
 * KC node/termination (after terminationGracePeriod the node goes regardless; a deleted Node's
 * finalizer deletes its NodeClaim and so terminates the instance).
 *
 * A claim's instance is terminated, and its Node deleted, only when the instance's tags name the
 * claim, and a Node only when it is the claim's (shared/api/termination-target.ts
 * instanceDisagreement and nodeDisagreement, the termination tasks' rules): a record naming another
 * claim's instance or Node — a forged or corrupted item — is deleted, and nothing else is done for it.
 */
import type { Node } from '../api/kube.ts';
import type { KubeNodeClaim, NodeClaim } from '../api/nodeclaim.ts';
import { getCondition, isExpired, isTrue } from '../api/nodeclaim.ts';
import type { TerminationInput } from '../api/ports.ts';
import { NodePoolTagKey } from '../api/iam-policy.ts';
import { TagNodeClaim, TagNodefleetCluster, TaintUnregistered } from '../api/labels.ts';
import { instanceDisagreement, nodeDisagreement, requestDisagreement } from '../api/termination-target.ts';
import { instanceIdOfClaim, instanceIdOfProviderId } from '../api/provider-id.ts';
import { planNodeRepair, type RepairPlan } from './repair.ts';
import { deletionRequests, type DeletionCause, type NodePoolPresence } from './deletion.ts';

/** A claim that never reaches Launched within this (from creation) is deleted (Karpenter `LaunchTimeout`). */
export const LaunchTimeoutSeconds = 5 * 60;
/** A launched claim whose node never registers within this (from launch) is deleted (Karpenter `registrationTimeout`). */
export const RegistrationTimeoutSeconds = 15 * 60;
/**
 * A claim whose node registered but never initializes (Ready, startup taints gone) within this
 * (from registration) is deleted and its instance terminated. Karpenter has no initialization
 * timeout, but its node repair (NodeRepair feature gate, off by default; shared/disruption/repair.ts)
 * replaces a node whose Ready condition stays False/Unknown for 30 minutes; without it a claim stuck
 * before Initialized keeps the pods it was made for nominated to it for ever (chaos never-ready:
 * those pods stayed Pending for good). 15 minutes is Karpenter's registration TTL: the same
 * "this node will not become usable" judgement, one step later.
 */
export const InitializationTimeoutSeconds = 15 * 60;
/**
 * An instance without a claim is left alone this long after launch, and a claim's instance is not
 * judged gone this soon after launch: CreateFleet returns before the claim write that records the
 * instance id, and DescribeInstances is eventually consistent (KA garbagecollection: 30 s).
 */
export const OrphanInstanceGraceSeconds = 30;
/**
 * How much earlier than the claims epoch an instance's launch time may read and still count as
 * launched after it (see {@link GcInput.tableEpochMs}). EC2 reports `LaunchTime` in whole seconds,
 * truncated, and its clock and Lambda's (both NTP-synchronised) may differ by a fraction of a
 * second: a launch for a claim written just after the epoch can read up to ~1 s before it. The
 * margin is kept this small on purpose: an instance launched within it before the epoch — by
 * functions still writing to a previous table — is treated as the table's own, and terminated if
 * no claim owns it.
 */
export const ClaimsEpochSkewSeconds = 2;
/**
 * A terminating claim still running this long after its termination deadline has its instance
 * terminated by gc itself (the execution normally does it at the deadline; this is the backstop
 * when it cannot). gc runs every minute, so an instance outlives its deadline by at most ~2 min.
 */
export const DeadlineBackstopSeconds = 60;
/**
 * A termination attempt that has shown no sign of life (claim `termination.heartbeatAt`, written at
 * least every 10 minutes while it drains) for this long is treated as lost and carried on as the
 * next attempt. Longer than any Wait the state machine makes (≤ 5 min) plus its retries.
 */
export const TerminationStaleSeconds = 30 * 60;
/**
 * Restart delay after the n-th failed attempt: 1, 2, 3, 3 … minutes. Capped at 3 minutes so a
 * terminating node is never left without a running attempt for more than the cap plus one gc
 * period (4 minutes; "never abandoned", test/chaos/invariants.ts AbandonBoundSeconds): a
 * permanent error (IAM) then costs one short failing execution every ~4 minutes (about 20 state
 * transitions, a few cents a day) and its alarm, never a node given up on. Past the termination's
 * deadline there is no delay at all: the next gc pass starts the next attempt, which goes straight
 * to the cutoff and TerminateInstances (the deadline is the promise; gc's own backstop terminates
 * the instance too, but only an attempt deletes the Node and finishes the claim).
 */
export const TerminationRestartBackoff = { baseSeconds: 60, maxSeconds: 180 };
/**
 * A disruption run holds each budget slot it takes as a lease: the holder's time in the budget
 * item is when the slot was taken or last renewed (BudgetCounter.renew), and the disruption loop
 * renews it at every step of its command — validation, launch, each replacement poll, the
 * terminations' start — at most ReplacementPollSeconds (15 s) apart, plus its Task retries
 * (2 + 4 + 8 s) and Lambda time: well under a minute. A slot not renewed for this long, on a node
 * that is not being terminated (a termination owns its slot and releases it in Finalize), is
 * released and its node's `karpenter.sh/disrupted` taint removed: the run that held it is gone
 * (its Abandon failed too, or the execution died). A disrupted taint on such a node with no slot
 * at all is removed once it is this old (its `timeAdded`): every run takes its slot before it
 * taints. gc runs every minute, so a taint or slot is left without work at most this + 60 s
 * (4 minutes) — the bound test/chaos/invariants.ts checks. A loop that finds a lease gone (renew
 * false) abandons its command rather than act without its slot.
 */
export const DisruptionLeaseSeconds = 3 * 60;
/**
 * A claim whose node registered and later disappeared (deleted out of band: `kubectl delete
 * node`, or a node controller) is garbage-collected once its Registered condition is this old:
 * Karpenter's Node finalizer turns a Node deletion into the NodeClaim's deletion, which
 * terminates the instance; nodefleet has no finalizer on the Node, so gc does it. The grace
 * covers gc reading claims and nodes in parallel (a claim registered between the two reads).
 */
export const NodeGoneGraceSeconds = 30;

const TaintDisruptedKey = 'karpenter.sh/disrupted';

/** An instance as the cloud reports it (subset). */
export interface GcInstance {
  instanceId: string;
  state: string;
  /** RFC 3339. */
  launchTime?: string;
  tags: Record<string, string>;
}

export interface GcInput {
  /**
   * This stack's cluster. An instance no claim owns is nodefleet's (an orphan to terminate, or to
   * report) only when tagged `nodefleet.io/cluster=<cluster>`: Karpenter's own instances beside
   * nodefleet carry karpenter.sh/* tags too, and are never touched (docs/migration.md).
   */
  cluster: string;
  nodeClaims: NodeClaim[];
  nodes: Node[];
  /** Instances the cloud reports (every claim's instance included, if it exists); undefined = unknown (then no instance-based decision is made). */
  instances?: GcInstance[];
  /** Budget counter holders per NodePool (holder → RFC 3339 time taken); absent = no budget decisions. */
  budgetHolders?: Record<string, Record<string, string>>;
  /**
   * When the table began keeping this cluster's claims (epoch ms: NodeClaimStore.claimsEpochMs).
   * "No claim owns this instance" means "orphan" only for an instance launched after it: every
   * claim is written before its instance is launched, so a later instance without a claim lost its
   * claim (terminated after {@link OrphanInstanceGraceSeconds}). An instance launched before it
   * (minus {@link ClaimsEpochSkewSeconds}) is one whose claim this table never held — the table was
   * replaced (adding a local index replaces it), emptied, lost or restored — and is not
   * terminated: it is reported in {@link GcPlan.unownedBeforeEpoch} for an operator to adopt or
   * remove. Karpenter has no such rule (its NodeClaims live in the cluster, not in a table).
   */
  tableEpochMs: number;
  /** The NodeRepair feature gate: plan node repair ({@link GcPlan.repair}) on the live Nodes. */
  nodeRepair?: boolean;
  /** The live NodeClaim objects; absent = not listed (no NodeClaim deletion is acted on). */
  nodeClaimObjects?: KubeNodeClaim[];
  /** The live NodePools (listNodePoolNames); absent = unknown (no NodePool deletion is acted on). */
  nodePools?: NodePoolPresence[];
}

export type GcDeleteReason = 'launch_timeout' | 'registration_timeout' | 'initialization_timeout' | 'instance_gone' | 'node_gone' | 'expired';

export interface GcPlan {
  /** Claims to delete: terminate `instanceId` first if given, delete `nodeName` if given. */
  deleteNodeClaims: { nodeClaim: string; reason: GcDeleteReason; instanceId?: string; nodeName?: string }[];
  terminateInstances: { instanceId: string; reason: 'orphan' | 'termination_deadline'; nodeClaim?: string }[];
  /** Terminations to carry on as their next attempt (write `attempt` on the claim, then start `input`). */
  restartTerminations: { nodeClaim: string; reason: 'failed' | 'continued' | 'stale'; input: TerminationInput & { attempt: number } }[];
  releaseBudgetSlots: { nodePool: string; holder: string; reason: 'gone' | 'abandoned' }[];
  /** Nodes whose karpenter.sh/disrupted taint nothing is working on. */
  untaintNodes: { nodeName: string; reason: 'abandoned' }[];
  /**
   * Running instances tagged as ours that no claim owns, launched before the table's claims epoch
   * ({@link GcInput.tableEpochMs}): left running and reported, every pass, until adopted or removed.
   * `nodeClaim` / `nodePool` are the instance's `karpenter.sh/nodeclaim` / `karpenter.sh/nodepool` tags.
   */
  unownedBeforeEpoch: { instanceId: string; launchTime?: string; nodeClaim?: string; nodePool?: string }[];
  /**
   * Running instances tagged as ours that no claim owns, launched after the claims epoch, whose Node
   * is live and registered (a Node's spec.providerID names the instance, and it no longer carries
   * `karpenter.sh/unregistered`): their claim was lost (deleted, a malformed
   * item, a point-in-time restore of the table) but the node may run pods, so gc never terminates
   * them raw (no drain) and the termination state machine refuses a node without a claim: left
   * running and reported, every pass, for an operator to drain and remove (docs/deploy.md). An
   * orphan without a live registered Node has no workload pods and is terminated (`terminateInstances`, `orphan`).
   */
  orphansWithNode: { instanceId: string; nodeName: string; launchTime?: string; nodeClaim?: string; nodePool?: string }[];
  /** Node repair (with {@link GcInput.nodeRepair}; shared/disruption/repair.ts), over the claims this plan does not delete. */
  repair: RepairPlan;
  /**
   * Claims whose Node or NodeClaim object is being deleted (the finalizer holding it) or whose
   * NodePool is, and whose termination has not started (shared/disruption/deletion.ts): started as
   * Karpenter's termination, reason manual, no budget. The agent's event starts a deleted Node's
   * at once; this pass finds it when that event was lost, and a deleted NodeClaim or NodePool.
   */
  startTerminations: { nodeClaim: string; cause: DeletionCause }[];
}

function secondsSince(iso: string | undefined, nowMs: number): number {
  const t = iso ? Date.parse(iso) : NaN;
  return Number.isNaN(t) ? Infinity : (nowMs - t) / 1000;
}

const Gone = new Set(['terminated']);
const NotRunning = new Set(['terminated', 'shutting-down']);

/** Launched before the claims epoch (less the skew margin); an unknown launch time counts as before (kept, never terminated on a guess). */
function launchedBeforeEpoch(i: GcInstance, tableEpochMs: number): boolean {
  const launchedMs = i.launchTime ? Date.parse(i.launchTime) : NaN;
  return Number.isNaN(launchedMs) || launchedMs < tableEpochMs - ClaimsEpochSkewSeconds * 1000;
}

/** A registered claim whose Node is gone (by name and by providerID) for {@link NodeGoneGraceSeconds}. */
function nodeGone(c: NodeClaim, nodeNames: Set<string>, providerIds: Set<string | undefined>, nowMs: number): boolean {
  const reg = getCondition(c, 'Registered');
  if (reg?.status !== 'True') return false;
  if (c.nodeName !== undefined && nodeNames.has(c.nodeName)) return false;
  if (c.providerId !== undefined && providerIds.has(c.providerId)) return false;
  return secondsSince(reg.lastTransitionTime, nowMs) >= NodeGoneGraceSeconds;
}

/** Seconds to wait after the n-th failure (n ≥ 1) before restarting. */
export function restartBackoffSeconds(failures: number): number {
  const b = TerminationRestartBackoff;
  return Math.min(b.maxSeconds, b.baseSeconds * 2 ** Math.max(0, failures - 1));
}

/** The next attempt of a terminating claim, or undefined when its current attempt may still be working. */
function restartOf(c: NodeClaim, nowMs: number): GcPlan['restartTerminations'][number] | undefined {
  const t = c.termination;
  if (!t) return undefined;
  let reason: 'failed' | 'continued' | 'stale' | undefined;
  if (t.ended?.attempt === t.attempt) {
    // A refused attempt (its claim disagrees with the live Node or instance) would be refused again.
    if (t.ended.outcome === 'refused') return undefined;
    if (t.ended.outcome === 'continued') reason = 'continued';
    else if (t.deadlineEpochMs !== undefined && nowMs >= t.deadlineEpochMs) reason = 'failed';
    else if (secondsSince(t.ended.at, nowMs) >= restartBackoffSeconds(t.failures)) reason = 'failed';
  } else if (secondsSince(t.heartbeatAt ?? t.startedAt, nowMs) >= TerminationStaleSeconds) reason = 'stale';
  if (!reason) return undefined;
  const input: TerminationInput & { attempt: number } = {
    nodeClaim: c.name,
    ...(c.nodeName ? { nodeName: c.nodeName } : {}),
    ...(instanceIdOfClaim(c) ? { instanceId: instanceIdOfClaim(c)! } : {}),
    reason: t.reason as TerminationInput['reason'],
    ...(t.deadlineEpochMs !== undefined ? { deadlineEpochMs: t.deadlineEpochMs } : {}),
    ...(t.budgetNodePool ? { budgetNodePool: t.budgetNodePool } : {}),
    attempt: t.attempt + 1,
  };
  return { nodeClaim: c.name, reason, input };
}

/**
 * The terminations to carry on at `now` ({@link restartOf}), from the claims alone: what a gc pass
 * still does when its list of instances, nodes or NodePools fails (functions/gc/handler.ts).
 */
export function terminationRestarts(nodeClaims: readonly NodeClaim[], now: Date): GcPlan['restartTerminations'] {
  return nodeClaims.filter((c) => c.phase === 'Terminating').flatMap((c) => restartOf(c, now.getTime()) ?? []);
}

/** What gc should do at `now`. Pure. */
export function planGarbageCollection(input: GcInput, now: Date): GcPlan {
  const out: GcPlan = {
    deleteNodeClaims: [],
    terminateInstances: [],
    restartTerminations: [],
    releaseBudgetSlots: [],
    untaintNodes: [],
    unownedBeforeEpoch: [],
    orphansWithNode: [],
    startTerminations: [],
    repair: { repair: [], blocked: [] },
  };
  const nowMs = now.getTime();
  const byId = input.instances ? new Map(input.instances.map((i) => [i.instanceId, i])) : undefined;
  const nodeProviderIds = new Set(input.nodes.map((n) => n.spec?.providerID).filter(Boolean));
  const nodeNames = new Set(input.nodes.map((n) => n.metadata.name));
  const nodesByName = new Map(input.nodes.map((n) => [n.metadata.name, n]));
  // The claim's Node to delete with it: the live Node of that name only when it is the claim's
  // (its providerID and NodePool, the claim's own ids agreeing); another claim's Node is never deleted for it.
  const nodeOf = (c: NodeClaim): { nodeName?: string } => {
    const n = c.nodeName === undefined ? undefined : nodesByName.get(c.nodeName);
    return n && nodeDisagreement(c, n) === undefined && requestDisagreement(c, {}) === undefined ? { nodeName: c.nodeName } : {};
  };
  // Registered Nodes by instance: a Node still carrying karpenter.sh/unregistered was never
  // registered to a claim (registration removes the taint), so no workload pod runs on it.
  const nodeByInstance = new Map<string, string>();
  for (const n of input.nodes) {
    const id = instanceIdOfProviderId(n.spec?.providerID);
    if (id && !(n.spec?.taints ?? []).some((t) => t.key === TaintUnregistered.key)) nodeByInstance.set(id, n.metadata.name);
  }
  const deleted = new Set<string>();
  for (const c of input.nodeClaims) {
    const id = instanceIdOfClaim(c);
    const inst = id && byId ? byId.get(id) : undefined;
    // Whether EC2 says the instance is the claim's (module doc): only then is it terminated for it.
    const own = inst !== undefined && instanceDisagreement(c, inst) === undefined;
    if (c.phase === 'Terminated') {
      if (isExpired(c, now)) {
        out.deleteNodeClaims.push({ nodeClaim: c.name, reason: 'expired' });
        deleted.add(c.name);
      }
      continue;
    }
    if (c.phase === 'Terminating') {
      const restart = restartOf(c, nowMs);
      if (restart) out.restartTerminations.push(restart);
      const deadline = c.termination?.deadlineEpochMs;
      if (id && inst && own && !NotRunning.has(inst.state) && deadline !== undefined && nowMs >= deadline + DeadlineBackstopSeconds * 1000) {
        out.terminateInstances.push({ instanceId: id, reason: 'termination_deadline', nodeClaim: c.name });
      }
      continue;
    }
    const launchedAt = getCondition(c, 'Launched')?.status === 'True' ? getCondition(c, 'Launched')!.lastTransitionTime : undefined;
    const launched = launchedAt !== undefined || id !== undefined;
    const registered =
      isTrue(c, 'Registered') || (c.nodeName !== undefined && nodeNames.has(c.nodeName)) || (c.providerId !== undefined && nodeProviderIds.has(c.providerId));
    const remove = (reason: GcDeleteReason, opts: { instanceId?: string; nodeName?: string }) => {
      out.deleteNodeClaims.push({
        nodeClaim: c.name,
        reason,
        ...(opts.instanceId ? { instanceId: opts.instanceId } : {}),
        ...(opts.nodeName ? { nodeName: opts.nodeName } : {}),
      });
      deleted.add(c.name);
    };
    if (!launched) {
      if (secondsSince(c.createdAt, nowMs) >= LaunchTimeoutSeconds) remove('launch_timeout', {});
      continue;
    }
    const sinceLaunch = secondsSince(launchedAt ?? c.createdAt, nowMs);
    if (byId && id && sinceLaunch > OrphanInstanceGraceSeconds && (!inst || Gone.has(inst.state))) {
      remove('instance_gone', nodeOf(c));
      continue;
    }
    if (!registered && sinceLaunch >= RegistrationTimeoutSeconds) remove('registration_timeout', own ? { instanceId: id, ...nodeOf(c) } : {});
    else if (nodeGone(c, nodeNames, nodeProviderIds, nowMs)) remove('node_gone', own && !NotRunning.has(inst.state) ? { instanceId: id } : {});
    else if (
      isTrue(c, 'Registered') &&
      !isTrue(c, 'Initialized') &&
      secondsSince(getCondition(c, 'Registered')!.lastTransitionTime, nowMs) >= InitializationTimeoutSeconds
    ) {
      remove('initialization_timeout', own ? { instanceId: id, ...nodeOf(c) } : {});
    }
  }

  // Instances no claim owns. A claim that has not recorded its instance yet owns the instance tagged with its name.
  const owned = new Set(
    input.nodeClaims
      .filter((c) => !deleted.has(c.name))
      .map(instanceIdOfClaim)
      .filter(Boolean),
  );
  const recording = new Set(
    input.nodeClaims.filter((c) => !deleted.has(c.name) && instanceIdOfClaim(c) === undefined && c.phase !== 'Terminated').map((c) => c.name),
  );
  for (const i of input.instances ?? []) {
    if (NotRunning.has(i.state) || owned.has(i.instanceId)) continue;
    if (i.tags[TagNodefleetCluster] !== input.cluster) continue; // not launched by nodefleet for this cluster
    if (recording.has(i.tags[TagNodeClaim] ?? '')) continue;
    if (secondsSince(i.launchTime, nowMs) < OrphanInstanceGraceSeconds) continue;
    if (out.deleteNodeClaims.some((d) => d.instanceId === i.instanceId)) continue;
    const report = {
      instanceId: i.instanceId,
      ...(i.launchTime ? { launchTime: i.launchTime } : {}),
      ...(i.tags[TagNodeClaim] ? { nodeClaim: i.tags[TagNodeClaim] } : {}),
      ...(i.tags[NodePoolTagKey] ? { nodePool: i.tags[NodePoolTagKey] } : {}),
    };
    if (launchedBeforeEpoch(i, input.tableEpochMs)) {
      out.unownedBeforeEpoch.push(report);
      continue;
    }
    const nodeName = nodeByInstance.get(i.instanceId);
    if (nodeName !== undefined) {
      out.orphansWithNode.push({ ...report, nodeName });
      continue;
    }
    out.terminateInstances.push({ instanceId: i.instanceId, reason: 'orphan' });
  }

  if (input.nodeRepair)
    out.repair = planNodeRepair(
      input.nodeClaims.filter((c) => !deleted.has(c.name)),
      input.nodes,
      now,
    );
  out.startTerminations = deletionRequests({
    cluster: input.cluster,
    nodeClaims: input.nodeClaims.filter((c) => !deleted.has(c.name)),
    nodes: input.nodes,
    ...(input.nodeClaimObjects ? { nodeClaimObjects: input.nodeClaimObjects } : {}),
    ...(input.nodePools ? { nodePools: input.nodePools } : {}),
  });

  if (input.budgetHolders) {
    const remaining = input.nodeClaims.filter((c) => !deleted.has(c.name));
    const stale = staleDisruptions(input.budgetHolders, remaining, input.nodes, now);
    out.releaseBudgetSlots = stale.releaseBudgetSlots;
    out.untaintNodes = stale.untaintNodes;
  }
  return out;
}

/**
 * Budget slots and disrupted taints nothing is working on. A slot is released when its holder's
 * NodeClaim and Node are both gone (the termination finished but its release was lost), or when
 * its lease ran out ({@link DisruptionLeaseSeconds} since it was taken or last renewed) and no
 * termination owns it (a Terminating claim whose termination holds this pool's slot,
 * `termination.budgetNodePool`, or a Node being deleted): the run that held it is gone. A
 * termination that took no slot (an interruption's, or one that started while a disruption run
 * held the node: the run then abandons without releasing, its candidate being terminated) does not
 * release one in Finalize, so such a slot is the lease's; kept for the claim's termination (or for
 * ever once Terminated) it blocked the pool's budget until the record expired (chaos seed 1136).
 * The taint of such a node is removed too, and so is a `karpenter.sh/disrupted` taint older than
 * the lease (its `timeAdded`) on a node whose claim is not terminating and which holds no slot.
 * Holders are claim names (or node names without a claim).
 * @param holders per NodePool: holder → RFC 3339 time the slot was taken or last renewed (BudgetCounter.holders)
 */
export function staleDisruptions(
  holders: Record<string, Record<string, string>>,
  nodeClaims: readonly NodeClaim[],
  nodes: readonly Node[],
  now: Date,
): Pick<GcPlan, 'releaseBudgetSlots' | 'untaintNodes'> {
  const claims = new Map(nodeClaims.map((c) => [c.name, c]));
  const claimByNode = new Map(nodeClaims.filter((c) => c.nodeName).map((c) => [c.nodeName!, c]));
  const nodesByName = new Map(nodes.map((n) => [n.metadata.name, n]));
  const nowMs = now.getTime();
  const releaseBudgetSlots: GcPlan['releaseBudgetSlots'] = [];
  const untaint = new Set<string>();
  const held = new Set<string>();
  const terminating = (claim: NodeClaim | undefined, node: Node | undefined) =>
    claim?.phase === 'Terminating' || claim?.phase === 'Terminated' || !!node?.metadata.deletionTimestamp;
  const taintOf = (node: Node | undefined) => node?.spec?.taints?.find((t) => t.key === TaintDisruptedKey);
  for (const [nodePool, hs] of Object.entries(holders)) {
    for (const [holder, since] of Object.entries(hs)) {
      const claim = claims.get(holder);
      const node = nodesByName.get(claim?.nodeName ?? holder);
      if (!claim && !node) {
        releaseBudgetSlots.push({ nodePool, holder, reason: 'gone' });
        continue;
      }
      if (node) held.add(node.metadata.name);
      const owned = (claim?.phase === 'Terminating' && claim.termination?.budgetNodePool === nodePool) || !!node?.metadata.deletionTimestamp;
      if (owned) continue;
      if (secondsSince(since, nowMs) >= DisruptionLeaseSeconds) {
        releaseBudgetSlots.push({ nodePool, holder, reason: 'abandoned' });
        // A terminating node's taint is its termination's.
        if (node && taintOf(node) && !terminating(claim, node)) untaint.add(node.metadata.name);
      }
    }
  }
  for (const node of nodes) {
    const taint = taintOf(node);
    if (!taint || held.has(node.metadata.name) || untaint.has(node.metadata.name)) continue;
    if (terminating(claimByNode.get(node.metadata.name), node)) continue;
    if (taint.timeAdded && secondsSince(taint.timeAdded, nowMs) >= DisruptionLeaseSeconds) untaint.add(node.metadata.name);
  }
  return { releaseBudgetSlots, untaintNodes: [...untaint].sort().map((nodeName) => ({ nodeName, reason: 'abandoned' as const })) };
}

/** Budget holders to release (see {@link staleDisruptions}). */
export function staleBudgetHolders(
  holders: Record<string, Record<string, string>>,
  nodeClaims: readonly NodeClaim[],
  nodes: readonly Node[],
  now: Date,
): GcPlan['releaseBudgetSlots'] {
  return staleDisruptions(holders, nodeClaims, nodes, now).releaseBudgetSlots;
}
