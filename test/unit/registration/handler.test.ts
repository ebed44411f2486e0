import { describe, expect, it } from 'vitest';
import { run, parseInput, instanceIdOf, recordPodEvent } from '../../../functions/registration/handler.ts';
import { AnnotationLastPodEventTime, compactNode, type NodeLifecycleEvent } from '../../../shared/api/agent-events.ts';
import { AgentSchemaVersion, AgentSource, DetailTypeNodeLifecycle } from '../../../shared/api/contract.ts';
import type { Node } from '../../../shared/api/kube.ts';
import { isTrue } from '../../../shared/api/nodeclaim.ts';
import { RecordingLog, RecordingMetrics } from '../../../shared/runtime/observability.ts';
import { MetricNames } from '../../../shared/api/metrics.ts';
import { fakeWorld, node, nodeClaim } from '../../fakes/index.ts';

/** A parsed `Node Lifecycle` event (parseInput also takes `NodeClaim Lifecycle`). */
const nodeEvent = (e: unknown) => parseInput(e) as NodeLifecycleEvent;

const providerID = 'aws:///ap-northeast-2a/i-0abc1234def567891';

function event(n: Node, change: 'added' | 'ready' | 'updated' | 'deleted' = 'added', cluster = 'test'): NodeLifecycleEvent {
  return nodeEvent({
    version: '0',
    id: `e-${change}`,
    'detail-type': DetailTypeNodeLifecycle,
    source: AgentSource,
    account: '123456789012',
    time: '2026-01-01T00:01:00Z',
    region: 'ap-northeast-2',
    resources: [],
    detail: { schemaVersion: AgentSchemaVersion, cluster, change, observedAt: '2026-01-01T00:01:00Z', node: compactNode(n) },
  });
}

/** A launched claim, its instance (EC2 PrivateDnsName = the node's name) and its Node, not registered yet; the clock at 00:10. */
function world(ready: boolean) {
  const w = fakeWorld({ start: '2026-01-01T00:10:00Z' });
  const claim = nodeClaim({
    name: 'default-abcde',
    phase: 'Launched',
    instanceId: 'i-0abc1234def567891',
    providerId: providerID,
    labels: { team: 'a', 'karpenter.sh/nodepool': 'default' },
    annotations: { 'karpenter.sh/do-not-disrupt': 'true', [AnnotationLastPodEventTime]: '2026-01-01T00:00:30.000Z' },
    taints: [{ key: 'dedicated', value: 'a', effect: 'NoSchedule' }],
    startupTaints: [{ key: 'cni.example/not-ready', effect: 'NoSchedule' }],
    conditions: [{ type: 'Launched', status: 'True', lastTransitionTime: '2026-01-01T00:00:00.000Z' }],
  });
  void w.store.create(claim);
  const n = node({
    name: 'ip-10-0-0-1',
    providerID,
    ready,
    taints: [
      { key: 'karpenter.sh/unregistered', effect: 'NoExecute' },
      { key: 'cni.example/not-ready', effect: 'NoSchedule' },
    ],
  });
  w.kube.addNode(n);
  w.cloud.addInstance({ instanceId: 'i-0abc1234def567891', zone: 'ap-northeast-2a', privateDnsName: 'ip-10-0-0-1' });
  return {
    w,
    n,
    deps: {
      env: { clusterName: 'test' },
      clock: w.clock,
      log: new RecordingLog(),
      metrics: new RecordingMetrics(),
      store: w.store,
      kube: w.kube,
      cloud: w.cloud,
    },
  };
}

