/**
 * The agent's S3 view is a cache, never an authority (DESIGN.md "Trust"; issue 23, security
 * review F2 and F3): through the real provisioner handler, a forged or broken view launches
 * nothing beyond what live pods need, suppresses no launch a live pending pod needs, and a view
 * that cannot be trusted (malformed, too large, dated in the future) means "read live" with one
 * warning line and a metric, never a crash.
 */
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { run, parseInput } from '../../../functions/provisioner/handler.ts';
import { MaxViewJsonBytes } from '../../../shared/api/cluster-view.ts';
import { MetricNames } from '../../../shared/api/metrics.ts';
import { InMemoryClusterViewStore, node, pod } from '../../fakes/index.ts';
import { Cluster, pendingPod, provisionerWorld, unschedulableEvent } from './world.ts';

const Refused = 'not using the cluster view, listing the cluster';

/** A node the inflate NodePool's pods may land on, with room for `cpu`. */
function roomyNode(name: string, cpu: string, extra: { taints?: { key: string; effect: 'NoSchedule' }[] } = {}) {
  return node({
    name,
    allocatable: { cpu, memory: '1024Gi', pods: '250' },
    labels: {
      'kubernetes.io/arch': 'amd64',
      'kubernetes.io/os': 'linux',
      'karpenter.sh/capacity-type': 'on-demand',
      'karpenter.sh/nodepool': 'default',
      'karpenter.sh/initialized': 'true',
      'topology.kubernetes.io/zone': 'ap-northeast-2a',
    },
    ...extra,
  });
}

const Disrupted = { key: 'karpenter.sh/disrupted', effect: 'NoSchedule' as const };

/** 40 made-up 15-cpu pods bound to `nodeName` (review F2). */
function madeUpPods(nodeName: string) {
  return Array.from({ length: 40 }, (_, i) => pod({ name: `fake-${i}`, cpu: '15', memory: '1Gi', nodeName, phase: 'Running' }));
}

/** A world with a view store, the view published from `viewNodes` / `viewPods` now. */
function world(viewNodes: Parameters<InMemoryClusterViewStore['publish']>[1], viewPods: Parameters<InMemoryClusterViewStore['publish']>[2]) {
  const w = provisionerWorld();
  const views = new InMemoryClusterViewStore();
  views.publish(Cluster, viewNodes, viewPods, w.w.clock.now());
  return { ...w, views, deps: { ...w.deps, views } };
}

/** Writes `raw` as the view object, gzip JSON as the agent writes it. */
async function putRaw(views: InMemoryClusterViewStore, raw: unknown): Promise<void> {
  await views.put(gzipSync(Buffer.from(typeof raw === 'string' ? raw : JSON.stringify(raw))));
}

describe('provisioner: a forged view launches nothing beyond what live pods need (review F2)', () => {
  it('F2 reproduction: a "disrupted" view node with 40 made-up 15-cpu pods and one empty-pod event launch nothing', async () => {
    // Prepare: the node exists only in the view
    const { w, deps } = world([roomyNode('ghost', '96', { taints: [Disrupted] })], madeUpPods('ghost'));
    // Act
    const summary = await run(parseInput(unschedulableEvent([], 'e1')), deps);
    // Assess
    expect(summary.provisionable).toBe(0);
    expect(summary.launched).toEqual([]);
    expect(w.cloud.callsOf('create')).toHaveLength(0);
    expect(w.kube.callsOf('listNodes')).toHaveLength(1);
  });

  it('the same view naming a real node that is not being deleted live launches nothing', async () => {
    // Prepare: "busy" is live and healthy; the view says it is disrupted and carries 40 made-up pods
    const { w, deps } = world([roomyNode('busy', '96', { taints: [Disrupted] })], madeUpPods('busy'));
    w.kube.addNode(roomyNode('busy', '96'));
    // Act
    const summary = await run(parseInput(unschedulableEvent([], 'e1')), deps);
    // Assess
    expect(summary.provisionable).toBe(0);
    expect(w.cloud.callsOf('create')).toHaveLength(0);
  });

  it("a node really being deleted: only its live, bound, reschedulable pods are provisioned for, not the view's", async () => {
    // Prepare: "draining" is live and tainted; live it runs one 2-cpu pod and a DaemonSet pod, the view claims 40 15-cpu pods
    const { w, deps } = world([roomyNode('draining', '96', { taints: [Disrupted] })], madeUpPods('draining'));
    w.kube.addNode(roomyNode('draining', '96', { taints: [Disrupted] }));
    w.kube.addPod(pod({ name: 'web', cpu: '2', memory: '1Gi', nodeName: 'draining', phase: 'Running' }));
    w.kube.addPod(pod({ name: 'ds', cpu: '100m', memory: '64Mi', nodeName: 'draining', phase: 'Running', owner: 'DaemonSet' }));
    // Act
    const summary = await run(parseInput(unschedulableEvent([], 'e1')), deps);
    // Assess: one claim, for web alone; its pods were listed live for that node
    expect(summary.provisionable).toBe(1);
    expect(summary.launched).toHaveLength(1);
    expect((await w.store.list())[0].pods).toEqual(['default/web']);
    expect(w.kube.callsOf('listPods').map((c) => c[0])).toContainEqual({ nodeName: 'draining' });
  });

  it('a forged big empty view node does not suppress the launch a live pending pod needs', async () => {
    // Prepare: the view shows a 96-cpu empty node that the API server does not know
    const p = pendingPod('real', '1');
    const { w, deps } = world([roomyNode('ghost', '96')], []);
    w.kube.addPod(p);
    // Act
    const summary = await run(parseInput(unschedulableEvent([p])), deps);
    // Assess
    expect(summary.placedOnExisting).toBe(0);
    expect(summary.launched).toHaveLength(1);
    expect((await w.store.list())[0].pods).toEqual(['default/real']);
  });
});

