import { describe, expect, it } from 'vitest';
import { goSortSlice } from '../../../shared/scheduling/go-sort.ts';

/**
 * Expected orders printed by Go 1.26 for `sort.Slice(xs, func(i, j int) bool { return xs[i].key < xs[j].key })`
 * over elements `{key, id}` built from the keys in order: the ids after the sort.
 */
const GoOrders: { about: string; keys: number[]; ids: number[] }[] = [
  {
    about: '13 elements, one larger first: partitioned, equal elements move (Karpenter claims by pod count)',
    keys: [2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1],
    ids: [6, 1, 2, 3, 4, 5, 7, 8, 9, 10, 11, 12, 0],
  },
  {
    about: '12 elements: insertion sort, stable',
    keys: [2, 1, 1, 2, 1, 1, 1, 2, 1, 1, 1, 1],
    ids: [1, 2, 4, 5, 6, 8, 9, 10, 11, 0, 3, 7],
  },
  {
    about: 'unbalanced partitions: patterns broken with the xorshift generator, runs of equal elements split apart',
    keys: [0, 0, 1, 0, 1, 1, 0, 0, 0, 1, 1, 1, 0, 1],
    ids: [6, 12, 7, 3, 0, 1, 8, 4, 5, 9, 10, 11, 2, 13],
  },
  {
    about: '60 elements: ninther pivot, equal runs partitioned apart',
    keys: Array.from({ length: 60 }, (_, i) => 5 - (i % 6)),
    ids: [29, 59, 23, 53, 17, 5, 35, 47, 41, 11, 40, 46, 10, 52, 34, 22, 16, 4, 28, 58, 45, 15, 39, 51, 9, 3, 57, 27, 33, 21, 56, 44, 32, 2, 14, 50, 26, 8, 38, 20, 13, 37, 55, 43, 31, 25, 1, 7, 19, 49, 30, 48, 6, 0, 54, 42, 12, 36, 18, 24],
  },
  {
    about: '60 elements in descending order: reversed first, so equal neighbours swap',
    keys: Array.from({ length: 60 }, (_, i) => (i === 1 ? 59 : i === 51 ? 9 : i === 20 ? 38 : 59 - i)),
    ids: Array.from({ length: 60 }, (_, i) => 59 - i),
  },
];

describe('goSortSlice', () => {
  it.each(GoOrders)('$about', ({ keys, ids }) => {
    // Prepare
    const xs = keys.map((key, id) => ({ key, id }));
    // Act
    goSortSlice(xs, (a, b) => a.key < b.key);
    // Assess
    expect(xs.map((x) => x.id)).toEqual(ids);
  });
});
