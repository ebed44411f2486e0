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
import { AnnotationNodeClassHash, AnnotationNodePoolHash, AnnotationNodePoolHashVersion, LabelNodePool } from '../../shared/api/labels.ts';
import { parseDurationSeconds } from '../../shared/disruption/duration.ts';

/** Per-resource minimum of the launch types' allocatable: what the claim can hold for sure before launch. */
export function minAllocatable(c: NewNodeClaim): Resources {
  const out: Resources = {};
  const types = c.launchInstanceTypes.length ? c.launchInstanceTypes : c.instanceTypes;
  for (const t of types) for (const [k, v] of Object.entries(t.allocatable)) out[k] = out[k] === undefined ? v : Math.min(out[k], v);
  return out;
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
    requirements: c.requirements.toSpecs(),
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
    annotations: {
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

/** `aws:///<zone>/<instance-id>` as the AWS cloud provider writes spec.providerID. */
export function providerIdOf(zone: string, instanceId: string): string {
  return `aws:///${zone}/${instanceId}`;
}
