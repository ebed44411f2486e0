/**
 * Loading scenario cases (test/cases/FORMAT.md) from folders: every `*.yaml` below each folder,
 * one case per file, or a group of cases per file (`cases:`, each entry over the file's shared
 * keys and its `include` files). Unknown keys (top level or under `expect`) are reported so a
 * typo never passes silently.
 */
import { CaseSettingKeys, SettingsError, settingsFromCase } from '../../../shared/api/settings.ts';
import { readdirSync, statSync, type Stats } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { parse } from 'yaml';
import { CliError, readErrorReason, readInputText } from '../io.ts';

/** Top-level keys of a case. */
export const CaseKeys = [
  'name',
  'about',
  'origin',
  'region',
  'now',
  'settings',
  'instanceTypes',
  'unavailableOfferings',
  'nodePools',
  'nodeClasses',
  'nodes',
  'existingNodeClaims',
  'instances',
  'objects',
  'expect',
  'knownDifference',
  'passes',
  'account',
] as const;

/** Provisioning expectations (checked with the scheduling simulation). */
export const ProvisioningExpectKeys = [
  'scheduled',
  'unschedulable',
  'unschedulableCount',
  'nodeClaims',
  'nodeClaimsMatch',
  'allNodeClaims',
  'podsOnSameNode',
  'podsOnDifferentNodes',
  'podsInSameDomain',
  'zonesDistinct',
  'maxSkew',
  'domainCounts',
  'reasonIncludes',
] as const;

/** Disruption and garbage-collection expectations (delegated to ./disruption.ts). */
export const DisruptionKeys = [
  'disrupt',
  'keep',
  'disruptCount',
  'disruptFrom',
  'disruptReason',
  'replaceWith',
  'replacementCount',
  'allowedDisruptions',
  'deleteNodeClaims',
  'terminateInstances',
] as const;

/** Bad-input expectations. */
export const ValidationExpectKeys = ['errors'] as const;

export const ExpectKeys: readonly string[] = [...ProvisioningExpectKeys, ...DisruptionKeys, ...ValidationExpectKeys];

/** A case as read from its file. */
export interface LoadedCase {
  file: string;
  /** `name`, else the file name without .yaml. */
  name: string;
  /** The parsed YAML document. */
  doc: Record<string, any>;
  /** Problems with the file itself (unparseable, unknown keys, no expect, name ≠ file name). */
  problems: string[];
}

/** Keys only a group file has: its cases, and the files whose keys it shares with them. */
export const GroupKeys = ['cases', 'include'] as const;

/**
 * Every `*.yaml` file under `dir` (recursively), sorted, except `_*.yaml` (files groups include). A file path is returned as is.
 * @throws CliError `PATH: cannot read: <reason>` for a path that cannot be listed (a symbolic link loop, no permission) or is neither a file nor a folder.
 */
export function caseFiles(dir: string): string[] {
  const st = statOrThrow(dir);
  if (st.isFile()) return [dir];
  if (!st.isDirectory()) throw new CliError(`${dir}: cannot read: not a file or folder`);
  const out: string[] = [];
  let entries: string[];
  try {
    entries = readdirSync(dir).sort();
  } catch (e) {
    throw new CliError(`${dir}: cannot read: ${readErrorReason(e)}`);
  }
  for (const entry of entries) {
    const p = join(dir, entry);
    if (statOrThrow(p).isDirectory()) out.push(...caseFiles(p));
    else if ((entry.endsWith('.yaml') || entry.endsWith('.yml')) && !entry.startsWith('_')) out.push(p);
  }
  return out;
}

function statOrThrow(path: string): Stats {
  try {
    return statSync(path);
  } catch (e) {
    throw new CliError(`${path}: cannot read: ${readErrorReason(e)}`);
  }
}

function checkDoc(doc: Record<string, any>, extraKeys: readonly string[]): string[] {
  const problems: string[] = [];
  for (const k of Object.keys(doc)) if (!(CaseKeys as readonly string[]).includes(k) && !extraKeys.includes(k)) problems.push(`unknown key "${k}"`);
  return problems;
}

