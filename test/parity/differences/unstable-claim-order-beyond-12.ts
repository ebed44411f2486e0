/** The documented difference `unstable-claim-order-beyond-12` (index.ts lists them all). */
import type { Difference } from './helpers.ts';
import { solve } from '../../../shared/scheduling/index.ts';
import { toSchedulingInput } from '../scenario.ts';

export const UnstableClaimOrderBeyond12: Difference = {
  id: 'unstable-claim-order-beyond-12',
  reason:
    "With packing: karpenter, Karpenter v1.15 sorts its in-flight claims fewest pods first with Go's sort.Slice " +
    'before each pod, which is stable only up to 12 elements: with 13 or more claims the pairing of pods depends on' +
    " the sort's internal moves. nodefleet keeps the stable order. Only the pairing differs: the same pods on as " +
    'many claims at the same prices.',
  cases: ['parity/inflight-claims-keep-sorted-order.yaml'],
  explains: (d, s, karpenter, c) => {
    if (d.kind !== 'claim-shapes' || karpenter.nodeClaims.length < 13) return false;
    if (c.divergences.some((x) => x.kind !== 'claim-shapes' && x.kind !== 'cost')) return false;
    if (c.placed.karpenterPacking !== c.placed.karpenter) return false;
    const mine = solve(toSchedulingInput(s, 'karpenter')).newNodeClaims.map((x) => x.priceUsdPerHour.toFixed(6));
    const theirs = karpenter.nodeClaims.map((x) => x.price.toFixed(6));
    return mine.length === theirs.length && [...mine].sort().join('|') === [...theirs].sort().join('|');
  },
};
