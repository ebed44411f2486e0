/**
 * One interruption message → action, as Karpenter's interruption controller decides
 * (aws/karpenter-provider-aws pkg/controllers/interruption/controller.go, ANCHORS §2.8):
 * - spot interruption warning, capacity reservation interruption, AWS Health scheduled change:
 *   cordon and drain through the termination state machine with the notice as deadline; a spot
 *   (reserved) interruption marks its offering unavailable for 3 minutes so the replacement goes
 *   elsewhere;
 * - rebalance recommendation: recorded only (a log line and the claim annotation
 *   `nodefleet.io/rebalance-recommended-at`), unless the NodePool opts in with
 *   `nodefleet.io/rebalance-replace`: then the disruption run replaces the node gracefully
 *   (replacement launched and Initialized first, then the drain, within budgets; see `rebalance`);
 * - state change to stopping / stopped / shutting-down / terminated: the node is already going,
 *   so the termination runs with an immediate deadline (cutoff, terminate, delete Node, finish claim).
 * The message is a claim, never a fact: one from another account or region than the stack's, or
 * a Health event naming more than MaxHealthEventInstances instances, is refused whole
 * (`messageRefusal`); before any termination the instance is confirmed with EC2 (it exists, is
 * pending or running — or, for a state change, really is going —, carries this cluster's, the
 * claim's NodePool's and the claim's tags, and is spot for a spot warning, reserved for a
 * reservation interruption); no deadline is earlier than now + 2 minutes; the verified deadline is
 * written on the claim (`noticeDeadlineEpochMs`) before the execution starts, the only way a
 * termination's cutoff may come before the claim's own grace period. A refusal is one warn line and
 * the message is acknowledged (never redelivered for ever).
 * Unknown instances are ignored (debug log). A claim already terminating is not ignored: a notice
 * that comes before its termination's deadline (or a termination with none) starts the next
 * attempt with the notice's deadline (`escalate`).
 */
import { isTrue, type NodeClaim } from '../../shared/api/nodeclaim.ts';
import type {
  BudgetCounter,
  Clock,
  CloudProvider,
  KubeApi,
  NodeClaimStore,
  TerminationInput,
  TerminationStarter,
  UnavailableOfferings,
} from '../../shared/api/ports.ts';
import { UnavailableOfferingsTtlSeconds } from '../../shared/api/ports.ts';
import { AnnotationRebalanceRecommendedAt } from '../../shared/api/labels.ts';
import { ConflictError, TransientError, ValidationError } from '../../shared/api/errors.ts';
import { budgetStatus } from '../../shared/disruption/budgets.ts';
import { hasRebalanceReplace } from '../../shared/disruption/rebalance.ts';
import { accountOfArn, earliestNoticeDeadline, MaxHealthEventInstances, type InterruptionMessage } from '../../shared/api/events/index.ts';
import { instanceDisagreement } from '../../shared/api/termination-target.ts';
import type { MetricsSink } from '../../shared/runtime/observability.ts';

/** Annotation recording the last rebalance recommendation on the NodeClaim (RFC 3339); defined in shared/api/labels.ts. */
export { AnnotationRebalanceRecommendedAt };

/** Structured log sink (the runtime passes Powertools' logger; tests a recorder). */
export interface Log {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
}

export interface InterruptionDeps {
  store: NodeClaimStore;
  /** EC2 (DescribeInstances): confirms the instance before any termination. */
  cloud: Pick<CloudProvider, 'get'>;
  /**
   * The stack: its cluster, region (AWS_REGION) and the termination state machine's ARN, whose
   * account is the stack's (shared/runtime env, passed as it is).
   */
  env: { clusterName: string; region: string; stateMachineArn?: string };
  /** Named as in shared/runtime Deps, so the runtime's deps can be passed as they are. */
  termination: TerminationStarter;
  unavailable: UnavailableOfferings;
  kube: Pick<KubeApi, 'listNodePools'>;
  budgets: BudgetCounter;
  clock: Clock;
  log: Log;
  metrics: Pick<MetricsSink, 'count'>;
}

