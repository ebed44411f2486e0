import type { Clock } from '../../shared/api/ports.ts';

/** Default start of fake time: a fixed instant so tests are reproducible. */
export const DefaultFakeEpoch = '2026-01-01T00:00:00.000Z';

/** Clock port that only moves when told to. */
export class FixedClock implements Clock {
  private epochMs: number;
  private readonly startMs: number;

  /** @param start RFC 3339 string, epoch ms or Date (default 2026-01-01T00:00:00Z). */
  constructor(start: string | number | Date = DefaultFakeEpoch) {
    this.startMs = new Date(start).getTime();
    this.epochMs = this.startMs;
  }

  now(): Date {
    return new Date(this.epochMs);
  }

  /** Epoch milliseconds. */
  nowMs(): number {
    return this.epochMs;
  }

  /** RFC 3339 with milliseconds. */
  nowIso(): string {
    return this.now().toISOString();
  }

  set(t: string | number | Date): void {
    this.epochMs = new Date(t).getTime();
  }

  advanceMs(ms: number): void {
    this.epochMs += ms;
  }

  advanceSeconds(seconds: number): void {
    this.epochMs += seconds * 1000;
  }

  /** Back to the start instant. */
  reset(): void {
    this.epochMs = this.startMs;
  }
}
