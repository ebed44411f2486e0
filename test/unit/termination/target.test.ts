/**
 * The termination state machine's input is a request, never a fact (security review F6, F1 step 3):
 * the real statemachines/termination.asl.json and the real tasks, over the fakes. The target comes
 * from the stored NodeClaim, checked against the live Node and the instance's tags; the deadline
 * from the claim's record.
 */
import { describe, expect, it } from 'vitest';
import { run as gc } from '../../../functions/gc/handler.ts';
import type { NodeClaim } from '../../../shared/api/nodeclaim.ts';
import { terminationDeadline } from '../../../shared/api/termination-target.ts';
import { RecordingLog, RecordingMetrics } from '../../../shared/runtime/observability.ts';
import { node, nodeClaim, pdb, pod } from '../../fakes/index.ts';
import { ClaimName, InstanceId, InstanceTags, NodeName, ProviderId, harness, type Harness } from './helpers.ts';

/** Nothing was touched: no taint or cordon, no eviction, no pod deletion, no TerminateInstances, no Node deletion. */
function expectUntouched(h: Harness): void {
  expect(h.w.kube.callsOf('patchNode')).toEqual([]);
  expect(h.w.kube.callsOf('evictPod')).toEqual([]);
  expect(h.w.kube.callsOf('deletePod')).toEqual([]);
  expect(h.w.kube.callsOf('deleteNode')).toEqual([]);
  expect(h.terminateCalls).toEqual([]);
}

const gcDeps = (h: Harness) => ({
  env: { clusterName: 'test', tableName: 'nodefleet', region: 'us-east-1', logLevel: 'INFO' },
  clock: h.w.clock,
  log: new RecordingLog(),
  metrics: new RecordingMetrics(),
  store: h.w.store,
  cloud: h.w.cloud,
  kube: h.w.kube,
  budgets: h.w.budgets,
  termination: h.starter,
});

