import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import {
  CoreV1Api,
  CustomObjectsApi,
  PolicyV1Api,
  AppsV1Api,
  Watch,
  PatchStrategy,
  setHeaderOptions,
  ApiException,
  type KubeConfig,
} from '@kubernetes/client-node';
import { LocalCluster, AnnotationSimulateStuckPreStop, AnnotationSimulateTerminationSeconds, EVICTION_BLOCKED } from '../../../infra/local/kube/index.ts';
import { at, c5a2xlarge, deployment, managedNode, startCluster } from './builders.ts';

let cluster: LocalCluster;
let kc: KubeConfig;
let url: string;

beforeEach(async () => {
  ({ cluster, kc, url } = await startCluster());
});
afterEach(async () => {
  await cluster.stop();
});

async function getJson(path: string): Promise<any> {
  const r = await fetch(url + path);
  return { status: r.status, body: await r.json() };
}

function running(ns = 'default'): string[] {
  return cluster
    .pods({ namespace: ns })
    .filter((p) => p.status?.phase === 'Running')
    .map((p) => p.metadata.name);
}

describe('discovery', () => {
  it('serves /version, /api, /apis and resource lists shaped for kubectl', async () => {
    expect((await getJson('/version')).body).toMatchObject({ major: '1', minor: '31' });
    expect((await getJson('/api')).body).toMatchObject({ kind: 'APIVersions', versions: ['v1'] });
    const groups = (await getJson('/apis')).body;
    expect(groups.kind).toBe('APIGroupList');
    expect(groups.groups.map((g: { name: string }) => g.name)).toEqual(expect.arrayContaining(['apps', 'policy', 'karpenter.sh', 'karpenter.k8s.aws']));
    const core = (await getJson('/api/v1')).body;
    expect(core).toMatchObject({ kind: 'APIResourceList', groupVersion: 'v1' });
    const pods = core.resources.find((r: { name: string }) => r.name === 'pods');
    expect(pods).toMatchObject({ namespaced: true, kind: 'Pod', shortNames: ['po'] });
    expect(pods.verbs).toEqual(expect.arrayContaining(['get', 'list', 'watch', 'create', 'delete', 'patch']));
    expect(core.resources.find((r: { name: string }) => r.name === 'pods/eviction')).toMatchObject({
      group: 'policy',
      version: 'v1',
      kind: 'Eviction',
      verbs: ['create'],
    });
    expect(core.resources.find((r: { name: string }) => r.name === 'nodes')).toMatchObject({ namespaced: false, shortNames: ['no'] });
    const karpenter = (await getJson('/apis/karpenter.sh/v1')).body;
    expect(karpenter.resources.find((r: { name: string }) => r.name === 'nodepools')).toMatchObject({ namespaced: false, kind: 'NodePool' });
    expect((await getJson('/apis/nope.io/v1')).status).toBe(404);
  });

  it('answers kubectl get nodes,pods with a Table when asked for one', async () => {
    cluster.addInstance(managedNode(1));
    cluster.tick();
    const r = await fetch(`${url}/api/v1/nodes`, { headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json' } });
    const table = (await r.json()) as any;
    expect(table.kind).toBe('Table');
    expect(table.columnDefinitions.map((c: { name: string }) => c.name).slice(0, 3)).toEqual(['Name', 'Status', 'Roles']);
    expect(table.rows[0].cells[1]).toBe('Ready');
  });
});

describe('kubelets', () => {
  it('registers a node after the boot delay and makes it Ready after the ready delay', async () => {
    const { nodeName, providerID } = cluster.addInstance(c5a2xlarge('i-0123456789abcdef0', { bootDelaySeconds: 30, readyDelaySeconds: 10 }));
    expect(nodeName).toMatch(/^ip-10-0-\d+-\d+\.ap-northeast-2\.compute\.internal$/);
    expect(providerID).toBe('aws:///ap-northeast-2a/i-0123456789abcdef0');
    const core = kc.makeApiClient(CoreV1Api);

    cluster.tick(at(29));
    expect((await core.listNode()).items).toHaveLength(0);

    cluster.tick(at(30));
    const node = await core.readNode({ name: nodeName });
    expect(node.spec?.providerID).toBe(providerID);
    expect(node.metadata?.labels).toMatchObject({
      'node.kubernetes.io/instance-type': 'c5a.2xlarge',
      'topology.kubernetes.io/zone': 'ap-northeast-2a',
      'topology.kubernetes.io/region': 'ap-northeast-2',
      'karpenter.sh/capacity-type': 'on-demand',
      'karpenter.sh/nodepool': 'default',
      'kubernetes.io/hostname': nodeName,
    });
    expect(node.status?.allocatable).toMatchObject({ cpu: '7910m', memory: '14162Mi', pods: '58' });
    expect(node.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('False');
    expect(node.spec?.taints?.map((t) => t.key)).toEqual(['karpenter.sh/unregistered', 'node.kubernetes.io/not-ready']);

    cluster.tick(at(40));
    const ready = await core.readNode({ name: nodeName });
    expect(ready.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    expect(ready.spec?.taints?.map((t) => t.key)).toEqual(['karpenter.sh/unregistered']);
  });

  it('removes startup taints after Ready when configured', () => {
    const { nodeName } = cluster.addInstance(
      c5a2xlarge('i-0aaa', { startupTaints: [{ key: 'example.com/cni-not-ready', effect: 'NoSchedule' }], startupTaintsRemovalSeconds: 5 }),
    );
    cluster.tick(at(1));
    expect(
      cluster
        .nodes()
        .find((n) => n.metadata.name === nodeName)
        ?.spec?.taints?.map((t) => t.key),
    ).toEqual(['example.com/cni-not-ready']);
    cluster.tick(at(6));
    expect(cluster.nodes().find((n) => n.metadata.name === nodeName)?.spec?.taints ?? []).toEqual([]);
  });

  it('removeInstance makes the node NotReady and deletes its pods', () => {
    const { nodeName } = cluster.addInstance(managedNode(1));
    cluster.apply([deployment('web', 1, { cpu: '500m' })]);
    cluster.tick(at(1));
    expect(cluster.pods({ nodeName })).toHaveLength(1);
    cluster.removeInstance('i-0managed000000001');
    const node = cluster.nodes().find((n) => n.metadata.name === nodeName)!;
    expect(node.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('Unknown');
    expect(node.spec?.taints?.map((t) => `${t.key}:${t.effect}`)).toEqual([
      'node.kubernetes.io/unreachable:NoSchedule',
      'node.kubernetes.io/unreachable:NoExecute',
    ]);
    expect(cluster.pods({ nodeName })).toHaveLength(0);
    // the replacement pod waits for capacity
    expect(cluster.pendingPods()).toHaveLength(1);
  });
});

describe('node lifecycle and taint manager', () => {
  it('evicts pods that do not tolerate a NoExecute taint, after tolerationSeconds when set', async () => {
    const { nodeName } = cluster.addInstance(managedNode(1));
    const patient = deployment('patient', 1, { cpu: '100m' });
    patient.spec.template.spec.tolerations = [{ key: 'maintenance', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 60 }];
    cluster.apply([deployment('plain', 1, { cpu: '100m' }), patient]);
    cluster.tick(at(1));
    const core = kc.makeApiClient(CoreV1Api);
    await core.patchNode(
      { name: nodeName, body: { spec: { taints: [{ key: 'maintenance', effect: 'NoExecute', timeAdded: at(10).toISOString() }] } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    cluster.tick(at(10));
    const onNode = () =>
      cluster
        .pods({ nodeName })
        .filter((p) => !p.metadata.deletionTimestamp)
        .map((p) => p.metadata.labels?.app);
    expect(onNode()).toEqual(['patient']);
    expect(cluster.pendingPods().map((p) => p.metadata.labels?.app)).toEqual(['plain']); // its replacement cannot land
    cluster.tick(at(69));
    expect(cluster.pods().filter((p) => p.metadata.labels?.app === 'patient' && p.metadata.deletionTimestamp)).toHaveLength(0);
    cluster.tick(at(70));
    expect(cluster.pods().filter((p) => p.metadata.labels?.app === 'patient' && p.spec.nodeName === nodeName && !p.metadata.deletionTimestamp)).toHaveLength(0);
  });

  it('drops a stale not-ready taint written back onto a Ready node', async () => {
    const { nodeName } = cluster.addInstance(managedNode(1, { readyDelaySeconds: 5 }));
    cluster.tick(at(1));
    const stale = cluster.nodes()[0].spec?.taints;
    expect(stale?.map((t) => t.key)).toEqual(['node.kubernetes.io/not-ready']);
    cluster.tick(at(6));
    const core = kc.makeApiClient(CoreV1Api);
    await core.patchNode({ name: nodeName, body: { spec: { taints: stale } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
    cluster.tick(at(7));
    expect(cluster.nodes()[0].spec?.taints ?? []).toEqual([]);
  });
});

describe('deployments and the scheduler', () => {
  it('places inflate pods, reports the rest unschedulable like kube-scheduler, and uses a new node', async () => {
    cluster.addInstance(managedNode(1));
    cluster.addInstance(managedNode(2));
    const pending: string[] = [];
    cluster.onPodPending((_p, message) => pending.push(message));
    cluster.apply([deployment('inflate', 0)]);
    cluster.tick(at(1));
    expect(cluster.pods()).toHaveLength(0);

    cluster.scale('default', 'inflate', 5);
    const pods = cluster.pods();
    expect(pods).toHaveLength(5);
    for (const p of pods) expect(p.metadata.name).toMatch(/^inflate-[bcdfghjklmnpqrstvwxz2456789]{6,10}-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    expect(running()).toHaveLength(2); // 1930m allocatable: one 1-cpu pod per managed node
    const unschedulable = cluster.pendingPods();
    expect(unschedulable).toHaveLength(3);
    expect(unschedulable[0].status?.conditions?.find((c) => c.type === 'PodScheduled')).toMatchObject({
      status: 'False',
      reason: 'Unschedulable',
      message: '0/2 nodes are available: 2 Insufficient cpu.',
    });
    expect(pending).toHaveLength(3);

    cluster.addInstance(c5a2xlarge('i-0c5a', { bootDelaySeconds: 20, readyDelaySeconds: 5 }));
    cluster.tick(at(21));
    expect(cluster.pendingPods()[0].status?.conditions?.find((c) => c.type === 'PodScheduled')?.message).toBe(
      '0/3 nodes are available: 1 node(s) had untolerated taint {karpenter.sh/unregistered: }, 2 Insufficient cpu.',
    );
    // the NodePool's registration step removes the unregistered taint; here a patch stands in
    const core = kc.makeApiClient(CoreV1Api);
    const newNode = cluster.nodes().find((n) => n.metadata.labels?.['karpenter.sh/nodepool'] === 'default')!;
    await core.patchNode(
      { name: newNode.metadata.name, body: [{ op: 'remove', path: '/spec/taints/0' }] },
      setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
    );
    cluster.tick(at(26));
    expect(running()).toHaveLength(5);
    expect(cluster.pods({ nodeName: newNode.metadata.name })).toHaveLength(3);

    const dep = (await kc.makeApiClient(AppsV1Api).readNamespacedDeployment({ name: 'inflate', namespace: 'default' })).status;
    expect(dep).toMatchObject({ replicas: 5, readyReplicas: 5, availableReplicas: 5 });

    // scale to 0 through the scale subresource: pods terminate gracefully, then go
    await kc
      .makeApiClient(AppsV1Api)
      .patchNamespacedDeploymentScale(
        { name: 'inflate', namespace: 'default', body: { spec: { replicas: 0 } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
    cluster.tick(at(27));
    expect(cluster.pods()).toHaveLength(0);
  });

  it('honours nodeSelector, tolerations and required node affinity', () => {
    cluster.addInstance(managedNode(1, { taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }] }));
    cluster.addInstance(managedNode(2));
    const d = deployment('picky', 1, { cpu: '100m' });
    d.spec.template.spec.nodeSelector = { 'topology.kubernetes.io/zone': 'ap-northeast-2c' }; // node 1 only
    cluster.apply([d]);
    cluster.tick(at(1));
    expect(cluster.pendingPods()[0].status?.conditions?.[0].message).toBe(
      "0/2 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 1 node(s) had untolerated taint {dedicated: gpu}.",
    );
    d.spec.template.spec.tolerations = [{ key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' }];
    d.spec.template.spec.affinity = {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [{ matchExpressions: [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['m5.large'] }] }],
        },
      },
    };
    cluster.apply([d]);
    cluster.tick(at(2));
    const pods = cluster.pods().filter((p) => !p.metadata.deletionTimestamp);
    expect(pods).toHaveLength(1);
    expect(pods[0].spec.nodeName).toBe(cluster.instances()[0].nodeName);
  });

  it('spreads over hostnames with a DoNotSchedule topology spread constraint', () => {
    cluster.addInstance(c5a2xlarge('i-1', { startupTaints: [] }));
    cluster.addInstance(c5a2xlarge('i-2', { startupTaints: [] }));
    const d = deployment('spread', 4, { cpu: '100m' });
    d.spec.template.spec.topologySpreadConstraints = [
      { maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { app: 'spread' } } },
    ];
    cluster.apply([d]);
    cluster.tick(at(1));
    const perNode = cluster.instances().map((i) => cluster.pods({ nodeName: i.nodeName }).length);
    expect(perNode).toEqual([2, 2]);
  });

  it('runs one DaemonSet pod per matching node, bound directly', () => {
    cluster.addInstance(managedNode(1));
    cluster.addInstance(c5a2xlarge('i-ds'));
    cluster.apply(`
apiVersion: apps/v1
kind: DaemonSet
metadata: { name: aws-node, namespace: kube-system }
spec:
  selector: { matchLabels: { k8s-app: aws-node } }
  template:
    metadata: { labels: { k8s-app: aws-node } }
    spec:
      tolerations: [{ operator: Exists }]
      containers: [{ name: cni, image: cni, resources: { requests: { cpu: 25m } } }]
`);
    cluster.tick(at(1));
    const ds = cluster.pods({ namespace: 'kube-system' });
    expect(ds.map((p) => p.spec.nodeName).sort()).toEqual(
      cluster
        .instances()
        .map((i) => i.nodeName)
        .sort(),
    );
    expect(ds.every((p) => p.status?.phase === 'Running' || p.spec.nodeName)).toBe(true);
  });
});

describe('client-node against the server', () => {
  it('lists pods by field and label selectors and patches nodes (merge, strategic, json)', async () => {
    const { nodeName } = cluster.addInstance(managedNode(1));
    cluster.addInstance(managedNode(2));
    cluster.apply([deployment('a', 2, { cpu: '100m' }), deployment('b', 1, { cpu: '100m' })]);
    cluster.tick(at(1));
    const core = kc.makeApiClient(CoreV1Api);
    const onNode = await core.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${nodeName}` });
    expect(onNode.items.every((p) => p.spec?.nodeName === nodeName)).toBe(true);
    expect((await core.listNamespacedPod({ namespace: 'default', labelSelector: 'app=a' })).items).toHaveLength(2);
    expect((await core.listNamespacedPod({ namespace: 'default', labelSelector: 'app in (a,b),app!=b' })).items).toHaveLength(2);
    expect((await core.listPodForAllNamespaces({ fieldSelector: 'status.phase=Running' })).items).toHaveLength(3);

    await core.patchNode(
      {
        name: nodeName,
        body: { spec: { unschedulable: true, taints: [{ key: 'karpenter.sh/disrupted', effect: 'NoSchedule' }] }, metadata: { labels: { x: 'y' } } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    let n = await core.readNode({ name: nodeName });
    expect(n.spec?.unschedulable).toBe(true);
    expect(n.spec?.taints).toEqual([{ key: 'karpenter.sh/disrupted', effect: 'NoSchedule' }]);
    expect(n.metadata?.labels?.x).toBe('y');

    await core.patchNode(
      { name: nodeName, body: { metadata: { labels: { x: null } }, spec: { unschedulable: false } } },
      setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
    );
    n = await core.readNode({ name: nodeName });
    expect(n.metadata?.labels?.x).toBeUndefined();
    expect(n.spec?.unschedulable).toBe(false);

    // default content type of client-node's patch is json-patch
    await core.patchNode({ name: nodeName, body: [{ op: 'add', path: '/metadata/annotations/nodefleet.io~1note', value: 'hi' }] });
    expect((await core.readNode({ name: nodeName })).metadata?.annotations?.['nodefleet.io/note']).toBe('hi');

    const err = await core.readNode({ name: 'nope' }).catch((e: ApiException<string>) => e);
    expect(err).toBeInstanceOf(ApiException);
    expect((err as ApiException<string>).code).toBe(404);
    expect(JSON.parse((err as ApiException<string>).body)).toMatchObject({ kind: 'Status', reason: 'NotFound', message: 'nodes "nope" not found', code: 404 });
  });

  it('creates and deletes pods; grace periods; a hanging preStop lasts until the grace period ends (the kubelet kills it), a force delete ends it at once', async () => {
    const { nodeName } = cluster.addInstance(managedNode(1));
    cluster.tick(at(1));
    const core = kc.makeApiClient(CoreV1Api);
    const pod = (name: string, annotations: Record<string, string>) => ({
      metadata: { name, annotations },
      spec: { nodeName, terminationGracePeriodSeconds: 60, containers: [{ name: 'c', image: 'pause' }] },
    });
    await core.createNamespacedPod({ namespace: 'default', body: pod('slow', { [AnnotationSimulateTerminationSeconds]: '20' }) });
    await core.createNamespacedPod({ namespace: 'default', body: pod('stuck', { [AnnotationSimulateStuckPreStop]: 'true' }) });
    const dup = await core.createNamespacedPod({ namespace: 'default', body: pod('slow', {}) }).catch((e: ApiException<string>) => e);
    expect((dup as ApiException<string>).code).toBe(409);
    cluster.tick(at(2));

    const deleted = await core.deleteNamespacedPod({ name: 'slow', namespace: 'default' });
    expect(deleted.metadata?.deletionTimestamp?.toISOString()).toBe('2026-03-02T10:01:02.000Z'); // now + 60 s grace
    await core.deleteNamespacedPod({ name: 'stuck', namespace: 'default' });
    cluster.tick(at(21));
    expect(cluster.pods().map((p) => p.metadata.name)).toEqual(['slow', 'stuck']);
    cluster.tick(at(22));
    expect(cluster.pods().map((p) => p.metadata.name)).toEqual(['stuck']);
    cluster.tick(at(61));
    expect(cluster.pods().map((p) => p.metadata.name)).toEqual(['stuck']);
    cluster.tick(at(62)); // deleted at 2 s with 60 s of grace
    expect(cluster.pods()).toHaveLength(0);
    await core.createNamespacedPod({ namespace: 'default', body: pod('stuck-2', { [AnnotationSimulateStuckPreStop]: 'true' }) });
    cluster.tick(at(63));
    await core.deleteNamespacedPod({ name: 'stuck-2', namespace: 'default', gracePeriodSeconds: 0 });
    expect(cluster.pods()).toHaveLength(0);
  });

  it('evicts through policy/v1 and answers 429 with the fixture body when a PDB forbids it', async () => {
    cluster.addInstance(managedNode(1)); // room for exactly three 600m pods
    cluster.apply([deployment('web', 3, { cpu: '600m', annotations: { [AnnotationSimulateTerminationSeconds]: '30' } })]);
    cluster.apply(`
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: { name: web-pdb, namespace: default }
spec:
  maxUnavailable: 1
  selector: { matchLabels: { app: web } }
`);
    cluster.tick(at(1));
    expect(running()).toHaveLength(3);
    const core = kc.makeApiClient(CoreV1Api);
    const [first, second] = running();
    await core.createNamespacedPodEviction({ name: first, namespace: 'default', body: { metadata: { name: first, namespace: 'default' } } });
    cluster.tick(at(2));
    expect(cluster.pods().find((p) => p.metadata.name === first)?.metadata.deletionTimestamp).toBeDefined();

    const blocked = await core
      .createNamespacedPodEviction({ name: second, namespace: 'default', body: { metadata: { name: second, namespace: 'default' } } })
      .catch((e: ApiException<string>) => e);
    expect((blocked as ApiException<string>).code).toBe(429);
    const body = JSON.parse((blocked as ApiException<string>).body);
    const fixture = JSON.parse(readFileSync(new URL('../../fixtures/events/eviction-429.json', import.meta.url), 'utf8'));
    expect(EVICTION_BLOCKED).toEqual({ reason: fixture.reason, message: fixture.message });
    expect(body).toEqual({
      ...fixture,
      details: { causes: [{ reason: 'DisruptionBudget', message: 'The disruption budget web-pdb needs 2 healthy pods and has 2 currently' }] },
    });

    const pdb = await kc.makeApiClient(PolicyV1Api).readNamespacedPodDisruptionBudget({ name: 'web-pdb', namespace: 'default' });
    expect(pdb.status).toMatchObject({ expectedPods: 3, currentHealthy: 2, desiredHealthy: 2, disruptionsAllowed: 0 });

    // the evicted pod finishes terminating, the replacement starts, evictions are allowed again
    cluster.tick(at(40));
    expect(running()).toHaveLength(3);
    await core.createNamespacedPodEviction({ name: second, namespace: 'default', body: { metadata: { name: second, namespace: 'default' } } });
    const gone = await core.createNamespacedPodEviction({ name: 'nope', namespace: 'default', body: {} }).catch((e: ApiException<string>) => e);
    expect((gone as ApiException<string>).code).toBe(404);
  });

  it('blocks every eviction under minAvailable 100% and allows them under a percentage that leaves room', async () => {
    cluster.addInstance(c5a2xlarge('i-pdb', { startupTaints: [] }));
    cluster.apply([deployment('db', 4, { cpu: '100m' })]);
    cluster.apply([
      {
        apiVersion: 'policy/v1',
        kind: 'PodDisruptionBudget',
        metadata: { name: 'db', namespace: 'default' },
        spec: { minAvailable: '100%', selector: { matchLabels: { app: 'db' } } },
      },
    ]);
    cluster.tick(at(1));
    const core = kc.makeApiClient(CoreV1Api);
    const name = running()[0];
    const r = await core.createNamespacedPodEviction({ name, namespace: 'default', body: {} }).catch((e: ApiException<string>) => e);
    expect((r as ApiException<string>).code).toBe(429);
    cluster.apply([
      {
        apiVersion: 'policy/v1',
        kind: 'PodDisruptionBudget',
        metadata: { name: 'db', namespace: 'default' },
        spec: { minAvailable: '75%', selector: { matchLabels: { app: 'db' } } },
      },
    ]);
    await core.createNamespacedPodEviction({ name, namespace: 'default', body: {} });
  });

  it('streams watch events from a resourceVersion and answers 410 Expired for one too old', async () => {
    cluster.addInstance(managedNode(1));
    cluster.tick(at(1));
    const core = kc.makeApiClient(CoreV1Api);
    const list = await core.listNamespacedPod({ namespace: 'default' });
    const events: string[] = [];
    const watch = new Watch(kc);
    const req = await watch.watch(
      '/api/v1/namespaces/default/pods',
      { resourceVersion: list.metadata?.resourceVersion },
      (type, obj) => events.push(`${type} ${obj.metadata.name} ${obj.spec.nodeName ?? '-'}`),
      () => {},
    );
    cluster.apply([deployment('w', 1, { cpu: '100m' })]);
    cluster.tick(at(2));
    cluster.scale('default', 'w', 0);
    cluster.tick(at(3));
    await new Promise((r) => setTimeout(r, 100));
    req.abort();
    expect(events[0]).toMatch(/^ADDED w-\w+-\w+ -$/);
    expect(events.some((e) => /^MODIFIED w-.* ip-10-0-/.test(e))).toBe(true);
    expect(events.at(-1)).toMatch(/^DELETED w-/);

    const expired = await fetch(`${url}/api/v1/pods?watch=true&resourceVersion=5`);
    expect(expired.status).toBe(200);
    const line = JSON.parse((await expired.text()).trim());
    expect(line).toMatchObject({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired' } });
  });

  it('serves NodePools and EC2NodeClasses as cluster-scoped custom objects', async () => {
    const custom = kc.makeApiClient(CustomObjectsApi);
    await custom.createClusterCustomObject({
      group: 'karpenter.sh',
      version: 'v1',
      plural: 'nodepools',
      body: {
        apiVersion: 'karpenter.sh/v1',
        kind: 'NodePool',
        metadata: { name: 'default' },
        spec: {
          template: { spec: { nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' }, requirements: [] } },
          limits: { cpu: '1000' },
        },
      },
    });
    cluster.apply([
      {
        apiVersion: 'karpenter.k8s.aws/v1',
        kind: 'EC2NodeClass',
        metadata: { name: 'default' },
        spec: { role: 'KarpenterNodeRole', amiSelectorTerms: [{ alias: 'al2023@latest' }] },
      },
    ]);
    const pools = (await custom.listClusterCustomObject({ group: 'karpenter.sh', version: 'v1', plural: 'nodepools' })) as {
      items: { metadata: { name: string; generation: number } }[];
    };
    expect(pools.items.map((p) => p.metadata.name)).toEqual(['default']);
    await custom.patchClusterCustomObject(
      { group: 'karpenter.sh', version: 'v1', plural: 'nodepools', name: 'default', body: { spec: { limits: { cpu: '2000' } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    const pool = (await custom.getClusterCustomObject({ group: 'karpenter.sh', version: 'v1', plural: 'nodepools', name: 'default' })) as {
      spec: { limits: { cpu: string } };
      metadata: { generation: number };
    };
    expect(pool.spec.limits.cpu).toBe('2000');
    expect(pool.metadata.generation).toBe(2);
    const classes = (await custom.listClusterCustomObject({ group: 'karpenter.k8s.aws', version: 'v1', plural: 'ec2nodeclasses' })) as { items: unknown[] };
    expect(classes.items).toHaveLength(1);
    const events = kc.makeApiClient(CoreV1Api);
    await events.createNamespacedEvent({
      namespace: 'default',
      body: { metadata: { generateName: 'default.' }, involvedObject: { kind: 'NodePool', name: 'default' }, reason: 'Launched', message: 'x', type: 'Normal' },
    });
    expect((await events.listNamespacedEvent({ namespace: 'default' })).items.map((e) => e.reason)).toEqual(['Launched']);
  });

  it('writes a kubeconfig client-node loads from a file', async () => {
    const { mkdtempSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const path = cluster.writeKubeconfig(join(mkdtempSync(join(tmpdir(), 'nf-kube-')), 'kubeconfig'));
    const { KubeConfig } = await import('@kubernetes/client-node');
    const k = new KubeConfig();
    k.loadFromFile(path);
    expect(k.getCurrentCluster()?.server).toBe(url);
    expect((await k.makeApiClient(CoreV1Api).listNamespace()).items.map((n) => n.metadata?.name)).toEqual([
      'default',
      'kube-node-lease',
      'kube-public',
      'kube-system',
    ]);
  });
});

describe('watch details', () => {
  it('turns selector transitions into ADDED/DELETED and streams initial events with an end bookmark', async () => {
    cluster.addInstance(managedNode(1));
    cluster.tick(at(1));
    const { nodeName } = cluster.instances()[0];
    const ac = new AbortController();
    const r = await fetch(`${url}/api/v1/nodes?watch=true&labelSelector=pool%3Dblue&resourceVersion=${cluster.store.resourceVersion}`, { signal: ac.signal });
    const core = kc.makeApiClient(CoreV1Api);
    const label = (v: string | null) =>
      core.patchNode({ name: nodeName, body: { metadata: { labels: { pool: v } } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
    await label('blue');
    await label('green');
    const reader = r.body!.getReader();
    let text = '';
    while (text.split('\n').filter(Boolean).length < 2) text += new TextDecoder().decode((await reader.read()).value);
    ac.abort();
    expect(
      text
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l).type),
    ).toEqual(['ADDED', 'DELETED']);

    const init = await fetch(
      `${url}/api/v1/namespaces?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=1`,
    );
    const lines = (await init.text())
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => l.type)).toEqual(['ADDED', 'ADDED', 'ADDED', 'ADDED', 'BOOKMARK']);
    expect(lines[4].object.metadata.annotations).toEqual({ 'k8s.io/initial-events-end': 'true' });
  });
});

describe('paging', () => {
  it('serves limit/continue pages that add up to the whole list', async () => {
    cluster.addInstance(c5a2xlarge('i-page', { startupTaints: [] }));
    cluster.apply([deployment('many', 7, { cpu: '10m' })]);
    cluster.tick(at(1));
    const core = kc.makeApiClient(CoreV1Api);
    const names: string[] = [];
    let cont: string | undefined;
    let pages = 0;
    do {
      const page = await core.listPodForAllNamespaces({ limit: 3, _continue: cont });
      names.push(...page.items.map((p) => p.metadata!.name!));
      cont = page.metadata?._continue;
      pages++;
    } while (cont);
    expect(pages).toBe(3);
    expect(names.sort()).toEqual(
      cluster
        .pods()
        .map((p) => p.metadata.name)
        .sort(),
    );
  });
});
