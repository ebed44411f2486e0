import { describe, expect, it } from 'vitest';
import { node, nodeClaim } from '../../fakes/index.ts';
import { setCondition } from '../../../shared/api/nodeclaim.ts';
import { planGarbageCollection } from '../../../shared/disruption/gc.ts';

const Now = new Date('2026-03-02T10:00:00Z');

describe('planGarbageCollection', () => {
  it('deletes claims that never launched (5 min) or never registered (15 min)', () => {
    const notLaunched = nodeClaim({ name: 'a', phase: 'Pending', createdAt: '2026-03-02T09:54:00Z' });
    const young = nodeClaim({ name: 'b', phase: 'Pending', createdAt: '2026-03-02T09:58:00Z' });
    const unregistered = setCondition(nodeClaim({ name: 'c', phase: 'Launched', instanceId: 'i-0c', createdAt: '2026-03-02T09:44:00Z' }), 'Launched', 'True', '2026-03-02T09:44:05Z');
    const registering = setCondition(nodeClaim({ name: 'd', phase: 'Launched', instanceId: 'i-0d', createdAt: '2026-03-02T09:50:00Z' }), 'Launched', 'True', '2026-03-02T09:50:05Z');
    const plan = planGarbageCollection({ nodeClaims: [notLaunched, young, unregistered, registering], nodes: [] }, Now);
    expect(plan.deleteNodeClaims).toEqual([
      { nodeClaim: 'a', reason: 'launch_timeout' },
      { nodeClaim: 'c', reason: 'registration_timeout', instanceId: 'i-0c' },
    ]);
  });

  it('deletes claims whose instance is gone and terminates tagged instances no claim owns (after 30 s)', () => {
    const gone = nodeClaim({ name: 'gone', instanceId: 'i-0gone', nodeName: 'n1', createdAt: '2026-03-01T00:00:00Z' });
    const fine = nodeClaim({ name: 'fine', instanceId: 'i-0fine', nodeName: 'n2', createdAt: '2026-03-01T00:00:00Z' });
    const plan = planGarbageCollection(
      {
        nodeClaims: [gone, fine],
        nodes: [node({ name: 'n1' }), node({ name: 'n2' })],
        instances: [
          { instanceId: 'i-0gone', state: 'terminated', tags: { 'nodefleet.io/cluster': 'test' } },
          { instanceId: 'i-0fine', state: 'running', tags: { 'nodefleet.io/cluster': 'test' } },
          { instanceId: 'i-0orphan', state: 'running', launchTime: '2026-03-02T09:00:00Z', tags: { 'karpenter.sh/nodepool': 'default' } },
          { instanceId: 'i-0launching', state: 'pending', launchTime: '2026-03-02T09:59:50Z', tags: { 'nodefleet.io/cluster': 'test' } },
          { instanceId: 'i-0notours', state: 'running', launchTime: '2026-03-01T00:00:00Z', tags: { Name: 'bastion' } },
        ],
      },
      Now,
    );
    expect(plan.deleteNodeClaims).toEqual([{ nodeClaim: 'gone', reason: 'instance_gone', nodeName: 'n1' }]);
    expect(plan.terminateInstances).toEqual([{ instanceId: 'i-0orphan', reason: 'orphan' }]);
  });
});

