/**
 * Disruption function: every minute (EventBridge Scheduler) and on demand.
 *
 * Re-entrant, one step per invocation (waits belong to the state machine / the next call):
 * 1. no command in the input → read the snapshot, plan; re-read each forceful expiration at its
 *    source (the stored claim still expired, the live Node its own) and start those; return the
 *    graceful command with `retryAfterSeconds: 15` (Karpenter's validation delay);
 * 2. a command → re-read, validate; take the budget slots (one conditional DynamoDB update each;
 *    all or nothing), taint the candidates, launch the replacements → return them to wait for,
 *    or start the terminations right away for a delete;
 * 3. a command with replacement claims → renew the slots' leases (a lost lease abandons the
 *    command); once every replacement is Initialized, start the terminations; if one failed,
 *    untaint the candidates and release the slots.
 * Terminations always target the stored claim's node and instance (act.ts startTerminations); the
 * view only helps plan, and the input (a state-machine input) is a request, never a fact.
 * Every block is logged with its reason and counted (metric `nodefleet_disruption_blocked_total`).
 */
import type { Deps } from '../../shared/runtime/deps.ts';
import type { NodeClaim } from '../../shared/api/nodeclaim.ts';
import { ConflictError, NotFoundError } from '../../shared/api/errors.ts';
import { buildDeps } from '../../shared/runtime/deps.ts';
import type { RuntimeEnv } from '../../shared/runtime/env.ts';
import { wrapHandler } from '../../shared/runtime/middleware.ts';
import { powertoolsLog, powertoolsMetrics, type Powertools } from '../../shared/runtime/observability.ts';
import { MetricNames, podStartupSeconds } from '../../shared/api/metrics.ts';
import { DisruptionLoopPeriodSeconds } from '../../shared/api/contract.ts';
import { nodePoolLimits, nodePoolResources, resourceGauges } from '../../shared/api/nodepool-status.ts';
import { DynamoBudgetCounter } from '../../shared/aws/dynamo-budget-counter.ts';
import { planDisruption, validateCommand, type BlockedCandidate, type DisruptionCommand, type DisruptionSnapshot } from '../../shared/disruption/index.ts';
import { CommandValidationDelaySeconds } from '../../shared/disruption/index.ts';
import { readSnapshot } from './snapshot.ts';
import {
  applyStaticCapacity,
  confirmExpirations,
  launchReplacement,
  recordReplacement,
  releaseSlots,
  renewSlots,
  replacementNames,
  replacementsState,
  setDisruptedTaint,
  startTerminations,
  takeSlots,
} from './act.ts';
import { DisruptionInputSchema, type DisruptionInput, type DisruptionOutput } from './schemas.ts';

/** How often to re-check replacements for Initialized (Karpenter polls cluster state continuously; a launch takes ~1 min). */
export const ReplacementPollSeconds = 15;

/** A low-cardinality kind for a block reason (metric dimension; the full text goes to the log). */
export function blockKind(reason: string): string {
  if (/do-not-disrupt/.test(reason)) return 'do-not-disrupt';
  if (/pdb|PodDisruptionBudget/.test(reason)) return 'pdb';
  if (/budget/.test(reason)) return 'budget';
  if (/not initialized/.test(reason)) return 'not-initialized';
  if (/being deleted/.test(reason)) return 'deleting';
  if (/consolidateAfter/.test(reason)) return 'consolidate-after';
  if (/schedule|new nodes/.test(reason)) return 'would-not-schedule';
  if (/cheaper|price|spot-to-spot|Balanced|instance types/.test(reason)) return 'not-cheaper';
  return 'other';
}

/** How long a blocked (node, reason) stays unsaid after it was logged: Karpenter's event dedupe window is of this order. */
export const BlockedLogQuietMs = 15 * 60_000;

/**
 * The last time each blocked `node|reason` was logged, per logger (one per Lambda container, which
 * serves many runs of the disruption loop): a block is logged once, again when its reason changes
 * or after {@link BlockedLogQuietMs}; the metric counts every run.
 */
const blockedLoggedBy = new WeakMap<object, Map<string, number>>();

