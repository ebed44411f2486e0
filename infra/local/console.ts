/**
 * The demo's console, for people: every line fits {@link ConsoleWidth} columns, log records are
 * one short human line each (`t+00:40 provisioner  launched nodeclaim  NodeClaim=default-x7k2p …`;
 * the full JSON record is in `.nodefleet/logs.jsonl`), and the live status is one line — rewritten
 * in place on a terminal, printed when it changes otherwise.
 */
import type { LogRecord } from './log.ts';

/** Widest console line the demo prints (columns). */
export const ConsoleWidth = 100;
/** Narrowest width used: a terminal reporting fewer columns (a pseudo-terminal may say 0) gets this. */
const MinWidth = 40;

/** `t+MM:SS` of a virtual epoch ms relative to the scenario's start. */
export function clockText(startMs: number, ms: number): string {
  const s = Math.max(0, Math.round((ms - startMs) / 1000));
  return `t+${String(Math.floor(s / 60)).padStart(2, '0')}:${String(s % 60).padStart(2, '0')}`;
}

/** Cuts `line` to `width` columns, ending with `…` when cut. */
export function truncate(line: string, width = ConsoleWidth): string {
  const chars = [...line];
  return chars.length <= width ? line : `${chars.slice(0, width - 1).join('')}…`;
}

/**
 * Wraps `line` at spaces into lines of at most `width` columns; continuation lines are indented
 * 4 more than the original. A word longer than the room left is cut across lines.
 */
export function wrap(line: string, width = ConsoleWidth): string[] {
  width = Math.max(MinWidth, width);
  if ([...line].length <= width) return [line];
  const lead = /^ */.exec(line)?.[0].length ?? 0;
  const indent = ' '.repeat(Math.min(Math.floor(width / 2), lead + 4));
  const out: string[] = [];
  let rest = line;
  let prefix = '';
  for (;;) {
    const room = width - prefix.length;
    const chars = [...rest];
    if (chars.length <= room) {
      out.push(prefix + rest);
      break;
    }
    let cut = chars
      .slice(0, room + 1)
      .join('')
      .lastIndexOf(' ');
    if (cut <= (prefix ? 0 : lead)) cut = chars.slice(0, room).join('').length;
    out.push((prefix + rest.slice(0, cut)).trimEnd());
    rest = rest.slice(cut).trimStart();
    prefix = indent;
    if (!rest) break;
  }
  return out;
}

/** A field value as a short text: `{name: x}` → x, lists joined with commas, objects as k=v. */
function fieldText(v: unknown): string {
  if (v === null || v === undefined) return '-';
  if (v instanceof Error) return `${v.name}: ${v.message}`;
  if (Array.isArray(v)) return v.map(fieldText).join(',');
  if (typeof v === 'object') {
    const o = v as Record<string, unknown>;
    const keys = Object.keys(o);
    if (keys.length === 1 && keys[0] === 'name') return fieldText(o.name);
    if (keys.length === 2 && 'name' in o && 'namespace' in o) return `${String(o.namespace)}/${String(o.name)}`;
    return `{${keys.map((k) => `${k}=${fieldText(o[k])}`).join(' ')}}`;
  }
  const s = String(v);
  return /\s/.test(s) ? JSON.stringify(s) : s;
}

/** Longest controller name column (`nodeclaim.lifecycle`). */
const ControllerWidth = 19;

/** EC2 private DNS names (`ip-10-0-1-2.ap-northeast-2.compute.internal`, `….ec2.internal`) cut to the host part. */
function shortNames(text: string): string {
  return text.replace(/\b(ip-\d+-\d+-\d+-\d+)\.(?:[a-z0-9-]+\.compute|ec2)\.internal\b/g, '$1');
}

/** Lines a log record may take on the console (the full record is in logs.jsonl). */
const LogLineMaxLines = 2;

/**
 * A log record for people: `  t+00:40 provisioner         launched nodeclaim  NodeClaim=… k=v …`,
 * node DNS names cut to their host part, on at most two lines of `width` columns (the second cut
 * with `…`).
 */
export function humanLogLine(r: LogRecord, startMs: number, width = ConsoleWidth): string {
  const level = r.level === 'INFO' ? '' : `${r.level} `;
  const fields = Object.entries(r.fields)
    .map(([k, v]) => `${k}=${fieldText(v)}`)
    .join(' ');
  const text = shortNames(`  ${clockText(startMs, r.timeMs)} ${r.controller.padEnd(ControllerWidth)} ${level}${r.message}${fields ? `  ${fields}` : ''}`);
  const lines = wrap(text, width);
  if (lines.length <= LogLineMaxLines) return lines.join('\n');
  const kept = lines.slice(0, LogLineMaxLines);
  kept[LogLineMaxLines - 1] = truncate(`${kept[LogLineMaxLines - 1]} ${lines[LogLineMaxLines].trimStart()}`, width);
  return kept.join('\n');
}

/** Where the demo writes: whole lines, and the one-line live status. */
export interface DemoConsole {
  /** Prints `text` (wrapped to the width). */
  line(text: string): void;
  /**
   * Shows the live status `prefix + text` (truncated to the width). Off a terminal it is printed
   * only when `text` changed (a prefix such as the clock alone does not reprint it).
   */
  status(text: string, prefix?: string): void;
  /** Ends the live status (a terminal keeps its last text as a normal line). */
  end(): void;
}

/**
 * A console over `write`. With `tty`, the status stays on the last line and is redrawn in place
 * under each new line; without, a status is printed as a line when it differs from the last one.
 */
export function demoConsole(write: (s: string) => void, opts: { tty?: boolean; width?: number } = {}): DemoConsole {
  const width = opts.width && opts.width >= MinWidth ? Math.min(ConsoleWidth, opts.width) : ConsoleWidth;
  let status = '';
  let shown = false;
  const clear = () => {
    if (shown) write('\r\x1b[2K');
    shown = false;
  };
  return {
    line(text) {
      if (opts.tty) clear();
      for (const l of text.split('\n').flatMap((x) => wrap(x, width))) write(`${l}\n`);
      if (opts.tty && status) {
        write(status);
        shown = true;
      }
    },
    status(text, prefix = '') {
      const t = truncate(prefix + text, opts.tty ? width - 1 : width);
      if (opts.tty) {
        if (t === status) return;
        status = t;
        clear();
        write(t);
        shown = true;
      } else if (text !== status) {
        status = text;
        write(`${t}\n`);
      }
    },
    end() {
      if (opts.tty && shown) {
        write('\n');
        shown = false;
      }
      status = '';
    },
  };
}
