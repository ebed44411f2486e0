/**
 * Builders for scheduling tests: made-up instance types, NodePools and pods with partial overrides.
 */
import type { Pod, PodSpec } from '../../../shared/api/kube.ts';
import { NodePoolSchema, type NodePool, type NodePoolInput } from '../../../shared/api/nodepool.ts';
import type { RequirementSpec } from '../../../shared/api/requirements.ts';
import { instanceTypeFromCase, type CaseInstanceType } from '../../../shared/catalog/index.ts';
import type { InstanceType } from '../../../shared/catalog/types.ts';
import type { SchedulingInput } from '../../../shared/scheduling/index.ts';

/** A made-up type: 4 vCPU / 16 GiB / 110 pods, amd64, us-east-1a–c, on-demand $0.20 by default. */
export function itype(o: Partial<CaseInstanceType> & { name: string }): InstanceType {
  return instanceTypeFromCase({
    cpu: 4,
    memoryMiB: 16384,
    pods: 110,
    arch: 'amd64',
    zones: ['us-east-1a', 'us-east-1b', 'us-east-1c'],
    capacityTypes: ['on-demand'],
    price: { 'on-demand': 0.2 },
    ...o,
  });
}

/** A NodePool named `name` with the given requirements (default: on-demand only). */
export function nodePool(
  name: string,
  o: {
    requirements?: RequirementSpec[];
    spec?: Partial<NodePoolInput['spec']>;
    taints?: NodePoolInput['spec']['template']['spec']['taints'];
    labels?: Record<string, string>;
  } = {},
): NodePool {
  return NodePoolSchema.parse({
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name },
    spec: {
      template: {
        ...(o.labels ? { metadata: { labels: o.labels } } : {}),
        spec: {
          nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
          requirements: o.requirements ?? [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] }],
          ...(o.taints ? { taints: o.taints } : {}),
        },
      },
      ...o.spec,
    },
  });
}

/** A pending pod with one container (default 100m / 128Mi) and spec overrides. */
export function pendingPod(
  name: string,
  o: { cpu?: string; memory?: string; labels?: Record<string, string>; spec?: Partial<PodSpec>; namespace?: string } = {},
): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: o.namespace ?? 'default', labels: o.labels ?? {} },
    spec: {
      containers: [{ name: 'app', resources: { requests: { cpu: o.cpu ?? '100m', memory: o.memory ?? '128Mi' } } }],
      ...o.spec,
    },
    status: { phase: 'Pending' },
  };
}

/** `n` identical pending pods `<prefix>-0..n-1`. */
export function pendingPods(prefix: string, n: number, o: Parameters<typeof pendingPod>[1] = {}): Pod[] {
  return Array.from({ length: n }, (_, i) => pendingPod(`${prefix}-${i}`, o));
}

/** A scheduling input with one catalog for every NodePool. */
export function input(pods: Pod[], types: InstanceType[], pools: NodePool[] = [nodePool('default')], extra: Partial<SchedulingInput> = {}): SchedulingInput {
  return { pods, nodePools: pools, instanceTypes: () => types, ...extra };
}