/** What was done for one instance, for logs and tests. */
export type InterruptionOutcome =
  | { instanceId: string; action: 'unknown-instance' | 'already-terminating' | 'ignored-state' | 'recorded' }
  /** Opted-in rebalance: marked for the next disruption run, which launches the replacement first. */
  | { instanceId: string; action: 'replacement-queued' }
  /** Opted-in rebalance the budget blocks now; marked all the same, a later run replaces it when a slot frees. */
  | { instanceId: string; action: 'budget-exhausted'; reason: string }
  | { instanceId: string; action: 'terminate'; executionArn: string; deadlineEpochMs?: number }
  /** The message disagrees with EC2 or the claim: nothing done. */
  | { instanceId: string; action: 'refused'; reason: string };

const GoneStates = new Set(['stopping', 'stopped', 'shutting-down', 'terminated']);

/**
 * Why the whole message is refused, or undefined: its account or region is not the stack's (the
 * account is the termination state machine ARN's; unknown = refused), or a Health event names
 * more than MaxHealthEventInstances instances.
 */
export function messageRefusal(msg: InterruptionMessage, env: InterruptionDeps['env']): string | undefined {
  const account = accountOfArn(env.stateMachineArn);
  if (!account) return "the stack's account is unknown (no termination state machine ARN)";
  if (msg.account !== account) return `account ${msg.account} is not the stack's (${account})`;
  if (msg.region !== env.region) return `region ${msg.region} is not the stack's (${env.region})`;
  if (msg.kind === 'ScheduledChange' && msg.instanceIds.length > MaxHealthEventInstances) {
    return `health event names ${msg.instanceIds.length} instances, more than ${MaxHealthEventInstances}`;
  }
  return undefined;
}

/** @throws whatever the ports throw (TransientError …): the message is retried by SQS. */
export async function handleMessage(msg: InterruptionMessage, deps: InterruptionDeps): Promise<InterruptionOutcome[]> {
  const out: InterruptionOutcome[] = [];
  for (const instanceId of msg.instanceIds) out.push(await handleInstance(msg, instanceId, deps));
  return out;
}

async function handleInstance(msg: InterruptionMessage, instanceId: string, deps: InterruptionDeps): Promise<InterruptionOutcome> {
  const claim = await deps.store.getByInstanceId(instanceId);
  if (!claim) {
    deps.log.debug('ignoring interruption message for an instance nodefleet does not own', { kind: msg.kind, instanceId, eventId: msg.eventId });
    return { instanceId, action: 'unknown-instance' };
  }
  if (claim.phase === 'Terminated') return { instanceId, action: 'already-terminating' };
  const nowMs = deps.clock.now().getTime();
  const terminating = claim.phase === 'Terminating';
  if (msg.kind === 'RebalanceRecommendation')
    return terminating ? { instanceId, action: 'already-terminating' } : rebalance(msg, claim, instanceId, nowMs, deps);
  if (msg.kind === 'StateChange' && (!msg.state || !GoneStates.has(msg.state)))
    return terminating ? { instanceId, action: 'already-terminating' } : { instanceId, action: 'ignored-state' };
  // The termination already got as far as TerminateInstances (its own state-change events come back here).
  if (terminating && isTrue(claim, 'InstanceTerminating')) return { instanceId, action: 'already-terminating' };
  const refusal = await ec2Refusal(msg, claim, instanceId, deps);
  if (refusal) {
    deps.log.warn('interruption message refused', { kind: msg.kind, instanceId, NodeClaim: claim.name, eventId: msg.eventId, reason: refusal });
    return { instanceId, action: 'refused', reason: refusal };
  }
  if (terminating) return escalate(msg, claim, instanceId, nowMs, deps);

  const deadline = noticeDeadline(msg, claim, nowMs);
  if (msg.kind === 'SpotInterruption' || msg.kind === 'CapacityReservationInterruption') await markInterruptedOffering(msg, claim, nowMs, deps);
  const noted = await recordNotice(claim, deadline, deps);
  return start(msg, noted, instanceId, deadline, deps);
}

