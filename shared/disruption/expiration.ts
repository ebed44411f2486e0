/**
 * Forceful expiration (Karpenter v1): a node whose NodeClaim has lived past expireAfter is
 * terminated now — no budget, no do-not-disrupt, no replacement pre-spin (the drain still
 * respects PDBs until terminationGracePeriod). Source: KC pkg/controllers/nodeclaim/expiration/controller.go;
 * KA docs concepts/disruption.md (forceful methods).
 * Pools annotated nodefleet.io/graceful-expiration are left to graceful-expiration.ts instead.
 */
export { claimExpireAt, isClaimExpired } from './claim-expiry.ts';
import { hasGracefulExpiration } from './graceful-expiration.ts';
import type { ClusterState } from './state.ts';
import type { Expiration } from './types.ts';

/** Expired candidates of pools without graceful expiration, oldest expiry first. */
export function findExpirations(state: ClusterState): Expiration[] {
  const now = state.now.getTime();
  const out: Expiration[] = [];
  for (const c of state.candidates) {
    if (c.expireAt === undefined || Date.parse(c.expireAt) > now) continue;
    if (hasGracefulExpiration(state.nodePools.get(c.nodePool))) continue;
    out.push({
      nodeName: c.nodeName,
      nodeClaim: c.nodeClaim,
      nodePool: c.nodePool,
      ...(c.instanceId ? { instanceId: c.instanceId } : {}),
      expiredAt: c.expireAt,
    });
  }
  return out.sort((a, b) => a.expiredAt.localeCompare(b.expiredAt) || a.nodeName.localeCompare(b.nodeName));
}
