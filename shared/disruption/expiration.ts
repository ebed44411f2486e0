/**
 * Forceful expiration (Karpenter v1): a node whose NodeClaim has lived past expireAfter is
 * terminated now — no budget, no do-not-disrupt, no replacement pre-spin (the drain still
 * respects PDBs until terminationGracePeriod). Source: KC pkg/controllers/nodeclaim/expiration/controller.go;
 * KA docs concepts/disruption.md (forceful methods).
 * Pools annotated nodefleet.io/graceful-expiration are left to graceful-expiration.ts instead.
 */
import type { NodeClaim } from '../api/nodeclaim.ts';
import type { NodePool } from '../api/nodepool.ts';
import { parseDurationSeconds } from './duration.ts';
import { hasGracefulExpiration } from './graceful-expiration.ts';
import type { ClusterState } from './state.ts';
import type { Expiration } from './types.ts';

/**
 * When a NodeClaim expires: its own `expireAt` (set at launch from the template's expireAfter),
 * else its `createdAt` plus the NodePool's expireAfter; undefined = never. Always the stored
 * claim's times, never a Node's creationTimestamp (a view can say anything about a Node).
 * @throws ValidationError when the NodePool's expireAfter does not parse.
 */
export function claimExpireAt(claim: Pick<NodeClaim, 'createdAt' | 'expireAt'>, nodePool: NodePool | undefined): string | undefined {
  if (claim.expireAt) return claim.expireAt;
  const seconds = parseDurationSeconds(nodePool?.spec.template.spec.expireAfter);
  return seconds === undefined ? undefined : new Date(Date.parse(claim.createdAt) + seconds * 1000).toISOString();
}

/** Whether the claim has expired at `now` ({@link claimExpireAt}). */
export function isClaimExpired(claim: Pick<NodeClaim, 'createdAt' | 'expireAt'>, nodePool: NodePool | undefined, now: Date): boolean {
  const at = claimExpireAt(claim, nodePool);
  return at !== undefined && Date.parse(at) <= now.getTime();
}

/** Expired candidates of pools without graceful expiration, oldest expiry first. */
export function findExpirations(state: ClusterState): Expiration[] {
  const now = state.now.getTime();
  const out: Expiration[] = [];
  for (const c of state.candidates) {
    if (c.expireAt === undefined || Date.parse(c.expireAt) > now) continue;
    if (hasGracefulExpiration(state.nodePools.get(c.nodePool))) continue;
    out.push({ nodeName: c.nodeName, nodeClaim: c.nodeClaim, nodePool: c.nodePool, ...(c.instanceId ? { instanceId: c.instanceId } : {}), expiredAt: c.expireAt });
  }
  return out.sort((a, b) => a.expiredAt.localeCompare(b.expiredAt) || a.nodeName.localeCompare(b.nodeName));
}