/**
 * Why EC2 does not bear the message out, or undefined when it does: the instance must carry this
 * cluster's, the claim's NodePool's and the claim's tags; a state change to stopping / stopped /
 * shutting-down / terminated must be what EC2 says (or the instance is gone); any other notice
 * needs the instance pending or running, spot for a spot warning (never for an on-demand claim),
 * reserved for a capacity reservation interruption.
 */
async function ec2Refusal(msg: InterruptionMessage, claim: NodeClaim, instanceId: string, deps: InterruptionDeps): Promise<string | undefined> {
  const inst = await deps.cloud.get(instanceId);
  const tags = inst && instanceDisagreement(claim, inst, deps.env.clusterName);
  if (msg.kind === 'StateChange') {
    if (inst && !GoneStates.has(inst.state)) return `EC2 says instance ${instanceId} is ${inst.state}, not ${msg.state}`;
    return tags || undefined;
  }
  if (!inst) return `EC2 does not know instance ${instanceId}`;
  if (inst.state !== 'pending' && inst.state !== 'running') return `EC2 says instance ${instanceId} is ${inst.state}`;
  if (tags) return tags;
  const wanted = msg.kind === 'SpotInterruption' ? 'spot' : msg.kind === 'CapacityReservationInterruption' ? 'reserved' : undefined;
  if (wanted && (inst.capacityType !== wanted || (claim.capacityType && claim.capacityType !== wanted))) {
    return `${msg.kind} for nodeclaim ${claim.name}, which is ${claim.capacityType ?? inst.capacityType} (EC2: ${inst.capacityType})`;
  }
  return undefined;
}

/**
 * The deadline a verified notice sets (epoch ms; undefined = none): spot and reservation
 * interruptions at their notice, a scheduled change by scheduledChangeDeadline, a state change to
 * a going state now — never earlier than now + 2 minutes except that last one (EC2 confirmed it).
 */
function noticeDeadline(msg: InterruptionMessage, claim: NodeClaim, nowMs: number): number | undefined {
  if (msg.kind === 'StateChange') return nowMs;
  const d = msg.kind === 'ScheduledChange' ? scheduledChangeDeadline(msg, claim, nowMs) : (msg.noticeDeadlineEpochMs ?? earliestNoticeDeadline(nowMs));
  return d === undefined ? undefined : Math.max(d, earliestNoticeDeadline(nowMs));
}

/**
 * Writes the verified deadline on the claim (`noticeDeadlineEpochMs`, the earlier of the one there
 * and this one) before the execution starts: the termination tasks honour a deadline shorter than
 * the claim's grace period only from there. Returns the claim as stored.
 * @throws TransientError when another writer moved the claim on (SQS redelivers).
 */
async function recordNotice(claim: NodeClaim, deadline: number | undefined, deps: InterruptionDeps): Promise<NodeClaim> {
  if (deadline === undefined || (claim.noticeDeadlineEpochMs !== undefined && claim.noticeDeadlineEpochMs <= deadline)) return claim;
  try {
    return await deps.store.update({ ...claim, noticeDeadlineEpochMs: deadline });
  } catch (err) {
    if (err instanceof ConflictError) throw new TransientError(`nodeclaim ${claim.name} changed while recording its interruption notice`, { cause: err });
    throw err;
  }
}

/**
 * An interruption for a claim already terminating: the running termination may have no deadline
 * (a drain waiting on a PDB) or a later one than the notice, and it may have ended unfinished. The
 * notice's deadline (now for an instance already stopping or gone) wins when earlier: the next
 * attempt starts with the earlier deadline and the claim records it (conditional write), so the
 * node is cut off in time. The previous execution, if still running, finds the work done
 * (every task is re-entrant). Otherwise the running termination already covers it.
 */
