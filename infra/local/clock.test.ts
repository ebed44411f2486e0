import { describe, expect, it } from 'vitest';
import { VirtualClock } from './clock.ts';

const realPause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('VirtualClock (wall-scaled)', () => {
  it('never runs a timer before its virtual instant, even when setTimeout fires early', async () => {
    // Wall time is under the test's control: the real setTimeout (10 ms for 1 s at 100x) fires
    // while this clock still reads 0.9 s, as Node's timers can by up to a millisecond.
    let real = 1_000;
    const clock = new VirtualClock({ start: '2026-03-06T15:57:00Z', speed: 100, realNowMs: () => real });
    const firedAt: number[] = [];
    clock.setTimer(() => firedAt.push(clock.nowMs() - clock.startEpochMs()), 1_000);
    real += 9;
    await realPause(40);
    expect(firedAt).toEqual([]);
    real += 1;
    await realPause(40);
    expect(firedAt).toEqual([1_000]);
    clock.stop();
  });

  it('cancels a timer that has re-armed', async () => {
    let real = 0;
    const clock = new VirtualClock({ start: 0, speed: 100, realNowMs: () => real });
    let fired = 0;
    const h = clock.setTimer(() => (fired += 1), 500);
    await realPause(30);
    h.cancel();
    real += 5;
    await realPause(30);
    expect(fired).toBe(0);
    clock.stop();
  });
});

describe('VirtualClock (stepped)', () => {
  it('a pause inside tracked work lets virtual time move on to its end (an SDK retry backoff), and timers due before it fire meanwhile', async () => {
    // Arrange
    const clock = new VirtualClock({ start: 0, speed: 1, stepped: { quietRealMs: 2 }, frozen: true });
    const seen: string[] = [];
    clock.setTimer(() => seen.push(`timer@${clock.nowMs()}`), 1_000);
    clock.begin();
    // Act
    await clock.work(async () => {
      seen.push(`work@${clock.nowMs()}`);
      await clock.work(() => clock.pause(2_500));
      seen.push(`retry@${clock.nowMs()}`);
    });
    // Assess
    expect(seen).toEqual(['work@0', 'timer@1000', 'retry@2500']);
    clock.stop();
  });

  it("a work waiting on another work's pause (a call they share) does not hold the clock still", { timeout: 20_000 }, async () => {
    // Arrange
    const clock = new VirtualClock({ start: 0, speed: 1, stepped: { quietRealMs: 2 }, frozen: true });
    clock.begin();
    const shared = clock.work(() => clock.pause(3_000));
    // Act
    const endedAt = await clock.work(async () => {
      await shared;
      return clock.nowMs();
    });
    // Assess
    expect(endedAt).toBe(3_000);
    clock.stop();
  });
});

describe('VirtualClock (wall time, the real tier)', () => {
  it('reads the wall clock, also while frozen, and starts at the wall instant of begin()', () => {
    let real = Date.parse('2026-12-04T21:00:00Z');
    const clock = new VirtualClock({ start: '2026-03-06T15:57:00Z', speed: 10, frozen: true, wall: true, realNowMs: () => real });
    expect(clock.speed).toBe(1);
    real += 5_000;
    expect(clock.nowMs()).toBe(real);
    clock.begin();
    expect(clock.startEpochMs()).toBe(real);
    real += 2_000;
    expect(clock.elapsedSeconds()).toBe(2);
    clock.stop();
  });
});
