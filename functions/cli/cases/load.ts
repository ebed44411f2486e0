/**
 * Loading scenario cases (test/cases/FORMAT.md) from folders: every `*.yaml` below each folder,
 * one case per file. Unknown keys (top level or under `expect`) are reported so a typo never
 * passes silently.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { parse } from 'yaml';

/** Top-level keys of a case. */
export const CaseKeys = [
  'name', 'about', 'origin', 'region', 'now', 'settings', 'instanceTypes', 'unavailableOfferings',
  'nodePools', 'nodeClasses', 'nodes', 'existingNodeClaims', 'instances', 'objects', 'expect',
] as const;

/** Provisioning expectations (checked with the scheduling simulation). */
export const ProvisioningExpectKeys = [
  'scheduled', 'unschedulable', 'unschedulableCount', 'nodeClaims', 'nodeClaimsMatch', 'allNodeClaims',
  'podsOnSameNode', 'podsOnDifferentNodes', 'podsInSameDomain', 'zonesDistinct', 'maxSkew',
] as const;

/** Disruption and garbage-collection expectations (delegated to ./disruption.ts). */
export const DisruptionKeys = ['disrupt', 'keep', 'disruptCount', 'disruptFrom', 'disruptReason', 'replaceWith', 'deleteNodeClaims', 'terminateInstances'] as const;

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

/** Every `*.yaml` file under `dir` (recursively), sorted. A file path is returned as is. */
export function caseFiles(dir: string): string[] {
  const st = statSync(dir);
  if (st.isFile()) return [dir];
  const out: string[] = [];
  for (const entry of readdirSync(dir).sort()) {
    const p = join(dir, entry);
    if (statSync(p).isDirectory()) out.push(...caseFiles(p));
    else if (entry.endsWith('.yaml') || entry.endsWith('.yml')) out.push(p);
  }
  return out;
}

/** Reads and checks the shape of one case file. Never throws for a bad file (problems say why). */
export function loadCase(file: string): LoadedCase {
  const stem = basename(file).replace(/\.ya?ml$/, '');
  let doc: Record<string, any>;
  try {
    doc = parse(readFileSync(file, 'utf8')) as Record<string, any>;
  } catch (e) {
    return { file, name: stem, doc: {}, problems: [`cannot parse: ${(e as Error).message.split('\n')[0]}`] };
  }
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) return { file, name: stem, doc: {}, problems: ['not a mapping'] };
  const problems: string[] = [];
  for (const k of Object.keys(doc)) if (!(CaseKeys as readonly string[]).includes(k)) problems.push(`unknown key "${k}"`);
  const expect = doc.expect;
  if (!expect || typeof expect !== 'object' || Object.keys(expect).length === 0) problems.push('no expect');
  else for (const k of Object.keys(expect)) if (!ExpectKeys.includes(k)) problems.push(`unknown key "expect.${k}"`);
  const name = typeof doc.name === 'string' ? doc.name : stem;
  if (doc.name !== undefined && doc.name !== stem) problems.push(`name "${doc.name}" differs from the file name "${stem}"`);
  return { file, name, doc, problems };
}

/** Loads every case under the folders, in path order. */
export function loadCases(dirs: readonly string[]): LoadedCase[] {
  return dirs.flatMap((d) => caseFiles(d)).map(loadCase);
}
