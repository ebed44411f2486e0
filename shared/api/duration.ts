/**
 * Go-style durations as Karpenter's API writes them ("30s", "10m", "720h", "1h30m", "Never").
 */
import { ValidationError } from './errors.ts';

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600 };

/** The pattern of Karpenter's API duration fields (its CRDs): "30s", "10m", "720h", "1h30m". */
export const DurationPattern = /^([0-9]+(s|m|h))+$/;
/** {@link DurationPattern} or "Never" (expireAfter, consolidateAfter, terminationGracePeriod). */
export const DurationOrNeverPattern = /^(([0-9]+(s|m|h))+|Never)$/;

/**
 * Seconds in a duration such as "1h30m"; `undefined` for "Never" (or an absent value).
 * @throws ValidationError when the text is not such a duration.
 */
export function parseDurationSeconds(text: string | undefined): number | undefined {
  if (text === undefined || text === 'Never') return undefined;
  if (!DurationPattern.test(text)) throw new ValidationError(`"${text}" is not a duration such as 30s, 10m or 720h`);
  let total = 0;
  for (const m of text.matchAll(/([0-9]+)(s|m|h)/g)) total += Number(m[1]) * UNIT_SECONDS[m[2]];
  return total;
}

const GO_UNIT_MS: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, μs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/**
 * Milliseconds in a duration of Go's `time.ParseDuration` grammar ("300ms", "1.5h", "2h45m", "-5m",
 * "0"); undefined when the text is not one. Used where Karpenter parses with Go, not with the API's
 * `(s|m|h)` pattern (e.g. the pod annotation karpenter.sh/do-not-disrupt).
 */
export function parseGoDurationMs(text: string): number | undefined {
  const m = /^([-+]?)(.*)$/.exec(text)!;
  const body = m[2];
  if (body === '0') return 0;
  if (!/^(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+$/.test(body)) return undefined;
  let total = 0;
  for (const p of body.matchAll(/([0-9]*\.?[0-9]*)(ns|us|µs|μs|ms|s|m|h)/g)) total += Number(p[1]) * GO_UNIT_MS[p[2]];
  return m[1] === '-' ? -total : total;
}

/**
 * A duration as Go's `time.Duration.String` writes it ("1m0s", "1h30m0s", "45s", "1.5s", "500ms",
 * "0s"): how Karpenter passes an API duration on where the node reads text (Bottlerocket settings).
 */
export function formatGoDuration(ms: number): string {
  if (ms === 0) return '0s';
  const sign = ms < 0 ? '-' : '';
  const a = Math.abs(ms);
  if (a < 1000) return `${sign}${Number(a.toFixed(6))}ms`;
  const h = Math.floor(a / 3_600_000);
  const m = Math.floor((a % 3_600_000) / 60_000);
  const s = Number(((a % 60_000) / 1000).toFixed(9));
  return `${sign}${h ? `${h}h` : ''}${h || m ? `${m}m` : ''}${s}s`;
}
