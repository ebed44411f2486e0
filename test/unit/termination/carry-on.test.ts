/**
 * A termination is always carried through: an execution that fails is retried by gc under the next
 * execution name (the failed one's record kept), a long drain continues as a new execution before
 * the history limit, and at the deadline the instance goes even when no execution is left.
 * The real state machine and task functions (aws-local-stepfunctions) with the real gc handler.
 */
import { describe, expect, it } from 'vitest';
import { run as gc } from '../../../functions/gc/handler.ts';
import { MaxDrainLoopsPerExecution } from '../../../shared/disruption/drain-plan.ts';
import { terminationExecutionName } from '../../../shared/api/termination.ts';
import { DeadlineBackstopSeconds, restartBackoffSeconds } from '../../../shared/disruption/gc.ts';
import { RecordingLog, RecordingMetrics } from '../../../shared/runtime/observability.ts';
import { pdb, pod } from '../../fakes/index.ts';
import { ClaimName, InstanceId, NodeName, harness, type Harness } from './helpers.ts';

function gcDeps(h: Harness) {
  const { w } = h;
  return {
    env: { clusterName: 'test', tableName: 'nodefleet', region: 'us-east-1', logLevel: 'INFO' },
    clock: w.clock,
    log: new RecordingLog(),
    metrics: new RecordingMetrics(),
    store: w.store,
    cloud: w.cloud,
    kube: w.kube,
    budgets: w.budgets,
    termination: h.starter,
  };
}

