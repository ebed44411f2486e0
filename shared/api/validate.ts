/**
 * Validation of NodePool and EC2NodeClass objects as the Kubernetes API server validates
 * Karpenter's CRDs: the OpenAPI schema (shared/api/nodepool.ts, strict: unknown fields are
 * errors) plus the CEL rules Karpenter attaches to them.
 *
 * Rule sources: kubernetes-sigs/karpenter pkg/apis/crds/karpenter.sh_nodepools.yaml and
 * pkg/apis/v1/nodepool_validation_cel_test.go (requirements, budgets, labels, static pools);
 * aws/karpenter-provider-aws pkg/apis/crds/karpenter.k8s.aws_ec2nodeclasses.yaml (selector terms,
 * alias, role/instanceProfile, tags, block devices) and pkg/apis/v1/labels.go (well-known labels).
 *
 * A problem is one line `<field path>: <reason>`, e.g.
 * `spec.template.spec.requirements[0].operator: unsupported operator "Equals"; valid operators are In, NotIn, …`.
 */
import { CronExpressionParser } from 'cron-parser';
import type { z } from 'zod';
import { ValidationError } from './errors.ts';
import * as L from './labels.ts';
import { AWSWellKnownLabels } from './labels.ts';
import {
  DNSSubdomainPattern,
  EC2NodeClassSchema,
  NodePoolSchema,
  OperatorSchema,
  StaticCapacityGateOff,
  MaxShown,
  labelKeyProblem,
  labelValueProblem,
  show,
  taintValueProblem,
  type EC2NodeClass,
  type NodePool,
} from './nodepool.ts';
import { parseQuantity } from './quantity.ts';
import { parseYamlObjects } from './yaml.ts';
import { celProblems } from './cel.ts';
import { packingProblem } from './packing.ts';
import { EC2NodeClassRules } from './crd-rules.ts';

/** Requirement operators, in the order Karpenter documents them. */
export const ValidOperators: readonly string[] = OperatorSchema.options;

/**
 * karpenter.sh keys a NodePool may use in requirements and template labels: only the capacity
 * type (KC CRD: the domain rule allows capacity-type and nodepool, a second rule forbids nodepool).
 */
const KarpenterRequirementKeys = [L.LabelCapacityType];

/** Karpenter v1beta1 fields that moved in v1: a targeted hint instead of "unknown field". */
const MovedFieldHints: Record<string, string> = {
  'spec.disruption.expireAfter': 'moved to spec.template.spec.expireAfter in karpenter.sh/v1',
  'spec.template.spec.kubelet': 'moved to the EC2NodeClass (spec.kubelet) in karpenter.sh/v1',
  'spec.template.spec.nodeClassRef.apiVersion': 'karpenter.sh/v1 uses group (karpenter.k8s.aws) instead of apiVersion',
  'spec.connectionTracking.tcpEstablished': 'Karpenter names it tcpEstablishedTimeout',
  'spec.connectionTracking.udpStream': 'Karpenter names it udpStreamTimeout',
  'spec.connectionTracking.udp': 'Karpenter names it udpTimeout',
};

const NonNegativeInteger = /^[0-9]+$/;

type Path = (string | number)[];

/** `spec.template.spec.requirements[0].operator` from ["spec","template","spec","requirements",0,"operator"]. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const p of path) {
    if (typeof p === 'number') out += `[${p}]`;
    else out += out === '' ? String(p) : `.${String(p)}`;
  }
  return out || '(root)';
}

function getAt(obj: unknown, path: readonly PropertyKey[]): unknown {
  let cur: unknown = obj;
  for (const p of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[p];
  }
  return cur;
}

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'a mapping';
  return `${typeof v} ${show(v)}`;
}

/** Edit distance, for "did you mean" on misspelled fields, operators and keys. */
function distance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1].toLowerCase() === b[j - 1].toLowerCase() ? 0 : 1));
    }
  }
  return d[a.length][b.length];
}

