/**
 * The disruption parity checks between nodefleet's `planDisruption` and the first command
 * Karpenter's disruption controller would start on the same cluster (issue 13). Kinds, each
 * reported once per scenario and only when the ones before it agree:
 * - `method`: the deciding method differs, or one side decides nothing;
 * - `candidates`: same method, other nodes;
 * - `replacements`: same nodes, another number of replacement NodeClaims;
 * - `replacement-type`: same count, another cheapest type or price of a replacement.
 */
import type { DisruptionPlan } from '../../shared/disruption/index.ts';

export type DisruptionDivergenceKind = 'method' | 'candidates' | 'replacements' | 'replacement-type';

export interface DisruptionDivergence {
  kind: DisruptionDivergenceKind;
  detail: string;
}

/** A replacement as the oracle prints it (test/oracle/karpenter/main.go OutClaim). */
export interface OracleReplacement {
  nodePool: string;
  /** The replacement's types with an available offering its requirements allow, cheapest such offering first (≤ 60). */
  instanceTypes: string[] | null;
  /** How many instance types the replacement kept, launchable under its capacity-type pin or not. */
  instanceTypeOptions?: number;
  /** USD/h: the cheapest launchable offering. */
  price: number;
  capacityTypes: string[] | null;
  pods: string[] | null;
}

/** The oracle's disruption-mode output (test/oracle/karpenter/disruption.go DisruptionOutput). */
export interface OracleDisruption {
  command: {
    method: string;
    reason: string;
    decision: 'delete' | 'replace';
    candidates: string[];
    replacements: OracleReplacement[];
    savingsUsdPerHour: number;
  } | null;
  /** Each method that ran, in Karpenter's order, with the candidates its filter kept and their ordering figures. */
  methods: { method: string; candidates: OracleCandidate[] }[];
}

/** A candidate as the oracle describes it (disruption.go OutCandidate). */
export interface OracleCandidate {
  node: string;
  /** USD/h. */
  price: number;
  /** price ÷ rescheduling disruption cost: emptiness and consolidation take the highest first. */
  savingsRatio: number;
  /** No reschedulable pod: drift takes these first. */
  empty: boolean;
}

const EPS = 1e-9;

/** The comparable facts of one side's command. */
interface Decided {
  method: string;
  candidates: string[];
  replacements: { type: string; price: number }[];
}

function karpenterDecided(k: OracleDisruption): Decided | undefined {
  const c = k.command;
  if (!c) return undefined;
  return {
    method: c.method,
    candidates: [...c.candidates].sort(),
    replacements: c.replacements.map((r) => ({ type: r.instanceTypes?.[0] ?? '-', price: r.price })).sort((a, b) => a.price - b.price),
  };
}

function nodefleetDecided(p: DisruptionPlan): Decided | undefined {
  const c = p.command;
  if (!c) return undefined;
  return {
    method: c.method,
    candidates: c.candidates.map((x) => x.nodeName).sort(),
    replacements: c.replacements.map((r) => ({ type: r.instanceTypes[0] ?? '-', price: r.priceUsdPerHour })).sort((a, b) => a.price - b.price),
  };
}

const show = (d: Decided | undefined) =>
  d
    ? `${d.method} [${d.candidates.join(', ')}]${d.replacements.length ? ` → ${d.replacements.map((r) => `${r.type} $${r.price.toFixed(5)}`).join(', ')}` : ''}`
    : 'nothing';

/** The divergences between Karpenter's first command and nodefleet's plan (empty when they agree). */
export function compareDisruption(karpenter: OracleDisruption, nodefleet: DisruptionPlan): DisruptionDivergence[] {
  const k = karpenterDecided(karpenter);
  const n = nodefleetDecided(nodefleet);
  const both = `Karpenter ${show(k)}; nodefleet ${show(n)}`;
  if (!k || !n || k.method !== n.method) return k || n ? [{ kind: 'method', detail: both }] : [];
  if (k.candidates.join() !== n.candidates.join()) return [{ kind: 'candidates', detail: both }];
  if (k.replacements.length !== n.replacements.length) return [{ kind: 'replacements', detail: both }];
  if (k.replacements.some((r, i) => r.type !== n.replacements[i].type || Math.abs(r.price - n.replacements[i].price) > EPS))
    return [{ kind: 'replacement-type', detail: both }];
  return [];
}
