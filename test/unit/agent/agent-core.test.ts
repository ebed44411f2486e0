import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { AgentCore, BatchIdleMs, BatchMaxMs, PendingResendMs, PodEventMinIntervalMs, nodeClaimDeletion } from '../../../functions/agent/agent-core.ts';
import { isProvisionable } from '../../../functions/agent/select.ts';
import { splitDetails, MaxDetailBytes } from '../../../functions/agent/split.ts';
import {
  UnschedulablePodsDetailSchema,
  NodeClaimLifecycleDetailSchema,
  NodeLifecycleDetailSchema,
  compactPod,
  type AgentPod,
} from '../../../shared/api/agent-events.ts';
import type { Pod } from '../../../shared/api/kube.ts';
import { FakeEventPublisher, node, pod } from '../../fakes/index.ts';

function pending(name: string, extra: Partial<Pod['metadata']> = {}): Pod {
  const p = pod({ name, cpu: '1', phase: 'Pending' });
  p.metadata = { ...p.metadata, ...extra };
  p.status = { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }] };
  return p;
}

const add = (core: AgentCore, p: Pod) => core.onPodEvent('ADDED', `${p.metadata.namespace}/${p.metadata.name}`, AgentCore.podTransform(p));

describe('pod selection (KC IsProvisionable)', () => {
  it('takes only unschedulable, unbound, unnominated, live, non-DaemonSet pods', () => {
    expect(isProvisionable(pending('a'))).toBe(true);
    const nominated = pending('b');
    nominated.status!.nominatedNodeName = 'n1';
    expect(isProvisionable(nominated)).toBe(false);
    expect(isProvisionable(pending('c', { deletionTimestamp: '2026-01-01T00:00:00Z' }))).toBe(false);
    const ds = pending('d');
    ds.metadata.ownerReferences = [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'x' }];
    expect(isProvisionable(ds)).toBe(false);
    const gated = pending('e');
    gated.status!.conditions = [{ type: 'PodScheduled', status: 'False', reason: 'SchedulingGated' }];
    expect(isProvisionable(gated)).toBe(false);
  });
});

