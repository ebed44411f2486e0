/**
 * The exact packing reference for small inputs: the cheapest set of new nodes that holds every
 * pod, as an integer program solved by HiGHS (npm `highs`, WebAssembly; tests and benchmarks
 * only). `npm run bench -- --exact` compares nodefleet's packings with it on random scenarios.
 *
 * What a node can hold comes from nodefleet itself: the NodePool template (shared/scheduling/
 * template.ts `PoolTemplate`) gives each admitted type's available offerings and its room (the
 * allocatable less the DaemonSets that would run on it), and a pod's compatibility with a type
 * and offering is the template's requirements check. Only pods whose placement is a per-type
 * predicate are accepted (no topology spread, pod (anti-)affinity, host ports, preferences or
 * alternative node terms): for those the program is exact.
 *
 * The program: pods of one kind (same requests and constraints) are interchangeable. A slot
 * class is an (instance type, offering) with its price; classes that another class beats on price,
 * room and compatible kinds are dropped (a solution using one swaps to the other for no more).
 * Class c has slots i < Uc, Uc = min(pods it can hold, ⌊upper bound / price⌋), slot (c, i) open
 * when y[c,i] = 1 (y[c,i] ≥ y[c,i+1]), x[k,c,i] pods of kind k on it:
 *
 *     minimise Σ price[c]·y[c,i]
 *     Σ_{c,i} x[k,c,i] = count[k]                          every pod placed
 *     Σ_k req[k,r]·x[k,c,i] ≤ room[c,r]·y[c,i]             every requested resource r (cpu,
 *                                                          memory, pods, GPUs, …)
 *     x[k,c,i] ≤ min(count[k], fit[k,c])·y[c,i]
 */
import highsModule, { type Highs, type LegacyHighsSolution } from 'highs';
import type { Pod } from '../../shared/api/kube.ts';
import type { NodePool } from '../../shared/api/nodepool.ts';
import type { Resources } from '../../shared/api/quantity.ts';
import type { InstanceType, Offering } from '../../shared/catalog/types.ts';
import { PodInfo } from '../../shared/scheduling/pod.ts';
import { fitsRoom } from '../../shared/scheduling/resources.ts';
import { untoleratedTaint } from '../../shared/scheduling/taints.ts';
import { collectTypeKeys, PoolTemplate, typeMatches, type TemplateType } from '../../shared/scheduling/template.ts';
import type { DaemonSetTemplate } from '../../shared/scheduling/index.ts';

/** One new node of the optimum. */
export interface ExactNode {
  instanceType: string;
  zone: string;
  capacityType: string;
  priceUsdPerHour: number;
  /** Pod keys (`namespace/name`). */
  pods: string[];
}

export interface ExactResult {
  /** `optimal`: proved (relative MIP gap ≤ {@link MipRelGap}); `time-limit`: stopped, `costPerHour` is the best found if any. */
  status: 'optimal' | 'time-limit' | 'infeasible' | 'error';
  /** Cost of the nodes found, USD/hour (Infinity when none). */
  costPerHour: number;
  nodes: ExactNode[];
  /** Pods no admitted type and offering can hold: left out of the program. */
  unplaceable: string[];
  /** Size of the program after pruning. */
  classes: number;
  slots: number;
  variables: number;
  seconds: number;
  /** HiGHS's own status text. */
  solverStatus: string;
}

export interface ExactInput {
  pods: Pod[];
  nodePool: NodePool;
  instanceTypes: InstanceType[];
  daemonSets?: DaemonSetTemplate[];
}

export interface ExactOptions {
  timeLimitSeconds?: number;
  /** Cost of a known packing of every placeable pod (USD/hour): caps the slots per class, ⌊bound / price⌋. */
  upperBound?: number;
  /** A template built for the same pool, types and daemonsets, to skip rebuilding it. */
  template?: PoolTemplate;
}

/** HiGHS's relative gap at which a MIP counts as solved (its default is 1e-4). */
export const MipRelGap = 1e-6;

/**
 * The package is CommonJS-typed: under NodeNext its default import types as the module object,
 * while the ESM build (build/highs.mjs) exports the loader itself as default.
 */
