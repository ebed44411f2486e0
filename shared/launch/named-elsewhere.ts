/**
 * One pod, one claim, between two writers of claims. The provisioner and a disruption command's
 * replacement each decide on the claims they read, then write their own: when both decide at one
 * instant, each can read before the other writes, and both record the same pod (a pending pod, or
 * a deleting node's pod) as the reason for their claim. Each writer therefore reads the
 * claims again after its write and gives up the pods another claim names ({@link yieldPodsNamedElsewhere}):
 * of two such writes, the later one's read always sees the earlier write, so at least one gives
 * way and no pod stays the reason for two launching claims. When both see each other, both give
 * way; the pod is solved again on the next pass, with the room the claims hold.
 */
import { InFlightPhases, nominates, type NodeClaim } from '../api/nodeclaim.ts';
import type { NodeClaimStore } from '../api/ports.ts';
import { ConflictError } from '../api/errors.ts';

/**
 * The pods `claim` names that another claim also names while it is in flight and nominates them
 * (nodeclaim.ts `nominates`: the rule by which the provisioner counts a pod as placed on a claim).
 * Claims named in `ignore` (the writer's own, made in the same decision) do not count; nor do
 * the pods in `keep` (those the writer must keep whatever others say).
 */
export function podsNamedElsewhere(
  claim: Pick<NodeClaim, 'name' | 'pods'>,
  others: readonly NodeClaim[],
  now: Date,
  opts: { ignore?: ReadonlySet<string>; keep?: ReadonlySet<string> } = {},
): string[] {
  const named = new Set<string>();
  for (const o of others) {
    if (o.name === claim.name || opts.ignore?.has(o.name) || !InFlightPhases.has(o.phase) || !nominates(o, now)) continue;
    for (const p of o.pods) named.add(p);
  }
  return claim.pods.filter((p) => named.has(p) && !opts.keep?.has(p));
}

/**
 * After writing `claim` (not launched yet, or launched: only its record changes), gives up the
 * pods another of `others` names ({@link podsNamedElsewhere}); `others` are the claims the
 * writer read after its write, consistently (the provisioner its in-flight claims, the
 * disruption loop every claim: the reads each is allowed):
 * they leave the claim's `pods`; with none left and `deleteWhenEmpty`, the claim is deleted
 * (it has nothing to launch for). A version conflict (the claim changed meanwhile) re-reads it.
 * @returns the claim as stored now (undefined when deleted) and the pods given up.
 */
export async function yieldPodsNamedElsewhere(
  deps: { store: NodeClaimStore },
  claim: NodeClaim,
  others: readonly NodeClaim[],
  now: Date,
  opts: { ignore?: ReadonlySet<string>; keep?: ReadonlySet<string>; deleteWhenEmpty?: boolean } = {},
): Promise<{ claim?: NodeClaim; given: string[] }> {
  let current: NodeClaim | undefined = claim;
  for (let attempt = 1; current; attempt++) {
    const given = podsNamedElsewhere(current, others, now, opts);
    if (given.length === 0) return { claim: current, given };
    const pods = current.pods.filter((p) => !given.includes(p));
    if (pods.length === 0 && opts.deleteWhenEmpty) {
      await deps.store.delete(current.name);
      return { given };
    }
    try {
      return { claim: await deps.store.update({ ...current, pods }), given };
    } catch (err) {
      if (!(err instanceof ConflictError) || attempt >= 3) throw err;
      current = await deps.store.get(claim.name);
    }
  }
  return { given: [] };
}
