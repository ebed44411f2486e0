/**
 * Requirement algebra: node selector requirements as value sets that can be intersected.
 *
 * Semantics follow Kubernetes node selectors and Karpenter's `scheduling.Requirements`
 * (kubernetes-sigs/karpenter pkg/scheduling/requirement(s).go):
 * - In [a b]      → exactly these values, the label must exist
 * - NotIn [a]     → any value but these, or the label absent
 * - Exists        → any value, the label must exist
 * - DoesNotExist  → the label must be absent
 * - Gt n / Lt n   → integer values strictly above / below n (label must exist);
 *   Gte n / Lte n → Gt n-1 / Lt n+1 (Karpenter v1.9+)
 * Intersecting two requirements on one key keeps what both allow. `minValues` is kept as the
 * largest of the two.
 */
import type { NodeSelectorRequirement } from './kube.ts';

export type Operator = 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' | 'Gt' | 'Lt' | 'Gte' | 'Lte';

/** A NodePool / NodeClaim requirement as written in YAML (minValues optional). */
export interface RequirementSpec {
  key: string;
  operator: Operator;
  values?: string[];
  minValues?: number;
}

/** One key's allowed values. Immutable. */
export class Requirement {
  constructor(
    readonly key: string,
    /** true: every value except `values`; false: only `values`. */
    readonly complement: boolean,
    readonly values: ReadonlySet<string>,
    /** Whether a node without this label satisfies the requirement. */
    readonly allowAbsent: boolean,
    /** Integer bounds (exclusive); undefined = unbounded. */
    readonly greaterThan?: number,
    readonly lessThan?: number,
    readonly minValues?: number,
  ) {}

  /** Builds a requirement from its YAML form. Gt/Lt/Gte/Lte read `values[0]` as an integer. */
  static from(spec: RequirementSpec | NodeSelectorRequirement): Requirement {
    const values = spec.values ?? [];
    const minValues = (spec as RequirementSpec).minValues;
    switch (spec.operator) {
      case 'In':
        return new Requirement(spec.key, false, new Set(values), false, undefined, undefined, minValues);
      case 'NotIn':
        return new Requirement(spec.key, true, new Set(values), true, undefined, undefined, minValues);
      case 'Exists':
        return new Requirement(spec.key, true, new Set(), false, undefined, undefined, minValues);
      case 'DoesNotExist':
        return new Requirement(spec.key, false, new Set(), true, undefined, undefined, minValues);
      case 'Gt':
        return new Requirement(spec.key, true, new Set(), false, Number(values[0]), undefined, minValues);
      case 'Gte':
        return new Requirement(spec.key, true, new Set(), false, Number(values[0]) - 1, undefined, minValues);
      case 'Lt':
        return new Requirement(spec.key, true, new Set(), false, undefined, Number(values[0]), minValues);
      case 'Lte':
        return new Requirement(spec.key, true, new Set(), false, undefined, Number(values[0]) + 1, minValues);
      default:
        throw new Error(`unknown operator ${(spec as { operator: string }).operator}`);
    }
  }

  /** `key In [value]`. */
  static single(key: string, value: string): Requirement {
    return new Requirement(key, false, new Set([value]), false);
  }

  private withinBounds(v: string): boolean {
    if (this.greaterThan === undefined && this.lessThan === undefined) return true;
    if (!/^-?\d+$/.test(v)) return false;
    const n = Number(v);
    return (this.greaterThan === undefined || n > this.greaterThan) && (this.lessThan === undefined || n < this.lessThan);
  }

  /** Whether a label with this value satisfies the requirement. */
  has(value: string): boolean {
    if (!this.withinBounds(value)) return false;
    return this.complement ? !this.values.has(value) : this.values.has(value);
  }

  /** Whether a node whose label is `value` (undefined = absent) satisfies the requirement. */
  matches(value: string | undefined): boolean {
    return value === undefined ? this.allowAbsent : this.has(value);
  }

  /** True when no label value (and not absence) can satisfy it. */
  isEmpty(): boolean {
    if (this.allowAbsent) return false;
    if (!this.complement) return this.values.size === 0;
    if (this.greaterThan !== undefined && this.lessThan !== undefined) return this.lessThan - this.greaterThan <= 1;
    return false;
  }

  /** True when some label value (not absence) satisfies it. */
  hasValues(): boolean {
    if (!this.complement) return this.values.size > 0;
    if (this.greaterThan !== undefined && this.lessThan !== undefined) return this.lessThan - this.greaterThan > 1;
    return true;
  }

  /** Number of allowed values, Infinity for complements. */
  get size(): number {
    return this.complement ? Infinity : this.values.size;
  }

  /** What both requirements allow. */
  intersect(o: Requirement): Requirement {
    const gt = maxDefined(this.greaterThan, o.greaterThan);
    const lt = minDefined(this.lessThan, o.lessThan);
    const minValues = maxDefined(this.minValues, o.minValues);
    const allowAbsent = this.allowAbsent && o.allowAbsent;
    const inBounds = (v: string) => {
      if (gt === undefined && lt === undefined) return true;
      if (!/^-?\d+$/.test(v)) return false;
      const n = Number(v);
      return (gt === undefined || n > gt) && (lt === undefined || n < lt);
    };
    if (this.complement && o.complement) {
      return new Requirement(this.key, true, new Set([...this.values, ...o.values]), allowAbsent, gt, lt, minValues);
    }
    let values: string[];
    if (this.complement) values = [...o.values].filter((v) => !this.values.has(v));
    else if (o.complement) values = [...this.values].filter((v) => !o.values.has(v));
    else values = [...this.values].filter((v) => o.values.has(v));
    return new Requirement(this.key, false, new Set(values.filter(inBounds)), allowAbsent, undefined, undefined, minValues);
  }

