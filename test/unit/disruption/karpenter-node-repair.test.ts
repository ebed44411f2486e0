/**
 * Karpenter's node repair tests (sigs.k8s.io/karpenter v1.15.0 pkg/controllers/node/legacyrepair
 * suite_test.go, the node.health controller), ported to nodefleet's planner
 * (shared/disruption/repair.ts) and to the gc pass that runs it (functions/gc/handler.ts):
 * test/cases/karpenter/COVERAGE.md, "node repair". Karpenter's suite uses its fake provider's one
 * policy (BadNode False, 30 minutes); the gc tests use the AWS provider's (Ready Unknown, 30 minutes).
 */
import { describe, expect, it } from 'vitest';
import type { Node, NodeCondition } from '../../../shared/api/kube.ts';
import type { NodeClaim } from '../../../shared/api/nodeclaim.ts';
import { NodePoolSchema } from '../../../shared/api/nodepool.ts';
import { parseRuntimeEnv } from '../../../shared/runtime/env.ts';
import { RecordingLog, RecordingMetrics } from '../../../shared/runtime/observability.ts';
import { allowedUnhealthy, conditionLabel, planNodeRepair, unhealthyCondition, type RepairPolicy } from '../../../shared/disruption/repair.ts';
import { run } from '../../../functions/gc/handler.ts';
import { fakeWorld, node as nodeOf, nodeClaimOf } from '../../fakes/index.ts';

const t0 = Date.parse('2026-01-01T00:00:00.000Z');
const at = (minutes: number) => new Date(t0 + minutes * 60_000);
const BadNode: RepairPolicy = { conditionType: 'BadNode', conditionStatus: 'False', tolerationSeconds: 30 * 60, action: 'ReplaceNode' };

function pair(
  name: string,
  conditions: NodeCondition[] = [],
  o: { pool?: string; annotations?: Record<string, string> } = {},
): { node: Node; claim: NodeClaim } {
  const n = nodeOf({
    name,
    providerID: `aws:///us-east-1a/i-${name}`,
    labels: { 'karpenter.sh/nodepool': o.pool ?? 'default', 'karpenter.sh/capacity-type': 'on-demand' },
  });
  n.metadata.creationTimestamp = at(0).toISOString();
  if (o.annotations) n.metadata.annotations = o.annotations;
  n.status!.conditions = [{ type: 'Ready', status: 'True', lastTransitionTime: at(0).toISOString() }, ...conditions];
  return { node: n, claim: nodeClaimOf(n) };
}
const bad = (type = 'BadNode', status: NodeCondition['status'] = 'False', reason?: string): NodeCondition => ({
  type,
  status,
  lastTransitionTime: at(0).toISOString(),
  ...(reason ? { reason } : {}),
});
const plan = (pairs: { node: Node; claim: NodeClaim }[], minutes: number, policies: RepairPolicy[] = [BadNode]) =>
  planNodeRepair(
    pairs.map((p) => p.claim),
    pairs.map((p) => p.node),
    at(minutes),
    policies,
  );
const repaired = (r: ReturnType<typeof plan>) => r.repair.map((x) => x.nodeClaim);

describe('Node Health › Reconciliation', () => {
  it('should delete nodes that are unhealthy by the cloud provider', () => {
    expect(repaired(plan([pair('n1', [bad()])], 60))).toEqual(['n1']);
  });
  it('should not delete node when unhealthy type does not match cloud provider passed in value', () => {
    expect(repaired(plan([pair('n1', [bad('FakeHealthyNode')])], 60))).toEqual([]);
  });
  it('should not delete node when health status does not match cloud provider passed in value', () => {
    expect(repaired(plan([pair('n1', [bad('BadNode', 'True')])], 60))).toEqual([]);
  });
  it('should not delete node when health duration is not reached', () => {
    expect(repaired(plan([pair('n1', [bad()])], 20))).toEqual([]);
  });
  it('should return the requeue interval for the condition closest to its terminationDuration', () => {
    const policies: RepairPolicy[] = [
      { ...BadNode, tolerationSeconds: 60 * 60 },
      { ...BadNode, conditionType: 'ValidUnhealthyCondition' },
    ];
    const { node } = pair('n1', [bad('ValidUnhealthyCondition'), bad('BadNode')]);
    const u = unhealthyCondition(node, policies)!;
    expect(u.condition.type).toBe('ValidUnhealthyCondition');
    expect(u.repairAtMs - at(27).getTime()).toBe(3 * 60_000);
  });
  it('should return the requeue interval for the time between now and when the nodeClaim termination time', () => {
    const u = unhealthyCondition(pair('n1', [bad()]).node, [BadNode])!;
    expect(u.repairAtMs - at(27).getTime()).toBe(3 * 60_000);
  });
});

