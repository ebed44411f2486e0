/**
 * Cost-aware packing's re-pack of a small batch: the pods a pass put on new claims of one NodePool
 * are packed again from scratch, node by node, each time on the node that holds the most of them
 * for its price, and the result replaces the claims when it costs less. First-fit in queue order
 * cannot see that several small nodes sell a batch cheaper than the one larger node it grew
 * (10 × 250m on c7g.xlarge at $0.060/h where four spot mediums cost $0.043/h), nor the reverse
 * (`npm run bench -- --exact`). Every node is a {@link SimClaim} built by the same `add` that
 * packs claims, so every scheduling rule holds; only cost-aware packing's own refusals (efficient
 * caps, shape rates) are left out, since the price decides here.
 *
 * A batch of few pod kinds (at most {@link ExactMaxKinds}, and few enough count vectors) is packed
 * exactly by {@link exactByKinds}: the cheapest partition into nodes priced as the cheapest type
 * that holds them. Larger batches, or one whose exact nodes do not build as planned, get the greedy.
 *
 * The greedy: a pod's value is what it costs at the best rate a type that takes it sells its
 * shape ({@link rateOf}, at the offering its requirements allow), so a node's worth is the value
 * of the pods it holds over its price. For each candidate type, a node of that type is filled
 * with the remaining pods (in value order, or one of each kind in turn); the node with the highest
 * value per dollar is opened, and so on until every pod has a node. Candidate types are those no
 * other type beats on price (per pod kind, offerings included), room in every resource and the
 * kinds it takes. Then a local pass: nodes whose pods move onto the others for less are dropped,
 * and pairs of nodes are packed again together while that saves.
 */
import type { Resources } from '../api/quantity.ts';
import type { PodGroups } from './topology.ts';
import { openClaim, rateOf, SimClaim, type ClaimContext } from './nodeclaim.ts';
import type { PodInfo } from './pod.ts';
import type { ClaimTemplate, TemplateType } from './template.ts';

/** Batches of at most this many pods on one NodePool's new claims are re-packed (the greedy is quadratic in nodes and types). */
export const RepackMaxPods = 64;

/** USD/hour below which two prices count as equal (sums of floats). */
const PriceEpsilonUsd = 1e-9;

/**
 * The exact re-pack ({@link exactByKinds}) runs when the batch has at most this many pod kinds,
 * its count vectors at most {@link ExactMaxStates} and its min-plus steps at most
 * {@link ExactMaxSteps}; larger batches get the greedy alone.
 */
export const ExactMaxKinds = 6;
export const ExactMaxStates = 40_000;
export const ExactMaxSteps = 40_000_000;

interface Kind {
  pods: PodInfo[];
  value: number;
  /** Only accelerator / metal types hold it (Karpenter's exotic filter lets such a pod open an exotic node). */
  exoticOnly: boolean;
}

interface Candidate {
  type: TemplateType;
  /** Per kind index: the price of a node of this type holding one pod of it, or Infinity when it cannot. */
  price: number[];
  /** The lowest of `price`. */
  cheapest: number;
}

/**
 * Packs `pods` (all of them) onto new claims of template `t` as the file comment says; returns the
 * claims when they cost less than `below` (USD/hour, as `price` prices a claim), else undefined.
 * `hostname(i)` names the i-th claim.
 */
