/**
 * NodeClaim writes shared by the termination tasks: read, change, conditional write, re-read on a
 * lost race (a few times; then the ConflictError goes to the state machine's Retry).
 */
import type { NodeClaim } from '../../shared/api/nodeclaim.ts';
import type { NodeClaimStore } from '../../shared/api/ports.ts';
import { ConflictError } from '../../shared/api/errors.ts';

/** In-task attempts on a version conflict before giving up to the state machine's Retry. */
const ConflictAttempts = 3;

/**
 * Applies `change` to the stored claim and writes it conditionally on its version.
 * `change` returns undefined to skip the write. Returns the stored claim, or undefined if absent.
 * @throws ConflictError after ConflictAttempts lost races.
 */
export async function updateClaim(
  store: NodeClaimStore,
  name: string,
  change: (c: NodeClaim) => NodeClaim | undefined,
): Promise<NodeClaim | undefined> {
  for (let attempt = 1; ; attempt++) {
    const claim = await store.get(name);
    if (!claim) return undefined;
    const next = change(claim);
    if (!next) return claim;
    try {
      return await store.update(next);
    } catch (err) {
      if (!(err instanceof ConflictError) || attempt >= ConflictAttempts) throw err;
    }
  }
}