describe('staleDisruptions', () => {
  it('releases holders whose claim and node are gone, and leases not renewed for DisruptionLeaseSeconds (untainting their node); keeps a terminating one and a live lease', async () => {
    const { staleDisruptions, DisruptionLeaseSeconds } = await import('../../../shared/disruption/gc.ts');
    const disrupted = [{ key: 'karpenter.sh/disrupted', effect: 'NoSchedule' as const }];
    const nodes = [node({ name: 'n-draining', taints: disrupted }), node({ name: 'n-stuck', taints: disrupted }), node({ name: 'n-idle' }), node({ name: 'n-renewed', taints: disrupted })];
    const claims = [
      nodeClaim({ name: 'c-draining', nodeName: 'n-draining', phase: 'Terminating' }),
      nodeClaim({ name: 'c-stuck', nodeName: 'n-stuck' }),
      nodeClaim({ name: 'c-idle', nodeName: 'n-idle' }),
      nodeClaim({ name: 'c-renewed', nodeName: 'n-renewed' }),
    ];
    const at = (s: number) => new Date(Now.getTime() - s * 1000).toISOString();
    const out = staleDisruptions(
      { default: { 'c-gone': at(60), 'c-draining': at(7200), 'c-stuck': at(DisruptionLeaseSeconds), 'c-idle': at(DisruptionLeaseSeconds + 60), 'c-renewed': at(DisruptionLeaseSeconds - 1) } },
      claims,
      nodes,
      Now,
    );
    expect(out.releaseBudgetSlots).toEqual([
      { nodePool: 'default', holder: 'c-gone', reason: 'gone' },
      { nodePool: 'default', holder: 'c-stuck', reason: 'abandoned' },
      { nodePool: 'default', holder: 'c-idle', reason: 'abandoned' },
    ]);
    expect(out.untaintNodes).toEqual([{ nodeName: 'n-stuck', reason: 'abandoned' }]);
  });

  it('a disrupted taint with no slot and no termination is removed once older than the lease (its timeAdded)', async () => {
    const { staleDisruptions, DisruptionLeaseSeconds } = await import('../../../shared/disruption/gc.ts');
    const at = (s: number) => new Date(Now.getTime() - s * 1000).toISOString();
    const nodes = [
      node({ name: 'old', taints: [{ key: 'karpenter.sh/disrupted', effect: 'NoSchedule', timeAdded: at(DisruptionLeaseSeconds) }] }),
      node({ name: 'young', taints: [{ key: 'karpenter.sh/disrupted', effect: 'NoSchedule', timeAdded: at(60) }] }),
      node({ name: 'draining', taints: [{ key: 'karpenter.sh/disrupted', effect: 'NoSchedule', timeAdded: at(7200) }] }),
    ];
    const claims = [nodeClaim({ name: 'a', nodeName: 'old' }), nodeClaim({ name: 'b', nodeName: 'young' }), nodeClaim({ name: 'c', nodeName: 'draining', phase: 'Terminating' })];
    expect(staleDisruptions({}, claims, nodes, Now).untaintNodes).toEqual([{ nodeName: 'old', reason: 'abandoned' }]);
  });
});

describe('planGarbageCollection: a node that never initializes (chaos never-ready)', () => {
  it('a registered claim not Initialized 15 min after registration is deleted with its instance and node; an initialized one is kept', async () => {
    const { InitializationTimeoutSeconds } = await import('../../../shared/disruption/gc.ts');
    const reg = (name: string, secondsAgo: number) =>
      setCondition(setCondition(nodeClaim({ name, instanceId: `i-0${name}`, nodeName: `n-${name}`, createdAt: '2026-03-02T09:00:00Z' }), 'Launched', 'True', '2026-03-02T09:00:00Z'), 'Registered', 'True', new Date(Now.getTime() - secondsAgo * 1000).toISOString());
    const stuck = reg('a', InitializationTimeoutSeconds);
    const young = reg('b', InitializationTimeoutSeconds - 1);
    const ready = setCondition(reg('c', InitializationTimeoutSeconds + 600), 'Initialized', 'True', '2026-03-02T09:02:00Z');
    const nodes = ['n-a', 'n-b', 'n-c'].map((name) => node({ name }));
    const plan = planGarbageCollection({ nodeClaims: [stuck, young, ready], nodes }, Now);
    expect(plan.deleteNodeClaims).toEqual([{ nodeClaim: 'a', reason: 'initialization_timeout', instanceId: 'i-0a', nodeName: 'n-a' }]);
  });
});

describe('planGarbageCollection: a Node deleted out of band', () => {
  const registeredAt = (c: ReturnType<typeof nodeClaim>, iso: string) => setCondition(setCondition(setCondition(c, 'Launched', 'True', '2026-03-02T09:00:00Z'), 'Registered', 'True', iso), 'Initialized', 'True', iso);

  it('a registered claim whose Node is gone (by name and providerID) has its instance terminated and is deleted, after the grace', async () => {
    const { NodeGoneGraceSeconds } = await import('../../../shared/disruption/gc.ts');
    const gone = registeredAt(nodeClaim({ name: 'gone', instanceId: 'i-0gone', nodeName: 'n-gone', providerId: 'aws:///us-east-1a/i-0gone', createdAt: '2026-03-02T09:00:00Z' }), '2026-03-02T09:01:00Z');
    const fresh = registeredAt(nodeClaim({ name: 'fresh', instanceId: 'i-0fresh', nodeName: 'n-fresh', createdAt: '2026-03-02T09:00:00Z' }), new Date(Now.getTime() - (NodeGoneGraceSeconds - 1) * 1000).toISOString());
    const renamed = registeredAt(nodeClaim({ name: 'renamed', instanceId: 'i-0ren', nodeName: 'n-old-name', providerId: 'aws:///us-east-1a/i-0ren', createdAt: '2026-03-02T09:00:00Z' }), '2026-03-02T09:01:00Z');
    const instances = ['i-0gone', 'i-0fresh', 'i-0ren'].map((instanceId) => ({ instanceId, state: 'running', launchTime: '2026-03-02T09:00:00Z', tags: { 'nodefleet.io/cluster': 'test' } }));
    const plan = planGarbageCollection({ nodeClaims: [gone, fresh, renamed], nodes: [node({ name: 'n-new-name', providerID: 'aws:///us-east-1a/i-0ren' })], instances }, Now);
    expect(plan.deleteNodeClaims).toEqual([{ nodeClaim: 'gone', reason: 'node_gone', instanceId: 'i-0gone' }]);
    expect(plan.terminateInstances).toEqual([]);
  });

  it('a claim still launching (not registered) or terminating is not judged by its missing Node', () => {
    const launching = setCondition(nodeClaim({ name: 'l', phase: 'Launched', instanceId: 'i-0l', createdAt: '2026-03-02T09:55:00Z' }), 'Launched', 'True', '2026-03-02T09:55:00Z');
    const terminating = registeredAt(nodeClaim({ name: 't', phase: 'Terminating', instanceId: 'i-0t', nodeName: 'n-t', createdAt: '2026-03-02T09:00:00Z' }), '2026-03-02T09:01:00Z');
    const instances = ['i-0l', 'i-0t'].map((instanceId) => ({ instanceId, state: 'running', launchTime: '2026-03-02T09:00:00Z', tags: { 'nodefleet.io/cluster': 'test' } }));
    expect(planGarbageCollection({ nodeClaims: [launching, terminating], nodes: [], instances }, Now).deleteNodeClaims).toEqual([]);
  });
});