export function repackPods(
  t: ClaimTemplate,
  pods: readonly PodInfo[],
  groupsOf: (info: PodInfo) => PodGroups,
  ctx: ClaimContext,
  price: (c: SimClaim) => number,
  below: number,
  hostname: (i: number) => string,
): SimClaim[] | undefined {
  const loose: ClaimContext = { ...ctx, costPacking: false };
  const bySig = new Map<string, PodInfo[]>();
  for (const p of pods) {
    const list = bySig.get(p.signature);
    if (list) list.push(p);
    else bySig.set(p.signature, [p]);
  }
  let kinds: Kind[] = [];
  for (const list of bySig.values()) {
    const head = list[0];
    const open = openClaim(t, 'repack-probe', head, groupsOf(head), loose);
    if (!(open instanceof SimClaim)) return undefined;
    kinds.push({ pods: list, value: 0, exoticOnly: open.options.every((o) => o.exotic) });
  }
  // The greedy and its local pass only where the exact re-pack does not run (or its nodes would
  // not build as planned).
  const exact = exactByKinds(t, kinds, groupsOf, loose, price);
  if (exact) {
    const total = exact.prices.reduce((sum, p) => sum + p, 0);
    return total < below - PriceEpsilonUsd ? exact.claims.map((c, n) => copyClaim(c, hostname(n))) : undefined;
  }
  const found = candidateTypes(t, kinds, groupsOf, loose, price);
  if (found.length === 0) return undefined;
  // Largest value first.
  const order = kinds.map((_, i) => i).sort((a, b) => kinds[b].value - kinds[a].value);
  kinds = order.map((i) => kinds[i]);
  const candidates: Candidate[] = found.map((c) => ({ type: c.type, price: order.map((i) => c.price[i]), cheapest: c.cheapest }));

  // Fills a node of the candidate's type from `left` (per kind), the pods of kind `seed` first,
  // then the others largest value first, or (`mixed`) one pod of each kind in turn from the seed
  // on; a pod whose requirements would make the node dearer per value it holds (an on-demand pod
  // on a spot node) stays out, and a kind that does not fit is not tried again.
  const fill = (c: Candidate, left: readonly PodInfo[][], seed: number, mixed: boolean): { claim: SimClaim; price: number; value: number } | undefined => {
    let claim: SimClaim | undefined;
    let cost = 0;
    let value = 0;
    const next = kinds.map(() => 0);
    const done = kinds.map((_, k) => c.price[k] === Infinity || left[k].length === 0);
    const tryPod = (k: number): boolean => {
      const p = left[k][next[k]];
      if (!claim) {
        if (c.type.exotic && !kinds[k].exoticOnly) return false;
        const o = openClaim(t, 'repack-probe', p, groupsOf(p), loose, false, [c.type]);
        if (!(o instanceof SimClaim)) return false;
        claim = o;
        cost = price(o);
      } else if (p.hasRequirements) {
        const trial = copyClaim(claim);
        if (trial.add(p, groupsOf(p), loose)) return false;
        const after = price(trial);
        if (after > cost + PriceEpsilonUsd && (value + kinds[k].value) / after < value / cost) return false;
        claim = trial;
        cost = after;
      } else if (claim.add(p, groupsOf(p), loose)) return false;
      value += kinds[k].value;
      next[k]++;
      return true;
    };
    const step = (k: number) => {
      if (done[k]) return;
      if (!tryPod(k) || next[k] >= left[k].length) done[k] = true;
    };
    if (mixed) {
      for (let n = seed; done.some((d) => !d); n = (n + 1) % kinds.length) step(n);
    } else {
      while (!done[seed]) step(seed);
      for (let k = 0; k < kinds.length; k++) while (!done[k]) step(k);
    }
    return claim && cost < Infinity ? { claim, price: cost, value } : undefined;
  };

  // The greedy over a set of pods: claims of every type of the pool holding them (what the launch
  // may fall back on, and room to grow for `eliminate`), or of the chosen type alone when that
  // holds them for less; undefined once the total reaches `limit`.
  const kindOf = new Map<string, number>(kinds.map((k, i) => [k.pods[0].signature, i]));
  const greedy = (set: readonly PodInfo[], limit: number): { claims: SimClaim[]; prices: number[] } | undefined => {
    const left: PodInfo[][] = kinds.map(() => []);
    for (const p of set) left[kindOf.get(p.signature)!].push(p);
    const claims: SimClaim[] = [];
    const prices: number[] = [];
    let total = 0;
    while (left.some((l) => l.length > 0)) {
      let best: { claim: SimClaim; price: number; type: TemplateType } | undefined;
      let bestWorth = -Infinity;
      // Seeds: the largest kind left, and the largest without requirements (a node the first
      // one's requirements would make dearer, an on-demand pod's, may be the better buy).
      const seeds = [left.findIndex((l) => l.length > 0), left.findIndex((l, k) => l.length > 0 && !kinds[k].pods[0].hasRequirements)].filter(
        (k, i, all) => k >= 0 && all.indexOf(k) === i,
      );
      for (const c of candidates) {
        // A node dearer than what is left to spend cannot be part of a cheaper packing.
        if (c.cheapest >= limit - total - PriceEpsilonUsd) continue;
        for (const seed of seeds) {
          for (const mixed of [false, true]) {
            const f = fill(c, left, seed, mixed);
            if (!f) continue;
            const worth = f.value / f.price;
            if (worth > bestWorth * (1 + 1e-12) || (best && worth >= bestWorth * (1 - 1e-12) && f.price < best.price)) {
              best = { claim: f.claim, price: f.price, type: c.type };
              bestWorth = worth;
            }
          }
        }
      }
      if (!best) return undefined;
      const taken = new Set(best.claim.pods);
      for (let k = 0; k < left.length; k++) left[k] = left[k].filter((p) => !taken.has(p));
      let claim = build(t, 'repack-node', best.claim.pods, t.types, groupsOf, loose);
      let p = claim ? price(claim) : Infinity;
      if (!claim || p > best.price + PriceEpsilonUsd) [claim, p] = [best.claim, best.price];
      claims.push(claim);
      prices.push(p);
      if ((total += p) >= limit - PriceEpsilonUsd) return undefined;
    }
    return { claims, prices };
  };

  const first = greedy(pods, Infinity);
  if (!first) return undefined;
  const { claims, prices } = first;
  const plainFits = (p: PodInfo) => !kinds[kindOf.get(p.signature)!].exoticOnly;
  let alive = eliminate(claims, prices, groupsOf, loose, price, plainFits);
  // Pairs of nodes packed again together, while that saves (a pair tried in vain is not tried
  // again unless one of its nodes changed).
  const ids = new Map<SimClaim, number>();
  const id = (c: SimClaim) => ids.get(c) ?? ids.set(c, ids.size).get(c)!;
  const tried = new Set<string>();
  for (let changed = true; changed;) {
    changed = false;
    search: for (let a = 0; a < alive.length; a++) {
      for (let b = a + 1; b < alive.length; b++) {
        const [i, j] = [alive[a], alive[b]];
        const key = `${id(claims[i])}:${id(claims[j])}`;
        if (tried.has(key)) continue;
        const again = greedy([...claims[i].pods, ...claims[j].pods], prices[i] + prices[j]);
        if (!again) {
          tried.add(key);
          continue;
        }
        const at = claims.length;
        claims.push(...again.claims);
        prices.push(...again.prices);
        alive = [...alive.filter((x) => x !== i && x !== j), ...again.claims.map((_, n) => at + n)];
        alive = eliminate(claims, prices, groupsOf, loose, price, plainFits, alive);
        changed = true;
        break search;
      }
    }
  }
  const cost = alive.reduce((sum, i) => sum + prices[i], 0);
  return cost < below - PriceEpsilonUsd ? alive.map((i, n) => copyClaim(claims[i], hostname(n))) : undefined;
}

