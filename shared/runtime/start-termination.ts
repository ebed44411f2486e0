/**
 * The one way a NodeClaim's termination execution is started for a decision (disruption, a deleted
 * Node, a deleted NodePool): the target is the stored claim's — its node name and instance id,
 * never the caller's — and the deadline the claim's own terminationGracePeriod from now (KC: the
 * NodeClaim's spec, copied from its NodePool at creation; shared/api/termination-target.ts).
 */
import type { NodeClaim } from '../api/nodeclaim.ts';
import type { TerminationInput, TerminationStarter } from '../api/ports.ts';
import { NodefleetError } from '../api/errors.ts';
import { instanceIdOfClaim } from '../api/provider-id.ts';

/**
 * Starts (or finds: already running = success) the claim's termination; a claim without a
 * terminationGracePeriod drains with no deadline. `forceful`: the deadline is now, whatever the
 * claim's grace period (node repair: Karpenter sets the NodeClaim's termination timestamp to now).
 * @returns the execution ARN. @throws NodefleetError when no starter is configured.
 */
export async function startClaimTermination(
  termination: TerminationStarter | undefined,
  claim: NodeClaim,
  opts: { reason: TerminationInput['reason']; now: Date; budgetNodePool?: string; forceful?: boolean },
): Promise<string> {
  if (!termination) throw new NodefleetError('termination state machine not configured (NODEFLEET_TERMINATION_STATE_MACHINE_ARN)');
  const tgp = claim.terminationGracePeriodSeconds;
  const instanceId = instanceIdOfClaim(claim);
  return termination.start({
    nodeClaim: claim.name,
    ...(claim.nodeName ? { nodeName: claim.nodeName } : {}),
    ...(instanceId ? { instanceId } : {}),
    reason: opts.reason,
    ...(opts.forceful ? { deadlineEpochMs: opts.now.getTime() } : tgp !== undefined ? { deadlineEpochMs: opts.now.getTime() + tgp * 1000 } : {}),
    ...(opts.budgetNodePool ? { budgetNodePool: opts.budgetNodePool } : {}),
  });
}
