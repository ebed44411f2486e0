import { describe, expect, it } from 'vitest';
import { run, LaunchTimeoutSeconds, RegistrationTimeoutSeconds } from '../../../functions/gc/handler.ts';
import { DisruptionLeaseSeconds, planGarbageCollection } from '../../../shared/disruption/gc.ts';
import { RecordingLog, RecordingMetrics } from '../../../shared/runtime/observability.ts';
import { fakeWorld, nodeClaim } from '../../fakes/index.ts';

function world() {
  const w = fakeWorld({ cloud: { tags: { 'nodefleet.io/cluster': 'test' } } });
  const log = new RecordingLog();
  return {
    w,
    log,
    deps: {
      env: { clusterName: 'test', tableName: 'nodefleet', region: 'us-east-1', logLevel: 'INFO' as const },
      clock: w.clock,
      log,
      metrics: new RecordingMetrics(),
      store: w.store,
      cloud: w.cloud,
      kube: w.kube,
    },
  };
}

const t0 = '2026-01-01T00:00:00.000Z';

describe('gc', () => {
  it('a node that never registers: instance terminated and claim deleted after 15 minutes', async () => {
    const { w, log, deps } = world();
    w.cloud.addInstance({
      instanceId: 'i-1',
      launchTime: t0,
      tags: { 'nodefleet.io/cluster': 'test', 'karpenter.sh/nodepool': 'default', 'karpenter.sh/nodeclaim': 'default-a' },
    });
    await w.store.create(
      nodeClaim({
        name: 'default-a',
        phase: 'Launched',
        instanceId: 'i-1',
        createdAt: t0,
        conditions: [{ type: 'Launched', status: 'True', lastTransitionTime: t0 }],
      }),
    );
    w.clock.advanceSeconds(RegistrationTimeoutSeconds - 1);
    expect((await run({}, deps)).deleted).toEqual([]);
    w.clock.advanceSeconds(2);
    const r = await run({}, deps);
    expect(r.deleted).toEqual([{ nodeClaim: 'default-a', reason: 'registration_timeout' }]);
    expect(r.terminated).toEqual(['i-1']);
    expect(w.cloud.peek('i-1')?.state).toBe('shutting-down');
    expect(await w.store.get('default-a')).toBeUndefined();
    expect(log.withMessage('terminating due to timeout')[0].fields).toMatchObject({ timeout: '15m', reason: 'registration_timeout' });
  });

  it('a claim never launched is deleted after 5 minutes', async () => {
    const { w, deps } = world();
    await w.store.create(nodeClaim({ name: 'default-b', phase: 'Pending', createdAt: t0 }));
    w.clock.advanceSeconds(LaunchTimeoutSeconds + 1);
    expect((await run({}, deps)).deleted).toEqual([{ nodeClaim: 'default-b', reason: 'launch_timeout' }]);
  });

  it('an orphan instance (tagged, no claim) older than 30 s is terminated; a younger one is not', async () => {
    const { w, deps } = world();
    // Its claim was written (recording the table's claims epoch), then lost.
    await w.store.create(nodeClaim({ name: 'gone-x', createdAt: t0 }));
    await w.store.delete('gone-x');
    w.cloud.addInstance({
      instanceId: 'i-old',
      launchTime: t0,
      tags: { 'nodefleet.io/cluster': 'test', 'karpenter.sh/nodepool': 'default', 'karpenter.sh/nodeclaim': 'gone-x' },
    });
    w.clock.advanceSeconds(31);
    w.cloud.addInstance({ instanceId: 'i-new', launchTime: w.clock.nowIso(), tags: { 'nodefleet.io/cluster': 'test' } });
    const r = await run({}, deps);
    expect(r.terminated).toEqual(['i-old']);
    expect(w.cloud.peek('i-new')?.state).toBe('running');
  });

  it('a claim whose instance was terminated outside nodefleet is cleaned up with its node', async () => {
    const { w, deps } = world();
    w.cloud.addInstance({ instanceId: 'i-2', launchTime: t0, state: 'terminated' });
    await w.store.create(
      nodeClaim({
        name: 'default-c',
        instanceId: 'i-2',
        providerId: 'aws:///us-east-1a/i-2',
        nodeName: 'n-2',
        createdAt: t0,
        conditions: [
          { type: 'Launched', status: 'True', lastTransitionTime: t0 },
          { type: 'Registered', status: 'True', lastTransitionTime: t0 },
        ],
      }),
    );
    w.kube.addNode({ metadata: { name: 'n-2', labels: { 'karpenter.sh/nodepool': 'default' } }, spec: { providerID: 'aws:///us-east-1a/i-2' } });
    w.clock.advanceSeconds(60);
    const r = await run({}, deps);
    expect(r.deleted).toEqual([{ nodeClaim: 'default-c', reason: 'instance_gone' }]);
    expect(await w.kube.getNode('n-2')).toBeUndefined();
  });

  it('a claim it deletes takes its Node along even when the Node holds karpenter.sh/termination and is already being deleted (chaos seed 2066)', async () => {
    // Arrange: the termination's first step failed before DeleteNode; the node was deleted (out of
    // band or by the agent), so it waits on the finalizer; then the instance went.
    const { w, deps } = world();
    w.cloud.addInstance({ instanceId: 'i-3', launchTime: t0, state: 'terminated' });
    await w.store.create(
      nodeClaim({
        name: 'default-d',
        instanceId: 'i-3',
        providerId: 'aws:///us-east-1a/i-3',
        nodeName: 'n-3',
        createdAt: t0,
        conditions: [
          { type: 'Launched', status: 'True', lastTransitionTime: t0 },
          { type: 'Registered', status: 'True', lastTransitionTime: t0 },
        ],
      }),
    );
    w.kube.addNode({
      metadata: { name: 'n-3', labels: { 'karpenter.sh/nodepool': 'default' }, finalizers: ['karpenter.sh/termination'], deletionTimestamp: t0 },
      spec: { providerID: 'aws:///us-east-1a/i-3' },
    });
    w.kube.addNode({
      metadata: { name: 'n-4', labels: { 'karpenter.sh/nodepool': 'default' }, finalizers: ['karpenter.sh/termination'] },
      spec: { providerID: 'aws:///us-east-1a/i-4' },
    });
    w.cloud.addInstance({ instanceId: 'i-4', launchTime: t0, state: 'terminated' });
    await w.store.create(
      nodeClaim({
        name: 'default-e',
        instanceId: 'i-4',
        providerId: 'aws:///us-east-1a/i-4',
        nodeName: 'n-4',
        createdAt: t0,
        conditions: [
          { type: 'Launched', status: 'True', lastTransitionTime: t0 },
          { type: 'Registered', status: 'True', lastTransitionTime: t0 },
        ],
      }),
    );
    w.clock.advanceSeconds(60);
    // Act
    const r = await run({}, deps);
    // Assess
    expect(r.deleted.map((d) => d.nodeClaim).sort()).toEqual(['default-d', 'default-e']);
    expect(await w.kube.getNode('n-3')).toBeUndefined();
    expect(await w.kube.getNode('n-4')).toBeUndefined();
  });
});

