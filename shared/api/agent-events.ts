/**
 * Events the in-cluster agent publishes (source `nodefleet.agent`; the termination's Drain task
 * sends `Unschedulable Pods` without pods too, source `nodefleet.termination`), schema version
 * {@link AgentSchemaVersion}: the detail zod schemas, the EventBridge envelopes the provisioner and
 * registration parse, and the compaction that keeps only scheduling-relevant pod fields.
 *
 * Compatibility: a change that removes or retypes a field bumps `schemaVersion`; fixtures per
 * version live in test/unit/agent/fixtures/. Added optional fields keep the version.
 */
import { z } from 'zod';
import {
  AgentSchemaVersion,
  AgentSource,
  DetailTypeNodeClaimLifecycle,
  DetailTypeNodeLifecycle,
  DetailTypeUnschedulablePods,
  TerminationSource,
} from './contract.ts';
import { isDaemonSetPod, type Container, type Node, type Pod } from './kube.ts';

const stringMap = z.record(z.string(), z.string());
const quantityMap = z.record(z.string(), z.union([z.string(), z.number()]));

const ContainerSchema = z.looseObject({
  name: z.string(),
  resources: z.looseObject({ requests: quantityMap.optional(), limits: quantityMap.optional() }).optional(),
  ports: z
    .array(z.looseObject({ containerPort: z.number(), hostPort: z.number().optional(), protocol: z.string().optional(), hostIP: z.string().optional() }))
    .optional(),
  restartPolicy: z.string().optional(),
});

/** A pod as the agent sends it: Kubernetes shape, scheduling-relevant fields only. */
export const AgentPodSchema = z.object({
  metadata: z.looseObject({
    name: z.string().min(1),
    namespace: z.string().min(1),
    uid: z.string().optional(),
    creationTimestamp: z.string().optional(),
    /** Set while the Node is being deleted (its finalizers hold it): registration starts its termination. */
    deletionTimestamp: z.string().optional(),
    labels: stringMap.optional(),
    annotations: stringMap.optional(),
    ownerReferences: z.array(z.looseObject({ apiVersion: z.string(), kind: z.string(), name: z.string(), controller: z.boolean().optional() })).optional(),
  }),
  spec: z.looseObject({
    containers: z.array(ContainerSchema).min(1),
    initContainers: z.array(ContainerSchema).optional(),
    nodeSelector: stringMap.optional(),
    affinity: z.record(z.string(), z.unknown()).optional(),
    tolerations: z.array(z.record(z.string(), z.unknown())).optional(),
    topologySpreadConstraints: z.array(z.record(z.string(), z.unknown())).optional(),
    overhead: quantityMap.optional(),
    priorityClassName: z.string().optional(),
    priority: z.number().optional(),
    schedulerName: z.string().optional(),
    volumes: z.array(z.looseObject({ name: z.string() })).optional(),
    hostNetwork: z.boolean().optional(),
  }),
  status: z.looseObject({ phase: z.string().optional(), conditions: z.array(z.record(z.string(), z.unknown())).optional() }).optional(),
});
export type AgentPod = z.infer<typeof AgentPodSchema>;

/** Detail of `Unschedulable Pods`: one batch (or one part of a batch split under 256 KB). */
export const UnschedulablePodsDetailSchema = z.object({
  schemaVersion: z.literal(AgentSchemaVersion),
  cluster: z.string().min(1),
  /** Batch id (agent-generated); parts of one batch share it. */
  batchId: z.string().min(1),
  /** 0-based part index and count when a batch was split to stay under the entry size limit. */
  part: z.number().int().min(0).default(0),
  parts: z.number().int().min(1).default(1),
  /** RFC 3339: when the batch closed. */
  observedAt: z.string(),
  pods: z.array(AgentPodSchema),
});
export type UnschedulablePodsDetail = z.infer<typeof UnschedulablePodsDetailSchema>;

/** A node as the agent sends it. */
export const AgentNodeSchema = z.object({
  metadata: z.looseObject({
    name: z.string().min(1),
    uid: z.string().optional(),
    creationTimestamp: z.string().optional(),
    labels: stringMap.optional(),
    annotations: stringMap.optional(),
  }),
  spec: z
    .looseObject({
      providerID: z.string().optional(),
      taints: z
        .array(
          z.looseObject({
            key: z.string(),
            value: z.string().optional(),
            effect: z.enum(['NoSchedule', 'PreferNoSchedule', 'NoExecute']),
            timeAdded: z.string().optional(),
          }),
        )
        .optional(),
      unschedulable: z.boolean().optional(),
    })
    .optional(),
  status: z
    .looseObject({
      capacity: stringMap.optional(),
      allocatable: stringMap.optional(),
      conditions: z
        .array(
          z.looseObject({
            type: z.string(),
            status: z.enum(['True', 'False', 'Unknown']),
            reason: z.string().optional(),
            lastTransitionTime: z.string().optional(),
          }),
        )
        .optional(),
    })
    .optional(),
});

