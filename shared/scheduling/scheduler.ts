/**
 * The scheduling simulation (first stub: everything unschedulable until the packer lands).
 */
import type { SchedulingInput, SchedulingResult } from './types.ts';

/** Places pending pods on existing capacity and new NodeClaims. Pure; never throws on bad pods. */
export function solve(input: SchedulingInput): SchedulingResult {
  return {
    newNodeClaims: [],
    placements: [],
    unschedulable: input.pods.map((pod) => ({ pod, reasons: Object.fromEntries(input.nodePools.map((np) => [np.metadata.name, 'not implemented yet'])) })),
  };
}
