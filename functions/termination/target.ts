/**
 * The target of every termination task, from the stored NodeClaim only (shared/api/termination-target.ts):
 * the claim must exist, the input's nodeName / instanceId (a request) must be the claim's own, the
 * live Node must carry the claim's providerID and NodePool, the instance the tags of this cluster,
 * the claim's NodePool and the claim. Anything else is refused with TargetRefusedError, which the
 * state machine ends on (Refused): nothing is tainted, evicted, deleted or terminated.
 */
import type { Node } from '../../shared/api/kube.ts';
import type { NodeClaim } from '../../shared/api/nodeclaim.ts';
import type { CloudInstance } from '../../shared/api/ports.ts';
import { TargetRefusedError } from '../../shared/api/errors.ts';
import { instanceDisagreement, nodeDisagreement, requestDisagreement } from '../../shared/api/termination-target.ts';
import type { TaskInput, TerminationDeps } from './schemas.ts';
import { updateClaim } from './claims.ts';

export interface VerifiedTarget {
  claim: NodeClaim;
  /** The claim's node (null when it never registered). */
  nodeName: string | null;
  /** The claim's instance (null when it never launched). */
  instanceId: string | null;
  /** The live Node, when checked and present. */
  node?: Node;
  /** The instance as EC2 describes it, when checked and present. */
  instance?: CloudInstance;
}

/** States in which the instance is going or gone: nothing more is done to it, so its tags do not matter. */
const InstanceGone = new Set(['shutting-down', 'terminated']);

/**
 * Reads the claim (and, as asked, the live Node and the instance) and checks they agree.
 * `record`: when the claim itself disagrees with the Node or the instance (so every attempt would
 * be refused), mark this attempt's termination record ended `refused`, so gc does not carry it on.
 * @throws TargetRefusedError with the reason; whatever the ports throw (TransientError …).
 */
export async function verifiedTarget(
  task: string,
  input: TaskInput,
  deps: Pick<TerminationDeps, 'store' | 'clock' | 'log' | 'clusterName'> & Partial<Pick<TerminationDeps, 'kube' | 'cloud'>>,
  check: { node?: boolean; instance?: boolean; record?: boolean } = {},
): Promise<VerifiedTarget> {
  const claim = await deps.store.get(input.nodeClaim);
  if (!claim) return refuse(task, input, deps, `no nodeclaim ${input.nodeClaim} in the table`);
  const asked = requestDisagreement(claim, input);
  if (asked) return refuse(task, input, deps, asked);
  const out: VerifiedTarget = { claim, nodeName: claim.nodeName ?? null, instanceId: claim.instanceId ?? null };
  if (check.node && claim.nodeName && deps.kube) {
    const node = await deps.kube.getNode(claim.nodeName);
    const wrong = node && nodeDisagreement(claim, node);
    if (wrong) return refuse(task, input, deps, wrong, check.record ? claim : undefined);
    if (node) out.node = node;
  }
  if (check.instance && claim.instanceId && deps.cloud) {
    const instance = await deps.cloud.get(claim.instanceId);
    const wrong = instance && !InstanceGone.has(instance.state) && instanceDisagreement(claim, instance, deps.clusterName ?? claim.cluster);
    if (wrong) return refuse(task, input, deps, wrong, check.record ? claim : undefined);
    if (instance) out.instance = instance;
  }
  return out;
}

async function refuse(
  task: string,
  input: TaskInput,
  deps: Pick<TerminationDeps, 'store' | 'clock' | 'log'>,
  reason: string,
  recordOn?: NodeClaim,
): Promise<never> {
  deps.log?.info('termination refused', { task, NodeClaim: input.nodeClaim, reason });
  const attempt = input.attempt ?? 1;
  if (recordOn?.phase === 'Terminating' && recordOn.termination?.attempt === attempt) {
    const at = deps.clock.now().toISOString();
    await updateClaim(deps.store, recordOn.name, (c) => {
      const t = c.termination;
      if (!t || t.attempt !== attempt || t.ended?.attempt === attempt) return undefined;
      return { ...c, lastError: `TargetRefused: ${reason}`.slice(0, 1024), termination: { ...t, ended: { attempt, outcome: 'refused', at } } };
    });
  }
  throw new TargetRefusedError(reason);
}
