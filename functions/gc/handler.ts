/**
 * gc: one pass of the pure planner (shared/disruption/gc.ts) over the claims, instances, nodes,
 * NodeClaim objects, NodePools and budget holders, then its plan carried out. Every action is idempotent (terminate/delete of
 * something already gone succeeds) and independent of the others (see `execute`).
 */
import type { Context } from 'aws-lambda';
import type { NodeClaim } from '../../shared/api/nodeclaim.ts';
import { ConflictError, NotFoundError } from '../../shared/api/errors.ts';
import type { CloudInstance } from '../../shared/api/ports.ts';
import { TaintDisrupted } from '../../shared/api/labels.ts';
import {
  planGarbageCollection,
  terminationRestarts,
  type GcPlan,
  InitializationTimeoutSeconds,
  LaunchTimeoutSeconds,
  RegistrationTimeoutSeconds,
  OrphanInstanceGraceSeconds,
} from '../../shared/disruption/gc.ts';
import type { Deps } from '../../shared/runtime/deps.ts';
import { MetricNames } from '../../shared/api/metrics.ts';
import { wrapHandler } from '../../shared/runtime/middleware.ts';
import { startClaimTermination } from '../../shared/runtime/start-termination.ts';
import { conditionLabel } from '../../shared/disruption/repair.ts';
import { syncNodeClaimObjects } from './nodeclaim-objects.ts';
import { removeNode } from '../../shared/runtime/remove-node.ts';
import { terminationStarted } from '../../shared/disruption/deletion.ts';

export { LaunchTimeoutSeconds, RegistrationTimeoutSeconds, OrphanInstanceGraceSeconds };

/** What gc uses; without `budgets` no budget slot is reclaimed, without `termination` no termination is restarted. */
export type GcDeps = Pick<Deps, 'env' | 'clock' | 'log' | 'metrics' | 'store' | 'cloud' | 'kube' | 'budgets' | 'termination'>;

export interface GcResult {
  /** Claims deleted, with why. */
  deleted: { nodeClaim: string; reason: GcPlan['deleteNodeClaims'][number]['reason'] }[];
  /** Instances terminated. */
  terminated: string[];
  /** Terminations carried on: the new attempt's number and why. */
  restarted: { nodeClaim: string; attempt: number; reason: 'failed' | 'continued' | 'stale' }[];
  /** Budget slots released (holder = NodeClaim name, or node name for a node without claim). */
  releasedBudgetSlots: GcPlan['releaseBudgetSlots'];
  /** Nodes whose abandoned karpenter.sh/disrupted taint was removed. */
  untainted: string[];
  /**
   * Running instances tagged as ours that no claim owns, launched before the table's claims epoch:
   * not terminated (the table was replaced or emptied; their claims were in the old one), reported
   * every pass (warning + metric) until an operator adopts or removes them.
   */
  unownedBeforeEpoch: GcPlan['unownedBeforeEpoch'];
  /**
   * Running instances no claim owns whose Node is live (launched after the epoch): never terminated
   * by gc (the node may run pods, and nothing drains a node without a claim), reported every pass
   * (one warning each + metric) until an operator drains and removes them (docs/deploy.md).
   */
  orphansWithNode: GcPlan['orphansWithNode'];
  /** Actions that failed this pass (the next pass plans them again). */
  failed: { action: string; subject: string; error: string }[];
  /** Claims node repair started terminating (NodeRepair gate), with the Node condition that decided it. */
  repaired: { nodeClaim: string; nodeName: string; condition: string }[];
  /** Claims due for repair that the NodePool health guard held. */
  repairBlocked: GcPlan['repair']['blocked'];
  /** Terminations started this pass for a deleted Node, NodeClaim object or NodePool (shared/disruption/deletion.ts). */
  started: GcPlan['startTerminations'];
  /** The cluster's NodeClaim objects written this pass (functions/gc/nodeclaim-objects.ts). */
  nodeClaimObjects?: { put: string[]; removed: string[]; foreign: string[] };
}

const Timeouts: Partial<Record<string, string>> = {
  launch_timeout: `${LaunchTimeoutSeconds / 60}m`,
  registration_timeout: `${RegistrationTimeoutSeconds / 60}m`,
  initialization_timeout: `${InitializationTimeoutSeconds / 60}m`,
};

