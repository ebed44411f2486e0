/** The documented difference `karpenter-random-tie` (index.ts lists them all). */
import { type DisruptionDifference, karpenterCandidates, sameMultiset } from './helpers.ts';
import type { OracleCandidate } from '../compare-disruption.ts';

/** The sort key Karpenter v1.15 orders a method's candidates by (drift: empty first, all drifted at the same instant here). */
function karpenterKey(method: string, c: OracleCandidate): string {
  return method === 'drift' ? String(c.empty) : c.savingsRatio.toFixed(9);
}

export const KarpenterRandomTie: DisruptionDifference = {
  id: 'karpenter-random-tie',
  reason:
    "Karpenter orders a method's candidates with an unstable sort over nodes that come out of a Go map, so " +
    'candidates with equal keys come in random order and a budget takes any of them. nodefleet breaks the tie by ' +
    'age, then name. Explained when both sets have the same Karpenter keys.',
  cases: ['parity/disruption-empty-tie-budget-one.yaml'],
  explains: (d, _s, k, plan) => {
    if (d.kind !== 'candidates' || !k.command || !plan.command) return false;
    const cands = karpenterCandidates(k);
    const method = k.command.method;
    const keys = (names: string[]) => names.map((n) => cands.get(n)).map((c) => (c ? karpenterKey(method, c) : `missing`));
    const kKeys = keys(k.command.candidates);
    const nKeys = keys(plan.command.candidates.map((c) => c.nodeName));
    return !nKeys.includes('missing') && sameMultiset(kKeys, nKeys);
  },
};
