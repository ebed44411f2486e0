/**
 * EventPublisher on EventBridge PutEvents.
 * - At most {@link MaxEntriesPerPutEvents} entries per call and {@link MaxPutEventsBytes} per
 *   request (PutEvents API reference; size formula in test/fixtures/events/README.md: UTF-8 bytes
 *   of Source + DetailType + Detail + each Resources entry).
 * - An entry larger than the limit on its own is never sent (counted as failed): callers split
 *   their detail first (the agent does).
 * - Partial failures (`FailedEntryCount`, per-entry `ErrorCode`) and throttling of the whole call are
 *   retried with exponential backoff and full jitter, {@link PublishMaxAttempts} attempts in all.
 */
import { EventBridgeClient, PutEventsCommand, type PutEventsRequestEntry } from '@aws-sdk/client-eventbridge';
import type { EventPublisher } from '../api/ports.ts';

/** PutEvents takes 1–10 entries per request. */
export const MaxEntriesPerPutEvents = 10;
/** PutEvents request size limit: 256 KB (EventBridge "Calculating PutEvents event entry size"). */
export const MaxPutEventsBytes = 256 * 1024;
/** Attempts per entry before it is reported failed (first try + 5 retries). */
export const PublishMaxAttempts = 6;
/** First backoff delay; doubles per attempt up to {@link PublishMaxBackoffMs}. */
export const PublishBaseBackoffMs = 100;
export const PublishMaxBackoffMs = 5_000;

/** Size EventBridge counts for an entry, in bytes. */
export function entrySizeBytes(e: { Source?: string; DetailType?: string; Detail?: string; Resources?: string[]; Time?: Date }): number {
  let n = Buffer.byteLength(e.Source ?? '') + Buffer.byteLength(e.DetailType ?? '') + Buffer.byteLength(e.Detail ?? '');
  for (const r of e.Resources ?? []) n += Buffer.byteLength(r);
  if (e.Time) n += 14;
  return n;
}

/** Splits entries into PutEvents requests (≤ 10 entries, ≤ 256 KB each), keeping order. */
export function chunkEntries<T extends PutEventsRequestEntry>(entries: readonly T[]): T[][] {
  const chunks: T[][] = [];
  let cur: T[] = [];
  let bytes = 0;
  for (const e of entries) {
    const size = entrySizeBytes(e);
    if (cur.length > 0 && (cur.length >= MaxEntriesPerPutEvents || bytes + size > MaxPutEventsBytes)) {
      chunks.push(cur);
      cur = [];
      bytes = 0;
    }
    cur.push(e);
    bytes += size;
  }
  if (cur.length) chunks.push(cur);
  return chunks;
}

const RetryableCallErrors = new Set(['ThrottlingException', 'InternalException', 'ServiceUnavailable', 'TooManyRequestsException', 'InternalFailure']);

export interface EventBridgePublisherOptions {
  /** Bus name or ARN (env NODEFLEET_EVENT_BUS_NAME). */
  eventBusName: string;
  /** Injected for tests (default setTimeout). */
  sleep?: (ms: number) => Promise<void>;
  /** Injected for tests (default Math.random). */
  random?: () => number;
  /** Called for each entry given up on (logging). */
  onDropped?: (entry: PutEventsRequestEntry, reason: string) => void;
}

export class EventBridgePublisher implements EventPublisher {
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly random: () => number;

  constructor(
    private readonly client: EventBridgeClient,
    private readonly opts: EventBridgePublisherOptions,
  ) {
    this.sleep = opts.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
    this.random = opts.random ?? Math.random;
  }

  /** Publishes; returns how many entries failed after every retry (0 = all delivered). */
  async publish(entries: { source: string; detailType: string; detail: unknown; resources?: string[] }[]): Promise<{ failed: number }> {
    let failed = 0;
    const requestEntries: PutEventsRequestEntry[] = [];
    for (const e of entries) {
      const entry: PutEventsRequestEntry = {
        Source: e.source,
        DetailType: e.detailType,
        Detail: typeof e.detail === 'string' ? e.detail : JSON.stringify(e.detail),
        EventBusName: this.opts.eventBusName,
        ...(e.resources?.length ? { Resources: e.resources } : {}),
      };
      if (entrySizeBytes(entry) > MaxPutEventsBytes) {
        failed++;
        this.opts.onDropped?.(entry, `entry is ${entrySizeBytes(entry)} bytes, over the ${MaxPutEventsBytes}-byte PutEvents limit`);
        continue;
      }
      requestEntries.push(entry);
    }
    for (const chunk of chunkEntries(requestEntries)) failed += await this.sendWithRetry(chunk);
    return { failed };
  }

  private backoffMs(attempt: number): number {
    return Math.floor(this.random() * Math.min(PublishMaxBackoffMs, PublishBaseBackoffMs * 2 ** attempt));
  }

  private async sendWithRetry(chunk: PutEventsRequestEntry[]): Promise<number> {
    let pending = chunk;
    let lastReason = '';
    for (let attempt = 0; attempt < PublishMaxAttempts && pending.length > 0; attempt++) {
      if (attempt > 0) await this.sleep(this.backoffMs(attempt));
      try {
        const out = await this.client.send(new PutEventsCommand({ Entries: pending }));
        if (!out.FailedEntryCount) return 0;
        const results = out.Entries ?? [];
        const retry: PutEventsRequestEntry[] = [];
        pending.forEach((e, i) => {
          const r = results[i];
          if (!r || r.ErrorCode) {
            retry.push(e);
            lastReason = `${r?.ErrorCode ?? 'missing result'}: ${r?.ErrorMessage ?? ''}`;
          }
        });
        pending = retry;
      } catch (err) {
        const name = (err as Error)?.name ?? '';
        const status = (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
        lastReason = `${name}: ${(err as Error)?.message ?? ''}`;
        // Network errors and throttling are retried; a validation error will not get better.
        if (!RetryableCallErrors.has(name) && !(status === undefined || status >= 500 || status === 429)) break;
      }
    }
    for (const e of pending) this.opts.onDropped?.(e, lastReason);
    return pending.length;
  }
}

/** Creates the client and the publisher (the agent's composition root uses this; Lambdas use buildDeps). */
export function createEventBridgePublisher(opts: EventBridgePublisherOptions & { region: string; endpoint?: string }): EventBridgePublisher {
  const client = new EventBridgeClient({ region: opts.region, ...(opts.endpoint ? { endpoint: opts.endpoint } : {}) });
  return new EventBridgePublisher(client, opts);
}