/** One gc pass. Input is ignored (scheduled event). */
export async function run(_input: unknown, deps: GcDeps): Promise<GcResult> {
  const now = deps.clock.now();
  // When this table began keeping claims (recorded now on a new or emptied table): only instances
  // launched after it can be orphans (shared/disruption/gc.ts GcInput.tableEpochMs).
  const tableEpochMs = await deps.store.claimsEpochMs(now.getTime());
  const [claimsRead, listedRead, nodesRead, poolsRead, objectsRead, presenceRead] = await Promise.allSettled([
    deps.store.list(),
    deps.cloud.list(),
    deps.kube.listNodes(),
    deps.budgets ? deps.kube.listNodePools() : Promise.resolve([]),
    deps.kube.listNodeClaimObjects(),
    deps.kube.listNodePoolNames(),
  ]);
  if (claimsRead.status === 'rejected') throw claimsRead.reason;
  const claims = claimsRead.value;
  const listFailure = [listedRead, nodesRead, poolsRead].find((r) => r.status === 'rejected');
  if (listFailure) {
    // A throttled list of instances, nodes or NodePools fails the pass, but carrying on a
    // termination needs the claims only: past its deadline the next attempt must not wait for a
    // pass whose every list answers. Two passes in a row lost to throttling (kube 429, then EC2)
    // left a refused interruption's instance running 130 s past its deadline (chaos seed 1168).
    if (deps.termination) {
      for (const r of terminationRestarts(claims, now)) {
        try {
          await restart(deps, r);
        } catch (err) {
          deps.log.error('garbage collection action failed', {
            action: 'restart-termination',
            subject: r.nodeClaim,
            error: (err as Error).message,
            errorName: (err as Error).name,
          });
        }
      }
    }
    throw listFailure.reason;
  }
  const listed = (listedRead as PromiseFulfilledResult<CloudInstance[]>).value;
  const nodes = (nodesRead as PromiseFulfilledResult<Awaited<ReturnType<GcDeps['kube']['listNodes']>>>).value;
  const pools = (poolsRead as PromiseFulfilledResult<Awaited<ReturnType<GcDeps['kube']['listNodePools']>>>).value;
  const instances = await withClaimInstances(deps, claims, listed);
  let budgetHolders: Record<string, Record<string, string>> | undefined;
  if (deps.budgets) {
    const poolNames = [...new Set([...pools.map((p) => p.metadata.name), ...claims.map((c) => c.nodePool)])].sort();
    budgetHolders = Object.fromEntries(await Promise.all(poolNames.map(async (p) => [p, await deps.budgets!.holders(p)] as const)));
  }
  // The NodeClaim objects and the NodePools present: a failed list of either only leaves its
  // deletions (and, for the objects, the mirrors) for the next pass.
  const nodeClaimObjects = objectsRead.status === 'fulfilled' ? objectsRead.value : undefined;
  const nodePools = presenceRead.status === 'fulfilled' ? presenceRead.value : undefined;
  const nodeRepair = deps.env.settings?.featureGates.NodeRepair ?? false;
  const plan = planGarbageCollection(
    {
      cluster: deps.env.clusterName,
      nodeClaims: claims,
      nodes,
      instances,
      tableEpochMs,
      nodeRepair,
      ...(budgetHolders ? { budgetHolders } : {}),
      ...(nodeClaimObjects ? { nodeClaimObjects } : {}),
      ...(nodePools ? { nodePools } : {}),
    },
    now,
  );
  const result = await execute(plan, deps, new Map(claims.map((c) => [c.name, c])));
  for (const [read, action, subject] of [
    [objectsRead, 'list-nodeclaim-objects', 'nodeclaims'],
    [presenceRead, 'list-nodepools', 'nodepools'],
  ] as const) {
    if (read.status === 'fulfilled') continue;
    const err = read.reason as Error;
    deps.log.error('garbage collection action failed', { action, error: err.message, errorName: err.name });
    result.failed.push({ action, subject, error: `${err.name}: ${err.message}` });
  }
  // Mirrors of the records left after this pass.
  const deletedNow = new Set(result.deleted.map((d) => d.nodeClaim));
  if (nodeClaimObjects) {
    const m = await syncNodeClaimObjects(
      deps,
      claims.filter((c) => !deletedNow.has(c.name)),
      nodeClaimObjects,
    );
    result.nodeClaimObjects = { put: m.put, removed: m.removed, foreign: m.foreign };
    result.failed.push(...m.failed);
  }
  if (deps.cloud.collectLaunchTemplates) {
    const live = instances.filter((i) => !result.terminated.includes(i.instanceId));
    for (const name of await deps.cloud.collectLaunchTemplates(live, now.getTime())) deps.log.info('deleted launch template', { name });
  }
  return result;
}

/** The listed instances plus each claim's instance the list lacks (get; absent = gone). */
async function withClaimInstances(deps: GcDeps, claims: readonly NodeClaim[], listed: CloudInstance[]): Promise<CloudInstance[]> {
  const have = new Set(listed.map((i) => i.instanceId));
  const missing = [...new Set(claims.filter((c) => c.phase !== 'Terminated' && c.instanceId && !have.has(c.instanceId)).map((c) => c.instanceId!))];
  const got = await Promise.all(missing.map((id) => deps.cloud.get(id)));
  return [...listed, ...got.filter((i): i is CloudInstance => !!i)];
}

