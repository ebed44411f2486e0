/**
 * The cluster view (docs/cluster-state.md): what the agent publishes is what the functions read;
 * a fresh view replaces the node and pod lists; a too-old one is refused and the cluster is read
 * live, never trusted for a launch; disruption re-reads its candidates live before acting.
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { InMemoryClusterViewStore, node, nodeClaimOf, pod } from '../../fakes/index.ts';
import { ClusterViewBuilder, clusterOfView, parseClusterView, toViewPod, ClusterViewError } from '../../../shared/api/cluster-view.ts';
import { MaxViewAgeSeconds, readClusterPicture } from '../../../shared/runtime/cluster-picture.ts';
import { RecordingLog } from '../../../shared/runtime/observability.ts';
import { podStartupSeconds } from '../../../shared/api/metrics.ts';
import { run as provisionerRun, parseInput } from '../../../functions/provisioner/handler.ts';
import { run as disruptionRun } from '../../../functions/disruption/handler.ts';
import { NodePoolSchema } from '../../../shared/api/nodepool.ts';
import { RecordingMetrics } from '../../../shared/runtime/observability.ts';
import type { Deps } from '../../../shared/runtime/deps.ts';
import { fakeWorld } from '../../fakes/index.ts';
import { Cluster, pendingPod, provisionerWorld, unschedulableEvent } from '../provisioner/world.ts';

/** A node with room for `cpu` (the inflate NodePool's labels, so its pods may land there). */
function roomyNode(name: string, cpu: string) {
  return node({
    name,
    allocatable: { cpu, memory: '64Gi', pods: '110' },
    labels: {
      'kubernetes.io/arch': 'amd64',
      'kubernetes.io/os': 'linux',
      'karpenter.sh/capacity-type': 'on-demand',
      'topology.kubernetes.io/zone': 'ap-northeast-2a',
    },
  });
}

/** The calls of listPods that list the bound pods of the whole cluster (no node name, not the pending ones). */
const clusterWidePodLists = (calls: unknown[][]) =>
  calls.filter((c) => {
    const o = c[0] as { nodeName?: string; unbound?: boolean } | undefined;
    return o?.nodeName === undefined && !o?.unbound;
  });