describe('AgentCore batching', () => {
  let now = 0;
  let publisher: FakeEventPublisher;
  let core: AgentCore;
  beforeEach(() => {
    vi.useFakeTimers();
    now = Date.parse('2026-01-01T00:00:00Z');
    vi.setSystemTime(now);
    publisher = new FakeEventPublisher();
    core = new AgentCore({ clusterName: 'c1', publisher, nowMs: () => Date.now() });
  });
  afterEach(() => {
    core.stop();
    vi.useRealTimers();
  });

  it('sends one event per batch after 1 s idle, schema-valid', async () => {
    for (const n of ['a', 'b', 'c']) add(core, pending(n));
    await vi.advanceTimersByTimeAsync(BatchIdleMs - 1);
    expect(publisher.published).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(publisher.published).toHaveLength(1);
    const detail = UnschedulablePodsDetailSchema.parse(publisher.published[0].detail);
    expect(detail.pods.map((p) => p.metadata.name)).toEqual(['a', 'b', 'c']);
    expect(publisher.published[0].detailType).toBe('Unschedulable Pods');
  });

  it('closes a busy batch at 10 s even while pods keep arriving', async () => {
    for (let i = 0; i < 25; i++) {
      add(core, pending(`p${i}`));
      await vi.advanceTimersByTimeAsync(500);
    }
    const first = UnschedulablePodsDetailSchema.parse(publisher.published[0].detail);
    expect(first.pods).toHaveLength(BatchMaxMs / 500);
  });

  it('PutEvents partial failure: the batch is kept and sent again', async () => {
    add(core, pending('a'));
    publisher.failEntries(1);
    await vi.advanceTimersByTimeAsync(BatchIdleMs);
    expect(publisher.published).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(BatchIdleMs);
    expect(publisher.published).toHaveLength(1);
    expect((publisher.published[0].detail as { pods: AgentPod[] }).pods[0].metadata.name).toBe('a');
  });

  it('a pod bound before the flush is not sent', async () => {
    const p = pending('a');
    add(core, p);
    core.onPodEvent('MODIFIED', 'default/a', AgentCore.podTransform({ ...p, spec: { ...p.spec, nodeName: 'n1' } }));
    await vi.advanceTimersByTimeAsync(BatchIdleMs);
    expect(publisher.published).toHaveLength(0);
  });

  it('node added, ready, updated and deleted become Node Lifecycle events', async () => {
    const n = node({ name: 'n1', providerID: 'aws:///ap-northeast-2a/i-1', ready: false });
    core.nodeChanged('ADDED', 'n1', n);
    core.nodeChanged('MODIFIED', 'n1', n); // heartbeat only: nothing
    core.nodeChanged('MODIFIED', 'n1', node({ name: 'n1', providerID: 'aws:///ap-northeast-2a/i-1', ready: true }));
    core.nodeChanged('MODIFIED', 'n1', node({ name: 'n1', providerID: 'aws:///ap-northeast-2a/i-1', ready: true, labels: { a: 'b' } }));
    core.nodeChanged('DELETED', 'n1', undefined);
    await core.flush();
    const changes = publisher.ofType('Node Lifecycle').map((e) => NodeLifecycleDetailSchema.parse(e.detail).change);
    expect(changes).toEqual(['added', 'ready', 'updated', 'deleted']);
  });

  it('a node starting to be deleted (karpenter.sh/disrupted taint) sends one Unschedulable Pods event without pods: the provisioner runs a full pass', async () => {
    // Prepare
    const up = node({ name: 'n1', providerID: 'aws:///ap-northeast-2a/i-1', ready: true });
    const disrupted = node({
      name: 'n1',
      providerID: 'aws:///ap-northeast-2a/i-1',
      ready: true,
      unschedulable: true,
      taints: [{ key: 'karpenter.sh/disrupted', effect: 'NoSchedule' }],
    });
    core.nodeChanged('ADDED', 'n1', up);
    await core.flush();
    expect(publisher.ofType('Unschedulable Pods')).toHaveLength(0);
    // Act: tainted, then seen again tainted
    core.nodeChanged('MODIFIED', 'n1', disrupted);
    core.nodeChanged('MODIFIED', 'n1', disrupted);
    await core.flush();
    // Assess: one event, schema-valid, without pods
    const sent = publisher.ofType('Unschedulable Pods');
    expect(sent).toHaveLength(1);
    expect(UnschedulablePodsDetailSchema.parse(sent[0].detail).pods).toEqual([]);
  });

  it('a node whose registration is unfinished is re-sent every 30 s until it carries karpenter.sh/initialized', async () => {
    // Prepare: registration is event-driven; a lost "ready" event must not leave the claim Registered for ever.
    core.start();
    const labels = { 'karpenter.sh/nodepool': 'default' };
    const ours = node({ name: 'n1', providerID: 'aws:///ap-northeast-2a/i-1', ready: true, labels });
    const managed = node({ name: 'm1', providerID: 'aws:///ap-northeast-2a/i-2', ready: true });
    core.nodeChanged('ADDED', 'n1', ours);
    core.nodeChanged('ADDED', 'm1', managed);
    await core.flush();
    const sent = () =>
      publisher
        .ofType('Node Lifecycle')
        .map((e) => NodeLifecycleDetailSchema.parse(e.detail))
        .map((d) => `${d.change}:${d.node.metadata.name}`);
    // Act
    await vi.advanceTimersByTimeAsync(PendingResendMs + PendingResendMs / 3);
    const afterResend = sent();
    core.nodeChanged(
      'MODIFIED',
      'n1',
      node({ name: 'n1', providerID: 'aws:///ap-northeast-2a/i-1', ready: true, labels: { ...labels, 'karpenter.sh/initialized': 'true' } }),
    );
    await vi.advanceTimersByTimeAsync(3 * PendingResendMs);
    // Assess
    expect(afterResend).toEqual(['added:n1', 'added:m1', 'updated:n1']);
    expect(sent()).toEqual(['added:n1', 'added:m1', 'updated:n1', 'updated:n1']);
  });
});

