/**
 * NodeClaim: nodefleet's record of one node it launched, kept in DynamoDB (one item each).
 * Mirrors karpenter.sh/v1 NodeClaim (KC pkg/apis/v1/nodeclaim.go, nodeclaim_status.go).
 * Ready = Launched ∧ Registered ∧ Initialized. Expiry is a timer (`expireAt`), not a condition.
 */
import { z } from 'zod';
import { RequirementSchema, TaintSchema } from './nodepool.ts';
import { parseDurationSeconds } from './duration.ts';
import {
  AnnotationNodeClaimMirror,
  AnnotationNodeClassHash,
  AnnotationNodePoolHash,
  FinalizerTermination,
  LabelCapacityType,
  LabelInstanceType,
  LabelNodePool,
  LabelTopologyZone,
} from './labels.ts';
import { instanceIdOfProviderId } from './provider-id.ts';

export const NodeClaimConditionTypes = [
  'Launched',
  'Registered',
  'Initialized',
  'Ready',
  'Drifted',
  'Consolidatable',
  'Drained',
  'VolumesDetached',
  'InstanceTerminating',
  'DisruptionReason',
] as const;
export type NodeClaimConditionType = (typeof NodeClaimConditionTypes)[number];

export const ConditionSchema = z.object({
  type: z.enum(NodeClaimConditionTypes),
  status: z.enum(['True', 'False', 'Unknown']),
  reason: z.string().optional(),
  message: z.string().optional(),
  /** RFC 3339. */
  lastTransitionTime: z.string(),
});
export type Condition = z.infer<typeof ConditionSchema>;

/** Lifecycle phase, derived from conditions but stored for queries. */
export const NodeClaimPhase = z.enum(['Pending', 'Launched', 'Registered', 'Initialized', 'Terminating', 'Terminated', 'Failed']);
export type NodeClaimPhase = z.infer<typeof NodeClaimPhase>;

const PhaseRank: Record<NodeClaimPhase, number> = { Pending: 0, Launched: 1, Registered: 2, Initialized: 3, Failed: 4, Terminating: 4, Terminated: 5 };

/**
 * The phase a claim moves to when a step of its life completes: `next`, unless the claim is
 * already further on. A phase never moves back — a claim whose termination started before its
 * node registered (a spot interruption during launch) stays Terminating when registration or
 * initialization completes later; writing Registered over it made the claim look live again, its
 * pods nominated to a node being drained and its termination treated as not started (chaos seed 3).
 */
export function advancePhase(current: NodeClaimPhase, next: NodeClaimPhase): NodeClaimPhase {
  return PhaseRank[next] >= PhaseRank[current] ? next : current;
}