describe('planGarbageCollection: terminations and records', () => {
  const failed = (o: { failures: number; endedSecondsAgo: number; deadlineSecondsAgo?: number }) =>
    nodeClaim({
      name: 'f',
      phase: 'Terminating',
      instanceId: 'i-0f',
      nodeName: 'n-f',
      createdAt: '2026-03-02T09:00:00Z',
      termination: {
        attempt: o.failures,
        reason: 'drift',
        ...(o.deadlineSecondsAgo !== undefined ? { deadlineEpochMs: Now.getTime() - o.deadlineSecondsAgo * 1000 } : {}),
        startedAt: '2026-03-02T09:00:00Z',
        heartbeatAt: '2026-03-02T09:00:00Z',
        failures: o.failures,
        ended: { attempt: o.failures, outcome: 'failed' as const, at: new Date(Now.getTime() - o.endedSecondsAgo * 1000).toISOString() },
      },
    });
  const restarts = (c: ReturnType<typeof nodeClaim>) => planGarbageCollection({ nodeClaims: [c], nodes: [node({ name: 'n-f' })] }, Now).restartTerminations.map((r) => r.input.attempt);

  it('restarts a failed termination within 3 minutes however often it failed (never left without an attempt for long)', () => {
    expect(restarts(failed({ failures: 6, endedSecondsAgo: 179 }))).toEqual([]);
    expect(restarts(failed({ failures: 6, endedSecondsAgo: 180 }))).toEqual([7]);
  });

  it('past its deadline a failed termination is restarted on the next pass, without backoff', () => {
    expect(restarts(failed({ failures: 1, endedSecondsAgo: 5, deadlineSecondsAgo: 1 }))).toEqual([2]);
    expect(restarts(failed({ failures: 1, endedSecondsAgo: 5, deadlineSecondsAgo: -60 }))).toEqual([]);
  });

  it('deletes Terminated claims once their record expired; never touches a live one', () => {
    const expired = nodeClaim({ name: 'old', phase: 'Terminated', retainUntil: '2026-03-02T09:59:59Z' });
    const kept = nodeClaim({ name: 'recent', phase: 'Terminated', retainUntil: '2026-03-02T10:30:00Z' });
    const plan = planGarbageCollection({ nodeClaims: [expired, kept], nodes: [], instances: [] }, Now);
    expect(plan.deleteNodeClaims).toEqual([{ nodeClaim: 'old', reason: 'expired' }]);
  });

  it('an instance tagged with a live claim that owns another instance is an orphan (a duplicate launch), not "still recording"', () => {
    const c = nodeClaim({ name: 'default-a', instanceId: 'i-0one', createdAt: '2026-03-01T00:00:00Z' });
    const tags = { 'nodefleet.io/cluster': 'test', 'karpenter.sh/nodeclaim': 'default-a' };
    const plan = planGarbageCollection(
      {
        nodeClaims: [c],
        nodes: [node({ name: c.nodeName ?? 'n' })],
        instances: [
          { instanceId: 'i-0one', state: 'running', launchTime: '2026-03-01T00:00:00Z', tags },
          { instanceId: 'i-0two', state: 'running', launchTime: '2026-03-01T00:00:00Z', tags },
        ],
      },
      Now,
    );
    expect(plan.terminateInstances).toEqual([{ instanceId: 'i-0two', reason: 'orphan' }]);
  });
});
