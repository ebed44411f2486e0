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
  it('releases holders whose claim and node are gone, untainted ones idle for 30 min, tainted ones no termination took over for 65 min; keeps a terminating one', async () => {
    const { staleDisruptions, StaleDisruptionSeconds } = await import('../../../shared/disruption/gc.ts');
    const disrupted = [{ key: 'karpenter.sh/disrupted', effect: 'NoSchedule' as const }];
    const nodes = [node({ name: 'n-draining', taints: disrupted }), node({ name: 'n-stuck', taints: disrupted }), node({ name: 'n-idle' }), node({ name: 'n-tainted-late', taints: disrupted })];
    const claims = [
      nodeClaim({ name: 'c-draining', nodeName: 'n-draining', phase: 'Terminating' }),
      nodeClaim({ name: 'c-stuck', nodeName: 'n-stuck' }),
      nodeClaim({ name: 'c-idle', nodeName: 'n-idle' }),
      nodeClaim({ name: 'c-recent', nodeName: 'n-idle' }),
      nodeClaim({ name: 'c-tainted-late', nodeName: 'n-tainted-late' }),
    ];
    const at = (s: number) => new Date(Now.getTime() - s * 1000).toISOString();
    const out = staleDisruptions(
      { default: { 'c-gone': at(60), 'c-draining': at(7200), 'c-stuck': at(StaleDisruptionSeconds), 'c-idle': at(3600), 'c-recent': at(600), 'c-tainted-late': at(StaleDisruptionSeconds - 1) } },
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

  it('a disrupted taint with no slot and no termination is removed once older than the bound (its timeAdded)', async () => {
    const { staleDisruptions, StaleDisruptionSeconds } = await import('../../../shared/disruption/gc.ts');
    const at = (s: number) => new Date(Now.getTime() - s * 1000).toISOString();
    const nodes = [
      node({ name: 'old', taints: [{ key: 'karpenter.sh/disrupted', effect: 'NoSchedule', timeAdded: at(StaleDisruptionSeconds) }] }),
      node({ name: 'young', taints: [{ key: 'karpenter.sh/disrupted', effect: 'NoSchedule', timeAdded: at(60) }] }),
      node({ name: 'draining', taints: [{ key: 'karpenter.sh/disrupted', effect: 'NoSchedule', timeAdded: at(7200) }] }),
    ];
    const claims = [nodeClaim({ name: 'a', nodeName: 'old' }), nodeClaim({ name: 'b', nodeName: 'young' }), nodeClaim({ name: 'c', nodeName: 'draining', phase: 'Terminating' })];
    expect(staleDisruptions({}, claims, nodes, Now).untaintNodes).toEqual([{ nodeName: 'old', reason: 'abandoned' }]);
  });
});

describe('planGarbageCollection: terminations and records', () => {
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
