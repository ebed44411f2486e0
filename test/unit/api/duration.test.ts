import { describe, expect, it } from 'vitest';
import { DurationOrNeverPattern, DurationPattern, parseDurationSeconds, parseGoDurationMs } from '../../../shared/api/duration.ts';
import { parseDurationSeconds as scenarioDurationSeconds } from '../../../infra/local/clock.ts';
import { NodePoolSchema } from '../../../shared/api/nodepool.ts';

describe('durations: one home (shared/api/duration.ts)', () => {
  it("API fields take only Karpenter's (s|m|h) pattern", () => {
    expect(parseDurationSeconds('1h30m')).toBe(5400);
    expect(parseDurationSeconds('Never')).toBeUndefined();
    expect(() => parseDurationSeconds('1.5h')).toThrow(/not a duration/);
    expect(() => parseDurationSeconds('300ms')).toThrow(/not a duration/);
    expect(DurationPattern.test('720h')).toBe(true);
    expect(DurationPattern.test('Never')).toBe(false);
    expect(DurationOrNeverPattern.test('Never')).toBe(true);
  });

  it('Go grammar where Karpenter parses with time.ParseDuration', () => {
    expect(parseGoDurationMs('1.5h')).toBe(5_400_000);
    expect(parseGoDurationMs('300ms')).toBe(300);
    expect(parseGoDurationMs('-5m')).toBe(-300_000);
    expect(parseGoDurationMs('0')).toBe(0);
    expect(parseGoDurationMs('5')).toBeUndefined();
    expect(parseGoDurationMs('true')).toBeUndefined();
  });

  it('scenario files: seconds or a Go duration, through the same parser', () => {
    expect(scenarioDurationSeconds(90)).toBe(90);
    expect(scenarioDurationSeconds('2.5')).toBe(2.5);
    expect(scenarioDurationSeconds('2m0s')).toBe(120);
    expect(scenarioDurationSeconds('500ms')).toBe(0.5);
    expect(() => scenarioDurationSeconds('5x')).toThrow(RangeError);
    expect(() => scenarioDurationSeconds('-5m')).toThrow(RangeError);
  });

  it('NodePool schema refuses what the pattern refuses', () => {
    const np = (expireAfter: string) => ({
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodePool',
      metadata: { name: 'a' },
      spec: { template: { spec: { nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' }, requirements: [], expireAfter } } },
    });
    expect(NodePoolSchema.safeParse(np('720h')).success).toBe(true);
    expect(NodePoolSchema.safeParse(np('Never')).success).toBe(true);
    expect(NodePoolSchema.safeParse(np('1.5h')).success).toBe(false);
  });
});
