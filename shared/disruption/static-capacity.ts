/**
 * Static NodePools (`spec.replicas`, Karpenter's StaticCapacity feature gate): the pool is kept at
 * its replica count whatever the pending pods. Pure: the disruption loop (every minute) plans on
 * the authoritative records — the NodeClaims in the store, the live Nodes, the budget holders —
 * and carries the plan out: new claims through the launch path every claim takes, excess ones
 * through the termination state machine.
 *
 * As Karpenter v1.15 (KC pkg/controllers/static/provisioning, static/deprovisioning,
 * disruption/staticdrift.go, controllers/state/statenodepool.go):
 * - a claim is *running* while it is not terminating and not the candidate of a disruption
 *   command in flight (*pending disruption*: it holds a budget slot); *deleting* once its
 *   termination started (or it expires this pass);
 * - scale up when running + pending disruption < replicas, by replicas − running, granted only
 *   up to `limits.nodes` − (running + deleting + pending disruption);
 * - scale down when running > replicas, by running − replicas: first claims that never launched,
 *   then empty nodes (only DaemonSet pods, none with an active do-not-disrupt), then the rest with
 *   nodes holding a do-not-disrupt pod last and the lowest rescheduling cost × lifetime left first;
 * - drift replaces one for one with a claim of the pool's template (no simulation), within the
 *   Drifted budget and `limits.nodes`, and waits while the pool is over its count;
 * - expiry and interruption delete the claim; the count is made up on the next pass;
 * - never consolidated (emptiness.ts, consolidation-candidates.ts).
 */
import { isDaemonSetPod, type Pod } from '../api/kube.ts';
import { isStaticNodePool, StaticCapacityGateOff, type NodePool } from '../api/nodepool.ts';
import type { NodeClaim } from '../api/nodeclaim.ts';
import { MaxLaunchInstanceTypes } from '../api/ports.ts';
import { parseQuantity } from '../api/quantity.ts';
import { parseDurationSeconds } from '../api/duration.ts';
import { Requirement } from '../api/requirements.ts';
import { LabelInstanceType } from '../api/labels.ts';
import { collectTypeKeys, PoolTemplate } from '../scheduling/template.ts';
import { evictionCost, lifetimeRemaining } from './cost.ts';
import { typesForMinValues } from './consolidation.ts';
import { isDoNotDisruptActive, isTerminal } from './pods.ts';
import type { DisruptionSnapshot, ReplacementClaim } from './types.ts';

/** The claims of one static NodePool as Karpenter's NodePoolState counts them. */
export interface StaticPoolCounts {
  running: number;
  deleting: number;
  pendingDisruption: number;
}

/** One static pool short of its count: `count` claims to create from `claim`. */
export interface StaticProvision {
  nodePool: string;
  count: number;
  current: number;
  desired: number;
  /** The claim to create `count` times (the pool's template, every admitted type). */
  claim: ReplacementClaim;
  /** The pool's claim records (names, any phase): the new claims' names are drawn from them (two passes that read the same records draw the same names). */
  existing: string[];
}

/** One claim to terminate because its static pool is over its count. */
export interface StaticDeprovision {
  nodePool: string;
  nodeClaim: string;
  nodeName?: string;
  current: number;
  desired: number;
}

export interface StaticCapacityPlan {
  provision: StaticProvision[];
  deprovision: StaticDeprovision[];
  /** Pools short of their count that `limits.nodes` keeps from growing (Karpenter: "nodepool node limit reached"). */
  limited: { nodePool: string; current: number; desired: number; limit: number }[];
  /** Static pools that launch nothing, with why (the gate is off, no instance type, not ready). */
  refused: { nodePool: string; reason: string }[];
}

/** The pool's `limits.nodes`, or Infinity without one. */
export function nodeLimitOf(pool: NodePool): number {
  const v = pool.spec.limits?.nodes;
  return v === undefined ? Infinity : parseQuantity(v);
}

const Gone = new Set(['Terminated', 'Failed']);

/** Whether a claim counts at all (it exists, its instance may run). */
function present(c: NodeClaim): boolean {
  return !Gone.has(c.phase);
}

/**
 * The pool's claim counts. `expiring`: claims whose forceful expiration this pass starts (they
 * are deleting already); `holders`: the pool's budget slot holders (candidates of commands in flight).
 */
export function staticPoolCounts(
  pool: string,
  claims: readonly NodeClaim[],
  expiring: ReadonlySet<string> = new Set(),
  holders: ReadonlySet<string> = new Set(),
): StaticPoolCounts {
  const out: StaticPoolCounts = { running: 0, deleting: 0, pendingDisruption: 0 };
  for (const c of claims) {
    if (c.nodePool !== pool || !present(c)) continue;
    if (c.phase === 'Terminating' || expiring.has(c.name)) out.deleting++;
    else if (holders.has(c.name)) out.pendingDisruption++;
    else out.running++;
  }
  return out;
}

