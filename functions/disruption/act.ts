/**
 * The effects of a disruption command, each idempotent on its trigger: budget slots (holder =
 * NodeClaim name), the karpenter.sh/disrupted taint on candidates, replacement NodeClaims
 * (deterministic names from the command id, created in the store and launched with CreateFleet),
 * and termination executions (named after the claim).
 */
import type { Deps } from '../../shared/runtime/deps.ts';
import { isTrue, type NodeClaim } from '../../shared/api/nodeclaim.ts';
import type { NodePool } from '../../shared/api/nodepool.ts';
import { ConflictError, NodefleetError } from '../../shared/api/errors.ts';
import { LabelTopologyZone, TaintDisrupted } from '../../shared/api/labels.ts';
import type { TerminationInput } from '../../shared/api/ports.ts';
import { formatResources } from '../../shared/api/quantity.ts';
import { Requirement, Requirements } from '../../shared/api/requirements.ts';
import type { CommandCandidate, DisruptionCommand, DisruptionReason, DisruptionSnapshot, Expiration, ReplacementClaim } from '../../shared/disruption/index.ts';
import { claimExpireAt, isClaimExpired, liveNodeProblem } from '../../shared/disruption/index.ts';
import { minAllocatableOf, newNodeClaimRecord } from '../../shared/launch/claims.ts';
import { launchClaim } from '../../shared/launch/launch.ts';
import { yieldPodsNamedElsewhere } from '../../shared/launch/named-elsewhere.ts';
import { startClaimTermination } from '../../shared/runtime/start-termination.ts';
import { fnv1a32 } from '../../shared/api/hash.ts';

const TerminationReasons: Record<DisruptionReason, TerminationInput['reason']> = {
  Empty: 'emptiness',
  Drifted: 'drift',
  Underutilized: 'consolidation',
  Expired: 'expiration',
  // a rebalance recommendation is an interruption signal, acted on early and gracefully
  Rebalance: 'interruption',
};

/** Takes one budget slot per candidate (holder = claim name); all or nothing. */
export async function takeSlots(deps: Pick<Deps, 'budgets'>, command: DisruptionCommand, limits: Record<string, number>, nowIso: string): Promise<boolean> {
  if (!deps.budgets) throw new NodefleetError('disruption needs the budget counter (deps.budgets)');
  const taken: CommandCandidate[] = [];
  for (const c of command.candidates) {
    const ok = await deps.budgets.take(c.nodePool, c.nodeClaim, limits[c.nodePool] ?? 0, nowIso);
    if (!ok) {
      await releaseSlots(deps, taken);
      return false;
    }
    taken.push(c);
  }
  return true;
}

/**
 * Renews the candidates' slot leases (gc reclaims a lease not renewed for
 * shared/disruption/gc.ts DisruptionLeaseSeconds). Every step of a command that holds slots
 * calls this first.
 * @returns false when a slot is gone (gc took it back): the command must not go on.
 */
export async function renewSlots(deps: Pick<Deps, 'budgets'>, candidates: readonly CommandCandidate[], nowIso: string): Promise<boolean> {
  if (!deps.budgets) return true;
  let held = true;
  for (const c of candidates) held = (await deps.budgets.renew(c.nodePool, c.nodeClaim, nowIso)) && held;
  return held;
}

/** Releases the candidates' slots (absent = fine). */
export async function releaseSlots(deps: Pick<Deps, 'budgets'>, candidates: readonly CommandCandidate[]): Promise<void> {
  if (!deps.budgets) return;
  for (const c of candidates) await deps.budgets.release(c.nodePool, c.nodeClaim);
}

/** Adds (or removes) karpenter.sh/disrupted:NoSchedule so no new pod lands on a node about to go. */
export async function setDisruptedTaint(deps: Pick<Deps, 'kube' | 'clock'>, candidates: readonly CommandCandidate[], on: boolean): Promise<void> {
  for (const c of candidates) {
    const node = await deps.kube.getNode(c.nodeName);
    if (!node) continue;
    const others = (node.spec?.taints ?? []).filter((t) => t.key !== TaintDisrupted.key);
    // timeAdded lets gc tell an abandoned taint by its age (shared/disruption/gc.ts DisruptionLeaseSeconds)
    const taints = on ? [...others, { key: TaintDisrupted.key, effect: TaintDisrupted.effect, timeAdded: deps.clock.now().toISOString() }] : others;
    if (taints.length === (node.spec?.taints ?? []).length && on === (node.spec?.taints ?? []).some((t) => t.key === TaintDisrupted.key)) continue;
    await deps.kube.patchNode(c.nodeName, { taints });
  }
}

/**
 * The replacement claim names of a command: derived from the candidates (not the command id), so
 * two overlapping runs that planned the same move at different minutes create the same claims
 * (the store's conditional create and CreateFleet's client token make the second a no-op).
 */