describe('Node Health › Repair policies', () => {
  it('should ignore policies with a non-replace action', () => {
    expect(repaired(plan([pair('n1', [bad()])], 60, [{ ...BadNode, action: 'RebootNode' }]))).toEqual([]);
  });
  it('should replace with the replace policy when a reboot policy also matches', () => {
    const policies: RepairPolicy[] = [{ ...BadNode, reasonRegex: 'Transient', tolerationSeconds: 10 * 60, action: 'RebootNode' }, BadNode];
    const p = pair('n1', [bad('BadNode', 'False', 'Transient')]);
    expect(repaired(plan([p], 15, policies))).toEqual([]);
    expect(repaired(plan([p], 30, policies))).toEqual(['n1']);
  });
  it('should only match a policy with a reason regex when the condition reason matches', () => {
    const policies: RepairPolicy[] = [{ ...BadNode, reasonRegex: '^Fatal$' }];
    expect(repaired(plan([pair('n1', [bad('BadNode', 'False', 'Other')])], 60, policies))).toEqual([]);
    expect(repaired(plan([pair('n1', [bad('BadNode', 'False', 'Fatal')])], 60, policies))).toEqual(['n1']);
  });
});

// pkg/controllers/node/health/policy_internal_test.go › Repair Policies › Matching: the facts of matching that hold for the node.health controller too.
describe('Repair Policies › Matching', () => {
  const accel: RepairPolicy = { conditionType: 'AcceleratorReady', conditionStatus: 'False', tolerationSeconds: 10 * 60, action: 'ReplaceNode' };
  it('does not match a different condition type or status', () => {
    expect(unhealthyCondition(pair('n1', [bad('DifferentCondition')]).node, [accel])).toBeUndefined();
    expect(unhealthyCondition(pair('n1', [bad('AcceleratorReady', 'True')]).node, [accel])).toBeUndefined();
  });
  it('does not treat a missing transition time as predating the Node', () => {
    const { node } = pair('n1', [{ type: 'AcceleratorReady', status: 'False', reason: 'NvidiaXID48Error' }]);
    node.metadata.creationTimestamp = at(5).toISOString();
    expect(unhealthyCondition(node, [accel])?.repairAtMs).toBe(at(15).getTime());
  });
  it('reconstructs eligibility from the current condition after restart', () => {
    const policies: RepairPolicy[] = [
      { ...accel, reasonRegex: '^ImmediateReason$', tolerationSeconds: 30 * 60 },
      { ...accel, tolerationSeconds: 2 * 60 * 60 },
    ];
    const cond = (reason: string): NodeCondition => ({ type: 'AcceleratorReady', status: 'False', reason, lastTransitionTime: at(0).toISOString() });
    expect(repaired(plan([pair('n1', [cond('UnknownReason')])], 60, policies))).toEqual([]);
    expect(unhealthyCondition(pair('n1', [cond('ImmediateReason')]).node, policies)?.repairAtMs).toBe(at(30).getTime());
  });
});

