/**
 * The effects of a disruption command, each idempotent on its trigger: budget slots (holder =
 * NodeClaim name), the karpenter.sh/disrupted taint on candidates, replacement NodeClaims
 * (deterministic names from the command id, created in the store and launched with CreateFleet),
 * and termination executions (named after the claim).
 */
import type { Deps } from '../../shared/runtime/deps.ts';
import { isTrue, randomNodeClaimName, type NodeClaim } from '../../shared/api/nodeclaim.ts';
import type { NodePool } from '../../shared/api/nodepool.ts';
import { ConflictError, NodefleetError } from '../../shared/api/errors.ts';
import { LabelTopologyZone, TaintDisrupted } from '../../shared/api/labels.ts';
import type { TerminationInput } from '../../shared/api/ports.ts';
import { formatResources } from '../../shared/api/quantity.ts';
import { Requirement, Requirements } from '../../shared/api/requirements.ts';
import type {
  CommandCandidate,
  DisruptionCommand,
  DisruptionReason,
  DisruptionSnapshot,
  Expiration,
  ReplacementClaim,
  StaticCapacityPlan,
} from '../../shared/disruption/index.ts';
import { claimExpireAt, isClaimExpired, liveNodeProblem } from '../../shared/disruption/index.ts';
import { firstFive, minAllocatableOf, newNodeClaimRecord, type NewClaimSpec } from '../../shared/launch/claims.ts';
import type { InstanceType } from '../../shared/catalog/types.ts';
import { MetricNames } from '../../shared/api/metrics.ts';
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
  const fresh = newNodeClaimRecord(claimSpecOf(r, types), {
    cluster: deps.env.clusterName,
    nodePool: pool,
    nodeClass,
    now,
    name,
    annotations: { [AnnotationDisruptionCommand]: command.id },
  });
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

/**
 * The record spec of a claim decided by disruption (a replacement, or a static pool's claim):
 * its requirements with the zones it may launch in, and what its launch types hold for sure.
 */
function claimSpecOf(r: ReplacementClaim, types: readonly InstanceType[]): NewClaimSpec {
  let requirements = Requirements.fromSpecs(r.requirements);
  if (r.zones.length > 0) requirements = requirements.add(Requirement.from({ key: LabelTopologyZone, operator: 'In', values: [...r.zones] }));
  return {
    nodePool: r.nodePool,
    requirements: requirements.toSpecs(),
    taints: r.taints,
    startupTaints: r.startupTaints,
    labels: r.labels,
    requests: r.requests,
    ...(types.length > 0 ? { allocatable: formatResources(minAllocatableOf(types)) } : {}),
    pods: r.pods,
  };
}

/**
 * A uniform [0, 1) sequence from `seed` (FNV-1a seeded xorshift): the same seed gives the same
 * names, so two overlapping disruption passes that read the same claims name the same new claims.
 */
function seededRandom(seed: string): () => number {
  let x = fnv1a32(seed) || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 0x100000000;
  };
}

/**
 * Creates and launches `count` claims of a static pool (KC static provisioning → the provisioner's
 * CreateNodeClaims): the record every claim gets (newNodeClaimRecord), a conditional create, and
 * the launch every claim takes (launchClaim: capacity retries, the ICE cache, on-demand fallback).
 * Names are `<nodepool>-<suffix>` drawn from the pool's claim records (`existing`): a pass that
 * overlaps this one, having read the same claims, draws the same names, its creates conflict and
 * it launches nothing twice (the disruption function is not serialised; a minute's execution may
 * still be planning when the next starts).
 * @returns the claims launched, those another pass created first, and those that could not launch (with why).
 */