/**
 * NodeClaim annotation holding the last time a (non-DaemonSet) pod was bound to or removed from
 * the claim's node, RFC 3339: nodefleet's stand-in for Karpenter's NodeClaim
 * `status.lastPodEventTime` (KC pkg/controllers/nodeclaim/podevents/controller.go). consolidateAfter
 * counts from it (shared/disruption/state.ts). Written by registration from {@link NodeLifecycleDetail}
 * `lastPodEventTime`.
 */
export const AnnotationLastPodEventTime = 'nodefleet.io/last-pod-event-time';

/** Detail of `Node Lifecycle`. */
export const NodeLifecycleDetailSchema = z.object({
  schemaVersion: z.literal(AgentSchemaVersion),
  cluster: z.string().min(1),
  /** added: first seen; ready: Ready became True; updated: labels/taints/conditions changed, or pod activity; deleted: gone. */
  change: z.enum(['added', 'ready', 'updated', 'deleted']),
  observedAt: z.string(),
  node: AgentNodeSchema,
  /**
   * RFC 3339: the last time the agent saw a non-DaemonSet pod bound to this node, or one of its pods
   * become terminal / terminating / deleted (Karpenter's `lastPodEventTime`). Pod-activity events
   * carry only this, the node name and its providerID; at most one per node per 10 s (agent).
   * Optional: added in schema version 1 without a bump.
   */
  lastPodEventTime: z.string().optional(),
});
export type NodeLifecycleDetail = z.infer<typeof NodeLifecycleDetailSchema>;

/** A karpenter.sh/v1 NodeClaim object as the agent sends it: what names it (registration reads it live before acting). */
export const AgentNodeClaimSchema = z.object({
  metadata: z.looseObject({
    name: z.string().min(1),
    uid: z.string().optional(),
    deletionTimestamp: z.string().optional(),
    finalizers: z.array(z.string()).optional(),
  }),
  status: z.looseObject({ providerID: z.string().optional() }).optional(),
});
export type AgentNodeClaim = z.infer<typeof AgentNodeClaimSchema>;

/**
 * Detail of `NodeClaim Lifecycle`: the object got a deletionTimestamp while holding
 * karpenter.sh/termination (`kubectl delete nodeclaim`); sent once per deletion seen, and again
 * after each re-list that still sees it (the agent restarted, its watch expired).
 */
export const NodeClaimLifecycleDetailSchema = z.object({
  schemaVersion: z.literal(AgentSchemaVersion),
  cluster: z.string().min(1),
  change: z.enum(['deleting']),
  observedAt: z.string(),
  nodeClaim: AgentNodeClaimSchema,
});
export type NodeClaimLifecycleDetail = z.infer<typeof NodeClaimLifecycleDetailSchema>;

/** The EventBridge envelope (every field EventBridge delivers; `id` is the idempotency key). */
function envelope<D extends z.ZodType, T extends string>(detailType: T, detail: D, sources: readonly [string, ...string[]] = [AgentSource]) {
  return z.object({
    version: z.string().default('0'),
    id: z.string().min(1),
    'detail-type': z.literal(detailType),
    source: z.enum(sources),
    account: z.string().default(''),
    time: z.string(),
    region: z.string().default(''),
    resources: z.array(z.string()).default([]),
    detail,
  });
}

/**
 * `Unschedulable Pods` from the agent, or from the termination's Drain task ({@link TerminationSource}):
 * the latter asks for a full pass and carries no pods (refused when it does: the provisioner reads
 * the pods of deleting nodes from the API, never from this event).
 */
export const UnschedulablePodsEventSchema = envelope(DetailTypeUnschedulablePods, UnschedulablePodsDetailSchema, [AgentSource, TerminationSource]).refine(
  (e) => e.source !== TerminationSource || e.detail.pods.length === 0,
  { path: ['detail', 'pods'], message: `an event of source ${TerminationSource} carries no pods` },
);
export type UnschedulablePodsEvent = z.infer<typeof UnschedulablePodsEventSchema>;
export const NodeLifecycleEventSchema = envelope(DetailTypeNodeLifecycle, NodeLifecycleDetailSchema);
export type NodeLifecycleEvent = z.infer<typeof NodeLifecycleEventSchema>;
export const NodeClaimLifecycleEventSchema = envelope(DetailTypeNodeClaimLifecycle, NodeClaimLifecycleDetailSchema);
export type NodeClaimLifecycleEvent = z.infer<typeof NodeClaimLifecycleEventSchema>;