/**
 * Local improvement: a node whose pods all move onto the other nodes for less than its price is
 * dropped (each pod, largest first, onto the node it makes dearest by the least, which may grow
 * onto a larger type; a pod that some plain type holds never goes onto an accelerator node, as
 * when claims are opened). Nodes that hold the least value per dollar are tried first, until a round
 * drops none. Updates `claims` and `prices` in place; returns the indices of `among` kept.
 */
function eliminate(
  claims: SimClaim[],
  prices: number[],
  groupsOf: (info: PodInfo) => PodGroups,
  ctx: ClaimContext,
  price: (c: SimClaim) => number,
  plainFits: (p: PodInfo) => boolean,
  among: readonly number[] = claims.map((_, i) => i),
): number[] {
  const alive = new Set(among);
  for (let changed = true; changed;) {
    changed = false;
    const order = [...alive].sort((a, b) => claims[a].pods.length / prices[a] - claims[b].pods.length / prices[b]);
    for (const i of order) {
      if (alive.size < 2) break;
      const moved = new Map<number, { claim: SimClaim; price: number }>();
      let delta = 0;
      let ok = true;
      for (const p of claims[i].pods) {
        let best: { j: number; claim: SimClaim; price: number; d: number } | undefined;
        for (const j of alive) {
          if (j === i || (plainFits(p) && claims[j].options.every((o) => o.exotic))) continue;
          const base = moved.get(j) ?? { claim: claims[j], price: prices[j] };
          const c = copyClaim(base.claim);
          if (c.add(p, groupsOf(p), ctx)) continue;
          const after = price(c);
          const d = after - base.price;
          if (!best || d < best.d) best = { j, claim: c, price: after, d };
          if (best.d <= 0) break;
        }
        if (!best || (delta += best.d) >= prices[i] - PriceEpsilonUsd) {
          ok = false;
          break;
        }
        moved.set(best.j, { claim: best.claim, price: best.price });
      }
      if (!ok) continue;
      for (const [j, m] of moved) {
        claims[j] = m.claim;
        prices[j] = m.price;
      }
      alive.delete(i);
      changed = true;
    }
  }
  return [...alive].sort((a, b) => a - b);
}

