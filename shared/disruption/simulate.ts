/**
 * The scheduling simulation, reused as Karpenter reuses its provisioner
 * (KC pkg/controllers/disruption/helpers.go `SimulateScheduling`): the candidates are taken out
 * of the cluster, their reschedulable pods become pending, and `solve()` places them on the
 * remaining nodes (and in-flight NodeClaims) or on new NodeClaims.
 *
 * As in Karpenter v1.15's consolidation simulation (KC pkg/controllers/provisioning/scheduling
 * scheduler.go `IsConsolidationSimulation`, `addToExistingNode`; pkg/utils/disruption/disruption.go
 * `IsUnderConsolidateAfter`), the candidates' pods may not land on a node still within its
 * consolidateAfter (see {@link underConsolidateAfter}): consolidation would only refill a node that
 * has just had pods come or go. Pending pods and pods of nodes being deleted may.
 */
import type { Pod } from '../api/kube.ts';
import { InFlightPhases, isTrue, nominates } from '../api/nodeclaim.ts';
import { nodeClassReadiness } from '../api/nodeclass-support.ts';
import { createSchedulingCache, solve, type ExistingNode, type NewNodeClaim, type SchedulingResult } from '../scheduling/index.ts';
import { existingFromClaim, existingFromNode } from '../scheduling/existing-capacity.ts';
import { isCurrentlyReschedulable, isReschedulable, podKey } from './pods.ts';
import { parseDurationSeconds } from '../api/duration.ts';
import type { ClusterState } from './state.ts';
import type { Candidate } from './types.ts';

/**
 * Names of the nodes within their consolidateAfter: initialized candidates (any block aside) whose
 * NodePool sets a consolidateAfter other than 0s and Never that has not passed since the last pod
 * event (Candidate.consolidatable false).
 */
export function underConsolidateAfter(state: ClusterState): Set<string> {
  const out = new Set<string>();
  for (const c of state.candidates) {
    if (c.consolidatable) continue;
    const seconds = parseDurationSeconds(state.nodePools.get(c.nodePool)?.spec.disruption?.consolidateAfter ?? '0s');
    if (seconds !== undefined && seconds > 0) out.add(c.nodeName);
  }
  return out;
}

/** Result of simulating the removal of some candidates. */
export interface Simulation {
  result: SchedulingResult;
  /** Candidate pods that found no place, with the first reason. */
  unschedulable: { pod: string; reason: string }[];
  newNodeClaims: NewNodeClaim[];
}

/** Counts simulations and caches the nodes that never change between them. */
export class Simulator {
  simulations = 0;
  private existing?: ExistingNode[];
  private claimed?: Map<string, string>;
  private recent?: Set<string>;
  /** One scheduling cache per run: every simulation reuses the NodePool templates (shared/scheduling/cache.ts). */
  private readonly cache = createSchedulingCache();
  /** A NodePool whose EC2NodeClass is not ready (a refused field, or terms that select nothing) gets no replacement (the launch would refuse it). */
  private notReady?: ReturnType<typeof nodeClassReadiness>['nodePoolNotReady'];

  constructor(private readonly state: ClusterState) {}

  /** Nodes and in-flight claims pods may land on (everything but nodes being deleted), built once. */
  private existingNodes(): ExistingNode[] {
    if (this.existing) return this.existing;
    const s = this.state;
    const out: ExistingNode[] = [];
    const managedByName = new Map(s.managed.map((m) => [m.node.metadata.name, m]));
    for (const node of s.snapshot.nodes) {
      const m = managedByName.get(node.metadata.name);
      if (m?.deleting || node.metadata.deletionTimestamp) continue;
      out.push(existingFromNode(node, s.podsByNode.get(node.metadata.name) ?? []));
    }
    // In-flight NodeClaims without a Node yet (launched): capacity coming soon.
    const nodeNames = new Set(s.snapshot.nodes.map((n) => n.metadata.name));
    for (const c of s.snapshot.nodeClaims ?? []) {
      if ((c.nodeName && nodeNames.has(c.nodeName)) || c.phase === 'Terminating' || c.phase === 'Terminated' || c.phase === 'Failed') continue;
      if (!c.instanceType || !isTrue(c, 'Launched')) continue;
      const e = existingFromClaim(c, s.catalog);
      if (e) out.push(e);
    }
    // A pending pod an in-flight claim was made for sits on that claim's room (its node, or the
    // claim while it launches), as the provisioner counts it ({@link claimedPending}).
    const byName = new Map(out.map((n) => [n.name, n]));
    const pendingByKey = new Map(s.snapshot.pods.filter((p) => !p.spec.nodeName).map((p) => [podKey(p), p]));
    for (const [key, where] of this.claimedPending()) {
      const n = byName.get(where);
      const p = pendingByKey.get(key);
      if (n && p) n.pods = [...(n.pods ?? []), p];
    }
    this.existing = out;
    return out;
  }

  /**
   * Pending pods an in-flight NodeClaim was made for and still nominates (nodeclaim.ts
   * `nominates`, the provisioner's rule), by pod key → where their room is: the claim's node
   * when it has one in the snapshot, else the claim. Their capacity is on its way: they are no
   * background pods a replacement could be sized for. Scheduled again, a replacement named a
   * pod a provisioner claim still launching (or whose launch had failed, until gc's launch
   * timeout) was made for, and the pod was the reason for two launching claims (chaos seeds 1090, 1136).
   */
  private claimedPending(): Map<string, string> {
    if (this.claimed) return this.claimed;
    const s = this.state;
    const pending = new Set(s.snapshot.pods.filter((p) => !p.spec.nodeName).map(podKey));
    const nodeNames = new Set(s.snapshot.nodes.map((n) => n.metadata.name));
    const out = new Map<string, string>();
    for (const c of s.snapshot.nodeClaims ?? []) {
      if (!InFlightPhases.has(c.phase) || !nominates(c, s.now)) continue;
      const where = c.nodeName && nodeNames.has(c.nodeName) ? c.nodeName : c.name;
      for (const key of c.pods ?? []) if (pending.has(key) && !out.has(key)) out.set(key, where);
    }
    this.claimed = out;
    return out;
  }

