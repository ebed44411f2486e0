/**
 * The cluster's karpenter.sh/v1 NodeClaim objects kept in step with the records (one gc pass):
 * `kubectl get nodeclaims`, `kubectl wait`, eks-node-viewer and GitOps health checks read them.
 * DynamoDB stays the record nodefleet decides on; what to write is the pure
 * shared/api/nodeclaim.ts `planNodeClaimObjects`. Each write stands alone (one refused call does
 * not stop the others); the next pass writes what is still out of step.
 */
import { planNodeClaimObjects, type KubeNodeClaim, type NodeClaim } from '../../shared/api/nodeclaim.ts';
import { managedNodeClassGroup } from '../../shared/api/nodepool.ts';
import type { Deps } from '../../shared/runtime/deps.ts';

export interface NodeClaimObjectsResult {
  /** Objects created or updated. */
  put: string[];
  /** Mirrors removed (their record gone or Terminated). */
  removed: string[];
  /** Record names whose object is another controller's (no mirror annotation): left alone. */
  foreign: string[];
  failed: { action: string; subject: string; error: string }[];
}

/** Writes the NodeClaim objects `records` call for; `listed`: the objects as the caller listed them this pass (else listed here). */
export async function syncNodeClaimObjects(
  deps: Pick<Deps, 'env' | 'kube' | 'log'>,
  records: readonly NodeClaim[],
  listed?: readonly KubeNodeClaim[],
): Promise<NodeClaimObjectsResult> {
  const out: NodeClaimObjectsResult = { put: [], removed: [], foreign: [], failed: [] };
  const objects = listed ?? (await deps.kube.listNodeClaimObjects());
  const plan = planNodeClaimObjects(records, objects, { cluster: deps.env.clusterName, nodeClassGroup: managedNodeClassGroup(deps.env.besideKarpenter) });
  out.foreign = plan.foreign;
  for (const name of plan.foreign)
    deps.log.warn('nodeclaim object of this name belongs to another controller, not mirroring the record', { NodeClaim: { name } });
  const attempt = async (action: string, subject: string, fn: () => Promise<void>) => {
    try {
      await fn();
    } catch (err) {
      deps.log.error('nodeclaim object write failed', { action, NodeClaim: { name: subject }, error: (err as Error).message });
      out.failed.push({ action, subject, error: `${(err as Error).name}: ${(err as Error).message}` });
    }
  };
  for (const o of plan.put)
    await attempt('put-nodeclaim-object', o.metadata.name, async () => {
      await deps.kube.putNodeClaimObject(o);
      out.put.push(o.metadata.name);
    });
  for (const o of plan.remove)
    await attempt('delete-nodeclaim-object', o.metadata.name, async () => {
      await deps.kube.deleteNodeClaimObject(o);
      out.removed.push(o.metadata.name);
    });
  return out;
}
