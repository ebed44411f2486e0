/**
 * The chaos harness's only source of randomness: pure-rand's xoroshiro128+ seeded with the run's
 * seed, so a seed names one run (cluster, workload, fault schedule) exactly.
 */
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus';
import { uniformInt } from 'pure-rand/distribution/uniformInt';

export class Rng {
  private readonly g: ReturnType<typeof xoroshiro128plus>;

  constructor(seed: number) {
    this.g = xoroshiro128plus(seed | 0);
  }

  /** Integer in [min, max] (both inclusive). */
  int(min: number, max: number): number {
    return uniformInt(this.g, min, max);
  }

  /** True with probability `p` (0..1, in thousandths). */
  chance(p: number): boolean {
    return this.int(0, 999) < Math.round(p * 1000);
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError('pick from an empty list');
    return items[this.int(0, items.length - 1)];
  }

  /** A non-empty random subset, in the original order. */
  subset<T>(items: readonly T[]): T[] {
    const out = items.filter(() => this.chance(0.5));
    return out.length ? out : [this.pick(items)];
  }
}