function closest(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestD = Infinity;
  for (const c of candidates) {
    const dd = distance(word, c);
    if (dd < bestD) [best, bestD] = [c, dd];
  }
  return best !== undefined && bestD <= Math.max(2, Math.floor(word.length / 4)) ? best : undefined;
}

/** The field names the schema allows at `path` (walks zod's definitions), for suggestions. */
function knownKeysAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  let cur: any = schema;
  const unwrap = () => {
    for (let i = 0; i < 10 && cur?._zod?.def; i++) {
      const def = cur._zod.def;
      if (['optional', 'default', 'nullable', 'prefault', 'readonly', 'catch'].includes(def.type)) cur = def.innerType;
      else if (def.type === 'pipe') cur = def.in;
      else break;
    }
  };
  for (const p of path) {
    unwrap();
    const def = cur?._zod?.def;
    if (!def) return [];
    if (def.type === 'object') cur = def.shape[p as string];
    else if (def.type === 'array') cur = def.element;
    else if (def.type === 'record') cur = def.valueType;
    else return [];
  }
  unwrap();
  const def = cur?._zod?.def;
  return def?.type === 'object' ? Object.keys(def.shape) : [];
}

/** What a missing required field should contain, for the fields users most often forget. */
const RequiredHints: Record<string, string> = {
  'spec.template.spec.nodeClassRef':
    'required: the EC2NodeClass this NodePool launches with, e.g. nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}',
  'spec.template.spec.requirements': 'required: a list of requirements (it may be empty: requirements: [])',
  'spec.template': 'required: the template of the nodes this NodePool creates (spec.template.spec.nodeClassRef and requirements)',
  spec: 'required',
  'metadata.name': 'required: the object name',
  'spec.subnetSelectorTerms': 'required: which subnets to launch in, e.g. - tags: {karpenter.sh/discovery: my-cluster}',
  'spec.securityGroupSelectorTerms': 'required: which security groups to attach, e.g. - tags: {karpenter.sh/discovery: my-cluster}',
  'spec.amiSelectorTerms': 'required: which AMIs to use, e.g. - alias: al2023@latest',
};

/** Turns zod issues into `<path>: <reason>` lines a Karpenter user can act on. */
function zodProblems(schema: z.ZodType, input: unknown, issues: readonly z.core.$ZodIssue[]): string[] {
  const out: string[] = [];
  for (const issue of issues) {
    const path = issue.path as Path;
    const where = formatPath(path);
    const value = getAt(input, path);
    const last = path[path.length - 1];
    switch (issue.code) {
      case 'unrecognized_keys': {
        const known = knownKeysAt(schema, path);
        for (const key of issue.keys) {
          const field = formatPath([...path, key]);
          const moved = MovedFieldHints[field];
          const guess = closest(key, known);
          const hint = moved ? ` (${moved})` : guess ? ` (did you mean "${guess}"?)` : known.length ? ` (allowed fields: ${known.join(', ')})` : '';
          out.push(`${field}: unknown field "${key}"${hint}`);
        }
        break;
      }
      case 'invalid_type':
        if (value === undefined) out.push(`${where}: ${RequiredHints[where] ?? 'required field is missing'}`);
        else out.push(`${where}: must be ${expectedName(issue.expected)}, got ${typeName(value)}`);
        break;
      case 'invalid_value': {
        const allowed = issue.values.map(String);
        if (last === 'operator') {
          const guess = closest(String(value), allowed);
          out.push(`${where}: unsupported operator ${show(value)}${guess ? ` (did you mean "${guess}"?)` : ''}; valid operators are ${allowed.join(', ')}`);
        } else if (last === 'apiVersion') {
          out.push(
            `${where}: unsupported apiVersion ${show(value)}; expected ${allowed.join(' or ')}${/v1beta1|v1alpha/.test(String(value)) ? ' (migrate with the Karpenter v1 upgrade guide)' : ''}`,
          );
        } else {
          const guess = closest(String(value), allowed);
          out.push(`${where}: ${show(value)} is not valid${guess ? ` (did you mean "${guess}"?)` : ''}; expected one of ${allowed.join(', ')}`);
        }
        break;
      }
      case 'invalid_format':
        out.push(`${where}: ${show(value)} ${issue.message.startsWith('must') ? issue.message : `is not valid: ${issue.message}`}`);
        break;
      case 'too_small':
        if (issue.origin === 'array') out.push(`${where}: must have at least ${issue.minimum} item(s)`);
        else if (issue.origin === 'string') out.push(`${where}: must not be empty`);
        else out.push(`${where}: must be at least ${issue.minimum}, got ${show(value)}`);
        break;
      case 'too_big':
        if (issue.origin === 'array') out.push(`${where}: must have at most ${issue.maximum} items, got ${(value as unknown[]).length}`);
        else out.push(`${where}: must be at most ${issue.maximum}, got ${show(value)}`);
        break;
      default:
        out.push(`${where}: ${issue.message}`);
    }
  }
  return out;
}