describe('provisioner: a view that cannot be trusted is refused and the cluster read live, never a crash (review F3)', () => {
  /**
   * Live: n1 (8 cpu) is full with a 7.5-cpu pod and a 1-cpu pod is pending. A view that shows n1
   * empty would place the pod there on paper; refused, the cluster is read live and one node launches.
   */
  function liveFullNode() {
    const p = pendingPod('real', '1');
    const w = provisionerWorld();
    w.w.kube.addNode(roomyNode('n1', '8'));
    w.w.kube.addPods(pod({ name: 'big', nodeName: 'n1', cpu: '7500m', phase: 'Running' }), p);
    const views = new InMemoryClusterViewStore();
    return { ...w, p, views, deps: { ...w.deps, views } };
  }

  /** A valid view of n1 empty (the agent's builder), as a JSON object. */
  function emptyN1View(generatedAt: string): Record<string, unknown> {
    return {
      schemaVersion: 1,
      cluster: Cluster,
      agent: '2026-01-01T00:00:00Z',
      sequence: 1,
      generatedAt,
      nodes: [JSON.parse(JSON.stringify(roomyNode('n1', '8')))],
      templates: [],
      pods: [],
    };
  }

  async function assessRefusedAndLaunched(t: ReturnType<typeof liveFullNode>, summary: Awaited<ReturnType<typeof run>>, reason: RegExp, kind: string) {
    expect(summary.launched).toHaveLength(1);
    expect(summary.placedOnExisting).toBe(0);
    const lines = t.log.withMessage(Refused);
    expect(lines).toHaveLength(1);
    expect(lines[0].level).toBe('warn');
    expect(String(lines[0].fields?.reason)).toMatch(reason);
    expect(t.metrics.total(MetricNames.clusterViewRefused, { reason: kind })).toBe(1);
  }

  it('F3a: a view with nodes:[{}] falls back to live (the entry and field named), not a TypeError on every pass', async () => {
    // Prepare
    const t = liveFullNode();
    await putRaw(t.views, { ...emptyN1View(t.w.clock.now().toISOString()), nodes: [{}] });
    // Act
    const summary = await run(parseInput(unschedulableEvent([t.p])), t.deps);
    // Assess
    await assessRefusedAndLaunched(t, summary, /nodes\[0\]\.metadata/, 'invalid');
  });

  it('a malformed pod row or template is refused the same way', async () => {
    const t = liveFullNode();
    const v = emptyN1View(t.w.clock.now().toISOString());
    await putRaw(t.views, {
      ...v,
      templates: [{ metadata: { namespace: 'default' }, spec: { containers: [] } }],
      pods: [['x', 0, 'n1', 'Running', '', '', '']],
    });
    const summary = await run(parseInput(unschedulableEvent([t.p])), t.deps);
    await assessRefusedAndLaunched(t, summary, /templates\[0\]\.spec\.containers/, 'invalid');
    t.w.clock.advanceSeconds(1);
    await putRaw(t.views, {
      ...v,
      pods: [['x', 0.5, 'n1', 'Running', '', '', '']],
      templates: [{ metadata: { namespace: 'default' }, spec: { containers: [{ name: 'c' }] } }],
    });
    await run(parseInput(unschedulableEvent([], 'e2')), t.deps); // a full pass (the pod is on its claim now)
    expect(String(t.log.withMessage(Refused)[1].fields?.reason)).toMatch(/pods\[0\]/);
  });

  it('a decompression bomb (a small object inflating past MaxViewJsonBytes) is refused before it is parsed', async () => {
    // Prepare: a valid view of n1 empty, padded with JSON whitespace past the cap (~130 KB of gzip)
    const t = liveFullNode();
    const json = JSON.stringify(emptyN1View(t.w.clock.now().toISOString()));
    const bomb = Buffer.alloc(MaxViewJsonBytes + 1024, 0x20);
    bomb.write(json.slice(0, -1), 0); // `{...view` + spaces + `}`: valid JSON
    bomb.write('}', bomb.length - 1);
    const body = gzipSync(bomb, { level: 1 });
    expect(body.byteLength).toBeLessThan(1024 * 1024);
    await t.views.put(body);
    // Act
    const summary = await run(parseInput(unschedulableEvent([t.p])), t.deps);
    // Assess
    await assessRefusedAndLaunched(t, summary, /decompresses past \d+ bytes/, 'too-large');
  });

  it('a view dated in the future is refused (it would otherwise stay "fresh" for ever)', async () => {
    // Prepare: generatedAt one hour ahead of the function's clock
    const t = liveFullNode();
    t.views.publish(Cluster, [roomyNode('n1', '8')], [], new Date(t.w.clock.now().getTime() + 3_600_000));
    // Act
    const summary = await run(parseInput(unschedulableEvent([t.p])), t.deps);
    // Assess
    await assessRefusedAndLaunched(t, summary, /3600 s in the future \(bound 5 s\)/, 'future');
  });

  it('a view a few seconds ahead (clock skew within the bound) is used', async () => {
    const t = liveFullNode();
    t.views.publish(Cluster, [roomyNode('n1', '8')], [], new Date(t.w.clock.now().getTime() + 3_000));
    const summary = await run(parseInput(unschedulableEvent([t.p])), t.deps);
    expect(t.log.withMessage(Refused)).toHaveLength(0);
    // The view understates n1's pods (it shows it empty): the pod is placed on paper. Bounded: see docs.
    expect(summary.placedOnExisting).toBe(1);
  });
});