function compactContainer(c: Container): Container {
  const ports = c.ports?.filter((p) => p.hostPort !== undefined);
  return {
    name: c.name,
    ...(c.resources && (c.resources.requests || c.resources.limits)
      ? { resources: { ...(c.resources.requests ? { requests: c.resources.requests } : {}), ...(c.resources.limits ? { limits: c.resources.limits } : {}) } }
      : {}),
    ...(ports?.length ? { ports } : {}),
    ...(c.restartPolicy ? { restartPolicy: c.restartPolicy } : {}),
  };
}

/**
 * Keeps what the scheduling simulation reads: identity, labels, the do-not-disrupt style
 * annotations, owners, requests/limits, host ports, node selection, tolerations, topology spread,
 * priority, PVC and generic ephemeral volumes. Images, env, commands, probes and status details are dropped.
 */
export function compactPod(p: Pod): AgentPod {
  const s = p.spec;
  // Claims only (directly or through a generic ephemeral volume, whose claim is `<pod>-<volume>`
  // and whose template's storage class is kept): what scheduling checks (shared/scheduling/volumes.ts).
  const volumes = s.volumes
    ?.filter((v) => v.persistentVolumeClaim || v.ephemeral)
    .map((v) => {
      if (v.persistentVolumeClaim) return { name: v.name, persistentVolumeClaim: v.persistentVolumeClaim };
      const sc = (v.ephemeral as { volumeClaimTemplate?: { spec?: { storageClassName?: string } } }).volumeClaimTemplate?.spec?.storageClassName;
      return { name: v.name, ephemeral: sc !== undefined ? { volumeClaimTemplate: { spec: { storageClassName: sc } } } : {} };
    });
  const m = p.metadata;
  return {
    metadata: {
      name: m.name,
      namespace: m.namespace ?? 'default',
      ...(m.uid ? { uid: m.uid } : {}),
      ...(m.creationTimestamp ? { creationTimestamp: m.creationTimestamp } : {}),
      ...(m.labels && Object.keys(m.labels).length ? { labels: m.labels } : {}),
      ...(m.annotations ? { annotations: pickAnnotations(m.annotations) } : {}),
      ...(m.ownerReferences?.length
        ? {
            ownerReferences: m.ownerReferences.map((o) => ({
              apiVersion: o.apiVersion,
              kind: o.kind,
              name: o.name,
              ...(o.controller !== undefined ? { controller: o.controller } : {}),
            })),
          }
        : {}),
    },
    spec: {
      containers: s.containers.map(compactContainer) as AgentPod['spec']['containers'],
      ...(s.initContainers?.length ? { initContainers: s.initContainers.map(compactContainer) as AgentPod['spec']['containers'] } : {}),
      ...(s.nodeSelector ? { nodeSelector: s.nodeSelector } : {}),
      ...(s.affinity ? { affinity: s.affinity as Record<string, unknown> } : {}),
      ...(s.tolerations?.length ? { tolerations: s.tolerations as Record<string, unknown>[] } : {}),
      ...(s.topologySpreadConstraints?.length ? { topologySpreadConstraints: s.topologySpreadConstraints as unknown as Record<string, unknown>[] } : {}),
      ...(s.overhead ? { overhead: s.overhead } : {}),
      ...(s.priorityClassName ? { priorityClassName: s.priorityClassName } : {}),
      ...(s.priority !== undefined ? { priority: s.priority } : {}),
      ...(s.schedulerName ? { schedulerName: s.schedulerName } : {}),
      ...(volumes?.length ? { volumes } : {}),
      ...(s.hostNetwork ? { hostNetwork: true } : {}),
    },
  };
}

/** Annotations that change scheduling or disruption (everything else is dropped). */
const KeptAnnotationPrefixes = ['karpenter.sh/', 'nodefleet.io/', 'kubernetes.io/config.mirror'];

function pickAnnotations(a: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(a).filter(([k]) => KeptAnnotationPrefixes.some((p) => k.startsWith(p))));
}

