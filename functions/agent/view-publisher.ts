/**
 * Publishes the cluster view (shared/api/cluster-view.ts) the agent keeps from its watches: gzip
 * JSON through a ClusterViewStore (S3), within {@link ViewPublishIntervalMs} of a change, and at
 * least every {@link ViewHeartbeatSeconds} s unchanged so readers can tell it is current.
 *
 * `generatedAt` is the time until which both watches were known current (Reflector
 * `currentAsOfMs`): while a watch is broken the agent keeps republishing the same time, the
 * view ages, and past the readers' bound (MaxViewAgeSeconds) they list the cluster live instead.
 * Nothing is published before both informers have listed once (a partial view is never written).
 */
import { once } from 'node:events';
import { createGzip } from 'node:zlib';
import { ClusterViewBuilder, ViewHeartbeatSeconds } from '../../shared/api/cluster-view.ts';
import type { ClusterViewStore } from '../../shared/api/ports.ts';
import type { AgentLog } from './agent-core.ts';

/** A changed view is published at most this often (ms). */
export const ViewPublishIntervalMs = 2_000;

/**
 * The view's JSON is rendered and compressed in pieces of this many characters, through one gzip
 * stream: the whole text (~20 MB at 100 000 pods) never exists, and a 64 Ki-character piece is
 * below V8's large-object size, so pieces die young; 1 Mi-character pieces were each allocated in
 * the old generation's large-object space and stayed there until a full GC (~20 MiB per publish at
 * 100 000 pods).
 */
export const ViewPieceChars = 64 * 1024;

/** Compresses `pieces` as one gzip stream, holding one piece at a time. @returns the gzip bytes and the JSON's byte length. */
export async function gzipPieces(pieces: Iterable<string>): Promise<{ gz: Buffer; jsonBytes: number }> {
  const gzip = createGzip();
  const out: Buffer[] = [];
  gzip.on('data', (c: Buffer) => out.push(c));
  const ended = once(gzip, 'end');
  ended.catch(() => {}); // awaited below; this only keeps an early error from counting as unhandled
  let jsonBytes = 0;
  for (const piece of pieces) {
    const raw = Buffer.from(piece);
    jsonBytes += raw.byteLength;
    if (!gzip.write(raw)) await once(gzip, 'drain');
  }
  gzip.end();
  await ended;
  return { gz: Buffer.concat(out), jsonBytes };
}

export interface ViewPublisherOptions {
  store: ClusterViewStore;
  cluster: string;
  builder: ClusterViewBuilder;
  /** Until when the watches were current (epoch ms), undefined before the first lists. */
  currentAsOfMs: () => number | undefined;
  nowMs?: () => number;
  log?: AgentLog;
  intervalMs?: number;
  heartbeatMs?: number;
}

export class ViewPublisher {
  private timer?: NodeJS.Timeout;
  private readonly agent: string;
  private sequence = 0;
  private publishedChanges = -1;
  private publishedAtMs = 0;
  private publishedAsOfMs = 0;
  private busy = false;
  /** Bytes of the last object written (gzip), and of its JSON. */
  lastBytes = { gzip: 0, json: 0 };

  constructor(private readonly opts: ViewPublisherOptions) {
    this.agent = new Date(this.now()).toISOString();
  }

  private now(): number {
    return this.opts.nowMs?.() ?? Date.now();
  }

  start(): void {
    this.timer = setInterval(() => void this.tick(), this.opts.intervalMs ?? ViewPublishIntervalMs);
    this.timer.unref?.();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Publishes when the view changed or the heartbeat is due; returns whether it wrote. */
  async tick(): Promise<boolean> {
    if (this.busy) return false;
    const asOf = this.opts.currentAsOfMs();
    if (asOf === undefined) return false;
    const b = this.opts.builder;
    const heartbeat = this.opts.heartbeatMs ?? ViewHeartbeatSeconds * 1000;
    const changed = b.changes !== this.publishedChanges;
    const due = this.now() - this.publishedAtMs >= heartbeat && asOf > this.publishedAsOfMs;
    if (!changed && !due) return false;
    this.busy = true;
    const changes = b.changes;
    try {
      const { gz, jsonBytes } = await gzipPieces(
        b.renderJson({ cluster: this.opts.cluster, agent: this.agent, sequence: ++this.sequence, generatedAt: new Date(asOf).toISOString() }, ViewPieceChars),
      );
      this.opts.log?.('debug', 'view rendered', { jsonBytes, gzipBytes: gz.byteLength });
      await this.opts.store.put(gz);
      this.opts.log?.('debug', 'view published', { sequence: this.sequence });
      this.publishedChanges = changes;
      this.publishedAtMs = this.now();
      this.publishedAsOfMs = asOf;
      this.lastBytes = { gzip: gz.byteLength, json: jsonBytes };
      return true;
    } catch (err) {
      this.opts.log?.('warn', 'publishing the cluster view failed, will retry', { error: (err as Error)?.message ?? String(err) });
      return false;
    } finally {
      this.busy = false;
    }
  }
}
