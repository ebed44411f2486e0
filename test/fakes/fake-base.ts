/**
 * Shared machinery of the test doubles: every fake records its calls, takes injected failures
 * per method and can be reset between tests (STYLE.md habit 4; the model is Karpenter's
 * pkg/cloudprovider/fake/cloudprovider.go).
 */

/** One recorded call: the port method and its arguments (cloned at call time). */
export interface RecordedCall<M extends string = string> {
  method: M;
  args: unknown[];
}

interface InjectedFailure {
  error: Error | (() => Error);
  remaining: number;
}

/** Base class: call log + failure injection. `M` is the union of method names. */
export class FakeBase<M extends string = string> {
  /** Every call, in order, with cloned arguments. */
  readonly calls: RecordedCall<M>[] = [];
  private readonly failures = new Map<M, InjectedFailure[]>();

  /**
   * The next `times` calls of `method` throw `error` (a factory gives a fresh error per call).
   * Failures queue: `failNext('x', a); failNext('x', b)` throws a then b.
   */
  failNext(method: M, error: Error | (() => Error), times = 1): this {
    const list = this.failures.get(method) ?? [];
    list.push({ error, remaining: times });
    this.failures.set(method, list);
    return this;
  }

  /** Every call of `method` throws `error` until reset() or clearFailures(). */
  failAlways(method: M, error: Error | (() => Error)): this {
    return this.failNext(method, error, Number.POSITIVE_INFINITY);
  }

  /** Removes injected failures (all methods, or one). */
  clearFailures(method?: M): void {
    if (method) this.failures.delete(method);
    else this.failures.clear();
  }

  /** Calls of one method, in order. */
  callsOf(method: M): unknown[][] {
    return this.calls.filter((c) => c.method === method).map((c) => c.args);
  }

  /** Clears the call log and injected failures (subclasses also clear their state). */
  reset(): void {
    this.calls.length = 0;
    this.failures.clear();
  }

  /** Records a call, then throws the next injected failure for `method`, if any. */
  protected record(method: M, ...args: unknown[]): void {
    this.calls.push({ method, args: args.map(cloneArg) });
    const list = this.failures.get(method);
    const next = list?.[0];
    if (!list || !next) return;
    next.remaining -= 1;
    if (next.remaining <= 0) list.shift();
    throw typeof next.error === 'function' ? next.error() : next.error;
  }
}

function cloneArg(a: unknown): unknown {
  try {
    return structuredClone(a);
  } catch {
    return a;
  }
}

/** Deep copy, so callers never share state with a fake's store. */
export function clone<T>(v: T): T {
  return structuredClone(v);
}