describe('Node Health › Forceful termination', () => {
  it('should ignore do-not-disrupt on a node', () => {
    expect(repaired(plan([pair('n1', [bad()], { annotations: { 'karpenter.sh/do-not-disrupt': 'true' } })], 60))).toEqual(['n1']);
  });
  it('should ignore unhealthy nodes if more then 20% of the nodes are unhealthy in a nodepool', () => {
    const pairs = Array.from({ length: 10 }, (_, i) => pair(`n${i}`, i < 3 ? [bad()] : []));
    const r = plan(pairs, 60);
    expect(r.repair).toEqual([]);
    expect(r.blocked.map((b) => b.nodeClaim)).toEqual(['n0', 'n1', 'n2']);
    expect(r.blocked[0].message).toBe('more than 20% nodes are unhealthy in the nodepool');
    // Unhealthy counts whatever the toleration: the guard holds from the first minute.
    expect(allowedUnhealthy(10)).toBe(2);
  });
  it('should consider round up when there is a low number of nodes for a nodepool', () => {
    const pairs = [pair('n0', [bad()]), pair('n1'), pair('n2')];
    expect(repaired(plan(pairs, 60))).toEqual(['n0']);
    expect(allowedUnhealthy(3)).toBe(1);
  });
  it('counts each NodePool on its own (an unhealthy pool does not block another)', () => {
    const pairs = [
      pair('a0', [bad()], { pool: 'a' }),
      pair('a1', [bad()], { pool: 'a' }),
      pair('b0', [bad()], { pool: 'b' }),
      pair('b1', [], { pool: 'b' }),
      pair('b2', [], { pool: 'b' }),
    ];
    const r = plan(pairs, 60);
    expect(repaired(r)).toEqual(['b0']);
    expect(r.blocked.map((b) => b.nodeClaim)).toEqual(['a0', 'a1']);
  });
  it("leaves a claim already terminating, and a Node that is not the claim's, alone", () => {
    const t = pair('n0', [bad()]);
    const other = pair('n1', [bad()]);
    const r = plan(
      [
        { node: t.node, claim: { ...t.claim, phase: 'Terminating' } },
        { node: other.node, claim: { ...other.claim, providerId: 'aws:///us-east-1a/i-else' } },
        pair('n2'),
        pair('n3'),
        pair('n4'),
        pair('n5'),
        pair('n6'),
        pair('n7'),
        pair('n8'),
        pair('n9'),
      ],
      60,
    );
    expect(r.repair).toEqual([]);
  });
});