function expectedName(expected: string): string {
  return (
    (
      { object: 'a mapping', array: 'a list', int: 'a whole number', number: 'a number', string: 'a string', boolean: 'true or false' } as Record<
        string,
        string
      >
    )[expected] ?? expected
  );
}

// ---------------------------------------------------------------------------------------------
// CEL-equivalent rules. They read the raw object defensively so that every problem is reported
// in one pass, even when the schema check failed somewhere else.

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function domainOf(key: string): string {
  return key.includes('/') ? key.split('/')[0] : '';
}

/** Restricted-domain rule shared by requirement keys and template labels. `where` names the use. */
function restrictedKeyProblem(key: string, use: 'requirement' | 'label'): string | undefined {
  const domain = domainOf(key);
  if (key === L.LabelHostname) return `label "${L.LabelHostname}" is restricted (Karpenter sets it from the node name)`;
  if (key === L.LabelNodePool) return `label "${L.LabelNodePool}" is restricted (Karpenter sets it to the NodePool name)`;
  if (domain.endsWith('karpenter.sh')) {
    // The CRD allows karpenter.sh/capacity-type both as a requirement key and a template label.
    if (KarpenterRequirementKeys.includes(key)) return undefined;
    const guess = use === 'requirement' ? closest(key, KarpenterRequirementKeys) : undefined;
    return use === 'requirement'
      ? `unknown key ${show(key)}: label domain "karpenter.sh" is restricted; the only karpenter.sh requirement key is ${KarpenterRequirementKeys.join(', ')}${guess ? ` (did you mean "${guess}"?)` : ''}`
      : `label domain "karpenter.sh" is restricted: ${show(key)} cannot be set in a NodePool template`;
  }
  if (domain.endsWith('karpenter.k8s.aws')) {
    if (AWSWellKnownLabels.includes(key)) return undefined;
    const guess = closest(key, AWSWellKnownLabels);
    return `unknown key ${show(key)}: label domain "karpenter.k8s.aws" is restricted to Karpenter's well-known labels${guess ? ` (did you mean "${guess}"?)` : ''}`;
  }
  // kubernetes.io and k8s.io keys (well-known or custom, e.g. "kubernetes.io/team") are allowed:
  // Karpenter v1.15's NodePool CRD restricts only karpenter.sh, the nodepool label and hostname
  // (scheduling suite_test.go "should schedule pods that have node selectors with label in the
  // kubernetes domains").
  return undefined;
}