export const NodeClaimSchema = z.object({
  /** e.g. "default-x7k2p" (NodePool name + random suffix, as Karpenter). */
  name: z.string(),
  cluster: z.string(),
  nodePool: z.string(),
  nodeClass: z.string(),
  /** Requirements including the launch set (node.kubernetes.io/instance-type In [...]). */
  requirements: z.array(RequirementSchema),
  taints: z.array(TaintSchema).default([]),
  startupTaints: z.array(TaintSchema).default([]),
  labels: z.record(z.string(), z.string()).default({}),
  /** Sum of pod requests plus daemonset overhead, Kubernetes quantity strings. */
  resources: z.object({ requests: z.record(z.string(), z.string()) }),
  /** Filled once launched. */
  instanceType: z.string().optional(),
  zone: z.string().optional(),
  capacityType: z.enum(['reserved', 'spot', 'on-demand']).optional(),
  /** USD per hour of the launched offering. */
  priceUsdPerHour: z.number().optional(),
  instanceId: z.string().optional(),
  /** aws:///<zone>/<instance-id> */
  providerId: z.string().optional(),
  nodeName: z.string().optional(),
  imageId: z.string().optional(),
  capacity: z.record(z.string(), z.string()).optional(),
  allocatable: z.record(z.string(), z.string()).optional(),
  conditions: z.array(ConditionSchema).default([]),
  phase: NodeClaimPhase.default('Pending'),
  /** Hashes for drift: NodePool template hash and EC2NodeClass hash at creation. */
  nodePoolHash: z.string().optional(),
  nodeClassHash: z.string().optional(),
  /** RFC 3339. */
  createdAt: z.string(),
  /** RFC 3339; absent when expireAfter is Never. */
  expireAt: z.string().optional(),
  /** terminationGracePeriod in seconds, copied from the NodePool at creation. */
  terminationGracePeriodSeconds: z.number().optional(),
  /**
   * Epoch ms: when EC2 takes the instance away, as the interruption handler verified it with EC2
   * (functions/interruption) and wrote it here before starting the termination. The only way a
   * termination's deadline comes before the claim's terminationGracePeriod (shared/api/termination-target.ts).
   */
  noticeDeadlineEpochMs: z.number().optional(),
  /** Optimistic-lock version: every write is conditional on it. */
  version: z.number().int().default(0),
  /** The pods the claim was created for (namespace/name), for logs and idempotency. */
  pods: z.array(z.string()).default([]),
  /** Why a termination failed or a launch gave up. */
  lastError: z.string().optional(),
  /**
   * The termination in progress, recorded on the claim so that it can always be carried on (gc
   * restarts it when an execution ended without finishing): written by the Cordon task of each
   * execution, the Drain task's heartbeat, and RecordFailure when an execution ends unfinished.
   * `attempt` numbers the executions (1, 2, … named by shared/api/termination.ts
   * `terminationExecutionName`); `deadlineEpochMs` absent = no deadline (wait for the drain).
   */
  termination: z
    .object({
      attempt: z.number().int().min(1),
      reason: z.string(),
      deadlineEpochMs: z.number().optional(),
      budgetNodePool: z.string().optional(),
      /** RFC 3339, when the first attempt started. */
      startedAt: z.string(),
      /** RFC 3339, last sign of life of the current attempt (Cordon, then Drain at least every TerminationHeartbeatSeconds). */
      heartbeatAt: z.string().optional(),
      /**
       * The attempt that ended without finishing, and how: failed (Fail state), continued (history
       * limit near: go on as a new execution) or refused (the claim disagrees with its live Node or
       * instance: every attempt would be refused, so gc does not carry it on).
       */
      ended: z.object({ attempt: z.number().int().min(1), outcome: z.enum(['failed', 'continued', 'refused']), at: z.string() }).optional(),
      /** Attempts that failed so far (gc backs off restarting by it). */
      failures: z.number().int().min(0).default(0),
    })
    .optional(),
  /**
   * RFC 3339: the record expires (is deleted) after this; set when the claim becomes Terminated
   * ({@link TerminatedClaimRetentionSeconds} later). Stored as DynamoDB's TTL attribute.
   */
  retainUntil: z.string().optional(),
  annotations: z.record(z.string(), z.string()).default({}),
});
export type NodeClaim = z.infer<typeof NodeClaimSchema>;

/**
 * How long a Terminated claim is kept (for `status` and gc's bookkeeping) before it expires:
 * DynamoDB's TTL deletes it in AWS (within days), gc deletes it at once when it sees it expired.
 */
export const TerminatedClaimRetentionSeconds = 3600;

/** Characters of the generated name suffix (lower-case consonants and digits, as Kubernetes' generateName). */
export const NodeClaimNameAlphabet = 'bcdfghjklmnpqrstvwxz2456789';
/** Length of the generated name suffix (Karpenter: `<nodepool>-<5 chars>`). */
export const NodeClaimNameSuffixLength = 5;

/**
 * A fresh NodeClaim name, `<nodepool>-<5 random chars>` as Karpenter generates them: unique per
 * creation (a pod re-created with the same name gets a new claim, never an old one's name).
 * @param random uniform in [0, 1) (seeded in tests and the chaos harness; crypto-backed in production)
 */
export function randomNodeClaimName(nodePool: string, random: () => number): string {
  let suffix = '';
  for (let i = 0; i < NodeClaimNameSuffixLength; i++)
    suffix += NodeClaimNameAlphabet[Math.floor(random() * NodeClaimNameAlphabet.length) % NodeClaimNameAlphabet.length];
  return `${nodePool}-${suffix}`;
}

/** Whether the claim record has expired at `now` (see `retainUntil`). */
export function isExpired(c: Pick<NodeClaim, 'retainUntil'>, now: Date): boolean {
  return c.retainUntil !== undefined && Date.parse(c.retainUntil) <= now.getTime();
}
export type NodeClaimInput = z.input<typeof NodeClaimSchema>;