describe('gc after the table was replaced or emptied (adding a local index replaces it: README, upgrading)', () => {
  it('records the claims epoch on its first pass, keeps and reports every node launched before it, and still terminates an orphan launched after it', async () => {
    // Prepare: two nodes launched with the old table; the new table is empty (no epoch, no claims).
    const { w, log, deps } = world();
    const metrics = new RecordingMetrics();
    const tags = (claim: string) => ({ 'nodefleet.io/cluster': 'test', 'karpenter.sh/nodepool': 'default', 'karpenter.sh/nodeclaim': claim });
    w.cloud.addInstance({ instanceId: 'i-a', launchTime: t0, tags: tags('default-a') });
    w.cloud.addInstance({ instanceId: 'i-b', launchTime: t0, tags: tags('default-b') });
    w.clock.advanceSeconds(600);
    // Act: the first passes over the new table
    const first = await run({}, { ...deps, metrics });
    w.clock.advanceSeconds(60);
    const second = await run({}, { ...deps, metrics });
    // Assess: the epoch is the first pass's time, and stays; nothing terminated, both reported each pass
    expect(w.store.peekEpoch()).toBe(Date.parse(t0) + 600_000);
    for (const r of [first, second]) {
      expect(r.terminated).toEqual([]);
      expect(r.unownedBeforeEpoch.map((u) => u.instanceId)).toEqual(['i-a', 'i-b']);
    }
    expect(first.unownedBeforeEpoch[0]).toEqual({ instanceId: 'i-a', launchTime: t0, nodeClaim: 'default-a', nodePool: 'default' });
    expect(w.cloud.peek('i-a')?.state).toBe('running');
    expect(w.cloud.peek('i-b')?.state).toBe('running');
    const warned = log.withMessage('instance launched before the claims table began has no nodeclaim, not terminating it: adopt or remove it');
    expect(warned.map((l) => l.fields?.instance)).toEqual(['i-a', 'i-b', 'i-a', 'i-b']);
    expect(metrics.total('nodefleet_unowned_instances_before_epoch')).toBe(4);

    // Act: a launch after the epoch whose claim is lost (created, launched, then deleted)
    await w.store.create(nodeClaim({ name: 'default-c', createdAt: w.clock.nowIso() }));
    w.cloud.addInstance({ instanceId: 'i-c', launchTime: w.clock.nowIso(), tags: tags('default-c') });
    await w.store.delete('default-c');
    w.clock.advanceSeconds(31);
    const third = await run({}, deps);
    // Assess: the post-epoch orphan goes after its 30 s grace; the old nodes stay
    expect(third.terminated).toEqual(['i-c']);
    expect(third.unownedBeforeEpoch.map((u) => u.instanceId)).toEqual(['i-a', 'i-b']);
  });
});