/**
 * Keys of `settings` the runner reads (FORMAT.md): Karpenter's settings in camelCase
 * (shared/api/settings.ts, checked as the functions check them) and the runner's own knobs.
 */
export const SettingsKeys: readonly string[] = [...CaseSettingKeys, 'packing', 'maxInstanceTypes', 'maxLaunchInstanceTypes'];

/**
 * The shape of a nested expectation: a list of keys (a mapping with only those keys), `list` (a
 * list of such), `oneOrList` (one or a list), `range` (a number or `{ min, max }`), or `keys` with
 * the shapes of some `fields`. Keys without a shape hold scalars, lists of names or free maps
 * (labels, requests, allowedDisruptions).
 */
type Shape =
  readonly string[] | { list: Shape } | { oneOrList: Shape } | { range: true } | { fields: Readonly<Record<string, Shape>>; keys: readonly string[] };
const Range: Shape = { range: true };
const TaintKeys = ['key', 'value', 'effect'];
const ClaimCriteria: Shape = {
  keys: ['nodePool', 'instanceTypeIn', 'labels', 'capacityType', 'priceUsdPerHour', 'launchTypes', 'launchTypeCount', 'taints', 'requests'],
  fields: {
    launchTypes: { keys: ['labels', 'offering'], fields: { offering: ['zone', 'capacityType'] } },
    launchTypeCount: Range,
    taints: { list: TaintKeys },
  },
};
const ExpectShapes: Readonly<Record<string, Shape>> = {
  nodeClaims: Range,
  disruptCount: Range,
  replacementCount: Range,
  nodeClaimsMatch: { list: ClaimCriteria },
  allNodeClaims: ClaimCriteria,
  podsInSameDomain: { list: ['topologyKey', 'pods'] },
  maxSkew: { oneOrList: ['selector', 'topologyKey', 'skew'] },
  domainCounts: { oneOrList: ['selector', 'topologyKey', 'namespace', 'counts', 'max'] },
  replaceWith: ['instanceTypeIn', 'capacityType', 'nodePool', 'labels', 'includes', 'excludes', 'launchCount'],
};

const isMap = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Problems of `value` at `path` against `shape`: an unknown key anywhere, or a mapping where a list belongs. */
function checkShape(path: string, value: unknown, shape: Shape): string[] {
  if (Array.isArray(shape)) {
    if (!isMap(value)) return [`${path}: expected a mapping`];
    return Object.keys(value)
      .filter((k) => !shape.includes(k))
      .map((k) => `unknown key "${path}.${k}"`);
  }
  const s = shape as Exclude<Shape, readonly string[]>;
  if ('range' in s) {
    if (typeof value === 'number') return [];
    return checkShape(path, value, ['min', 'max']);
  }
  if ('list' in s) {
    if (!Array.isArray(value)) return [`${path}: expected a list`];
    return value.flatMap((v, i) => checkShape(`${path}[${i}]`, v, s.list));
  }
  if ('oneOrList' in s)
    return Array.isArray(value) ? value.flatMap((v, i) => checkShape(`${path}[${i}]`, v, s.oneOrList)) : checkShape(path, value, s.oneOrList);
  const problems = checkShape(path, value, s.keys);
  if (isMap(value)) for (const [k, sub] of Object.entries(s.fields)) if (value[k] !== undefined) problems.push(...checkShape(`${path}.${k}`, value[k], sub));
  return problems;
}

function checkExpect(doc: Record<string, any>): string[] {
  const expect = doc.expect;
  if (!expect || typeof expect !== 'object' || Object.keys(expect).length === 0) return ['no expect'];
  const problems = Object.keys(expect)
    .filter((k) => !ExpectKeys.includes(k))
    .map((k) => `unknown key "expect.${k}"`);
  for (const [k, shape] of Object.entries(ExpectShapes)) if (expect[k] !== undefined) problems.push(...checkShape(`expect.${k}`, expect[k], shape));
  if (doc.settings !== undefined) {
    problems.push(...checkShape('settings', doc.settings, SettingsKeys));
    if (isMap(doc.settings)) {
      try {
        settingsFromCase(doc.settings);
      } catch (e) {
        if (!(e instanceof SettingsError)) throw e;
        problems.push(e.message);
      }
    }
  }
  return problems;
}

