/**
 * Rebalance recommendation in an opted-in NodePool, end to end over the fakes: the interruption
 * function marks the claim, the disruption function plans a `rebalance` command, launches the
 * replacement, and starts the termination (the drain) only once the replacement is Initialized.
 */
import { readFileSync } from 'node:fs';
import { beforeEach, describe, expect, it } from 'vitest';
import { run as interrupt, type InterruptionDeps } from '../../../functions/interruption/handler.ts';
import { run as disrupt } from '../../../functions/disruption/handler.ts';
import { SqsEventSchema, type SqsEvent } from '../../../shared/api/events/index.ts';
import { NodePoolSchema, type NodePool } from '../../../shared/api/nodepool.ts';
import { setCondition } from '../../../shared/api/nodeclaim.ts';
import type { Deps } from '../../../shared/runtime/deps.ts';
import { RecordingLog, RecordingMetrics } from '../../../shared/runtime/observability.ts';
import { fakeWorld, node, nodeClaim, pod, type FakeWorld } from '../../fakes/index.ts';

const InstanceId = 'i-0abc1234def567890';
const NodeName = 'ip-10-0-0-1.ec2.internal';
const fixture = (name: string): Record<string, any> => JSON.parse(readFileSync(new URL(`../../fixtures/events/${name}.json`, import.meta.url), 'utf8'));
const rebalanceEvent = (): SqsEvent =>
  SqsEventSchema.parse({
    Records: [{ ...fixture('sqs-record-wrapping').Records[0], messageId: 'm-1', body: JSON.stringify(fixture('rebalance-recommendation')) }],
  });

function spotPool(opts: { optIn: boolean; budget?: string }): NodePool {
  return NodePoolSchema.parse({
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: 'spot', ...(opts.optIn ? { annotations: { 'nodefleet.io/rebalance-replace': 'true' } } : {}) },
    spec: {
      template: {
        spec: {
          nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
          requirements: [
            { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot', 'on-demand'] },
            { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] },
          ],
          terminationGracePeriod: '10m',
        },
      },
      // consolidation off, so only the rebalance path can move the node
      disruption: { consolidationPolicy: 'WhenEmpty', consolidateAfter: 'Never', budgets: [{ nodes: opts.budget ?? '100%' }] },
    },
  });
}

function setup(opts: { optIn: boolean; budget?: string }) {
  const w = fakeWorld({ start: '2026-03-10T12:00:05Z' });
  w.kube.setNodePools([spotPool(opts)]);
  const n = node({
    name: NodeName,
    providerID: `aws:///us-east-1a/${InstanceId}`,
    allocatable: { cpu: '3920m', memory: '14162Mi', pods: '58' },
    labels: {
      'karpenter.sh/nodepool': 'spot',
      'karpenter.sh/initialized': 'true',
      'karpenter.sh/registered': 'true',
      'karpenter.sh/capacity-type': 'spot',
      'node.kubernetes.io/instance-type': 'm5.xlarge',
      'topology.kubernetes.io/zone': 'us-east-1a',
      'kubernetes.io/arch': 'amd64',
      'kubernetes.io/os': 'linux',
    },
  });
  n.metadata.creationTimestamp = '2026-03-10T08:00:00Z';
  w.kube.addNode(n);
  w.kube.addPod(pod({ name: 'api-1', nodeName: NodeName, cpu: '1500m', memory: '2Gi' }));
  w.store.put(
    nodeClaim({
      name: 'spot-abc12',
      nodePool: 'spot',
      instanceId: InstanceId,
      providerId: `aws:///us-east-1a/${InstanceId}`,
      nodeName: NodeName,
      instanceType: 'm5.xlarge',
      zone: 'us-east-1a',
      capacityType: 'spot',
      createdAt: '2026-03-10T08:00:00.000Z',
      terminationGracePeriodSeconds: 600,
    }),
  );
  const log = new RecordingLog();
  const deps: Deps = {
    env: { clusterName: 'test', tableName: 'nodefleet', region: 'us-east-1', logLevel: 'INFO' },
    clock: w.clock,
    log,
    metrics: new RecordingMetrics(),
    store: w.store,
    unavailable: w.unavailable,
    cloud: w.cloud,
    kube: w.kube,
    termination: w.starter,
    budgets: w.budgets,
    clusterInfo: async () => ({}) as never,
  };
  // the rebalance recommendation fixture's account and region are the stack's
  const stack = { clusterName: 'test', region: 'us-east-2', stateMachineArn: 'arn:aws:states:us-east-2:123456789012:stateMachine:termination' };
  const interruptionDeps: InterruptionDeps = {
    store: w.store,
    cloud: w.cloud,
    env: stack,
    termination: w.starter,
    unavailable: w.unavailable,
    kube: w.kube,
    budgets: w.budgets,
    clock: w.clock,
    log,
    metrics: new RecordingMetrics(),
  };
  return { w, deps, interruptionDeps, log };
}

