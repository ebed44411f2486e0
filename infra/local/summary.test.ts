import { describe, expect, it } from 'vitest';
import { collapseLoops } from './summary.ts';

describe('collapseLoops', () => {
  it('keeps the first pass of a repeated Drain/Wait loop and folds the rest into one entry', () => {
    const loop = ['Task|Drain', 'Choice|DrainProgress', 'Wait|WaitForDrain'];
    const keys = ['Start|', 'Task|Cordon', ...loop, ...loop, ...loop, ...loop, 'Task|Cutoff', 'Succeed|'];
    expect(collapseLoops(keys)).toEqual([
      { kind: 'one', index: 0 },
      { kind: 'one', index: 1 },
      { kind: 'one', index: 2 },
      { kind: 'one', index: 3 },
      { kind: 'one', index: 4 },
      { kind: 'loop', from: 5, to: 13, length: 3, times: 3 },
      { kind: 'one', index: 14 },
      { kind: 'one', index: 15 },
    ]);
  });

  it('leaves a history without loops as it is', () => {
    expect(collapseLoops(['a', 'b', 'a', 'c']).every((x) => x.kind === 'one')).toBe(true);
  });
});
