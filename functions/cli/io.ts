/**
 * What every command shares: reading an input file, the error a command raises for bad input
 * (one line, no stack trace, an exit code) and the kubectl-style `-o, --output` option.
 */
import { readFileSync } from 'node:fs';
import { stringify as stringifyYaml } from 'yaml';
import { NotFoundError, ValidationError } from '../../shared/api/errors.ts';
import { QuantityError } from '../../shared/api/quantity.ts';
import { catalogRegions } from '../../shared/catalog/index.ts';

/**
 * Bad input or a failed precondition: main.ts prints `nodefleet <command>: <message>` (one line
 * per line of `message`) on stderr and exits with `exitCode` (1 invalid input, 2 usage).
 */
export class CliError extends Error {
  override name = 'CliError';
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

/** Errors whose message already names the input and the reason: shown as they are. */
export function isInputError(e: unknown): e is Error {
  return e instanceof CliError || e instanceof ValidationError || e instanceof NotFoundError || e instanceof QuantityError;
}

/**
 * Reads a file (`-` is standard input).
 * @throws CliError `FILE: cannot read: no such file | is a folder, not a file | permission denied`.
 */
export function readText(file: string): { file: string; text: string } {
  try {
    return { file, text: readFileSync(file === '-' ? 0 : file, 'utf8') };
  } catch (e) {
    throw new CliError(`${file}: cannot read: ${readErrorReason(e)}`);
  }
}

/** A short reason for a failed read ("no such file", …). */
export function readErrorReason(e: unknown): string {
  const code = (e as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EISDIR') return 'is a folder, not a file';
  if (code === 'EACCES') return 'permission denied';
  return (e as Error).message;
}

/** Output formats, as kubectl names them; `table` is the default (no -o). */
export type OutputFormat = 'table' | 'wide' | 'json' | 'yaml';

/**
 * Checks an `-o/--output` value against the formats a command offers.
 * @throws CliError (exit 2) naming the allowed formats.
 */
export function outputFormat(value: string, allowed: readonly OutputFormat[], defaultName = 'a table'): OutputFormat {
  if ((allowed as readonly string[]).includes(value)) return value as OutputFormat;
  throw new CliError(`--output: unknown format "${value}"; allowed formats: ${allowed.filter((f) => f !== 'table').join(', ')} (default: ${defaultName})`, 2);
}

/**
 * Checks a `--region` against the shipped catalog.
 * @throws CliError naming the known regions.
 */
export function checkRegion(region: string): string {
  const known = catalogRegions();
  if (known.includes(region)) return region;
  const looksLikeRegion = /^[a-z]{2}(-gov)?-[a-z]+-\d$/.test(region);
  throw new CliError(`--region "${region}": ${looksLikeRegion ? 'no such region in the shipped catalog' : 'not an AWS region name'}; known regions: ${known.join(', ')}`);
}

/**
 * The text and exit code for a failure of `command`: input errors as `nodefleet <command>: <line>`
 * (every problem of a ValidationError on its own line), exit 1 (or the CliError's code); anything
 * else is a nodefleet bug: one line and exit 70, the stack trace only with NODEFLEET_DEBUG set.
 */
export function reportFailure(err: unknown, command: string, env: Record<string, string | undefined>): { text: string; exitCode: number } {
  const prefix = ['nodefleet', command].filter(Boolean).join(' ');
  if (isInputError(err)) {
    const problems = err instanceof ValidationError && err.problems.length > 1 ? err.problems : err.message.split('\n');
    return { text: problems.map((l) => `${prefix}: ${l}\n`).join(''), exitCode: err instanceof CliError ? err.exitCode : 1 };
  }
  const e = err instanceof Error ? err : new Error(String(err));
  const hint = env.NODEFLEET_DEBUG ? `\n${e.stack ?? ''}` : ' (a nodefleet bug: please report it; NODEFLEET_DEBUG=1 prints the stack trace)';
  return { text: `${prefix}: internal error: ${e.name}: ${e.message.split('\n')[0]}${hint}\n`, exitCode: 70 };
}

/** `kubectl get` of several objects: a v1 List. */
export function kubeList(items: readonly unknown[]): { apiVersion: 'v1'; kind: 'List'; metadata: { resourceVersion: string }; items: unknown[] } {
  return { apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: '' }, items: [...items] };
}

/** JSON (4-space indent, as kubectl) or YAML text of `value`, ending with a newline. */
export function encode(value: unknown, format: 'json' | 'yaml'): string {
  return format === 'json' ? `${JSON.stringify(value, null, 4)}\n` : stringifyYaml(value, { lineWidth: 0 });
}

/** A fixed-width table: columns separated by 3 spaces, as kubectl prints; no trailing spaces. */
export function formatTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]))).join('   ').trimEnd();
  return [line(header), ...rows.map(line)].join('\n') + '\n';
}