const loadHighs = highsModule as unknown as (typeof highsModule)['default'];
let highsPromise: Promise<Highs> | undefined;
/** The HiGHS module, loaded once per process. */
export function highs(): Promise<Highs> {
  return (highsPromise ??= loadHighs());
}

/** The template nodefleet builds for the pool (same admitted types, offerings, room and order). */
export function exactTemplate(input: ExactInput): PoolTemplate {
  return new PoolTemplate(input.nodePool, input.instanceTypes, input.daemonSets ?? [], [], collectTypeKeys([input.instanceTypes]));
}

interface Kind {
  info: PodInfo;
  keys: string[];
}

interface SlotClass {
  type: TemplateType;
  offering: Offering;
  price: number;
  /** Kind index → how many pods of it one node holds alone. */
  fit: Map<number, number>;
}

/** Why the pod cannot be modelled exactly as a per-type predicate, or undefined. */
export function notExact(p: Pod): string | undefined {
  const info = new PodInfo(p);
  if (info.hasTopology) return 'topology spread or pod (anti-)affinity';
  if (info.hostPorts.length > 0) return 'host ports';
  if (info.requiredTerms.length > 1) return 'several required node affinity terms';
  if (info.preferredNode.length > 0) return 'preferred node affinity';
  if ((p.spec.volumes ?? []).some((v) => (v as { persistentVolumeClaim?: unknown }).persistentVolumeClaim)) return 'persistent volume claims';
  return undefined;
}

/** Whether a node of type `t` launched as `o` from `tpl` may run the pod (taints, requirements, offering, room). */
function compatible(tpl: PoolTemplate, info: PodInfo, t: TemplateType, o: Offering): boolean {
  if (untoleratedTaint(tpl.taints, info.tolerations, false)) return false;
  if (tpl.requirements.incompatibility(info.requirements, tpl.allowUndefined) !== undefined) return false;
  const reqs = tpl.requirements.intersect(info.requirements);
  return typeMatches(t.type, reqs, tpl.typeKeys, [o]) && fitsRoom(info.requests, t.room);
}

/** Whether some admitted type and offering of the template can run the pod on a new node. */
export function placeable(tpl: PoolTemplate, pod: Pod): boolean {
  const info = new PodInfo(pod);
  return tpl.types.some((t) => t.offerings.some((o) => compatible(tpl, info, t, o)));
}

/** How many pods of `req` fit in `room` (Infinity when it requests nothing). */
function fitCount(req: Resources, room: Resources): number {
  let n = Infinity;
  for (const k in req) if (req[k] > 0) n = Math.min(n, Math.floor((room[k] ?? 0) / req[k]));
  return n;
}

/** True when `b` does everything `a` does for no more: price, room for every key, every kind `a` takes. */
function dominates(b: SlotClass, a: SlotClass, keys: readonly string[]): boolean {
  if (b.price > a.price) return false;
  for (const k of keys) if ((b.type.room[k] ?? 0) < (a.type.room[k] ?? 0)) return false;
  for (const [kind] of a.fit) if (!b.fit.has(kind)) return false;
  return true;
}