function report(deps: Pick<Deps, 'log' | 'metrics' | 'env'>, blocked: readonly BlockedCandidate[], nowMs: number): void {
  let blockedLogged = blockedLoggedBy.get(deps.log);
  if (!blockedLogged) blockedLoggedBy.set(deps.log, (blockedLogged = new Map()));
  const byNodeReason = new Map<string, { b: BlockedCandidate; methods: string[] }>();
  for (const b of blocked) {
    deps.metrics.count(MetricNames.disruptionBlocked, { method: b.method, kind: blockKind(b.reason) });
    const key = `${deps.env.clusterName}|${b.nodeName}|${b.reason}`;
    const entry = byNodeReason.get(key);
    if (entry) entry.methods.push(b.method);
    else byNodeReason.set(key, { b, methods: [b.method] });
  }
  for (const [key, { b, methods }] of byNodeReason) {
    const last = blockedLogged.get(key);
    if (last !== undefined && nowMs - last < BlockedLogQuietMs) continue;
    blockedLogged.set(key, nowMs);
    deps.log.info('disruption blocked', { node: b.nodeName, nodePool: b.nodePool, method: methods.join(','), reason: b.reason });
  }
  for (const [key, at] of blockedLogged) if (nowMs - at >= BlockedLogQuietMs) blockedLogged.delete(key);
}

/** Karpenter's NodePool gauges, once per run: usage (what the pool's claims hold) and limits. */
function reportNodePools(deps: Pick<Deps, 'metrics'>, snapshot: DisruptionSnapshot): void {
  for (const pool of snapshot.nodePools) {
    const nodepool = pool.metadata.name;
    for (const g of resourceGauges(nodePoolResources(nodepool, snapshot.nodeClaims ?? [])))
      deps.metrics.count(MetricNames.nodePoolsUsage, { nodepool, resource_type: g.resourceType }, g.value);
    for (const g of resourceGauges(nodePoolLimits(pool))) deps.metrics.count(MetricNames.nodePoolsLimit, { nodepool, resource_type: g.resourceType }, g.value);
  }
}

/**
 * Records the pass's Drifted / Consolidatable conditions on the claims (conditional on the version
 * read; a claim changed meanwhile is left for the next pass). A failed write never stops the pass.
 */
async function recordConditions(deps: DisruptionDeps, claims: readonly NodeClaim[]): Promise<void> {
  const record = async (c: NodeClaim) => {
    try {
      await deps.store.update(c);
    } catch (err) {
      if (err instanceof ConflictError || err instanceof NotFoundError) return;
      deps.log.warn('could not record nodeclaim conditions', { NodeClaim: { name: c.name }, error: (err as Error).message });
    }
  };
  // Independent conditional writes, a few at a time (a first pass over 5 000 claims writes them all).
  for (let i = 0; i < claims.length; i += ConditionWritesInParallel) await Promise.all(claims.slice(i, i + ConditionWritesInParallel).map(record));
}

/** Condition writes in flight at once: the SDK's default socket pool (50 per client), so none queue behind it. */
const ConditionWritesInParallel = 50;

async function planStep(deps: DisruptionDeps, now: Date): Promise<DisruptionOutput> {
  const snapshot = await readSnapshot(deps, now);
  const plan = planDisruption(snapshot, now, { elapsedMs: () => performance.now() });
  report(deps, plan.blocked, now.getTime());
  reportNodePools(deps, snapshot);
  for (const s of podStartupSeconds(snapshot.pods, now.getTime() - DisruptionLoopPeriodSeconds * 1000, now.getTime()))
    deps.metrics.seconds(MetricNames.podsStartupDuration, s);
  await recordConditions(deps, plan.claimConditions);
  for (const m of plan.timedOut) deps.log.warn('abandoning consolidation search: time budget spent', { method: m, simulations: plan.simulations });
  for (const b of plan.budgets)
    if (Number.isFinite(b.allowed)) deps.metrics.count(MetricNames.nodePoolsAllowedDisruptions, { nodepool: b.nodePool, reason: b.reason }, b.allowed);
  for (const e of plan.eligibleNodes) deps.metrics.count(MetricNames.disruptionEligibleNodes, { reason: e.reason.toLowerCase() }, e.count);
  for (const b of plan.budgets.filter((x) => x.reason === 'Empty'))
    deps.metrics.count(MetricNames.nodePoolsNodesConsumingBudgets, { nodepool: b.nodePool }, b.disrupting);
  const expirations = plan.expirations.length > 0 ? await confirmExpirations(deps, plan.expirations, now) : [];
  for (const e of expirations) deps.metrics.count(MetricNames.nodeClaimsDisrupted, { nodepool: e.nodePool, reason: 'expired' });
  const started = expirations.length > 0 ? await startTerminations(deps, expirations, 'Expired', now, false) : [];
  for (const e of expirations) deps.log.info('deleting expired nodeclaim', { nodeClaim: e.nodeClaim, node: e.nodeName, expiredAt: e.expiredAt });
  // Static pools made up to (or brought down to) their count, on the records just read.
  const statics = await applyStaticCapacity(deps, plan.staticCapacity, snapshot, now);
  started.push(...statics.terminating);
  const staticCapacity = statics.launched.length + statics.terminating.length > 0 ? { staticCapacity: statics } : {};
  if (!plan.command) return { status: 'idle', terminationsStarted: started, simulations: plan.simulations, ...staticCapacity };
  deps.log.info('disruption command planned', {
    id: plan.command.id,
    method: plan.command.method,
    candidates: plan.command.candidates.map((c) => c.nodeName),
    decision: plan.command.decision,
  });
  return {
    status: 'validating',
    command: plan.command,
    retryAfterSeconds: CommandValidationDelaySeconds,
    terminationsStarted: started,
    simulations: plan.simulations,
    ...staticCapacity,
  };
}

