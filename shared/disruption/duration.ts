/**
 * Go-style durations as Karpenter's API writes them ("30s", "10m", "720h", "1h30m", "Never").
 */
import { ValidationError } from '../api/errors.ts';

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600 };

/**
 * Seconds in a duration such as "1h30m"; `undefined` for "Never" (or an absent value).
 * @throws ValidationError when the text is not such a duration.
 */
export function parseDurationSeconds(text: string | undefined): number | undefined {
  if (text === undefined || text === 'Never') return undefined;
  if (!/^([0-9]+(s|m|h))+$/.test(text)) throw new ValidationError(`"${text}" is not a duration such as 30s, 10m or 720h`);
  let total = 0;
  for (const m of text.matchAll(/([0-9]+)(s|m|h)/g)) total += Number(m[1]) * UNIT_SECONDS[m[2]];
  return total;
}