/** The condition of `type`, if set. */
export function getCondition(c: Pick<NodeClaim, 'conditions'>, type: NodeClaimConditionType): Condition | undefined {
  return c.conditions.find((x) => x.type === type);
}

/** Phases in which a claim is in flight: it may hold capacity the cluster picture does not show yet. */
export const InFlightPhases: ReadonlySet<NodeClaimPhase> = new Set<NodeClaimPhase>(['Pending', 'Launched', 'Registered', 'Initialized']);

/**
 * How long the pods a claim was made for still count as placed on it once its node is
 * initialized: Karpenter's nomination period (2 × the 10 s batch window). Past it, a pod still
 * pending did not fit there (other pods took the room, or it was re-created) and needs capacity
 * again; counting it as assigned for ever left such pods Pending for good (chaos seed 8).
 */
export const NominationSeconds = 20;

/**
 * Whether an in-flight claim still counts its recorded pods as placed on it at `now`: always before
 * initialization, and for {@link NominationSeconds} after it (one rule for the provisioner's pre-check and snapshot, and disruption's simulation).
 */
export function nominates(c: NodeClaim, now: Date): boolean {
  if (c.phase !== 'Initialized') return true;
  const initializedAt = Date.parse(getCondition(c, 'Initialized')?.lastTransitionTime ?? '');
  return now.getTime() - initializedAt < NominationSeconds * 1000;
}

/**
 * {@link inFlightKeyMs} of a claim not initialized yet (or whose initialization time is unknown):
 * later than any time, so every `listInFlight(initializedSinceMs)` returns it. Epoch ms
 * (Number.MAX_SAFE_INTEGER: exact as a DynamoDB number and as a JavaScript number).
 */
export const NotInitializedInFlightKeyMs = Number.MAX_SAFE_INTEGER;

/**
 * The claim's key in the in-flight index (epoch ms), or undefined when it is not in flight — the
 * one rule for `NodeClaimStore.listInFlight`, the DynamoDB item's sparse sort key
 * (shared/api/contract.ts `Table.inFlightAttribute`) and the in-memory store:
 * - Pending, Launched, Registered ({@link InFlightPhases} before Initialized):
 *   {@link NotInitializedInFlightKeyMs};
 * - Initialized: the epoch ms its Initialized condition turned True ({@link NotInitializedInFlightKeyMs}
 *   when that time is unknown) — a reader asking for claims initialized since T reads the keys ≥ T,
 *   so claims initialized long ago stay out of the read range without another write;
 * - Terminating, Terminated, Failed: undefined (no attribute: the claim leaves the index in the
 *   same write that moves it out of the in-flight phases).
 */
export function inFlightKeyMs(c: Pick<NodeClaim, 'phase' | 'conditions'>): number | undefined {
  if (!InFlightPhases.has(c.phase)) return undefined;
  if (c.phase !== 'Initialized') return NotInitializedInFlightKeyMs;
  const init = getCondition(c, 'Initialized');
  const at = init?.status === 'True' ? Date.parse(init.lastTransitionTime) : NaN;
  return Number.isFinite(at) ? at : NotInitializedInFlightKeyMs;
}

/**
 * Does the claim belong to `NodeClaimStore.listInFlight(initializedSinceMs)`? Pending, Launched,
 * Registered; Initialized when its Initialized condition turned True at or after the time (or
 * the time is unknown): its {@link inFlightKeyMs} is at least `initializedSinceMs`.
 */
export function inFlightSince(c: Pick<NodeClaim, 'phase' | 'conditions'>, initializedSinceMs: number): boolean {
  const key = inFlightKeyMs(c);
  return key !== undefined && key >= initializedSinceMs;
}

/** True when the condition is set to True. */
export function isTrue(c: Pick<NodeClaim, 'conditions'>, type: NodeClaimConditionType): boolean {
  return getCondition(c, type)?.status === 'True';
}

/**
 * Returns a copy with condition `type` set; `lastTransitionTime` changes only when the status does.
 * @param now RFC 3339 time of the change.
 */
export function setCondition(
  c: NodeClaim,
  type: NodeClaimConditionType,
  status: 'True' | 'False' | 'Unknown',
  now: string,
  reason?: string,
  message?: string,
): NodeClaim {
  const prev = getCondition(c, type);
  const next: Condition = {
    type,
    status,
    reason,
    message,
    lastTransitionTime: prev && prev.status === status ? prev.lastTransitionTime : now,
  };
  return { ...c, conditions: [...c.conditions.filter((x) => x.type !== type), next] };
}

