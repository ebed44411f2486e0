/** Builders for the local-kube tests: a started cluster on a frozen clock, managed nodes, Deployments. */
import { KubeConfig } from '@kubernetes/client-node';
import { LocalCluster, type InstanceSpec } from '../../../infra/local/kube/index.ts';
import type { KubeObject } from '../../../shared/api/kube.ts';

/** 2026-03-02T10:00:00Z */
export const T0 = Date.parse('2026-03-02T10:00:00Z');

/** t0 + seconds. */
export function at(seconds: number): Date {
  return new Date(T0 + seconds * 1000);
}

/** A started cluster whose clock stays at T0 until tick(now); no background reconciles. */
export async function startCluster(): Promise<{ cluster: LocalCluster; kc: KubeConfig; url: string }> {
  const cluster = new LocalCluster({ reconcileIntervalMs: 0 });
  cluster.tick(at(0));
  const { url } = await cluster.start();
  const kc = new KubeConfig();
  kc.loadFromString(cluster.kubeconfig());
  return { cluster, kc, url };
}

/** An EKS managed node group node (2 vCPU: allocatable 1930m / 7.1 GiB-ish, 29 pods). */
export function managedNode(i: number, over: Partial<InstanceSpec> = {}): InstanceSpec {
  return {
    instanceId: `i-0managed00000000${i}`,
    instanceType: 'm5.large',
    zone: i % 2 === 0 ? 'ap-northeast-2a' : 'ap-northeast-2c',
    capacity: { cpu: '2', memory: '7934Mi', pods: '29', 'ephemeral-storage': '20Gi' },
    allocatable: { cpu: '1930m', memory: '7220Mi', pods: '29', 'ephemeral-storage': '18Gi' },
    labels: { 'eks.amazonaws.com/nodegroup': 'system', 'eks.amazonaws.com/capacityType': 'ON_DEMAND' },
    ...over,
  };
}

/** A c5a.2xlarge launched by a NodePool (allocatable 7910m cpu). */
export function c5a2xlarge(instanceId: string, over: Partial<InstanceSpec> = {}): InstanceSpec {
  return {
    instanceId,
    instanceType: 'c5a.2xlarge',
    zone: 'ap-northeast-2a',
    capacityType: 'on-demand',
    capacity: { cpu: '8', memory: '15896Mi', pods: '58' },
    allocatable: { cpu: '7910m', memory: '14162Mi', pods: '58' },
    labels: { 'karpenter.sh/nodepool': 'default' },
    startupTaints: [{ key: 'karpenter.sh/unregistered', effect: 'NoExecute' }],
    ...over,
  };
}

/** Deployment `name` of pause pods requesting `cpu`. */
export function deployment(
  name: string,
  replicas: number,
  opts: { cpu?: string; namespace?: string; annotations?: Record<string, string>; grace?: number } = {},
): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: opts.namespace ?? 'default' },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name }, ...(opts.annotations ? { annotations: opts.annotations } : {}) },
        spec: {
          terminationGracePeriodSeconds: opts.grace ?? 30,
          containers: [{ name: 'pause', image: 'public.ecr.aws/eks-distro/kubernetes/pause:3.7', resources: { requests: { cpu: opts.cpu ?? '1' } } }],
        },
      },
    },
  };
}