async function actStep(deps: DisruptionDeps, command: DisruptionCommand, now: Date): Promise<DisruptionOutput> {
  // The candidates are re-read live (a GET and a per-node pod list each), never trusted from the view.
  const snapshot = await readSnapshot(deps, now, { recheck: command.candidates.map((c) => c.nodeName) });
  const v = validateCommand(command, snapshot, now);
  if (v.status === 'wait') return { status: 'validating', command, retryAfterSeconds: v.retryAfterSeconds, terminationsStarted: [] };
  if (v.status === 'invalid') {
    deps.log.info('abandoning disruption command', { id: command.id, reason: v.reason });
    return { status: 'invalidated', command, reason: v.reason, terminationsStarted: [] };
  }
  const cmd = v.command;
  if (!(await takeSlots(deps, cmd, v.counterLimits, now.toISOString())))
    return { status: 'budget-exhausted', command: cmd, reason: 'disruption budget taken by a concurrent run', terminationsStarted: [] };
  deps.metrics.count(MetricNames.disruptionDecisions, { decision: cmd.decision, reason: cmd.reason, consolidation_type: cmd.method });
  // Karpenter's line when a command starts (kubernetes-sigs/karpenter disruption/queue.go StartCommand).
  deps.log.info('disrupting node(s)', {
    command: cmd.id,
    reason: cmd.reason.toLowerCase(),
    decision: cmd.decision,
    'disrupted-node-count': cmd.candidates.length,
    'replacement-node-count': cmd.replacements.length,
    'pod-count': cmd.candidates.reduce((n, c) => n + c.pods.length, 0),
    'disrupted-nodes': cmd.candidates.map((c) => c.nodeName),
  });
  for (const c of cmd.candidates)
    deps.metrics.count(MetricNames.nodeClaimsDisrupted, { nodepool: c.nodePool, reason: cmd.reason.toLowerCase(), capacity_type: c.capacityType });
  if (cmd.replacements.length === 0) {
    await setDisruptedTaint(deps, cmd.candidates, true);
    return { status: 'terminating', command: cmd, terminationsStarted: await startTerminations(deps, cmd.candidates, cmd.reason, now, true) };
  }
  // The replacements are recorded before the taint, and launched after it. Tainted, a candidate is
  // a deleting node to the provisioner (shared/disruption/pods.ts isNodeDeleting), whose next pass
  // provisions for its pods and for the pending pods the replacements are sized for unless a
  // claim names them: tainted first, the pass could read the claims before the replacements
  // existed and launch a second claim for the same pods (chaos seed 1136).
  const names = replacementNames(cmd);
  const claims: NodeClaim[] = [];
  for (let i = 0; i < names.length; i++) {
    const claim = await recordReplacement(deps, cmd.replacements[i], names[i], cmd, now, snapshot);
    if (typeof claim === 'string') return abandon(deps, cmd, claim);
    claims.push(claim);
  }
  await setDisruptedTaint(deps, cmd.candidates, true);
  for (let i = 0; i < names.length; i++) {
    const failed = await launchReplacement(deps, cmd.replacements[i], claims[i], now, snapshot);
    if (failed) return abandon(deps, cmd, failed);
  }
  return { status: 'waiting-for-replacements', command: cmd, replacementClaims: names, retryAfterSeconds: ReplacementPollSeconds, terminationsStarted: [] };
}