/** The cheapest packing of `input.pods` onto new nodes of `input.nodePool` (see the file comment). */
export async function exactPacking(input: ExactInput, opts: ExactOptions = {}): Promise<ExactResult> {
  const start = process.hrtime.bigint();
  for (const p of input.pods) {
    const why = notExact(p);
    if (why) throw new Error(`exactPacking: pod ${p.metadata.name} has ${why}, which is not a per-type predicate`);
  }
  const tpl = opts.template ?? exactTemplate(input);
  // Kinds: pods that schedule identically.
  const byKey = new Map<string, Kind>();
  for (const p of input.pods) {
    const info = new PodInfo(p);
    const sig = JSON.stringify([
      info.requests,
      p.spec.nodeSelector ?? null,
      p.spec.affinity ?? null,
      p.spec.tolerations ?? null,
      p.metadata.namespace ?? 'default',
    ]);
    const k = byKey.get(sig);
    if (k) k.keys.push(info.key);
    else byKey.set(sig, { info, keys: [info.key] });
  }
  const kinds = [...byKey.values()];
  const resourceKeys = [...new Set(kinds.flatMap((k) => Object.keys(k.info.requests)))].sort();

  let classes: SlotClass[] = [];
  for (const t of tpl.types) {
    // Per type, the cheapest offering for each set of kinds it takes (zones and capacity types
    // differ only in price and in the pods whose requirements name them).
    const cheapest = new Map<string, SlotClass>();
    for (const o of t.offerings) {
      const fit = new Map<number, number>();
      kinds.forEach((k, i) => {
        if (compatible(tpl, k.info, t, o)) fit.set(i, Math.min(k.keys.length, fitCount(k.info.requests, t.room)));
      });
      if (fit.size === 0) continue;
      const sig = [...fit.keys()].join(',');
      const seen = cheapest.get(sig);
      if (!seen || o.priceUsdPerHour < seen.price) cheapest.set(sig, { type: t, offering: o, price: o.priceUsdPerHour, fit });
    }
    classes.push(...cheapest.values());
  }
  // Drop dominated classes; of equals keep the first (template order: cheapest type, then name).
  classes = classes.filter((a, i) => !classes.some((b, j) => j !== i && dominates(b, a, resourceKeys) && (j < i || !dominates(a, b, resourceKeys))));

  const placeable = new Set(classes.flatMap((c) => [...c.fit.keys()]));
  const unplaceable = kinds.flatMap((k, i) => (placeable.has(i) ? [] : k.keys));
  const elapsed = () => Number(process.hrtime.bigint() - start) / 1e9;
  const base = { nodes: [] as ExactNode[], unplaceable, classes: classes.length };
  if (placeable.size === 0) return { ...base, status: 'optimal', costPerHour: 0, slots: 0, variables: 0, seconds: elapsed(), solverStatus: 'nothing to place' };

  // Slots per class.
  const slotsOf = classes.map((c) => {
    let pods = 0;
    for (const [k] of c.fit) pods += kinds[k].keys.length;
    const byCost = opts.upperBound !== undefined && Number.isFinite(opts.upperBound) ? Math.floor(opts.upperBound / c.price + 1e-9) : Infinity;
    return Math.max(0, Math.min(pods, byCost));
  });

  const obj: string[] = [];
  const rows: string[] = [];
  const bounds: string[] = [];
  const binaries: string[] = [];
  const generals: string[] = [];
  const demand = new Map<number, string[]>();
  const y = (c: number, i: number) => `y_${c}_${i}`;
  const x = (k: number, c: number, i: number) => `x_${k}_${c}_${i}`;
  const num = (v: number) => (Number.isInteger(v) ? String(v) : v.toPrecision(17));
  classes.forEach((c, ci) => {
    for (let i = 0; i < slotsOf[ci]; i++) {
      obj.push(`${num(c.price)} ${y(ci, i)}`);
      binaries.push(y(ci, i));
      if (i > 0) rows.push(`s_${ci}_${i}: ${y(ci, i)} - ${y(ci, i - 1)} <= 0`);
      for (const [k, fit] of c.fit) {
        generals.push(x(k, ci, i));
        bounds.push(`0 <= ${x(k, ci, i)} <= ${fit}`);
        rows.push(`l_${k}_${ci}_${i}: ${x(k, ci, i)} - ${fit} ${y(ci, i)} <= 0`);
        (demand.get(k) ?? demand.set(k, []).get(k)!).push(x(k, ci, i));
      }
      // Capacity, each row scaled by the room so coefficients are fractions of the node.
      resourceKeys.forEach((r, ri) => {
        const room = c.type.room[r] ?? 0;
        const terms: string[] = [];
        for (const [k] of c.fit) {
          const need = kinds[k].info.requests[r] ?? 0;
          if (need > 0) terms.push(`${num(need / room)} ${x(k, ci, i)}`);
        }
        if (terms.length > 0) rows.push(`r_${ri}_${ci}_${i}: ${terms.join(' + ')} - ${y(ci, i)} <= 0`);
      });
    }
  });
  for (const [k, vars] of demand) rows.unshift(`d_${k}: ${vars.join(' + ')} = ${kinds[k].keys.length}`);
  const wrap = (terms: readonly string[], sep: string) => terms.reduce((out, t, i) => out + (i === 0 ? '' : i % 8 === 0 ? `\n  ${sep} ` : ` ${sep} `) + t, '');
  const lp = [
    'Minimize',
    ` cost: ${wrap(obj, '+')}`,
    'Subject To',
    ...rows.map((r) => ` ${r}`),
    'Bounds',
    ...bounds.map((b) => ` ${b}`),
    'Binaries',
    ...chunk(binaries),
    'Generals',
    ...chunk(generals),
    'End',
  ].join('\n');
  const slots = slotsOf.reduce((a, b) => a + b, 0);
  const variables = binaries.length + generals.length;
  const solver = await highs();
  let sol: LegacyHighsSolution;
  try {
    sol = solver.solve(lp, { output_flag: false, time_limit: opts.timeLimitSeconds ?? 10, mip_rel_gap: MipRelGap });
  } catch (e) {
    return { ...base, status: 'error', costPerHour: Infinity, slots, variables, seconds: elapsed(), solverStatus: String(e) };
  }
  const status: ExactResult['status'] =
    sol.Status === 'Optimal' ? 'optimal' : sol.Status === 'Time limit reached' ? 'time-limit' : sol.Status === 'Infeasible' ? 'infeasible' : 'error';
  const cols = sol.Columns as Record<string, { Primal?: number }>;
  const value = (name: string) => Math.round(cols[name]?.Primal ?? 0);
  const nodes: ExactNode[] = [];
  if (status === 'optimal' || status === 'time-limit') {
    const left = kinds.map((k) => [...k.keys]);
    classes.forEach((c, ci) => {
      for (let i = 0; i < slotsOf[ci]; i++) {
        if (value(y(ci, i)) !== 1) continue;
        const pods: string[] = [];
        for (const [k] of c.fit) pods.push(...left[k].splice(0, value(x(k, ci, i))));
        nodes.push({ instanceType: c.type.type.name, zone: c.offering.zone, capacityType: c.offering.capacityType, priceUsdPerHour: c.price, pods });
      }
    });
    if (nodes.length === 0 && status === 'time-limit')
      return { ...base, status, costPerHour: Infinity, slots, variables, seconds: elapsed(), solverStatus: sol.Status };
    const problem = checkPacking(tpl, kinds, nodes, placeable);
    if (problem) throw new Error(`exactPacking: the solver's packing is not valid: ${problem}`);
  }
  const costPerHour = status === 'optimal' || status === 'time-limit' ? nodes.reduce((s, n) => s + n.priceUsdPerHour, 0) : Infinity;
  return { ...base, nodes, status, costPerHour, slots, variables, seconds: elapsed(), solverStatus: sol.Status };
}

