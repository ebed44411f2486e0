/**
 * The real tier end to end: etcd, kube-apiserver, kube-scheduler, kube-controller-manager and kwok
 * started by the starter, infra/k8s applied as it ships; the controller-manager makes the
 * namespace's default ServiceAccount and runs the agent's Deployment into a ReplicaSet, kwok keeps
 * a fake Node ready, kube-scheduler binds a pod to it and kwok runs it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startControlPlane, type ControlPlane } from './control-plane/cluster.ts';
import { applyShipped } from './control-plane/manifests.ts';
import { until } from './control-plane/until.ts';

let cp: ControlPlane;

describe('real control plane', () => {
  beforeAll(async () => {
    cp = await startControlPlane({ controllers: true, kwok: true, log: (l) => console.log(l) });
    await applyShipped(cp);
  });
  afterAll(async () => {
    await cp?.stop();
  });

  it('runs the shipped agent Deployment into a ReplicaSet (controller-manager) with its ServiceAccount', async () => {
    const rs = await until('the agent ReplicaSet', async () => {
      const r = await cp.request('GET', '/apis/apps/v1/namespaces/nodefleet/replicasets');
      return r.body.items?.find((x: any) => x.metadata.ownerReferences?.[0]?.name === 'nodefleet-agent');
    });
    expect(rs.spec.template.spec.serviceAccountName).toBe('nodefleet-agent');
  });

  it('binds a pod to a kwok Node and runs it', async () => {
    const sa = await until('the default ServiceAccount', async () => {
      const r = await cp.request('GET', '/api/v1/namespaces/default/serviceaccounts/default');
      return r.status === 200 ? r.body : undefined;
    });
    expect(sa.metadata.name).toBe('default');
    const created = await cp.request('POST', '/api/v1/nodes', {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'kwok-node-a', annotations: { 'kwok.x-k8s.io/node': 'fake' }, labels: { 'kubernetes.io/hostname': 'kwok-node-a', type: 'kwok' } },
      spec: {},
      status: { allocatable: { cpu: '4', memory: '16Gi', pods: '110' }, capacity: { cpu: '4', memory: '16Gi', pods: '110' } },
    });
    expect(created.status).toBe(201);
    await until('the kwok Node to be Ready', async () => {
      const r = await cp.request('GET', '/api/v1/nodes/kwok-node-a');
      return r.body.status?.conditions?.some((c: any) => c.type === 'Ready' && c.status === 'True') ? true : undefined;
    });
    const pod = await cp.request('POST', '/api/v1/namespaces/default/pods', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web' },
      spec: { containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10', resources: { requests: { cpu: '1' } } }] },
    });
    expect(pod.status).toBe(201);
    const running = await until('the pod to run', async () => {
      const r = await cp.request('GET', '/api/v1/namespaces/default/pods/web');
      return r.body.status?.phase === 'Running' ? r.body : undefined;
    });
    expect(running.spec.nodeName).toBe('kwok-node-a');
  });
});