/**
 * Carries out the plan. Each action stands alone: one that fails (EC2 refusing a terminate, a
 * throttled write) is logged and counted in `failed`, and the others still run — one stuck
 * instance must not keep gc from restarting every other termination or releasing every slot.
 * The next pass (a minute later) plans the failed ones again.
 */
async function execute(plan: GcPlan, deps: GcDeps, claims: Map<string, NodeClaim>): Promise<GcResult> {
  const result: GcResult = {
    deleted: [],
    terminated: [],
    restarted: [],
    started: [],
    releasedBudgetSlots: [],
    untainted: [],
    unownedBeforeEpoch: plan.unownedBeforeEpoch,
    orphansWithNode: plan.orphansWithNode,
    repaired: [],
    repairBlocked: plan.repair.blocked,
    failed: [],
  };
  for (const u of plan.unownedBeforeEpoch) {
    deps.log.warn('instance launched before the claims table began has no nodeclaim, not terminating it: adopt or remove it', {
      instance: u.instanceId,
      ...(u.launchTime ? { launchTime: u.launchTime } : {}),
      ...(u.nodeClaim ? { NodeClaim: { name: u.nodeClaim } } : {}),
      ...(u.nodePool ? { NodePool: { name: u.nodePool } } : {}),
    });
  }
  // Every pass, also 0: a gauge-like count whose per-minute sum is the number of such instances.
  deps.metrics.count(MetricNames.unownedInstancesBeforeEpoch, {}, plan.unownedBeforeEpoch.length);
  for (const o of plan.orphansWithNode) {
    deps.log.warn('instance has no nodeclaim but its node is live, not terminating it: drain and remove the node', {
      instance: o.instanceId,
      Node: { name: o.nodeName },
      ...(o.launchTime ? { launchTime: o.launchTime } : {}),
      ...(o.nodeClaim ? { NodeClaim: { name: o.nodeClaim } } : {}),
      ...(o.nodePool ? { NodePool: { name: o.nodePool } } : {}),
    });
  }
  deps.metrics.count(MetricNames.orphanInstancesWithNode, {}, plan.orphansWithNode.length);
  const attempt = async (action: string, subject: string, fn: () => Promise<void>): Promise<void> => {
    try {
      await fn();
    } catch (err) {
      deps.log.error('garbage collection action failed', { action, subject, error: (err as Error).message, errorName: (err as Error).name });
      result.failed.push({ action, subject, error: `${(err as Error).name}: ${(err as Error).message}` });
    }
  };
  for (const d of plan.deleteNodeClaims) {
    await attempt('delete-nodeclaim', d.nodeClaim, async () => {
      const c = claims.get(d.nodeClaim)!;
      if (d.instanceId) {
        await deps.cloud.terminate(d.instanceId);
        result.terminated.push(d.instanceId);
      }
      if (d.nodeName) await removeNode(deps.kube, d.nodeName);
      await deps.store.delete(d.nodeClaim);
      result.deleted.push({ nodeClaim: d.nodeClaim, reason: d.reason });
      if (d.reason === 'expired') return;
      const timeout = Timeouts[d.reason];
      if (timeout) deps.log.info('terminating due to timeout', { NodeClaim: { name: c.name }, timeout, reason: d.reason });
      else deps.log.info('deleted nodeclaim', { NodeClaim: { name: c.name }, reason: d.reason, ...(d.instanceId ? { instance: d.instanceId } : {}) });
      deps.metrics.count(MetricNames.nodeClaimsTerminated, {
        nodepool: c.nodePool,
        reason: d.reason,
        ...(c.capacityType ? { capacity_type: c.capacityType } : {}),
        ...(c.zone ? { zone: c.zone } : {}),
      });
    });
  }
  for (const t of plan.terminateInstances) {
    await attempt('terminate-instance', t.instanceId, async () => {
      await deps.cloud.terminate(t.instanceId);
      result.terminated.push(t.instanceId);
      if (t.reason === 'orphan') {
        deps.log.info('garbage collecting instance with no nodeclaim', { instance: t.instanceId });
        deps.metrics.count(MetricNames.orphanInstancesTerminated, {});
      } else {
        deps.log.warn('termination deadline passed, terminating instance', { instance: t.instanceId, NodeClaim: { name: t.nodeClaim } });
      }
    });
  }
  for (const b of plan.repair.blocked) {
    deps.log.warn('NodeRepairBlocked', { NodeClaim: { name: b.nodeClaim }, Node: { name: b.nodeName }, NodePool: { name: b.nodePool }, message: b.message });
  }
  for (const r of plan.repair.repair) {
    await attempt('repair-node', r.nodeClaim, async () => {
      const c = claims.get(r.nodeClaim)!;
      // Forceful, as Karpenter's node repair: the termination's deadline is now (drain cut off at once).
      const executionArn = await startClaimTermination(deps.termination, c, { reason: 'unhealthy', now: deps.clock.now(), forceful: true });
      deps.log.info('deleting unhealthy node', {
        NodeClaim: { name: c.name },
        Node: { name: r.nodeName },
        condition: r.condition.type,
        status: r.condition.status,
        ...(r.condition.reason ? { reason: r.condition.reason } : {}),
        executionArn,
      });
      const capacityType: Record<string, string> = c.capacityType ? { capacity_type: c.capacityType } : {};
      deps.metrics.count(MetricNames.nodeClaimsDisrupted, { nodepool: c.nodePool, reason: 'unhealthy', ...capacityType });
      deps.metrics.count(MetricNames.nodeClaimsUnhealthyDisrupted, {
        condition: conditionLabel(r.condition.type),
        nodepool: c.nodePool,
        ...capacityType,
        ...(c.imageId ? { image_id: c.imageId } : {}),
      });
      result.repaired.push({ nodeClaim: c.name, nodeName: r.nodeName, condition: r.condition.type });
    });
  }
  if (deps.termination) {
    for (const r of plan.restartTerminations) {
      await attempt('restart-termination', r.nodeClaim, async () => {
        if (await restart(deps, r)) result.restarted.push({ nodeClaim: r.nodeClaim, attempt: r.input.attempt, reason: r.reason });
      });
    }
  }
  if (deps.termination) {
    for (const d of plan.startTerminations) {
      await attempt('start-termination', d.nodeClaim, async () => {
        // The record as it is now: a termination started since the list is not started again.
        const current = await deps.store.get(d.nodeClaim);
        if (!current || terminationStarted(current)) return;
        const executionArn = await startClaimTermination(deps.termination, current, { reason: 'manual', now: deps.clock.now() });
        deps.log.info(`${d.cause} deleted: terminating its nodeclaim`, {
          NodeClaim: { name: d.nodeClaim },
          NodePool: { name: current.nodePool },
          ...(current.nodeName ? { Node: { name: current.nodeName } } : {}),
          executionArn,
        });
        result.started.push(d);
      });
    }
  }
  for (const s of plan.releaseBudgetSlots) {
    await attempt('release-budget-slot', `${s.nodePool}/${s.holder}`, async () => {
      await deps.budgets!.release(s.nodePool, s.holder);
      deps.log.info('released disruption budget slot', { nodepool: s.nodePool, holder: s.holder, reason: s.reason });
      result.releasedBudgetSlots.push(s);
    });
  }
  for (const u of plan.untaintNodes) {
    await attempt('untaint-node', u.nodeName, async () => {
      const node = await deps.kube.getNode(u.nodeName);
      const taints = node?.spec?.taints ?? [];
      if (!node || !taints.some((t) => t.key === TaintDisrupted.key)) return;
      try {
        await deps.kube.patchNode(u.nodeName, { taints: taints.filter((t) => t.key !== TaintDisrupted.key) });
      } catch (err) {
        if (err instanceof NotFoundError) return;
        throw err;
      }
      deps.log.info('removed abandoned disruption taint', { Node: u.nodeName, 'taint.Key': TaintDisrupted.key });
      result.untainted.push(u.nodeName);
    });
  }
  return result;
}