export async function launchStaticClaims(
  deps: Pick<Deps, 'store' | 'cloud' | 'unavailable' | 'env' | 'log' | 'metrics' | 'clock'>,
  r: ReplacementClaim,
  count: number,
  existing: readonly string[],
  now: Date,
  snapshot: Pick<DisruptionSnapshot, 'nodePools' | 'nodeClasses' | 'instanceTypes'>,
): Promise<{ launched: string[]; taken: string[]; failed: { nodeClaim?: string; reason: string }[] }> {
  const out: { launched: string[]; taken: string[]; failed: { nodeClaim?: string; reason: string }[] } = { launched: [], taken: [], failed: [] };
  const pool = snapshot.nodePools.find((p) => p.metadata.name === r.nodePool);
  if (!pool) return { ...out, failed: [{ reason: `nodepool "${r.nodePool}" not found` }] };
  const nodeClass = snapshot.nodeClasses?.find((c) => c.metadata.name === pool.spec.template.spec.nodeClassRef.name);
  const launchSet = new Set(r.instanceTypes);
  const types = snapshot.instanceTypes(pool).filter((t) => launchSet.has(t.name));
  const random = seededRandom([...existing].sort().join(','));
  for (let i = 0; i < count; i++) {
    const fresh = newNodeClaimRecord(claimSpecOf(r, types), {
      cluster: deps.env.clusterName,
      nodePool: pool,
      nodeClass,
      now,
      name: randomNodeClaimName(r.nodePool, random),
    });
    let claim: NodeClaim;
    try {
      claim = await deps.store.create(fresh);
    } catch (err) {
      if (!(err instanceof ConflictError)) throw err;
      out.taken.push(fresh.name);
      continue;
    }
    deps.metrics.count(MetricNames.nodeClaimsCreated, { reason: 'provisioned', nodepool: r.nodePool, min_values_relaxed: 'false' });
    deps.log.info('created nodeclaim', { NodePool: { name: r.nodePool }, NodeClaim: { name: claim.name }, 'instance-types': firstFive(r.instanceTypes) });
    const o = await launchClaim(deps, claim, nodeClass, types, undefined, now);
    if (o.status === 'launched') {
      out.launched.push(claim.name);
      deps.metrics.count(MetricNames.nodeClaimsLaunched, { nodepool: r.nodePool });
      deps.log.info('launched nodeclaim', {
        NodeClaim: { name: claim.name },
        'provider-id': o.claim.providerId,
        'instance-type': o.result.instanceType,
        zone: o.result.zone,
        'capacity-type': o.result.capacityType,
      });
    } else out.failed.push({ nodeClaim: claim.name, reason: o.status === 'unfulfillable' ? o.reason : o.error.message });
  }
  return out;
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

/** What {@link applyStaticCapacity} did. */
export interface StaticCapacityOutcome {
  launched: string[];
  terminating: string[];
}

/**
 * Carries out the static pools' plan (shared/disruption/static-capacity.ts): says each refusal
 * and node-limit stop once per pass, creates and launches the missing claims, and starts the
 * termination of each excess one — re-read in the store first (present, not terminating), and
 * through the termination state machine every other termination takes (reason overprovisioned,
 * KC static deprovisioning's). A failure of one pool never stops the others or the pass.
 */
export async function applyStaticCapacity(
  deps: Pick<Deps, 'store' | 'cloud' | 'unavailable' | 'env' | 'log' | 'metrics' | 'clock' | 'termination'>,
  plan: StaticCapacityPlan,
  snapshot: Pick<DisruptionSnapshot, 'nodePools' | 'nodeClasses' | 'instanceTypes'>,
  now: Date,
): Promise<StaticCapacityOutcome> {
  const out: StaticCapacityOutcome = { launched: [], terminating: [] };
  for (const r of plan.refused) deps.log.error('nodepool not ready', { NodePool: { name: r.nodePool }, error: r.reason });
  for (const l of plan.limited)
    deps.log.info('nodepool node limit reached', { NodePool: { name: l.nodePool }, current: l.current, desired: l.desired, limit: l.limit });
  for (const p of plan.provision) {
    deps.log.info('provisioning nodeclaims to satisfy replica count', {
      NodePool: { name: p.nodePool },
      current: p.current,
      desired: p.desired,
      'provision-count': p.count,
    });
    try {
      const r = await launchStaticClaims(deps, p.claim, p.count, p.existing, now, snapshot);
      out.launched.push(...r.launched);
      if (r.taken.length) deps.log.info('static nodeclaims already created by an overlapping pass', { NodePool: { name: p.nodePool }, nodeclaims: r.taken });
      for (const f of r.failed) deps.log.warn('could not launch static nodeclaim', { NodePool: { name: p.nodePool }, NodeClaim: f.nodeClaim, error: f.reason });
    } catch (err) {
      deps.log.error('could not create static nodeclaims', { NodePool: { name: p.nodePool }, error: (err as Error).message });
    }
  }
  const byPool = new Map<string, StaticCapacityPlan['deprovision']>();
  for (const d of plan.deprovision) byPool.set(d.nodePool, [...(byPool.get(d.nodePool) ?? []), d]);
  for (const [nodePool, ds] of byPool) {
    deps.log.info('deprovisioning nodeclaims to satisfy replica count', {
      NodePool: { name: nodePool },
      current: ds[0].current,
      desired: ds[0].desired,
      'deprovision-count': ds.length,
    });
    for (const d of ds) {
      try {
        const claim = await deps.store.get(d.nodeClaim);
        if (!claim || claim.phase === 'Terminating' || claim.phase === 'Terminated' || claim.phase === 'Failed') continue;
        await startClaimTermination(deps.termination, claim, { reason: 'overprovisioned', now });
        deps.log.info('deleting nodeclaim', {
          NodeClaim: { name: claim.name },
          ...(claim.nodeName ? { Node: { name: claim.nodeName } } : {}),
          reason: 'overprovisioned',
        });
        out.terminating.push(claim.name);
      } catch (err) {
        deps.log.error('could not terminate static nodeclaim', { NodeClaim: { name: d.nodeClaim }, error: (err as Error).message });
      }
    }
  }
  return out;
}