export function replacementNames(command: DisruptionCommand): string[] {
  const key = command.candidates
    .map((c) => c.nodeClaim)
    .sort()
    .join(',');
  return command.replacements.map((r, i) => `${r.nodePool}-r${fnv1a32(`${key}/${i}/${r.instanceTypes[0]}`).toString(36)}`);
}

/**
 * Records (creates if absent) one replacement claim, with the provisioner's own record builder
 * (shared/launch: the NodePool's template labels and annotations, allocatable, hashes, expiry),
 * as Karpenter's disruption calls the provisioner's CreateNodeClaims. The claim's requirements
 * carry the simulation's launch set, capacity types and zones; its `pods` the pods it is sized for.
 * The command records every replacement before it taints a candidate ({@link launchReplacement}
 * after): the taint makes the candidate a deleting node to the provisioner, which then provisions
 * for its pods unless a claim already names them.
 * @returns the stored claim, or why there is none (unknown NodePool).
 */
export async function recordReplacement(
  deps: Pick<Deps, 'store' | 'env' | 'log'>,
  r: ReplacementClaim,
  name: string,
  command: DisruptionCommand,
  now: Date,
  snapshot: Pick<DisruptionSnapshot, 'nodePools' | 'nodeClasses' | 'instanceTypes'>,
): Promise<NodeClaim | string> {
  const pool = snapshot.nodePools.find((p) => p.metadata.name === r.nodePool);
  if (!pool) return `nodepool "${r.nodePool}" not found`;
  const nodeClass = snapshot.nodeClasses?.find((c) => c.metadata.name === pool.spec.template.spec.nodeClassRef.name);
  const stored = await deps.store.get(name);
  if (stored && (stored.phase === 'Failed' || stored.phase === 'Terminated')) {
    // left over from an earlier, abandoned attempt at the same move: start afresh
    await deps.store.delete(name);
  } else if (stored) return stored;
  const types = replacementTypes(r, pool, snapshot);
  let requirements = Requirements.fromSpecs(r.requirements);
  if (r.zones.length > 0) requirements = requirements.add(Requirement.from({ key: LabelTopologyZone, operator: 'In', values: [...r.zones] }));
  const fresh = newNodeClaimRecord(
    {
      nodePool: r.nodePool,
      requirements: requirements.toSpecs(),
      taints: r.taints,
      startupTaints: r.startupTaints,
      labels: r.labels,
      requests: r.requests,
      ...(types.length > 0 ? { allocatable: formatResources(minAllocatableOf(types)) } : {}),
      pods: r.pods,
    },
    { cluster: deps.env.clusterName, nodePool: pool, nodeClass, now, name, annotations: { [AnnotationDisruptionCommand]: command.id } },
  );
  let claim: NodeClaim;
  try {
    claim = await deps.store.create(fresh);
  } catch (err) {
    if (!(err instanceof ConflictError)) throw err;
    return (await deps.store.get(name)) ?? fresh;
  }
  // A pending pod the replacement is sized for that a provisioner claim written meanwhile names is
  // that claim's: the replacement gives it up (its room stays). The candidates' pods are the
  // replacement's whatever else names them (shared/launch/named-elsewhere.ts; chaos seed 1136).
  const keep = new Set(command.candidates.flatMap((c) => c.pods));
  const y = await yieldPodsNamedElsewhere(deps, claim, await deps.store.list(), now, { ignore: new Set(replacementNames(command)), keep });
  if (y.given.length) deps.log.info('replacement gives up pod(s) another nodeclaim was made for', { NodeClaim: { name }, Pods: y.given.join(', ') });
  return y.claim ?? claim;
}

/** The replacement's launch set: the NodePool's instance types the simulation chose. */
function replacementTypes(r: ReplacementClaim, pool: NodePool, snapshot: Pick<DisruptionSnapshot, 'instanceTypes'>) {
  const launchSet = new Set(r.instanceTypes);
  return snapshot.instanceTypes(pool).filter((t) => launchSet.has(t.name));
}

/**
 * Launches (if not launched) one replacement claim {@link recordReplacement} recorded, with the
 * provisioner's launch (capacity retries and on-demand fallback).
 * @returns undefined on success, else why it failed (no capacity, unknown NodePool).
 */
export async function launchReplacement(
  deps: Pick<Deps, 'store' | 'cloud' | 'unavailable' | 'env' | 'log' | 'metrics' | 'clock'>,
  r: ReplacementClaim,
  claim: NodeClaim,
  now: Date,
  snapshot: Pick<DisruptionSnapshot, 'nodePools' | 'nodeClasses' | 'instanceTypes'>,
): Promise<string | undefined> {
  const pool = snapshot.nodePools.find((p) => p.metadata.name === r.nodePool);
  if (!pool) return `nodepool "${r.nodePool}" not found`;
  const nodeClass = snapshot.nodeClasses?.find((c) => c.metadata.name === pool.spec.template.spec.nodeClassRef.name);
  if (claim.instanceId || isTrue(claim, 'Launched')) return undefined;
  const out = await launchClaim(deps, claim, nodeClass, replacementTypes(r, pool, snapshot), undefined, now);
  if (out.status === 'failed') throw out.error;
  return out.status === 'unfulfillable' ? `replacement ${claim.name}: ${out.reason}` : undefined;
}