describe('AgentCore pod events per node (lastPodEventTime)', () => {
  let publisher: FakeEventPublisher;
  let core: AgentCore;
  const t0 = Date.parse('2026-01-01T00:00:00Z');
  const iso = (ms: number) => new Date(ms).toISOString();
  const bound = (name: string, nodeName: string, extra: { phase?: string; deleting?: boolean; daemonSet?: boolean } = {}): Pod => {
    const p = pod({ name, cpu: '1', phase: (extra.phase ?? 'Running') as never });
    p.spec = { ...p.spec, nodeName };
    if (extra.deleting) p.metadata.deletionTimestamp = '2026-01-01T00:00:30Z';
    if (extra.daemonSet) p.metadata.ownerReferences = [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'ds' }];
    return p;
  };
  const ev = (type: 'ADDED' | 'MODIFIED' | 'DELETED', p: Pod) =>
    core.onPodViewEvent(type, `default/${p.metadata.name}`, type === 'DELETED' ? undefined : AgentCore.podView(p));
  const podEvents = () =>
    publisher
      .ofType('Node Lifecycle')
      .map((e) => NodeLifecycleDetailSchema.parse(e.detail))
      .filter((d) => d.lastPodEventTime)
      .map((d) => [d.node.metadata.name, d.lastPodEventTime]);

  beforeEach(async () => {
    vi.useFakeTimers();
    vi.setSystemTime(t0);
    publisher = new FakeEventPublisher();
    core = new AgentCore({ clusterName: 'c1', publisher, nowMs: () => Date.now() });
    core.onNodeSync(
      new Map([
        ['n1', node({ name: 'n1', providerID: 'aws:///ap-northeast-2a/i-1' })],
        ['n2', node({ name: 'n2', providerID: 'aws:///ap-northeast-2a/i-2' })],
      ]),
    );
    // The first list is the baseline: pods already there are no event.
    core.onPodViewSync(new Map([['default/old', AgentCore.podView(bound('old', 'n1'))!]]));
    await core.flush();
    publisher.published.length = 0;
  });
  afterEach(() => {
    core.stop();
    vi.useRealTimers();
  });

  it('a pod bound, then removed, restarts the node timer; removal counts like addition', async () => {
    ev('MODIFIED', bound('web-1', 'n2'));
    await vi.advanceTimersByTimeAsync(0);
    expect(podEvents()).toEqual([['n2', iso(t0)]]);
    const detail = NodeLifecycleDetailSchema.parse(publisher.ofType('Node Lifecycle')[0].detail);
    expect(detail).toMatchObject({ change: 'updated', node: { metadata: { name: 'n2' }, spec: { providerID: 'aws:///ap-northeast-2a/i-2' } } });
    expect(detail.node.status).toBeUndefined(); // compact: name and providerID only

    await vi.advanceTimersByTimeAsync(60_000);
    ev('DELETED', bound('old', 'n1')); // the pre-existing pod on n1 goes away: n1 is emptied
    await vi.advanceTimersByTimeAsync(0);
    expect(podEvents()).toEqual([
      ['n2', iso(t0)],
      ['n1', iso(t0 + 60_000)],
    ]);
  });

  it('terminal or terminating counts once; DaemonSet pods and status-only updates do not count', async () => {
    ev('MODIFIED', bound('old', 'n1', { deleting: true }));
    await vi.advanceTimersByTimeAsync(20_000);
    ev('MODIFIED', bound('old', 'n1', { deleting: true, phase: 'Succeeded' })); // already removed
    ev('DELETED', bound('old', 'n1'));
    ev('ADDED', bound('ds-1', 'n1', { daemonSet: true }));
    await vi.advanceTimersByTimeAsync(20_000);
    expect(podEvents()).toEqual([['n1', iso(t0)]]);
  });

  it('rate limit: at most one event per node per 10 s, the last one carries the latest time', async () => {
    for (let i = 0; i < 5; i++) {
      if (i > 0) await vi.advanceTimersByTimeAsync(2_000);
      ev('ADDED', bound(`job-${i}`, 'n1'));
    }
    // t0: sent at once; t0+2..8 s coalesced and sent at t0+10 s with the time of the last (t0+8 s).
    await vi.advanceTimersByTimeAsync(PodEventMinIntervalMs - 8_000 - 1);
    expect(podEvents()).toEqual([['n1', iso(t0)]]);
    await vi.advanceTimersByTimeAsync(1);
    expect(podEvents()).toEqual([
      ['n1', iso(t0)],
      ['n1', iso(t0 + 8_000)],
    ]);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(podEvents()).toHaveLength(2);
  });

  it('a re-list reports what the watch missed', async () => {
    core.onPodViewSync(new Map([['default/new', AgentCore.podView(bound('new', 'n2'))!]])); // old gone from n1, new on n2
    await vi.advanceTimersByTimeAsync(0);
    expect(podEvents().sort()).toEqual([
      ['n1', iso(t0)],
      ['n2', iso(t0)],
    ]);
  });
});

