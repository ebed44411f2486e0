/**
 * The one place where launch differences between nodefleet and Karpenter's AWS provider are
 * documented (`npm run parity -- --launch`, ./launch.ts): each entry names the field, why nodefleet
 * differs, and a case showing it. A difference no entry matches fails the run.
 */
import type { LaunchScenario } from './launch-scenario.ts';
import type { NodefleetLaunch } from './launch.ts';

/** One difference: the compared field (e.g. `userData.nodeLabels`), its key (a tag or label key, an override), both values. */
export interface LaunchDifference {
  field: string;
  key: string;
  nodefleet: unknown;
  karpenter: unknown;
}

export interface DocumentedLaunchDifference {
  field: string | RegExp;
  reason: string;
  /** A scenario where it shows (what a reader can reproduce). */
  case: string;
  matches: (d: LaunchDifference, s: LaunchScenario, nf: NodefleetLaunch) => boolean;
}

const refusedOnly = (nf: NodefleetLaunch) => 'refused' in nf && nf.refused.every((r) => r.includes('is not supported by nodefleet') || r.includes('not supported by nodefleet'));

export const DocumentedLaunchDifferences: readonly DocumentedLaunchDifference[] = [
  {
    field: 'outcome.refused',
    reason:
      'a field or AMI family nodefleet does not honour is refused ("not supported by nodefleet", shared/api/nodeclass-support.ts: validate exits 1, the class is not ready) where Karpenter launches with it',
    case: 'spec.context: fc-0123456789abcdef0 (test/unit/nodeclass-support.test.ts)',
    matches: (_d, _s, nf) => refusedOnly(nf),
  },
];

/** The reason a difference is documented, or undefined. */
export function documentedLaunchDifference(d: LaunchDifference, s: LaunchScenario, nf: NodefleetLaunch): string | undefined {
  for (const e of DocumentedLaunchDifferences) {
    const fieldMatches = typeof e.field === 'string' ? e.field === d.field : e.field.test(d.field);
    if (fieldMatches && e.matches(d, s, nf)) return e.reason;
  }
  return undefined;
}
