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
import { parseGoDurationMs } from '../../shared/api/duration.ts';

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
  /**
   * Discrete-event mode (the chaos harness): virtual time does not follow wall time at all; it
   * stands still while anything is working and jumps to the next timer once everything has been
   * quiet for `quietRealMs` real milliseconds. Runs are then as fast as the work they do, and a
   * loaded machine cannot make a handler look slow in virtual time. `speed` is ignored.
   */
  stepped?: { quietRealMs?: number };
  /**
   * Wall time (the real control-plane tier, whose API server, controllers and kwok stamp wall
   * time): virtual time is the wall clock, also while frozen; `begin` takes the start instant from
   * the wall clock. `start` and `speed` are ignored (speed 1).
   */
  wall?: boolean;
}

/** Real ms of quiet (no tracked work, no timer set or fired) before a stepped clock advances. */
export const DefaultQuietRealMs = 12;

interface SteppedTimer {
  atMs: number;
  seq: number;
  fn: () => void;
}

/** The virtual clock (implements the `Clock` port the handlers take). */
export class VirtualClock implements Clock {
  readonly speed: number;
  private startMs: number;
  private readonly wall: boolean;
  private realStartMs: number;
  private frozen: boolean;
  private readonly realNowMs: () => number;
  private readonly timers = new Set<NodeJS.Timeout>();
  private stopped = false;
  /** Stepped mode: current virtual instant, pending timers (sorted by atMs, seq), tracked work. */
  private readonly stepped?: { quietRealMs: number };
  private virtualNowMs = 0;
  private queue: SteppedTimer[] = [];
  private seq = 0;
  private busy = 0;
  private activity = 0;
  private readonly wakeSources: (() => number | undefined)[] = [];
  private readonly advanceHooks: (() => void)[] = [];
  /** Stepped mode: waits in {@link pause} not over yet. */
  private pausing = 0;
  private driving = false;
  /** Stepped mode diagnostics: jumps taken, quiet periods waited, and real ms spent waiting for quiet. */
  readonly stats = { jumps: 0, quietWaits: 0 };

  /** @throws RangeError when `speed` is not a positive number ≥ 0.01. */
  constructor(opts: VirtualClockOptions) {
    if (!Number.isFinite(opts.speed) || opts.speed < 0.01) throw new RangeError(`speed must be ≥ 0.01, got ${opts.speed}`);
    this.wall = opts.wall === true && !opts.stepped;
    this.speed = this.wall ? 1 : opts.speed;
    this.realNowMs = opts.realNowMs ?? Date.now;
    this.realStartMs = this.realNowMs();
    this.startMs = this.wall ? this.realStartMs : new Date(opts.start).getTime();
    if (!Number.isFinite(this.startMs)) throw new RangeError(`invalid start time ${String(opts.start)}`);
    this.frozen = opts.frozen ?? false;
    if (opts.stepped) {
      this.stepped = { quietRealMs: opts.stepped.quietRealMs ?? DefaultQuietRealMs };
      this.virtualNowMs = this.startMs;
    }
  }

  /** True in discrete-event mode. */
  get isStepped(): boolean {
    return this.stepped !== undefined;
  }

  /**
   * Runs `fn` as tracked work: a stepped clock does not advance until it settles. Use it for
   * anything that does real I/O without a clock timer in between (a handler invocation, a Task).
   * A no-op wrapper on a wall-scaled clock.
   */
  async work<T>(fn: () => Promise<T>): Promise<T> {
    if (!this.stepped) return fn();
    this.busy += 1;
    this.activity += 1;
    try {
      return await fn();
    } finally {
      this.busy -= 1;
      this.activity += 1;
    }
  }

  /** Tells a stepped clock something happened (postpones the next jump by one quiet period). */
  touch(): void {
    this.activity += 1;
  }

  /** Stepped mode: another source of due instants (epoch ms), e.g. the local cluster's next kubelet change. */
  addWakeSource(next: () => number | undefined): void {
    this.wakeSources.push(next);
  }

  /** Stepped mode: called after every jump (e.g. to reconcile the local cluster at the new instant). */
  onAdvance(fn: () => void): void {
    this.advanceHooks.push(fn);
  }

  /** Starts virtual time (from `start`) if the clock was created frozen; no-op otherwise. */
  begin(): void {
    if (!this.frozen) return;
    this.frozen = false;
    this.realStartMs = this.realNowMs();
    if (this.wall) this.startMs = this.realStartMs;
    if (this.stepped && !this.driving) {
      this.driving = true;
      void this.drive();
    }
  }

