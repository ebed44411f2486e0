/**
 * A new NodeClaim record, from the scheduler's NewNodeClaim (provisioner) or a disruption
 * replacement: name, requirements narrowed to the launch set, labels, taints, requests,
 * allocatable, hashes, expiry; and the log vocabulary Karpenter uses.
 */
import type { NewNodeClaim } from '../scheduling/index.ts';
import { NodeClaimSchema, randomNodeClaimName, type NodeClaim } from '../api/nodeclaim.ts';
import type { EC2NodeClass, NodePool } from '../api/nodepool.ts';
import { formatResources, type Resources } from '../api/quantity.ts';
import { objectKey } from '../api/kube.ts';
import { nodeClassHash, nodePoolHash, NodePoolHashVersion } from '../api/hash.ts';
import { AnnotationNodeClassHash, AnnotationNodePoolHash, AnnotationNodePoolHashVersion, LabelInstanceType, LabelNodePool } from '../api/labels.ts';
import type { RequirementSpec } from '../api/requirements.ts';
import { parseDurationSeconds } from '../api/duration.ts';

/** Per-resource minimum of the types' allocatable: what a claim that may become any of them holds for sure before launch. */
export function minAllocatableOf(types: readonly { allocatable: Resources }[]): Resources {
  const out: Resources = {};
  for (const t of types) for (const [k, v] of Object.entries(t.allocatable)) out[k] = out[k] === undefined ? v : Math.min(out[k], v);
  return out;
}

/** {@link minAllocatableOf} the claim's launch set (else its compatible types). */
export function minAllocatable(c: NewNodeClaim): Resources {
  return minAllocatableOf(c.launchInstanceTypes.length ? c.launchInstanceTypes : c.instanceTypes);
}

/**
 * The claim's requirements with the instance-type requirement narrowed to the launch set (the
 * cheapest ≤ 60 types the scheduler chose, minValues re-checked): what the claim can become, and
 * all a launch or a retry after insufficient capacity may use. Storing the full compatible list
 * (up to ~600 names, ~10 KB) made every NodeClaim item, and every read of all claims, grow with
 * the catalog. Karpenter does the same when it turns a NodeClaimTemplate into a NodeClaim (its
 * requirements keep the 60 cheapest types: KC pkg/controllers/provisioning/scheduling/nodeclaimtemplate.go).
 * Without a launch set (no type left) the requirements are returned as they are.
 */
export function launchSetRequirements(c: Pick<NewNodeClaim, 'requirements' | 'launchInstanceTypes'>): RequirementSpec[] {
  const specs = c.requirements.toSpecs();
  if (c.launchInstanceTypes.length === 0) return specs;
  const values = c.launchInstanceTypes.map((t) => t.name);
  const narrowed = (r?: RequirementSpec): RequirementSpec => ({
    key: LabelInstanceType,
    operator: 'In',
    values,
    ...(r?.minValues !== undefined ? { minValues: r.minValues } : {}),
  });
  if (!specs.some((r) => r.key === LabelInstanceType)) return [...specs, narrowed()];
  return specs.map((r) => (r.key === LabelInstanceType ? narrowed(r) : r));
}

/**
 * What a new NodeClaim is made of, whichever step decided it (the provisioner's scheduling, or a
 * disruption command's replacement): requirements with the launch set, taints, labels, requests
 * and allocatable as Kubernetes quantities, and the pods it is for (namespace/name).
 */
export interface NewClaimSpec {
  nodePool: string;
  requirements: RequirementSpec[];
  taints: NodeClaim['taints'];
  startupTaints: NodeClaim['startupTaints'];
  labels: Record<string, string>;
  requests: Record<string, string>;
  /** What the claim holds for sure before launch (the launch types' per-resource minimum). */
  allocatable?: Record<string, string>;
  pods: string[];
}

/**
 * The NodeClaim to store for a new claim of `nodePool` (Karpenter's NodeClaimTemplate →
 * NodeClaim): the template's labels (in `spec.labels`) and annotations, the drift hashes, expiry
 * and terminationGracePeriod from the NodePool, named `name`. `annotations` are added last.
 * One home for both the provisioner and disruption's replacements (KC: disruption calls the
 * provisioner's CreateNodeClaims).
 */
export function newNodeClaimRecord(
  spec: NewClaimSpec,
  opts: { cluster: string; nodePool: NodePool; nodeClass?: EC2NodeClass; now: Date; name: string; annotations?: Record<string, string> },
): NodeClaim {
  const tmpl = opts.nodePool.spec.template.spec;
  const expireSeconds = parseDurationSeconds(tmpl.expireAfter);
  const graceSeconds = parseDurationSeconds(tmpl.terminationGracePeriod);
  const npHash = nodePoolHash(opts.nodePool);
  const ncHash = opts.nodeClass ? nodeClassHash(opts.nodeClass) : undefined;
  return NodeClaimSchema.parse({
    name: opts.name,
    cluster: opts.cluster,
    nodePool: spec.nodePool,
    nodeClass: tmpl.nodeClassRef.name,
    requirements: spec.requirements,
    taints: spec.taints,
    startupTaints: spec.startupTaints,
    labels: { ...spec.labels, [LabelNodePool]: spec.nodePool },
    resources: { requests: spec.requests },
    ...(spec.allocatable ? { allocatable: spec.allocatable } : {}),
    nodePoolHash: npHash,
    nodeClassHash: ncHash,
    createdAt: opts.now.toISOString(),
    ...(expireSeconds !== undefined ? { expireAt: new Date(opts.now.getTime() + expireSeconds * 1000).toISOString() } : {}),
    ...(graceSeconds !== undefined ? { terminationGracePeriodSeconds: graceSeconds } : {}),
    pods: spec.pods,
    phase: 'Pending',
    version: 0,
    // The template's annotations go to the claim and, at registration, to its node (as Karpenter's
    // NodeClaim → Node sync does); the hash annotations are nodefleet's own and win.
    annotations: {
      ...(opts.nodePool.spec.template.metadata?.annotations ?? {}),
      [AnnotationNodePoolHash]: npHash,
      [AnnotationNodePoolHashVersion]: NodePoolHashVersion,
      ...(ncHash ? { [AnnotationNodeClassHash]: ncHash } : {}),
      ...(opts.annotations ?? {}),
    },
  });
}

/**
 * Builds the NodeClaim to store for a scheduler decision, named `<nodepool>-<random>` (or `name`,
 * for offline previews such as `plan`, which name claims by shared/aws/launch-preview.ts
 * `previewNodeClaimName`).
 * @param opts.random uniform in [0, 1) for the name suffix
 */
export function toNodeClaim(
  c: NewNodeClaim,
  opts: { cluster: string; nodePool: NodePool; nodeClass?: EC2NodeClass; now: Date } & ({ random: () => number } | { name: string }),
): NodeClaim {
  return newNodeClaimRecord(
    {
      nodePool: c.nodePool,
      requirements: launchSetRequirements(c),
      taints: c.taints,
      startupTaints: c.startupTaints,
      labels: c.labels,
      requests: formatResources(c.requests),
      allocatable: formatResources(minAllocatable(c)),
      pods: c.pods.map((p) => objectKey(p)),
    },
    { ...opts, name: 'name' in opts ? opts.name : randomNodeClaimName(c.nodePool, opts.random) },
  );
}

/** Karpenter's "a, b, c, d, e and N other(s)" rendering of a list (first 5). */
export function firstFive(items: readonly string[]): string {
  if (items.length <= 5) return items.join(', ');
  return `${items.slice(0, 5).join(', ')} and ${items.length - 5} other(s)`;
}
