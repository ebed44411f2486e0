/**
 * The documented differences of the parity harness: each names a case that exists, and the
 * topology ones explain their case's divergence (with Karpenter's decision on it as the oracle
 * gave it, written out here) and nothing once the cause is gone.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { solve } from '../../shared/scheduling/index.ts';
import { PodInfo } from '../../shared/scheduling/pod.ts';
import { scenarioFromCase, ParityCasesDir } from './cases.ts';
import { compare } from './compare.ts';
import { Differences, documentedReason } from './differences.ts';
import { karpenterPoolDomains, karpenterSpreadDomains, reachableDomains, seats, skew, spreadCounts } from './domains.ts';
import type { OracleOutput } from './oracle.ts';
import { toSchedulingInput, type ParityScenario } from './scenario.ts';

const Zone = 'topology.kubernetes.io/zone';
const load = (name: string) => scenarioFromCase(join(ParityCasesDir, `${name}.yaml`));

function karpenter(claims: { nodePool: string; type: string; pods: string[]; price?: number; zones?: string[] }[], pending: Record<string, string>): OracleOutput {
  return {
    nodeClaims: claims.map((c) => ({ nodePool: c.nodePool, requests: {}, instanceTypes: [c.type], instanceTypeOptions: 1, price: c.price ?? 0.4, capacityTypes: null, zones: c.zones ?? null, pods: c.pods.map((p) => `default/${p}`) })),
    placements: [],
    unschedulable: Object.entries(pending).map(([pod, reason]) => ({ pod: `default/${pod}`, reasons: { karpenter: reason } })),
    solveSeconds: 0,
    solveCpuSeconds: 0,
  };
}

/** The ids documenting the scenario's `extra-placed` divergence against Karpenter's decision `k`. */
function explainExtra(s: ParityScenario, k: OracleOutput): (string | undefined)[] {
  const c = compare(k, solve(toSchedulingInput(s, 'karpenter')), solve(toSchedulingInput(s, 'cost')));
  const extra = c.divergences.filter((d) => d.kind === 'extra-placed');
  expect(extra).toHaveLength(1);
  return extra.map((d) => documentedReason(d, s, k, c));
}

/** The ids documenting each divergence of `kind` against Karpenter's decision `k`. */
function explainKind(s: ParityScenario, k: OracleOutput, kind: string): (string | undefined)[] {
  const c = compare(k, solve(toSchedulingInput(s, 'karpenter')), solve(toSchedulingInput(s, 'cost')));
  const found = c.divergences.filter((d) => d.kind === kind);
  expect(found).toHaveLength(1);
  return found.map((d) => documentedReason(d, s, k, c));
}

/** The scenario without the pod named `name`. */
const without = (s: ParityScenario, name: string): ParityScenario => ({ ...s, pods: s.pods.filter((p) => p.metadata.name !== name) });