function chunk(names: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < names.length; i += 10) out.push(` ${names.slice(i, i + 10).join(' ')}`);
  return out;
}

/**
 * Checks a packing with nodefleet's own rules, independently of the program: every placeable pod
 * on exactly one node, each node's pods compatible with its type and offering and within its room.
 */
function checkPacking(tpl: PoolTemplate, kinds: readonly Kind[], nodes: readonly ExactNode[], placeable: ReadonlySet<number>): string | undefined {
  const kindOf = new Map<string, Kind>();
  for (const k of kinds) for (const key of k.keys) kindOf.set(key, k);
  const seen = new Set<string>();
  for (const n of nodes) {
    const t = tpl.types.find((tt) => tt.type.name === n.instanceType)!;
    const o = t.offerings.find((oo) => oo.zone === n.zone && oo.capacityType === n.capacityType)!;
    const sum: Resources = {};
    for (const key of n.pods) {
      if (seen.has(key)) return `pod ${key} placed twice`;
      seen.add(key);
      const k = kindOf.get(key)!;
      if (!compatible(tpl, k.info, t, o)) return `pod ${key} cannot run on ${n.instanceType} ${n.zone} ${n.capacityType}`;
      for (const r in k.info.requests) sum[r] = (sum[r] ?? 0) + k.info.requests[r];
    }
    if (!fitsRoom(sum, t.room)) return `${n.instanceType} overfilled (${JSON.stringify(sum)} > room ${JSON.stringify(t.room)})`;
  }
  const expected = [...placeable].reduce((s, k) => s + kinds[k].keys.length, 0);
  return seen.size === expected ? undefined : `${seen.size} of ${expected} placeable pods placed`;
}
