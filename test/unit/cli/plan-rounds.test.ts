/**
 * `plan` and NodePool limits over several rounds (functions/cli/plan-rounds.ts): pods a limit
 * holds back while a round's claims reserve their largest type are placed in a later round, the
 * plan never exceeds a limit at the sizes it prints, and no pod is dropped.
 */
import { describe, expect, it } from 'vitest';
import { planInput, toPlanOutput, formatPlanTable } from '../../../functions/cli/commands/plan.ts';
import { MaxPlanRounds, planRounds } from '../../../functions/cli/plan-rounds.ts';
import { solve } from '../../../shared/scheduling/index.ts';

function nodePools(cpuLimit: string): string {
  return `apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
        - {key: karpenter.k8s.aws/instance-family, operator: In, values: [c5]}
  limits: {cpu: "${cpuLimit}"}
`;
}

/** One pod per node (hostname anti-affinity): each claim holds one pod but reserves its largest c5 type. */
const spreadPods = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 10
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            - labelSelector: {matchLabels: {app: web}}
              topologyKey: kubernetes.io/hostname
      containers: [{name: c, image: pause, resources: {requests: {cpu: "1", memory: 1Gi}}}]
`;

function input(cpuLimit: string) {
  return planInput({ nodePools: { file: 'np.yaml', text: nodePools(cpuLimit) }, pods: { file: 'pods.yaml', text: spreadPods }, region: 'us-east-1' });
}

describe('plan over rounds', () => {
  it('places in later rounds the pods one round refuses for a limit that is far from used', () => {
    // Prepare: 10 pods, one per node, under a 100-cpu limit (10 c5.large use 20 cpu).
    const i = input('100');
    expect(solve(i).unschedulable.length).toBeGreaterThan(0);

    // Act
    const r = planRounds(i);

    // Assess
    expect(r.result.unschedulable).toEqual([]);
    expect(r.result.newNodeClaims.flatMap((c) => c.pods.map((p) => p.metadata.name)).sort()).toEqual(Array.from({ length: 10 }, (_, k) => `web-${k}`).sort());
    expect(Math.max(...r.claimRounds)).toBeGreaterThan(1);
    expect(r.laterRounds.length).toBeGreaterThan(0);
    const table = formatPlanTable(toPlanOutput(r.result, { rounds: r }));
    expect(table).toMatch(/^ROUND\s+NODEPOOL/m);
    expect(table).toMatch(/^\d+ pod\(s\) placed in a later round \(2\): held by nodepool default's cpu limit \(100000m\) until round 1 launches$/m);
  });

  it('never plans past a limit at the printed sizes, and reports every pod it cannot place', () => {
    // Prepare: 10 pods, one per node, under a 9-cpu limit: four 2-cpu nodes fit, a fifth would not.
    const i = input('9');

    // Act
    const r = planRounds(i);

    // Assess
    const cpu = r.result.newNodeClaims.reduce((s, c) => s + (c.launchInstanceTypes[0].capacity.cpu ?? 0), 0);
    expect(cpu).toBeLessThanOrEqual(9000);
    expect(r.result.newNodeClaims).toHaveLength(4);
    const placed = r.result.newNodeClaims.reduce((s, c) => s + c.pods.length, 0);
    expect(placed + r.result.unschedulable.length).toBe(10);
    for (const u of r.result.unschedulable) expect(u.reasons.default).toMatch(/exceeds limits/);
    expect(r.truncated).toBe(false);
  });

  it(`stops after ${MaxPlanRounds} rounds and says so, leaving the rest unschedulable`, () => {
    // Prepare: a scheduler that places one pod per round and holds the others back by a limit.
    const i = input('100');
    const template = solve(i).newNodeClaims[0];
    let calls = 0;
    const onePerRound = (x: typeof i) => {
      calls++;
      const [first, ...rest] = x.pods;
      return {
        newNodeClaims: [{ ...template, pods: [first] }],
        placements: [],
        unschedulable: rest.map((pod) => ({ pod, reasons: { default: 'exceeds limits: nodepool default has no room left under its cpu limit (100000m)' } })),
      };
    };
    const many = { ...i, pods: Array.from({ length: MaxPlanRounds + 5 }, (_, k) => ({ ...i.pods[0], metadata: { ...i.pods[0].metadata, name: `p-${k}` } })) };

    // Act
    const r = planRounds(many, onePerRound);

    // Assess
    expect(calls).toBe(MaxPlanRounds);
    expect(r.truncated).toBe(true);
    expect(r.result.newNodeClaims).toHaveLength(MaxPlanRounds);
    expect(r.result.unschedulable).toHaveLength(5);
    expect(formatPlanTable(toPlanOutput(r.result, { rounds: r }))).toMatch(
      new RegExp(`^stopped after ${MaxPlanRounds} rounds: the pods below still wait on NodePool limits$`, 'm'),
    );
  });
});
