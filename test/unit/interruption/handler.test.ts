import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { RecordingMetrics } from '../../../shared/runtime/observability.ts';
import { MetricNames } from '../../../shared/api/metrics.ts';
import { run, type InterruptionDeps } from '../../../functions/interruption/handler.ts';
import { AnnotationRebalanceRecommendedAt } from '../../../functions/interruption/handle-message.ts';
import { UnavailableOfferingsTtlSeconds } from '../../../shared/api/ports.ts';
import { MaxHealthEventInstances, SqsEventSchema, type SqsEvent } from '../../../shared/api/events/index.ts';
import { TransientError } from '../../../shared/api/errors.ts';
import { NodePoolSchema } from '../../../shared/api/nodepool.ts';
import { fakeWorld, nodeClaim, type FakeWorld as FakeWorldT } from '../../fakes/index.ts';

const InstanceId = 'i-0abc1234def567890';
const fixture = (name: string): Record<string, any> => JSON.parse(readFileSync(new URL(`../../fixtures/events/${name}.json`, import.meta.url), 'utf8'));
const sqs = (...bodies: (string | object)[]): SqsEvent =>
  SqsEventSchema.parse({
    Records: bodies.map((b, i) => ({
      ...fixture('sqs-record-wrapping').Records[0],
      messageId: `m-${i + 1}`,
      body: typeof b === 'string' ? b : JSON.stringify(b),
    })),
  });