  /** The operator that best describes this set (for printing and for the NodeClaim spec). */
  operator(): Operator {
    if (this.complement) {
      if (this.values.size > 0) return 'NotIn';
      if (this.greaterThan !== undefined) return 'Gt';
      if (this.lessThan !== undefined) return 'Lt';
      return 'Exists';
    }
    return this.values.size === 0 ? 'DoesNotExist' : 'In';
  }

  /** Back to YAML form. Sets with both bounds print as Gt (the Lt bound is dropped only for printing). */
  toSpec(): RequirementSpec {
    const op = this.operator();
    const spec: RequirementSpec = { key: this.key, operator: op };
    if (op === 'In' || op === 'NotIn') spec.values = [...this.values].sort();
    if (op === 'Gt') spec.values = [String(this.greaterThan)];
    if (op === 'Lt') spec.values = [String(this.lessThan)];
    if (this.minValues !== undefined) spec.minValues = this.minValues;
    return spec;
  }

  toString(): string {
    const s = this.toSpec();
    return `${s.key} ${s.operator}${s.values ? ` [${s.values.join(', ')}]` : ''}`;
  }
}

function maxDefined(a?: number, b?: number): number | undefined {
  return a === undefined ? b : b === undefined ? a : Math.max(a, b);
}
function minDefined(a?: number, b?: number): number | undefined {
  return a === undefined ? b : b === undefined ? a : Math.min(a, b);
}

/** A set of requirements keyed by label key. Immutable: operations return new sets. */
export class Requirements {
  private readonly byKey: ReadonlyMap<string, Requirement>;

  constructor(reqs: Iterable<Requirement> = []) {
    const m = new Map<string, Requirement>();
    for (const r of reqs) {
      const prev = m.get(r.key);
      m.set(r.key, prev ? prev.intersect(r) : r);
    }
    this.byKey = m;
  }

  /** From YAML requirements (NodePool spec.template.spec.requirements, node selector terms). */
  static fromSpecs(specs: readonly (RequirementSpec | NodeSelectorRequirement)[] = []): Requirements {
    return new Requirements(specs.map((s) => Requirement.from(s)));
  }

  /** `key In [value]` for every label (NodePool template labels, pod nodeSelector). */
  static fromLabels(labels: Record<string, string> = {}): Requirements {
    return new Requirements(Object.entries(labels).map(([k, v]) => Requirement.single(k, v)));
  }

  get(key: string): Requirement | undefined {
    return this.byKey.get(key);
  }

  has(key: string): boolean {
    return this.byKey.has(key);
  }

  keys(): string[] {
    return [...this.byKey.keys()];
  }

  all(): Requirement[] {
    return [...this.byKey.values()];
  }

  /** Both sets at once (per-key intersection). */
  intersect(o: Requirements): Requirements {
    return new Requirements([...this.all(), ...o.all()]);
  }

  /** This set with one more requirement intersected in. */
  add(r: Requirement): Requirements {
    return new Requirements([...this.all(), r]);
  }

  /**
   * Why `incoming` (e.g. a pod's requirements) cannot be met together with this set (e.g. a
   * NodePool's), or undefined when it can. Keys this set does not define are allowed only
   * when `incoming` accepts an absent label, or the key is in `allowUndefined` (well-known
   * labels whose values come from the instance type), as Karpenter's `Compatible`.
   */
  incompatibility(incoming: Requirements, allowUndefined: ReadonlySet<string> = new Set()): string | undefined {
    for (const r of incoming.all()) {
      const mine = this.byKey.get(r.key);
      if (!mine) {
        if (r.allowAbsent || allowUndefined.has(r.key)) continue;
        return `incompatible requirements, label "${r.key}" does not have known values`;
      }
      if (mine.intersect(r).isEmpty()) {
        return `incompatible requirements, key ${r.key}, ${r.toString()} not in ${mine.toString()}`;
      }
    }
    return undefined;
  }

  /** Whether a node with these labels satisfies every requirement. */
  matchesLabels(labels: Record<string, string>): boolean {
    for (const r of this.byKey.values()) if (!r.matches(labels[r.key])) return false;
    return true;
  }

  /** The first requirement the labels fail, or undefined. */
  firstMismatch(labels: Record<string, string>): Requirement | undefined {
    for (const r of this.byKey.values()) if (!r.matches(labels[r.key])) return r;
    return undefined;
  }

  /** Labels implied by single-valued In requirements (what a new node will carry for sure). */
  singleValueLabels(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const r of this.byKey.values()) if (!r.complement && r.values.size === 1) out[r.key] = [...r.values][0];
    return out;
  }

  toSpecs(): RequirementSpec[] {
    return this.all().map((r) => r.toSpec());
  }

  toString(): string {
    return this.all()
      .map((r) => r.toString())
      .join(', ');
  }
}
