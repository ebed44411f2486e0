import type { BudgetCounter } from '../../shared/api/ports.ts';
import { FakeBase } from './fake-base.ts';

type Method = 'take' | 'release' | 'renew' | 'holders';

/** BudgetCounter in memory: per NodePool a map holder → taken or last renewed (RFC 3339), as the DynamoDB item keeps it. */
export class InMemoryBudgetCounter extends FakeBase<Method> implements BudgetCounter {
  private readonly pools = new Map<string, Map<string, string>>();

  async take(nodePool: string, holder: string, allowed: number, nowIso: string): Promise<boolean> {
    this.record('take', nodePool, holder, allowed, nowIso);
    const pool = this.pools.get(nodePool) ?? new Map<string, string>();
    this.pools.set(nodePool, pool);
    if (pool.has(holder)) return true;
    if (pool.size >= allowed) return false;
    pool.set(holder, nowIso);
    return true;
  }

  async release(nodePool: string, holder: string): Promise<void> {
    this.record('release', nodePool, holder);
    this.pools.get(nodePool)?.delete(holder);
  }

  async renew(nodePool: string, holder: string, nowIso: string): Promise<boolean> {
    this.record('renew', nodePool, holder, nowIso);
    const pool = this.pools.get(nodePool);
    if (!pool?.has(holder)) return false;
    pool.set(holder, nowIso);
    return true;
  }

  async holders(nodePool: string): Promise<Record<string, string>> {
    this.record('holders', nodePool);
    return Object.fromEntries(this.pools.get(nodePool) ?? []);
  }

  /** Test helper: in-flight count without recording a call. */
  inFlight(nodePool: string): number {
    return this.pools.get(nodePool)?.size ?? 0;
  }

  override reset(): void {
    super.reset();
    this.pools.clear();
  }
}
