/**
 * One interruption message → action, as Karpenter's interruption controller decides
 * (aws/karpenter-provider-aws pkg/controllers/interruption/controller.go, ANCHORS §2.8):
 * - spot interruption warning, capacity reservation interruption, AWS Health scheduled change:
 *   cordon and drain through the termination state machine with the notice as deadline; a spot
 *   (reserved) interruption marks its offering unavailable for 3 minutes so the replacement goes
 *   elsewhere;
 * - rebalance recommendation: recorded only, unless the NodePool opts in with
 *   `nodefleet.io/rebalance-replace`, then a graceful replacement within the disruption budget;
 * - state change to stopping / stopped / shutting-down / terminated: the node is already going,
 *   so the termination runs with an immediate deadline (cutoff, terminate, delete Node, finish claim).
 * Unknown instances are ignored (debug log).
 */
import type { NodeClaim } from '../../shared/api/nodeclaim.ts';
import type { NodePool } from '../../shared/api/nodepool.ts';
import type { BudgetCounter, Clock, KubeApi, NodeClaimStore, TerminationInput, TerminationStarter, UnavailableOfferings } from '../../shared/api/ports.ts';
import { AnnotationRebalanceReplace } from '../../shared/api/labels.ts';
import type { InterruptionMessage } from '../../shared/api/events/index.ts';

/**
 * How long an interrupted offering stays unavailable: Karpenter's unavailable-offerings TTL
 * (KA pkg/cache/cache.go UnavailableOfferingsTTL = 3 minutes), long enough for the replacement
 * launch to pick another offering, short enough not to shun the pool for long.
 */
export const InterruptedOfferingTtlSeconds = 180;
/** Annotation recording the last rebalance recommendation on the NodeClaim (RFC 3339). */
export const AnnotationRebalanceRecommendedAt = 'nodefleet.io/rebalance-recommended-at';

/** Structured log sink (the runtime passes Powertools' logger; tests a recorder). */
export interface Log {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
}

export interface InterruptionDeps {
  store: NodeClaimStore;
  /** Named as in shared/runtime Deps, so the runtime's deps can be passed as they are. */
  termination: TerminationStarter;
  unavailable: UnavailableOfferings;
  kube: Pick<KubeApi, 'listNodePools'>;
  budgets: BudgetCounter;
  clock: Clock;
  log: Log;
}

/** What was done for one instance, for logs and tests. */
export type InterruptionOutcome =
  | { instanceId: string; action: 'unknown-instance' | 'already-terminating' | 'ignored-state' | 'recorded' | 'budget-exhausted' }
  | { instanceId: string; action: 'terminate'; executionArn: string; deadlineEpochMs?: number };

const GoneStates = new Set(['stopping', 'stopped', 'shutting-down', 'terminated']);

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
  if (claim.phase === 'Terminating' || claim.phase === 'Terminated') return { instanceId, action: 'already-terminating' };
  const nowMs = deps.clock.now().getTime();

  switch (msg.kind) {
    case 'SpotInterruption':
    case 'CapacityReservationInterruption':
      await markInterruptedOffering(msg, claim, nowMs, deps);
      return start(msg, claim, instanceId, msg.noticeDeadlineEpochMs, deps);
    case 'ScheduledChange':
      return start(msg, claim, instanceId, scheduledChangeDeadline(msg, claim, nowMs), deps);
    case 'StateChange':
      if (!msg.state || !GoneStates.has(msg.state)) return { instanceId, action: 'ignored-state' };
      return start(msg, claim, instanceId, nowMs, deps);
    case 'RebalanceRecommendation':
      return rebalance(msg, claim, instanceId, nowMs, deps);
  }
}

async function start(msg: InterruptionMessage, claim: NodeClaim, instanceId: string, deadlineEpochMs: number | undefined, deps: InterruptionDeps, budgetNodePool?: string): Promise<InterruptionOutcome> {
  const input: TerminationInput = {
    nodeClaim: claim.name,
    instanceId,
    ...(claim.nodeName ? { nodeName: claim.nodeName } : {}),
    reason: 'interruption',
    ...(deadlineEpochMs !== undefined ? { deadlineEpochMs } : {}),
    ...(budgetNodePool ? { budgetNodePool } : {}),
  };
  const executionArn = await deps.termination.start(input);
  deps.log.info('initiating delete from interruption message', { messageKind: msg.kind, action: 'CordonAndDrain', NodeClaim: claim.name, Node: claim.nodeName, executionArn });
  return { instanceId, action: 'terminate', executionArn, ...(deadlineEpochMs !== undefined ? { deadlineEpochMs } : {}) };
}

async function markInterruptedOffering(msg: InterruptionMessage, claim: NodeClaim, nowMs: number, deps: InterruptionDeps): Promise<void> {
  if (!claim.instanceType || !claim.zone) return;
  const capacityType = msg.kind === 'SpotInterruption' ? 'spot' : 'reserved';
  if (claim.capacityType && claim.capacityType !== capacityType) return;
  await deps.unavailable.mark(
    [{ instanceType: claim.instanceType, zone: claim.zone, capacityType, reason: msg.kind }],
    Math.floor(nowMs / 1000) + InterruptedOfferingTtlSeconds,
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

async function rebalance(msg: InterruptionMessage, claim: NodeClaim, instanceId: string, nowMs: number, deps: InterruptionDeps): Promise<InterruptionOutcome> {
  const nowIso = new Date(nowMs).toISOString();
  deps.log.info('spot rebalance recommendation', { reason: 'SpotRebalanceRecommendation', NodeClaim: claim.name, Node: claim.nodeName, instanceId });
  await deps.store.update({ ...claim, annotations: { ...claim.annotations, [AnnotationRebalanceRecommendedAt]: nowIso } });
  const pool = (await deps.kube.listNodePools()).find((p) => p.metadata.name === claim.nodePool);
  if (pool?.metadata.annotations?.[AnnotationRebalanceReplace] !== 'true') return { instanceId, action: 'recorded' };

  const poolClaims = (await deps.store.list()).filter((c) => c.nodePool === claim.nodePool && c.phase !== 'Terminated');
  const allowed = allowedDisruptions(pool, poolClaims.length);
  if (!(await deps.budgets.take(claim.nodePool, claim.name, allowed, nowIso))) {
    deps.log.info('rebalance replacement blocked by disruption budget', { NodeClaim: claim.name, nodePool: claim.nodePool, allowed });
    return { instanceId, action: 'budget-exhausted' };
  }
  const tgp = claim.terminationGracePeriodSeconds;
  return start(msg, claim, instanceId, tgp !== undefined ? nowMs + tgp * 1000 : undefined, deps, claim.nodePool);
}

/**
 * Nodes the pool may disrupt at once: the lowest of its budgets, a percentage rounded up over the
 * pool's nodes (Karpenter nodepool.go GetAllowedDisruptions). Scheduled budgets are counted as
 * active (the conservative choice: this path has no cron evaluation).
 */
export function allowedDisruptions(pool: NodePool, nodeCount: number): number {
  const budgets = pool.spec.disruption?.budgets ?? [{ nodes: '10%' }];
  let allowed = Number.POSITIVE_INFINITY;
  for (const b of budgets) {
    const n = b.nodes.endsWith('%') ? Math.ceil((Number(b.nodes.slice(0, -1)) / 100) * nodeCount) : Number(b.nodes);
    allowed = Math.min(allowed, n);
  }
  return Number.isFinite(allowed) ? allowed : 0;
}