describe('registration', () => {
  it('parses the instance id from spec.providerID', () => {
    expect(instanceIdOf(providerID)).toBe('i-0abc1234def567891');
    expect(instanceIdOf('kind://docker/x')).toBeUndefined();
  });

  it('registers: labels and taints synced, unregistered taint removed, log line', async () => {
    const { w, n, deps } = world(false);
    const r = await run(event(n), deps);
    expect(r).toEqual({ action: 'registered', nodeClaim: 'default-abcde' });
    const live = await w.kube.getNode('ip-10-0-0-1');
    expect(live?.metadata.labels).toMatchObject({ team: 'a', 'karpenter.sh/nodepool': 'default', 'karpenter.sh/registered': 'true' });
    expect(live?.spec?.taints?.map((t) => t.key).sort()).toEqual(['cni.example/not-ready', 'dedicated']);
    // The claim's annotations (its NodePool template's) reach the node; the bookkeeping one does not.
    expect(live?.metadata.annotations?.['karpenter.sh/do-not-disrupt']).toBe('true');
    expect(live?.metadata.annotations?.[AnnotationLastPodEventTime]).toBeUndefined();
    const claim = await w.store.get('default-abcde');
    expect(isTrue(claim!, 'Registered')).toBe(true);
    expect(claim?.nodeName).toBe('ip-10-0-0-1');
    expect(deps.log.withMessage('registered nodeclaim')[0].fields).toEqual({ NodeClaim: { name: 'default-abcde' }, Node: { name: 'ip-10-0-0-1' } });
    expect(deps.metrics.total(MetricNames.nodeClaimsRegistered)).toBe(1);
  });

  it('a claim whose termination started before its node registered stays Terminating (chaos seed 3: spot interruption during launch)', async () => {
    // Prepare
    const { w, n, deps } = world(true);
    await w.kube.patchNode('ip-10-0-0-1', { taints: [{ key: 'karpenter.sh/unregistered', effect: 'NoExecute' }] });
    const launched = (await w.store.get('default-abcde'))!;
    await w.store.update({ ...launched, phase: 'Terminating' });
    // Act: registration and initialization complete afterwards
    await run(event(n), deps);
    await run(event(n, 'updated'), deps);
    // Assess: conditions recorded, phase not moved back
    const claim = (await w.store.get('default-abcde'))!;
    expect(isTrue(claim, 'Registered')).toBe(true);
    expect(isTrue(claim, 'Initialized')).toBe(true);
    expect(claim.phase).toBe('Terminating');
  });

  it('initializes only once Ready and the startup taint is gone', async () => {
    const { w, n, deps } = world(true);
    await run(event(n), deps);
    expect(isTrue((await w.store.get('default-abcde'))!, 'Initialized')).toBe(false);
    // The CNI removes its startup taint.
    await w.kube.patchNode('ip-10-0-0-1', { taints: [{ key: 'dedicated', value: 'a', effect: 'NoSchedule' }] });
    const r = await run(event(n, 'updated'), deps);
    expect(r.action).toBe('initialized');
    const claim = (await w.store.get('default-abcde'))!;
    expect(claim.phase).toBe('Initialized');
    expect(isTrue(claim, 'Ready')).toBe(true);
    expect((await w.kube.getNode('ip-10-0-0-1'))?.metadata.labels?.['karpenter.sh/initialized']).toBe('true');
    expect(deps.log.withMessage('initialized nodeclaim')).toHaveLength(1);
    // A repeated event changes nothing.
    expect((await run(event(n, 'updated'), deps)).action).toBe('unchanged');
  });

  it('overlapping events for one node report the transition once', async () => {
    const { n, deps } = world(false);
    await Promise.all([run(event(n, 'added'), deps), run(event(n, 'updated'), deps), run(event(n, 'ready'), deps)]);
    expect(deps.log.withMessage('registered nodeclaim')).toHaveLength(1);
    expect(deps.metrics.total(MetricNames.nodeClaimsRegistered)).toBe(1);
  });

  it('an event for another cluster is ignored: nothing labelled, the claim untouched', async () => {
    const { w, n, deps } = world(true);
    const r = await run(event(n, 'added', 'other-cluster'), deps);
    expect(r).toEqual({ action: 'ignored', reason: 'event for cluster "other-cluster", not "test"' });
    expect((await w.kube.getNode('ip-10-0-0-1'))?.metadata.labels?.['karpenter.sh/registered']).toBeUndefined();
    expect(isTrue((await w.store.get('default-abcde'))!, 'Registered')).toBe(false);
    expect(deps.log.withMessage('ignoring node event for another cluster')).toHaveLength(1);
  });

  it("the node named in the event must carry the claim's providerID: another node of that name is never bound", async () => {
    const { w, n, deps } = world(true);
    // The event names ip-10-0-0-1 with the claim's providerID, but the live node of that name is another instance.
    await w.kube.deleteNode('ip-10-0-0-1');
    w.kube.addNode(node({ name: 'ip-10-0-0-1', providerID: 'aws:///ap-northeast-2a/i-0fffffffffffffff0', ready: true }));
    const r = await run(event(n), deps);
    expect(r.action).toBe('ignored');
    expect((r as { reason: string }).reason).toContain('i-0fffffffffffffff0');
    expect((await w.kube.getNode('ip-10-0-0-1'))?.metadata.labels?.['karpenter.sh/registered']).toBeUndefined();
    const claim = await w.store.get('default-abcde');
    expect(isTrue(claim!, 'Registered')).toBe(false);
    expect(claim?.nodeName).toBeUndefined();
  });

  it("registers a node only under its instance's EC2 private DNS name: another name is refused and logged, the claim untouched (F10)", async () => {
    // Prepare: a node with the node role sets the pending instance's providerID on its own Node
    const { w, deps } = world(true);
    const impostor = node({ name: 'ip-10-9-9-9', providerID, ready: true });
    w.kube.addNode(impostor);
    const before = (await w.store.get('default-abcde'))!;
    // Act
    const r = await run(event(impostor), deps);
    // Assess
    expect(r).toEqual({ action: 'ignored', reason: "node ip-10-9-9-9 is not instance i-0abc1234def567891's private DNS name ip-10-0-0-1" });
    expect(deps.log.withMessage("ignoring node event: the node name is not the instance's private DNS name")).toHaveLength(1);
    expect(await w.store.get('default-abcde')).toEqual(before);
    expect((await w.kube.getNode('ip-10-9-9-9'))?.metadata.labels?.['karpenter.sh/registered']).toBeUndefined();
    expect(w.kube.callsOf('patchNode')).toEqual([]);
  });

  it('does not register while EC2 reports no private DNS name yet, and registers on a later event once it does (F10)', async () => {
    const { w, n, deps } = world(true);
    w.cloud.addInstance({ instanceId: 'i-0abc1234def567891', zone: 'ap-northeast-2a', privateDnsName: undefined });
    const first = await run(event(n), deps);
    expect(first).toEqual({ action: 'ignored', reason: 'instance i-0abc1234def567891 has no PrivateDnsName yet' });
    expect(isTrue((await w.store.get('default-abcde'))!, 'Registered')).toBe(false);
    w.cloud.addInstance({ instanceId: 'i-0abc1234def567891', zone: 'ap-northeast-2a', privateDnsName: 'ip-10-0-0-1' });
    expect((await run(event(n, 'updated'), deps)).action).toBe('registered');
  });

  it('ignores nodes that are not ours', async () => {
    const { deps } = world(true);
    const other = node({ name: 'ng-1', providerID: 'aws:///ap-northeast-2b/i-0ffffffffffffffff' });
    expect((await run(event(other), deps)).action).toBe('ignored');
  });
});

