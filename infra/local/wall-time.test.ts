import { describe, expect, it } from 'vitest';
import { CronExpressionParser } from 'cron-parser';
import { loadScenario } from './scenario.ts';
import { replayOnWallTime, shiftCron } from './wall-time.ts';

/** The next firing of `expr` (UTC) at or after `fromIso`. */
const next = (expr: string, fromIso: string) =>
  CronExpressionParser.parse(expr, { currentDate: new Date(fromIso), tz: 'UTC' })
    .next()
    .toDate()
    .toISOString();

describe('shiftCron', () => {
  it('moves the minute, the hour and, across midnight, the days of the week', () => {
    expect(shiftCron('0 9 * * mon-fri', 0)).toBe('0 9 * * 1,2,3,4,5');
    expect(shiftCron('0 9 * * mon-fri', 95)).toBe('35 10 * * 1,2,3,4,5');
    expect(shiftCron('0 9 * * mon-fri', -10 * 60)).toBe('0 23 * * 0,1,2,3,4');
    expect(shiftCron('30 22 * * sat,sun', 120)).toBe('30 0 * * 0,1');
    expect(shiftCron('0 0 * * *', -1)).toBe('59 23 * * *');
  });

  it('fires exactly `offset` later than the original, every time', () => {
    const offset = 281 * 24 * 60 + 5 * 60 + 38; // 281 days, 5 h 38 min
    let a = '2026-03-02T00:00:00.000Z';
    let b = new Date(Date.parse(a) + offset * 60_000).toISOString();
    for (let i = 0; i < 6; i++) {
      a = next('0 9 * * mon-fri', a);
      b = next(shiftCron('0 9 * * mon-fri', offset), b);
      expect(Date.parse(b) - Date.parse(a)).toBe(offset * 60_000);
    }
  });

  it('refuses what it cannot move', () => {
    expect(() => shiftCron('*/5 9 * * *', 1)).toThrow(/only "M H \* \* DOW"/);
    expect(() => shiftCron('0 9 1 * *', 1)).toThrow(/only "M H \* \* DOW"/);
    expect(() => shiftCron('@daily', 1)).toThrow(/only/);
    expect(() => shiftCron('0 9 * * L', 1)).toThrow(/day of week "L"/);
  });
});

describe('replayOnWallTime', () => {
  it('web-stateful: the budget window still ends 8 minutes after the start, and its expectations move with it', () => {
    const s = loadScenario('web-stateful');
    const wall = Date.parse('2026-12-06T22:30:20Z'); // a Sunday
    const r = replayOnWallTime(s, wall);
    expect(r.start).toBe('2026-12-06T22:30:00.000Z');
    const pool = r.cluster.objects.find((o) => o.kind === 'NodePool' && o.metadata.name === 'web') as any;
    const window = pool.spec.disruption.budgets.find((b: { schedule?: string }) => b.schedule);
    expect(window).toEqual({ nodes: '0', schedule: '38 14 * * 0,1,2,3,4', duration: '8h' });
    // The window opened at 14:38 on that Sunday and ends 8 h later, at start + 8 min.
    expect(next(window.schedule, '2026-12-06T00:00:00Z')).toBe('2026-12-06T14:38:00.000Z');
    expect(r.expect?.marksBefore).toEqual({ 'scaled-down': '2026-12-06T22:37:00.000Z' });
    expect(r.expect?.terminations?.[0].notBefore).toBe('2026-12-06T22:38:00.000Z');
    // Nothing else changes.
    expect(r.timeline).toEqual(s.timeline);
    expect(r.cluster.objects.filter((o) => o.kind !== 'NodePool')).toEqual(s.cluster.objects.filter((o) => o.kind !== 'NodePool'));
  });
});
