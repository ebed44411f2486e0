import type { UnavailableOfferings } from '../../shared/api/ports.ts';
import { FakeBase } from './fake-base.ts';

type Method = 'mark' | 'list';

/** One cached entry; `untilEpochSeconds` is when it expires. */
export interface UnavailableEntry {
  instanceType: string;
  zone: string;
  capacityType: string;
  reason: string;
  untilEpochSeconds: number;
}

/** The ICE cache in memory: marking again extends the entry (last write wins), as a DynamoDB put would. */
export class InMemoryUnavailableOfferings extends FakeBase<Method> implements UnavailableOfferings {
  private readonly entries = new Map<string, UnavailableEntry>();

  async mark(entries: { instanceType: string; zone: string; capacityType: string; reason: string }[], untilEpochSeconds: number): Promise<void> {
    this.record('mark', entries, untilEpochSeconds);
    for (const e of entries) this.entries.set(key(e), { ...e, untilEpochSeconds });
  }

  async list(nowEpochSeconds: number): Promise<{ instanceType: string; zone: string; capacityType: string }[]> {
    this.record('list', nowEpochSeconds);
    return [...this.entries.values()]
      .filter((e) => e.untilEpochSeconds > nowEpochSeconds)
      .map(({ instanceType, zone, capacityType }) => ({ instanceType, zone, capacityType }));
  }

  /** Test helper: whether the offering is unavailable at `nowEpochSeconds`. */
  isUnavailable(instanceType: string, zone: string, capacityType: string, nowEpochSeconds: number): boolean {
    const e = this.entries.get(key({ instanceType, zone, capacityType }));
    return !!e && e.untilEpochSeconds > nowEpochSeconds;
  }

  /** Test helper: every entry, expired or not. */
  all(): UnavailableEntry[] {
    return [...this.entries.values()].map((e) => ({ ...e }));
  }

  override reset(): void {
    super.reset();
    this.entries.clear();
  }
}

function key(e: { instanceType: string; zone: string; capacityType: string }): string {
  return `${e.instanceType}#${e.zone}#${e.capacityType}`;
}
