/**
 * The order Go's `sort.Slice` leaves a slice in, for code that must try things in the order
 * Karpenter does. `sort.Slice` is pattern-defeating quicksort (Go src/sort/zsortfunc.go
 * `pdqsort_func`, BSD licence): insertion sort up to 12 elements, which is stable, and beyond
 * that partitions that move equal elements around. Karpenter sorts its in-flight NodeClaims by
 * pod count with it before each pod (KC scheduler.go `add`), so which of several claims with as
 * many pods is tried first depends on these exact steps; this module repeats them (same pivot
 * choice, same swaps, same pseudo-random pattern breaking), so for any `less` the result equals
 * Go's. Deterministic: the pattern breaking seeds its generator with the length.
 */

/** Strict weak order: true when `a` must come before `b`. */
export type Less<T> = (a: T, b: T) => boolean;

const MaxInsertion = 12;
const ShortestNinther = 50;
const MaxPivotSwaps = 4 * 3;
const PartialSortMaxSteps = 5;
const PartialSortShortestShifting = 50;

type Hint = 'unknown' | 'increasing' | 'decreasing';

/** Number of bits needed to represent n (Go math/bits.Len). */
function bitLength(n: number): number {
  return n <= 0 ? 0 : Math.floor(Math.log2(n)) + 1;
}

/** Sorts `xs` in place exactly as Go's `sort.Slice(xs, less)` would. */
export function goSortSlice<T>(xs: T[], less: Less<T>): void {
  new GoSorter(xs, less).pdqsort(0, xs.length, bitLength(xs.length));
}

class GoSorter<T> {
  constructor(
    private readonly xs: T[],
    private readonly lessFn: Less<T>,
  ) {}

  private less(i: number, j: number): boolean {
    return this.lessFn(this.xs[i], this.xs[j]);
  }

  private swap(i: number, j: number): void {
    const t = this.xs[i];
    this.xs[i] = this.xs[j];
    this.xs[j] = t;
  }

  private insertionSort(a: number, b: number): void {
    for (let i = a + 1; i < b; i++) for (let j = i; j > a && this.less(j, j - 1); j--) this.swap(j, j - 1);
  }

  private siftDown(lo: number, hi: number, first: number): void {
    let root = lo;
    for (;;) {
      let child = 2 * root + 1;
      if (child >= hi) return;
      if (child + 1 < hi && this.less(first + child, first + child + 1)) child++;
      if (!this.less(first + root, first + child)) return;
      this.swap(first + root, first + child);
      root = child;
    }
  }

  private heapSort(a: number, b: number): void {
    const hi = b - a;
    for (let i = Math.floor((hi - 1) / 2); i >= 0; i--) this.siftDown(i, hi, a);
    for (let i = hi - 1; i >= 0; i--) {
      this.swap(a, a + i);
      this.siftDown(0, i, a);
    }
  }

  pdqsort(a: number, b: number, limit: number): void {
    let wasBalanced = true;
    let wasPartitioned = true;
    for (;;) {
      const length = b - a;
      if (length <= MaxInsertion) {
        this.insertionSort(a, b);
        return;
      }
      if (limit === 0) {
        this.heapSort(a, b);
        return;
      }
      if (!wasBalanced) {
        this.breakPatterns(a, b);
        limit--;
      }
      let [pivot, hint] = this.choosePivot(a, b);
      if (hint === 'decreasing') {
        this.reverseRange(a, b);
        pivot = b - 1 - (pivot - a);
        hint = 'increasing';
      }
      if (wasBalanced && wasPartitioned && hint === 'increasing' && this.partialInsertionSort(a, b)) return;
      if (a > 0 && !this.less(a - 1, pivot)) {
        a = this.partitionEqual(a, b, pivot);
        continue;
      }
      const [mid, alreadyPartitioned] = this.partition(a, b, pivot);
      wasPartitioned = alreadyPartitioned;
      const leftLen = mid - a;
      const rightLen = b - mid;
      const balanceThreshold = Math.floor(length / 8);
      if (leftLen < rightLen) {
        wasBalanced = leftLen >= balanceThreshold;
        this.pdqsort(a, mid, limit);
        a = mid + 1;
      } else {
        wasBalanced = rightLen >= balanceThreshold;
        this.pdqsort(mid + 1, b, limit);
        b = mid;
      }
    }
  }