/**
 * Pods kube-scheduler gave up on (Karpenter's rule, KC pkg/utils/pod/scheduling.go
 * `IsProvisionable`): PodScheduled=False with reason Unschedulable, not bound, not nominated
 * (preempting), not terminating, not terminal, not DaemonSet-owned, not mirror. The agent sends
 * these; the provisioner solves these. `assumeUnschedulable`: a pod with no PodScheduled
 * condition (kube-scheduler has not reported on it: a manifest, a case, a Deployment's template)
 * counts as Unschedulable; the other tests still apply. How `plan` and the case runner read input.
 */
export function isProvisionable(p: Pod, opts: { assumeUnschedulable?: boolean } = {}): boolean {
  return notProvisionableReason(p, opts) === undefined;
}

/** Why {@link isProvisionable} skips `p` ("bound to node-1", "nominated to node-2", …), or undefined when it does not. */
export function notProvisionableReason(p: Pod, { assumeUnschedulable = false }: { assumeUnschedulable?: boolean } = {}): string | undefined {
  if (p.spec?.nodeName) return `bound to ${p.spec.nodeName}`;
  if (p.metadata.deletionTimestamp) return 'terminating';
  if (p.status?.nominatedNodeName) return `nominated to ${p.status.nominatedNodeName} (preempting)`;
  if (p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed') return `finished (${p.status.phase})`;
  if (isDaemonSetPod(p)) return 'DaemonSet pod';
  if (p.metadata.annotations?.['kubernetes.io/config.mirror']) return 'mirror pod';
  const scheduled = p.status?.conditions?.find((c) => c.type === 'PodScheduled');
  if (!scheduled) return assumeUnschedulable ? undefined : 'kube-scheduler has not reported it unschedulable yet';
  if (scheduled.status === 'False' && scheduled.reason === 'Unschedulable') return undefined;
  return `PodScheduled=${scheduled.status}${scheduled.reason ? ` (${scheduled.reason})` : ''}, not Unschedulable`;
}

/** An agent pod back in the Kubernetes Pod shape the scheduler takes. */
export function toPod(p: AgentPod): Pod {
  return { apiVersion: 'v1', kind: 'Pod', ...(p as unknown as Pod) };
}

/** An agent node back in the Kubernetes Node shape. */
export function toNode(n: z.infer<typeof AgentNodeSchema>): Node {
  return { apiVersion: 'v1', kind: 'Node', ...(n as unknown as Node) };
}

/** Compacts a NodeClaim object (name, uid, deletionTimestamp, finalizers, providerID). */
export function compactNodeClaim(o: {
  metadata: { name: string; uid?: string; deletionTimestamp?: string; finalizers?: string[] };
  status?: { providerID?: string };
}): AgentNodeClaim {
  const m = o.metadata;
  return {
    metadata: {
      name: m.name,
      ...(m.uid ? { uid: m.uid } : {}),
      ...(m.deletionTimestamp ? { deletionTimestamp: m.deletionTimestamp } : {}),
      ...(m.finalizers?.length ? { finalizers: [...m.finalizers] } : {}),
    },
    ...(o.status?.providerID ? { status: { providerID: o.status.providerID } } : {}),
  };
}

/** Compacts a node (labels, taints, providerID, capacity/allocatable, conditions type+status). */
export function compactNode(n: Node): z.infer<typeof AgentNodeSchema> {
  return {
    metadata: {
      name: n.metadata.name,
      ...(n.metadata.uid ? { uid: n.metadata.uid } : {}),
      ...(n.metadata.creationTimestamp ? { creationTimestamp: n.metadata.creationTimestamp } : {}),
      ...(n.metadata.deletionTimestamp ? { deletionTimestamp: n.metadata.deletionTimestamp } : {}),
      ...(n.metadata.labels ? { labels: n.metadata.labels } : {}),
    },
    spec: {
      ...(n.spec?.providerID ? { providerID: n.spec.providerID } : {}),
      ...(n.spec?.taints?.length ? { taints: n.spec.taints.map((t) => ({ ...t })) } : {}),
      ...(n.spec?.unschedulable ? { unschedulable: true } : {}),
    },
    status: {
      ...(n.status?.capacity ? { capacity: n.status.capacity } : {}),
      ...(n.status?.allocatable ? { allocatable: n.status.allocatable } : {}),
      ...(n.status?.conditions
        ? {
            conditions: n.status.conditions.map((c) => ({
              type: c.type,
              status: c.status,
              ...(c.reason ? { reason: c.reason } : {}),
              ...(c.lastTransitionTime ? { lastTransitionTime: c.lastTransitionTime } : {}),
            })),
          }
        : {}),
    },
  };
}
