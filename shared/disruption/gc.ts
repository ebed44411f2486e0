/**
 * Garbage collection decisions (pure): NodeClaims that never launched or registered in time,
 * NodeClaims whose instance is gone, and instances tagged as ours that no NodeClaim owns.
 *
 * Sources: KC pkg/controllers/nodeclaim/lifecycle/liveness.go (launch timeout 5 min,
 * registration timeout 15 min), pkg/controllers/nodeclaim/garbagecollection/controller.go
 * (claims whose cloud instance is gone), KA pkg/controllers/nodeclaim/garbagecollection
 * (instances without a claim, after a grace period so a launch in progress is not reaped).
 */
import type { Node } from '../api/kube.ts';
import type { NodeClaim } from '../api/nodeclaim.ts';
import { isTrue } from '../api/nodeclaim.ts';

/** A claim that never reaches Launched within this is deleted (Karpenter `LaunchTimeout`). */
export const LaunchTimeoutSeconds = 5 * 60;
/** A launched claim whose node never registers within this is deleted (Karpenter `registrationTimeout`). */
export const RegistrationTimeoutSeconds = 15 * 60;
/**
 * An instance without a claim is left alone this long after launch: CreateFleet returns before
 * the claim write that records the instance id, and reaping in that window would kill a good launch.
 */
export const OrphanInstanceGraceSeconds = 30;

/** Tag keys that mark an instance as launched by nodefleet (or by Karpenter for this cluster). */
export const OwnershipTagKeys = ['nodefleet.io/cluster', 'karpenter.sh/nodeclaim', 'karpenter.sh/nodepool', 'karpenter.sh/managed-by'];

/** An instance as the cloud lists it (subset). */
export interface GcInstance {
  instanceId: string;
  state: string;
  /** RFC 3339. */
  launchTime?: string;
  tags: Record<string, string>;
}

export interface GcInput {
  nodeClaims: NodeClaim[];
  nodes: Node[];
  /** Instances the cloud reports; undefined = unknown (then no instance-based decision is made). */
  instances?: GcInstance[];
}

export interface GcPlan {
  deleteNodeClaims: { nodeClaim: string; reason: 'launch_timeout' | 'registration_timeout' | 'instance_gone'; instanceId?: string }[];
  terminateInstances: { instanceId: string; reason: 'orphan' }[];
}

function instanceIdOf(c: NodeClaim): string | undefined {
  return c.instanceId ?? /\/(i-[0-9a-z]+)$/.exec(c.providerId ?? '')?.[1];
}

/** What gc should delete and terminate at `now`. Pure. */
export function planGarbageCollection(input: GcInput, now: Date): GcPlan {
  const out: GcPlan = { deleteNodeClaims: [], terminateInstances: [] };
  const nowMs = now.getTime();
  const alive = input.instances ? new Map(input.instances.filter((i) => i.state !== 'terminated' && i.state !== 'shutting-down').map((i) => [i.instanceId, i])) : undefined;
  const nodeProviderIds = new Set(input.nodes.map((n) => n.spec?.providerID).filter(Boolean));
  const nodeNames = new Set(input.nodes.map((n) => n.metadata.name));
  for (const c of input.nodeClaims) {
    if (c.phase === 'Terminating' || c.phase === 'Terminated') continue;
    const ageSeconds = (nowMs - Date.parse(c.createdAt)) / 1000;
    const id = instanceIdOf(c);
    const launched = isTrue(c, 'Launched') || id !== undefined;
    const registered = isTrue(c, 'Registered') || (c.nodeName !== undefined && nodeNames.has(c.nodeName)) || (c.providerId !== undefined && nodeProviderIds.has(c.providerId));
    if (!launched) {
      if (ageSeconds >= LaunchTimeoutSeconds) out.deleteNodeClaims.push({ nodeClaim: c.name, reason: 'launch_timeout' });
      continue;
    }
    if (alive && id && !alive.has(id)) {
      out.deleteNodeClaims.push({ nodeClaim: c.name, reason: 'instance_gone', instanceId: id });
      continue;
    }
    if (!registered && ageSeconds >= RegistrationTimeoutSeconds) out.deleteNodeClaims.push({ nodeClaim: c.name, reason: 'registration_timeout', ...(id ? { instanceId: id } : {}) });
  }
  const owned = new Set(input.nodeClaims.map(instanceIdOf).filter(Boolean));
  for (const i of alive?.values() ?? []) {
    if (owned.has(i.instanceId)) continue;
    if (!OwnershipTagKeys.some((k) => k in i.tags)) continue;
    const launchedMs = i.launchTime ? Date.parse(i.launchTime) : NaN;
    if (!Number.isNaN(launchedMs) && (nowMs - launchedMs) / 1000 < OrphanInstanceGraceSeconds) continue;
    out.terminateInstances.push({ instanceId: i.instanceId, reason: 'orphan' });
  }
  return out;
}

/**
 * A budget slot whose holder shows no sign of being disrupted for this long is considered lost
 * (the run that took it crashed between taking the slot and starting the termination).
 */
export const StaleBudgetHolderSeconds = 30 * 60;

/**
 * Budget counter holders to release: the holder's NodeClaim and Node are both gone (the
 * termination finished but its release was lost), or the holder took its slot more than
 * {@link StaleBudgetHolderSeconds} ago and its node carries no karpenter.sh/disrupted taint and
 * its claim is not terminating (nothing is disrupting it). Holders are claim names (or node
 * names for nodes without a claim).
 * @param holders per NodePool: holder → RFC 3339 time the slot was taken (BudgetCounter.holders)
 */
export function staleBudgetHolders(
  holders: Record<string, Record<string, string>>,
  nodeClaims: readonly NodeClaim[],
  nodes: readonly Node[],
  now: Date,
): { nodePool: string; holder: string; reason: 'gone' | 'abandoned' }[] {
  const claims = new Map(nodeClaims.map((c) => [c.name, c]));
  const nodesByName = new Map(nodes.map((n) => [n.metadata.name, n]));
  const out: { nodePool: string; holder: string; reason: 'gone' | 'abandoned' }[] = [];
  for (const [nodePool, hs] of Object.entries(holders)) {
    for (const [holder, since] of Object.entries(hs)) {
      const claim = claims.get(holder);
      const node = nodesByName.get(claim?.nodeName ?? holder);
      if (!claim && !node) {
        out.push({ nodePool, holder, reason: 'gone' });
        continue;
      }
      const ageSeconds = (now.getTime() - Date.parse(since)) / 1000;
      const tainted = !!node?.spec?.taints?.some((t) => t.key === 'karpenter.sh/disrupted');
      const terminating = claim?.phase === 'Terminating' || claim?.phase === 'Terminated' || !!node?.metadata.deletionTimestamp;
      if (ageSeconds >= StaleBudgetHolderSeconds && !tainted && !terminating) out.push({ nodePool, holder, reason: 'abandoned' });
    }
  }
  return out;
}
