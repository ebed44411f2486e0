import { describe, expect, it } from 'vitest';
import { ConsoleWidth, demoConsole, humanLogLine, truncate, wrap } from './console.ts';
import type { LogRecord } from './log.ts';

const start = Date.parse('2026-03-06T15:56:30Z');
const width = (s: string) => [...s].length;

describe('humanLogLine', () => {
  it('prints a Karpenter record as a short human line: clock, controller, message, fields, node names cut', () => {
    // Prepare
    const r: LogRecord = {
      level: 'INFO',
      timeMs: start + 70_000,
      controller: 'nodeclaim.lifecycle',
      message: 'registered nodeclaim',
      fields: { NodeClaim: { name: 'default-mvljk' }, Node: { name: 'ip-192-168-32-13.ap-northeast-2.compute.internal' } },
    };
    // Act
    const line = humanLogLine(r, start);
    // Assess
    expect(line).toBe('  t+01:10 nodeclaim.lifecycle registered nodeclaim  NodeClaim=default-mvljk Node=ip-192-168-32-13');
    expect(line.startsWith('{')).toBe(false);
  });

  it('keeps a long record to two lines of at most 100 columns, the second cut with …', () => {
    const r: LogRecord = {
      level: 'WARN',
      timeMs: start,
      controller: 'provisioner',
      message: 'found provisionable pod(s)',
      fields: { Pods: Array.from({ length: 40 }, (_, i) => `default/inflate-5c684b8d57-${i}`).join(', ') },
    };
    const lines = humanLogLine(r, start).split('\n');
    expect(lines).toHaveLength(2);
    expect(lines.every((l) => width(l) <= ConsoleWidth)).toBe(true);
    expect(lines[0]).toContain('WARN found provisionable pod(s)');
    expect(lines[1].endsWith('…')).toBe(true);
  });
});

describe('wrap and truncate', () => {
  it('wraps at spaces with a hanging indent and never exceeds the width', () => {
    const text = `  PASS  final.nodes: 2 node(s) (want 2): ${'ip-192-168-33-227.ap-northeast-2.compute.internal, '.repeat(4)}`;
    const lines = wrap(text, 100);
    expect(lines.length).toBeGreaterThan(1);
    expect(lines.every((l) => width(l) <= 100)).toBe(true);
    expect(lines[1].startsWith('      ip-')).toBe(true);
    expect(lines.join(' ').replace(/\s+/g, ' ').trim()).toBe(text.replace(/\s+/g, ' ').trim());
    expect(wrap('x'.repeat(250), 100).map(width)).toEqual([100, 100, 58]); // 100 + 96 + 54 x's, 4 columns of indent
    expect(truncate('abcdef', 4)).toBe('abc…');
  });
});

describe('demoConsole', () => {
  it('off a terminal prints the status only when it changes (the clock alone does not count)', () => {
    const out: string[] = [];
    const c = demoConsole((s) => out.push(s));
    c.status('nodes 2', 't+00:01 │ ');
    c.status('nodes 2', 't+00:02 │ ');
    c.line('── t+00:03 scaled');
    c.status('nodes 3', 't+00:04 │ ');
    expect(out).toEqual(['t+00:01 │ nodes 2\n', '── t+00:03 scaled\n', 't+00:04 │ nodes 3\n']);
  });

  it('a terminal that reports 0 or few columns gets the default width (no endless wrapping)', () => {
    const out: string[] = [];
    demoConsole((s) => out.push(s), { tty: true, width: 0 }).line('x'.repeat(150));
    expect(out).toEqual([`${'x'.repeat(100)}\n`, `    ${'x'.repeat(50)}\n`]);
    expect(wrap('a b c', 0)).toEqual(['a b c']);
  });

  it('on a terminal keeps the status on the last line, redrawn under each new line', () => {
    const out: string[] = [];
    const c = demoConsole((s) => out.push(s), { tty: true });
    c.status('nodes 2', 't+00:01 │ ');
    c.line('hello');
    c.end();
    expect(out.join('')).toBe('t+00:01 │ nodes 2\r\x1b[2Khello\nt+00:01 │ nodes 2\n');
  });
});
