import { describe, expect, it } from 'vitest';
import { readWorkloads } from '../../../shared/api/workloads.ts';

const template = { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', resources: { requests: { cpu: '1' } } }] } };

describe('readWorkloads', () => {
  it('expands controllers without listed pods into <name>-i pending pods', () => {
    const w = readWorkloads([
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'web', namespace: 'shop' },
        spec: { replicas: 3, selector: { matchLabels: { app: 'web' } }, template },
      },
      { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'db' }, spec: { replicas: 2, template } },
      { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'once' }, spec: { template } },
    ]);
    expect(w.pendingPods.map((p) => `${p.metadata.namespace}/${p.metadata.name}`)).toEqual([
      'shop/web-0',
      'shop/web-1',
      'shop/web-2',
      'default/db-0',
      'default/db-1',
      'default/once-0',
    ]);
    expect(w.pendingPods[0].metadata.labels).toEqual({ app: 'web' });
  });

  it('does not expand a Deployment whose own pods are listed, but does when a pod only shares its labels', () => {
    const own = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web-abc', labels: { app: 'web' }, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-5d8c' }] },
      spec: { nodeName: 'n1', containers: [] },
    };
    const stranger = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'seed', labels: { app: 'web' } }, spec: { nodeName: 'n1', containers: [] } };
    const deploy = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web' },
      spec: { replicas: 2, selector: { matchLabels: { app: 'web' } }, template },
    };
    expect(readWorkloads([own, deploy]).pendingPods).toHaveLength(0);
    expect(readWorkloads([stranger, deploy]).pendingPods).toHaveLength(2);
  });

  it('gives an expanded StatefulSet pod its volumeClaimTemplates claims, and plans the claims the input lacks only when it holds storage objects', () => {
    const sts = {
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { name: 'pg', namespace: 'db' },
      spec: {
        replicas: 2,
        template: {
          ...template,
          spec: {
            ...template.spec,
            volumes: [
              { name: 'data', emptyDir: {} },
              { name: 'cfg', configMap: { name: 'c' } },
            ],
          },
        },
        volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { storageClassName: 'gp3', accessModes: ['ReadWriteOnce'] } }],
      },
    };
    const existing = { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'data-pg-0', namespace: 'db' }, spec: { volumeName: 'pv-0' } };
    const w = readWorkloads([sts, existing]);
    expect(w.pendingPods.map((p) => p.spec.volumes)).toEqual([
      [
        { name: 'cfg', configMap: { name: 'c' } },
        { name: 'data', persistentVolumeClaim: { claimName: 'data-pg-0' } },
      ],
      [
        { name: 'cfg', configMap: { name: 'c' } },
        { name: 'data', persistentVolumeClaim: { claimName: 'data-pg-1' } },
      ],
    ]);
    expect(w.storage.claims.map((c) => [c.metadata.name, c.metadata.annotations?.['nodefleet.io/planned-claim'], c.spec])).toEqual([
      ['data-pg-0', undefined, { volumeName: 'pv-0' }],
      ['data-pg-1', 'StatefulSet db/pg volumeClaimTemplates data', { storageClassName: 'gp3', accessModes: ['ReadWriteOnce'] }],
    ]);
    expect(readWorkloads([sts]).storage.claims).toEqual([]);
  });

  it('sorts pods, daemonset templates, nodes and PDBs; skips finished pods', () => {
    const w = readWorkloads([
      { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'done' }, spec: { containers: [] }, status: { phase: 'Succeeded' } },
      { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'run' }, spec: { nodeName: 'n1', containers: [] } },
      { apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: { name: 'agent', namespace: 'kube-system' }, spec: { template } },
      { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' } },
      { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'pdb' }, spec: {} },
    ]);
    expect(w.pendingPods).toHaveLength(0);
    expect(w.boundPods.map((p) => p.metadata.name)).toEqual(['run']);
    expect(w.daemonSets.map((d) => d.metadata.name)).toEqual(['agent']);
    expect(w.nodes).toHaveLength(1);
    expect(w.pdbs).toHaveLength(1);
  });

  it('collects the claims, volumes and storage classes pods may use', () => {
    const w = readWorkloads([
      { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'a', namespace: 'ns' }, spec: { volumeName: 'pv-a' } },
      {
        apiVersion: 'v1',
        kind: 'PersistentVolume',
        metadata: { name: 'pv-a' },
        spec: {
          nodeAffinity: {
            required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'topology.ebs.csi.aws.com/zone', operator: 'In', values: ['us-east-1b'] }] }] },
          },
        },
      },
      { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'b', namespace: 'ns' }, spec: { storageClassName: 'zonal' } },
      {
        apiVersion: 'storage.k8s.io/v1',
        kind: 'StorageClass',
        metadata: { name: 'zonal' },
        allowedTopologies: [{ matchLabelExpressions: [{ key: 'topology.kubernetes.io/zone', values: ['us-east-1c'] }] }],
      },
    ]);
    expect(w.storage.claims.map((c) => c.metadata.name)).toEqual(['a', 'b']);
    expect(w.storage.volumes.map((v) => v.metadata.name)).toEqual(['pv-a']);
    expect(w.storage.classes.map((c) => c.metadata.name)).toEqual(['zonal']);
  });

  describe('DaemonSets known only from their pods (plain kubectl get pods -A)', () => {
    const dsPod = (name: string, node: string, created: string, cpu: string) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name,
        namespace: 'kube-system',
        creationTimestamp: created,
        labels: { 'k8s-app': 'aws-node' },
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'aws-node', controller: true }],
      },
      spec: {
        nodeName: node,
        tolerations: [{ operator: 'Exists' }],
        // As the DaemonSet controller writes it: the template's term, pinned to the pod's node.
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [
                {
                  matchExpressions: [{ key: 'kubernetes.io/os', operator: 'In', values: ['linux'] }],
                  matchFields: [{ key: 'metadata.name', operator: 'In', values: [node] }],
                },
              ],
            },
          },
        },
        containers: [{ name: 'c', resources: { requests: { cpu } } }],
      },
      status: { phase: 'Running' },
    });
    const pods = [dsPod('aws-node-old', 'n1', '2026-01-01T00:00:00Z', '25m'), dsPod('aws-node-new', 'n2', '2026-01-02T00:00:00Z', '50m')];

    it("counts each once, its newest pod standing for the template, unpinned from that pod's node", () => {
      const w = readWorkloads(pods, { daemonSetsFromPods: true });
      expect(w.daemonSetsFromPods).toEqual(['kube-system/aws-node']);
      expect(w.daemonSets).toHaveLength(1);
      const d = w.daemonSets[0];
      expect(d.metadata).toEqual({ name: 'aws-node', namespace: 'kube-system', labels: { 'k8s-app': 'aws-node' } });
      expect(d.spec.containers[0].resources?.requests).toEqual({ cpu: '50m' });
      expect(d.spec.nodeName).toBeUndefined();
      expect(d.spec.tolerations).toEqual([{ operator: 'Exists' }]);
      expect(d.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms).toEqual([
        { matchExpressions: [{ key: 'kubernetes.io/os', operator: 'In', values: ['linux'] }] },
      ]);
    });

    it('only when asked (a cluster or case holds its DaemonSets); a listed DaemonSet is not counted twice', () => {
      expect(readWorkloads(pods).daemonSets).toEqual([]);
      const ds = { apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: { name: 'aws-node', namespace: 'kube-system' }, spec: { template } };
      const w = readWorkloads([...pods, ds], { daemonSetsFromPods: true });
      expect(w.daemonSetsFromPods).toEqual([]);
      expect(w.daemonSets.map((d) => d.spec.containers[0].resources?.requests)).toEqual([{ cpu: '50m' }]);
    });
  });
});