/**
 * How many of `wanted` new claims `limits.nodes` grants (KC NodePoolState.ReserveNodeCount):
 * running, deleting and pending-disruption claims all count against the limit.
 */
export function grantedByLimit(counts: StaticPoolCounts, limit: number, wanted: number): number {
  const remaining = limit - (counts.running + counts.deleting + counts.pendingDisruption);
  if (remaining < 0) return 0;
  return Math.max(0, Math.min(wanted, remaining));
}

/**
 * The claim a static pool launches (KC NewNodeClaimTemplate for a static pool: the pool's
 * requirements, labels and taints; no pods, no requests; the cloud provider picks among every
 * admitted type): its ≤ 60 cheapest admitted types with an available offering (more when its
 * minValues need more), or why there is none.
 */
export function staticClaimOf(
  pool: NodePool,
  snapshot: Pick<DisruptionSnapshot, 'instanceTypes' | 'daemonSets' | 'unavailableOfferings' | 'settings'>,
): ReplacementClaim | { reason: string } {
  const minValuesPolicy = snapshot.settings?.scheduling?.minValuesPolicy ?? 'Strict';
  const types = snapshot.instanceTypes(pool);
  const tmpl = new PoolTemplate(pool, types, snapshot.daemonSets ?? [], snapshot.unavailableOfferings ?? [], collectTypeKeys([types]));
  if (tmpl.unusable && tmpl.types.length === 0) return { reason: tmpl.unusable };
  // The cheapest 60, or as many as the pool's minValues need (Karpenter's launch keeps them met).
  const needed = typesForMinValues(
    tmpl.types.map((t) => t.type),
    tmpl.requirements,
  );
  // Not met: refused under MIN_VALUES_POLICY=Strict (Karpenter's launch fails the same way), relaxed under BestEffort.
  if (needed === undefined && minValuesPolicy !== 'BestEffort')
    return { reason: `minValues requirement is not met: the nodepool's instance types cannot satisfy it (${tmpl.requirements.toString()})` };
  const launch = tmpl.types.slice(0, Math.max(MaxLaunchInstanceTypes, needed ?? 0));
  const capacityTypes = [...new Set(launch.flatMap((t) => t.offerings.map((o) => o.capacityType)))].sort() as ReplacementClaim['capacityTypes'];
  const zones = [...new Set(launch.flatMap((t) => t.offerings.map((o) => o.zone)))].sort();
  const typeReq = tmpl.requirements.get(LabelInstanceType);
  const requirements = tmpl.requirements.add(
    Requirement.from({
      key: LabelInstanceType,
      operator: 'In',
      values: launch.map((t) => t.type.name),
      ...(typeReq?.minValues !== undefined ? { minValues: typeReq.minValues } : {}),
    }),
  );
  return {
    nodePool: pool.metadata.name,
    requirements: requirements.toSpecs(),
    instanceTypes: launch.map((t) => t.type.name),
    labels: { ...tmpl.labels },
    taints: [...tmpl.taints],
    startupTaints: [...tmpl.startupTaints],
    requests: {},
    capacityTypes,
    zones,
    priceUsdPerHour: launch[0].minPriceUsdPerHour,
    pods: [],
  };
}

/** Whether the NodePool reports Ready=False (Karpenter's static provisioning waits for Ready). */
function reportsNotReady(pool: NodePool): boolean {
  const conditions = (pool.status as { conditions?: { type?: string; status?: string }[] } | undefined)?.conditions ?? [];
  return conditions.some((c) => c.type === 'Ready' && c.status === 'False');
}

function isDeleted(pool: NodePool): boolean {
  return typeof (pool.metadata as { deletionTimestamp?: unknown }).deletionTimestamp === 'string';
}

/**
 * The claims to terminate to bring the pool down by `count` (KC static/deprovisioning
 * getDeprovisioningCandidates): never-launched claims first, then empty nodes, then the others by
 * do-not-disrupt (last) and rescheduling cost × lifetime remaining (lowest first); ties by name.
 */