describe('documented differences', () => {
  it('each names a case that exists', () => {
    for (const d of Differences) expect(existsSync(join(ParityCasesDir, '..', d.case)), d.id).toBe(true);
  });

  it('Karpenter counts zones of excluded types and of a pool\'s own In list; a node can only be in us-east-1a', () => {
    const s = load('spread-ignores-unlaunchable-zones');
    expect([...karpenterPoolDomains(s, Zone)].sort()).toEqual(['us-east-1a', 'us-east-1b', 'us-east-1c']);
    expect([...reachableDomains(s, Zone)]).toEqual(['us-east-1a']);
    const noRoom = 'no instance type met the scheduling requirements or had enough resources or had a required offering';
    const k = karpenter([{ nodePool: 'general', type: 'big', pods: ['web-0'] }], { 'web-1': noRoom, 'web-2': noRoom, 'web-3': noRoom });
    expect(explainExtra(s, k)).toEqual(['spread-counts-unlaunchable-domains']);
    // Without the pool listing us-east-1c and the type offered in us-east-1b, every zone Karpenter counts can launch.
    const real: ParityScenario = { ...s, nodePools: s.nodePools.slice(0, 1), instanceTypes: s.instanceTypes.filter((t) => t.name === 'big') };
    expect(explainExtra(real, k)).toEqual([undefined]);
  });

  it('a spread placed outside the zone Karpenter pinned, within maxSkew, is explained; in that zone it is not', () => {
    const s = load('spread-domain-where-the-claim-launches');
    const pinned = (zone: string) => `no instance type has enough resources, requirements=karpenter.sh/nodepool In [default], ${Zone} In [${zone}], resources={"cpu":"2500m"}`;
    const k = (zone: string) => karpenter([{ nodePool: 'default', type: 'big', pods: ['batch-0'] }], { 'web-0': pinned(zone), 'web-1': pinned(zone) });
    expect(explainExtra(s, k('us-east-1a'))).toEqual(['topology-domain-ignores-claim-offerings']);
    expect(explainExtra(s, k('us-east-1b'))).toEqual([undefined]);
    // The skew the explanation checks: web-0 alone in us-east-1b, over Karpenter's three zones.
    const seated = seats(s, solve(toSchedulingInput(s, 'karpenter')));
    const web = s.pods.find((p) => p.metadata.name === 'web-0')!;
    const counts = spreadCounts(web, new PodInfo(web).spreads[0], seated)!;
    expect([...counts]).toEqual([['us-east-1b', 1]]);
    expect(skew(counts, karpenterSpreadDomains(s, web, new PodInfo(web).spreads[0]))).toBe(1);
    expect(skew(new Map([['us-east-1b', 2]]), new Set(['us-east-1a', 'us-east-1b']))).toBe(2);
  });

  it('a spread pod on a claim of its own in the zone Karpenter pinned, beside another claim for nodefleet, is explained; in the same zone it is not', () => {
    const s = load('spread-joins-claim-where-it-launches');
    const k = (zone: string) =>
      karpenter(
        [
          { nodePool: 'default', type: 'big', pods: ['batch-0'] },
          { nodePool: 'default', type: 'small', price: 0.1, zones: [zone], pods: ['web-new'] },
        ],
        {},
      );
    expect(explainKind(s, k('us-east-1a'), 'claims')).toEqual(['topology-domain-ignores-claim-offerings']);
    // Karpenter's claim in nodefleet's zone: not the pin this difference is about.
    expect(explainKind(s, k('us-east-1c'), 'claims')).toEqual([undefined]);
    // Without the running replica us-east-1c is a least-populated zone, which Karpenter's spread may pick too.
    expect(explainKind(without(s, 'web-running'), k('us-east-1a'), 'claims')).toEqual([undefined]);
  });

  it('a spread pod Karpenter left pending with the zone emptied by its own pod affinity is explained; without the affinity it is not', () => {
    const s = load('spread-with-affinity-where-the-claim-launches');
    const reason = `did not tolerate taint; no instance type met the scheduling requirements or had enough resources or had a required offering, requirements=node.kubernetes.io/instance-type In [std], ${Zone} DoesNotExist, resources={"cpu":"500m"}`;
    const k = karpenter([], { 'web-new': reason });
    expect(explainExtra(s, k)).toEqual(['topology-domain-ignores-claim-offerings']);
    const free: ParityScenario = structuredClone(s);
    delete (free.pods.find((p) => p.metadata.name === 'web-new')!.spec as { affinity?: unknown }).affinity;
    expect(explainExtra(free, k)).toEqual([undefined]);
    // No replica to follow: nothing for the affinity to conflict with.
    expect(explainExtra(without(s, 'web-running'), k)).toEqual([undefined]);
  });

  it('a self-repelling pod on an existing node in a zone no NodePool lists is explained; one in a pool zone is not', () => {
    const s = load('anti-affinity-on-node-outside-pool-zones');
    expect([...karpenterPoolDomains(s, Zone)]).toEqual(['us-east-1a']);
    const limits = 'all available instance types exceed limits for nodepool (NodePool=default)';
    const k = karpenter([], { 'web-0': limits, 'web-1': limits });
    expect(explainExtra(s, k)).toEqual(['inverse-anti-affinity-misses-node-domains']);
    const listed: ParityScenario = structuredClone(s);
    (listed.nodePools[0].spec as { template: { spec: { requirements: { values: string[] }[] } } }).template.spec.requirements[0].values.push('us-east-1c');
    expect(explainExtra(listed, k)).toEqual([undefined]);
  });
});
