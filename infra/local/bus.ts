/**
 * Local EventBridge bus: events in (PutEvents from the agent and the functions, EC2 / Health
 * events from the local EC2 region), routed with the SAME patterns the CDK rules use
 * (`EventRules` + `matchesPattern` from shared/api/contract.ts) to the same handlers.
 *
 * Delivery follows the AWS wiring:
 * - direct rules (provisioner, registration): an asynchronous Lambda invoke with the whole
 *   EventBridge event; an error is retried twice (Lambda async retry policy), then recorded as
 *   a failed delivery (the DLQ in AWS).
 * - interruption rules: EventBridge → SQS → Lambda. Events are queued and handed over in SQS
 *   batches (up to 10 records, as the event source mapping) wrapped exactly as
 *   test/fixtures/events/sqs-record-wrapping.json; records reported in `batchItemFailures` (or a
 *   thrown batch) are redelivered until `maxReceiveCount`, then dead-lettered.
 * A target's `concurrency` caps its parallel invocations (the provisioner runs with reserved
 * concurrency 1 in the CDK stack; a queue's consumer takes one batch at a time); the default is
 * unbounded, as Lambda scales async invocations out.
 */
import { createHash } from 'node:crypto';
import { localUuid } from './ids.ts';
import type { EventPublisher } from '../../shared/api/ports.ts';
import { matchesPattern, type EventPattern } from '../../shared/api/contract.ts';
import type { VirtualClock } from './clock.ts';
import type { PutEventsEntry } from './ec2/server.ts';
import type { BusAction } from './faults.ts';

/** Async Lambda invokes are retried twice after the first failure (AWS Lambda async invocation). */
export const AsyncInvokeRetries = 2;
/** SQS redrive: after this many receives a message goes to the DLQ. */
export const MaxReceiveCount = 3;
/** SQS event source mapping batch size (the interruption queue's consumer). */
export const SqsBatchSize = 10;
/** Virtual seconds before a failed SQS message becomes visible again (queue VisibilityTimeout). */
export const SqsVisibilityTimeoutSeconds = 20;
/** Virtual seconds between async retries (AWS waits about a minute, then two; compressed here). */
const AsyncRetryDelaySeconds = 5;

/** An EventBridge event as delivered to targets. */
export interface BusEvent {
  version: string;
  id: string;
  'detail-type': string;
  source: string;
  account: string;
  time: string;
  region: string;
  resources: string[];
  detail: any;
}

/** A rule target: a handler invoked with the event (direct) or an SQS batch (queue). */
export interface BusTarget {
  rule: string;
  pattern: EventPattern;
  /** 'lambda': async invoke with the event; 'sqs': batched through a queue. */
  kind: 'lambda' | 'sqs';
  invoke: (payload: unknown) => Promise<unknown>;
  /** Most invocations at once (default: unbounded). */
  concurrency?: number;
}

/** One delivery attempt's outcome, kept for the summary and tests. */
export interface DeliveryRecord {
  rule: string;
  eventId: string;
  detailType: string;
  atMs: number;
  ok: boolean;
  attempt: number;
  error?: string;
}

interface QueueMessage {
  messageId: string;
  event: BusEvent;
  receiveCount: number;
  firstSentMs: number;
}

/** The local bus; also the `EventPublisher` port for in-process publishers. */
export class LocalEventBus implements EventPublisher {
  readonly events: BusEvent[] = [];
  readonly deliveries: DeliveryRecord[] = [];
  readonly deadLetters: { rule: string; event: BusEvent; error: string }[] = [];
  /** Deliveries a fault dropped (lost before reaching the target; not failures). */
  readonly dropped: { rule: string; eventId: string; detailType: string; atMs: number }[] = [];
  private readonly targets: BusTarget[] = [];
  private readonly running = new Map<string, number>();
  private readonly waiting = new Map<string, (() => void)[]>();
  private readonly queues = new Map<string, QueueMessage[]>();
  private readonly pollScheduled = new Set<string>();
  private inFlight = 0;
  private idleWaiters: (() => void)[] = [];
  private closed = false;

  constructor(
    private readonly opts: {
      clock: VirtualClock;
      region: string;
      account?: string;
      /** Called for every failed attempt (log it). */
      onError?: (rule: string, event: BusEvent, err: unknown) => void;
      /** Called for every event accepted on the bus. */
      onEvent?: (event: BusEvent) => void;
      /** Fault injection (infra/local/faults.ts): drop, duplicate or delay one delivery to one rule. */
      fault?: (rule: string, event: BusEvent) => BusAction | undefined;
      /** Runs one target invocation (the stepped clock tracks it as work). Default: call it. */
      work?: <T>(fn: () => Promise<T>) => Promise<T>;
    },
  ) {}