// ---------------------------------------------------------------------------------------------
// The Kubernetes view: a NodeClaim record as `kubectl get nodeclaims -o yaml` shows Karpenter's.

/** A karpenter.sh/v1 NodeClaim object (KC pkg/apis/crds/karpenter.sh_nodeclaims.yaml), fields nodefleet knows. */
export interface KubeNodeClaim {
  apiVersion: 'karpenter.sh/v1';
  kind: 'NodeClaim';
  metadata: {
    name: string;
    creationTimestamp: string;
    labels: Record<string, string>;
    annotations?: Record<string, string>;
    finalizers: string[];
    ownerReferences?: { apiVersion: string; kind: string; name: string; blockOwnerDeletion: boolean }[];
    deletionTimestamp?: string;
  };
  spec: {
    nodeClassRef: { group: string; kind: string; name: string };
    requirements: NodeClaim['requirements'];
    resources: { requests: Record<string, string> };
    taints?: NodeClaim['taints'];
    startupTaints?: NodeClaim['startupTaints'];
    expireAfter: string;
    terminationGracePeriod?: string;
  };
  status?: {
    providerID?: string;
    nodeName?: string;
    imageID?: string;
    capacity?: Record<string, string>;
    allocatable?: Record<string, string>;
    conditions?: { type: string; status: string; reason: string; message: string; lastTransitionTime: string }[];
  };
}

/** A duration in seconds as Karpenter's NodePool fields write it: "720h", "1h30m", "45s". */
export function formatDurationSeconds(seconds: number): string {
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = Math.round(seconds % 60);
  return `${h ? `${h}h` : ''}${m ? `${m}m` : ''}${s || (!h && !m) ? `${s}s` : ''}`;
}

/** RFC 3339 at second precision, as the API server writes metadata times ("2026-01-02T03:04:05Z"). */
function kubeTime(iso: string): string {
  return iso.replace(/\.\d+Z$/, 'Z');
}

/**
 * The record as a karpenter.sh/v1 NodeClaim object: labels as Karpenter sets them on the claim
 * (template labels, nodepool, and once launched instance type, zone and capacity type), the
 * termination finalizer, the NodePool owner, spec (requirements, requests, taints, expireAfter
 * from `expireAt - createdAt`, terminationGracePeriod) and status (providerID, node, image,
 * capacity, allocatable, conditions with reason defaulting to the type as Karpenter's status
 * conditions do; Ready derived from Launched, Registered and Initialized unless recorded).
 * `extraAnnotations` adds nodefleet facts (e.g. a planned price).
 * @param opts.nodeClassGroup the EC2NodeClass group of `spec.nodeClassRef` (default karpenter.k8s.aws;
 *   nodefleet.io beside Karpenter, so Karpenter's controllers skip the object).
 * @param opts.ownerReference false to leave out the NodePool owner (an object written to the cluster:
 *   the API server needs the owner's uid, and the record, not the NodePool, decides its life).
 */
