/** What the documented differences (this folder, one file each) share: their shape and the predicates more than one of them uses. */
import { type Comparison, type Divergence, podKey } from '../compare.ts';
import type { DisruptionDivergence, OracleCandidate, OracleDisruption } from '../compare-disruption.ts';
import type { DisruptionPlan } from '../../../shared/disruption/index.ts';
import type { DisruptionScenario } from '../disruption-scenario.ts';
import type { OracleOutput } from '../oracle.ts';
import { type ParityScenario, toSchedulingInput } from '../scenario.ts';
import type { Pod } from '../../../shared/api/kube.ts';
import { type SchedulingResult, solve } from '../../../shared/scheduling/index.ts';
import { type Seat, seatOf, seats } from '../domains.ts';
import { parseResource } from '../../../shared/api/quantity.ts';

export interface Difference {
  id: string;
  /** Why nodefleet decides differently, and why that is right for its users. */
  reason: string;
  /** The cases that pin the behaviour (paths under test/cases), the main one first. */
  cases: string[];
  /** True when this difference explains the divergence on this scenario. */
  explains: (d: Divergence, s: ParityScenario, karpenter: OracleOutput, c: Comparison) => boolean;
}

export const LimitsExhausted = 'all available instance types exceed limits for nodepool';

/**
 * True when nodefleet's decision keeps every NodePool with limits within
 * them counted as Karpenter counts (scheduler.go: existing nodes' capacity, plus for each new
 * claim the largest capacity among its instance-type options, per limited resource; `nodes` one
 * per node). `result` is nodefleet's decision on `s`.
 */
export function withinLimitsKarpentersWay(s: ParityScenario, result: SchedulingResult): boolean {
  const input = toSchedulingInput(s, 'karpenter');
  const existing = input.existingNodes ?? [];
  return input.nodePools.every((np) => {
    const limits = np.spec.limits;
    if (!limits) return true;
    const name = np.metadata.name;
    return Object.entries(limits).every(([k, v]) => {
      const one = (cap: Record<string, number>) => (k === 'nodes' ? 1 : (cap[k] ?? 0));
      const used =
        existing.filter((n) => n.nodePool === name).reduce((x, n) => x + one(n.capacity ?? n.allocatable), 0) +
        result.newNodeClaims.filter((c) => c.nodePool === name).reduce((x, c) => x + Math.max(0, ...c.instanceTypes.map((t) => one(t.capacity))), 0);
      return used <= parseResource(k, v);
    });
  });
}

/** True when a nodefleet decision places exactly the pods Karpenter placed (on existing nodes or new claims). */
export function placesKarpentersPods(r: SchedulingResult, karpenter: OracleOutput): boolean {
  const placed = placedKeys(r);
  const theirs = new Set([...karpenter.placements.map((x) => x.pod), ...karpenter.nodeClaims.flatMap((k) => k.pods ?? [])]);
  return placed.size === theirs.size && [...placed].every((k) => theirs.has(k));
}

/** True when a nodefleet decision is Karpenter's: the same pods on the same existing nodes and the same pods together on new claims. */
export function decidesAsKarpenter(r: SchedulingResult, karpenter: OracleOutput): boolean {
  if (
    onNodes(karpenter.placements.map((x): [string, string] => [x.pod, x.node])) !== onNodes(r.placements.map((x): [string, string] => [podKey(x.pod), x.node]))
  )
    return false;
  return claimGroups(karpenter.nodeClaims.map((k) => k.pods ?? [])) === claimGroups(r.newNodeClaims.map((n) => n.pods.map(podKey)));
}

/** The pods (`namespace/name`) a nodefleet decision places, on existing nodes or new claims. */
export function placedKeys(r: SchedulingResult): Set<string> {
  return new Set([...r.placements.map((x) => podKey(x.pod)), ...r.newNodeClaims.flatMap((n) => n.pods.map(podKey))]);
}

/** nodefleet's `packing: karpenter` decision on a scenario (the one `extra-placed` and `claims` are taken from), and its seats; computed once per scenario. */
export const decisions = new WeakMap<ParityScenario, { result: SchedulingResult; seats: Seat[] }>();

export function nodefleetDecision(s: ParityScenario): { result: SchedulingResult; seats: Seat[] } {
  let x = decisions.get(s);
  if (!x) {
    const result = solve(toSchedulingInput(s, 'karpenter'));
    decisions.set(s, (x = { result, seats: seats(s, result) }));
  }
  return x;
}

export function nodefleetSeats(s: ParityScenario): Seat[] {
  return nodefleetDecision(s).seats;
}