describe('AgentCore NodeClaim deletions (kubectl delete nodeclaim)', () => {
  let publisher: FakeEventPublisher;
  let core: AgentCore;
  const object = (name: string, o: { deleting?: boolean; finalizer?: boolean } = {}) => ({
    metadata: {
      name,
      uid: `uid-${name}`,
      ...(o.deleting ? { deletionTimestamp: '2026-01-01T00:00:30Z' } : {}),
      finalizers: o.finalizer === false ? [] : ['karpenter.sh/termination'],
    },
    status: { providerID: `aws:///us-east-1a/i-${name}` },
  });
  const ev = (type: 'ADDED' | 'MODIFIED' | 'DELETED', o: ReturnType<typeof object>) =>
    core.nodeClaimChanged(type, o.metadata.name, type === 'DELETED' ? undefined : nodeClaimDeletion(o));
  const sent = () => publisher.ofType('NodeClaim Lifecycle').map((e) => NodeClaimLifecycleDetailSchema.parse(e.detail).nodeClaim.metadata.name);
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(Date.parse('2026-01-01T00:00:00Z'));
    publisher = new FakeEventPublisher();
    core = new AgentCore({ clusterName: 'c1', publisher, nowMs: () => Date.now() });
  });
  afterEach(() => {
    core.stop();
    vi.useRealTimers();
  });

  it('an object that starts being deleted while holding karpenter.sh/termination is sent at once, once, schema-valid', async () => {
    ev('ADDED', object('a'));
    ev('MODIFIED', object('b', { deleting: true, finalizer: false })); // goes at once: nothing to wait for
    await vi.advanceTimersByTimeAsync(0);
    expect(sent()).toEqual([]);
    ev('MODIFIED', object('a', { deleting: true }));
    await vi.advanceTimersByTimeAsync(0);
    const detail = NodeClaimLifecycleDetailSchema.parse(publisher.ofType('NodeClaim Lifecycle')[0].detail);
    expect(detail).toEqual({
      schemaVersion: '1',
      cluster: 'c1',
      change: 'deleting',
      observedAt: '2026-01-01T00:00:00.000Z',
      nodeClaim: {
        metadata: { name: 'a', uid: 'uid-a', deletionTimestamp: '2026-01-01T00:00:30Z', finalizers: ['karpenter.sh/termination'] },
        status: { providerID: 'aws:///us-east-1a/i-a' },
      },
    });
    ev('MODIFIED', object('a', { deleting: true })); // status updates while it drains
    await vi.advanceTimersByTimeAsync(0);
    expect(sent()).toEqual(['a']);
  });

  it('a failed publish is sent again; a re-list of a fresh agent reports deletions under way, a re-list of the same agent does not repeat them', async () => {
    publisher.failEntries(1);
    ev('MODIFIED', object('a', { deleting: true }));
    await vi.advanceTimersByTimeAsync(0);
    expect(sent()).toEqual([]);
    await vi.advanceTimersByTimeAsync(BatchIdleMs);
    expect(sent()).toEqual(['a']);
    core.onNodeClaimSync(new Map([['a', nodeClaimDeletion(object('a', { deleting: true }))!]]));
    await vi.advanceTimersByTimeAsync(0);
    expect(sent()).toEqual(['a']);
    const fresh = new AgentCore({ clusterName: 'c1', publisher, nowMs: () => Date.now() });
    fresh.onNodeClaimSync(new Map([['a', nodeClaimDeletion(object('a', { deleting: true }))!]]));
    await vi.advanceTimersByTimeAsync(0);
    expect(sent()).toEqual(['a', 'a']);
    fresh.stop();
  });

  it('an object deleted and created again under the same name is a new deletion', async () => {
    ev('MODIFIED', object('a', { deleting: true }));
    ev('DELETED', object('a'));
    ev('ADDED', object('a'));
    ev('MODIFIED', object('a', { deleting: true }));
    await vi.advanceTimersByTimeAsync(0);
    expect(sent()).toEqual(['a', 'a']);
  });
});

