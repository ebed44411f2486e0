/** The documented difference `consolidation-cost-aware-packing` (index.ts lists them all). */
import { type DisruptionDifference, karpenterCandidates } from './helpers.ts';
import { type DisruptionPlan, planDisruption } from '../../../shared/disruption/index.ts';
import { type DisruptionScenario, toDisruptionSnapshot } from '../disruption-scenario.ts';
import { type OracleDisruption, compareDisruption } from '../compare-disruption.ts';

/** USD/h a Karpenter command saves: its candidates' prices (as the oracle lists them) minus its replacements'; undefined when a price is missing. */
function karpenterSavings(k: OracleDisruption): number | undefined {
  if (!k.command) return undefined;
  const cands = karpenterCandidates(k);
  let sum = 0;
  for (const n of k.command.candidates) {
    const c = cands.get(n);
    if (!c) return undefined;
    sum += c.price;
  }
  return sum - k.command.replacements.reduce((x, r) => x + r.price, 0);
}

/** nodefleet's plan on a scenario with `packing: karpenter` in its consolidation simulations; computed once per scenario. */
const karpenterPackingPlans = new WeakMap<DisruptionScenario, DisruptionPlan>();

function karpenterPackingPlan(s: DisruptionScenario): DisruptionPlan {
  let p = karpenterPackingPlans.get(s);
  if (!p) karpenterPackingPlans.set(s, (p = planDisruption(toDisruptionSnapshot(s, 'karpenter'), new Date(s.now))));
  return p;
}

const isConsolidation = (method: string) => method === 'multi-node-consolidation' || method === 'single-node-consolidation';

export const ConsolidationCostAwarePacking: DisruptionDifference = {
  id: 'consolidation-cost-aware-packing',
  reason:
    "nodefleet's consolidation simulations pack cost-aware, as its provisioner does; Karpenter's use its CPU-" +
    'then-memory pod order, which can change which candidate sets consolidate. Explained only when nodefleet with ' +
    'packing: karpenter decides exactly as Karpenter and the cost-aware decision saves at least as much per hour.',
  cases: ['parity/disruption-consolidation-cost-packing.yaml'],
  explains: (_d, s, k, plan) => {
    if (!k.command || !plan.command || !isConsolidation(k.command.method) || !isConsolidation(plan.command.method)) return false;
    if (compareDisruption(k, karpenterPackingPlan(s)).length > 0) return false;
    const theirs = karpenterSavings(k);
    return theirs !== undefined && plan.command.savingsUsdPerHour !== undefined && plan.command.savingsUsdPerHour >= theirs - 1e-9;
  },
};