function setup(
  opts: {
    capacityType?: 'spot' | 'on-demand' | 'reserved';
    rebalanceReplace?: boolean;
    budgets?: { nodes: string; schedule?: string; duration?: string }[];
    tgpSeconds?: number;
    now?: string;
    region?: string;
    instanceTags?: Record<string, string>;
  } = {},
) {
  const w = fakeWorld({ start: opts.now ?? '2026-03-10T12:00:05Z' });
  w.store.put(
    nodeClaim({
      name: 'spot-abc12',
      nodePool: 'spot',
      instanceId: InstanceId,
      nodeName: 'ip-10-0-0-1.us-east-2.compute.internal',
      instanceType: 'm5.xlarge',
      zone: 'us-east-2a',
      capacityType: opts.capacityType ?? 'spot',
      ...(opts.tgpSeconds !== undefined ? { terminationGracePeriodSeconds: opts.tgpSeconds } : {}),
    }),
  );
  w.kube.setNodePools([
    NodePoolSchema.parse({
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodePool',
      metadata: { name: 'spot', ...(opts.rebalanceReplace ? { annotations: { 'nodefleet.io/rebalance-replace': 'true' } } : {}) },
      spec: {
        template: { spec: { nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' }, requirements: [] } },
        ...(opts.budgets ? { disruption: { budgets: opts.budgets } } : {}),
      },
    }),
  ]);
  const logs: { level: string; message: string; fields?: Record<string, unknown> }[] = [];
  const log = (level: string) => (message: string, fields?: Record<string, unknown>) => void logs.push({ level, message, fields });
  // The instance as EC2 describes it: launched by nodefleet for this claim (shared/aws/ec2.ts launchTags).
  w.cloud.addInstance({
    instanceId: InstanceId,
    instanceType: 'm5.xlarge',
    zone: 'us-east-2a',
    capacityType: opts.capacityType ?? 'spot',
    tags: { 'nodefleet.io/cluster': 'test', 'karpenter.sh/nodepool': 'spot', 'karpenter.sh/nodeclaim': 'spot-abc12', ...opts.instanceTags },
  });
  const deps: InterruptionDeps = {
    store: w.store,
    cloud: w.cloud,
    env: {
      clusterName: 'test',
      region: opts.region ?? 'us-east-2',
      stateMachineArn: `arn:aws:states:${opts.region ?? 'us-east-2'}:123456789012:stateMachine:termination`,
    },
    termination: w.starter,
    unavailable: w.unavailable,
    kube: w.kube,
    budgets: w.budgets,
    clock: w.clock,
    log: { debug: log('debug'), info: log('info'), warn: log('warn') },
    metrics: new RecordingMetrics(),
  };
  return { w, deps, logs };
}

describe('interruption handler with the real AWS sample events', () => {
  it('SQS-wrapped spot interruption warning: terminate with the 2-minute notice as deadline, mark the spot offering unavailable for 3 minutes', async () => {
    const { w, deps } = setup();
    const res = await run(SqsEventSchema.parse(fixture('sqs-record-wrapping')), deps);
    expect(res.batchItemFailures).toEqual([]);
    expect(w.starter.started).toEqual([
      {
        nodeClaim: 'spot-abc12',
        instanceId: InstanceId,
        nodeName: 'ip-10-0-0-1.us-east-2.compute.internal',
        reason: 'interruption',
        deadlineEpochMs: Date.parse('2026-03-10T12:02:05Z'),
      },
    ]);
    // never earlier than now + 2 minutes (max(now + 120 s, time + 120 s)); written on the claim before the start
    expect(w.store.peek('spot-abc12')?.noticeDeadlineEpochMs).toBe(Date.parse('2026-03-10T12:02:05Z'));
    const now = Date.parse('2026-03-10T12:00:05Z') / 1000;
    expect(w.unavailable.all()).toEqual([
      {
        instanceType: 'm5.xlarge',
        zone: 'us-east-2a',
        capacityType: 'spot',
        reason: 'SpotInterruption',
        untilEpochSeconds: now + UnavailableOfferingsTtlSeconds,
      },
    ]);
    expect(w.unavailable.isUnavailable('m5.xlarge', 'us-east-2a', 'spot', now + 179)).toBe(true);
    expect(w.unavailable.isUnavailable('m5.xlarge', 'us-east-2a', 'spot', now + 180)).toBe(false);
  });

  it('the same warning delivered twice starts one execution', async () => {
    const { w, deps } = setup();
    const body = fixture('spot-interruption-warning');
    await run(sqs(body, body), deps);
    expect(w.starter.started).toHaveLength(1);
    expect(w.starter.callsOf('start')).toHaveLength(2);
  });

  it('capacity reservation interruption: deadline is instance-termination-time, the reserved offering is marked', async () => {
    const { w, deps } = setup({ capacityType: 'reserved', region: 'us-east-1' });
    const res = await run(sqs(fixture('capacity-reservation-interruption-warning')), deps);
    expect(res.batchItemFailures).toEqual([]);
    expect(w.starter.started[0]).toMatchObject({ reason: 'interruption', deadlineEpochMs: Date.parse('2026-03-10T12:02:05Z') });
    expect(w.unavailable.all().map((e) => e.capacityType)).toEqual(['reserved']);
  });

  it.each([
    ['health-scheduled-change', 'ARN in entityValue and resources'],
    ['health-scheduled-change-bare-id', 'bare instance id'],
  ])('AWS Health scheduled change (%s: %s) drains the instance', async (file) => {
    const { w, deps } = setup({ tgpSeconds: 3600, region: 'us-east-1' });
    const res = await run(sqs(fixture(file)), deps);
    expect(res.results[0].status).toBe('handled');
    expect(w.starter.started).toHaveLength(1);
    expect(w.starter.started[0].instanceId).toBe(InstanceId);
    expect(w.unavailable.all()).toEqual([]);
  });

  it('scheduled change deadline: the terminationGracePeriod, capped by the change start; a past start leaves 2 minutes', async () => {
    const future = setup({ tgpSeconds: 3600, now: '2026-08-27T12:30:00Z', region: 'us-east-1' });
    await run(sqs(fixture('health-scheduled-change')), future.deps);
    // startTime Thu, 27 Aug 2026 13:19:03 GMT comes before now + 1 h.
    expect(future.w.starter.started[0].deadlineEpochMs).toBe(Date.parse('2026-08-27T13:19:03Z'));
    const past = setup({ now: '2026-03-10T12:00:05Z', region: 'us-east-1' });
    await run(sqs(fixture('health-scheduled-change-bare-id')), past.deps);
    expect(past.w.starter.started[0].deadlineEpochMs).toBe(Date.parse('2026-03-10T12:02:05Z'));
  });

  it.each([
    ['instance-state-change-stopping', 'us-east-1', 'stopping'],
    ['instance-state-change-terminated', 'us-west-1', 'terminated'],
  ] as const)('%s: cleans up through the termination machine with an immediate deadline (EC2 agrees)', async (file, region, state) => {
    const { w, deps } = setup({ region });
    w.cloud.setState(InstanceId, state);
    await run(sqs(fixture(file)), deps);
    expect(w.starter.started).toHaveLength(1);
    expect(w.starter.started[0].deadlineEpochMs).toBe(w.clock.nowMs());
    expect(w.unavailable.all()).toEqual([]);
  });

  it('state change to running is acknowledged without action', async () => {
    const { w, deps } = setup({ region: 'us-east-1' });
    const e = fixture('instance-state-change-stopping');
    e.detail.state = 'running';
    const res = await run(sqs(e), deps);
    expect(res.results[0].outcomes).toEqual([{ instanceId: InstanceId, action: 'ignored-state' }]);
    expect(w.starter.started).toEqual([]);
  });

  it('rebalance recommendation: recorded on the claim only, by default (a log line, no action)', async () => {
    const { w, deps, logs } = setup();
    const res = await run(sqs(fixture('rebalance-recommendation')), deps);
    expect(res.results[0].outcomes).toEqual([{ instanceId: InstanceId, action: 'recorded' }]);
    expect(w.starter.started).toEqual([]);
    expect(w.store.peek('spot-abc12')?.annotations[AnnotationRebalanceRecommendedAt]).toBe('2026-03-10T12:00:05.000Z');
    expect(logs.filter((l) => l.fields?.reason === 'SpotRebalanceRecommendation')).toHaveLength(1);
    expect(await w.budgets.holders('spot')).toEqual({});
    expect(await w.unavailable.list(w.clock.nowMs() / 1000)).toEqual([]);
  });

  it('rebalance recommendation with nodefleet.io/rebalance-replace: queued for the disruption run, nothing drained or taken here', async () => {
    const { w, deps, logs } = setup({ rebalanceReplace: true, tgpSeconds: 600 });
    const res = await run(sqs(fixture('rebalance-recommendation')), deps);
    expect(res.results[0].outcomes).toEqual([{ instanceId: InstanceId, action: 'replacement-queued' }]);
    expect(w.starter.started).toEqual([]);
    expect(await w.budgets.holders('spot')).toEqual({});
    expect(w.store.peek('spot-abc12')?.annotations[AnnotationRebalanceRecommendedAt]).toBe('2026-03-10T12:00:05.000Z');
    // the at-risk spot offering is avoided by the replacement for 3 minutes
    expect(await w.unavailable.list(w.clock.nowMs() / 1000)).toEqual([{ instanceType: 'm5.xlarge', zone: 'us-east-2a', capacityType: 'spot' }]);
    expect(logs.some((l) => l.message === 'rebalance replacement queued for the next disruption run' && l.fields?.allowed === 1)).toBe(true);
  });

  it('a second recommendation keeps the first time (it orders the replacements)', async () => {
    const { w, deps } = setup({ rebalanceReplace: true });
    await run(sqs(fixture('rebalance-recommendation')), deps);
    w.clock.advanceSeconds(300);
    await run(sqs(fixture('rebalance-recommendation')), deps);
    expect(w.store.peek('spot-abc12')?.annotations[AnnotationRebalanceRecommendedAt]).toBe('2026-03-10T12:00:05.000Z');
  });

  it('rebalance replacement with a budget of 0: blocked with the reason', async () => {
    const { w, deps, logs } = setup({ rebalanceReplace: true, budgets: [{ nodes: '0' }] });
    const res = await run(sqs(fixture('rebalance-recommendation')), deps);
    expect(res.results[0].outcomes).toEqual([
      {
        instanceId: InstanceId,
        action: 'budget-exhausted',
        reason: 'disruption budget for Rebalance in nodepool "spot" is spent (allows 0 of 1 nodes, 0 already disrupting)',
      },
    ]);
    expect(logs.find((l) => l.message.startsWith('rebalance replacement blocked'))?.fields?.reason).toMatch(/budget for Rebalance/);
    expect(w.starter.started).toEqual([]);
    // still marked: a later disruption run replaces it once the budget allows
    expect(w.store.peek('spot-abc12')?.annotations[AnnotationRebalanceRecommendedAt]).toBeDefined();
  });

  it('rebalance budgets with a schedule use the cron (UTC): "0 9 * * mon-fri" for 8h blocks at 12:00 Tuesday, not at 18:00', async () => {
    const budgets = [{ nodes: '0', schedule: '0 9 * * mon-fri', duration: '8h' }];
    const inside = setup({ rebalanceReplace: true, budgets, now: '2026-03-10T12:00:05Z' });
    expect((await run(sqs(fixture('rebalance-recommendation')), inside.deps)).results[0].outcomes?.[0].action).toBe('budget-exhausted');
    const outside = setup({ rebalanceReplace: true, budgets, now: '2026-03-10T18:00:00Z' });
    expect((await run(sqs(fixture('rebalance-recommendation')), outside.deps)).results[0].outcomes?.[0].action).toBe('replacement-queued');
  });

  it('a rebalance budget whose schedule does not parse blocks with the reason instead of failing the message', async () => {
    const { w, deps } = setup({ rebalanceReplace: true, budgets: [{ nodes: '0', schedule: 'TZ=Asia/Seoul 0 9 * * mon-fri', duration: '8h' }] });
    const res = await run(sqs(fixture('rebalance-recommendation')), deps);
    expect(res.batchItemFailures).toEqual([]);
    expect(res.results[0].outcomes?.[0]).toMatchObject({ action: 'budget-exhausted', reason: expect.stringContaining('time zones are not supported') });
    expect(w.starter.started).toEqual([]);
  });

  it('rebalance replacement counts slots held by running disruptions', async () => {
    const { w, deps } = setup({ rebalanceReplace: true, budgets: [{ nodes: '1' }] });
    await w.budgets.take('spot', 'other-claim', 1, 'earlier');
    const res = await run(sqs(fixture('rebalance-recommendation')), deps);
    expect(res.results[0].outcomes?.[0]).toMatchObject({ action: 'budget-exhausted', reason: expect.stringContaining('1 already disrupting') });
    expect(w.starter.started).toEqual([]);
  });

  it('unknown instance: acknowledged with a debug log', async () => {
    const { w, deps, logs } = setup();
    const e = fixture('spot-interruption-warning');
    e.detail['instance-id'] = 'i-0fff0000fff000000';
    const res = await run(sqs(e), deps);
    expect(res.batchItemFailures).toEqual([]);
    expect(res.results[0].outcomes).toEqual([{ instanceId: 'i-0fff0000fff000000', action: 'unknown-instance' }]);
    expect(logs.find((l) => l.level === 'debug')?.fields).toMatchObject({ instanceId: 'i-0fff0000fff000000' });
    expect(w.starter.started).toEqual([]);
  });

  it('malformed messages are batch item failures (→ DLQ); the good ones in the batch still run', async () => {
    const { w, deps } = setup();
    const noInstance = fixture('spot-interruption-warning');
    delete noInstance.detail['instance-id'];
    const res = await run(sqs('not json', noInstance, fixture('spot-interruption-warning'), { hello: 'world' }), deps);
    expect(res.batchItemFailures).toEqual([{ itemIdentifier: 'm-1' }, { itemIdentifier: 'm-2' }, { itemIdentifier: 'm-4' }]);
    expect(res.results[1].error).toContain('detail.instance-id');
    expect(w.starter.started).toHaveLength(1);
  });

  it("counts Karpenter's interruption metrics: received by message_type, deleted for every acknowledged record, none for a redelivered one", async () => {
    const { deps } = setup();
    const state = {
      ...fixture('spot-interruption-warning'),
      'detail-type': 'EC2 Instance State-change Notification',
      detail: { 'instance-id': InstanceId, state: 'stopping' },
    };
    await run(sqs('not json', fixture('spot-interruption-warning'), state), deps);
    const m = deps.metrics as RecordingMetrics;
    expect(m.total(MetricNames.interruptionReceived, { message_type: 'spot_interrupted' })).toBe(1);
    expect(m.total(MetricNames.interruptionReceived, { message_type: 'instance_stopped' })).toBe(1);
    expect(m.total(MetricNames.interruptionDeleted)).toBe(2);
  });

  it('an event of another kind is acknowledged as a no-op', async () => {
    const { deps } = setup();
    const e = { ...fixture('spot-interruption-warning'), 'detail-type': 'EC2 Fast Snapshot Restore State-change Notification' };
    const res = await run(sqs(e), deps);
    expect(res).toMatchObject({ batchItemFailures: [], results: [{ status: 'ignored' }] });
  });

  it('a throttled lookup is reported for redelivery, not dropped', async () => {
    const { w, deps } = setup();
    w.store.failNext('getByInstanceId', new TransientError('ProvisionedThroughputExceeded'));
    const res = await run(sqs(fixture('spot-interruption-warning')), deps);
    expect(res.batchItemFailures).toEqual([{ itemIdentifier: 'm-1' }]);
    expect(res.results[0].error).toBe('TransientError');
  });

  it('a claim already terminating with a deadline no later than the notice is left to its execution', async () => {
    const { w, deps } = setup({ region: 'us-west-1' });
    w.cloud.setState(InstanceId, 'terminated');
    const now = w.clock.nowMs();
    w.store.put({
      ...w.store.peek('spot-abc12')!,
      phase: 'Terminating',
      termination: { attempt: 1, reason: 'consolidation', deadlineEpochMs: now, startedAt: w.clock.nowIso(), heartbeatAt: w.clock.nowIso(), failures: 0 },
    });
    const res = await run(sqs(fixture('instance-state-change-terminated')), deps);
    expect(res.results[0].outcomes).toEqual([{ instanceId: InstanceId, action: 'already-terminating' }]);
    expect(w.starter.started).toHaveLength(0);
  });

  it('a claim terminating without a deadline (drain blocked by a PDB) is not ignored: the notice starts attempt 2 with its deadline', async () => {
    const { w, deps } = setup({ region: 'us-west-1' });
    w.cloud.setState(InstanceId, 'terminated');
    w.store.put({
      ...w.store.peek('spot-abc12')!,
      phase: 'Terminating',
      termination: { attempt: 1, reason: 'drift', budgetNodePool: 'spot', startedAt: w.clock.nowIso(), heartbeatAt: w.clock.nowIso(), failures: 0 },
    });
    const res = await run(sqs(fixture('instance-state-change-terminated')), deps);
    expect(res.results[0].outcomes).toEqual([expect.objectContaining({ instanceId: InstanceId, action: 'terminate', deadlineEpochMs: w.clock.nowMs() })]);
    expect(w.starter.started).toEqual([
      expect.objectContaining({ nodeClaim: 'spot-abc12', attempt: 2, reason: 'interruption', deadlineEpochMs: w.clock.nowMs(), budgetNodePool: 'spot' }),
    ]);
    expect(w.store.peek('spot-abc12')?.termination).toMatchObject({ attempt: 2, deadlineEpochMs: w.clock.nowMs(), reason: 'interruption' });
  });
});

describe('F7: the message is a claim, EC2 and the stack decide', () => {
  const forged = (o: { account?: string; time?: string; region?: string } = {}) => ({ ...fixture('spot-interruption-warning'), ...o });

  it('account 999999999999 / time 2000-01-01 / an on-demand instance → refused, acknowledged, nothing started', async () => {
    const { w, deps, logs } = setup({ capacityType: 'on-demand' });
    const res = await run(sqs(forged({ account: '999999999999', time: '2000-01-01T00:00:00Z' })), deps);
    expect(res.batchItemFailures).toEqual([]);
    expect(res.results[0]).toMatchObject({ status: 'refused', error: "account 999999999999 is not the stack's (123456789012)" });
    expect(logs.filter((l) => l.message === 'interruption message refused')).toHaveLength(1);
    expect(w.starter.started).toEqual([]);
    expect(w.store.peek('spot-abc12')?.noticeDeadlineEpochMs).toBeUndefined();
  });

  it('another region → refused', async () => {
    const { w, deps } = setup();
    const res = await run(sqs(forged({ region: 'eu-west-1' })), deps);
    expect(res.results[0]).toMatchObject({ status: 'refused', error: "region eu-west-1 is not the stack's (us-east-2)" });
    expect(w.starter.started).toEqual([]);
  });

  it("a spot warning for an on-demand claim (the stack's own account) → refused after EC2 says on-demand", async () => {
    const { w, deps, logs } = setup({ capacityType: 'on-demand' });
    const res = await run(sqs(forged()), deps);
    expect(res.batchItemFailures).toEqual([]);
    expect(res.results[0].outcomes).toEqual([
      { instanceId: InstanceId, action: 'refused', reason: 'SpotInterruption for nodeclaim spot-abc12, which is on-demand (EC2: on-demand)' },
    ]);
    expect(logs.filter((l) => l.level === 'warn')).toHaveLength(1);
    expect(w.starter.started).toEqual([]);
    expect(w.unavailable.all()).toEqual([]);
  });

  it('a spot warning EC2 does not bear out (instance stopped, unknown, or tagged for another claim) → refused', async () => {
    for (const prepare of [(w: FakeWorldT) => w.cloud.setState(InstanceId, 'stopped'), (w: FakeWorldT) => w.cloud.forget(InstanceId)]) {
      const { w, deps } = setup();
      prepare(w);
      const res = await run(sqs(forged()), deps);
      expect(res.results[0].outcomes?.[0]).toMatchObject({ action: 'refused' });
      expect(w.starter.started).toEqual([]);
    }
    const { w, deps } = setup({ instanceTags: { 'karpenter.sh/nodeclaim': 'spot-other' } });
    const res = await run(sqs(forged()), deps);
    expect(res.results[0].outcomes?.[0]).toMatchObject({ action: 'refused', reason: expect.stringMatching(/tag karpenter.sh\/nodeclaim=spot-other/) });
    expect(w.starter.started).toEqual([]);
  });

  it('a state change EC2 contradicts (EC2 says running) → refused, no immediate cutoff', async () => {
    const { w, deps } = setup({ region: 'us-east-1' });
    const res = await run(sqs(fixture('instance-state-change-stopping')), deps);
    expect(res.results[0].outcomes).toEqual([
      { instanceId: InstanceId, action: 'refused', reason: `EC2 says instance ${InstanceId} is running, not stopping` },
    ]);
    expect(w.starter.started).toEqual([]);
  });

  it("a spot warning dated 2000-01-01 in the stack's account: the deadline is now + 2 minutes, not the message's", async () => {
    const { w, deps } = setup();
    await run(sqs(forged({ time: '2000-01-01T00:00:00Z' })), deps);
    expect(w.starter.started[0].deadlineEpochMs).toBe(w.clock.nowMs() + 120_000);
    expect(w.store.peek('spot-abc12')?.noticeDeadlineEpochMs).toBe(w.clock.nowMs() + 120_000);
  });

  it(`a Health event naming more than ${MaxHealthEventInstances} instances is refused whole`, async () => {
    const { w, deps } = setup({ region: 'us-east-1' });
    const e = fixture('health-scheduled-change-bare-id');
    e.detail.affectedEntities = Array.from({ length: MaxHealthEventInstances + 1 }, (_, i) => ({ entityValue: `i-0${i.toString(16).padStart(16, '0')}` }));
    const res = await run(sqs(e), deps);
    expect(res).toMatchObject({
      batchItemFailures: [],
      results: [{ status: 'refused', error: expect.stringMatching(new RegExp(`^health event names 5[12] instances, more than ${MaxHealthEventInstances}$`)) }],
    });
    expect(w.starter.started).toEqual([]);
  });
});