/**
 * The candidates whose termination has not started (claim not Terminating/Terminated): what an
 * abandoned command may untaint and release. A candidate whose termination started is left to it
 * (the execution keeps its taint and releases its slot in Finalize), whatever the command says —
 * the command is a state-machine input, and a forged one must not untaint a node being drained.
 */
async function notTerminating(deps: Pick<Deps, 'store'>, candidates: DisruptionCommand['candidates']): Promise<DisruptionCommand['candidates']> {
  const free: DisruptionCommand['candidates'] = [];
  for (const c of candidates) {
    const claim = await deps.store.get(c.nodeClaim);
    if (claim?.phase === 'Terminating' || claim?.phase === 'Terminated') continue;
    free.push(c);
  }
  return free;
}

async function abandon(deps: Deps, cmd: DisruptionCommand, reason: string): Promise<DisruptionOutput> {
  deps.log.warn('abandoning disruption command', { id: cmd.id, reason });
  const free = await notTerminating(deps, cmd.candidates);
  await setDisruptedTaint(deps, free, false);
  await releaseSlots(deps, free);
  return { status: 'invalidated', command: cmd, reason, terminationsStarted: [] };
}

/** After a failed loop step (Abandon state): the candidates not terminating are untainted and their slots released ({@link notTerminating}). */
async function abandonAfterFailure(deps: Deps, cmd: DisruptionCommand): Promise<DisruptionOutput> {
  const free = await notTerminating(deps, cmd.candidates);
  deps.log.warn('abandoning disruption command after a failed step', { id: cmd.id, released: free.map((c) => c.nodeName) });
  await setDisruptedTaint(deps, free, false);
  await releaseSlots(deps, free);
  return { status: 'abandoned', command: cmd, reason: 'a loop step failed', terminationsStarted: [] };
}

/** Deps of the disruption function (the node class resolver, `resolver`, gives AMI drift and the replacements' zones). */
export type DisruptionDeps = Deps;

/** One disruption step (see module doc). Tests call this with fakes. */
export async function run(input: DisruptionInput, deps: DisruptionDeps): Promise<DisruptionOutput> {
  const now = deps.clock.now();
  if (input.command && input.abandon) return abandonAfterFailure(deps, input.command);
  if (!input.command) return planStep(deps, now);
  if (!input.replacementClaims) return actStep(deps, input.command, now);
  // The command holds its slots as leases: renew them, and never go on without them.
  if (!(await renewSlots(deps, input.command.candidates, now.toISOString())))
    return abandon(deps, input.command, 'a budget slot lease ran out (gc reclaimed it)');
  const r = await replacementsState(deps, input.command, input.replacementClaims);
  if (r.state === 'failed') return abandon(deps, input.command, r.reason);
  if (r.state === 'waiting')
    return {
      status: 'waiting-for-replacements',
      command: input.command,
      replacementClaims: input.replacementClaims,
      retryAfterSeconds: ReplacementPollSeconds,
      terminationsStarted: [],
    };
  const started = await startTerminations(deps, input.command.candidates, input.command.reason, now, true);
  return { status: 'terminating', command: input.command, replacementClaims: input.replacementClaims, terminationsStarted: started };
}

/**
 * Production deps plus the DynamoDB budget counter (not yet wired in buildDeps); the node class
 * resolver (AMI drift, the zones replacements may launch in) is buildDeps' own, the one launches use.
 */
function disruptionDeps(env: RuntimeEnv, pt: Powertools): DisruptionDeps {
  const deps = buildDeps(env, { log: powertoolsLog(pt.logger), metrics: powertoolsMetrics(pt.metrics), functionName: 'disruption' });
  const clients = deps.clients!;
  return { ...deps, budgets: deps.budgets ?? new DynamoBudgetCounter(clients.doc, env.tableName, env.clusterName) };
}

/** The Lambda entry point: `run` wrapped once by the shared middy chain. */
export const handler = wrapHandler('disruption', run, { schema: DisruptionInputSchema, required: ['stateMachineArn'], depsFactory: disruptionDeps });