/**
 * Starts the next attempt, then records it on the claim. The start comes first because it is
 * idempotent on its own: the execution is named after the claim and the attempt, so a concurrent
 * pass starting the same attempt gets the same execution, and the attempt records itself on the
 * claim as its first step (Cordon). The other order left a crash between the write and the start
 * with an attempt recorded and nothing running until the stale rule (30 min) noticed.
 * The record here is conditional on the version read: when the attempt (or another writer) got
 * there first, there is nothing left to write.
 * @returns whether this pass started it.
 */
async function restart(deps: GcDeps, r: GcPlan['restartTerminations'][number]): Promise<boolean> {
  const current = await deps.store.get(r.nodeClaim);
  const t = current?.termination;
  if (!current || current.phase !== 'Terminating' || !t || t.attempt + 1 !== r.input.attempt) return false;
  const arn = await deps.termination!.start(r.input);
  deps.log.info('restarted termination', { NodeClaim: { name: r.nodeClaim }, attempt: r.input.attempt, reason: r.reason, executionArn: arn });
  try {
    await deps.store.update({ ...current, termination: { ...t, attempt: r.input.attempt, heartbeatAt: deps.clock.now().toISOString() } });
  } catch (err) {
    if (!(err instanceof ConflictError)) throw err;
  }
  return true;
}

/** Lambda entry (EventBridge schedule → this function). */
export const handler: (event: unknown, context: Context) => Promise<GcResult> = wrapHandler('gc', run);
