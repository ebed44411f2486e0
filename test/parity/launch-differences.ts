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

const refusedOnly = (nf: NodefleetLaunch) =>
  'refused' in nf && nf.refused.every((r) => r.includes('is not supported by nodefleet') || r.includes('not supported by nodefleet'));

export const DocumentedLaunchDifferences: readonly DocumentedLaunchDifference[] = [
  {
    field: 'outcome.refused',
    reason:
      'a field or AMI family nodefleet does not honour is refused ("not supported by nodefleet", shared/api/nodeclass-support.ts: validate exits 1, the class is not ready) where Karpenter launches with it',
    case: 'spec.context: fc-0123456789abcdef0 (test/unit/nodeclass-support.test.ts)',
    matches: (_d, _s, nf) => refusedOnly(nf),
  },
  {
    field: /^(fleet|template)\.tags\./,
    reason:
      "nodefleet's ownership tag nodefleet.io/cluster (gc and list() consider only instances carrying it, shared/api/labels.ts TagNodefleetCluster) on everything a launch creates, and karpenter.sh/nodeclaim on the instance, volumes and fleet at launch (Karpenter adds it with CreateTags right after the launch); Karpenter's tags are all there too",
    case: 'any launch: test/unit/aws/ec2.test.ts (launch tags)',
    matches: (d) =>
      d.karpenter === undefined && (d.key === 'nodefleet.io/cluster' || (d.key === 'karpenter.sh/nodeclaim' && d.field.startsWith('fleet.tags.'))),
  },
  {
    field: 'userData.taints',
    reason:
      "two taints with the same key and effect (one of spec.taints, one of spec.startupTaints, other values) are registered once, the first: the API server refuses a Node whose taints repeat a key and effect, so the kubelet of Karpenter's user data (which lists both) cannot register the node",
    case: 'taints [example.com/gpu=true:NoSchedule], startupTaints [example.com/gpu=a:NoSchedule] (seed 1, scenario 29)',
    matches: (d) => {
      const n = (d.nodefleet as string[]) ?? [];
      const k = (d.karpenter as string[]) ?? [];
      const keyEffect = (t: string) => `${t.split(/[=:]/)[0]}:${t.split(':').pop()}`;
      return n.every((t) => k.includes(t)) && new Set(k.map(keyEffect)).size === new Set(n.map(keyEffect)).size && k.length > n.length;
    },
  },
  {
    field: 'outcome.error',
    reason:
      "user data over EC2's limit of 16384 bytes (16 KB raw, before base64) is refused by nodefleet with one line naming spec.userData (validate when the class's text alone is over, the launch for the merged text: shared/aws/ec2.ts MaxUserDataBytes); Karpenter's provider does not measure it against the limit (it logs from 90 %) and sends the template: EC2 refuses the CreateLaunchTemplate, which Karpenter's validation controller reports as ValidationSucceeded=False, reason UserDataTooLarge (the oracle, on the fake EC2, launches)",
    case: 'an AL2023 spec.userData shell script of about 18 KB (seed 1, scenario 12; test/unit/aws/launch-limits.test.ts)',
    matches: (d, s, nf) =>
      'error' in nf &&
      nf.error.includes("over EC2's user data limit") &&
      typeof s.nodeClass.spec.userData === 'string' &&
      Buffer.byteLength(s.nodeClass.spec.userData) > 16384 - 4096 &&
      d.karpenter === 'launched',
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