/** Checks one NodePool / NodeClaim requirement (KC CRD requirement rules). */
export function requirementProblems(req: unknown, path: Path): string[] {
  const out: string[] = [];
  if (!isRecord(req)) return out;
  const where = (p: PropertyKey) => formatPath([...path, p]);
  const key = req.key;
  const op = req.operator;
  const values = Array.isArray(req.values) ? req.values : req.values === undefined ? [] : undefined;
  if (typeof key === 'string' && key.length > 0) {
    const bad = labelKeyProblem(key) ?? restrictedKeyProblem(key, 'requirement');
    if (bad) out.push(`${where('key')}: ${bad}`);
  }
  if (values === undefined) return out; // wrong type, reported by the schema
  for (const [i, v] of values.entries()) {
    if (typeof v === 'string' && op !== 'Gt' && op !== 'Lt' && op !== 'Gte' && op !== 'Lte') {
      const bad = labelValueProblem(v);
      if (bad) out.push(`${formatPath([...path, 'values', i])}: ${bad}`);
    }
  }
  switch (op) {
    case 'In':
      if (values.length === 0) out.push(`${where('values')}: operator In needs at least one value`);
      break;
    // Exists / DoesNotExist with values: Karpenter's CRD and its controller accept them and its
    // scheduling ignores the values, as shared/api/requirements.ts does.
    case 'Gt':
    case 'Lt':
    case 'Gte':
    case 'Lte':
      if (values.length !== 1 || typeof values[0] !== 'string' || !NonNegativeInteger.test(values[0])) {
        out.push(`${where('values')}: operator ${op} needs exactly one non-negative integer value, got ${show(values)}`);
      }
      break;
  }
  if (typeof key === 'string' && typeof op === 'string' && values.every((v) => typeof v === 'string')) {
    // (a minValues above the number of values listed is reported below, once)
    const minValues = typeof req.minValues === 'number' && req.minValues <= values.length ? { minValues: req.minValues } : {};
    const bad = L.wellKnownValuesProblem({ key, operator: op, values: values as string[], ...minValues });
    if (bad) out.push(`${where('values')}: ${bad}`);
  }
  if (typeof req.minValues === 'number' && op === 'In' && values.length < req.minValues) {
    out.push(
      `${where('minValues')}: minValues ${req.minValues} is more than the ${values.length} value(s) listed; an In requirement with minValues must list at least that many values`,
    );
  }
  return out;
}

function taintProblems(taints: unknown, path: Path): string[] {
  if (!Array.isArray(taints)) return [];
  const out: string[] = [];
  taints.forEach((t, i) => {
    if (!isRecord(t)) return;
    if (typeof t.key === 'string' && t.key) {
      const bad = labelKeyProblem(t.key, 'taint key');
      if (bad) out.push(`${formatPath([...path, i, 'key'])}: ${bad}`);
    }
    const badValue = typeof t.value === 'string' ? taintValueProblem(t.value) : undefined;
    if (badValue) out.push(`${formatPath([...path, i, 'value'])}: ${badValue}`);
  });
  return out;
}

/** Karpenter's budget schedule: a 5-field cron or a macro, UTC (KC CRD pattern + robfig/cron). */
export function cronProblem(schedule: string): string | undefined {
  const s = schedule.trim();
  if (s.startsWith('@')) {
    return ['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly'].includes(s)
      ? undefined
      : `${show(schedule)} is not a valid schedule macro; use @yearly, @annually, @monthly, @weekly, @daily, @midnight or @hourly`;
  }
  const fields = s.split(/\s+/);
  if (fields.length !== 5) {
    return `${show(schedule)} is not a valid cron schedule: expected 5 fields (minute hour day-of-month month day-of-week), got ${fields.length}; time zones are not supported (schedules are UTC)`;
  }
  try {
    CronExpressionParser.parse(s, { tz: 'UTC' });
  } catch (e) {
    return `${show(schedule)} is not a valid cron schedule: ${(e as Error).message}`;
  }
  return undefined;
}

