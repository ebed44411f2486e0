/**
 * Watches a scenario's NodePools for the `budgetsHonoured` expectation: on every Node change,
 * counts each pool's nodes and those being disrupted (carrying karpenter.sh/disrupted, or being
 * deleted) from the cluster itself, and compares with the budget in force at that moment
 * (shared/disruption/budgets.ts `budgetCap`: the pool's budgets, schedules in UTC, for the
 * reason). Independent of nodefleet's DynamoDB counters, which are what it checks.
 */
import type { Node } from '../../shared/api/kube.ts';
import { NodePoolSchema } from '../../shared/api/nodepool.ts';
import { LabelNodePool, TaintDisrupted } from '../../shared/api/labels.ts';
import { budgetCap } from '../../shared/disruption/budgets.ts';
import type { DisruptionReason } from '../../shared/disruption/index.ts';
import type { LocalCluster } from './kube/index.ts';

export interface BudgetWatch {
  /** Per NodePool: most nodes disrupting at once, and each moment over budget (text). */
  readonly results: Record<string, { maxDisrupting: number; violations: string[] }>;
  stop(): void;
}

/** Starts watching `pools` (NodePool name + reason) on `cluster`. */
export function watchBudgets(cluster: LocalCluster, pools: readonly { nodePool: string; reason: DisruptionReason }[]): BudgetWatch {
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
      const cap = budgetCap(pool, p.reason, mine.length, now);
      if (cap !== undefined && busy.length > cap && r.violations.length < 20) {
        r.violations.push(`${now.toISOString()}: ${busy.length} of ${mine.length} disrupting (${busy.map((n) => n.metadata.name).join(', ')}), budget allows ${cap}`);
      }
    }
  };
  const unsubscribe = cluster.onNodeChange(() => check());
  return { results, stop: unsubscribe };
}