export function toKubeNodeClaim(
  c: NodeClaim,
  extraAnnotations: Record<string, string> = {},
  opts: { nodeClassGroup?: string; ownerReference?: boolean } = {},
): KubeNodeClaim {
  const labels: Record<string, string> = { ...c.labels, 'karpenter.sh/nodepool': c.nodePool };
  if (c.instanceType) labels['node.kubernetes.io/instance-type'] = c.instanceType;
  if (c.zone) labels['topology.kubernetes.io/zone'] = c.zone;
  if (c.capacityType) labels['karpenter.sh/capacity-type'] = c.capacityType;
  const annotations = { ...c.annotations, ...extraAnnotations };
  const expire = c.expireAt ? formatDurationSeconds(Math.round((Date.parse(c.expireAt) - Date.parse(c.createdAt)) / 1000)) : 'Never';
  const status: NonNullable<KubeNodeClaim['status']> = {
    ...(c.providerId ? { providerID: c.providerId } : {}),
    ...(c.nodeName ? { nodeName: c.nodeName } : {}),
    ...(c.imageId ? { imageID: c.imageId } : {}),
    ...(c.capacity ? { capacity: c.capacity } : {}),
    ...(c.allocatable ? { allocatable: c.allocatable } : {}),
    ...(c.conditions.length
      ? {
          conditions: withReady(c.conditions)
            .sort((a, b) => NodeClaimConditionTypes.indexOf(a.type) - NodeClaimConditionTypes.indexOf(b.type))
            .map((x) => ({
              type: x.type,
              status: x.status,
              reason: x.reason || x.type,
              message: x.message ?? '',
              lastTransitionTime: kubeTime(x.lastTransitionTime),
            })),
        }
      : {}),
  };
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodeClaim',
    metadata: {
      name: c.name,
      creationTimestamp: kubeTime(c.createdAt),
      labels: Object.fromEntries(Object.entries(labels).sort(([a], [b]) => a.localeCompare(b))),
      ...(Object.keys(annotations).length ? { annotations } : {}),
      finalizers: [FinalizerTermination],
      ...(opts.ownerReference === false
        ? {}
        : { ownerReferences: [{ apiVersion: 'karpenter.sh/v1', kind: 'NodePool', name: c.nodePool, blockOwnerDeletion: true }] }),
    },
    spec: {
      nodeClassRef: { group: opts.nodeClassGroup ?? 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: c.nodeClass },
      requirements: c.requirements,
      resources: { requests: c.resources.requests },
      ...(c.taints.length ? { taints: c.taints } : {}),
      ...(c.startupTaints.length ? { startupTaints: c.startupTaints } : {}),
      expireAfter: expire,
      ...(c.terminationGracePeriodSeconds !== undefined ? { terminationGracePeriod: formatDurationSeconds(c.terminationGracePeriodSeconds) } : {}),
    },
    ...(Object.keys(status).length ? { status } : {}),
  };
}

/**
 * The conditions with Karpenter's root condition Ready when none is recorded: True once Launched,
 * Registered and Initialized are, False when one of them is False, else Unknown (reason
 * `<first not True>NotTrue`, e.g. `RegisteredNotTrue`).
 */
function withReady(conditions: readonly Condition[]): Condition[] {
  if (conditions.some((c) => c.type === 'Ready')) return [...conditions];
  const parts = (['Launched', 'Registered', 'Initialized'] as const).map((t) => ({ t, c: conditions.find((x) => x.type === t) }));
  const pending = parts.find((p) => p.c?.status !== 'True');
  const last = parts
    .map((p) => p.c?.lastTransitionTime)
    .filter((x): x is string => !!x)
    .sort()
    .at(-1);
  if (!last) return [...conditions];
  const ready: Condition = pending
    ? { type: 'Ready', status: pending.c?.status === 'False' ? 'False' : 'Unknown', reason: `${pending.t}NotTrue`, lastTransitionTime: last }
    : { type: 'Ready', status: 'True', reason: 'Ready', lastTransitionTime: last };
  return [...conditions, ready];
}

/**
 * What to write so the cluster's karpenter.sh/v1 NodeClaim objects mirror the records of `cluster`
 * (DynamoDB stays the record nodefleet decides on): `put` the objects missing or out of date (every
 * field of the mirror equal in the object, server-added fields ignored), `remove` the mirrors whose
 * record is gone or Terminated. An object of a record's name without nodefleet's mirror annotation
 * (Karpenter's own, beside nodefleet) is `foreign`: never changed or removed.
 */
export function planNodeClaimObjects(
  records: readonly NodeClaim[],
  objects: readonly KubeNodeClaim[],
  opts: { cluster: string; nodeClassGroup: string },
): { put: KubeNodeClaim[]; remove: KubeNodeClaim[]; foreign: string[] } {
  const out = { put: [] as KubeNodeClaim[], remove: [] as KubeNodeClaim[], foreign: [] as string[] };
  const existing = new Map(objects.map((o) => [o.metadata.name, o]));
  const mine = (o: KubeNodeClaim) => o.metadata.annotations?.[AnnotationNodeClaimMirror] === opts.cluster;
  const wanted = new Set<string>();
  for (const r of records) {
    if (r.cluster !== opts.cluster || r.phase === 'Terminated') continue;
    wanted.add(r.name);
    const o = existing.get(r.name);
    if (o && !mine(o)) {
      out.foreign.push(r.name);
      continue;
    }
    const mirror = toKubeNodeClaim(r, { [AnnotationNodeClaimMirror]: opts.cluster }, { nodeClassGroup: opts.nodeClassGroup, ownerReference: false });
    // The API server sets the object's own creationTimestamp: not compared.
    const { creationTimestamp: _created, ...metadata } = mirror.metadata;
    if (!o || !covers(o, { ...mirror, metadata })) out.put.push(mirror);
  }
  for (const o of objects) if (mine(o) && !wanted.has(o.metadata.name)) out.remove.push(o);
  return out;
}