function parseFile(file: string): Record<string, any> {
  const doc = parse(readInputText(file), { merge: true }) as Record<string, any>;
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) throw new Error('not a mapping');
  return doc;
}

/**
 * The keys a group file shares with its cases: those of each `include` file (paths relative to
 * the group file, later ones winning), then the group's own keys.
 */
function groupBase(file: string, doc: Record<string, any>): Record<string, any> {
  const base: Record<string, any> = {};
  const includes = doc.include === undefined ? [] : Array.isArray(doc.include) ? doc.include : [doc.include];
  for (const inc of includes as string[]) Object.assign(base, parseFile(join(dirname(file), String(inc))));
  for (const [k, v] of Object.entries(doc)) if (!(GroupKeys as readonly string[]).includes(k)) base[k] = v;
  return base;
}

/**
 * The cases of a group file: each entry of `cases` (with its own `name`, unique in the file) over
 * the shared keys, a key of the entry replacing the shared one; `origin` joins the file's and the
 * entry's ("file: test"). Case names are `<file stem>/<entry name>`.
 */
function loadGroup(file: string, stem: string, doc: Record<string, any>): LoadedCase[] {
  let base: Record<string, any>;
  try {
    base = groupBase(file, doc);
  } catch (e) {
    return [{ file, name: stem, doc: {}, problems: [`cannot read an include: ${(e as Error).message.split('\n')[0]}`] }];
  }
  const groupProblems = checkDoc(doc, GroupKeys);
  if (!Array.isArray(doc.cases) || doc.cases.length === 0)
    return [{ file, name: stem, doc: {}, problems: [...groupProblems, 'cases: expected a non-empty list'] }];
  const seen = new Set<string>();
  return (doc.cases as Record<string, any>[]).map((entry, i) => {
    const entryName = typeof entry?.name === 'string' ? entry.name : `#${i + 1}`;
    const name = `${stem}/${entryName}`;
    if (!entry || typeof entry !== 'object' || Array.isArray(entry)) return { file, name, doc: {}, problems: ['not a mapping'] };
    const problems = [...groupProblems, ...checkDoc(entry, [])];
    if (typeof entry.name !== 'string') problems.push('a case of a group needs a name');
    else if (seen.has(entry.name)) problems.push(`duplicate case name "${entry.name}"`);
    seen.add(entryName);
    const merged: Record<string, any> = { ...base, ...entry, name };
    if (base.origin && entry.origin) merged.origin = `${base.origin}: ${entry.origin}`;
    // A case's settings add to its group's (a Karpenter suite's BeforeEach options, e.g. its feature gates).
    if (isMap(base.settings) && isMap(entry.settings)) merged.settings = { ...base.settings, ...entry.settings };
    problems.push(...checkExpect(merged));
    return { file, name, doc: merged, problems };
  });
}

/** Reads and checks the shape of one case file (a single case). Never throws for a bad file (problems say why). */
export function loadCase(file: string): LoadedCase {
  return loadCaseFile(file)[0];
}

/** Reads one case file: one case, or every case of a group file. Never throws (problems say why). */
export function loadCaseFile(file: string): LoadedCase[] {
  const stem = basename(file).replace(/\.ya?ml$/, '');
  let doc: Record<string, any>;
  try {
    doc = parseFile(file);
  } catch (e) {
    return [{ file, name: stem, doc: {}, problems: [`cannot parse: ${(e as Error).message.split('\n')[0]}`] }];
  }
  if ('cases' in doc || 'include' in doc) return loadGroup(file, stem, doc);
  const problems = [...checkDoc(doc, []), ...checkExpect(doc)];
  const name = typeof doc.name === 'string' ? doc.name : stem;
  if (doc.name !== undefined && doc.name !== stem) problems.push(`name "${doc.name}" differs from the file name "${stem}"`);
  return [{ file, name, doc, problems }];
}

/** Loads every case under the folders, in path order (a group file's cases in file order). */
export function loadCases(dirs: readonly string[]): LoadedCase[] {
  return dirs.flatMap((d) => caseFiles(d)).flatMap(loadCaseFile);
}
