/**
 * From the scheduler's NewNodeClaim to the stored NodeClaim: a fresh random name, requirements,
 * labels, taints, requests, hashes, expiry; and the log/metric vocabulary Karpenter uses.
 */
import type { NewNodeClaim } from '../../shared/scheduling/index.ts';
import { NodeClaimSchema, randomNodeClaimName, type NodeClaim } from '../../shared/api/nodeclaim.ts';
import type { EC2NodeClass, NodePool } from '../../shared/api/nodepool.ts';
import { formatResources, type Resources } from '../../shared/api/quantity.ts';
import { objectKey } from '../../shared/api/kube.ts';
import { nodeClassHash, nodePoolHash, NodePoolHashVersion } from '../../shared/api/hash.ts';
import { AnnotationNodeClassHash, AnnotationNodePoolHash, AnnotationNodePoolHashVersion, LabelInstanceType, LabelNodePool } from '../../shared/api/labels.ts';
import type { RequirementSpec } from '../../shared/api/requirements.ts';
import { parseDurationSeconds } from '../../shared/api/duration.ts';

/** Per-resource minimum of the launch types' allocatable: what the claim can hold for sure before launch. */
export function minAllocatable(c: NewNodeClaim): Resources {
  const out: Resources = {};
  const types = c.launchInstanceTypes.length ? c.launchInstanceTypes : c.instanceTypes;
  for (const t of types) for (const [k, v] of Object.entries(t.allocatable)) out[k] = out[k] === undefined ? v : Math.min(out[k], v);
  return out;
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
  const narrowed = (r?: RequirementSpec): RequirementSpec => ({ key: LabelInstanceType, operator: 'In', values, ...(r?.minValues !== undefined ? { minValues: r.minValues } : {}) });
  if (!specs.some((r) => r.key === LabelInstanceType)) return [...specs, narrowed()];
  return specs.map((r) => (r.key === LabelInstanceType ? narrowed(r) : r));
}

/**
 * Builds the NodeClaim to store for a scheduler decision, named `<nodepool>-<random>` (or `name`,
 * for offline previews such as `plan`, which name claims by shared/aws/launch-preview.ts
 * `previewNodeClaimName`).
 * @param opts.random uniform in [0, 1) for the name suffix
 */
export function toNodeClaim(c: NewNodeClaim, opts: { cluster: string; nodePool: NodePool; nodeClass?: EC2NodeClass; now: Date } & ({ random: () => number } | { name: string })): NodeClaim {
  const pods = c.pods.map((p) => objectKey(p));
  const tmpl = opts.nodePool.spec.template.spec;
  const expireSeconds = parseDurationSeconds(tmpl.expireAfter);
  const npHash = nodePoolHash(opts.nodePool);
  const ncHash = opts.nodeClass ? nodeClassHash(opts.nodeClass) : undefined;
  return NodeClaimSchema.parse({
    name: 'name' in opts ? opts.name : randomNodeClaimName(c.nodePool, opts.random),
    cluster: opts.cluster,
    nodePool: c.nodePool,
    nodeClass: tmpl.nodeClassRef.name,
    requirements: launchSetRequirements(c),
    taints: c.taints,
    startupTaints: c.startupTaints,
    labels: { ...c.labels, [LabelNodePool]: c.nodePool },
    resources: { requests: formatResources(c.requests) },
    allocatable: formatResources(minAllocatable(c)),
    nodePoolHash: npHash,
    nodeClassHash: ncHash,
    createdAt: opts.now.toISOString(),
    ...(expireSeconds !== undefined ? { expireAt: new Date(opts.now.getTime() + expireSeconds * 1000).toISOString() } : {}),
    ...(tmpl.terminationGracePeriod ? { terminationGracePeriodSeconds: parseDurationSeconds(tmpl.terminationGracePeriod) } : {}),
    pods,
    phase: 'Pending',
    version: 0,
    // The template's annotations go to the claim and, at registration, to its node (as Karpenter's
    // NodeClaim → Node sync does); the hash annotations are nodefleet's own and win.
    annotations: {
      ...(opts.nodePool.spec.template.metadata?.annotations ?? {}),
      [AnnotationNodePoolHash]: npHash,
      [AnnotationNodePoolHashVersion]: NodePoolHashVersion,
      ...(ncHash ? { [AnnotationNodeClassHash]: ncHash } : {}),
    },
  });
}

/** Karpenter's "a, b, c, d, e and N other(s)" rendering of a list (first 5). */
export function firstFive(items: readonly string[]): string {
  if (items.length <= 5) return items.join(', ');
  return `${items.slice(0, 5).join(', ')} and ${items.length - 5} other(s)`;
}

export { providerIdOf } from '../../shared/api/provider-id.ts';
