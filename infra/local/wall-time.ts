/**
 * A scenario replayed on wall time (the real control-plane tier, docs/real-tier.md): its instants
 * moved from its own `start` to the wall clock's, so one whose point is an absolute UTC instant (a
 * budget window at a fixed hour) keeps it. Every absolute instant the scenario names moves by the
 * same whole number of minutes (cron's resolution): `start`, each NodePool budget `schedule` (the
 * minute, the hour and, across midnight, the day of the week), `expect.marksBefore` and
 * `expect.terminations[].notBefore`. Durations and the timeline's relative offsets do not change, so
 * it is the same scenario, translated in time. The shift is rounded to the minute, and the wall
 * clock starts the timeline once the control plane is up: the timeline begins up to a few tens of
 * seconds later relative to the moved window than it did relative to the scenario's own one.
 */
import { ScenarioError, type Scenario } from './scenario.ts';

/** An object as a scenario lists it. */
type ScenarioObject = Scenario['cluster']['objects'][number];

const MinuteMs = 60_000;
const DayMinutes = 24 * 60;
const DayNames = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];

/** A day-of-week field (`*`, `1-5`, `mon-fri`, `0,6`, `sat,sun`) as the set of days 0–6 (Sunday 0), or undefined for `*`. */
function daysOf(field: string, expr: string): Set<number> | undefined {
  if (field === '*') return undefined;
  const day = (s: string): number => {
    const i = DayNames.indexOf(s.toLowerCase());
    const n = i >= 0 ? i : /^\d$/.test(s) ? Number(s) % 7 : NaN;
    if (Number.isNaN(n)) throw new ScenarioError(`budget schedule "${expr}": day of week "${s}" cannot be moved to wall time`);
    return n;
  };
  const out = new Set<number>();
  for (const part of field.split(',')) {
    const [a, b] = part.split('-');
    const to = day(b ?? a);
    for (let d = day(a), i = 0; i < 7; d = (d + 1) % 7, i++) {
      out.add(d);
      if (d === to) break;
    }
  }
  return out;
}

/**
 * `expr` (a 5-field cron in UTC, as a Karpenter budget's `schedule`) moved by `offsetMinutes`.
 * Only a fixed minute and hour, any day of the month and month, and `*` or a list/range of days of
 * the week can be moved; anything else throws ScenarioError (it cannot be replayed on wall time).
 */
export function shiftCron(expr: string, offsetMinutes: number): string {
  const fields = expr.trim().split(/\s+/);
  const [m, h, dom, mon, dow] = fields;
  if (fields.length !== 5 || !/^\d+$/.test(m) || !/^\d+$/.test(h) || dom !== '*' || mon !== '*')
    throw new ScenarioError(`budget schedule "${expr}": only "M H * * DOW" can be moved to wall time`);
  const at = Number(h) * 60 + Number(m) + offsetMinutes;
  const minuteOfDay = ((at % DayMinutes) + DayMinutes) % DayMinutes;
  const dayShift = Math.floor(at / DayMinutes);
  const days = daysOf(dow, expr);
  const newDow = days
    ? [...days]
        .map((d) => (((d + dayShift) % 7) + 7) % 7)
        .sort((a, b) => a - b)
        .join(',')
    : '*';
  return `${minuteOfDay % 60} ${Math.floor(minuteOfDay / 60)} * * ${newDow}`;
}

function shiftIso(iso: string, offsetMs: number): string {
  return new Date(Date.parse(iso) + offsetMs).toISOString();
}

function shiftNodePool(o: ScenarioObject, offsetMinutes: number): ScenarioObject {
  if (o.kind !== 'NodePool') return o;
  const spec = (o as { spec?: { disruption?: { budgets?: { schedule?: string }[] } } }).spec;
  const budgets = spec?.disruption?.budgets;
  if (!budgets?.some((b) => b.schedule !== undefined)) return o;
  const moved = budgets.map((b) => (b.schedule === undefined ? b : { ...b, schedule: shiftCron(b.schedule, offsetMinutes) }));
  return { ...o, spec: { ...spec, disruption: { ...spec!.disruption, budgets: moved } } } as ScenarioObject;
}

/**
 * `scenario` with its absolute instants moved so that its `start` is `wallStartMs` rounded to the
 * minute (module doc). Pure. @throws ScenarioError for a budget schedule that cannot be moved.
 */
export function replayOnWallTime(scenario: Scenario, wallStartMs: number): Scenario {
  const offsetMinutes = Math.round((wallStartMs - Date.parse(scenario.start)) / MinuteMs);
  const offsetMs = offsetMinutes * MinuteMs;
  const pools = (objects: ScenarioObject[] | undefined) => objects?.map((o) => shiftNodePool(o, offsetMinutes));
  const e = scenario.expect;
  return {
    ...scenario,
    start: shiftIso(scenario.start, offsetMs),
    cluster: { ...scenario.cluster, objects: pools(scenario.cluster.objects) ?? [] },
    timeline: scenario.timeline.map((s) => (s.apply ? { ...s, apply: pools(s.apply) } : s)),
    ...(e
      ? {
          expect: {
            ...e,
            ...(e.marksBefore ? { marksBefore: Object.fromEntries(Object.entries(e.marksBefore).map(([k, v]) => [k, shiftIso(v, offsetMs)])) } : {}),
            ...(e.terminations ? { terminations: e.terminations.map((t) => (t.notBefore ? { ...t, notBefore: shiftIso(t.notBefore, offsetMs) } : t)) } : {}),
          },
        }
      : {}),
  };
}
