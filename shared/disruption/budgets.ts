/**
 * NodePool disruption budgets: which are active now, and how many nodes each reason may take.
 *
 * Rules (KC pkg/apis/v1/nodepool.go `GetAllowedDisruptionsByReason`, `Budget.IsActive`;
 * pkg/controllers/disruption/helpers.go `BuildDisruptionBudgetMapping`):
 * - a budget applies to a reason when it lists no reasons or lists that one;
 * - it is active when it has no schedule, or when a schedule hit (cron, always UTC) happened
 *   within the last `duration`;
 * - `nodes` is a count, or a percentage of the pool's managed, initialized nodes rounded UP;
 * - the most restrictive active budget wins; with none active for a reason, that reason is
 *   unbounded (budgets only restrict);
 * - nodes NotReady or already being deleted use up the allowance: allowed = cap − disrupting.
 * Budgets govern graceful methods only; forceful expiration ignores them.
 */
import { CronExpressionParser } from 'cron-parser';
import type { Budget, NodePool } from '../api/nodepool.ts';
import { ValidationError } from '../api/errors.ts';
import { DefaultBudgetNodes } from './constants.ts';
import { parseDurationSeconds } from '../api/duration.ts';
import type { BudgetStatus, DisruptionReason } from './types.ts';

/** Karpenter's cron macros (robfig/cron `ParseStandard`), spelled as 5-field expressions. */
const CronMacros: Record<string, string> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};

/**
 * The standard 5-field form of a budget schedule (macros expanded).
 * @throws ValidationError for a macro Karpenter does not know or a field count other than 5
 *   (Karpenter has no seconds field and no time zones: schedules are UTC).
 */
export function normalizeSchedule(schedule: string): string {
  const s = schedule.trim();
  if (s.startsWith('@')) {
    const expanded = CronMacros[s.toLowerCase()];
    if (!expanded)
      throw new ValidationError(`budget schedule "${schedule}": unknown macro (use @yearly, @annually, @monthly, @weekly, @daily, @midnight or @hourly)`);
    return expanded;
  }
  if (/^(TZ|CRON_TZ)=/.test(s)) throw new ValidationError(`budget schedule "${schedule}": time zones are not supported, schedules are UTC`);
  if (s.split(/\s+/).length !== 5) throw new ValidationError(`budget schedule "${schedule}": must have 5 fields (minute hour day-of-month month day-of-week)`);
  return s;
}

/**
 * Whether a budget is active at `now`: no schedule, or the first schedule hit after
 * `now − duration` is not after `now` (KC `Budget.IsActive`). The schedule is read in UTC.
 * A user who means 09:00 in Seoul (UTC+9) must write "0 0 * * mon-fri", not "0 9 * * mon-fri".
 * @throws ValidationError when the schedule does not parse or the duration is missing.
 */
export function isBudgetActive(budget: Budget, now: Date): boolean {
  if (budget.schedule === undefined && budget.duration === undefined) return true;
  if (budget.schedule === undefined || budget.duration === undefined) {
    throw new ValidationError('budget: schedule and duration must be set together');
  }
  const durationMs = (parseDurationSeconds(budget.duration) ?? 0) * 1000;
  const checkPoint = new Date(now.getTime() - durationMs);
  let next: Date;
  try {
    const it = CronExpressionParser.parse(normalizeSchedule(budget.schedule), { currentDate: checkPoint, tz: 'UTC' });
    next = it.next().toDate();
  } catch (err) {
    if (err instanceof ValidationError) throw err;
    throw new ValidationError(`budget schedule "${budget.schedule}": ${(err as Error).message}`);
  }
  return next.getTime() <= now.getTime();
}

/** Nodes a single budget allows for a pool of `nodes`: a count, or ceil(pct × nodes). */
export function budgetNodes(budget: Pick<Budget, 'nodes'>, nodes: number): number {
  const m = /^(\d+)%$/.exec(budget.nodes);
  if (m) return Math.ceil((Number(m[1]) * nodes) / 100);
  return Number(budget.nodes);
}

/** The NodePool's budgets, or Karpenter's default `[{nodes: "10%"}]`. */
export function budgetsOf(nodePool: NodePool): Budget[] {
  return nodePool.spec.disruption?.budgets ?? [{ nodes: DefaultBudgetNodes }];
}

/**
 * The most restrictive active budget for `reason`, or undefined when none applies (unbounded).
 * Expired (graceful expiration) and Rebalance (rebalance replacement), nodefleet's extensions,
 * are governed by the budgets that list no reasons.
 */
export function budgetCap(nodePool: NodePool, reason: DisruptionReason, nodes: number, now: Date): number | undefined {
  let cap: number | undefined;
  for (const b of budgetsOf(nodePool)) {
    const applies = !b.reasons || b.reasons.length === 0 || (b.reasons as string[]).includes(reason);
    if (!applies || !isBudgetActive(b, now)) continue;
    const n = budgetNodes(b, nodes);
    cap = cap === undefined ? n : Math.min(cap, n);
  }
  return cap;
}

/**
 * Budget status of one pool for one reason.
 * @param nodes managed, initialized nodes of the pool
 * @param disrupting of those, nodes NotReady or being deleted
 */
export function budgetStatus(nodePool: NodePool, reason: DisruptionReason, nodes: number, disrupting: number, now: Date): BudgetStatus {
  const cap = budgetCap(nodePool, reason, nodes, now);
  return {
    nodePool: nodePool.metadata.name,
    reason,
    nodes,
    cap,
    disrupting,
    allowed: cap === undefined ? Infinity : Math.max(0, cap - disrupting),
  };
}

/**
 * The limit to pass to the budget counter (`BudgetCounter.take`) for a pool: the cap minus the
 * disrupting nodes that are NOT already counter holders (holders are counted by the counter
 * itself, so they must not be subtracted twice). Infinity when unbounded.
 */
export function counterLimit(status: BudgetStatus, disruptingNonHolders: number): number {
  if (status.cap === undefined) return Number.MAX_SAFE_INTEGER;
  return Math.max(0, status.cap - disruptingNonHolders);
}