  /** One quicksort partition around xs[pivot]: [new pivot index, whether it was already partitioned]. */
  private partition(a: number, b: number, pivot: number): [number, boolean] {
    this.swap(a, pivot);
    let i = a + 1;
    let j = b - 1;
    while (i <= j && this.less(i, a)) i++;
    while (i <= j && !this.less(j, a)) j--;
    if (i > j) {
      this.swap(j, a);
      return [j, true];
    }
    this.swap(i, j);
    i++;
    j--;
    for (;;) {
      while (i <= j && this.less(i, a)) i++;
      while (i <= j && !this.less(j, a)) j--;
      if (i > j) break;
      this.swap(i, j);
      i++;
      j--;
    }
    this.swap(j, a);
    return [j, false];
  }

  /** Elements equal to xs[pivot] first, then greater ones (none is smaller); returns where the greater ones start. */
  private partitionEqual(a: number, b: number, pivot: number): number {
    this.swap(a, pivot);
    let i = a + 1;
    let j = b - 1;
    for (;;) {
      while (i <= j && !this.less(a, i)) i++;
      while (i <= j && this.less(a, j)) j--;
      if (i > j) break;
      this.swap(i, j);
      i++;
      j--;
    }
    return i;
  }

  /** Fixes a few out-of-order neighbours; true when the range ends sorted. */
  private partialInsertionSort(a: number, b: number): boolean {
    let i = a + 1;
    for (let step = 0; step < PartialSortMaxSteps; step++) {
      while (i < b && !this.less(i, i - 1)) i++;
      if (i === b) return true;
      if (b - a < PartialSortShortestShifting) return false;
      this.swap(i, i - 1);
      if (i - a >= 2) {
        for (let j = i - 1; j >= 1; j--) {
          if (!this.less(j, j - 1)) break;
          this.swap(j, j - 1);
        }
      }
      if (b - i >= 2) {
        for (let j = i + 1; j < b; j++) {
          if (!this.less(j, j - 1)) break;
          this.swap(j, j - 1);
        }
      }
    }
    return false;
  }

  /** Swaps three elements near the middle with pseudo-random ones (xorshift64 seeded by the length). */
  private breakPatterns(a: number, b: number): void {
    const length = b - a;
    if (length < 8) return;
    const mask64 = (1n << 64n) - 1n;
    let r = BigInt(length);
    const next = () => {
      r ^= (r << 13n) & mask64;
      r ^= r >> 7n;
      r ^= (r << 17n) & mask64;
      return r;
    };
    const modulus = BigInt(2 ** bitLength(length));
    const base = a + Math.floor(length / 4) * 2;
    for (let idx = base - 1; idx <= base + 1; idx++) {
      let other = Number(next() & (modulus - 1n));
      if (other >= length) other -= length;
      this.swap(idx, a + other);
    }
  }

  private choosePivot(a: number, b: number): [number, Hint] {
    const l = b - a;
    const swaps = { n: 0 };
    const q = Math.floor(l / 4);
    let i = a + q;
    let j = a + q * 2;
    let k = a + q * 3;
    if (l >= 8) {
      if (l >= ShortestNinther) {
        i = this.median(i - 1, i, i + 1, swaps);
        j = this.median(j - 1, j, j + 1, swaps);
        k = this.median(k - 1, k, k + 1, swaps);
      }
      j = this.median(i, j, k, swaps);
    }
    if (swaps.n === 0) return [j, 'increasing'];
    if (swaps.n === MaxPivotSwaps) return [j, 'decreasing'];
    return [j, 'unknown'];
  }

  private order2(a: number, b: number, swaps: { n: number }): [number, number] {
    if (this.less(b, a)) {
      swaps.n++;
      return [b, a];
    }
    return [a, b];
  }

  private median(a: number, b: number, c: number, swaps: { n: number }): number {
    const [lo, mid] = this.order2(a, b, swaps);
    const [midOrHi] = this.order2(mid, c, swaps);
    return this.order2(lo, midOrHi, swaps)[1];
  }

  private reverseRange(a: number, b: number): void {
    for (let i = a, j = b - 1; i < j; i++, j--) this.swap(i, j);
  }
}