/**
 * The exact re-pack for batches of few pod kinds: pods of one kind are interchangeable, so a node
 * is a count vector (how many of each kind it holds), and a node's price is that of the cheapest
 * type (at its cheapest offering under the kinds' requirements) whose room holds the vector: the
 * price `price` gives a claim of that single type holding one pod of each kind present. The
 * cheapest partition of the batch's count vector into node vectors is a dynamic program over the
 * vectors below it, f(v) = min over u ≤ v holding a pod of v's first kind of price(u) + f(v − u).
 * A pod that a plain type holds never shares an accelerator node (as in the greedy). The nodes
 * are then built as claims of every type of the pool by the same `add` as any claim, so every
 * rule holds; undefined when the batch is too large or a node does not build at its planned price.
 */
function exactByKinds(
  t: ClaimTemplate,
  kinds: readonly Kind[],
  groupsOf: (info: PodInfo) => PodGroups,
  ctx: ClaimContext,
  price: (c: SimClaim) => number,
): { claims: SimClaim[]; prices: number[] } | undefined {
  const m = kinds.length;
  if (m > ExactMaxKinds) return undefined;
  const n = kinds.map((k) => k.pods.length);
  const stride: number[] = [];
  let states = 1;
  let steps = 1;
  for (const c of n) {
    stride.push(states);
    states *= c + 1;
    steps *= ((c + 1) * (c + 2)) / 2;
  }
  if (states > ExactMaxStates || steps > ExactMaxSteps) return undefined;
  const keys = [...new Set(kinds.flatMap((k) => Object.keys(k.pods[0].requests)))];
  const req = kinds.map((k) => keys.map((r) => k.pods[0].requests[r] ?? 0));

  // Per set of kinds (bit mask): the types that hold one pod of each, cheapest first, none
  // beaten by a cheaper one with as much room.
  interface Holder {
    room: number[];
    price: number;
  }
  // A claim's price were it of one of its types alone.
  const pricesByType = (c: SimClaim): Map<TemplateType, number> => {
    const byType = new Map<TemplateType, number>();
    for (const o of c.options) {
      if (o.exotic && c.options.some((x) => !x.exotic)) continue;
      const p = price(new SimClaim(t, 'repack-probe', c.requirements, [o]));
      if (p < Infinity) byType.set(o, p);
    }
    return byType;
  };
  const single: (Map<TemplateType, number> | undefined)[] = [];
  const priceAlone = (k: number, type: TemplateType): number => {
    let byType = single[k];
    if (!byType) {
      const head = kinds[k].pods[0];
      const c = openClaim(t, 'repack-probe', head, groupsOf(head), ctx);
      single[k] = byType = c instanceof SimClaim ? pricesByType(c) : new Map();
    }
    return byType.get(type) ?? Infinity;
  };
  const holders: (Holder[] | undefined)[] = [];
  const holdersOf = (mask: number): Holder[] => {
    const known = holders[mask];
    if (known) return known;
    const members = kinds.map((_, k) => k).filter((k) => mask & (1 << k));
    const constrained = members.filter((k) => kinds[k].pods[0].hasRequirements);
    // Several kinds' requirements together may leave dearer offerings only (or none).
    let together: Map<TemplateType, number> | undefined;
    if (constrained.length > 1) {
      const c = build(
        t,
        'repack-probe',
        members.map((k) => kinds[k].pods[0]),
        t.types,
        groupsOf,
        ctx,
      );
      together = c ? pricesByType(c) : new Map();
    }
    const list: Holder[] = [];
    const plain = members.some((k) => !kinds[k].exoticOnly);
    for (const type of t.types) {
      if (type.exotic && plain) continue;
      let p = 0;
      for (const k of members) p = Math.max(p, priceAlone(k, type));
      if (together) p = together.get(type) ?? Infinity;
      if (p < Infinity) list.push({ room: keys.map((r) => type.room[r] ?? 0), price: p });
    }
    list.sort((a, b) => a.price - b.price);
    const kept: Holder[] = [];
    for (const h of list) if (!kept.some((o) => o.price <= h.price && o.room.every((v, i) => v >= h.room[i]))) kept.push(h);
    holders[mask] = kept;
    return kept;
  };

  // Price of every count vector (index = Σ count·stride); a vector that grows by a pod of its
  // first kind keeps its kinds, so its type is no cheaper than the smaller one's: the scan starts there.
  const cost = new Float64Array(states);
  const at = new Int32Array(states);
  const counts = new Array<number>(m).fill(0);
  const demand = new Array<number>(keys.length).fill(0);
  for (let u = 1; u < states; u++) {
    for (let k = 0; k < m; k++) {
      if (counts[k] < n[k]) {
        counts[k]++;
        for (let r = 0; r < keys.length; r++) demand[r] += req[k][r];
        break;
      }
      for (let r = 0; r < keys.length; r++) demand[r] -= counts[k] * req[k][r];
      counts[k] = 0;
    }
    let mask = 0;
    for (let k = 0; k < m; k++) if (counts[k] > 0) mask |= 1 << k;
    let first = 0;
    while (counts[first] === 0) first++;
    const list = holdersOf(mask);
    let h = counts[first] > 1 ? at[u - stride[first]] : 0;
    for (; h < list.length; h++) {
      const room = list[h].room;
      let fits = true;
      for (let r = 0; r < keys.length && fits; r++) fits = demand[r] <= room[r];
      if (fits) break;
    }
    at[u] = h;
    cost[u] = h < list.length ? list[h].price : Infinity;
  }

  // f(v) and the node u it opens: u over dims first..m-1 with u[first] ≥ 1 (dims below first are
  // empty in v); a vector that does not fit stays unfit as it grows, which ends a dimension's loop.
  const f = new Float64Array(states);
  const choice = new Int32Array(states);
  let v = 0;
  let first = 0;
  let best = Infinity;
  let bestU = -1;
  const walk = (d: number, base: number): void => {
    if (d === first) {
      const step = stride[first];
      for (let c = 1, u = base + step; c <= counts[first]; c++, u += step) {
        const p = cost[u];
        if (!(p < Infinity)) return;
        const total = p + f[v - u];
        if (total < best - PriceEpsilonUsd) {
          best = total;
          bestU = u;
        }
      }
      return;
    }
    for (let c = 0, a = base; c <= counts[d]; c++, a += stride[d]) {
      if (!(cost[a + stride[first]] < Infinity)) return;
      walk(d - 1, a);
    }
  };
  counts.fill(0);
  for (v = 1; v < states; v++) {
    for (let k = 0; k < m; k++) {
      if (counts[k] < n[k]) {
        counts[k]++;
        break;
      }
      counts[k] = 0;
    }
    first = 0;
    while (counts[first] === 0) first++;
    best = Infinity;
    bestU = -1;
    walk(m - 1, 0);
    f[v] = best;
    choice[v] = bestU;
  }
  if (!(f[states - 1] < Infinity)) return undefined;

  const claims: SimClaim[] = [];
  const prices: number[] = [];
  const next = n.map(() => 0);
  // Dearest node first, as the greedy opens the node it values most first.
  const nodes: number[] = [];
  for (let v = states - 1; v > 0; v -= choice[v]) nodes.push(choice[v]);
  nodes.sort((a, b) => cost[b] - cost[a]);
  for (const u of nodes) {
    const mine: PodInfo[] = [];
    for (let k = 0; k < m; k++) {
      const c = Math.floor(u / stride[k]) % (n[k] + 1);
      mine.push(...kinds[k].pods.slice(next[k], next[k] + c));
      next[k] += c;
    }
    const claim = build(t, 'repack-node', mine, t.types, groupsOf, ctx);
    const p = claim ? price(claim) : Infinity;
    if (!claim || p > cost[u] + PriceEpsilonUsd) return undefined;
    claims.push(claim);
    prices.push(p);
  }
  return { claims, prices };
}

