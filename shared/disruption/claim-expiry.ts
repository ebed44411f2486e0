/** When a stored NodeClaim expires (its own record, never a Node's creationTimestamp). */
import type { NodeClaim } from '../api/nodeclaim.ts';
import type { NodePool } from '../api/nodepool.ts';
import { parseDurationSeconds } from '../api/duration.ts';

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