export function scaleDownCandidates(
  pool: NodePool,
  claims: readonly NodeClaim[],
  podsByNode: ReadonlyMap<string, readonly Pod[]>,
  now: Date,
  count: number,
  exclude: ReadonlySet<string> = new Set(),
): NodeClaim[] {
  const name = pool.metadata.name;
  const mine = claims
    .filter((c) => c.nodePool === name && present(c) && c.phase !== 'Terminating' && !exclude.has(c.name))
    .sort((a, b) => a.name.localeCompare(b.name));
  const out: NodeClaim[] = mine.filter((c) => !c.providerId).slice(0, count);
  if (out.length >= count) return out;
  const expireAfter = parseDurationSeconds(pool.spec.template.spec.expireAfter);
  const resolved = mine
    .filter((c) => c.providerId)
    .map((c) => {
      const pods = (c.nodeName ? (podsByNode.get(c.nodeName) ?? []) : []).filter((p) => !isTerminal(p));
      const doNotDisrupt = pods.some((p) => isDoNotDisruptActive(p, now));
      const empty = pods.every(isDaemonSetPod) && !doNotDisrupt;
      const ageSeconds = (now.getTime() - Date.parse(c.createdAt)) / 1000;
      const cost = pods.reduce((s, p) => s + evictionCost(p), 0) * lifetimeRemaining(ageSeconds, expireAfter);
      return { c, empty, doNotDisrupt, cost };
    });
  const empty = resolved.filter((r) => r.empty);
  const others = resolved
    .filter((r) => !r.empty)
    .sort((a, b) => Number(a.doNotDisrupt) - Number(b.doNotDisrupt) || a.cost - b.cost || a.c.name.localeCompare(b.c.name));
  for (const r of [...empty, ...others]) {
    if (out.length >= count) break;
    out.push(r.c);
  }
  return out;
}

/**
 * Plans every static pool of the snapshot at `now`. `enabled`: the StaticCapacity gate (off: each
 * static pool is refused with one line and launches nothing). `expiring`: claims whose forceful
 * expiration this pass starts. Pods per node: the snapshot's (they only order scale-down candidates).
 */
export function planStaticCapacity(
  snapshot: Pick<
    DisruptionSnapshot,
    'nodePools' | 'nodeClaims' | 'pods' | 'budgetHolders' | 'instanceTypes' | 'daemonSets' | 'unavailableOfferings' | 'nodeClassProblems'
  >,
  now: Date,
  opts: { enabled: boolean; expiring?: ReadonlySet<string> },
): StaticCapacityPlan {
  const plan: StaticCapacityPlan = { provision: [], deprovision: [], limited: [], refused: [] };
  const claims = snapshot.nodeClaims ?? [];
  const podsByNode = new Map<string, Pod[]>();
  for (const p of snapshot.pods) {
    if (!p.spec.nodeName) continue;
    const list = podsByNode.get(p.spec.nodeName);
    if (list) list.push(p);
    else podsByNode.set(p.spec.nodeName, [p]);
  }
  for (const pool of snapshot.nodePools) {
    if (!isStaticNodePool(pool)) continue;
    const name = pool.metadata.name;
    if (!opts.enabled) {
      plan.refused.push({ nodePool: name, reason: StaticCapacityGateOff });
      continue;
    }
    if (isDeleted(pool)) continue;
    const desired = pool.spec.replicas!;
    const counts = staticPoolCounts(name, claims, opts.expiring, new Set(snapshot.budgetHolders?.[name] ?? []));
    if (counts.running > desired) {
      const exclude = new Set([...(snapshot.budgetHolders?.[name] ?? []), ...(opts.expiring ?? [])]);
      for (const c of scaleDownCandidates(pool, claims, podsByNode, now, counts.running - desired, exclude))
        plan.deprovision.push({ nodePool: name, nodeClaim: c.name, ...(c.nodeName ? { nodeName: c.nodeName } : {}), current: counts.running, desired });
      continue;
    }
    if (counts.running + counts.pendingDisruption >= desired) continue;
    if (reportsNotReady(pool)) {
      plan.refused.push({ nodePool: name, reason: 'nodepool is not ready (status condition Ready is False)' });
      continue;
    }
    const classProblem = snapshot.nodeClassProblems?.[pool.spec.template.spec.nodeClassRef.name];
    if (classProblem) {
      plan.refused.push({ nodePool: name, reason: `ec2nodeclass "${pool.spec.template.spec.nodeClassRef.name}": ${classProblem}` });
      continue;
    }
    const limit = nodeLimitOf(pool);
    const count = grantedByLimit(counts, limit, desired - counts.running);
    if (count <= 0) {
      plan.limited.push({ nodePool: name, current: counts.running, desired, limit });
      continue;
    }
    const claim = staticClaimOf(pool, snapshot);
    if ('reason' in claim) {
      plan.refused.push({ nodePool: name, reason: claim.reason });
      continue;
    }
    // Every record of the pool, terminated ones too: a name drawn from them is never one still stored.
    const existing = claims.filter((c) => c.nodePool === name).map((c) => c.name);
    plan.provision.push({ nodePool: name, count, current: counts.running, desired, claim, existing });
  }
  return plan;
}