describe('gc: a Node deleted out of band (chaos seeds 2, 3: instance-without-node)', () => {
  it('terminates the instance of a registered claim whose Node is gone and deletes the claim', async () => {
    // Prepare
    const { w, log, deps } = world();
    const registered = [
      { type: 'Launched', status: 'True', lastTransitionTime: t0 },
      { type: 'Registered', status: 'True', lastTransitionTime: t0 },
    ] as const;
    w.cloud.addInstance({
      instanceId: 'i-n',
      launchTime: t0,
      tags: { 'nodefleet.io/cluster': 'test', 'karpenter.sh/nodepool': 'default', 'karpenter.sh/nodeclaim': 'default-n' },
    });
    await w.store.create(nodeClaim({ name: 'default-n', instanceId: 'i-n', nodeName: 'n-deleted', createdAt: t0, conditions: [...registered] }));
    w.clock.advanceSeconds(120);
    // Act
    const r = await run({}, deps);
    // Assess
    expect(r.deleted).toEqual([{ nodeClaim: 'default-n', reason: 'node_gone' }]);
    expect(w.cloud.peek('i-n')?.state).toBe('shutting-down');
    expect(await w.store.get('default-n')).toBeUndefined();
    expect(log.withMessage('deleted nodeclaim')[0].fields).toMatchObject({ reason: 'node_gone', instance: 'i-n' });
  });
});

describe('gc: restarting a failed termination', () => {
  it('starts the next attempt before recording it: a failed write after the start still leaves the attempt running', async () => {
    // Prepare: attempt 1 failed a minute ago
    const { w, deps } = world();
    const ended = { attempt: 1, outcome: 'failed' as const, at: t0 };
    await w.store.create(
      nodeClaim({
        name: 'default-t',
        phase: 'Terminating',
        instanceId: 'i-t',
        nodeName: 'n-t',
        createdAt: t0,
        termination: { attempt: 1, reason: 'drift', startedAt: t0, heartbeatAt: t0, failures: 1, ended },
      }),
    );
    w.cloud.addInstance({
      instanceId: 'i-t',
      launchTime: t0,
      tags: { 'nodefleet.io/cluster': 'test', 'karpenter.sh/nodepool': 'default', 'karpenter.sh/nodeclaim': 'default-t' },
    });
    w.kube.addNode({ metadata: { name: 'n-t' } });
    w.clock.advanceSeconds(61);
    w.store.failNext('update', Object.assign(new Error('throttled'), { name: 'TransientError' }));
    // Act
    const r = await run({}, { ...deps, termination: w.starter });
    // Assess
    expect(w.starter.started.map((s) => [s.nodeClaim, (s as { attempt?: number }).attempt])).toEqual([['default-t', 2]]);
    expect(r.restarted).toEqual([]);
    expect(r.failed.map((f) => f.action)).toEqual(['restart-termination']);
  });
});

