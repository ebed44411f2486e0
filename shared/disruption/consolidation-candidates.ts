/**
 * Which candidates consolidation (multi- and single-node) may look at: the NodePool's policy
 * allows it (not WhenEmpty), consolidateAfter has passed (not Never), no do-not-disrupt / PDB
 * block, a known price. Sorted by savings ratio, highest first (cost.ts).
 * Source: KC pkg/controllers/disruption/consolidation.go `ShouldDisrupt`, `sortCandidates`.
 */
import { BalancedK } from './constants.ts';
import { sortBySavingsRatio } from './cost.ts';
import { candidateBlock, type MethodContext } from './method.ts';
import type { ClusterState } from './state.ts';
import type { Candidate, MethodName } from './types.ts';

export function consolidationCandidates({ state, blocked, eligible }: MethodContext, method: MethodName): Candidate[] {
  const out: Candidate[] = [];
  for (const c of state.candidates) {
    if (state.leaving.has(c.nodeName)) continue;
    const pool = state.nodePools.get(c.nodePool);
    const policy = pool?.spec.disruption?.consolidationPolicy ?? 'WhenEmptyOrUnderutilized';
    const after = pool?.spec.disruption?.consolidateAfter ?? '0s';
    let reason: string | undefined;
    if (policy === 'WhenEmpty') continue; // emptiness only: not a block worth a log line per node
    if (pool?.spec.replicas !== undefined) continue; // static pool: consolidation fields are ignored (KC StaticCapacity)
    if (after === 'Never') reason = 'consolidateAfter is Never';
    else if (!c.consolidatable) reason = `consolidateAfter (${after}) has not passed since the last pod event`;
    else if (candidateBlock(c, 'graceful')) reason = candidateBlock(c, 'graceful');
    else if (c.priceUsdPerHour === undefined) reason = `no price known for ${c.instanceType} ${c.capacityType} in ${c.zone}`;
    if (reason) blocked.push({ nodeName: c.nodeName, nodePool: c.nodePool, method, reason });
    else out.push(c);
  }
  eligible?.(out.length);
  return sortBySavingsRatio(out);
}

/**
 * Balanced policy (Karpenter v1.14): a move is worth it when
 * (savings / pool cost) / (move disruption / pool disruption) ≥ 1/k, with a base cost of 1 per node.
 * Pools with another policy always approve. Source: KC designs/balanced-consolidation.md.
 */
export function balancedApproves(state: ClusterState, candidates: readonly Candidate[], savingsUsdPerHour: number): boolean {
  const pools = new Set(candidates.filter((c) => state.nodePools.get(c.nodePool)?.spec.disruption?.consolidationPolicy === 'Balanced').map((c) => c.nodePool));
  if (pools.size === 0) return true;
  let poolCost = 0;
  let poolDisruption = 0;
  for (const c of state.candidates) {
    if (!pools.has(c.nodePool)) continue;
    poolCost += c.priceUsdPerHour ?? 0;
    poolDisruption += 1 + c.disruptionCost;
  }
  const moveDisruption = candidates.reduce((s, c) => s + 1 + c.disruptionCost, 0);
  if (poolCost <= 0 || poolDisruption <= 0 || moveDisruption <= 0) return true;
  return savingsUsdPerHour / poolCost / (moveDisruption / poolDisruption) >= 1 / BalancedK;
}

/**
 * Single-node consolidation's order: the savings-ratio order, interleaved across NodePools (the
 * first candidate of every pool, then the second of every pool, …) so one large pool does not hold
 * the whole run. Karpenter v1.15 takes pools in map order after those its last run timed out before
 * reaching (KC singlenodeconsolidation.go `SortCandidates`, `shuffleCandidates`); nodefleet takes them
 * by their best candidate, which keeps the round deterministic and starts with the highest ratio.
 * @param sorted candidates already in savings-ratio order
 */
export function interleaveByNodePool(sorted: readonly Candidate[]): Candidate[] {
  const pools = new Map<string, Candidate[]>();
  for (const c of sorted) {
    const list = pools.get(c.nodePool);
    if (list) list.push(c);
    else pools.set(c.nodePool, [c]);
  }
  const out: Candidate[] = [];
  const lists = [...pools.values()];
  for (let i = 0; out.length < sorted.length; i++) for (const list of lists) if (i < list.length) out.push(list[i]);
  return out;
}
