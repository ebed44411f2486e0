/**
 * Deliberate differences between nodefleet and Karpenter, the one place they are listed: each
 * with the reason and the case (test/cases/…) that pins nodefleet's behaviour. A parity
 * divergence that one of these explains is counted as documented, not as a failure.
 */
import type { Divergence } from './compare.ts';
import type { OracleOutput } from './oracle.ts';
import type { ParityScenario } from './scenario.ts';

export interface Difference {
  id: string;
  /** Why nodefleet decides differently, and why that is right for its users. */
  reason: string;
  /** The case that pins the behaviour (path under test/cases). */
  case: string;
  /** True when this difference explains the divergence on this scenario. */
  explains: (d: Divergence, s: ParityScenario, karpenter: OracleOutput) => boolean;
}

export const Differences: Difference[] = [];

/** The id of the documented difference explaining `d`, or undefined. */
export function documentedReason(d: Divergence, s: ParityScenario, karpenter: OracleOutput): string | undefined {
  return Differences.find((x) => x.explains(d, s, karpenter))?.id;
}