  /** Adds a rule with its target. */
  addTarget(t: BusTarget): void {
    this.targets.push(t);
  }

  /** Rules whose pattern matches `event`. */
  matchingRules(event: BusEvent): string[] {
    return this.targets
      .filter((t) => matchesPattern(t.pattern as unknown as Record<string, unknown>, event as unknown as Record<string, unknown>))
      .map((t) => t.rule);
  }

  /** EventPublisher port: what P's publisher does through PutEvents, in process. */
  async publish(entries: { source: string; detailType: string; detail: unknown; resources?: string[] }[]): Promise<{ failed: number }> {
    for (const e of entries) this.put({ source: e.source, 'detail-type': e.detailType, detail: e.detail, resources: e.resources ?? [] });
    return { failed: 0 };
  }

  /** PutEvents wire entries (from the local AWS endpoint). */
  putEntries(entries: PutEventsEntry[]): { eventId?: string; errorCode?: string; errorMessage?: string }[] {
    return entries.map((e) => {
      if (!e.Source || !e.DetailType || e.Detail === undefined)
        return { errorCode: 'MalformedDetail', errorMessage: 'Source, DetailType and Detail are required' };
      let detail: unknown;
      try {
        detail = JSON.parse(e.Detail);
      } catch {
        return { errorCode: 'MalformedDetail', errorMessage: 'Detail is not valid JSON' };
      }
      const ev = this.put({ source: e.Source, 'detail-type': e.DetailType, detail, resources: e.Resources ?? [] });
      return { eventId: ev.id };
    });
  }

  /** Accepts a complete event as AWS services emit it (EC2, Health): routed as is. */
  deliver(event: Record<string, unknown>): void {
    this.route(event as unknown as BusEvent);
  }

  private put(partial: { source: string; 'detail-type': string; detail: unknown; resources: string[] }): BusEvent {
    const ev: BusEvent = {
      version: '0',
      id: localUuid(),
      'detail-type': partial['detail-type'],
      source: partial.source,
      account: this.opts.account ?? '123456789012',
      time: new Date(Math.floor(this.opts.clock.nowMs() / 1000) * 1000).toISOString().replace('.000Z', 'Z'),
      region: this.opts.region,
      resources: partial.resources,
      detail: partial.detail,
    };
    this.route(ev);
    return ev;
  }

  private route(ev: BusEvent): void {
    if (this.closed) return;
    this.events.push(ev);
    this.opts.onEvent?.(ev);
    for (const t of this.targets) {
      if (!matchesPattern(t.pattern as unknown as Record<string, unknown>, ev as unknown as Record<string, unknown>)) continue;
      const send = () => {
        if (t.kind === 'lambda') this.enqueueInvoke(t, ev, 1);
        else this.enqueueSqs(t, { messageId: localUuid(), event: ev, receiveCount: 0, firstSentMs: this.opts.clock.nowMs() });
      };
      const fault = this.opts.fault?.(t.rule, ev);
      if (fault?.kind === 'drop') this.dropped.push({ rule: t.rule, eventId: ev.id, detailType: ev['detail-type'], atMs: this.opts.clock.nowMs() });
      else if (fault?.kind === 'delay') this.opts.clock.setTimer(send, fault.ms);
      else {
        send();
        if (fault?.kind === 'duplicate') send();
      }
    }
  }

  /** Runs work on a target within its concurrency limit, in arrival order. */
  private runOn(t: BusTarget, work: () => Promise<void>): void {
    this.inFlight += 1;
    const limit = t.concurrency ?? Infinity;
    const start = () => {
      this.running.set(t.rule, (this.running.get(t.rule) ?? 0) + 1);
      void (this.opts.work ? this.opts.work(work) : work())
        .catch(() => undefined)
        .finally(() => {
          this.running.set(t.rule, (this.running.get(t.rule) ?? 1) - 1);
          const next = this.waiting.get(t.rule)?.shift();
          if (next) next();
          this.inFlight -= 1;
          if (this.inFlight === 0) {
            const w = this.idleWaiters;
            this.idleWaiters = [];
            for (const f of w) f();
          }
        });
    };
    if ((this.running.get(t.rule) ?? 0) < limit) start();
    else this.waiting.set(t.rule, [...(this.waiting.get(t.rule) ?? []), start]);
  }