/**
 * True when `d` names pods and each, where nodefleet placed it (`seat`, with every seat of the
 * decision in `all`) and with Karpenter's reason for leaving it pending, passes `ok`.
 */
export function everyExtraPod(
  d: Divergence,
  s: ParityScenario,
  karpenter: OracleOutput,
  ok: (pod: Pod, seat: Seat, reason: string, all: readonly Seat[]) => boolean,
): boolean {
  if (d.kind !== 'extra-placed') return false;
  const keys = extraPodKeys(d);
  const pods = s.pods.filter((p) => keys.includes(podKey(p)));
  if (pods.length === 0 || pods.length !== keys.length) return false;
  const all = nodefleetSeats(s);
  return pods.every((pod) => {
    const key = podKey(pod);
    const seat = seatOf(all, key);
    const reason = karpenter.unschedulable.find((u) => u.pod === key);
    return !!seat && !!reason && ok(pod, seat, Object.values(reason.reasons).join('; '), all);
  });
}

/** The pods an `extra-placed` divergence names (compare.ts: "nodefleet places, Karpenter does not: ns/a: reason | ns/b: reason", or "ns/a, ns/b" without reasons). */
export function extraPodKeys(d: Divergence): string[] {
  const body = d.detail.replace(/^[^:]*: /, '');
  return body.includes(': ') ? body.split(' | ').map((x) => x.slice(0, x.indexOf(': '))) : body.split(', ');
}

/** The single domain Karpenter pinned the pod's claim to on `key`, read from its reason (`key In [v]`). */
export function pinnedDomain(reason: string, key: string): string | undefined {
  return new RegExp(`${key.replace(/[.]/g, '\\.')} In \\[([^\\] ]+)\\]`).exec(reason)?.[1];
}

/**
 * nodefleet's `packing: karpenter` decision (with its seats) when `d` and every other divergence
 * of the comparison are of `kinds`, both packings place as many pods as Karpenter, and the
 * decision's claims cost no more than Karpenter's; otherwise undefined.
 */
export function samePodsNoDearer(
  d: Divergence,
  s: ParityScenario,
  c: Comparison,
  kinds: readonly Divergence['kind'][],
): { result: SchedulingResult; seats: Seat[] } | undefined {
  if (!kinds.includes(d.kind) || c.divergences.some((x) => !kinds.includes(x.kind))) return undefined;
  if (c.placed.karpenterPacking !== c.placed.karpenter || c.placed.default !== c.placed.karpenter) return undefined;
  const decided = nodefleetDecision(s);
  return decided.result.newNodeClaims.reduce((x, n) => x + n.priceUsdPerHour, 0) > c.karpenterCost + 1e-9 ? undefined : decided;
}

/** Pods per claim as one comparable string (claims and their pods in any order; empty claims dropped; each pod key mapped by `name`). */
export function claimGroups(groups: readonly (readonly string[])[], name: (key: string) => string = (k) => k): string {
  return groups
    .filter((g) => g.length > 0)
    .map((g) => g.map(name).sort().join(','))
    .sort()
    .join(' | ');
}

/** `pod@node` pairs as one comparable string (any order). */
export function onNodes(pairs: readonly (readonly [string, string])[]): string {
  return pairs
    .map(([pod, node]) => `${pod}@${node}`)
    .sort()
    .join(' ');
}

/** The pods a divergence names (`namespace/name`). */
export function namedPods(d: Divergence, s: ParityScenario): Pod[] {
  return s.pods.filter((p) => new RegExp(`(^|[ :,])${podKey(p)}(,|$| )`).test(d.detail));
}

/** A difference between nodefleet's disruption planner and Karpenter's disruption methods, explained. */
export interface DisruptionDifference {
  id: string;
  /** Why the decisions differ. */
  reason: string;
  /** The cases that pin nodefleet's behaviour (paths under test/cases); none for an open gap. */
  cases: string[];
  /** True when this difference explains the divergence on this scenario. */
  explains: (d: DisruptionDivergence, s: DisruptionScenario, karpenter: OracleDisruption, plan: DisruptionPlan) => boolean;
}

/** Karpenter's candidates of the method its command came from, by node name. */
export function karpenterCandidates(k: OracleDisruption): Map<string, OracleCandidate> {
  const m = k.methods.find((x) => x.method === k.command?.method);
  return new Map((m?.candidates ?? []).map((c) => [c.node, c]));
}

export const sameMultiset = (a: string[], b: string[]) => a.length === b.length && [...a].sort().join('|') === [...b].sort().join('|');
