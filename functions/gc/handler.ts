/**
 * Garbage collection Lambda (EventBridge schedule, every minute):
 * - NodeClaims not launched {@link LaunchTimeoutSeconds} after creation, or launched but not
 *   registered {@link RegistrationTimeoutSeconds} after launch → terminate the instance (if any)
 *   and delete the claim (KC pkg/controllers/nodeclaim/lifecycle/liveness.go).
 * - Instances tagged for this cluster with no NodeClaim, older than {@link OrphanMinAgeSeconds}
 *   → terminate (KA pkg/controllers/nodeclaim/garbagecollection/controller.go).
 * - NodeClaims whose instance is terminated or gone → delete the node (if any) and the claim.
 * - Disruption budget slots (BudgetCounter) whose holder is gone, or abandoned for 30 minutes by a
 *   crashed execution → released (shared/disruption/gc.ts `staleBudgetHolders`), so a lost
 *   Finalize never blocks a NodePool's budget for good.
 * - Launch templates of this cluster no instance uses, older than the provider's minimum age →
 *   deleted (shared/aws/ec2.ts `collectLaunchTemplates`; Karpenter deletes its templates too).
 * Every action is idempotent: terminate/delete of something already gone succeeds.
 */
import type { Context } from 'aws-lambda';
import { getCondition, isTrue, type NodeClaim } from '../../shared/api/nodeclaim.ts';
import type { CloudInstance } from '../../shared/api/ports.ts';
import { staleBudgetHolders } from '../../shared/disruption/gc.ts';
import type { Deps } from '../../shared/runtime/deps.ts';
import { MetricNames } from '../../shared/runtime/observability.ts';
import { wrapHandler } from '../../shared/runtime/middleware.ts';
import { Tags } from '../../shared/aws/ec2.ts';

/** Karpenter's launch timeout: a claim not launched 5 minutes after creation is deleted (KC liveness.go `launchTimeout`). */
export const LaunchTimeoutSeconds = 5 * 60;
/** Karpenter's registration timeout: 15 minutes after launch without a node (KC liveness.go `registrationTimeout`). */
export const RegistrationTimeoutSeconds = 15 * 60;
/**
 * Instances younger than this are never treated as orphans: CreateFleet returns before the claim
 * records the instance id, and DescribeInstances is eventually consistent (KA garbagecollection: 30 s).
 */
export const OrphanMinAgeSeconds = 30;

/** What gc uses; without `budgets` no budget slot is reclaimed. */
export type GcDeps = Pick<Deps, 'clock' | 'log' | 'metrics' | 'store' | 'cloud' | 'kube' | 'budgets'>;

export interface GcResult {
  /** Claims deleted, with why. */
  deleted: { nodeClaim: string; reason: 'launch_timeout' | 'registration_timeout' | 'instance_terminated' }[];
  /** Instances terminated. */
  terminated: string[];
  /** Budget slots released (holder = NodeClaim name, or node name for a node without claim). */
  releasedBudgetSlots: { nodePool: string; holder: string; reason: 'gone' | 'abandoned' }[];
}

const TerminalStates = new Set<CloudInstance['state']>(['terminated']);

function ageSeconds(from: string | undefined, nowMs: number): number {
  return from ? (nowMs - Date.parse(from)) / 1000 : 0;
}

