/**
 * Builders for provisioner tests: the seed-inflate NodePool / EC2NodeClass (ap-northeast-2),
 * pending pods, agent events and deps over test/fakes.
 */
import { NodePoolSchema, EC2NodeClassSchema, type NodePool, type EC2NodeClass } from '../../../shared/api/nodepool.ts';
import type { Pod } from '../../../shared/api/kube.ts';
import { compactPod } from '../../../shared/api/agent-events.ts';
import { AgentSchemaVersion, AgentSource, DetailTypeUnschedulablePods } from '../../../shared/api/contract.ts';
import { RecordingLog, RecordingMetrics } from '../../../shared/runtime/observability.ts';
import type { RuntimeEnv } from '../../../shared/runtime/env.ts';
import { fakeWorld, pod, type FakeWorld, type FakeCloudProviderOptions } from '../../fakes/index.ts';

export const Region = 'ap-northeast-2';
export const Cluster = 'karpenter-demo';

export function nodePool(capacityTypes: string[] = ['on-demand'], name = 'default'): NodePool {
  return NodePoolSchema.parse({
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name },
    spec: {
      template: {
        spec: {
          requirements: [
            { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] },
            { key: 'kubernetes.io/os', operator: 'In', values: ['linux'] },
            { key: 'karpenter.sh/capacity-type', operator: 'In', values: capacityTypes },
            { key: 'karpenter.k8s.aws/instance-category', operator: 'In', values: ['c', 'm', 'r'] },
            { key: 'karpenter.k8s.aws/instance-generation', operator: 'Gt', values: ['2'] },
          ],
          nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
          expireAfter: '720h',
        },
      },
      limits: { cpu: 1000 },
    },
  });
}

export function nodeClass(): EC2NodeClass {
  return EC2NodeClassSchema.parse({
    apiVersion: 'karpenter.k8s.aws/v1',
    kind: 'EC2NodeClass',
    metadata: { name: 'default' },
    spec: {
      role: 'KarpenterNodeRole-karpenter-demo',
      amiSelectorTerms: [{ alias: 'al2023@v20250228' }],
      subnetSelectorTerms: [{ tags: { 'karpenter.sh/discovery': Cluster } }],
      securityGroupSelectorTerms: [{ tags: { 'karpenter.sh/discovery': Cluster } }],
    },
  });
}

/** A pending pod kube-scheduler marked Unschedulable. */
export function pendingPod(name: string, cpu = '1'): Pod {
  const p = pod({ name, cpu, memory: '128Mi', phase: 'Pending' });
  p.status = { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }] };
  return p;
}

/** The agent's event for these pods. */
export function unschedulableEvent(pods: Pod[], id = 'evt-1') {
  return {
    version: '0',
    id,
    'detail-type': DetailTypeUnschedulablePods,
    source: AgentSource,
    account: '123456789012',
    time: '2026-01-01T00:00:00Z',
    region: Region,
    resources: [],
    detail: {
      schemaVersion: AgentSchemaVersion,
      cluster: Cluster,
      batchId: id,
      part: 0,
      parts: 1,
      observedAt: '2026-01-01T00:00:00Z',
      pods: pods.map(compactPod),
    },
  };
}

export const env: RuntimeEnv = { clusterName: Cluster, tableName: 'nodefleet', region: Region, logLevel: 'INFO' };

/** Fakes + recording log/metrics, with the NodePool/EC2NodeClass and pods seeded. */
export function provisionerWorld(opts: { capacityTypes?: string[]; pods?: Pod[]; cloud?: Omit<FakeCloudProviderOptions, 'clock'> } = {}) {
  const w: FakeWorld = fakeWorld({ cloud: { tags: { 'nodefleet.io/cluster': Cluster }, ...opts.cloud } });
  w.kube.setNodePools([nodePool(opts.capacityTypes)]).setNodeClasses([nodeClass()]);
  for (const p of opts.pods ?? []) w.kube.addPod(p);
  const log = new RecordingLog();
  const metrics = new RecordingMetrics();
  const deps = { env, clock: w.clock, log, metrics, store: w.store, unavailable: w.unavailable, cloud: w.cloud, kube: w.kube };
  return { w, log, metrics, deps };
}
