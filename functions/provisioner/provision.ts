/**
 * The provisioning pass for one batch of pending pods: snapshot → solve() → conditional creates →
 * launches. Decide, then act: the SchedulingResult is plain data, logged before anything launches.
 * Log lines and metric names are Karpenter's (ANCHORS.md §4.1, §4.3).
 */
import { nodePoolNotReadyReason } from '../../shared/scheduling/template.ts';
import { schedulingSettingsOf } from '../../shared/api/settings.ts';
import type { Pod } from '../../shared/api/kube.ts';
import { objectKey } from '../../shared/api/kube.ts';
import type { NodeClaim } from '../../shared/api/nodeclaim.ts';
import { ConflictError } from '../../shared/api/errors.ts';
import { choosePacking } from '../../shared/api/packing.ts';
import { nodeClassReadiness } from '../../shared/api/nodeclass-support.ts';
import { solve, type SchedulingResult } from '../../shared/scheduling/index.ts';
import { UnschedulableBackoff, schedulingConfigKey } from '../../shared/scheduling/unschedulable-backoff.ts';
import type { Deps } from '../../shared/runtime/deps.ts';
import { MetricNames } from '../../shared/api/metrics.ts';
import { cryptoRandom } from '../../shared/runtime/random.ts';
import { firstFive, toNodeClaim } from '../../shared/launch/claims.ts';
import { chooseLaunch, launchClaim, type LaunchOutcome } from '../../shared/launch/launch.ts';
import { yieldPodsNamedElsewhere } from '../../shared/launch/named-elsewhere.ts';
import { Requirements } from '../../shared/api/requirements.ts';
import { assignedPods, inFlightClaims, loadSnapshot, provisionablePods } from './snapshot.ts';
import { readStorage } from '../../shared/runtime/cluster-picture.ts';

/** At most this many per-pod duration samples per pass (one EMF document each). */
export const MaxPodDurationSamples = 100;

/** What a provisioner run needs from Deps. */
export type ProvisionerDeps = Pick<
  Deps,
  'env' | 'clock' | 'log' | 'metrics' | 'store' | 'unavailable' | 'cloud' | 'kube' | 'catalogRefresher' | 'random' | 'views' | 'resolver'
>;

/** Summary of one pass (returned by run; asserted by tests). */
export interface ProvisionSummary {
  /** Pods still needing capacity after dropping bound / assigned / gone ones. */
  provisionable: number;
  /** Claims this pass created (conflicts with a concurrent or earlier pass are not counted). */
  created: string[];
  launched: { nodeClaim: string; instanceId: string; instanceType: string; zone: string; capacityType: string }[];
  /** Claims deleted because no offering could be launched. */
  unfulfillable: string[];
  /** Claims whose launch failed for another reason (left Pending; gc's launch timeout cleans up). */
  failed: string[];
  /** Pods no NodePool can run, with the reason per NodePool. */
  unschedulable: { pod: string; reasons: Record<string, string> }[];
  /** Pods placed on existing nodes or in-flight claims. */
  placedOnExisting: number;
  /** Provisionable pods not solved this pass: their shape is backing off after being unschedulable. */
  backingOff: number;
}

/**
 * Backoff state per warm container (keyed by the container's NodeClaim store, as deps are built
 * once per container; tests' fresh worlds get fresh state). See shared/scheduling/unschedulable-backoff.ts.
 */
const backoffs = new WeakMap<object, UnschedulableBackoff>();
function backoffOf(deps: Pick<ProvisionerDeps, 'store'>): UnschedulableBackoff {
  let b = backoffs.get(deps.store);
  if (!b) backoffs.set(deps.store, (b = new UnschedulableBackoff()));
  return b;
}

/** Attempts at a fresh name when a generated one is taken (27^5 suffixes: a clash is rare, two in a row rarer still). */
export const NameAttempts = 5;