function nodePoolRules(obj: unknown, opts: ValidateOptions = {}): string[] {
  const out: string[] = [];
  if (!isRecord(obj)) return out;
  const name = isRecord(obj.metadata) ? obj.metadata.name : undefined;
  if (typeof name === 'string' && name && (name.length > 253 || !DNSSubdomainPattern.test(name))) {
    out.push(`metadata.name: ${show(name)} is not a valid name (at most 253 lowercase letters, digits, "-" and ".", starting and ending alphanumeric)`);
  }
  const annotations = isRecord(obj.metadata) && isRecord(obj.metadata.annotations) ? obj.metadata.annotations : {};
  if (annotations[L.AnnotationPacking] !== undefined) {
    const problem = packingProblem(annotations[L.AnnotationPacking]);
    if (problem) out.push(`metadata.annotations["${L.AnnotationPacking}"]: ${problem}`);
  }
  const spec = isRecord(obj.spec) ? obj.spec : {};
  const template = isRecord(spec.template) ? spec.template : {};
  const tspec = isRecord(template.spec) ? template.spec : {};
  const tmeta = isRecord(template.metadata) ? template.metadata : {};
  if (Array.isArray(tspec.requirements)) {
    tspec.requirements.forEach((r, i) => out.push(...requirementProblems(r, ['spec', 'template', 'spec', 'requirements', i])));
  }
  if (isRecord(tmeta.labels)) {
    for (const [k, v] of Object.entries(tmeta.labels)) {
      const path = formatPath(['spec', 'template', 'metadata', 'labels', k]);
      const bad = labelKeyProblem(k) ?? restrictedKeyProblem(k, 'label');
      if (bad) out.push(`${path}: ${bad}`);
      if (typeof v === 'string') {
        const badV = labelValueProblem(v);
        if (badV) out.push(`${path}: ${badV}`);
      }
    }
  }
  out.push(...taintProblems(tspec.taints, ['spec', 'template', 'spec', 'taints']));
  out.push(...taintProblems(tspec.startupTaints, ['spec', 'template', 'spec', 'startupTaints']));
  if (isRecord(tspec.nodeClassRef)) {
    for (const f of ['group', 'kind', 'name']) {
      if (tspec.nodeClassRef[f] === undefined) {
        out.push(
          `spec.template.spec.nodeClassRef.${f}: required (nodeClassRef needs group, kind and name, e.g. {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default})`,
        );
      }
    }
  }
  const disruption = isRecord(spec.disruption) ? spec.disruption : {};
  if (Array.isArray(disruption.budgets)) {
    disruption.budgets.forEach((b, i) => {
      if (!isRecord(b)) return;
      const path = (f: string) => formatPath(['spec', 'disruption', 'budgets', i, f]);
      const hasSchedule = b.schedule !== undefined;
      const hasDuration = b.duration !== undefined;
      if (hasSchedule && !hasDuration) out.push(`${path('duration')}: required when schedule is set ('schedule' must be set with 'duration')`);
      if (hasDuration && !hasSchedule) out.push(`${path('schedule')}: required when duration is set ('duration' must be set with 'schedule')`);
      if (typeof b.schedule === 'string') {
        const bad = cronProblem(b.schedule);
        if (bad) out.push(`${path('schedule')}: ${bad}`);
      }
      // The CRD's reasons is a set (x-kubernetes-list-type: set): the API server refuses a repeat.
      if (Array.isArray(b.reasons)) {
        const seen = new Set<unknown>();
        b.reasons.forEach((r, j) => {
          if (seen.has(r)) out.push(`${formatPath(['spec', 'disruption', 'budgets', i, 'reasons', j])}: duplicate reason ${show(r)}`);
          seen.add(r);
        });
      }
    });
  }
  // Karpenter's CEL rules on a static NodePool (KC pkg/apis/v1/nodepool.go, NodePoolSpec).
  if (spec.replicas !== undefined) {
    if (!opts.staticCapacity) out.push(`spec.replicas: ${StaticCapacityGateOff}`);
    if (spec.weight !== undefined) out.push(`spec.weight: 'weight' is not supported on static NodePools (spec.replicas is set)`);
    if (isRecord(spec.limits)) {
      for (const k of Object.keys(spec.limits)) {
        if (k !== 'nodes') out.push(`spec.limits.${k}: only 'limits.nodes' is supported on static NodePools (spec.replicas is set)`);
      }
    }
  }
  if (isRecord(spec.limits)) {
    for (const [k, v] of Object.entries(spec.limits)) {
      if (typeof v !== 'string' && typeof v !== 'number') continue;
      try {
        if (parseQuantity(v) < 0) out.push(`spec.limits.${k}: must not be negative`);
      } catch {
        out.push(`spec.limits.${k}: ${show(v)} is not a Kubernetes quantity (e.g. 1000, 500m, 1000Gi)`);
      }
    }
  }
  return out;
}

