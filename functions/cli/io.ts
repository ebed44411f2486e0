/**
 * What every command shares: reading an input file, the error a command raises for bad input
 * (one line, no stack trace, an exit code) and the kubectl-style `-o, --output` option.
 */
import { closeSync, openSync, readSync } from 'node:fs';
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
 * Largest input file read (bytes): far above any real NodePool file or `kubectl get pods -A -o
 * json` of a large cluster, and a bound on what `/dev/zero` or a runaway pipe would feed us.
 */
export const MaxInputBytes = 256 * 1024 * 1024;

/** The error a bounded read raises with its reason (caught by {@link readText} and validate). */
class InputReadError extends Error {}

/**
 * The bytes of `file` (`-` is standard input) as UTF-8 text, read in chunks so that an endless
 * source stops at {@link MaxInputBytes}.
 * @throws Error (an errno error or InputReadError) whose {@link readErrorReason} is the reason.
 */
export function readInputText(file: string): string {
  const fd = file === '-' ? 0 : openSync(file, 'r');
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for (;;) {
      const chunk = Buffer.allocUnsafe(1024 * 1024);
      let n: number;
      try {
        n = readSync(fd, chunk, 0, chunk.length, null);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'EAGAIN') continue; // non-blocking stdin: wait for data
        if ((e as NodeJS.ErrnoException).code === 'EOF') break; // stdin closed (Windows)
        throw e;
      }
      if (n === 0) break;
      total += n;
      if (total > MaxInputBytes) throw new InputReadError(`larger than ${MaxInputBytes / 1024 / 1024} MiB (not a Kubernetes YAML or JSON file)`);
      chunks.push(chunk.subarray(0, n));
    }
  } finally {
    if (fd !== 0) closeSync(fd);
  }
  const bytes = Buffer.concat(chunks);
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    const at = firstInvalidUtf8(bytes);
    throw new InputReadError(`not UTF-8 text (byte 0x${bytes[at].toString(16).padStart(2, '0')} at offset ${at}; YAML and JSON are UTF-8)`);
  }
}

/** Offset of the first byte that is not valid UTF-8 (the lenient decoding's first U+FFFD not in the input). */
function firstInvalidUtf8(bytes: Buffer): number {
  const text = bytes.toString('utf8');
  for (let i = text.indexOf('\uFFFD'); i >= 0; i = text.indexOf('\uFFFD', i + 1)) {
    const at = Buffer.byteLength(text.slice(0, i));
    if (!(bytes[at] === 0xef && bytes[at + 1] === 0xbf && bytes[at + 2] === 0xbd)) return at;
  }
  return 0;
}

/**
 * Reads a file (`-` is standard input), see {@link readInputText}.
 * @throws CliError `FILE: cannot read: no such file | is a folder, not a file | permission denied | …`.
 */
export function readText(file: string): { file: string; text: string } {
  try {
    return { file, text: readInputText(file) };
  } catch (e) {
    throw new CliError(`${file}: cannot read: ${readErrorReason(e)}`);
  }
}

/** A short reason for a failed read ("no such file", …). */
export function readErrorReason(e: unknown): string {
  if (e instanceof InputReadError) return e.message;
  const code = (e as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EISDIR') return 'is a folder, not a file';
  if (code === 'EACCES') return 'permission denied';
  if (code === 'ELOOP') return 'symbolic link loop';
  if (code === 'ENOTDIR') return 'a path component is not a folder';
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
  throw new CliError(
    `--region "${region}": ${looksLikeRegion ? 'no such region in the shipped catalog' : 'not an AWS region name'}; known regions: ${known.join(', ')}`,
  );
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
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i])))
      .join('   ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n') + '\n';
}