describe('termination target: from the NodeClaim only', () => {
  it('F6: StartExecution naming a managed node group node (no claim) deletes no pod and no Node: Refused, error TargetRefused', async () => {
    const h = harness();
    h.w.kube.addNode(node({ name: 'mng-system-1', providerID: 'aws:///us-east-1a/i-0mng000000000001', labels: { 'eks.amazonaws.com/nodegroup': 'system' } }));
    h.w.kube.addPod(pod({ name: 'coredns-1', namespace: 'kube-system', nodeName: 'mng-system-1', labels: { 'k8s-app': 'kube-dns' } }));
    h.w.cloud.addInstance({ instanceId: 'i-0mng000000000001', tags: { 'eks:nodegroup-name': 'system' } });

    const rec = await h.run({ nodeClaim: 'anything', nodeName: 'mng-system-1', reason: 'manual', deadlineEpochMs: 0 });

    expect(rec.status).toBe('FAILED');
    expect(rec.error).toBe('TargetRefused');
    expect(rec.cause).toMatch(/no nodeclaim anything/);
    expect(h.statesVisited(rec)).toEqual(['Cordon', 'Refused']);
    expectUntouched(h);
    expect(h.w.kube.peekNode('mng-system-1')).toBeDefined();
  });

  it("F6: a real claim's name with another node: refused, and the claim is not marked Terminating", async () => {
    const h = harness();
    h.w.kube.addNode(node({ name: 'mng-system-1', labels: { 'karpenter.sh/nodepool': 'default' } }));
    h.w.kube.addPod(pod({ name: 'coredns-1', namespace: 'kube-system', nodeName: 'mng-system-1' }));

    const rec = await h.run({ nodeName: 'mng-system-1', reason: 'manual', deadlineEpochMs: 0 });

    expect(rec.error).toBe('TargetRefused');
    expect(rec.cause).toMatch(/input nodeName "mng-system-1" is not nodeclaim default-x7k2p's node/);
    expectUntouched(h);
    expect(h.w.store.peek(ClaimName)).toMatchObject({ phase: 'Initialized' });
    expect(h.w.store.peek(ClaimName)?.termination).toBeUndefined();
  });

  it("F1 step 3: an input instanceId that is not the claim's → no TerminateInstances of it (nor of the claim's)", async () => {
    const h = harness();
    const victim = 'i-0aaaaaaaaaaaaaaa1';
    h.w.cloud.addInstance({ instanceId: victim, tags: { ...InstanceTags, 'karpenter.sh/nodeclaim': 'default-victm' } });

    const rec = await h.run({ instanceId: victim, reason: 'expiration', deadlineEpochMs: 0 });

    expect(rec.error).toBe('TargetRefused');
    expect(rec.cause).toMatch(/input instanceId "i-0aaaaaaaaaaaaaaa1" is not nodeclaim default-x7k2p's instance/);
    expectUntouched(h);
    expect(h.w.cloud.peek(victim)?.state).toBe('running');
    expect(h.w.cloud.callsOf('terminate')).toEqual([]);
  });

  it("the live Node must carry the claim's providerID and NodePool: a claim pointing at a managed node group node is refused", async () => {
    const h = harness({ withNode: false });
    h.w.kube.addNode(node({ name: NodeName, providerID: 'aws:///us-east-1a/i-0mng000000000001' }));
    h.w.kube.addPod(pod({ name: 'coredns-1', namespace: 'kube-system', nodeName: NodeName }));

    const rec = await h.run({ deadlineEpochMs: 0 });

    expect(rec.error).toBe('TargetRefused');
    expect(rec.cause).toMatch(/spec.providerID aws:\/\/\/us-east-1a\/i-0mng000000000001 is not nodeclaim default-x7k2p's providerID/);
    expectUntouched(h);
  });

  it("the instance's tags must name this cluster, the claim's NodePool and the claim", async () => {
    for (const tags of [
      { ...InstanceTags, 'nodefleet.io/cluster': 'other' },
      { ...InstanceTags, 'karpenter.sh/nodepool': 'gpu' },
      { ...InstanceTags, 'karpenter.sh/nodeclaim': 'default-other' },
      {},
    ]) {
      const h = harness({ withInstance: false });
      h.w.cloud.addInstance({ instanceId: InstanceId, tags });
      const rec = await h.run({ deadlineEpochMs: 0 });
      expect(rec.error).toBe('TargetRefused');
      expect(rec.cause).toMatch(/instance i-0abc1234def56789a: tag /);
      expectUntouched(h);
    }
  });

  it('a refusal because the claim disagrees with its live Node ends its record `refused`: gc does not carry it on for ever', async () => {
    const h = harness({ withNode: false });
    h.w.kube.addNode(node({ name: NodeName, providerID: 'aws:///us-east-1a/i-0someoneelse0001', labels: { 'karpenter.sh/nodepool': 'default' } }));
    const t = h.w.clock.nowIso();
    h.w.store.put({
      ...h.w.store.peek(ClaimName)!,
      phase: 'Terminating',
      termination: { attempt: 1, reason: 'drift', startedAt: t, heartbeatAt: t, failures: 0 },
    });

    const rec = await h.run({ reason: 'drift' });

    expect(rec.error).toBe('TargetRefused');
    expectUntouched(h);
    const claim = h.w.store.peek(ClaimName)!;
    expect(claim.termination?.ended).toMatchObject({ attempt: 1, outcome: 'refused' });
    expect(claim.lastError).toMatch(/^TargetRefused: node ip-10-0-1-23.ec2.internal: spec.providerID/);
    for (const hours of [1, 2, 24]) {
      h.w.clock.advanceSeconds(hours * 3600);
      expect((await gc({}, gcDeps(h))).restarted).toEqual([]);
    }
  });

  it('a claim whose node never registered: the instance is terminated (it has no pods), the claim finished', async () => {
    const h = harness({ withNode: false });
    h.w.store.put({ ...h.w.store.peek(ClaimName)!, nodeName: undefined, providerId: ProviderId, phase: 'Launched' });

    const rec = await h.run({});

    expect(rec.status).toBe('SUCCEEDED');
    expect(h.terminateCalls).toHaveLength(1);
    expect(h.w.store.peek(ClaimName)?.phase).toBe('Terminated');
  });
});

describe('termination deadline: from the claim record, not the input', () => {
  it("F1 step 3: a real claim with deadlineEpochMs 0 in the input → evictions respect the PDB until the claim's own grace period", async () => {
    const h = harness();
    const grace = 600;
    h.w.store.put({ ...h.w.store.peek(ClaimName)!, terminationGracePeriodSeconds: grace });
    h.w.kube.addPdb(pdb({ name: 'db', matchLabels: { app: 'db' }, disruptionsAllowed: 0 }));
    h.w.kube.addPod(pod({ name: 'db-0', nodeName: NodeName, labels: { app: 'db' }, terminationGracePeriodSeconds: 30 }));
    const deletions: number[] = [];
    const deletePod = h.w.kube.deletePod.bind(h.w.kube);
    h.w.kube.deletePod = async (ns, name, g) => {
      deletions.push(h.w.clock.nowMs());
      return deletePod(ns, name, g);
    };

    const rec = await h.run({ reason: 'manual', deadlineEpochMs: 0 });

    expect(rec.status).toBe('SUCCEEDED');
    const deadline = h.t0 + grace * 1000;
    expect(h.w.store.peek(ClaimName)?.termination?.deadlineEpochMs).toBe(deadline);
    expect(h.w.kube.callsOf('evictPod').length).toBeGreaterThan(10);
    // the pod is deleted only so that its own grace ends by the claim's deadline, never with grace 0 at once
    expect(h.w.kube.callsOf('deletePod')).toEqual([['default', 'db-0', 30]]);
    expect(deletions[0]).toBeGreaterThanOrEqual(deadline - 30_000);
    expect(h.terminateCalls).toHaveLength(1);
    expect(h.terminateCalls[0]).toBeGreaterThanOrEqual(deadline);
  });
});

describe('terminationDeadline (the rule the tasks apply)', () => {
  const t0 = Date.parse('2026-03-01T00:00:00Z');
  const claim = (o: Partial<NodeClaim> = {}) => nodeClaim({ name: ClaimName, ...o });
  const started = { termination: { attempt: 1, reason: 'manual', startedAt: new Date(t0).toISOString(), failures: 0 } };
  it('never earlier than the grace period from the recorded start; a later request is honoured', () => {
    expect(terminationDeadline(claim({ terminationGracePeriodSeconds: 600, ...started }), 0, t0 + 5_000)).toBe(t0 + 600_000);
    expect(terminationDeadline(claim({ terminationGracePeriodSeconds: 600, ...started }), t0 + 900_000, t0)).toBe(t0 + 900_000);
    // no recorded start yet: the grace period counts from now
    expect(terminationDeadline(claim({ terminationGracePeriodSeconds: 600 }), 0, t0)).toBe(t0 + 600_000);
  });
  it('no grace period and no verified notice: a requested deadline is not obeyed', () => {
    expect(terminationDeadline(claim(), 0, t0)).toBeUndefined();
    expect(terminationDeadline(claim(), undefined, t0)).toBeUndefined();
  });
  it('a notice the interruption handler verified and wrote on the claim may be shorter than the grace period, and holds without a request', () => {
    const c = claim({ terminationGracePeriodSeconds: 600, noticeDeadlineEpochMs: t0 + 120_000, ...started });
    expect(terminationDeadline(c, 0, t0)).toBe(t0 + 120_000);
    expect(terminationDeadline(c, undefined, t0)).toBe(t0 + 120_000);
  });
});