/** Every leaf of `want` is in `have` with the same value (arrays: same length, element-wise). */
function covers(have: unknown, want: unknown): boolean {
  if (Array.isArray(want)) return Array.isArray(have) && have.length === want.length && want.every((w, i) => covers(have[i], w));
  if (want && typeof want === 'object') {
    if (!have || typeof have !== 'object') return false;
    return Object.entries(want).every(([k, v]) => covers((have as Record<string, unknown>)[k], v));
  }
  return have === want;
}

/**
 * A karpenter.sh/v1 NodeClaim object (`kubectl get nodeclaim -o yaml`) as nodefleet's record: the
 * inverse of {@link toKubeNodeClaim}, every field kept — spec taints, startupTaints, expireAfter
 * (as `expireAt` from the creation time) and terminationGracePeriod; conditions of known types.
 * @throws ZodError / ValidationError for a malformed object or duration.
 */
export function fromKubeNodeClaim(
  o: {
    metadata: { name: string; creationTimestamp?: string; deletionTimestamp?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
    spec?: unknown;
    status?: unknown;
  },
  cluster: string,
): NodeClaim {
  const labels = o.metadata.labels ?? {};
  const annotations = o.metadata.annotations ?? {};
  const status = (o.status ?? {}) as Record<string, any>;
  const spec = (o.spec ?? {}) as Record<string, any>;
  const providerId: string | undefined = status.providerID;
  const created = o.metadata.creationTimestamp ?? '2026-01-01T00:00:00Z';
  const conditions = ((status.conditions ?? []) as Record<string, string>[])
    .filter((c) => (NodeClaimConditionTypes as readonly string[]).includes(c.type))
    .map((c) => ({ type: c.type, status: c.status, reason: c.reason, message: c.message, lastTransitionTime: c.lastTransitionTime ?? created }));
  const isTrue = (t: string) => conditions.some((c) => c.type === t && c.status === 'True');
  const expireAfter = parseDurationSeconds(spec.expireAfter);
  const grace = parseDurationSeconds(spec.terminationGracePeriod);
  return NodeClaimSchema.parse({
    name: o.metadata.name,
    cluster,
    nodePool: labels[LabelNodePool] ?? '',
    nodeClass: spec.nodeClassRef?.name ?? 'default',
    requirements: (spec.requirements ?? []).map((r: Record<string, unknown>) => ({
      key: r.key,
      operator: r.operator,
      ...(r.values ? { values: r.values } : {}),
      ...(r.minValues !== undefined ? { minValues: r.minValues } : {}),
    })),
    taints: spec.taints ?? [],
    startupTaints: spec.startupTaints ?? [],
    labels,
    resources: { requests: spec.resources?.requests ?? {} },
    instanceType: labels[LabelInstanceType],
    zone: labels[LabelTopologyZone],
    capacityType: labels[LabelCapacityType],
    instanceId: instanceIdOfProviderId(providerId),
    providerId,
    nodeName: status.nodeName,
    imageId: status.imageID,
    capacity: status.capacity,
    allocatable: status.allocatable,
    conditions,
    phase: o.metadata.deletionTimestamp
      ? 'Terminating'
      : isTrue('Initialized')
        ? 'Initialized'
        : isTrue('Registered')
          ? 'Registered'
          : isTrue('Launched')
            ? 'Launched'
            : 'Pending',
    nodePoolHash: annotations[AnnotationNodePoolHash],
    nodeClassHash: annotations[AnnotationNodeClassHash],
    createdAt: created,
    ...(expireAfter !== undefined ? { expireAt: new Date(Date.parse(created) + expireAfter * 1000).toISOString() } : {}),
    ...(grace !== undefined ? { terminationGracePeriodSeconds: grace } : {}),
    annotations,
  });
}
