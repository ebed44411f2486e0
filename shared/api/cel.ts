/**
 * Evaluating `x-kubernetes-validations` rules the way the Kubernetes API server does for a CRD:
 * a CEL expression bound to one node of the object (`self`), evaluated only when that node is
 * present, the object rejected when it is false or fails to evaluate (a missing key, a bad
 * conversion such as `int("abc")`).
 *
 * Evaluator: @bufbuild/cel with the strings extension; Kubernetes' regex library function
 * `find` is added here (k8s.io/apiserver pkg/cel/library/regex.go: first match or ""). Objects
 * become CEL maps, integral numbers CEL ints (the OpenAPI `integer` type), so `x.deviceIndex == 0`
 * compares as the API server does.
 */
import { CelScalar, celEnv, celMethod, isCelError, parse, plan } from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';

/**
 * One rule. `path` is where the rule is attached (`*` = every item of a list or value of a map);
 * `field`, when set, is the field the problem is reported on (Kubernetes' `fieldPath`), relative
 * to `path`. `message` is nodefleet's wording.
 */
export interface CelRule {
  path: readonly string[];
  rule: string;
  message: string;
  field?: string;
}

const find = celMethod('find', CelScalar.STRING, [CelScalar.STRING], CelScalar.STRING, function (this: string, re: string) {
  return new RegExp(re).exec(this)?.[0] ?? '';
});
const env = celEnv({ funcs: [...strings, find] });
const compiled = new Map<string, ReturnType<typeof plan>>();

/** The CEL value of a JSON value: mappings → maps, whole numbers → ints. */
export function toCel(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(toCel);
  if (v !== null && typeof v === 'object') return new Map(Object.entries(v).map(([k, x]) => [k, toCel(x)]));
  if (typeof v === 'number' && Number.isInteger(v)) return BigInt(v);
  return v;
}

/**
 * Whether `rule` holds for `self`.
 * @returns true, false, or the evaluation error's message (the API server rejects in that case too).
 */
export function evalRule(rule: string, self: unknown): boolean | string {
  return evalCel(rule, { self });
}

/**
 * Whether `expression` holds with these variables bound (JSON values, e.g. an admission policy's
 * `request`, `object` and `oldObject`).
 * @returns true, false, or the evaluation error's message.
 */
export function evalCel(expression: string, vars: Record<string, unknown>): boolean | string {
  let run = compiled.get(expression);
  if (!run) {
    run = plan(env, parse(expression));
    compiled.set(expression, run);
  }
  const ctx = Object.fromEntries(Object.entries(vars).map(([k, v]) => [k, toCel(v)]));
  const r = (run as (ctx: Record<string, unknown>) => unknown)(ctx);
  if (isCelError(r)) return r.message;
  return r === true;
}

/** The nodes of `obj` at `path` with their concrete paths (`*` expanded, missing nodes skipped). */
function nodesAt(obj: unknown, path: readonly string[]): { at: (string | number)[]; value: unknown }[] {
  let cur: { at: (string | number)[]; value: unknown }[] = [{ at: [], value: obj }];
  for (const seg of path) {
    const next: typeof cur = [];
    for (const { at, value } of cur) {
      if (seg === '*') {
        if (Array.isArray(value)) value.forEach((x, i) => next.push({ at: [...at, i], value: x }));
        else if (value !== null && typeof value === 'object') for (const [k, x] of Object.entries(value)) next.push({ at: [...at, k], value: x });
      } else if (value !== null && typeof value === 'object' && !Array.isArray(value) && (value as Record<string, unknown>)[seg] !== undefined) {
        next.push({ at: [...at, seg], value: (value as Record<string, unknown>)[seg] });
      }
    }
    cur = next;
  }
  return cur;
}

/**
 * Problems of `obj` under `rules`: `<field path>: <message>` per failing rule and node; a rule
 * that fails to evaluate reports its message too (as the API server rejects the object).
 */
export function celProblems(obj: unknown, rules: readonly CelRule[], formatPath: (p: readonly (string | number)[]) => string): string[] {
  const out: string[] = [];
  for (const r of rules) {
    for (const { at, value } of nodesAt(obj, r.path)) {
      if (evalRule(r.rule, value) === true) continue;
      out.push(`${formatPath(r.field ? [...at, ...r.field.split('.')] : at)}: ${r.message}`);
    }
  }
  return out;
}