describe('cluster view', () => {
  it("carries a pod's Ready time, so the pods startup metric reads the same from the view as live; a 7-field row of an older agent still parses", () => {
    // Prepare
    const b = new ClusterViewBuilder();
    const ready = pod({ name: 'web-0', nodeName: 'n0', cpu: '1', phase: 'Running' });
    ready.metadata.creationTimestamp = '2026-01-01T00:00:00Z';
    ready.status = { ...ready.status, conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2026-01-01T00:00:42Z' }] };
    const starting = pod({ name: 'web-1', nodeName: 'n0', cpu: '1', phase: 'Running' });
    starting.metadata.creationTimestamp = '2026-01-01T00:00:00Z';
    for (const p of [ready, starting]) b.setPod(`default/${p.metadata.name}`, b.intern(toViewPod(p)!));
    b.syncNodes([['n0', node({ name: 'n0' })]]);
    // Act
    const view = b.render({ cluster: 'c', agent: 'a', sequence: 1, generatedAt: '2026-01-01T00:01:00Z' });
    const back = clusterOfView(parseClusterView(JSON.parse(JSON.stringify(view)), 'c'));
    const old = parseClusterView({ ...view, pods: view.pods.map((r) => r.slice(0, 7)) }, 'c');
    // Assess
    const window = [Date.parse('2026-01-01T00:00:00Z'), Date.parse('2026-01-01T00:01:00Z')] as const;
    expect(podStartupSeconds(back.pods, ...window)).toEqual([42]);
    expect(podStartupSeconds([ready], ...window)).toEqual([42]);
    expect(podStartupSeconds(clusterOfView(old).pods, ...window)).toEqual([]);
  });

  it('round trip: bound pods keep what scheduling reads, share one template per ReplicaSet, pending and finished pods are left out', async () => {
    const b = new ClusterViewBuilder();
    const pods = Array.from({ length: 30 }, (_, i) => {
      const p = pod({ name: `web-${i}`, nodeName: `n${i % 3}`, cpu: '250m', memory: '512Mi', labels: { app: 'web' }, phase: 'Running' });
      p.metadata.ownerReferences = [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-5d8f', controller: true }];
      return p;
    });
    const pending = pod({ name: 'waiting', cpu: '1', phase: 'Pending' });
    const done = pod({ name: 'job', nodeName: 'n0', cpu: '1', phase: 'Succeeded' });
    for (const p of [...pods, pending, done]) {
      const v = toViewPod(p);
      if (v) b.setPod(`default/${p.metadata.name}`, b.intern(v));
    }
    b.syncNodes(['n0', 'n1', 'n2'].map((n) => [n, node({ name: n })]));
    expect(b.podCount).toBe(30);
    expect(b.templateCount).toBe(1);
    const view = b.render({ cluster: 'c', agent: 'a', sequence: 1, generatedAt: '2026-01-01T00:00:00Z' });
    const back = clusterOfView(parseClusterView(JSON.parse(JSON.stringify(view)), 'c'));
    // the publisher's piecewise JSON (5-character pieces here: many) is the same view
    const pieces = [...b.renderJson({ cluster: 'c', agent: 'a', sequence: 1, generatedAt: '2026-01-01T00:00:00Z' }, 5)];
    expect(pieces.length).toBeGreaterThan(10);
    expect(JSON.parse(pieces.join(''))).toEqual(view);
    // one gzip member per piece reads back as one stream
    const members = Buffer.concat(pieces.map((x) => gzipSync(Buffer.from(x))));
    expect(JSON.parse(gunzipSync(members).toString('utf8'))).toEqual(view);
    expect(back.nodes.map((n) => n.metadata.name).sort()).toEqual(['n0', 'n1', 'n2']);
    expect(back.pods).toHaveLength(30);
    const p7 = back.pods.find((p) => p.metadata.name === 'web-7')!;
    expect(p7.spec.nodeName).toBe('n1');
    expect(p7.metadata.labels).toEqual({ app: 'web' });
    expect(p7.spec.containers[0].resources?.requests).toEqual({ cpu: '250m', memory: '512Mi' });
    // a pod leaving drops its row; the last one of a template drops the template
    for (const p of pods) b.setPod(`default/${p.metadata.name}`, undefined);
    expect(b.templateCount).toBe(0);
    expect(() => parseClusterView({ ...view, cluster: 'other' }, 'c')).toThrow(ClusterViewError);
    expect(() => parseClusterView({ ...view, pods: [['x', 5, 'n0']] }, 'c')).toThrow(/pods\[0\]/);
  });

  it('syncPods: a re-list drops pods no longer listed, or listed but not kept, and their unused templates', () => {
    const b = new ClusterViewBuilder();
    const row = (name: string) => toViewPod(pod({ name, nodeName: 'n0', labels: { app: 'web' }, phase: 'Running', owner: 'none' }))!;
    b.syncPods([
      ['default/a', row('a')],
      ['default/b', row('b')],
      ['default/c', row('c')],
    ]);
    expect(b.podCount).toBe(3);
    expect(b.templateCount).toBe(1);
    const first = b.render({ cluster: 'c', agent: 'a', sequence: 1, generatedAt: '2026-01-01T00:00:00Z' });
    expect(first.templates).toHaveLength(1);
    // b finished (listed, not kept), c gone, d new
    b.syncPods([
      ['default/a', row('a')],
      ['default/b', undefined],
      ['default/d', row('d')],
    ]);
    const view = b.render({ cluster: 'c', agent: 'a', sequence: 2, generatedAt: '2026-01-01T00:00:00Z' });
    expect(view.pods.map((r) => r[0]).sort()).toEqual(['a', 'd']);
    expect(b.templateCount).toBe(1);
    b.syncPods([]);
    expect(b.podCount).toBe(0);
    expect(b.templateCount).toBe(0);
  });

  it('a fresh view replaces the node and pod lists; a warm reader does not download it again (ETag)', async () => {
    const { w, deps } = provisionerWorld();
    const views = new InMemoryClusterViewStore();
    const n1 = roomyNode('n1', '8');
    w.kube.addNode(n1);
    views.publish(Cluster, [n1], [], w.clock.now());
    const log = new RecordingLog();
    const first = await readClusterPicture({ ...deps, log, views }, w.clock.now());
    expect(first.source).toBe('view');
    expect(first.nodes.map((n) => n.metadata.name)).toEqual(['n1']);
    const second = await readClusterPicture({ ...deps, log, views }, w.clock.now());
    expect(second.source).toBe('view');
    expect(views.callsOf('get')[1][0]).toMatch(/^"/); // conditional on the ETag it holds
    expect(w.kube.callsOf('listNodes')).toHaveLength(0);
    expect(w.kube.callsOf('listPods').every((c) => (c[0] as { unbound?: boolean })?.unbound)).toBe(true);
  });

  it(`a view older than ${MaxViewAgeSeconds} s is refused: the provisioner reads the cluster live and launches where the old picture showed room`, async () => {
    // Live: n1 is full (a 7.5-cpu pod). The view still shows it empty (from before that pod).
    const pods = Array.from({ length: 5 }, (_, i) => pendingPod(`inflate-${i}`, '1'));
    const setup = () => {
      const world = provisionerWorld({ pods });
      const n1 = roomyNode('n1', '8');
      world.w.kube.addNode(n1);
      const views = new InMemoryClusterViewStore();
      views.publish(Cluster, [n1], [], world.w.clock.now());
      world.w.kube.addPod(pod({ name: 'big', nodeName: 'n1', cpu: '7500m', phase: 'Running' }));
      return { ...world, views };
    };

    // Fresh (just published): the view's pods decide — the pods go on n1 on paper, nothing launches
    // (n1 is a live node: the provisioner lists the nodes once per pass, never every pod).
    const fresh = setup();
    const onView = await provisionerRun(parseInput(unschedulableEvent(pods)), { ...fresh.deps, views: fresh.views });
    expect(onView.placedOnExisting).toBe(5);
    expect(onView.launched).toHaveLength(0);
    expect(fresh.w.kube.callsOf('listNodes')).toHaveLength(1);
    expect(fresh.w.kube.callsOf('listPods').every((c) => (c[0] as { unbound?: boolean })?.unbound)).toBe(true);

    // Too old: refused, listed live, n1 is full, one NodeClaim launches.
    const old = setup();
    old.w.clock.advanceSeconds(MaxViewAgeSeconds + 1);
    const onLive = await provisionerRun(parseInput(unschedulableEvent(pods)), { ...old.deps, views: old.views });
    expect(onLive.placedOnExisting).toBe(0);
    expect(onLive.launched).toHaveLength(1);
    expect(old.w.kube.callsOf('listNodes')).toHaveLength(1);
    expect(old.log.withMessage('not using the cluster view, listing the cluster')[0].fields.reason).toMatch(/61 s old \(bound 60 s\)/);
  });

  it('an unreadable or missing view is refused the same way', async () => {
    const { w, deps, log } = provisionerWorld();
    const views = new InMemoryClusterViewStore();
    expect((await readClusterPicture({ ...deps, views }, w.clock.now())).refused).toBe('no cluster view published yet');
    await views.put(new Uint8Array([1, 2, 3]));
    const bad = await readClusterPicture({ ...deps, views }, w.clock.now());
    expect(bad.source).toBe('live');
    expect(bad.refused).toMatch(/unreadable/);
    views.publish('another-cluster', [], [], w.clock.now());
    expect((await readClusterPicture({ ...deps, views }, w.clock.now())).refused).toMatch(/cluster "another-cluster"/);
    expect(log.withMessage('not using the cluster view, listing the cluster')).toHaveLength(3);
  });

  it('disruption plans on the view but re-reads its candidates live before acting: a pod bound since is seen', async () => {
    const w = fakeWorld({ start: '2026-03-02T10:00:00Z' });
    w.kube.setNodePools([
      NodePoolSchema.parse({
        apiVersion: 'karpenter.sh/v1',
        kind: 'NodePool',
        metadata: { name: 'default' },
        spec: {
          template: {
            spec: {
              nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
              requirements: [{ key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] }],
            },
          },
          disruption: { consolidationPolicy: 'WhenEmptyOrUnderutilized', consolidateAfter: '0s', budgets: [{ nodes: '100%' }] },
        },
      }),
    ]);
    const managed = (name: string) => {
      const n = node({
        name,
        providerID: `aws:///us-east-1a/i-0${name.padEnd(16, '0')}`,
        labels: {
          'karpenter.sh/nodepool': 'default',
          'karpenter.sh/initialized': 'true',
          'karpenter.sh/capacity-type': 'on-demand',
          'node.kubernetes.io/instance-type': 'm5.large',
          'topology.kubernetes.io/zone': 'us-east-1a',
          'kubernetes.io/arch': 'amd64',
          'kubernetes.io/os': 'linux',
        },
      });
      n.metadata.creationTimestamp = '2026-03-01T10:00:00Z';
      return n;
    };
    const busy = managed('busy');
    const idle = managed('idle');
    const web1 = pod({ name: 'web-1', nodeName: 'busy', cpu: '1500m' });
    w.kube.addNode(busy, idle);
    w.kube.addPod(web1);
    w.store.put(nodeClaimOf(busy));
    w.store.put(nodeClaimOf(idle));
    const views = new InMemoryClusterViewStore();
    const deps = {
      env: { clusterName: 'test', tableName: 't', region: 'us-east-1', logLevel: 'INFO' },
      clock: w.clock,
      log: new RecordingLog(),
      metrics: new RecordingMetrics(),
      store: w.store,
      unavailable: w.unavailable,
      cloud: w.cloud,
      kube: w.kube,
      termination: w.starter,
      budgets: w.budgets,
      views,
      clusterInfo: async () => ({}) as never,
    } as Deps;
    views.publish('test', [busy, idle], [web1], w.clock.now());
    const planned = await disruptionRun({}, deps);
    expect(planned.command?.candidates.map((c) => c.nodeName)).toEqual(['idle']);
    // the nodes are listed live (the view is no authority on which nodes exist), the pods come from the view
    expect(w.kube.callsOf('listNodes')).toHaveLength(1);
    expect(clusterWidePodLists(w.kube.callsOf('listPods'))).toHaveLength(0);

    // A pod lands on "idle"; the view (republished, fresh) has not caught up with it.
    w.kube.addPod(pod({ name: 'web-2', nodeName: 'idle', cpu: '1500m' }));
    w.clock.advanceSeconds(15);
    views.publish('test', [busy, idle], [web1], w.clock.now());
    const acted = await disruptionRun({ command: planned.command }, deps);
    expect(acted.status).toBe('invalidated');
    expect(acted.reason).toMatch(/idle: no longer empty/);
    expect(w.starter.started).toHaveLength(0);
    // a GET and a per-node pod list for the candidate, no cluster-wide pod list
    expect(w.kube.callsOf('getNode').map((c) => c[0])).toContain('idle');
    expect(w.kube.callsOf('listPods').map((c) => c[0])).toContainEqual({ nodeName: 'idle' });
    expect(clusterWidePodLists(w.kube.callsOf('listPods'))).toHaveLength(0);
  });
});
