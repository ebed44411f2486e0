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
    expect(plan.deleteNodeClaims).toEqual([{ nodeClaim: 'gone', reason: 'instance_gone', instanceId: 'i-0gone' }]);
    expect(plan.terminateInstances).toEqual([{ instanceId: 'i-0orphan', reason: 'orphan' }]);
  });
});

describe('staleBudgetHolders', () => {
  it('releases holders whose claim and node are gone, or that nothing has disrupted for 30 min', async () => {
    const { staleBudgetHolders } = await import('../../../shared/disruption/gc.ts');
    const draining = node({ name: 'n-draining', taints: [{ key: 'karpenter.sh/disrupted', effect: 'NoSchedule' }] });
    const idle = node({ name: 'n-idle' });
    const claims = [nodeClaim({ name: 'c-draining', nodeName: 'n-draining' }), nodeClaim({ name: 'c-idle', nodeName: 'n-idle' }), nodeClaim({ name: 'c-recent', nodeName: 'n-idle' })];
    const out = staleBudgetHolders(
      { default: { 'c-gone': '2026-03-02T09:59:00Z', 'c-draining': '2026-03-02T08:00:00Z', 'c-idle': '2026-03-02T09:00:00Z', 'c-recent': '2026-03-02T09:50:00Z' } },
      claims,
      [draining, idle],
      Now,
    );
    expect(out).toEqual([
      { nodePool: 'default', holder: 'c-gone', reason: 'gone' },
      { nodePool: 'default', holder: 'c-idle', reason: 'abandoned' },
    ]);
  });
});
