/**
 * Label and field selectors as the API server's list/watch query parameters take them
 * (`labelSelector=app=web,tier in (a,b),!canary`, `fieldSelector=spec.nodeName=n1,status.phase!=Succeeded`)
 * and the `LabelSelector` objects of PDBs, Deployments and DaemonSets.
 * Rule source: k8s.io/apimachinery pkg/labels/selector.go and pkg/fields/selector.go.
 */
import type { KubeObject, LabelSelector } from '../../../shared/api/kube.ts';
import { ApiError } from './store.ts';

/** One parsed term of a selector string. */
interface Term {
  key: string;
  op: 'in' | 'notin' | 'exists' | '!exists' | '=' | '!=';
  values: string[];
}

/** A compiled selector: `matches(labels)` is false when any term fails. */
export type Matcher = (values: Record<string, string | undefined>) => boolean;

/** Splits on commas outside parentheses. */
function splitTerms(s: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of s) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      out.push(cur);
      cur = '';
    } else cur += ch;
  }
  out.push(cur);
  return out.map((t) => t.trim()).filter((t) => t.length > 0);
}

/**
 * Parses a label selector string.
 * @throws ApiError 400 BadRequest for malformed input.
 */
export function parseLabelSelector(s: string | undefined): Matcher {
  if (!s) return () => true;
  const terms: Term[] = splitTerms(s).map((raw) => {
    let m = /^([^\s!=]+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(raw);
    if (m)
      return {
        key: m[1],
        op: m[2] as 'in' | 'notin',
        values: m[3]
          .split(',')
          .map((v) => v.trim())
          .filter(Boolean),
      };
    m = /^([^\s!=]+)\s*(==|=|!=)\s*([^\s]*)$/.exec(raw);
    if (m) return { key: m[1], op: m[2] === '!=' ? '!=' : '=', values: [m[3]] };
    m = /^!\s*([^\s!=]+)$/.exec(raw);
    if (m) return { key: m[1], op: '!exists', values: [] };
    m = /^([^\s!=(),]+)$/.exec(raw);
    if (m) return { key: m[1], op: 'exists', values: [] };
    throw ApiError.badRequest(`unable to parse requirement: found '${raw}', expected: in, notin, =, ==, !=, gt, lt`);
  });
  return (labels) => terms.every((t) => matchTerm(t, labels[t.key]));
}

function matchTerm(t: Term, v: string | undefined): boolean {
  switch (t.op) {
    case 'in':
    case '=':
      return v !== undefined && t.values.includes(v);
    case 'notin':
    case '!=':
      return v === undefined || !t.values.includes(v);
    case 'exists':
      return v !== undefined;
    case '!exists':
      return v === undefined;
  }
}

/**
 * Parses a field selector string (`=`, `==`, `!=` only, as the API server).
 * @throws ApiError 400 BadRequest for malformed input.
 */
export function parseFieldSelector(s: string | undefined): (o: KubeObject) => boolean {
  if (!s) return () => true;
  const terms = splitTerms(s).map((raw) => {
    const m = /^([^\s!=]+)\s*(==|=|!=)\s*(.*)$/.exec(raw);
    if (!m) throw ApiError.badRequest(`invalid selector: '${s}'; can't understand '${raw}'`);
    return { path: m[1], negate: m[2] === '!=', value: m[3].trim() };
  });
  return (o) => terms.every((t) => (fieldValue(o, t.path) === t.value) !== t.negate);
}

/** The value of a dotted field path as a string ('' when absent, as the API server compares). */
export function fieldValue(o: unknown, path: string): string {
  let cur: unknown = o;
  for (const part of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return '';
    cur = (cur as Record<string, unknown>)[part];
  }
  if (cur === undefined || cur === null) return '';
  return typeof cur === 'object' ? JSON.stringify(cur) : String(cur);
}

/**
 * Whether labels match a LabelSelector object. An empty selector matches everything; an
 * absent one (undefined) matches nothing, as for PDBs (policy/v1).
 */
export function matchesLabelSelector(sel: LabelSelector | undefined | null, labels: Record<string, string> | undefined): boolean {
  if (!sel) return false;
  const l = labels ?? {};
  for (const [k, v] of Object.entries(sel.matchLabels ?? {})) if (l[k] !== v) return false;
  for (const e of sel.matchExpressions ?? []) {
    const v = l[e.key];
    const vals = e.values ?? [];
    if (e.operator === 'In' && (v === undefined || !vals.includes(v))) return false;
    if (e.operator === 'NotIn' && v !== undefined && vals.includes(v)) return false;
    if (e.operator === 'Exists' && v === undefined) return false;
    if (e.operator === 'DoesNotExist' && v !== undefined) return false;
  }
  return true;
}