describe('gc: a failed list of nodes or instances', () => {
  it('still restarts a termination past its deadline, then fails the pass (chaos seed 1168)', async () => {
    // Prepare: attempt 1 ended failed (EC2 refused the terminate); its deadline has passed
    const { w, deps } = world();
    const ended = { attempt: 1, outcome: 'failed' as const, at: t0 };
    await w.store.create(
      nodeClaim({
        name: 'default-i',
        phase: 'Terminating',
        instanceId: 'i-i',
        nodeName: 'n-i',
        createdAt: t0,
        termination: { attempt: 1, reason: 'interruption', startedAt: t0, heartbeatAt: t0, failures: 1, ended, deadlineEpochMs: Date.parse(t0) },
      }),
    );
    w.cloud.addInstance({
      instanceId: 'i-i',
      launchTime: t0,
      tags: { 'nodefleet.io/cluster': 'test', 'karpenter.sh/nodepool': 'default', 'karpenter.sh/nodeclaim': 'default-i' },
    });
    w.kube.addNode({ metadata: { name: 'n-i' } });
    w.clock.advanceSeconds(30);
    w.kube.failNext('listNodes', Object.assign(new Error('list nodes: HTTP 429'), { name: 'TransientError' }));
    // Act
    const pass = run({}, { ...deps, termination: w.starter });
    // Assess
    await expect(pass).rejects.toThrow('HTTP 429');
    expect(w.starter.started.map((s) => [s.nodeClaim, (s as { attempt?: number }).attempt])).toEqual([['default-i', 2]]);
    expect((await w.store.get('default-i'))?.termination?.attempt).toBe(2);
  });
});

describe('gc: one failing action does not stop the others', () => {
  it('a terminate EC2 refuses is reported in failed; the orphan after it and the expired record are still handled', async () => {
    // Prepare
    const { w, log, deps } = world();
    w.cloud.addInstance({ instanceId: 'i-refused', launchTime: t0, tags: { 'nodefleet.io/cluster': 'test' } });
    w.cloud.addInstance({ instanceId: 'i-orphan', launchTime: t0, tags: { 'nodefleet.io/cluster': 'test' } });
    await w.store.create(nodeClaim({ name: 'default-old', phase: 'Terminated', createdAt: t0, retainUntil: '2026-01-01T00:30:00.000Z' }));
    w.clock.advanceSeconds(3600);
    const terminate = w.cloud.terminate.bind(w.cloud);
    w.cloud.terminate = async (id: string) => {
      if (id === 'i-refused') throw Object.assign(new Error('You are not authorized to perform this operation.'), { name: 'NodefleetError' });
      return terminate(id);
    };
    // Act
    const r = await run({}, deps);
    // Assess
    expect(r.failed).toEqual([
      { action: 'terminate-instance', subject: 'i-refused', error: 'NodefleetError: You are not authorized to perform this operation.' },
    ]);
    expect(r.terminated).toEqual(['i-orphan']);
    expect(r.deleted).toEqual([{ nodeClaim: 'default-old', reason: 'expired' }]);
    expect(log.withMessage('garbage collection action failed')).toHaveLength(1);
  });
});

describe('gc runs the planner (shared/disruption/gc.ts), not rules of its own', () => {
  it("carries out exactly planGarbageCollection's plan: a duplicate instance of a live claim is terminated, an expired record deleted", async () => {
    const { w, deps } = world();
    const registered = [
      { type: 'Launched', status: 'True', lastTransitionTime: t0 },
      { type: 'Registered', status: 'True', lastTransitionTime: t0 },
      { type: 'Initialized', status: 'True', lastTransitionTime: t0 },
    ] as const;
    const tags = { 'nodefleet.io/cluster': 'test', 'karpenter.sh/nodepool': 'default', 'karpenter.sh/nodeclaim': 'default-a' };
    w.cloud.addInstance({ instanceId: 'i-one', launchTime: t0, tags });
    w.cloud.addInstance({ instanceId: 'i-two', launchTime: t0, tags });
    await w.store.create(nodeClaim({ name: 'default-a', instanceId: 'i-one', nodeName: 'n-a', createdAt: t0, conditions: [...registered] }));
    w.kube.addNode({ metadata: { name: 'n-a' } });
    await w.store.create(nodeClaim({ name: 'default-old', phase: 'Terminated', createdAt: t0, retainUntil: '2026-01-01T00:30:00.000Z' }));
    w.clock.advanceSeconds(3600);
    const claims = await w.store.list();
    const plan = planGarbageCollection(
      { cluster: 'test', nodeClaims: claims, nodes: await w.kube.listNodes(), instances: await w.cloud.list(), tableEpochMs: w.store.peekEpoch()! },
      w.clock.now(),
    );
    const r = await run({}, deps);
    expect(r.terminated).toEqual(plan.terminateInstances.map((t) => t.instanceId));
    expect(r.terminated).toEqual(['i-two']);
    expect(r.deleted).toEqual([{ nodeClaim: 'default-old', reason: 'expired' }]);
    expect(w.cloud.peek('i-one')?.state).toBe('running');
    expect((await w.store.list()).map((c) => c.name)).toEqual(['default-a']);
  });

  it('an abandoned karpenter.sh/disrupted taint and its slot are released after the stated bound', async () => {
    const { w, deps } = world();
    const registered = [
      { type: 'Launched', status: 'True', lastTransitionTime: t0 },
      { type: 'Registered', status: 'True', lastTransitionTime: t0 },
    ] as const;
    w.cloud.addInstance({
      instanceId: 'i-s',
      launchTime: t0,
      tags: { 'nodefleet.io/cluster': 'test', 'karpenter.sh/nodepool': 'default', 'karpenter.sh/nodeclaim': 'default-s' },
    });
    await w.store.create(nodeClaim({ name: 'default-s', nodePool: 'default', instanceId: 'i-s', nodeName: 'n-s', createdAt: t0, conditions: [...registered] }));
    w.kube.addNode({ metadata: { name: 'n-s' }, spec: { taints: [{ key: 'karpenter.sh/disrupted', effect: 'NoSchedule', timeAdded: t0 }] } });
    expect(await w.budgets.take('default', 'default-s', 1, t0)).toBe(true);
    const d = { ...deps, budgets: w.budgets };
    w.clock.advanceSeconds(DisruptionLeaseSeconds - 1);
    expect((await run({}, d)).untainted).toEqual([]);
    w.clock.advanceSeconds(1);
    const r = await run({}, d);
    expect(r.untainted).toEqual(['n-s']);
    expect(r.releasedBudgetSlots).toEqual([{ nodePool: 'default', holder: 'default-s', reason: 'abandoned' }]);
    expect((await w.kube.getNode('n-s'))?.spec?.taints ?? []).toEqual([]);
    expect(w.budgets.inFlight('default')).toBe(0);
  });
});