/**
 * Stores a new claim under a fresh random name (conditional create), drawing a new name if the
 * one drawn exists. Idempotency does not come from the name: a duplicate event is stopped by the
 * handler's idempotency on the event id, and a later pass for the same pods finds them assigned
 * to this claim (snapshot `assigned`).
 * @throws ConflictError after {@link NameAttempts} taken names; what the store throws otherwise.
 */
async function createClaim(deps: Pick<ProvisionerDeps, 'store'>, build: () => NodeClaim): Promise<NodeClaim> {
  for (let attempt = 1; ; attempt++) {
    const claim = build();
    try {
      return await deps.store.create(claim);
    } catch (err) {
      if (!(err instanceof ConflictError) || attempt >= NameAttempts) throw err;
    }
  }
}

/**
 * Runs one provisioning pass for the pods of an event. Cheapest checks first: the live pending
 * pods (one list of unbound pods) and then the in-flight claims decide whether any of the event's
 * pods still needs capacity; only then are the cluster picture, NodePools and catalog loaded.
 * The pass then solves the event's pods together with every other pending pod kube-scheduler
 * gave up on ({@link provisionablePods} `others`).
 */
export async function provision(deps: ProvisionerDeps, eventPods: readonly Pod[]): Promise<ProvisionSummary> {
  const now = deps.clock.now();
  const summary: ProvisionSummary = {
    provisionable: 0,
    created: [],
    launched: [],
    unfulfillable: [],
    failed: [],
    unschedulable: [],
    placedOnExisting: 0,
    backingOff: 0,
  };
  const pending = await deps.kube.listPods({ unbound: true });
  const live = new Map(pending.map((p) => [objectKey(p), p]));
  // An event without pods asks for a full pass (a node started being deleted: its pods need
  // capacity before they are evicted), so the cheap checks on the event's pods do not apply.
  const full = eventPods.length === 0;
  if (!full && provisionablePods(eventPods, { livePods: pending, assigned: new Map() }).length === 0) {
    deps.log.debug('no provisionable pod(s)', { received: eventPods.length });
    return summary;
  }
  const claims = await inFlightClaims(deps, now);
  if (!full && provisionablePods(eventPods, { livePods: pending, assigned: assignedPods(claims, live, now) }).length === 0) {
    deps.log.debug('no provisionable pod(s): every pod is on an in-flight nodeclaim', { received: eventPods.length });
    return summary;
  }
  const snap = await loadSnapshot(deps, deps.env.region, now, await deps.catalogRefresher?.get(now.getTime()), { pending, claims });
  // Pending pods only: bound pods are never provisionable, and the picture holds 100 000 of them.
  // Then the pods of nodes being deleted, after the pending ones (as Karpenter orders them): their
  // capacity launches while the node drains; those a claim was launched for on an earlier pass
  // sit on it in the snapshot and are not solved again (snapshot.ts deletingPods).
  const provisionable = [...provisionablePods(eventPods, { livePods: pending, assigned: snap.assigned }, { others: true }), ...snap.deletingPods];
  summary.provisionable = provisionable.length;
  if (provisionable.length === 0) {
    deps.log.debug('no provisionable pod(s)', { received: eventPods.length });
    return summary;
  }
  const packing = choosePacking(snap.nodePools, deps.env.packing);
  if (packing.conflict) deps.log.warn(packing.conflict);
  const backoff = backoffOf(deps);
  const configKey = schedulingConfigKey({
    nodePools: snap.nodePools,
    nodeClasses: snap.nodeClasses.values(),
    unavailable: snap.unavailable,
    resolved: { zones: snap.subnetZones, problems: Object.fromEntries(snap.nodeClassProblems) },
  });
  const { solve: pods, waiting } = backoff.partition(provisionable, configKey, now.getTime());
  summary.backingOff = waiting.length;
  if (waiting.length) {
    deps.log.debug('not solving pod(s) unschedulable on earlier passes (backing off)', {
      pods: waiting.length,
      Pods: firstFive(waiting.map((w) => objectKey(w.pod))),
      'next-retry': new Date(Math.min(...waiting.map((w) => w.retryAtMs))).toISOString(),
    });
  }
  if (pods.length === 0) return summary;
  const storage = await readStorage(deps.kube, pods);
  // An EC2NodeClass with a field nodefleet does not honour launches nothing: its NodePools are
  // unusable with the reason (in each pod's reasons), and the class's reason is logged once per pass.
  const readiness = nodeClassReadiness(snap.nodeClasses.values(), snap.nodeClassProblems);
  for (const [name, reason] of readiness.notReady) deps.log.error('ec2nodeclass not ready', { EC2NodeClass: { name }, error: reason });
  // A NodePool whose requirements Karpenter's runtime validation refuses launches nothing: said once per pass.
  for (const np of snap.nodePools) {
    const reason = nodePoolNotReadyReason(np);
    if (reason) deps.log.error('nodepool not ready', { NodePool: { name: np.metadata.name }, error: reason });
  }
  const started = performance.now();
  const result: SchedulingResult = solve({
    pods,
    nodePools: snap.nodePools,
    instanceTypes: snap.instanceTypes,
    // Each existing node carries its bound pods (snapshot.ts): passing them again as boundPods
    // would only make the scheduler match 100 000 pods to nodes a second time.
    existingNodes: snap.existingNodes,
    daemonSets: snap.daemonSets,
    unavailableOfferings: snap.unavailable,
    nodePoolNotReady: readiness.nodePoolNotReady,
    ...(storage ? { storage } : {}),
    settings: { ...schedulingSettingsOf(deps.env.settings), ...(packing.packing ? { packing: packing.packing } : {}) },
  });
  const seconds = (performance.now() - started) / 1000;
  // A pod refused for its volumes waits on storage objects, not on the scheduling configuration:
  // it is solved again on the next pass rather than backed off.
  backoff.record(
    {
      unschedulable: result.unschedulable.filter((u) => !u.invalid).map((u) => u.pod),
      scheduled: [...result.placements.map((p) => p.pod), ...result.newNodeClaims.flatMap((c) => c.pods)],
    },
    configKey,
    now.getTime(),
  );
  deps.metrics.seconds(MetricNames.schedulingDuration, seconds, { controller: 'provisioner' });
  deps.log.info('found provisionable pod(s)', { Pods: firstFive(pods.map(objectKey)), duration: `${seconds.toFixed(3)}s` });
  // Pod creation → scheduling decision, per pod (KC `pods_scheduling_decision_duration_seconds`), capped per pass.
  for (const p of pods.slice(0, MaxPodDurationSamples)) {
    const created = p.metadata.creationTimestamp ? Date.parse(p.metadata.creationTimestamp) : NaN;
    if (Number.isFinite(created)) deps.metrics.seconds(MetricNames.podsSchedulingDecisionDuration, Math.max(0, (now.getTime() - created) / 1000));
  }
  summary.placedOnExisting = result.placements.length;
  if (result.newNodeClaims.length) {
    deps.log.info('computed new nodeclaim(s) to fit pod(s)', {
      nodeclaims: result.newNodeClaims.length,
      pods: result.newNodeClaims.reduce((n, c) => n + c.pods.length, 0),
    });
  }
  // Karpenter logs each preference it relaxes (KC preferences.go `Relax`, at debug); here with why it could not hold.
  for (const r of result.relaxed ?? []) {
    for (const step of r.relaxed) {
      deps.log.info('relaxing soft constraints for pod since it previously failed to schedule', {
        Pod: { name: r.pod.metadata.name, namespace: r.pod.metadata.namespace },
        reason: `removing: ${step.preference}`,
        error:
          Object.entries(step.reasons)
            .map(([np, why]) => `nodepool ${np}: ${why}`)
            .join('; ') || 'no NodePool',
      });
    }
  }
  for (const u of result.unschedulable) {
    summary.unschedulable.push({ pod: objectKey(u.pod), reasons: u.reasons });
    if (u.invalid) {
      deps.log.info('ignoring pod', { Pod: { name: u.pod.metadata.name, namespace: u.pod.metadata.namespace }, error: u.invalid });
      continue;
    }
    deps.log.error('could not schedule pod', {
      Pod: { name: u.pod.metadata.name, namespace: u.pod.metadata.namespace },
      error: Object.entries(u.reasons)
        .map(([np, r]) => `nodepool ${np}: ${r}`)
        .join('; '),
    });
  }
  deps.metrics.count(MetricNames.unschedulablePods, { controller: 'provisioner' }, result.unschedulable.length);

  // Create every claim first (as Karpenter does), then launch them concurrently.
  const toLaunch: { claim: NodeClaim; index: number }[] = [];
  for (const [index, c] of result.newNodeClaims.entries()) {
    const nodePool = snap.nodePools.find((np) => np.metadata.name === c.nodePool)!;
    const nodeClass = snap.nodeClasses.get(nodePool.spec.template.spec.nodeClassRef.name);
    const claim = await createClaim(deps, () =>
      toNodeClaim(c, { cluster: deps.env.clusterName, nodePool, nodeClass, now, random: deps.random ?? cryptoRandom }),
    );
    summary.created.push(claim.name);
    deps.metrics.count(MetricNames.nodeClaimsCreated, { reason: 'provisioning', nodepool: c.nodePool, min_values_relaxed: 'false' });
    deps.log.info('created nodeclaim', {
      NodePool: { name: c.nodePool },
      NodeClaim: { name: claim.name },
      requests: claim.resources.requests,
      'instance-types': firstFive(c.instanceTypes.map((t) => t.name)),
    });
    toLaunch.push({ claim, index });
  }
  // Another writer of claims (a disruption command's replacement) may have named some of these
  // pods since the pass read the claims: each claim gives those up, and one left with none is
  // deleted unlaunched (shared/launch/named-elsewhere.ts; chaos seed 1136).
  if (toLaunch.length) {
    const others = await inFlightClaims(deps, now);
    const own = new Set(toLaunch.map((t) => t.claim.name));
    for (let i = toLaunch.length - 1; i >= 0; i--) {
      const y = await yieldPodsNamedElsewhere(deps, toLaunch[i].claim, others, now, { ignore: own, deleteWhenEmpty: true });
      if (y.given.length === 0) continue;
      deps.log.info('nodeclaim gives up pod(s) another nodeclaim was made for', {
        NodeClaim: { name: toLaunch[i].claim.name },
        Pods: firstFive(y.given),
        launched: !!y.claim,
      });
      if (y.claim) toLaunch[i].claim = y.claim;
      else toLaunch.splice(i, 1);
    }
  }
  const outcomes: LaunchOutcome[] = await Promise.all(
    toLaunch.map(({ claim, index }) => {
      const c = result.newNodeClaims[index];
      const nodeClass = snap.nodeClasses.get(claim.nodeClass);
      // The scheduler's launch set through the launch's own filters (KA filters the NodeClaim's types at launch).
      const first = chooseLaunch(c.launchInstanceTypes, Requirements.fromSpecs(claim.requirements), new Set());
      return launchClaim(deps, claim, nodeClass, c.instanceTypes, first, now);
    }),
  );
  for (const o of outcomes) {
    if (o.status === 'launched') {
      const r = o.result;
      summary.launched.push({ nodeClaim: o.claim.name, instanceId: r.instanceId, instanceType: r.instanceType, zone: r.zone, capacityType: r.capacityType });
      deps.metrics.count(MetricNames.nodeClaimsLaunched, { nodepool: o.claim.nodePool });
      deps.log.info('launched nodeclaim', {
        NodeClaim: { name: o.claim.name },
        'provider-id': o.claim.providerId,
        'instance-type': r.instanceType,
        zone: r.zone,
        'capacity-type': r.capacityType,
        allocatable: o.claim.allocatable,
      });
    } else if (o.status === 'unfulfillable') summary.unfulfillable.push(o.claim.name);
    else summary.failed.push(o.claim.name);
  }
  return summary;
}