  /** {@link underConsolidateAfter}, computed once. */
  private recentNodes(): Set<string> {
    return (this.recent ??= underConsolidateAfter(this.state));
  }

  /**
   * Whether a pod of a node leaving would be moved by its drain, so needs a place: not held by
   * do-not-disrupt or a fully blocking PDB (no capacity waits idle for a pod that stays until the
   * terminationGracePeriod deadline). KC helpers.go `SimulateScheduling`, `IsCurrentlyReschedulable`.
   */
  private willMove(p: Pod): boolean {
    return isCurrentlyReschedulable(p, this.state.pdbLimits, this.state.now);
  }

  /**
   * Pods that will need a place anyway: pending ones (but those an in-flight claim is for:
   * {@link claimedPending}), and those on nodes being deleted or
   * leaving this pass. They go into every simulation first-class (so consolidation does not take
   * capacity they need), but only the candidates' pods decide the outcome (KC helpers.go
   * `SimulateScheduling`: pending and deleting-node pods are added to the candidates' pods).
   */
  private background(): Pod[] {
    const s = this.state;
    const out: Pod[] = [];
    const claimed = this.claimedPending();
    for (const p of s.snapshot.pods) if (!p.spec.nodeName && isReschedulable(p) && !claimed.has(podKey(p))) out.push(p);
    const gone = new Set([...s.managed.filter((m) => m.deleting).map((m) => m.node.metadata.name), ...s.leaving]);
    for (const name of gone) for (const p of s.podsByNode.get(name) ?? []) if (this.willMove(p)) out.push(p);
    return out;
  }

  /**
   * Simulates removing `candidates` (plus nodes already leaving this pass): their reschedulable
   * pods that the drain would move ({@link willMove}) must fit on what remains or on new NodeClaims. New NodeClaims holding none of the
   * candidates' pods (made for pending pods) are not the command's business and are dropped.
   * @param opts.consolidation a consolidation simulation: the candidates' pods stay off nodes within
   *   their consolidateAfter (drift, expiration and rebalance do not ask for this)
   * @param opts.includeBlockedPods place the candidates' held pods too (KC `IncludeBlockedCandidatePods`):
   *   graceful expiration pre-spins capacity for every pod, as its drain ends at the deadline
   */
  simulate(candidates: readonly Candidate[], opts: { consolidation?: boolean; includeBlockedPods?: boolean } = {}): Simulation {
    this.simulations++;
    const s = this.state;
    const removed = new Set([...candidates.map((c) => c.nodeName), ...s.leaving]);
    const pending: Pod[] = [];
    const candidateKeys = new Set<string>();
    const unbind = (p: Pod): Pod => ({ ...p, spec: { ...p.spec, nodeName: undefined }, status: { ...p.status, nominatedNodeName: undefined } });
    for (const c of candidates) {
      for (const p of c.reschedulablePods) {
        if (!opts.includeBlockedPods && !this.willMove(p)) continue;
        candidateKeys.add(podKey(p));
        pending.push(unbind(p));
      }
    }
    for (const p of this.background()) if (!candidateKeys.has(podKey(p))) pending.push(unbind(p));
    const result = solve({
      pods: pending,
      nodePools: s.snapshot.nodePools,
      instanceTypes: s.snapshot.instanceTypes,
      existingNodes: this.existingNodes()
        .filter((n) => !removed.has(n.name))
        .map((n) => (opts.consolidation && this.recentNodes().has(n.name) ? { ...n, refusedPods: candidateKeys } : n)),
      daemonSets: s.snapshot.daemonSets,
      unavailableOfferings: s.snapshot.unavailableOfferings,
      nodePoolNotReady: (this.notReady ??= nodeClassReadiness(
        s.snapshot.nodeClasses ?? [],
        new Map(Object.entries(s.snapshot.nodeClassProblems ?? {})),
      ).nodePoolNotReady),
      ...(s.snapshot.storage ? { storage: s.snapshot.storage } : {}),
      settings: s.snapshot.settings?.scheduling,
      // One replacement at most: a claim split in two would fail the consolidation it could pass.
      splitClaims: false,
      cache: this.cache,
    });
    const unschedulable = result.unschedulable
      .filter((u) => candidateKeys.has(podKey(u.pod)))
      .map((u) => ({
        pod: podKey(u.pod),
        reason:
          Object.entries(u.reasons)
            .map(([pool, why]) => `${pool}: ${why}`)
            .join('; ') || 'no nodepool can run it',
      }));
    // A candidate's pod placed on a managed node that is not initialized yet (or a claim still
    // launching) is not a safe place: the decision would rest on capacity that may never come up
    // (KC helpers.go `SimulateScheduling`, UninitializedNodeError).
    const uninitialized = new Set([
      ...s.managed.filter((m) => !m.initialized).map((m) => m.node.metadata.name),
      ...this.existingNodes()
        .filter((n) => n.launching)
        .map((n) => n.name),
    ]);
    for (const pl of result.placements) {
      if (candidateKeys.has(podKey(pl.pod)) && uninitialized.has(pl.node))
        unschedulable.push({ pod: podKey(pl.pod), reason: `would schedule against uninitialized node ${pl.node}` });
    }
    const newNodeClaims = result.newNodeClaims.filter((nc) => nc.pods.some((p) => candidateKeys.has(podKey(p))));
    return { result, unschedulable, newNodeClaims };
  }
}
