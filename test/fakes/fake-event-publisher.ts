import type { EventPublisher } from '../../shared/api/ports.ts';
import { FakeBase, clone } from './fake-base.ts';

type Method = 'publish';
type Entry = Parameters<EventPublisher['publish']>[0][number];

/** EventPublisher that keeps what was published; `failEntries(n)` makes the next publish report n failures. */
export class FakeEventPublisher extends FakeBase<Method> implements EventPublisher {
  /** Every entry accepted, in order. */
  readonly published: Entry[] = [];
  private nextFailed = 0;

  async publish(entries: Entry[]): Promise<{ failed: number }> {
    this.record('publish', entries);
    const failed = Math.min(this.nextFailed, entries.length);
    this.nextFailed = 0;
    this.published.push(...entries.slice(0, entries.length - failed).map(clone));
    return { failed };
  }

  /** The next publish reports its last `n` entries as failed (not kept). */
  failEntries(n: number): void {
    this.nextFailed = n;
  }

  /** Published entries of one detail-type. */
  ofType(detailType: string): Entry[] {
    return this.published.filter((e) => e.detailType === detailType);
  }

  override reset(): void {
    super.reset();
    this.published.length = 0;
    this.nextFailed = 0;
  }
}