/**
 * The CEL rules of the EC2NodeClass CRD (shared/api/crd-rules.ts, evaluated by shared/api/cel.ts)
 * plus the hint for a missing amiSelectorTerms.
 */
function nodeClassRules(obj: unknown): string[] {
  if (!isRecord(obj) || !isRecord(obj.spec)) return [];
  return celProblems(obj, EC2NodeClassRules, formatPath);
}

/** Every field path of `obj` in document order (formatted), for ordering problems as the YAML reads. */
function pathOrder(obj: unknown): Map<string, number> {
  const order = new Map<string, number>();
  const walk = (v: unknown, path: Path) => {
    order.set(formatPath(path), order.size);
    if (Array.isArray(v)) v.forEach((x, i) => walk(x, [...path, i]));
    else if (isRecord(v)) for (const [k, x] of Object.entries(v)) walk(x, [...path, k]);
  };
  walk(obj, []);
  return order;
}

/** Deduplicated problems, sorted by where their field sits in the object (missing fields after their parent). */
function ordered(obj: unknown, lines: string[]): string[] {
  const order = pathOrder(obj);
  const rank = (line: string): number => {
    let path = line.slice(0, line.indexOf(': '));
    for (;;) {
      const r = order.get(path);
      if (r !== undefined) return r;
      const cut = Math.max(path.lastIndexOf('.'), path.lastIndexOf('['));
      if (cut <= 0) return Infinity;
      path = path.slice(0, cut);
    }
  };
  // An unknown field is usually the root cause (a typo such as `requirments`) of the "required"
  // problem reported for the field it was meant to be, so unknown fields come first.
  const unknown = (l: string) => (l.includes(': unknown field "') ? 0 : 1);
  return [...new Set(lines)]
    .map((l, i) => ({ l, i, r: rank(l), u: unknown(l) }))
    .sort((a, b) => a.u - b.u || a.r - b.r || a.i - b.i)
    .map((x) => x.l);
}

/** Problems of a NodePool: schema then CEL rules, deduplicated. Empty when valid. */
export function nodePoolProblems(obj: unknown, opts: ValidateOptions = {}): string[] {
  const r = NodePoolSchema.safeParse(obj);
  return ordered(obj, [...(r.success ? [] : zodProblems(NodePoolSchema, obj, r.error.issues)), ...nodePoolRules(obj, opts)]);
}

/** Problems of an EC2NodeClass: schema then CEL rules, deduplicated. Empty when valid. */
export function nodeClassProblems(obj: unknown): string[] {
  const r = EC2NodeClassSchema.safeParse(obj);
  return ordered(obj, [...(r.success ? [] : zodProblems(EC2NodeClassSchema, obj, r.error.issues)), ...nodeClassRules(obj)]);
}

/**
 * Parses a NodePool (`karpenter.sh/v1`) and applies Karpenter's defaults
 * (NodePoolDefaults).
 * @throws ValidationError with `problems` (`<field path>: <reason>`) when invalid.
 */
export function parseNodePool(obj: unknown): NodePool {
  const problems = nodePoolProblems(obj);
  if (problems.length > 0) throw new ValidationError(`invalid NodePool ${objectName(obj)}: ${problems[0]}`, problems);
  return NodePoolSchema.parse(obj);
}

/**
 * Parses an EC2NodeClass (`karpenter.k8s.aws/v1` or `nodefleet.io/v1`).
 * @throws ValidationError with `problems` when invalid.
 */
export function parseNodeClass(obj: unknown): EC2NodeClass {
  const problems = nodeClassProblems(obj);
  if (problems.length > 0) throw new ValidationError(`invalid EC2NodeClass ${objectName(obj)}: ${problems[0]}`, problems);
  return EC2NodeClassSchema.parse(obj);
}

/** Karpenter kinds validate skips without complaint (not user configuration nodefleet reads). */
const SkippedKarpenterKinds = ['NodeClaim', 'NodeOverlay'];
/** API groups whose kinds we know; an unknown kind there is most likely a typo. */
const KarpenterGroups = ['karpenter.sh', 'karpenter.k8s.aws', 'nodefleet.io'];