/** One gc pass. Input is ignored (scheduled event). */
export async function run(_input: unknown, deps: GcDeps): Promise<GcResult> {
  const nowMs = deps.clock.now().getTime();
  const [claims, instances] = await Promise.all([deps.store.list(), deps.cloud.list()]);
  const result: GcResult = { deleted: [], terminated: [], releasedBudgetSlots: [] };
  const byId = new Map(instances.map((i) => [i.instanceId, i]));

  const remove = async (c: NodeClaim, reason: GcResult['deleted'][number]['reason'], timeout?: string) => {
    if (c.instanceId) {
      await deps.cloud.terminate(c.instanceId);
      result.terminated.push(c.instanceId);
    }
    if (c.nodeName) await deps.kube.deleteNode(c.nodeName);
    await deps.store.delete(c.name);
    result.deleted.push({ nodeClaim: c.name, reason });
    if (timeout) deps.log.info('terminating due to timeout', { NodeClaim: { name: c.name }, timeout, reason });
    else deps.log.info('deleted nodeclaim', { NodeClaim: { name: c.name }, reason });
    deps.metrics.count(MetricNames.nodeClaimsTerminated, { nodepool: c.nodePool, reason, ...(c.capacityType ? { capacity_type: c.capacityType } : {}), ...(c.zone ? { zone: c.zone } : {}) });
  };

  for (const c of claims) {
    if (c.phase === 'Terminating' || c.phase === 'Terminated' || isTrue(c, 'InstanceTerminating')) continue; // the termination state machine owns it
    const launched = getCondition(c, 'Launched');
    if (launched?.status !== 'True') {
      if (ageSeconds(c.createdAt, nowMs) > LaunchTimeoutSeconds) await remove(c, 'launch_timeout', `${LaunchTimeoutSeconds / 60}m`);
      continue;
    }
    if (c.instanceId && ageSeconds(launched.lastTransitionTime, nowMs) > OrphanMinAgeSeconds) {
      const inst = byId.get(c.instanceId) ?? (await deps.cloud.get(c.instanceId));
      if (!inst || TerminalStates.has(inst.state)) {
        // The instance is gone (terminated outside nodefleet, or by EC2): clean up what is left.
        await remove({ ...c, instanceId: undefined }, 'instance_terminated');
        continue;
      }
    }
    if (!isTrue(c, 'Registered') && ageSeconds(launched.lastTransitionTime, nowMs) > RegistrationTimeoutSeconds) {
      await remove(c, 'registration_timeout', `${RegistrationTimeoutSeconds / 60}m`);
    }
  }

  const claimed = new Set(claims.map((c) => c.instanceId).filter(Boolean));
  const names = new Set(claims.map((c) => c.name));
  for (const i of instances) {
    if (claimed.has(i.instanceId) || TerminalStates.has(i.state) || i.state === 'shutting-down') continue;
    const claimName = i.tags[Tags.nodeClaim];
    if (claimName && names.has(claimName) && !result.deleted.some((d) => d.nodeClaim === claimName)) continue; // its claim is still recording the launch
    if (ageSeconds(i.launchTime, nowMs) <= OrphanMinAgeSeconds) continue;
    await deps.cloud.terminate(i.instanceId);
    result.terminated.push(i.instanceId);
    deps.log.info('garbage collecting instance with no nodeclaim', { instance: i.instanceId, 'instance-type': i.instanceType, zone: i.zone, nodeclaim: claimName });
    deps.metrics.count(MetricNames.orphanInstancesTerminated, { zone: i.zone });
  }
  if (deps.cloud.collectLaunchTemplates) {
    const live = instances.filter((i) => !result.terminated.includes(i.instanceId));
    for (const name of await deps.cloud.collectLaunchTemplates(live, nowMs)) deps.log.info('deleted launch template', { name });
  }
  if (deps.budgets) result.releasedBudgetSlots = await reclaimBudgetSlots(deps as GcDeps & Required<Pick<GcDeps, 'budgets'>>, claims, result);
  return result;
}

/**
 * Releases the budget slots of executions that will never release them (see module doc). The pools
 * asked are the NodePools in the cluster plus those of stored claims (a deleted pool's slots too).
 * Claims gc deleted in this pass count as gone. `release` is conditional on the holder, so a
 * Finalize releasing the same slot concurrently never decrements twice.
 */
async function reclaimBudgetSlots(deps: GcDeps & Required<Pick<GcDeps, 'budgets'>>, claims: readonly NodeClaim[], pass: GcResult): Promise<GcResult['releasedBudgetSlots']> {
  const [pools, nodes] = await Promise.all([deps.kube.listNodePools(), deps.kube.listNodes()]);
  const poolNames = [...new Set([...pools.map((p) => p.metadata.name), ...claims.map((c) => c.nodePool)])].sort();
  const holders = Object.fromEntries(await Promise.all(poolNames.map(async (p) => [p, await deps.budgets.holders(p)] as const)));
  const deleted = new Set(pass.deleted.map((d) => d.nodeClaim));
  const stale = staleBudgetHolders(holders, claims.filter((c) => !deleted.has(c.name)), nodes, deps.clock.now());
  for (const s of stale) {
    await deps.budgets.release(s.nodePool, s.holder);
    deps.log.info('released disruption budget slot', { nodepool: s.nodePool, holder: s.holder, since: holders[s.nodePool]?.[s.holder], reason: s.reason });
  }
  return stale;
}

/** Lambda entry (EventBridge schedule → this function). */
export const handler: (event: unknown, context: Context) => Promise<GcResult> = wrapHandler('gc', run);