async function escalate(msg: InterruptionMessage, claim: NodeClaim, instanceId: string, nowMs: number, deps: InterruptionDeps): Promise<InterruptionOutcome> {
  const deadline = msg.kind === 'RebalanceRecommendation' ? undefined : noticeDeadline(msg, claim, nowMs);
  const t = claim.termination;
  const current = t?.deadlineEpochMs;
  // The termination already got as far as TerminateInstances (its own state-change events come back here).
  if (isTrue(claim, 'InstanceTerminating')) return { instanceId, action: 'already-terminating' };
  if (deadline === undefined || (current !== undefined && current <= deadline)) return { instanceId, action: 'already-terminating' };
  const attempt = (t?.attempt ?? 1) + 1;
  const nowIso = new Date(nowMs).toISOString();
  // Start first (idempotent on its name, claim + attempt; the attempt records itself on the claim
  // in Cordon), then record the earlier deadline so later notices compare against it. Recording
  // first left a crash between the two with the deadline on the claim — so a redelivery found the
  // claim "already terminating" — and no execution carrying it out.
  // The verified notice goes on the claim before the execution starts (the tasks obey it only from there).
  const noted = await recordNotice(claim, deadline, deps);
  const out = await start(msg, noted, instanceId, deadline, deps, { attempt, ...(t?.budgetNodePool ? { budgetNodePool: t.budgetNodePool } : {}) });
  try {
    await deps.store.update({
      ...noted,
      termination: {
        attempt,
        reason: 'interruption',
        deadlineEpochMs: deadline,
        ...(t?.budgetNodePool ? { budgetNodePool: t.budgetNodePool } : {}),
        startedAt: t?.startedAt ?? nowIso,
        heartbeatAt: nowIso,
        failures: t?.failures ?? 0,
        ...(t?.ended ? { ended: t.ended } : {}),
      },
    });
  } catch (err) {
    // another writer moved the claim on (the attempt itself, a duplicate message, gc): SQS
    // redelivers and this is decided again from what the claim says now
    if (err instanceof ConflictError) throw new TransientError(`nodeclaim ${claim.name} changed while escalating its termination`, { cause: err });
    throw err;
  }
  return out;
}

async function start(
  msg: InterruptionMessage,
  claim: NodeClaim,
  instanceId: string,
  deadlineEpochMs: number | undefined,
  deps: InterruptionDeps,
  extra: Pick<TerminationInput, 'attempt' | 'budgetNodePool'> = {},
): Promise<InterruptionOutcome> {
  const input: TerminationInput = {
    ...extra,
    nodeClaim: claim.name,
    instanceId,
    ...(claim.nodeName ? { nodeName: claim.nodeName } : {}),
    reason: 'interruption',
    ...(deadlineEpochMs !== undefined ? { deadlineEpochMs } : {}),
  };
  const executionArn = await deps.termination.start(input);
  deps.log.info('initiating delete from interruption message', {
    messageKind: msg.kind,
    action: 'CordonAndDrain',
    NodeClaim: claim.name,
    Node: claim.nodeName,
    executionArn,
  });
  return { instanceId, action: 'terminate', executionArn, ...(deadlineEpochMs !== undefined ? { deadlineEpochMs } : {}) };
}

async function markInterruptedOffering(msg: InterruptionMessage, claim: NodeClaim, nowMs: number, deps: InterruptionDeps): Promise<void> {
  if (!claim.instanceType || !claim.zone) return;
  const capacityType = msg.kind === 'SpotInterruption' ? 'spot' : 'reserved';
  if (claim.capacityType && claim.capacityType !== capacityType) return;
  await deps.unavailable.mark(
    [{ instanceType: claim.instanceType, zone: claim.zone, capacityType, reason: msg.kind }],
    Math.floor(nowMs / 1000) + UnavailableOfferingsTtlSeconds,
  );
}

/**
 * Deadline of a scheduled change: the claim's terminationGracePeriod from now (Karpenter drains as
 * for any deletion), but never after the change starts; a start already passed leaves the
 * two-minute spot-style notice.
 */
export function scheduledChangeDeadline(msg: InterruptionMessage, claim: NodeClaim, nowMs: number): number | undefined {
  const start = msg.noticeDeadlineEpochMs;
  const tgp = claim.terminationGracePeriodSeconds !== undefined ? nowMs + claim.terminationGracePeriodSeconds * 1000 : undefined;
  if (start !== undefined && start <= nowMs) return nowMs + 120_000;
  if (start === undefined) return tgp;
  return tgp === undefined ? start : Math.min(start, tgp);
}