describe('split under the 256 KB entry limit', () => {
  it('keeps every part under the budget and every pod once', () => {
    const pods = Array.from({ length: 3000 }, (_, i) => compactPod(pending(`pod-${i}`, { labels: { app: 'x'.repeat(60), i: String(i) } })));
    const parts = splitDetails(pods, { cluster: 'c1', batchId: 'b', observedAt: '2026-01-01T00:00:00Z' });
    expect(parts.length).toBeGreaterThan(1);
    for (const d of parts) expect(Buffer.byteLength(JSON.stringify(d))).toBeLessThanOrEqual(MaxDetailBytes);
    expect(parts.reduce((n, d) => n + d.pods.length, 0)).toBe(3000);
    expect(parts.map((d) => d.part)).toEqual(parts.map((_, i) => i));
    expect(new Set(parts.map((d) => d.parts))).toEqual(new Set([parts.length]));
  });
});

describe('compactPod', () => {
  it('keeps the claims a pod mounts, directly or through a generic ephemeral volume (with its template class), and drops other volumes', () => {
    const p = pending('db');
    p.spec.volumes = [
      { name: 'data', persistentVolumeClaim: { claimName: 'data-db' } },
      { name: 'scratch', ephemeral: { volumeClaimTemplate: { spec: { storageClassName: 'gp3', accessModes: ['ReadWriteOnce'] } } } },
      { name: 'cache', emptyDir: {} },
    ];
    expect(compactPod(p).spec.volumes).toEqual([
      { name: 'data', persistentVolumeClaim: { claimName: 'data-db' } },
      { name: 'scratch', ephemeral: { volumeClaimTemplate: { spec: { storageClassName: 'gp3' } } } },
    ]);
  });
});

describe('Agent health endpoints', () => {
  it('/healthz is 200 while running; /readyz is 503 until both informers listed', async () => {
    const { Agent } = await import('../../../functions/agent/agent.ts');
    const yaml =
      'apiVersion: v1\nkind: Config\nclusters:\n- name: t\n  cluster:\n    server: http://127.0.0.1:9\n    insecure-skip-tls-verify: true\nusers:\n- name: u\n  user:\n    token: x\ncontexts:\n- name: t\n  context:\n    cluster: t\n    user: u\ncurrent-context: t\n';
    const agent = new Agent({
      connection: { kind: 'kubeconfig-string', yaml },
      publisher: new FakeEventPublisher(),
      clusterName: 'c1',
      healthPort: 18_000 + Math.floor(Math.random() * 1000),
    });
    await agent.start();
    const port = (agent as unknown as { opts: { healthPort: number } }).opts.healthPort;
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(503);
    await agent.stop();
  });
});