function objectName(obj: unknown): string {
  const name = isRecord(obj) && isRecord(obj.metadata) ? obj.metadata.name : undefined;
  return typeof name === 'string' && name ? name : '<unnamed>';
}

function objectKind(obj: unknown): string {
  return isRecord(obj) && typeof obj.kind === 'string' ? obj.kind : '<no kind>';
}

/**
 * What a deployment's settings change in validation: `staticCapacity`, the StaticCapacity
 * feature gate (default off, as Karpenter's: a NodePool with spec.replicas is then refused).
 */
export interface ValidateOptions {
  staticCapacity?: boolean;
}

/**
 * Problems of any object by kind: NodePool and EC2NodeClass are validated; other Karpenter
 * kinds are skipped; an unknown kind in a Karpenter API group or an object without kind is a
 * problem; kinds of other groups (Deployments, …) are not nodefleet's to check (no problems).
 */
export function validateObject(obj: unknown, opts: ValidateOptions = {}): string[] {
  if (!isRecord(obj)) return [`(root): expected a Kubernetes object (a mapping with apiVersion, kind and metadata), got ${typeName(obj)}`];
  const kind = obj.kind;
  if (kind === 'NodePool') return nodePoolProblems(obj, opts);
  if (kind === 'EC2NodeClass') return nodeClassProblems(obj);
  if (typeof kind !== 'string' || kind === '') return ['kind: required (NodePool or EC2NodeClass)'];
  const group = typeof obj.apiVersion === 'string' ? obj.apiVersion.split('/')[0] : '';
  if (KarpenterGroups.includes(group) && !SkippedKarpenterKinds.includes(kind)) {
    const guess = closest(kind, ['NodePool', 'EC2NodeClass']);
    return [`kind: unknown kind ${show(kind)} in ${group}${guess ? ` (did you mean "${guess}"?)` : ''}; nodefleet reads NodePool and EC2NodeClass`];
  }
  return [];
}

/** One object found in a YAML file: `kind`, `name` (metadata.name) and the raw object. */
export interface ValidatedObject {
  kind: string;
  name: string;
  object: unknown;
  /** True for NodePool and EC2NodeClass (the kinds validate checks). */
  checked: boolean;
  /** Problems of this object, `<field path>: <reason>`. */
  problems: string[];
}

/**
 * Validates every object in a YAML text (multi-document; kubectl `List` unwrapped). Each
 * problem line is `FILE: <kind/name>: <field path>: <reason>`; a YAML syntax error is
 * `FILE: document N: line L, column C: YAML syntax error: <reason>` (no line and column for an
 * alias bomb, refused as a whole document).
 */
export function validateYamlText(text: string, file: string, opts: ValidateOptions = {}): { objects: ValidatedObject[]; problems: string[] } {
  const { objects: raw, errors } = parseYamlObjects(text);
  const problems: string[] = [];
  // The first syntax error of a document is the one to fix; the parser's later ones are mostly
  // consequences of it (one bad indent gives several), so only the first per document is shown.
  const seenDocuments = new Set<number>();
  for (const e of errors) {
    if (seenDocuments.has(e.document)) continue;
    seenDocuments.add(e.document);
    const at = e.line !== undefined ? `line ${e.line}, column ${e.column}: ` : '';
    problems.push(`${file}: document ${e.document}: ${at}YAML syntax error: ${e.message}`);
  }
  const objects: ValidatedObject[] = [];
  for (const r of raw) {
    const kind = objectKind(r.object);
    const name = objectName(r.object);
    const objProblems = validateObject(r.object, opts);
    const shownName = name.length > MaxShown ? `${name.slice(0, MaxShown)}…` : name;
    const label = isRecord(r.object) ? `${kind}/${shownName}` : `document ${r.document}${r.item ? ` item ${r.item}` : ''}`;
    for (const p of objProblems) problems.push(`${file}: ${label}: ${p}`);
    objects.push({ kind, name, object: r.object, checked: kind === 'NodePool' || kind === 'EC2NodeClass', problems: objProblems });
  }
  return { objects, problems };
}
