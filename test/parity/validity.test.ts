/**
 * kube-scheduler's check of nodefleet's decisions in the parity harness (run by the Go oracle on
 * Kubernetes' own matchers): the decisions nodefleet makes on parity cases pass, and the same
 * decisions with one pod moved to break a DoNotSchedule spread, a taint, a node selector or a
 * required anti-affinity do not. Builds the oracle (go build) on first use.
 */
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { solve, type SchedulingResult } from '../../shared/scheduling/index.ts';
import { ParityCasesDir, scenarioFromCase } from './cases.ts';
import { toSchedulingInput } from './scenario.ts';
import { buildOracle } from './oracle.ts';
import { invalidPlacements as check } from './validity.ts';
import type { ParityScenario } from './scenario.ts';

let bin = '';
beforeAll(() => {
  bin = buildOracle();
}, 1_500_000); // a cold Go build (module download, compile) on a loaded 2-core machine
const invalidPlacements = (s: ParityScenario, r: SchedulingResult) => check(s, [r], bin)[0];

const load = (name: string) => scenarioFromCase(join(ParityCasesDir, `${name}.yaml`));

describe('invalidPlacements', () => {
  it("a zone spread pushed beyond maxSkew over the existing nodes' zones is refused; nodefleet's own decision is not", () => {
    const s = load('spread-unlaunchable-zone-sends-replica-to-claim');
    const r = solve(toSchedulingInput(s, 'karpenter'));
    expect(invalidPlacements(s, r)).toEqual([]);
    // app-4-0 moved from node-0 (us-east-1b) to node-1 (us-east-1a): 4 against 0 there, maxSkew 2.
    const moved: SchedulingResult = { ...r, placements: r.placements.map((p) => (p.pod.metadata.name === 'app-4-0' ? { ...p, node: 'node-1' } : p)) };
    const bad = invalidPlacements(s, moved);
    expect(bad).toContain('default/app-4-0: topology spread on topology.kubernetes.io/zone has 4 in us-east-1a against 0 (maxSkew 2)');
    expect(bad.every((line) => line.startsWith('default/app-4-'))).toBe(true);
  });

  it('replicas whose node affinity differs see other counts: four app-4 pods in us-east-1a, two of them required there, are not refused', () => {
    const s = load('spread-unlaunchable-zone-sends-replica-to-claim');
    for (const p of s.pods.filter((x) => x.metadata.name === 'app-4-1' || x.metadata.name === 'app-4-2')) {
      p.spec.affinity = {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [{ matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['us-east-1a'] }] }],
          },
        },
      };
    }
    const r = solve(toSchedulingInput(s, 'karpenter'));
    // All four on node-1 (us-east-1a): app-4-3 and app-4-0 bind first (1 and 2 against 0, maxSkew 2), then app-4-1
    // and app-4-2, whose spread counts only the nodes their affinity admits (us-east-1a alone): kube-scheduler binds them all.
    const app4 = (name: string) => /^app-4-[0-3]$/.test(name);
    const all: SchedulingResult = {
      ...r,
      placements: [
        ...r.placements.filter((p) => !app4(p.pod.metadata.name)),
        ...r.placements.filter((p) => app4(p.pod.metadata.name)).map((p) => ({ ...p, node: 'node-1' })),
      ],
      newNodeClaims: r.newNodeClaims.map((c) => ({ ...c, pods: c.pods.filter((p) => !app4(p.metadata.name)) })),
    };
    const placed = [...all.placements.map((p) => p.pod.metadata.name)].filter(app4).sort();
    const onClaims = r.newNodeClaims.flatMap((c) => c.pods.filter((p) => app4(p.metadata.name)));
    expect([...placed, ...onClaims.map((p) => p.metadata.name)].sort()).toEqual(['app-4-0', 'app-4-1', 'app-4-2', 'app-4-3']);
    all.placements.push(...onClaims.map((pod) => ({ pod, node: 'node-1' })));
    expect(invalidPlacements(s, all)).toEqual([]);
  });

  it('a pod on a node whose taint it does not tolerate, or whose labels its node selector refuses, is refused', () => {
    const s = load('spread-ignore-affinity-relaxes-preference-onto-node');
    const r = solve(toSchedulingInput(s, 'karpenter'));
    expect(invalidPlacements(s, r)).toEqual([]);
    // app-1-0 (no tolerations) onto node-2, tainted dedicated=np-1:NoSchedule.
    const tainted: SchedulingResult = { ...r, placements: r.placements.map((p) => (p.pod.metadata.name === 'app-1-0' ? { ...p, node: 'node-2' } : p)) };
    expect(invalidPlacements(s, tainted)).toEqual(['default/app-1-0: does not tolerate dedicated=np-1:NoSchedule']);
    // app-0-0 (nodeSelector capacity-type on-demand, tolerating every taint) from its claim onto the spot node-0.
    const pod = r.newNodeClaims.flatMap((c) => c.pods).find((p) => p.metadata.name === 'app-0-0')!;
    const moved: SchedulingResult = {
      ...r,
      placements: [...r.placements, { pod, node: 'node-0' }],
      newNodeClaims: r.newNodeClaims.map((c) => ({ ...c, pods: c.pods.filter((p) => p !== pod) })),
    };
    expect(invalidPlacements(s, moved)).toContain('default/app-0-0: node node-0 matches none of its required node selector terms');
  });

  it('two replicas that repel each other by zone on one claim are refused, both ways', () => {
    const s = load('zone-anti-affinity-replica-joins-inflight-claim');
    const r = solve(toSchedulingInput(s, 'karpenter'));
    expect(invalidPlacements(s, r)).toEqual([]);
    const from = r.newNodeClaims.findIndex((c) => c.pods.some((p) => p.metadata.name === 'app-2-1'));
    const to = r.newNodeClaims.findIndex((c) => c.pods.some((p) => p.metadata.name === 'app-2-0'));
    expect(from).not.toBe(to);
    const pod = r.newNodeClaims[from].pods.find((p) => p.metadata.name === 'app-2-1')!;
    const claims = r.newNodeClaims.map((c, i) =>
      i === from ? { ...c, pods: c.pods.filter((p) => p !== pod) } : i === to ? { ...c, pods: [...c.pods, pod] } : c,
    );
    const bad = invalidPlacements(s, { ...r, newNodeClaims: claims });
    expect(bad.some((line) => line.startsWith('default/app-2-1: required pod anti-affinity on topology.kubernetes.io/zone with default/app-2-0'))).toBe(true);
    expect(bad.some((line) => line.startsWith('default/app-2-0: required pod anti-affinity on topology.kubernetes.io/zone with default/app-2-1'))).toBe(true);
  });

  it('a replica on a claim not yet pinned to a zone its honoured affinity admits leaves the verdict open', () => {
    // Parity seed 11, path 1914: app-4-1's spot claim is open over us-east-1a and us-east-1c.
    const s = load('spread-honor-affinity-replica-on-claim-open-over-zones');
    const r = solve(toSchedulingInput(s, 'cost'));
    const claim = r.newNodeClaims.find((c) => c.pods.some((p) => p.metadata.name === 'app-4-1'))!;
    expect(claim.zones).toEqual(['us-east-1a', 'us-east-1c']);
    expect(invalidPlacements(s, r)).toEqual([]);
    // Pinned to us-east-1b, which the pods refuse, it is certainly out of the count: 2 against 0.
    const outside = { ...r, newNodeClaims: r.newNodeClaims.map((c) => (c === claim ? { ...c, zones: ['us-east-1b'] } : c)) };
    expect(invalidPlacements(s, outside).some((line) => line.includes('has 2 in on-demand against 0'))).toBe(true);
  });
});