describe("Node Health › through gc (the AWS provider's policies)", () => {
  function world(gates = 'NodeRepair=true') {
    const w = fakeWorld({ start: at(0) });
    // The claims' NodePool exists (gc terminates the claims of a deleted NodePool).
    w.kube.setNodePools([
      NodePoolSchema.parse({
        apiVersion: 'karpenter.sh/v1',
        kind: 'NodePool',
        metadata: { name: 'default' },
        spec: { template: { spec: { nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' }, requirements: [] } } },
      }),
    ]);
    const metrics = new RecordingMetrics();
    const log = new RecordingLog();
    const env = parseRuntimeEnv({ NODEFLEET_CLUSTER_NAME: 'test', NODEFLEET_TABLE_NAME: 'nodefleet', AWS_REGION: 'us-east-1', FEATURE_GATES: gates });
    const deps = { env, clock: w.clock, log, metrics, store: w.store, cloud: w.cloud, kube: w.kube, termination: w.starter };
    return { w, metrics, log, deps };
  }
  async function unhealthyNode(w: ReturnType<typeof fakeWorld>, name: string, o: { tgpSeconds?: number } = {}) {
    const p = pair(name, []);
    p.node.status!.conditions = [{ type: 'Ready', status: 'Unknown', reason: 'NodeStatusUnknown', lastTransitionTime: at(0).toISOString() }];
    w.kube.addNode(p.node);
    w.cloud.addInstance({
      instanceId: `i-${name}`,
      launchTime: at(0).toISOString(),
      tags: { 'nodefleet.io/cluster': 'test', 'karpenter.sh/nodepool': 'default', 'karpenter.sh/nodeclaim': name },
    });
    await w.store.create({
      ...p.claim,
      imageId: 'ami-1',
      conditions: [
        { type: 'Launched', status: 'True', lastTransitionTime: at(0).toISOString() },
        { type: 'Registered', status: 'True', lastTransitionTime: at(0).toISOString() },
        { type: 'Initialized', status: 'True', lastTransitionTime: at(0).toISOString() },
      ],
      ...(o.tgpSeconds !== undefined ? { terminationGracePeriodSeconds: o.tgpSeconds } : {}),
    });
  }

  it("should set annotation termination grace period when force termination is started (the termination's deadline is now)", async () => {
    const { w, deps } = world();
    await unhealthyNode(w, 'n1');
    w.clock.advanceSeconds(30 * 60 - 60);
    expect((await run({}, deps)).repaired).toEqual([]);
    w.clock.advanceSeconds(60);
    const r = await run({}, deps);
    expect(r.repaired).toEqual([{ nodeClaim: 'n1', nodeName: 'n1', condition: 'Ready' }]);
    expect(w.starter.startedFor('n1')).toMatchObject({ reason: 'unhealthy', nodeName: 'n1', instanceId: 'i-n1', deadlineEpochMs: w.clock.now().getTime() });
  });
  it('should not respect termination grace period if set on the nodepool', async () => {
    const { w, deps } = world();
    await unhealthyNode(w, 'n1', { tgpSeconds: 2 * 60 * 60 });
    w.clock.advanceSeconds(60 * 60);
    await run({}, deps);
    expect(w.starter.startedFor('n1')?.deadlineEpochMs).toBe(w.clock.now().getTime());
  });
  it('should not update termination grace period if set before the current time (a terminating claim keeps its termination)', async () => {
    const { w, deps } = world();
    await unhealthyNode(w, 'n1');
    const c = (await w.store.get('n1'))!;
    const deadline = at(57).getTime();
    await w.store.update({
      ...c,
      phase: 'Terminating',
      termination: { attempt: 1, reason: 'drift', deadlineEpochMs: deadline, startedAt: at(50).toISOString(), heartbeatAt: at(59).toISOString(), failures: 0 },
    });
    w.clock.advanceSeconds(60 * 60);
    expect((await run({}, deps)).repaired).toEqual([]);
    expect((await w.store.get('n1'))?.termination?.deadlineEpochMs).toBe(deadline);
  });
  it('should ignore node disruption budgets', async () => {
    const { w, deps } = world();
    w.kube.setNodePools([
      NodePoolSchema.parse({
        apiVersion: 'karpenter.sh/v1',
        kind: 'NodePool',
        metadata: { name: 'default' },
        spec: {
          template: { spec: { nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' }, requirements: [] } },
          disruption: { budgets: [{ nodes: '0' }] },
        },
      }),
    ]);
    await unhealthyNode(w, 'n1');
    w.clock.advanceSeconds(60 * 60);
    expect((await run({}, { ...deps, budgets: w.budgets })).repaired.map((x) => x.nodeClaim)).toEqual(['n1']);
  });
  it('should fire a karpenter_nodeclaims_disrupted_total metric when unhealthy', async () => {
    const { w, deps, metrics, log } = world();
    await unhealthyNode(w, 'n1');
    w.clock.advanceSeconds(60 * 60);
    await run({}, deps);
    expect(metrics.total('karpenter_nodeclaims_disrupted_total', { reason: 'unhealthy', nodepool: 'default', capacity_type: 'on-demand' })).toBe(1);
    expect(metrics.total('karpenter_nodeclaims_unhealthy_disrupted_total', { condition: 'ready', nodepool: 'default', image_id: 'ami-1' })).toBe(1);
    expect(log.withMessage('deleting unhealthy node')[0].fields).toMatchObject({ condition: 'Ready', status: 'Unknown' });
  });
  it("does nothing with the NodeRepair gate off (Karpenter's default)", async () => {
    const { w, deps } = world('NodeRepair=false');
    await unhealthyNode(w, 'n1');
    w.clock.advanceSeconds(60 * 60);
    expect((await run({}, deps)).repaired).toEqual([]);
    expect(w.starter.started).toEqual([]);
  });
  it('logs NodeRepairBlocked while the NodePool is too unhealthy', async () => {
    const { w, deps, log } = world();
    await unhealthyNode(w, 'n1');
    w.clock.advanceSeconds(60 * 60);
    // Two of two unhealthy: more than ceil(20 % of 2) = 1.
    await unhealthyNode(w, 'n2');
    const r = await run({}, deps);
    expect(r.repaired).toEqual([]);
    expect(r.repairBlocked.map((b) => b.nodeClaim)).toEqual(['n1', 'n2']);
    expect(log.withMessage('NodeRepairBlocked')).toHaveLength(2);
  });
  it("conditionLabel is Karpenter's snake case", () => {
    expect(['Ready', 'AcceleratedHardwareReady', 'ContainerRuntimeReady'].map(conditionLabel)).toEqual([
      'ready',
      'accelerated_hardware_ready',
      'container_runtime_ready',
    ]);
  });
});