describe('registration: last pod event time (consolidateAfter restarts)', () => {
  function podActivity(lastPodEventTime: string, id: string): NodeLifecycleEvent {
    return nodeEvent({
      version: '0',
      id,
      'detail-type': DetailTypeNodeLifecycle,
      source: AgentSource,
      time: lastPodEventTime,
      detail: {
        schemaVersion: AgentSchemaVersion,
        cluster: 'test',
        change: 'updated',
        observedAt: lastPodEventTime,
        node: { metadata: { name: 'ip-10-0-0-1' }, spec: { providerID } },
        lastPodEventTime,
      },
    });
  }

  it('writes the annotation on the claim, only forward, once initialized (no EC2 call)', async () => {
    const { w, n, deps } = world(true);
    w.kube.addNode({ ...n, spec: { ...n.spec, taints: [] } });
    await run(event(n, 'ready'), deps);
    const v0 = (await w.store.get('default-abcde'))!;
    expect(isTrue(v0, 'Initialized')).toBe(true);
    const describesBefore = w.cloud.callsOf('get').length;

    const r = await run(podActivity('2026-01-01T00:05:00Z', 'p1'), deps);
    expect(r).toEqual({ action: 'unchanged', nodeClaim: 'default-abcde', podEventRecorded: true });
    const v1 = (await w.store.get('default-abcde'))!;
    expect(v1.annotations[AnnotationLastPodEventTime]).toBe('2026-01-01T00:05:00.000Z');
    expect(v1.version).toBe(v0.version + 1);
    expect(w.cloud.callsOf('get')).toHaveLength(describesBefore);

    // A late (older) event never moves it back; a redelivery writes nothing.
    expect(await run(podActivity('2026-01-01T00:04:00Z', 'p0'), deps)).toMatchObject({ podEventRecorded: false });
    expect(await run(podActivity('2026-01-01T00:05:00Z', 'p1'), deps)).toMatchObject({ podEventRecorded: false });
    const v2 = (await w.store.get('default-abcde'))!;
    expect(v2.annotations[AnnotationLastPodEventTime]).toBe('2026-01-01T00:05:00.000Z');
    expect(v2.version).toBe(v1.version);
  });

  it('stores nothing for a node that is not live, and never a time later than now: a forged 2099 cannot freeze consolidation (F8)', async () => {
    // Prepare: the claim is registered and initialized (pod events stop before registration)
    const { w, n, deps } = world(true);
    w.kube.addNode({ ...n, spec: { ...n.spec, taints: [] } });
    await run(event(n, 'ready'), deps);
    const v0 = (await w.store.get('default-abcde'))!;
    expect(isTrue(v0, 'Initialized')).toBe(true);
    const forged = (name: string) => {
      const e = podActivity('2099-01-01T00:00:00Z', `forged-${name}`);
      return { ...e, detail: { ...e.detail, node: { ...e.detail.node, metadata: { name } } } };
    };
    // Act 1: a forged event naming a node that does not exist
    const ghost = await run(forged('ghost'), deps);
    // Assess 1: ignored, nothing written
    expect(ghost).toEqual({ action: 'ignored', reason: 'node ghost is gone' });
    expect(await w.store.get('default-abcde')).toEqual(v0);
    // Act 2: the same time for the live node
    const live = await run(forged('ip-10-0-0-1'), deps);
    // Assess 2: recorded as now, not 2099; consolidateAfter counts from now
    expect(live).toMatchObject({ podEventRecorded: true });
    expect((await w.store.get('default-abcde'))!.annotations[AnnotationLastPodEventTime]).toBe(w.clock.nowIso());
  });

  it('a conflicting concurrent update is retried: both the condition and the annotation survive', async () => {
    const { w, deps } = world(false);
    const realUpdate = w.store.update.bind(w.store);
    let raced = false;
    w.store.update = async (c) => {
      if (!raced) {
        raced = true;
        const cur = (await w.store.get(c.name))!;
        await realUpdate({ ...cur, labels: { ...cur.labels, racer: 'yes' } });
      }
      return realUpdate(c);
    };
    expect(await recordPodEvent(deps, 'default-abcde', '2026-01-01T00:06:00Z')).toBe(true);
    const c = (await w.store.get('default-abcde'))!;
    expect(c.labels.racer).toBe('yes');
    expect(c.annotations[AnnotationLastPodEventTime]).toBe('2026-01-01T00:06:00.000Z');
  });
});

describe('registrationPatch: karpenter.sh/do-not-sync-taints', () => {
  it('syncs the claim taints unless the node carries the label (the kubelet registered them)', async () => {
    const { registrationPatch } = await import('../../../shared/api/registration.ts');
    const { nodeClaim } = await import('../../fakes/index.ts');
    const c = nodeClaim({ name: 'default-abcde', taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }] });
    const node = (labels: Record<string, string>) =>
      ({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n', labels }, spec: { taints: [] } }) as unknown as Node;
    expect(registrationPatch(node({}), c).taints).toEqual([{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }]);
    expect(registrationPatch(node({ 'karpenter.sh/do-not-sync-taints': 'true' }), c).taints).toEqual([]);
  });
});
