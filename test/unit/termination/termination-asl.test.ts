import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { TaintDisrupted } from '../../../shared/api/labels.ts';
import { TerminationTaskFunctions } from '../../../shared/api/termination.ts';
import { TransientError } from '../../../shared/api/errors.ts';
import { getCondition, TerminatedClaimRetentionSeconds } from '../../../shared/api/nodeclaim.ts';
import { node, pod, pdb } from '../../fakes/index.ts';
import { ClaimName, InstanceId, NodeName, ProviderId, harness } from './helpers.ts';

const aslValidator = createRequire(import.meta.url)('asl-validator') as (d: unknown, o?: unknown) => { isValid: boolean; errorsText: (sep?: string) => string };
const definitionText = readFileSync(new URL('../../../statemachines/termination.asl.json', import.meta.url), 'utf8');

describe('termination.asl.json definition', () => {
  it('is valid ASL once its substitutions are filled, and uses exactly the documented substitutions', () => {
    const used = [...new Set([...definitionText.matchAll(/\$\{(\w+)\}/g)].map((m) => m[1]))].sort();
    expect(used).toEqual(Object.keys(TerminationTaskFunctions).sort());
    const filled = definitionText.replace(/\$\{(\w+)\}/g, (_, n) => `arn:aws:lambda:us-east-1:123456789012:function:nodefleet-${n}`);
    const r = aslValidator(JSON.parse(filled));
    expect(r.errorsText('\n')).toBe('');
    expect(r.isValid).toBe(true);
  });

  it('gives every Task a Retry on TransientError and a Catch', () => {
    const d = JSON.parse(definitionText);
    const tasks = Object.entries<any>(d.States).filter(([, s]) => s.Type === 'Task');
    expect(tasks.map(([n]) => n)).toEqual([
      'Cordon',
      'Drain',
      'RecordDrainFailure',
      'RecordContinuation',
      'Cutoff',
      'TerminateInstance',
      'DeleteNode',
      'Finalize',
      'RecordTerminationFailure',
    ]);
    for (const [, s] of tasks) {
      expect(s.Retry[0].ErrorEquals).toContain('TransientError');
      expect(s.Retry[0].ErrorEquals).not.toContain('TargetRefusedError');
      expect(s.Catch.at(-1).ErrorEquals).toEqual(['States.ALL']);
    }
    // Every task that acts on a target ends a refusal in Refused (Fail, error TargetRefused), never in a retry or the next step.
    const refusing = tasks.filter(([, s]) => s.Catch.some((c: any) => c.ErrorEquals.includes('TargetRefusedError'))).map(([n, s]) => [n, s.Catch[0]]);
    expect(refusing).toEqual(
      ['Cordon', 'Drain', 'Cutoff', 'TerminateInstance', 'DeleteNode'].map((n) => [
        n,
        { ErrorEquals: ['TargetRefusedError'], ResultPath: '$.refusal', Next: 'Refused' },
      ]),
    );
    expect(d.States.Refused).toMatchObject({ Type: 'Fail', Error: 'TargetRefused', CausePath: '$.refusal.Cause' });
  });
});

