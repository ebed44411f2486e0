/**
 * The disruption conditions Karpenter keeps on a NodeClaim, from one disruption pass: Drifted
 * (True, reason = the drift found; removed once it is gone) and Consolidatable (True once
 * consolidateAfter has passed since the last pod event; removed otherwise), as Karpenter's
 * NodeClaim disruption controller sets them. The handler records the changed claims; gc mirrors
 * them into the cluster's NodeClaim objects (`kubectl get nodeclaims -o wide` shows Drifted).
 */
import { getCondition, setCondition, type NodeClaim, type NodeClaimConditionType } from '../api/nodeclaim.ts';
import type { ClusterState } from './state.ts';

/** The claims whose Drifted or Consolidatable condition this pass changes (only those). Pure. */
export function claimConditionUpdates(state: ClusterState): NodeClaim[] {
  const claims = new Map(state.managed.map((m) => [m.claim.name, m.claim]));
  const nowIso = state.now.toISOString();
  const out: NodeClaim[] = [];
  for (const c of state.candidates) {
    const claim = claims.get(c.nodeClaim);
    if (!claim) continue;
    let next = mark(claim, 'Drifted', c.driftObserved, nowIso);
    next = mark(next, 'Consolidatable', c.consolidatable ? 'Consolidatable' : undefined, nowIso);
    if (next !== claim) out.push(next);
  }
  return out;
}

/** `reason` set: the condition True with it; undefined: the condition removed. The same claim object when nothing changes. */
function mark(claim: NodeClaim, type: NodeClaimConditionType, reason: string | undefined, nowIso: string): NodeClaim {
  const prev = getCondition(claim, type);
  if (reason === undefined) return prev ? { ...claim, conditions: claim.conditions.filter((x) => x.type !== type) } : claim;
  if (prev?.status === 'True' && prev.reason === reason) return claim;
  return setCondition(claim, type, 'True', nowIso, reason);
}