/** A copy of the claim (under another hostname) to try a pod on: no topology and no limits, so nothing else holds its state. */
function copyClaim(c: SimClaim, hostname = c.hostname): SimClaim {
  const d = new SimClaim(c.template, hostname, c.requirements, c.options);
  d.pods.push(...c.pods);
  d.ports.push(...c.ports);
  d.requests = { ...c.requests };
  return d;
}

/** A claim of `types` holding `pods` in order, or undefined when one does not join. */
function build(
  t: ClaimTemplate,
  hostname: string,
  pods: readonly PodInfo[],
  types: TemplateType[],
  groupsOf: (info: PodInfo) => PodGroups,
  ctx: ClaimContext,
): SimClaim | undefined {
  const [head, ...tail] = pods;
  const claim = openClaim(t, hostname, head, groupsOf(head), ctx, false, types);
  if (!(claim instanceof SimClaim)) return undefined;
  for (const p of tail) if (claim.add(p, groupsOf(p), ctx)) return undefined;
  return claim;
}

/** The template's types that hold some kind alone and that no other type beats (see the file comment); sets each kind's value. */
function candidateTypes(
  t: ClaimTemplate,
  kinds: Kind[],
  groupsOf: (info: PodInfo) => PodGroups,
  ctx: ClaimContext,
  price: (c: SimClaim) => number,
): Candidate[] {
  const keys = [...new Set(kinds.flatMap((k) => Object.keys(k.pods[0].requests)))];
  const all: Candidate[] = [];
  for (const type of t.types) {
    const prices = kinds.map((k) => {
      if (type.exotic && !k.exoticOnly) return Infinity;
      const head = k.pods[0];
      const o = openClaim(t, 'repack-probe', head, groupsOf(head), ctx, false, [type]);
      return o instanceof SimClaim ? price(o) : Infinity;
    });
    if (prices.some((p) => p < Infinity)) all.push({ type, price: prices, cheapest: Math.min(...prices) });
  }
  // A kind's value: its share of the node at the best rate a type that takes it sells it for.
  kinds.forEach((k, i) => {
    let v = Infinity;
    for (const c of all) if (c.price[i] < Infinity) v = Math.min(v, (rateOf(c.type, k.pods[0].requests) / c.type.minPriceUsdPerHour) * c.price[i]);
    k.value = Number.isFinite(v) ? v : 0;
  });
  const beats = (b: Candidate, a: Candidate) => {
    for (let k = 0; k < kinds.length; k++) if (b.price[k] > a.price[k]) return false;
    return keys.every((r) => roomOf(b.type.room, r) >= roomOf(a.type.room, r));
  };
  return all.filter((a, i) => !all.some((b, j) => j !== i && beats(b, a) && (j < i || !beats(a, b))));
}

function roomOf(room: Resources, key: string): number {
  return room[key] ?? 0;
}