  private enqueueInvoke(t: BusTarget, ev: BusEvent, attempt: number): void {
    this.runOn(t, async () => {
      if (this.closed) return;
      try {
        await t.invoke(ev);
        this.deliveries.push({ rule: t.rule, eventId: ev.id, detailType: ev['detail-type'], atMs: this.opts.clock.nowMs(), ok: true, attempt });
      } catch (err) {
        const msg = errorText(err);
        this.deliveries.push({ rule: t.rule, eventId: ev.id, detailType: ev['detail-type'], atMs: this.opts.clock.nowMs(), ok: false, attempt, error: msg });
        this.opts.onError?.(t.rule, ev, err);
        if (attempt <= AsyncInvokeRetries) this.opts.clock.setTimer(() => this.enqueueInvoke(t, ev, attempt + 1), AsyncRetryDelaySeconds * 1000);
        else this.deadLetters.push({ rule: t.rule, event: ev, error: msg });
      }
    });
  }

  private enqueueSqs(t: BusTarget, m: QueueMessage): void {
    const q = this.queues.get(t.rule) ?? [];
    q.push(m);
    this.queues.set(t.rule, q);
    this.schedulePoll(t);
  }

  private schedulePoll(t: BusTarget): void {
    if (this.pollScheduled.has(t.rule)) return;
    this.pollScheduled.add(t.rule);
    // Let events published in the same tick join one batch, as a long poll would.
    setImmediate(() => {
      this.pollScheduled.delete(t.rule);
      this.runOn(t, () => this.pollOnce(t));
    });
  }

  private async pollOnce(t: BusTarget): Promise<void> {
    const q = this.queues.get(t.rule) ?? [];
    if (this.closed || q.length === 0) return;
    const batch = q.splice(0, SqsBatchSize);
    for (const m of batch) m.receiveCount += 1;
    const payload = { Records: batch.map((m) => this.sqsRecord(m)) };
    let failedIds: string[] = [];
    let error: string | undefined;
    try {
      const out = (await t.invoke(payload)) as { batchItemFailures?: { itemIdentifier: string }[] } | undefined;
      failedIds = (out?.batchItemFailures ?? []).map((f) => f.itemIdentifier);
    } catch (err) {
      error = errorText(err);
      failedIds = batch.map((m) => m.messageId);
      this.opts.onError?.(t.rule, batch[0].event, err);
    }
    for (const m of batch) {
      const failed = failedIds.includes(m.messageId);
      this.deliveries.push({
        rule: t.rule,
        eventId: m.event.id,
        detailType: m.event['detail-type'],
        atMs: this.opts.clock.nowMs(),
        ok: !failed,
        attempt: m.receiveCount,
        error: failed ? (error ?? 'batchItemFailure') : undefined,
      });
      if (!failed) continue;
      if (m.receiveCount >= MaxReceiveCount) this.deadLetters.push({ rule: t.rule, event: m.event, error: error ?? 'batchItemFailure' });
      else this.opts.clock.setTimer(() => this.enqueueSqs(t, m), SqsVisibilityTimeoutSeconds * 1000);
    }
    if (q.length > 0) this.schedulePoll(t);
  }

  private sqsRecord(m: QueueMessage): Record<string, unknown> {
    const body = JSON.stringify(m.event);
    return {
      messageId: m.messageId,
      receiptHandle: `local-${m.messageId}-${m.receiveCount}`,
      body,
      attributes: {
        ApproximateReceiveCount: String(m.receiveCount),
        SentTimestamp: String(m.firstSentMs),
        SenderId: 'AIDAIENQZJOLO23YVJ4VO',
        ApproximateFirstReceiveTimestamp: String(m.firstSentMs),
      },
      messageAttributes: {},
      md5OfBody: createHash('md5').update(body).digest('hex'),
      eventSource: 'aws:sqs',
      eventSourceARN: `arn:aws:sqs:${this.opts.region}:${this.opts.account ?? '123456789012'}:nodefleet-interruption`,
      awsRegion: this.opts.region,
    };
  }

  /** Resolves when no invocation is running or queued. */
  idle(): Promise<void> {
    if (this.inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Stops accepting and delivering events. */
  close(): void {
    this.closed = true;
  }
}

function errorText(err: unknown): string {
  if (err instanceof Error) return `${err.name}: ${err.message}`;
  return String(err);
}
