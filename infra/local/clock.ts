/**
 * One virtual clock for the whole embedded environment.
 *
 * Virtual time runs `speed` times faster than wall time: `now = start + realElapsed × speed`.
 * Every stand-in (EC2 boot delays, spot notices, the disruption/gc scheduler), every handler
 * (through the `Clock` port) and the local cluster read this clock, so a scenario that takes
 * five minutes in AWS takes thirty seconds at `--speed 10` and still sees consistent times.
 * Timers are plain `setTimeout`s scaled by `1 / speed`, so real async work (HTTP to dynalite,
 * the local API server) interleaves with them naturally.
 */
import type { Clock } from '../../shared/api/ports.ts';

/** Shortest real timer delay (ms): below this Node's timer granularity makes no difference. */
const MinRealDelayMs = 1;

/** A handle returned by {@link VirtualClock.setTimer} / {@link VirtualClock.setInterval}. */
export interface TimerHandle {
  cancel(): void;
}

export interface VirtualClockOptions {
  /** Virtual start instant (RFC 3339, epoch ms or Date). */
  start: string | number | Date;
  /** Virtual seconds per real second (≥ 0.01). 1 = real time. */
  speed: number;
  /** Wall-clock source in epoch ms; injectable for tests. Default `Date.now`. */
  realNowMs?: () => number;
  /** Hold virtual time at `start` until {@link VirtualClock.begin} (setup time does not count). */
  frozen?: boolean;
}

/** The virtual clock (implements the `Clock` port the handlers take). */
export class VirtualClock implements Clock {
  readonly speed: number;
  private readonly startMs: number;
  private realStartMs: number;
  private frozen: boolean;
  private readonly realNowMs: () => number;
  private readonly timers = new Set<NodeJS.Timeout>();
  private stopped = false;

  /** @throws RangeError when `speed` is not a positive number ≥ 0.01. */
  constructor(opts: VirtualClockOptions) {
    if (!Number.isFinite(opts.speed) || opts.speed < 0.01) throw new RangeError(`speed must be ≥ 0.01, got ${opts.speed}`);
    this.speed = opts.speed;
    this.startMs = new Date(opts.start).getTime();
    if (!Number.isFinite(this.startMs)) throw new RangeError(`invalid start time ${String(opts.start)}`);
    this.realNowMs = opts.realNowMs ?? Date.now;
    this.realStartMs = this.realNowMs();
    this.frozen = opts.frozen ?? false;
  }

  /** Starts virtual time (from `start`) if the clock was created frozen; no-op otherwise. */
  begin(): void {
    if (!this.frozen) return;
    this.frozen = false;
    this.realStartMs = this.realNowMs();
  }

  now(): Date {
    return new Date(this.nowMs());
  }

  /** Virtual epoch milliseconds. */
  nowMs(): number {
    if (this.frozen) return this.startMs;
    return Math.round(this.startMs + (this.realNowMs() - this.realStartMs) * this.speed);
  }

  /** RFC 3339 with milliseconds. */
  nowIso(): string {
    return this.now().toISOString();
  }

  /** Virtual epoch ms of the start instant. */
  startEpochMs(): number {
    return this.startMs;
  }

  /** Virtual seconds since the start (fractional). */
  elapsedSeconds(): number {
    return (this.nowMs() - this.startMs) / 1000;
  }

  /** Real milliseconds a virtual duration takes. */
  toRealMs(virtualMs: number): number {
    return Math.max(MinRealDelayMs, virtualMs / this.speed);
  }

  /** Runs `fn` after `virtualMs` of virtual time. Timers are dropped by {@link stop}. */
  setTimer(fn: () => void, virtualMs: number): TimerHandle {
    if (this.stopped) return { cancel: () => undefined };
    const t = setTimeout(() => {
      this.timers.delete(t);
      if (!this.stopped) fn();
    }, this.toRealMs(virtualMs));
    this.timers.add(t);
    return {
      cancel: () => {
        clearTimeout(t);
        this.timers.delete(t);
      },
    };
  }

  /** Runs `fn` at the virtual instant `epochMs` (immediately if it has passed). */
  setTimerAt(fn: () => void, epochMs: number): TimerHandle {
    return this.setTimer(fn, Math.max(0, epochMs - this.nowMs()));
  }

  /** Runs `fn` every `virtualMs`; the next run is scheduled when the previous one settles (no overlap). */
  setInterval(fn: () => unknown, virtualMs: number): TimerHandle {
    let handle: TimerHandle | undefined;
    let cancelled = false;
    const tick = async (): Promise<void> => {
      try {
        await fn();
      } finally {
        if (!cancelled) handle = this.setTimer(() => void tick(), virtualMs);
      }
    };
    handle = this.setTimer(() => void tick(), virtualMs);
    return {
      cancel: () => {
        cancelled = true;
        handle?.cancel();
      },
    };
  }

  /** Resolves after `virtualMs` of virtual time (never resolves after {@link stop}). */
  sleep(virtualMs: number): Promise<void> {
    return new Promise((resolve) => this.setTimer(resolve, virtualMs));
  }

  /** Resolves once virtual time reaches `epochMs`. */
  sleepUntil(epochMs: number): Promise<void> {
    return this.sleep(Math.max(0, epochMs - this.nowMs()));
  }

  /** Cancels every pending timer; later timers are ignored. */
  stop(): void {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }
}

/**
 * Parses a Go/Karpenter-style duration ("90s", "1m", "1h30m", "2m0s") or a number of seconds
 * into seconds.
 * @throws RangeError for anything else.
 */
export function parseDurationSeconds(d: string | number): number {
  if (typeof d === 'number') return d;
  const s = d.trim();
  if (/^[0-9]+(\.[0-9]+)?$/.test(s)) return Number(s);
  const re = /([0-9]+(?:\.[0-9]+)?)(ms|s|m|h)/g;
  let total = 0;
  let consumed = 0;
  for (const m of s.matchAll(re)) {
    const n = Number(m[1]);
    total += m[2] === 'h' ? n * 3600 : m[2] === 'm' ? n * 60 : m[2] === 's' ? n : n / 1000;
    consumed += m[0].length;
  }
  if (consumed !== s.length || consumed === 0) throw new RangeError(`"${d}" is not a duration (e.g. 90s, 1m, 1h30m)`);
  return total;
}
