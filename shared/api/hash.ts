/**
 * Drift hashes of NodePool and EC2NodeClass, stamped on NodeClaims at launch
 * (annotations karpenter.sh/nodepool-hash and karpenter.k8s.aws/ec2nodeclass-hash) and compared
 * later: a different hash means the node was built from an older spec and has drifted.
 *
 * What is hashed follows Karpenter: KC pkg/apis/v1/nodepool.go `Hash()` hashes `spec.template`
 * only (so disruption, budgets, limits, weight and replicas never cause drift) and ignores
 * `requirements` (requirement drift is checked separately against the node's labels,
 * `RequirementsDrifted`); KA pkg/apis/v1/ec2nodeclass.go `Hash()` hashes the spec without the
 * selector terms (those drift through the resolved status: AMIDrift, SubnetDrift, …).
 * Like Karpenter's hashstructure options (`SlicesAsSets`, `IgnoreZeroValue`, `ZeroNil`), lists are
 * order-insensitive, empty values are the same as absent, and map key order never matters.
 *
 * The digest is SHA-256 over a canonical JSON form, hex, first 16 characters; it is not
 * byte-compatible with Karpenter's numeric hash (nodefleet only compares its own hashes).
 */
import { createHash } from 'node:crypto';
import type { EC2NodeClass, NodePool } from './nodepool.ts';

/** Version of the hashing scheme: bump when what is hashed changes, so old claims are not all drifted. */
export const NodePoolHashVersion = 'v1';
export const NodeClassHashVersion = 'v1';

/** Canonical form: keys sorted, empty strings / lists / maps dropped, lists sorted by their canonical JSON. */
function canonical(v: unknown): unknown {
  if (v === null || v === undefined) return undefined;
  if (Array.isArray(v)) {
    const items = v.map(canonical).filter((x) => x !== undefined);
    if (items.length === 0) return undefined;
    return items
      .map((x) => JSON.stringify(x))
      .sort()
      .map((s) => JSON.parse(s) as unknown);
  }
  if (typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v as object).sort()) {
      const c = canonical((v as Record<string, unknown>)[k]);
      if (c !== undefined) out[k] = c;
    }
    return Object.keys(out).length === 0 ? undefined : out;
  }
  // Optional fields in Karpenter are pointers: an explicit false or 0 differs from unset.
  if (v === '') return undefined;
  return v;
}

/** Stable JSON of a value (the canonical form above); exported for tests and debugging. */
export function canonicalJson(v: unknown): string {
  return JSON.stringify(canonical(v) ?? null);
}

function digest(v: unknown): string {
  return createHash('sha256').update(canonicalJson(v)).digest('hex').slice(0, 16);
}

/**
 * Drift hash of a NodePool: `spec.template` without `spec.template.spec.requirements`.
 * Pass a parsed NodePool (defaults applied) so an omitted `expireAfter` hashes like `720h`.
 * Changes to labels, annotations, taints, startupTaints, nodeClassRef, expireAfter or
 * terminationGracePeriod change it; budgets, disruption, limits, weight and requirement order do not.
 */
export function nodePoolHash(np: Pick<NodePool, 'spec'>): string {
  const { requirements: _ignored, ...templateSpec } = np.spec.template.spec;
  return digest({ metadata: np.spec.template.metadata, spec: templateSpec });
}

/** Fields of EC2NodeClass.spec that do not enter the static hash (they drift through status). */
const NodeClassHashIgnored = [
  'subnetSelectorTerms',
  'securityGroupSelectorTerms',
  'amiSelectorTerms',
  'capacityReservationSelectorTerms',
  'placementGroupSelector',
];

/**
 * Static drift hash of an EC2NodeClass: its spec minus the selector terms (kubelet, block
 * devices, userData, tags, metadata options, role / instance profile, AMI family, … count).
 */
export function nodeClassHash(nc: Pick<EC2NodeClass, 'spec'>): string {
  const spec: Record<string, unknown> = { ...nc.spec };
  for (const k of NodeClassHashIgnored) delete spec[k];
  return digest(spec);
}

/** 32-bit FNV-1a of the UTF-16 code units of `text` (a short stable id part; callers format it). */
export function fnv1a32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}
