/**
 * `plan` over several provisioning rounds, so that NodePool limits read as the product applies
 * them.
 *
 * Within one `solve()` a NodePool's limits hold, for every open NodeClaim, the capacity of the
 * largest instance type it may still launch (as Karpenter's scheduler does, so a round never
 * overshoots a limit whatever type CreateFleet picks). Once the round's claims are launched the
 * provisioner counts their real capacity, and the next batch of the still-pending pods gets the
 * room that is left. A single `solve()` therefore reports pods as "exceeds limits" that the
 * product places a round later. {@link planRounds} replays that: each round's NodeClaims become
 * in-flight capacity of the next round, sized as their cheapest launch type (what the plan prints
 * and prices; an on-demand `lowest-price` fleet launches it), and the pods a limit stopped are
 * solved again, until a round places nothing more.
 */
import type { Pod } from '../../shared/api/kube.ts';
import * as L from '../../shared/api/labels.ts';
import { Requirement } from '../../shared/api/requirements.ts';
import { podRequests, solve, type ExistingNode, type NewNodeClaim, type SchedulingInput, type SchedulingResult } from '../../shared/scheduling/index.ts';

/**
 * Upper bound on simulated rounds: each round launches at least one NodeClaim, so this only
 * stops a plan of pods that each need a round of their own; what is left is reported as is.
 */
export const MaxPlanRounds = 50;

/** Marker in a scheduler reason when a NodePool limit stopped the pod (shared/scheduling/nodeclaim.ts). */
const LimitReason = /exceeds limits/;

/** A NodeClaim of a later round, and why its pods waited. */
export interface LaterRound {
  /** 2 for the round after the first, … */
  round: number;
  /** The pods placed in this round (namespace/name). */
  pods: string[];
  /** NodePool → the limit message that held these pods back in the round before. */
  heldBy: Record<string, string>;
}

/** What {@link planRounds} returns: the merged result, each new claim's round, and the later rounds. */
export interface RoundsResult {
  /** All rounds merged: claims of every round, placements on nodes that existed, final unschedulable pods. */
  result: SchedulingResult;
  /** Round (1-based) of `result.newNodeClaims[i]`. */
  claimRounds: number[];
  /** One entry per round after the first that placed pods. */
  laterRounds: LaterRound[];
  /** True when {@link MaxPlanRounds} stopped the simulation with limit-held pods left. */
  truncated: boolean;
}

function podKey(p: Pod): string {
  return `${p.metadata.namespace ?? 'default'}/${p.metadata.name}`;
}

/** A planned NodeClaim as in-flight capacity: its cheapest launch type, the claim's pods on it. */
function asInFlight(c: NewNodeClaim, name: string): ExistingNode | undefined {
  const type = c.launchInstanceTypes[0];
  if (!type) return undefined;
  return {
    name,
    labels: { ...type.labels, ...c.labels, [L.LabelInstanceType]: type.name, [L.LabelNodePool]: c.nodePool, [L.LabelHostname]: name },
    taints: c.taints,
    // The daemonset pods are not among c.pods: their share comes off the room.
    allocatable: Object.fromEntries(Object.entries(type.allocatable).map(([k, v]) => [k, v - (c.daemonSetRequests[k] ?? 0)])),
    capacity: type.capacity,
    pods: [...c.pods],
    launching: true,
    nodePool: c.nodePool,
    requirements: c.requirements.add(Requirement.from({ key: L.LabelInstanceType, operator: 'In', values: [type.name] })),
  };
}

/**
 * Solves `input` round after round while NodePool limits hold pods back (see the file comment).
 * Pods a later round puts on an earlier round's claim join that claim (its requests grow).
 * @param solveRound the scheduler (default {@link solve}); tests pass a counting wrapper.
 */
export function planRounds(input: SchedulingInput, solveRound: (i: SchedulingInput) => SchedulingResult = solve): RoundsResult {
  const first = solveRound(input);
  const claims = first.newNodeClaims.map((c) => ({ ...c, pods: [...c.pods], requests: { ...c.requests } }));
  const claimRounds = claims.map(() => 1);
  const placements = [...first.placements];
  const laterRounds: LaterRound[] = [];
  let unschedulable = first.unschedulable;
  const relaxed = [...(first.relaxed ?? [])];
  const merged = () => ({ newNodeClaims: claims, placements, unschedulable, ...(relaxed.length > 0 ? { relaxed } : {}) });
  let round = 1;
  const inFlightName = (i: number) => `planned-round-${claimRounds[i]}-${i}`;
  while (unschedulable.some((u) => Object.values(u.reasons).some((r) => LimitReason.test(r)))) {
    if (round >= MaxPlanRounds) return { result: merged(), claimRounds, laterRounds, truncated: true };
    round++;
    const inFlight = new Map<string, number>();
    const existing: ExistingNode[] = [...(input.existingNodes ?? [])];
    claims.forEach((c, i) => {
      const node = asInFlight(c, inFlightName(i));
      if (node) {
        existing.push(node);
        inFlight.set(node.name, i);
      }
    });
    const r = solveRound({ ...input, pods: unschedulable.map((u) => u.pod), existingNodes: existing, boundPods: input.boundPods });
    const placed: string[] = [];
    for (const pl of r.placements) {
      const i = inFlight.get(pl.node);
      if (i === undefined) placements.push(pl);
      else {
        claims[i].pods.push(pl.pod);
        for (const [k, v] of Object.entries(podRequests(pl.pod.spec))) claims[i].requests[k] = (claims[i].requests[k] ?? 0) + v;
      }
      placed.push(podKey(pl.pod));
    }
    for (const c of r.newNodeClaims) {
      claims.push({ ...c, pods: [...c.pods], requests: { ...c.requests } });
      claimRounds.push(round);
      placed.push(...c.pods.map(podKey));
    }
    if (placed.length === 0) break;
    relaxed.push(...(r.relaxed ?? []));
    const placedSet = new Set(placed);
    const heldBy: Record<string, string> = {};
    for (const u of unschedulable) {
      if (!placedSet.has(podKey(u.pod))) continue;
      for (const [np, why] of Object.entries(u.reasons)) if (LimitReason.test(why)) heldBy[np] ??= why;
    }
    laterRounds.push({ round, pods: placed, heldBy });
    unschedulable = r.unschedulable;
  }
  return { result: merged(), claimRounds, laterRounds, truncated: false };
}