describe('termination carried through (state machine + gc)', () => {
  it('an attempt whose Cordon never succeeded and whose terminate failed still records itself, so gc carries it on (chaos seed 14)', async () => {
    // Prepare: Cordon fails before its claim write, the deadline is now (an instance stopped out of band), EC2 refuses the terminate
    const h = harness();
    h.w.store.failNext('update', new Error('Cordon lost (injected)'));
    h.w.cloud.failAlways('terminate', Object.assign(new Error('UnauthorizedOperation: not allowed'), { name: 'UnauthorizedOperation' }));
    // Act
    const first = await h.run({ reason: 'interruption', deadlineEpochMs: h.t0 });
    // Assess: the claim says Terminating with this attempt ended failed, and gc starts the next one
    expect(first.status).toBe('FAILED');
    const claim = h.w.store.peek(ClaimName)!;
    expect(claim.phase).toBe('Terminating');
    expect(claim.termination).toMatchObject({ attempt: 1, reason: 'interruption', failures: 1, ended: { attempt: 1, outcome: 'failed' } });
    h.w.cloud.clearFailures('terminate');
    expect((await gc({}, gcDeps(h))).restarted).toEqual([{ nodeClaim: ClaimName, attempt: 2, reason: 'failed' }]);
  });

  it('a permanent TerminateInstances failure: the execution fails, gc starts attempt 2 under a new name after the backoff, the failed record stays', async () => {
    const h = harness();
    const denied = Object.assign(new Error('UnauthorizedOperation: not allowed'), { name: 'UnauthorizedOperation' });
    h.w.cloud.failAlways('terminate', denied);
    await h.w.budgets.take('default', ClaimName, 1, h.w.clock.nowIso());
    const first = await h.run({ deadlineEpochMs: h.t0 + 60_000, budgetNodePool: 'default' });
    expect(first.status).toBe('FAILED');
    const claim = h.w.store.peek(ClaimName)!;
    expect(claim.phase).toBe('Terminating');
    expect(claim.termination).toMatchObject({
      attempt: 1,
      failures: 1,
      ended: { attempt: 1, outcome: 'failed' },
      budgetNodePool: 'default',
      deadlineEpochMs: h.t0 + 60_000,
    });

    // Starting attempt 1 again is a no-op (same name): only gc's next attempt carries it on.
    await h.starter.start({ nodeClaim: ClaimName, reason: 'consolidation' });
    expect(h.sfn.listExecutions()).toHaveLength(1);

    const deps = gcDeps(h);
    h.w.cloud.clearFailures('terminate');
    expect((await gc({}, deps)).restarted).toEqual([]); // backoff not over yet
    h.w.clock.advanceSeconds(restartBackoffSeconds(1));
    const pass = await gc({}, deps);
    expect(pass.restarted).toEqual([{ nodeClaim: ClaimName, attempt: 2, reason: 'failed' }]);
    const second = await h.sfn.waitForExecution(terminationExecutionName(ClaimName, 2));
    expect(second.name).toBe(`${ClaimName}_2`);
    expect(second.status).toBe('SUCCEEDED');
    expect(h.sfn.describeExecution(ClaimName)?.status).toBe('FAILED');
    expect(h.w.cloud.peek(InstanceId)?.state).toBe('shutting-down');
    expect(h.w.store.peek(ClaimName)?.phase).toBe('Terminated');
    expect(Object.keys(await h.w.budgets.holders('default'))).toEqual([]);
    // Nothing left to carry on.
    h.w.clock.advanceSeconds(3600);
    expect((await gc({}, deps)).restarted).toEqual([]);
  });

  it('at the deadline the instance is terminated regardless: no execution left, gc cuts it off within the backstop', async () => {
    const h = harness();
    const deadline = h.t0 + 120_000;
    // The claim is terminating with a deadline but its execution is gone (never started / lost).
    h.w.store.put({
      ...h.w.store.peek(ClaimName)!,
      phase: 'Terminating',
      termination: {
        attempt: 1,
        reason: 'consolidation',
        deadlineEpochMs: deadline,
        startedAt: h.w.clock.nowIso(),
        heartbeatAt: h.w.clock.nowIso(),
        failures: 0,
      },
    });
    const deps = { ...gcDeps(h), termination: undefined };
    h.w.clock.advanceSeconds(120 + DeadlineBackstopSeconds - 1);
    expect((await gc({}, deps)).terminated).toEqual([]);
    h.w.clock.advanceSeconds(1);
    expect((await gc({}, deps)).terminated).toEqual([InstanceId]);
    expect(h.w.cloud.peek(InstanceId)?.state).toBe('shutting-down');
  });

  it('a silent attempt (no heartbeat for 30 min) is carried on as the next attempt', async () => {
    const h = harness();
    h.w.store.put({
      ...h.w.store.peek(ClaimName)!,
      phase: 'Terminating',
      termination: { attempt: 1, reason: 'drift', startedAt: h.w.clock.nowIso(), heartbeatAt: h.w.clock.nowIso(), failures: 0 },
    });
    const deps = gcDeps(h);
    h.w.clock.advanceSeconds(29 * 60);
    expect((await gc({}, deps)).restarted).toEqual([]);
    h.w.clock.advanceSeconds(60);
    expect((await gc({}, deps)).restarted).toEqual([{ nodeClaim: ClaimName, attempt: 2, reason: 'stale' }]);
    const rec = await h.sfn.waitForExecution(`${ClaimName}_2`);
    expect(rec.status).toBe('SUCCEEDED');
    expect(JSON.parse(rec.input!)).toMatchObject({ reason: 'drift', attempt: 2, nodeName: NodeName, instanceId: InstanceId });
  });

  it(`a drain blocked for ever (PDB at zero, no deadline) continues as a new execution after ${MaxDrainLoopsPerExecution} rounds, and the next attempt carries on`, async () => {
    const h = harness();
    h.w.kube.addPod(pod({ name: 'db-0', nodeName: NodeName, labels: { app: 'db' } }));
    h.w.kube.addPdb(pdb({ name: 'db', matchLabels: { app: 'db' }, disruptionsAllowed: 0 }));
    const first = await h.run({});
    expect(first.status).toBe('SUCCEEDED');
    expect(JSON.parse(first.output!)).toMatchObject({ ending: 'continued', drain: { attempt: MaxDrainLoopsPerExecution, continueAsNew: true } });
    // well under the 25,000-event limit of a Standard execution
    expect(first.events.length).toBeLessThan(25_000);
    expect(h.w.store.peek(ClaimName)?.termination).toMatchObject({ attempt: 1, ended: { attempt: 1, outcome: 'continued' } });
    expect(h.w.cloud.peek(InstanceId)?.state).toBe('running');
    // The PDB is lifted; gc's next pass starts attempt 2, which finishes the drain.
    h.w.kube.setDisruptionsAllowed('default', 'db', 1);
    const pass = await gc({}, gcDeps(h));
    expect(pass.restarted).toEqual([{ nodeClaim: ClaimName, attempt: 2, reason: 'continued' }]);
    const second = await h.sfn.waitForExecution(`${ClaimName}_2`);
    expect(second.status).toBe('SUCCEEDED');
    expect(h.w.store.peek(ClaimName)?.phase).toBe('Terminated');
  }, 120_000);
});
