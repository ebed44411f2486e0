/**
 * Nothing copyleft ships: every shipped entry point — each Lambda handler (functions.ts and the
 * termination state machine's tasks), the agent (functions/agent/main.ts, the image's bundle) and
 * the CLI (functions/cli/bin.mjs) — is bundled once with esbuild (every package inlined, as in
 * the Lambda bundles), and the `license` of each package in its metafile is checked against an
 * allow-list of permissive licences. A package with any other licence (AGPL, GPL, LGPL, MPL, EPL,
 * none, …) fails, naming the package and the entry point.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build, type Metafile } from 'esbuild';
import { beforeAll, describe, expect, it } from 'vitest';
import { RepoRoot } from '../../../infra/aws/app.ts';
import { Functions } from '../../../infra/aws/functions.ts';
import { readTerminationDefinition } from '../../../infra/aws/termination.ts';

/** SPDX identifiers of permissive licences (no copyleft): what may ship. */
export const AllowedLicences = new Set(['MIT', 'MIT-0', 'Apache-2.0', 'ISC', 'BSD-2-Clause', 'BSD-3-Clause', '0BSD', 'Unlicense', 'BlueOak-1.0.0', 'CC0-1.0']);

/** Whether an SPDX expression (`MIT`, `(MIT OR Apache-2.0)`, `A AND B`) only grants allowed terms: OR needs one side, AND both. */
export function licenceAllowed(expression: string): boolean {
  const e = expression
    .trim()
    .replace(/^\((.*)\)$/, '$1')
    .trim();
  const or = e.split(/\s+OR\s+/);
  if (or.length > 1) return or.some(licenceAllowed);
  const and = e.split(/\s+AND\s+/);
  if (and.length > 1) return and.every(licenceAllowed);
  return AllowedLicences.has(e);
}

/** The package an esbuild input path belongs to (`node_modules/@scope/name/…` → its folder), or undefined for the project's own files. */
export function packageDirOf(input: string): string | undefined {
  const m = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input);
  return m?.[1];
}

/** What the test reads of a package.json. */
interface PackageJson {
  name: string;
  version: string;
  license?: string | { type?: string };
  licenses?: { type?: string }[];
}

/** A package's declared licence: `license` (SPDX), or the legacy `license: {type}` / `licenses: [{type}]`. */
function licenceOf(pkg: PackageJson): string | undefined {
  if (typeof pkg.license === 'string') return pkg.license;
  if (pkg.license?.type) return pkg.license.type;
  const types = (pkg.licenses ?? []).map((l) => l.type).filter((t): t is string => !!t);
  return types.length ? `(${types.join(' OR ')})` : undefined;
}

/** Shipped entry points, by name. */
function shippedEntries(): Record<string, string> {
  const entries: Record<string, string> = {};
  for (const f of Functions) entries[`lambda ${f.name}`] = f.entry;
  for (const t of readTerminationDefinition(RepoRoot)?.tasks ?? []) entries[`lambda termination ${t.name}`] = t.entry;
  entries.agent = 'functions/agent/main.ts';
  entries.cli = 'functions/cli/bin.mjs';
  return entries;
}

/** Each entry's packages: `name@version` → licence. */
async function packagesByEntry(entries: Record<string, string>): Promise<Map<string, Map<string, string | undefined>>> {
  const outdir = mkdtempSync(join(tmpdir(), 'nodefleet-licences-'));
  try {
    // One build for all entries, with shared chunks (parsed and printed once); an entry's code is
    // its output and every chunk it imports, statically or dynamically.
    const result = await build({
      absWorkingDir: RepoRoot,
      entryPoints: Object.values(entries),
      outdir,
      bundle: true,
      splitting: true,
      platform: 'node',
      format: 'esm',
      target: 'node22',
      mainFields: ['module', 'main'],
      write: false,
      metafile: true,
      logLevel: 'silent',
    });
    const outputs: Metafile['outputs'] = result.metafile.outputs;
    const closure = (output: string, seen = new Set<string>()): Set<string> => {
      if (seen.has(output)) return seen;
      seen.add(output);
      for (const i of outputs[output].imports) if (!i.external && outputs[i.path]) closure(i.path, seen);
      return seen;
    };
    const out = new Map<string, Map<string, string | undefined>>();
    for (const [name, entry] of Object.entries(entries)) {
      const own = Object.keys(outputs).find((o) => outputs[o].entryPoint === entry);
      if (!own) continue;
      const packages = new Map<string, string | undefined>();
      for (const o of closure(own)) {
        for (const input of Object.keys(outputs[o].inputs)) {
          const dir = packageDirOf(input);
          if (!dir) continue;
          const pkg = JSON.parse(readFileSync(join(RepoRoot, dir, 'package.json'), 'utf8')) as PackageJson;
          packages.set(`${pkg.name}@${pkg.version}`, licenceOf(pkg));
        }
      }
      out.set(name, packages);
    }
    return out;
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

describe('licences of what ships', () => {
  const entries = shippedEntries();
  let bundled: Map<string, Map<string, string | undefined>>;
  beforeAll(async () => {
    bundled = await packagesByEntry(entries);
  }, 240_000);

  it('licenceAllowed reads SPDX expressions', () => {
    expect(licenceAllowed('MIT')).toBe(true);
    expect(licenceAllowed('(MIT OR Apache-2.0)')).toBe(true);
    expect(licenceAllowed('(MIT OR GPL-3.0-only)')).toBe(true);
    expect(licenceAllowed('MIT AND GPL-3.0-only')).toBe(false);
    expect(licenceAllowed('AGPL-3.0')).toBe(false);
    expect(licenceAllowed('LGPL-2.1-or-later')).toBe(false);
    expect(packageDirOf('node_modules/a/node_modules/@s/b/dist/x.js')).toBe('node_modules/a/node_modules/@s/b');
    expect(packageDirOf('functions/gc/handler.ts')).toBeUndefined();
  });

  it('bundles every shipped entry point: each Lambda handler, the agent and the CLI', () => {
    expect([...bundled.keys()].sort()).toEqual(Object.keys(entries).sort());
    expect(Object.keys(entries).filter((n) => n.startsWith('lambda ')).length).toBeGreaterThanOrEqual(Functions.length + 1);
    // The bundles are real: the SDK is in every handler, the Kubernetes client in the agent.
    for (const [name, packages] of bundled) {
      if (name.startsWith('lambda '))
        expect(
          [...packages.keys()].some((p) => p.startsWith('@aws-sdk/')),
          name,
        ).toBe(true);
    }
    expect([...bundled.get('agent')!.keys()].some((p) => p.startsWith('@kubernetes/client-node@'))).toBe(true);
  });

  it('no entry point contains a package whose licence is not on the permissive allow-list', () => {
    const offending: string[] = [];
    for (const [name, packages] of bundled) {
      for (const [pkg, licence] of packages) if (!licence || !licenceAllowed(licence)) offending.push(`${pkg} (${licence ?? 'no licence'}) in ${name}`);
    }
    expect(offending).toEqual([]);
  });
});