/** The annotation a replacement claim carries: the id of the command that launched it. */
export const AnnotationDisruptionCommand = 'nodefleet.io/disruption-command';

/**
 * 'ready' when every replacement of `command` is Initialized, 'failed' with a reason when one
 * failed, vanished, or is not the command's (names from {@link replacementNames}, claims carrying
 * {@link AnnotationDisruptionCommand}), else 'waiting'.
 */
export async function replacementsState(
  deps: Pick<Deps, 'store'>,
  command: DisruptionCommand,
  names: readonly string[],
): Promise<{ state: 'ready' | 'waiting' } | { state: 'failed'; reason: string }> {
  const own = replacementNames(command);
  if (names.length !== own.length || names.some((n) => !own.includes(n)))
    return { state: 'failed', reason: `replacement claims ${names.join(', ')} are not those of command ${command.id}` };
  let waiting = false;
  for (const n of names) {
    const c = await deps.store.get(n);
    if (!c || c.phase === 'Failed' || c.phase === 'Terminating' || c.phase === 'Terminated')
      return { state: 'failed', reason: `replacement ${n} ${c ? c.phase.toLowerCase() : 'is gone'}` };
    if (c.annotations?.[AnnotationDisruptionCommand] !== command.id)
      return { state: 'failed', reason: `replacement ${n} was not launched by command ${command.id}` };
    if (!isTrue(c, 'Initialized')) waiting = true;
  }
  return { state: waiting ? 'waiting' : 'ready' };
}

/**
 * Starts one termination execution per candidate (already running = success). The target is the
 * stored NodeClaim's — its node name and instance id, never the caller's — and a claim that is
 * gone or already terminating is skipped.
 * @returns the NodeClaims whose termination was started.
 */
export async function startTerminations(
  deps: Pick<Deps, 'termination' | 'kube' | 'store' | 'log'>,
  candidates: readonly { nodeClaim: string; nodePool: string }[],
  reason: DisruptionReason,
  now: Date,
  budgeted: boolean,
): Promise<string[]> {
  if (!deps.termination) throw new NodefleetError('termination state machine not configured (NODEFLEET_TERMINATION_STATE_MACHINE_ARN)');
  const started: string[] = [];
  for (const c of candidates) {
    const claim = await deps.store.get(c.nodeClaim);
    if (!claim || claim.phase === 'Terminating' || claim.phase === 'Terminated') {
      deps.log.warn('not starting termination: nodeclaim gone or already terminating', { nodeClaim: c.nodeClaim, phase: claim?.phase });
      continue;
    }
    await startClaimTermination(deps.termination, claim, { reason: TerminationReasons[reason], now, ...(budgeted ? { budgetNodePool: c.nodePool } : {}) });
    started.push(claim.name);
  }
  return started;
}

/**
 * The forceful expirations still true at `now`, re-read at their source before anything starts:
 * the stored claim (present, not terminating, expired by its own times — expiration.ts
 * `isClaimExpired`) and the live Node (a GET: the claim's, or legitimately absent — state.ts
 * `liveNodeProblem`). The plan's list is a request, not a fact.
 */
export async function confirmExpirations(deps: Pick<Deps, 'kube' | 'store' | 'log'>, expirations: readonly Expiration[], now: Date): Promise<Expiration[]> {
  const pools = new Map((await deps.kube.listNodePools()).map((p) => [p.metadata.name, p]));
  const out: Expiration[] = [];
  for (const e of expirations) {
    const claim = await deps.store.get(e.nodeClaim);
    let problem: string | undefined;
    if (!claim || claim.phase === 'Terminating' || claim.phase === 'Terminated') problem = `nodeclaim ${claim ? claim.phase.toLowerCase() : 'is gone'}`;
    else if (!isClaimExpired(claim, pools.get(claim.nodePool), now))
      problem = `nodeclaim has not expired (expires ${claimExpireAt(claim, pools.get(claim.nodePool)) ?? 'never'})`;
    else problem = liveNodeProblem(claim, claim.nodeName ? await deps.kube.getNode(claim.nodeName) : undefined);
    if (problem) {
      deps.log.warn('not expiring nodeclaim', { nodeClaim: e.nodeClaim, node: e.nodeName, reason: problem });
      continue;
    }
    out.push({ ...e, nodeClaim: claim!.name, nodePool: claim!.nodePool, ...(claim!.nodeName ? { nodeName: claim!.nodeName } : {}) });
  }
  return out;
}