describe('rebalance recommendation → early replacement through the disruption machinery', () => {
  let w: FakeWorld;

  it('with nodefleet.io/rebalance-replace: replacement launched first, drain only after it is Initialized, within the budget', async () => {
    const s = setup({ optIn: true });
    w = s.w;
    expect((await interrupt(rebalanceEvent(), s.interruptionDeps)).results[0].outcomes).toEqual([{ instanceId: InstanceId, action: 'replacement-queued' }]);

    // next scheduled disruption run: the rebalance command comes first, with one replacement
    const planned = await disrupt({}, s.deps);
    expect(planned.status).toBe('validating');
    expect(planned.command).toMatchObject({ method: 'rebalance', reason: 'Rebalance', decision: 'replace' });
    expect(planned.command?.candidates.map((c) => c.nodeClaim)).toEqual(['spot-abc12']);
    expect(planned.command?.replacements).toHaveLength(1);

    // after the 15 s validation delay: slot taken, node tainted, replacement created and launched; no drain yet
    w.clock.advanceSeconds(15);
    const launched = await disrupt({ command: planned.command }, s.deps);
    expect(launched.status).toBe('waiting-for-replacements');
    expect(launched.replacementClaims).toHaveLength(1);
    const replacementName = launched.replacementClaims![0];
    const replacement = await w.store.get(replacementName);
    expect(replacement?.phase).toBe('Launched');
    expect(w.cloud.callsOf('create')).toHaveLength(1);
    // the at-risk offering (m5.xlarge spot in us-east-1a) is not where the replacement goes
    expect([replacement?.instanceType, replacement?.zone, replacement?.capacityType]).not.toEqual(['m5.xlarge', 'us-east-1a', 'spot']);
    expect(w.starter.started).toEqual([]);
    expect(w.kube.callsOf('evictPod')).toEqual([]);
    expect(await w.budgets.holders('spot')).toEqual({ 'spot-abc12': '2026-03-10T12:00:20.000Z' });
    expect(w.kube.peekNode(NodeName)?.spec?.taints).toContainEqual(expect.objectContaining({ key: 'karpenter.sh/disrupted', effect: 'NoSchedule' }));

    // replacement still initializing: keep waiting
    w.clock.advanceSeconds(15);
    expect((await disrupt({ command: launched.command, replacementClaims: launched.replacementClaims }, s.deps)).status).toBe('waiting-for-replacements');
    expect(w.starter.started).toEqual([]);

    // Initialized: the termination (drain) starts, holding the budget slot, deadline = terminationGracePeriod
    await w.store.update(setCondition({ ...replacement!, phase: 'Initialized' }, 'Initialized', 'True', w.clock.nowIso()));
    const done = await disrupt({ command: launched.command, replacementClaims: launched.replacementClaims }, s.deps);
    expect(done.status).toBe('terminating');
    expect(w.starter.started).toEqual([
      {
        nodeClaim: 'spot-abc12',
        nodeName: NodeName,
        instanceId: InstanceId,
        reason: 'interruption',
        deadlineEpochMs: w.clock.nowMs() + 600_000,
        budgetNodePool: 'spot',
      },
    ]);
  });

  it('without the annotation: only recorded, the disruption run leaves the node alone', async () => {
    const s = setup({ optIn: false });
    w = s.w;
    expect((await interrupt(rebalanceEvent(), s.interruptionDeps)).results[0].outcomes).toEqual([{ instanceId: InstanceId, action: 'recorded' }]);
    expect(s.log.withMessage('spot rebalance recommendation')).toHaveLength(1);
    const planned = await disrupt({}, s.deps);
    expect(planned.status).toBe('idle');
    expect(w.cloud.callsOf('create')).toEqual([]);
    expect(w.starter.started).toEqual([]);
  });

  describe('budget 0', () => {
    beforeEach(() => {
      const s = setup({ optIn: true, budget: '0' });
      w = s.w;
      ctx = s;
    });
    let ctx: ReturnType<typeof setup>;

    it('blocked with the reason, in the interruption log and in the disruption run', async () => {
      const out = (await interrupt(rebalanceEvent(), ctx.interruptionDeps)).results[0].outcomes;
      expect(out).toEqual([
        {
          instanceId: InstanceId,
          action: 'budget-exhausted',
          reason: 'disruption budget for Rebalance in nodepool "spot" is spent (allows 0 of 1 nodes, 0 already disrupting)',
        },
      ]);
      const planned = await disrupt({}, ctx.deps);
      expect(planned.status).toBe('idle');
      const blocked = ctx.log.withMessage('disruption blocked').find((l) => l.fields.method === 'rebalance');
      expect(blocked?.fields).toMatchObject({
        node: NodeName,
        nodePool: 'spot',
        reason: expect.stringMatching(/^disruption budget for Rebalance in nodepool "spot" is spent/),
      });
      expect(w.cloud.callsOf('create')).toEqual([]);
      expect(w.starter.started).toEqual([]);
    });
  });
});
