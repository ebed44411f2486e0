/**
 * Builders with partial overrides for the objects fakes hold (STYLE.md habit 9):
 * `pod({ name: 'web-1', nodeName: 'n1', cpu: '500m' })`.
 */
import type { Node, Pod, PodDisruptionBudget } from '../../shared/api/kube.ts';
import { NodeClaimSchema, type NodeClaim, type NodeClaimInput } from '../../shared/api/nodeclaim.ts';

export interface PodOptions {
  name: string;
  namespace?: string;
  nodeName?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  cpu?: string;
  memory?: string;
  /** Owner kind: 'ReplicaSet' (default), 'DaemonSet', 'StatefulSet', 'Job', or 'none'. */
  owner?: 'ReplicaSet' | 'DaemonSet' | 'StatefulSet' | 'Job' | 'none';
  /** Mirror (static) pod: annotation kubernetes.io/config.mirror. */
  mirror?: boolean;
  priorityClassName?: string;
  terminationGracePeriodSeconds?: number;
  phase?: string;
  tolerations?: Pod['spec']['tolerations'];
}

/** A running pod with one container; defaults: namespace default, ReplicaSet-owned, 100m / 128Mi. */
export function pod(o: PodOptions): Pod {
  const annotations = { ...o.annotations, ...(o.mirror ? { 'kubernetes.io/config.mirror': 'mirror' } : {}) };
  const owner = o.owner ?? 'ReplicaSet';
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: o.name,
      namespace: o.namespace ?? 'default',
      uid: `uid-${o.namespace ?? 'default'}-${o.name}`,
      labels: { ...o.labels },
      annotations,
      ...(owner === 'none' || o.mirror
        ? {}
        : { ownerReferences: [{ apiVersion: owner === 'Job' ? 'batch/v1' : 'apps/v1', kind: owner, name: `${o.name}-owner`, controller: true }] }),
    },
    spec: {
      ...(o.nodeName ? { nodeName: o.nodeName } : {}),
      containers: [{ name: 'main', resources: { requests: { cpu: o.cpu ?? '100m', memory: o.memory ?? '128Mi' } } }],
      ...(o.priorityClassName ? { priorityClassName: o.priorityClassName } : {}),
      ...(o.terminationGracePeriodSeconds !== undefined ? { terminationGracePeriodSeconds: o.terminationGracePeriodSeconds } : {}),
      ...(o.tolerations ? { tolerations: o.tolerations } : {}),
    },
    status: { phase: o.phase ?? 'Running' },
  };
}

export interface NodeOptions {
  name: string;
  providerID?: string;
  labels?: Record<string, string>;
  taints?: NonNullable<Node['spec']>['taints'];
  unschedulable?: boolean;
  ready?: boolean;
  allocatable?: Record<string, string>;
}

/** A Ready node; defaults: 2 CPU / 8Gi / 29 pods allocatable. */
export function node(o: NodeOptions): Node {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: o.name, labels: { 'kubernetes.io/hostname': o.name, ...o.labels } },
    spec: {
      ...(o.providerID ? { providerID: o.providerID } : {}),
      taints: o.taints ?? [],
      ...(o.unschedulable ? { unschedulable: true } : {}),
    },
    status: {
      allocatable: o.allocatable ?? { cpu: '1930m', memory: '7220Mi', pods: '29' },
      capacity: o.allocatable ?? { cpu: '2', memory: '7934Mi', pods: '29' },
      conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True' }],
    },
  };
}

/** A PDB selecting `matchLabels` in `namespace`, with `disruptionsAllowed` in its status. */
export function pdb(o: {
  name: string;
  namespace?: string;
  matchLabels: Record<string, string>;
  disruptionsAllowed: number;
  minAvailable?: number;
}): PodDisruptionBudget {
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name: o.name, namespace: o.namespace ?? 'default' },
    spec: { selector: { matchLabels: o.matchLabels }, ...(o.minAvailable !== undefined ? { minAvailable: o.minAvailable } : {}) },
    status: { disruptionsAllowed: o.disruptionsAllowed },
  };
}

/** A launched, ready NodeClaim (parsed by NodeClaimSchema so defaults apply). */
export function nodeClaim(o: Partial<NodeClaimInput> & { name: string }): NodeClaim {
  return NodeClaimSchema.parse({
    cluster: 'test',
    nodePool: 'default',
    nodeClass: 'default',
    requirements: [],
    resources: { requests: {} },
    createdAt: '2026-01-01T00:00:00.000Z',
    phase: 'Initialized',
    ...o,
  });
}

/**
 * The stored NodeClaim of a node (name = node name; providerID, instance, NodePool, type, zone,
 * capacity type and creation time from the node): disruption acts only on a Node of a stored claim.
 */
export function nodeClaimOf(n: Node, o: Partial<NodeClaimInput> = {}): NodeClaim {
  const labels = n.metadata.labels ?? {};
  const providerId = n.spec?.providerID;
  const instanceId = /\/(i-[0-9a-z]+)$/.exec(providerId ?? '')?.[1];
  return nodeClaim({
    name: n.metadata.name,
    nodePool: labels['karpenter.sh/nodepool'] ?? 'default',
    nodeName: n.metadata.name,
    ...(providerId ? { providerId } : {}),
    ...(instanceId ? { instanceId } : {}),
    ...(labels['node.kubernetes.io/instance-type'] ? { instanceType: labels['node.kubernetes.io/instance-type'] } : {}),
    ...(labels['topology.kubernetes.io/zone'] ? { zone: labels['topology.kubernetes.io/zone'] } : {}),
    ...(labels['karpenter.sh/capacity-type'] ? { capacityType: labels['karpenter.sh/capacity-type'] as 'on-demand' } : {}),
    createdAt: n.metadata.creationTimestamp ?? '2026-01-01T00:00:00.000Z',
    ...o,
  });
}