describe('gc: disruption budget slots', () => {
  it('releases the slot of a finished claim and of a run whose lease ran out; keeps a live disruption (renewed) and a terminating one', async () => {
    const { w, log, deps } = world();
    const registered = [
      { type: 'Launched', status: 'True', lastTransitionTime: t0 },
      { type: 'Registered', status: 'True', lastTransitionTime: t0 },
    ] as const;
    w.cloud.addInstance({
      instanceId: 'i-a',
      launchTime: t0,
      tags: { 'nodefleet.io/cluster': 'test', 'karpenter.sh/nodepool': 'default', 'karpenter.sh/nodeclaim': 'default-abandoned' },
    });
    w.cloud.addInstance({
      instanceId: 'i-b',
      launchTime: t0,
      tags: { 'nodefleet.io/cluster': 'test', 'karpenter.sh/nodepool': 'default', 'karpenter.sh/nodeclaim': 'default-draining' },
    });
    await w.store.create(
      nodeClaim({ name: 'default-abandoned', nodePool: 'default', instanceId: 'i-a', nodeName: 'n-a', createdAt: t0, conditions: [...registered] }),
    );
    await w.store.create(
      nodeClaim({ name: 'default-draining', nodePool: 'default', instanceId: 'i-b', nodeName: 'n-b', createdAt: t0, conditions: [...registered] }),
    );
    w.kube.addNode({ metadata: { name: 'n-a' } });
    w.kube.addNode({ metadata: { name: 'n-b' }, spec: { taints: [{ key: 'karpenter.sh/disrupted', effect: 'NoSchedule' }] } });
    for (const h of ['default-finished', 'default-abandoned', 'default-draining']) expect(await w.budgets.take('default', h, 3, t0)).toBe(true);
    const d = { ...deps, budgets: w.budgets };

    w.clock.advanceSeconds(DisruptionLeaseSeconds - 60);
    const early = await run({}, d);
    expect(early.releasedBudgetSlots).toEqual([{ nodePool: 'default', holder: 'default-finished', reason: 'gone' }]);
    expect(w.budgets.inFlight('default')).toBe(2);

    w.clock.advanceSeconds(30);
    expect(await w.budgets.renew('default', 'default-draining', w.clock.nowIso())).toBe(true);
    w.clock.advanceSeconds(30);
    const late = await run({}, d);
    expect(late.releasedBudgetSlots).toEqual([{ nodePool: 'default', holder: 'default-abandoned', reason: 'abandoned' }]);
    expect(Object.keys(await w.budgets.holders('default'))).toEqual(['default-draining']);
    expect(log.withMessage('released disruption budget slot').map((l) => l.fields.holder)).toEqual(['default-finished', 'default-abandoned']);
  });

  it('without a budget counter gc releases nothing and still runs', async () => {
    const { deps } = world();
    expect((await run({}, deps)).releasedBudgetSlots).toEqual([]);
  });
});