/**
 * Rebalance recommendation. Always recorded: a log line (Karpenter's event) and the claim
 * annotation. In an opted-in pool the replacement is handed to the disruption machinery rather
 * than done here: the claim annotation makes the next disruption run (EventBridge Scheduler, every
 * minute) plan a `rebalance` command first (shared/disruption/rebalance.ts), which validates it,
 * takes the budget slot, launches the replacement, waits until it is Initialized and only then
 * starts the termination — the same path as drift, so budgets, do-not-disrupt, PDBs, the
 * validation delay and the abandon-on-failed-replacement rule all apply without a second copy.
 * Starting the loop from here would save under a minute but needs the disruption state machine
 * in this function's deps; the recommendation usually comes well ahead of an interruption, and
 * if the two-minute notice arrives first the spot-interruption path takes over.
 * Nothing is taken here: the budget is only evaluated (with the real schedules) to say in the log
 * whether the replacement is blocked now.
 */
async function rebalance(msg: InterruptionMessage, claim: NodeClaim, instanceId: string, nowMs: number, deps: InterruptionDeps): Promise<InterruptionOutcome> {
  const now = new Date(nowMs);
  deps.log.info('spot rebalance recommendation', {
    reason: 'SpotRebalanceRecommendation',
    NodeClaim: claim.name,
    Node: claim.nodeName,
    instanceId,
    eventId: msg.eventId,
  });
  const pool = (await deps.kube.listNodePools()).find((p) => p.metadata.name === claim.nodePool);
  const optedIn = hasRebalanceReplace(pool);
  if (claim.annotations[AnnotationRebalanceRecommendedAt] === undefined) {
    // keep the first recommendation: it orders the replacements (oldest first)
    await deps.store.update({ ...claim, annotations: { ...claim.annotations, [AnnotationRebalanceRecommendedAt]: now.toISOString() } });
  }
  if (!pool || !optedIn) return { instanceId, action: 'recorded' };

  const poolClaims = (await deps.store.list()).filter((c) => c.nodePool === claim.nodePool && c.phase !== 'Terminated' && c.phase !== 'Failed');
  const leaving = new Set([
    ...poolClaims.filter((c) => c.phase === 'Terminating').map((c) => c.name),
    ...Object.keys(await deps.budgets.holders(claim.nodePool)),
  ]);
  let status;
  try {
    status = budgetStatus(pool, 'Rebalance', poolClaims.length, leaving.size, now);
  } catch (err) {
    // a budget schedule that does not parse blocks every graceful method of the pool (the
    // disruption run reports it too); redelivering the message would not fix it
    if (!(err instanceof ValidationError)) throw err;
    deps.log.warn('rebalance replacement blocked: the nodepool budgets do not parse', { NodeClaim: claim.name, nodePool: claim.nodePool, error: err.message });
    return { instanceId, action: 'budget-exhausted', reason: `nodepool "${claim.nodePool}" budgets: ${err.message}` };
  }
  if (status.allowed <= 0) {
    const reason = `disruption budget for Rebalance in nodepool "${claim.nodePool}" is spent (allows ${status.cap ?? 'unlimited'} of ${status.nodes} nodes, ${status.disrupting} already disrupting)`;
    deps.log.info('rebalance replacement blocked by disruption budget; the disruption runs retry it', {
      NodeClaim: claim.name,
      nodePool: claim.nodePool,
      reason,
    });
    return { instanceId, action: 'budget-exhausted', reason };
  }
  // The recommendation means this spot pool is at elevated risk: keep the replacement off it
  // (the disruption run plans within a minute, well inside the 3-minute TTL).
  if (claim.capacityType === 'spot' && claim.instanceType && claim.zone) {
    await deps.unavailable.mark(
      [{ instanceType: claim.instanceType, zone: claim.zone, capacityType: 'spot', reason: msg.kind }],
      Math.floor(nowMs / 1000) + UnavailableOfferingsTtlSeconds,
    );
  }
  deps.log.info('rebalance replacement queued for the next disruption run', { NodeClaim: claim.name, nodePool: claim.nodePool, allowed: status.allowed });
  return { instanceId, action: 'replacement-queued' };
}
