/** The documented difference `consolidation-on-demand-replacement-cheaper-than-spot` (index.ts lists them all). */
import { type DisruptionDifference, sameMultiset } from './helpers.ts';

export const ConsolidationOnDemandReplacementCheaperThanSpot: DisruptionDifference = {
  id: 'consolidation-on-demand-replacement-cheaper-than-spot',
  reason:
    'Replacing on-demand nodes under a NodePool allowing both capacity types, Karpenter keeps the types cheaper at ' +
    'the capacity type each would launch with, then pins the replacement to spot, so a type sold only on-demand ' +
    "cannot launch and it buys a dearer spot node. nodefleet's launch drops spot offerings dearer than the " +
    'cheapest on-demand one, so its replacement launches on-demand and costs less.',
  cases: ['parity/disruption-replacement-on-demand-cheaper-than-spot.yaml'],
  explains: (d, _s, k, plan) => {
    if (d.kind !== 'replacement-type' || !k.command || !plan.command) return false;
    if (k.command.replacements.length !== 1 || plan.command.replacements.length !== 1) return false;
    if (plan.command.candidates.every((c) => c.capacityType === 'spot')) return false;
    const theirs = k.command.replacements[0];
    const ours = plan.command.replacements[0];
    return (
      sameMultiset(
        k.command.candidates,
        plan.command.candidates.map((c) => c.nodeName),
      ) &&
      theirs.nodePool === ours.nodePool &&
      sameMultiset(theirs.capacityTypes ?? [], ['spot']) &&
      sameMultiset(ours.capacityTypes, ['on-demand']) &&
      (theirs.instanceTypeOptions ?? 0) > (theirs.instanceTypes ?? []).length &&
      ours.priceUsdPerHour < theirs.price - 1e-9
    );
  },
};
