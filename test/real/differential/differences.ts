/**
 * The documented differences between nodefleet's `validate` and the API server with Karpenter's
 * CRDs (docs/validate-differential.md explains each, with a case). A disagreement matches one
 * when its predicate holds; anything else is undocumented.
 */
import type { Verdict } from '../validate-differential.ts';

export interface Difference {
  id: string;
  /** One line: what differs and why. */
  reason: string;
  matches(v: Verdict): boolean;
}

export const Differences: Difference[] = [];

/** The id of the documented difference explaining a disagreement, if any. */
export function documentedDifference(v: Verdict): string | undefined {
  return Differences.find((d) => d.matches(v))?.id;
}