  /** The stepped clock's loop: wait for quiet, jump to the earliest due instant, fire what is due. */
  private async drive(): Promise<void> {
    while (!this.stopped) {
      await this.settle();
      if (this.stopped) return;
      let next = this.queue[0]?.atMs;
      for (const w of this.wakeSources) {
        const at = w();
        if (at !== undefined && Number.isFinite(at) && (next === undefined || at < next)) next = at;
      }
      if (next === undefined) {
        await realPause(this.stepped!.quietRealMs);
        continue;
      }
      if (next > this.virtualNowMs) this.virtualNowMs = next;
      this.stats.jumps += 1;
      const due: SteppedTimer[] = [];
      while (this.queue.length && this.queue[0].atMs <= this.virtualNowMs) due.push(this.queue.shift()!);
      for (const t of due) {
        if (this.stopped) return;
        this.activity += 1;
        t.fn();
      }
      for (const h of this.advanceHooks) h();
    }
  }

  /** Resolves once no tracked work runs (or some waits in {@link pause}) and nothing happened for one quiet period. */
  private async settle(): Promise<void> {
    for (;;) {
      const before = this.activity;
      await new Promise((r) => setImmediate(r));
      await realPause(this.stepped!.quietRealMs);
      this.stats.quietWaits += 1;
      if (this.stopped || ((this.busy === 0 || this.pausing > 0) && this.activity === before)) return;
    }
  }

  now(): Date {
    return new Date(this.nowMs());
  }

  /** Virtual epoch milliseconds. */
  nowMs(): number {
    if (this.stepped) return this.virtualNowMs;
    if (this.wall) return this.realNowMs();
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
    if (this.stepped) return this.setSteppedTimer(fn, virtualMs);
    // Node may fire a setTimeout up to a millisecond early, which is `speed` ms of virtual time:
    // a timer set on a running clock re-arms until its virtual instant has come, so a 120 s spot
    // notice never ends at 119.9 s. (Timers set while frozen keep their real delay.)
    const dueMs = this.frozen ? undefined : this.nowMs() + Math.max(0, virtualMs);
    let t: NodeJS.Timeout;
    const arm = (realMs: number): void => {
      t = setTimeout(() => {
        this.timers.delete(t);
        if (this.stopped) return;
        const left = dueMs === undefined || this.frozen ? 0 : dueMs - this.nowMs();
        if (left > 0) arm(this.toRealMs(left));
        else fn();
      }, realMs);
      this.timers.add(t);
    };
    arm(this.toRealMs(virtualMs));
    return {
      cancel: () => {
        clearTimeout(t);
        this.timers.delete(t);
      },
    };
  }

  private setSteppedTimer(fn: () => void, virtualMs: number): TimerHandle {
    const t: SteppedTimer = { atMs: this.virtualNowMs + Math.max(0, virtualMs), seq: this.seq++, fn };
    // Insert after every timer due at or before it (FIFO among equal instants).
    let lo = 0;
    let hi = this.queue.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.queue[mid].atMs <= t.atMs) lo = mid + 1;
      else hi = mid;
    }
    this.queue.splice(lo, 0, t);
    this.activity += 1;
    return {
      cancel: () => {
        const i = this.queue.indexOf(t);
        if (i >= 0) this.queue.splice(i, 1);
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

  /**
   * Waits `virtualMs` of virtual time from inside tracked work (an SDK retry's backoff). A plain
   * {@link sleep} there never ends on a stepped clock: the work holds it still. While a pause is
   * pending, a stepped clock moves on once everything has been quiet for a quiet period, even with
   * work running (that work waits on the pause, directly or through another call), so timers due
   * meanwhile fire and the pause ends at its instant.
   */
  async pause(virtualMs: number): Promise<void> {
    if (!this.stepped) return this.sleep(virtualMs);
    this.pausing += 1;
    this.activity += 1;
    try {
      await this.sleep(virtualMs);
    } finally {
      this.pausing -= 1;
      this.activity += 1;
    }
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
    this.queue = [];
  }
}

function realPause(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/**
 * A scenario file's duration in seconds: a number of seconds, or a Go duration ("90s", "1m",
 * "1h30m", "2m0s", "500ms"; shared/api/duration.ts parses it).
 * @throws RangeError for anything else.
 */
export function parseDurationSeconds(d: string | number): number {
  if (typeof d === 'number') return d;
  const s = d.trim();
  if (/^[0-9]+(\.[0-9]+)?$/.test(s)) return Number(s);
  const ms = parseGoDurationMs(s);
  if (ms === undefined || ms < 0) throw new RangeError(`"${d}" is not a duration (e.g. 90s, 1m, 1h30m)`);
  return ms / 1000;
}