describe('termination state machine (aws-local-stepfunctions, real tasks, fakes)', () => {
  it('clean drain: taint + cordon, the four eviction groups in order (DaemonSet pods too), mirror pods left, then terminate, delete node, finish claim, release budget', async () => {
    const h = harness();
    const { w } = h;
    w.kube.addPods(
      pod({ name: 'web-1', nodeName: NodeName }),
      pod({ name: 'web-2', nodeName: NodeName }),
      pod({ name: 'coredns', namespace: 'kube-system', nodeName: NodeName, priorityClassName: 'system-cluster-critical' }),
      pod({ name: 'aws-node', namespace: 'kube-system', nodeName: NodeName, owner: 'DaemonSet' }),
      pod({ name: 'ebs-csi-node', namespace: 'kube-system', nodeName: NodeName, owner: 'DaemonSet', priorityClassName: 'system-node-critical' }),
      pod({ name: 'kube-proxy-static', namespace: 'kube-system', nodeName: NodeName, mirror: true }),
    );
    await w.budgets.take('default', ClaimName, 1, w.clock.nowIso());

    const rec = await h.run({ deadlineEpochMs: h.t0 + 600_000, budgetNodePool: 'default' });

    expect(rec.status).toBe('SUCCEEDED');
    const patch = w.kube.callsOf('patchNode')[0][1] as any;
    expect(patch.unschedulable).toBe(true);
    expect(patch.taints).toEqual([{ key: TaintDisrupted.key, effect: 'NoSchedule', timeAdded: '2026-01-01T00:00:00.000Z' }]);
    expect(patch.labels).toEqual({ 'node.kubernetes.io/exclude-from-external-load-balancers': 'karpenter' });
    const evicted = w.kube.callsOf('evictPod').map((a) => `${a[0]}/${a[1]}`);
    expect(evicted).toEqual(['default/web-1', 'default/web-2', 'kube-system/aws-node', 'kube-system/coredns', 'kube-system/ebs-csi-node']);
    // Each group's pods have 30 s of grace: a group is evicted only once the one before is gone.
    const evictedAt = w.kube.callsOf('evictPod').map((a) => a[1]);
    expect(evictedAt).toHaveLength(5);
    expect(h.terminateCalls).toEqual([h.t0 + 120_000]);
    expect(w.cloud.peek(InstanceId)?.state).toBe('shutting-down');
    expect(w.kube.peekNode(NodeName)).toBeUndefined();
    const claim = w.store.peek(ClaimName)!;
    expect(claim.phase).toBe('Terminated');
    expect(getCondition(claim, 'Drained')?.status).toBe('True');
    expect(getCondition(claim, 'DisruptionReason')?.reason).toBe('consolidation');
    expect(w.budgets.inFlight('default')).toBe(0);
    const visited = h.statesVisited(rec);
    expect(visited.slice(0, 2)).toEqual(['Cordon', 'Drain']);
    expect(visited.slice(-5)).toEqual(['InstanceGone', 'DeleteNode', 'Finalize', 'Outcome', 'Terminated']);
    expect(visited).not.toContain('Cutoff');
  });

  it("waits for the VolumeAttachments of drained pods to detach before TerminateInstances; a tolerating pod's volume does not wait", async () => {
    const h = harness();
    const { w } = h;
    const web = pod({ name: 'web-1', nodeName: NodeName });
    web.spec.volumes = [{ name: 'data', persistentVolumeClaim: { claimName: 'data-web-1' } }];
    const agent = pod({ name: 'agent', nodeName: NodeName, tolerations: [{ operator: 'Exists' }] });
    agent.spec.volumes = [{ name: 'state', persistentVolumeClaim: { claimName: 'agent-state' } }];
    w.kube.addPods(web, agent);
    const pvc = (name: string, volumeName: string) => ({
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name, namespace: 'default' },
      spec: { volumeName },
    });
    w.kube.addObject(pvc('data-web-1', 'pv-web'), pvc('agent-state', 'pv-agent'));
    const va = (name: string, pv: string) => ({
      apiVersion: 'storage.k8s.io/v1',
      kind: 'VolumeAttachment',
      metadata: { name },
      spec: { attacher: 'ebs.csi.aws.com', nodeName: NodeName, source: { persistentVolumeName: pv } },
    });
    const detachAt = h.t0 + 120_000;
    const list = w.kube.listObjects.bind(w.kube);
    w.kube.listObjects = async (apiVersion, kind) => {
      if (kind !== 'VolumeAttachment') return list(apiVersion, kind);
      return [va('csi-agent', 'pv-agent'), ...(w.clock.nowMs() < detachAt ? [va('csi-web', 'pv-web')] : [])];
    };

    const rec = await h.run({ deadlineEpochMs: h.t0 + 600_000 });

    expect(rec.status).toBe('SUCCEEDED');
    expect(h.terminateCalls).toHaveLength(1);
    expect(h.terminateCalls[0]).toBeGreaterThanOrEqual(detachAt);
    const waiting = rec.events.filter((e) => e.type === 'TaskStateExited' && e.stateName === 'Drain').map((e) => JSON.parse(e.output!).drain);
    expect(waiting.some((d) => d.drained && !d.done && d.volumesPending.join() === 'csi-web')).toBe(true);
    const claim = w.store.peek(ClaimName)!;
    expect(getCondition(claim, 'Drained')?.status).toBe('True');
    expect(getCondition(claim, 'VolumesDetached')?.status).toBe('True');
  });

  it('a VolumeAttachment that never detaches keeps the instance until the deadline, then TerminateInstances goes ahead', async () => {
    const h = harness();
    const { w } = h;
    const web = pod({ name: 'web-1', nodeName: NodeName });
    web.spec.volumes = [{ name: 'data', persistentVolumeClaim: { claimName: 'data-web-1' } }];
    w.kube.addPod(web);
    w.kube.addObject({
      apiVersion: 'storage.k8s.io/v1',
      kind: 'VolumeAttachment',
      metadata: { name: 'csi-web' },
      spec: { attacher: 'ebs.csi.aws.com', nodeName: NodeName, source: { persistentVolumeName: 'pv-web' } },
    });
    const deadline = h.t0 + 300_000;

    const rec = await h.run({ deadlineEpochMs: deadline });

    expect(rec.status).toBe('SUCCEEDED');
    expect(h.terminateCalls).toEqual([deadline]);
    const claim = w.store.peek(ClaimName)!;
    expect(getCondition(claim, 'Drained')?.status).toBe('True');
    expect(getCondition(claim, 'VolumesDetached')).toMatchObject({ status: 'False', reason: 'TerminationGracePeriodElapsed' });
  });

  it('removes the karpenter.sh/termination finalizer after the instance is gone, so a deleted Node goes', async () => {
    const h = harness();
    const { w } = h;
    await w.kube.setNodeFinalizer(NodeName, 'karpenter.sh/termination', true);
    await w.kube.deleteNode(NodeName);
    expect(w.kube.peekNode(NodeName)?.metadata.deletionTimestamp).toBeDefined();

    const rec = await h.run({ reason: 'manual' });

    expect(rec.status).toBe('SUCCEEDED');
    expect(h.terminateCalls).toHaveLength(1);
    expect(w.kube.peekNode(NodeName)).toBeUndefined();
    expect(w.kube.callsOf('setNodeFinalizer').at(-1)).toEqual([NodeName, 'karpenter.sh/termination', false]);
  });

  it('PDB at zero blocks until the deadline: nothing terminated before it, the pod deleted early by its grace, the instance terminated right at it', async () => {
    const h = harness();
    const { w } = h;
    w.kube.addPdb(pdb({ name: 'web', matchLabels: { app: 'web' }, disruptionsAllowed: 0 }));
    w.kube.addPod(pod({ name: 'web-1', nodeName: NodeName, labels: { app: 'web' }, terminationGracePeriodSeconds: 30 }));
    const deadline = h.t0 + 300_000;

    const rec = await h.run({ deadlineEpochMs: deadline });

    expect(rec.status).toBe('SUCCEEDED');
    const evictions = w.kube.callsOf('evictPod');
    expect(evictions.length).toBeGreaterThan(10);
    // Every eviction was refused (429) and none happened after the early-deletion point.
    expect(w.kube.peekPdb('default', 'web')?.status?.disruptionsAllowed).toBe(0);
    expect(w.kube.callsOf('deletePod')).toEqual([['default', 'web-1', 30]]);
    expect(h.terminateCalls).toHaveLength(1);
    expect(h.terminateCalls[0]).toBeGreaterThanOrEqual(deadline);
    expect(h.terminateCalls[0] - deadline).toBeLessThanOrEqual(5_000);
    const drainExits = rec.events.filter((e) => e.type === 'TaskStateExited' && e.stateName === 'Drain');
    const beforeDeadline = drainExits.filter((e) => Date.parse(e.timestamp) < deadline);
    expect(beforeDeadline.every((e) => JSON.parse(e.output!).drain.done === false)).toBe(true);
  });

  it('PDB at zero and a pod that ignores its grace: the cutoff force-deletes at the deadline and terminates anyway', async () => {
    const h = harness();
    const { w } = h;
    w.kube.addPdb(pdb({ name: 'web', matchLabels: { app: 'web' }, disruptionsAllowed: 0 }));
    w.kube.addPod(pod({ name: 'web-1', nodeName: NodeName, labels: { app: 'web' } }), 'until-force');
    const deadline = h.t0 + 120_000;

    const rec = await h.run({ deadlineEpochMs: deadline, reason: 'interruption' });

    expect(rec.status).toBe('SUCCEEDED');
    expect(h.statesVisited(rec)).toContain('Cutoff');
    expect(h.terminateCalls).toEqual([deadline]);
    expect(w.kube.callsOf('deletePod').at(-1)).toEqual(['default', 'web-1', 0]);
    expect(getCondition(w.store.peek(ClaimName)!, 'Drained')).toMatchObject({ status: 'False', reason: 'TerminationGracePeriodElapsed' });
  });

  it('do-not-disrupt pod is never evicted: held, deleted at deadline − its grace, node terminated at the deadline', async () => {
    const h = harness();
    const { w } = h;
    w.kube.addPod(pod({ name: 'batch-1', nodeName: NodeName, annotations: { 'karpenter.sh/do-not-disrupt': 'true' }, terminationGracePeriodSeconds: 60 }));
    w.kube.addPod(pod({ name: 'web-1', nodeName: NodeName }));
    const deadline = h.t0 + 600_000;
    const deletes: number[] = [];
    const del = w.kube.deletePod.bind(w.kube);
    w.kube.deletePod = async (ns, name, g) => {
      deletes.push(w.clock.nowMs());
      return del(ns, name, g);
    };

    const rec = await h.run({ deadlineEpochMs: deadline });

    expect(rec.status).toBe('SUCCEEDED');
    expect(w.kube.callsOf('evictPod').map((a) => a[1])).toEqual(['web-1']);
    expect(w.kube.callsOf('deletePod')).toEqual([['default', 'batch-1', 60]]);
    expect(deletes).toEqual([deadline - 60_000]);
    expect(h.terminateCalls).toEqual([deadline]);
  });

  it('a stuck pod that never terminates stops blocking one minute after its deletion time (Karpenter), long before the deadline', async () => {
    const h = harness();
    const { w } = h;
    w.kube.addPod(pod({ name: 'stuck-1', nodeName: NodeName, terminationGracePeriodSeconds: 30 }), 'forever');
    const deadline = h.t0 + 3_600_000;

    const rec = await h.run({ deadlineEpochMs: deadline });

    expect(rec.status).toBe('SUCCEEDED');
    // evicted at t0 → deletionTimestamp t0+30 s → stuck after t0+90 s.
    expect(h.terminateCalls).toHaveLength(1);
    expect(h.terminateCalls[0] - h.t0).toBeGreaterThan(90_000);
    expect(h.terminateCalls[0] - h.t0).toBeLessThanOrEqual(92_000);
    expect(w.kube.peekPods(NodeName).map((p) => p.metadata.name)).toEqual(['stuck-1']);
  });

  it('a Terminated claim expires: Finalize sets retainUntil one retention period later (DynamoDB TTL)', async () => {
    const h = harness();
    const rec = await h.run({ deadlineEpochMs: h.t0 + 600_000 });
    expect(rec.status).toBe('SUCCEEDED');
    const claim = h.w.store.peek(ClaimName)!;
    expect(claim.phase).toBe('Terminated');
    expect(Date.parse(claim.retainUntil!) - h.w.clock.nowMs()).toBe(TerminatedClaimRetentionSeconds * 1000);
  });

  it('instance and node already gone: succeeds without TerminateInstances, claim Terminated', async () => {
    const h = harness({ withNode: false, withInstance: false });
    const rec = await h.run({ deadlineEpochMs: h.t0 + 60_000 });
    expect(rec.status).toBe('SUCCEEDED');
    expect(h.terminateCalls).toEqual([]);
    expect(h.w.kube.callsOf('patchNode')).toEqual([]);
    expect(h.w.store.peek(ClaimName)?.phase).toBe('Terminated');
  });

  it('a task throwing TransientError once is retried and the execution succeeds', async () => {
    const h = harness();
    h.w.cloud.failNext('terminate', new TransientError('RequestLimitExceeded'));
    const rec = await h.run({ deadlineEpochMs: h.t0 + 60_000 });
    expect(rec.status).toBe('SUCCEEDED');
    const types = rec.events.filter((e) => e.stateName === 'TerminateInstance').map((e) => e.type);
    expect(types).toEqual(['TaskStateEntered', 'LambdaFunctionFailed', 'TaskStateRetried', 'TaskStateExited']);
    expect(rec.events.find((e) => e.type === 'LambdaFunctionFailed')).toMatchObject({ error: 'TransientError', cause: 'RequestLimitExceeded' });
    expect(h.w.cloud.peek(InstanceId)?.state).toBe('shutting-down');
  });

  it('a permanent TerminateInstances failure records lastError on the claim and fails the execution', async () => {
    const h = harness();
    const denied = new Error('UnauthorizedOperation: not allowed');
    denied.name = 'UnauthorizedOperation';
    h.w.cloud.failAlways('terminate', denied);
    const rec = await h.run({ deadlineEpochMs: h.t0 + 60_000 });
    expect(rec.status).toBe('FAILED');
    expect(rec.error).toBe('UnauthorizedOperation');
    expect(h.w.store.peek(ClaimName)?.lastError).toBe('UnauthorizedOperation: UnauthorizedOperation: not allowed');
    expect(h.statesVisited(rec).slice(-2)).toEqual(['RecordTerminationFailure', 'Failed']);
  });

  it('a drain that keeps failing is tried again every minute, never abandoned, and still reaches the cutoff at the deadline', async () => {
    const h = harness();
    h.w.kube.addPod(pod({ name: 'web-1', nodeName: NodeName }));
    h.w.kube.failAlways('listPods', new Error('forbidden'));
    const deadline = h.t0 + 300_000;
    const rec = await h.run({ deadlineEpochMs: deadline });
    expect(rec.status).toBe('SUCCEEDED');
    expect(h.terminateCalls).toEqual([deadline]);
    const visited = h.statesVisited(rec);
    // five minutes of failures: Cordon + Drain tried again about once a minute
    expect(visited.filter((s) => s === 'RecordDrainFailure').length).toBeGreaterThanOrEqual(4);
    expect(visited).toEqual(expect.arrayContaining(['WaitAfterDrainFailure', 'Cutoff', 'TerminateInstance', 'DeleteNode', 'Finalize']));
    expect(h.w.store.peek(ClaimName)?.lastError).toBe('Error: forbidden');
    expect(h.w.store.peek(ClaimName)?.phase).toBe('Terminated');
  });

  it('without a deadline a failing drain is never abandoned: it keeps trying, and finishes once the API answers', async () => {
    const h = harness();
    h.w.kube.addPod(pod({ name: 'web-1', nodeName: NodeName }));
    h.w.kube.failAlways('listPods', new Error('forbidden'));
    // The API heals after three hours.
    const heal = h.t0 + 3 * 3600_000;
    const advance = h.w.clock.advanceSeconds.bind(h.w.clock);
    h.w.clock.advanceSeconds = (s: number) => {
      advance(s);
      if (h.w.clock.nowMs() >= heal) h.w.kube.clearFailures('listPods');
    };
    const rec = await h.run({});
    expect(rec.status).toBe('SUCCEEDED');
    expect(h.terminateCalls.length).toBe(1);
    expect(h.terminateCalls[0]).toBeGreaterThanOrEqual(heal);
    expect(h.w.store.peek(ClaimName)?.phase).toBe('Terminated');
  });

  it('re-running after a crash resumes where the node is: already cordoned and instance already shutting down', async () => {
    const h = harness();
    const { w } = h;
    w.cloud.setState(InstanceId, 'shutting-down');
    w.store.put({ ...w.store.peek(ClaimName)!, phase: 'Terminating' });
    w.kube.reset();
    w.kube.addNode(
      node({
        name: NodeName,
        providerID: ProviderId,
        labels: { 'karpenter.sh/nodepool': 'default', 'node.kubernetes.io/exclude-from-external-load-balancers': 'karpenter' },
        unschedulable: true,
        taints: [{ key: TaintDisrupted.key, effect: 'NoSchedule' }],
      }),
    );

    const rec = await h.run({ deadlineEpochMs: h.t0 + 60_000 });

    expect(rec.status).toBe('SUCCEEDED');
    expect(w.kube.callsOf('patchNode')).toEqual([]);
    expect(h.terminateCalls).toEqual([]);
    expect(w.kube.callsOf('deleteNode')).toEqual([[NodeName]]);
    expect(w.store.peek(ClaimName)?.phase).toBe('Terminated');
  });
});
