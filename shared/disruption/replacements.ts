/**
 * Replacements for drift and graceful expiration: the new NodeClaims the candidates' pods need,
 * as many as the simulation asks for, each launching its normal cheapest-first set.
 */
import { MaxLaunchInstanceTypes } from '../api/ports.ts';
import { toReplacement } from './consolidation.ts';
import type { Simulator } from './simulate.ts';
import type { Candidate, ReplacementClaim } from './types.ts';

/**
 * The replacement claims, or why the candidates cannot go (a pod would not schedule).
 * @param opts.includeBlockedPods also place pods the drain would not move yet (simulate.ts)
 */
export function replacementsFor(
  sim: Simulator,
  candidates: readonly Candidate[],
  opts: { includeBlockedPods?: boolean } = {},
): { replacements: ReplacementClaim[] } | { reason: string } {
  const s = sim.simulate(candidates, opts);
  if (s.unschedulable.length > 0) return { reason: `not all pods would schedule, ${s.unschedulable[0].pod}: ${s.unschedulable[0].reason}` };
  return {
    replacements: s.newNodeClaims.map((nc) => {
      const types = (nc.launchInstanceTypes.length > 0 ? nc.launchInstanceTypes : nc.instanceTypes).slice(0, MaxLaunchInstanceTypes);
      return toReplacement(nc, types, nc.capacityTypes);
    }),
  };
}
