/**
 * The project's KubeApi adapter (shared/kube, over client-node) and client-node informers
 * against the local API server: every call the functions and the agent make is served.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CoreV1Api, makeInformer, type KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { ClientNodeKubeApi } from '../../../shared/kube/kube-api.ts';
import { LocalCluster } from '../../../infra/local/kube/index.ts';
import { at, c5a2xlarge, deployment, managedNode, startCluster } from './builders.ts';

let cluster: LocalCluster;
let kc: KubeConfig;
let kube: ClientNodeKubeApi;

beforeEach(async () => {
  ({ cluster, kc } = await startCluster());
  const yaml = cluster.kubeconfig();
  kube = new ClientNodeKubeApi(async () => ({ kind: 'kubeconfig-string', yaml }));
});
afterEach(async () => {
  await cluster.stop();
});

const NODEPOOL = `
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: { name: default }
spec:
  template:
    spec:
      nodeClassRef: { group: karpenter.k8s.aws, kind: EC2NodeClass, name: default }
      requirements:
        - { key: kubernetes.io/arch, operator: In, values: [amd64] }
        - { key: karpenter.sh/capacity-type, operator: In, values: [on-demand] }
        - { key: karpenter.k8s.aws/instance-category, operator: In, values: [c, m, r] }
        - { key: karpenter.k8s.aws/instance-generation, operator: Gt, values: ["2"] }
  disruption: { consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: 1m }
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: { name: default }
spec:
  role: KarpenterNodeRole-demo
  amiSelectorTerms: [{ alias: al2023@latest }]
  subnetSelectorTerms: [{ tags: { karpenter.sh/discovery: demo } }]
  securityGroupSelectorTerms: [{ tags: { karpenter.sh/discovery: demo } }]
`;

describe('ClientNodeKubeApi on the local cluster', () => {
  it('reads NodePools, EC2NodeClasses, nodes, pods, PDBs and DaemonSets', async () => {
    cluster.apply(NODEPOOL);
    const { nodeName } = cluster.addInstance(managedNode(1));
    cluster.addInstance(managedNode(2));
    cluster.apply([deployment('inflate', 2, { cpu: '500m' })]);
    cluster.apply([
      {
        apiVersion: 'policy/v1',
        kind: 'PodDisruptionBudget',
        metadata: { name: 'inflate', namespace: 'default' },
        spec: { minAvailable: 2, selector: { matchLabels: { app: 'inflate' } } },
      },
    ]);
    cluster.apply([
      {
        apiVersion: 'apps/v1',
        kind: 'DaemonSet',
        metadata: { name: 'kube-proxy', namespace: 'kube-system' },
        spec: {
          selector: { matchLabels: { k: 'p' } },
          template: { metadata: { labels: { k: 'p' } }, spec: { containers: [{ name: 'p', resources: { requests: { cpu: '100m' } } }] } },
        },
      },
    ]);
    cluster.tick(at(1));

    expect((await kube.listNodePools()).map((p) => p.metadata.name)).toEqual(['default']);
    expect((await kube.listNodeClasses()).map((c) => c.metadata.name)).toEqual(['default']);
    expect((await kube.listNodes()).map((n) => n.metadata.name).sort()).toEqual(
      cluster
        .nodes()
        .map((n) => n.metadata.name)
        .sort(),
    );
    expect(await kube.getNode('nope')).toBeUndefined();
    expect((await kube.getNode(nodeName))?.spec?.providerID).toBe('aws:///ap-northeast-2c/i-0managed000000001');
    expect(await kube.listPods()).toHaveLength(4); // 2 inflate + 2 kube-proxy
    expect((await kube.listPods({ nodeName })).every((p) => p.spec.nodeName === nodeName)).toBe(true);
    expect((await kube.listPodDisruptionBudgets())[0].status).toMatchObject({ currentHealthy: 2, desiredHealthy: 2, disruptionsAllowed: 0 });
    const ds = await kube.listObjects('apps/v1', 'DaemonSet');
    expect(ds.map((d) => `${d.metadata.namespace}/${d.metadata.name}`)).toEqual(['kube-system/kube-proxy']);
    expect((await kube.listObjects('apps/v1', 'ReplicaSet'))[0].metadata.name).toMatch(/^inflate-/);
  });

  it("listNodePoolNames: every NodePool, the ones listNodePools skips (invalid, another controller's) too, and which are being deleted", async () => {
    cluster.apply(NODEPOOL);
    const [pool] = cluster.apply(NODEPOOL.split('---')[0]);
    const named = (name: string, spec: unknown, finalizers?: string[]) => ({ ...pool, metadata: { name, ...(finalizers ? { finalizers } : {}) }, spec });
    cluster.apply([
      named('invalid', { ...(pool as { spec: object }).spec, notAField: true }),
      named('theirs', {
        ...(pool as { spec: { template: { spec: object } } }).spec,
        template: {
          spec: {
            ...(pool as { spec: { template: { spec: object } } }).spec.template.spec,
            nodeClassRef: { group: 'example.com', kind: 'OtherClass', name: 'x' },
          },
        },
      }),
      named('held', (pool as { spec: object }).spec, ['example.com/hold']),
    ]);
    cluster.delete('karpenter.sh/v1', 'NodePool', 'held');
    expect((await kube.listNodePools()).map((p) => p.metadata.name).sort()).toEqual(['default', 'held']);
    expect((await kube.listNodePoolNames())?.sort((a, b) => a.name.localeCompare(b.name))).toEqual([
      { name: 'default', deleting: false },
      { name: 'held', deleting: true },
      { name: 'invalid', deleting: false },
      { name: 'theirs', deleting: false },
    ]);
  });

  it('lists the storage objects the provisioner reads for pods with claims (shared/runtime/cluster-picture.ts readStorage)', async () => {
    cluster.apply([
      {
        apiVersion: 'storage.k8s.io/v1',
        kind: 'StorageClass',
        metadata: { name: 'gp3' },
        provisioner: 'ebs.csi.aws.com',
        volumeBindingMode: 'WaitForFirstConsumer',
      },
      {
        apiVersion: 'v1',
        kind: 'PersistentVolume',
        metadata: { name: 'pv-1' },
        spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], csi: { driver: 'ebs.csi.aws.com', volumeHandle: 'vol-1' } },
      },
      {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: { name: 'data', namespace: 'default' },
        spec: { storageClassName: 'gp3', accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
      },
    ]);
    expect((await kube.listObjects('storage.k8s.io/v1', 'StorageClass')).map((o) => [o.kind, o.metadata.name, o.volumeBindingMode])).toEqual([
      ['StorageClass', 'gp3', 'WaitForFirstConsumer'],
    ]);
    expect((await kube.listObjects('v1', 'PersistentVolume')).map((o) => [o.kind, o.metadata.name])).toEqual([['PersistentVolume', 'pv-1']]);
    expect(
      (await kube.listObjects('v1', 'PersistentVolumeClaim')).map((o) => [o.kind, `${o.metadata.namespace}/${o.metadata.name}`, o.spec.storageClassName]),
    ).toEqual([['PersistentVolumeClaim', 'default/data', 'gp3']]);
  });

  it('cordons, taints, evicts (blocked by a PDB, then allowed), deletes pods and nodes', async () => {
    const { nodeName } = cluster.addInstance(c5a2xlarge('i-0drain', { startupTaints: [] }));
    cluster.apply([deployment('web', 2, { cpu: '1' })]);
    cluster.apply([
      {
        apiVersion: 'policy/v1',
        kind: 'PodDisruptionBudget',
        metadata: { name: 'web', namespace: 'default' },
        spec: { maxUnavailable: 0, selector: { matchLabels: { app: 'web' } } },
      },
    ]);
    cluster.tick(at(1));

    const node = await kube.patchNode(nodeName, {
      unschedulable: true,
      taints: [{ key: 'karpenter.sh/disrupted', effect: 'NoSchedule' }],
      labels: { 'nodefleet.io/draining': 'true' },
    });
    expect(node.spec?.unschedulable).toBe(true);
    expect(node.spec?.taints).toEqual([{ key: 'karpenter.sh/disrupted', effect: 'NoSchedule' }]);
    await expect(kube.patchNode('nope', { unschedulable: true })).rejects.toMatchObject({ name: 'NotFoundError' });

    const [a, b] = cluster.pods().map((p) => p.metadata.name);
    expect(await kube.evictPod('default', a)).toBe('blocked');
    expect(await kube.evictPod('default', 'nope')).toBe('gone');
    cluster.delete('policy/v1', 'PodDisruptionBudget', 'web', 'default');
    expect(await kube.evictPod('default', a)).toBe('evicted');
    await kube.deletePod('default', b, 0);
    await kube.deletePod('default', 'nope');
    expect(cluster.pods().find((p) => p.metadata.name === b)).toBeUndefined();
    // replacements cannot land on the cordoned node
    cluster.tick(at(2));
    expect(cluster.pods().filter((p) => !p.metadata.deletionTimestamp && p.spec.nodeName === nodeName)).toHaveLength(0);

    await kube.deleteNode(nodeName);
    await kube.deleteNode(nodeName);
    cluster.tick(at(3));
    expect(cluster.nodes()).toHaveLength(0);
    expect(cluster.pods().every((p) => !p.spec.nodeName)).toBe(true); // pod GC removed what was bound there
  });
});

describe('client-node informers', () => {
  it('list-watch pods: add, update and delete callbacks fire', async () => {
    cluster.addInstance(managedNode(1));
    cluster.tick(at(1));
    const core = kc.makeApiClient(CoreV1Api);
    const informer = makeInformer<V1Pod>(kc, '/api/v1/pods', () => core.listPodForAllNamespaces());
    const seen: string[] = [];
    informer.on('add', (p) => seen.push(`add ${p.metadata?.name}`));
    informer.on('update', (p) => seen.push(`update ${p.metadata?.name} ${p.status?.phase}`));
    informer.on('delete', (p) => seen.push(`delete ${p.metadata?.name}`));
    await informer.start();
    cluster.apply([deployment('inf', 1, { cpu: '100m' })]);
    cluster.tick(at(2));
    await new Promise((r) => setTimeout(r, 150));
    const name = cluster.pods()[0].metadata.name;
    cluster.delete('v1', 'Pod', name, 'default', { gracePeriodSeconds: 0 });
    await new Promise((r) => setTimeout(r, 150));
    await informer.stop();
    expect(seen[0]).toBe(`add ${name}`);
    expect(seen).toContain(`update ${name} Running`);
    expect(seen).toContain(`delete ${name}`);
  });
});

describe('informers heal after a dropped watch', () => {
  it('re-lists after 410 Expired when the events it missed fell out of the log', async () => {
    await cluster.stop();
    cluster = new LocalCluster({ reconcileIntervalMs: 0, eventLogSize: 10 });
    cluster.tick(at(0));
    await cluster.start();
    kc.loadFromString(cluster.kubeconfig());
    cluster.addInstance(c5a2xlarge('i-heal', { startupTaints: [] }));
    cluster.apply([deployment('heal', 1, { cpu: '10m' })]);
    cluster.tick(at(1));
    const core = kc.makeApiClient(CoreV1Api);
    const informer = makeInformer<V1Pod>(kc, '/api/v1/pods', () => core.listPodForAllNamespaces());
    await informer.start();
    await new Promise((r) => setTimeout(r, 100));
    expect(informer.list()).toHaveLength(1);
    expect(cluster.dropWatches()).toBe(1);
    cluster.scale('default', 'heal', 20); // > 10 events while no watch is open
    for (let i = 0; i < 40 && informer.list().length !== 20; i++) await new Promise((r) => setTimeout(r, 100));
    await informer.stop();
    expect(informer.list()).toHaveLength(20);
  });
});
