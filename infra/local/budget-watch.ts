/**
 * Watches a scenario's NodePools for the `budgetsHonoured` expectation: on every Node change,
 * counts each pool's nodes and those being disrupted (carrying karpenter.sh/disrupted, or being
 * deleted) from the cluster itself, and compares with the budget in force at that moment: the
 * pool's budgets that apply to the reason (no `reasons` = all), active when unscheduled or when the
 * last UTC cron hit is within `duration` (Karpenter `Budget.IsActive`), the tightest of
 * `N` / ceil(P% × nodes); none active = unbounded. Written here on its own, from Karpenter's
 * documented rules, as an oracle: independent of nodefleet's budget code
 * (shared/disruption/budgets.ts) and DynamoDB counters, which are what it checks.
 */
import type { Node } from '../../shared/api/kube.ts';
import { CronExpressionParser } from 'cron-parser';
import { NodePoolSchema, type NodePool } from '../../shared/api/nodepool.ts';
import { LabelNodePool, TaintDisrupted } from '../../shared/api/labels.ts';
import { parseDurationSeconds } from './clock.ts';
import type { ScenarioCluster } from './scenario-cluster.ts';

type DisruptionReason = 'Empty' | 'Drifted' | 'Underutilized';

/** The budget in force for `reason` in a pool of `nodes` at `now` (see module doc); undefined = unbounded. */
export function budgetInForce(pool: NodePool, reason: DisruptionReason, nodes: number, now: Date): number | undefined {
  let cap: number | undefined;
  for (const b of pool.spec.disruption?.budgets ?? [{ nodes: '10%' }]) {
    if (b.reasons?.length && !(b.reasons as string[]).includes(reason)) continue;
    if (b.schedule !== undefined) {
      const from = new Date(now.getTime() - parseDurationSeconds(b.duration ?? '0s') * 1000);
      const hit = CronExpressionParser.parse(b.schedule, { currentDate: from, tz: 'UTC' }).next().toDate();
      if (hit.getTime() > now.getTime()) continue;
    }
    const pct = /^(\d+)%$/.exec(b.nodes);
    const n = pct ? Math.ceil((Number(pct[1]) * nodes) / 100) : Number(b.nodes);
    cap = cap === undefined ? n : Math.min(cap, n);
  }
  return cap;
}

export interface BudgetWatch {
  /** Per NodePool: most nodes disrupting at once, and each moment over budget (text). */
  readonly results: Record<string, { maxDisrupting: number; violations: string[] }>;
  stop(): void;
}

/** Starts watching `pools` (NodePool name + reason) on `cluster`. */
export function watchBudgets(cluster: ScenarioCluster, pools: readonly { nodePool: string; reason: DisruptionReason }[]): BudgetWatch {
  const results: BudgetWatch['results'] = Object.fromEntries(pools.map((p) => [p.nodePool, { maxDisrupting: 0, violations: [] }]));
  const disrupting = (n: Node) => !!n.metadata.deletionTimestamp || (n.spec?.taints ?? []).some((t) => t.key === TaintDisrupted.key);
  const check = () => {
    const now = cluster.now();
    const nodes = cluster.nodes();
    for (const p of pools) {
      const obj = cluster.get('karpenter.sh/v1', 'NodePool', p.nodePool);
      if (!obj) continue;
      const pool = NodePoolSchema.parse(obj);
      const mine = nodes.filter((n) => n.metadata.labels?.[LabelNodePool] === p.nodePool);
      const busy = mine.filter(disrupting);
      const r = results[p.nodePool];
      r.maxDisrupting = Math.max(r.maxDisrupting, busy.length);
      const cap = budgetInForce(pool, p.reason, mine.length, now);
      if (cap !== undefined && busy.length > cap && r.violations.length < 20) {
        r.violations.push(
          `${now.toISOString()}: ${busy.length} of ${mine.length} disrupting (${busy.map((n) => n.metadata.name).join(', ')}), budget allows ${cap}`,
        );
      }
    }
  };
  const unsubscribe = cluster.onNodeChange(() => check());
  return { results, stop: unsubscribe };
}
