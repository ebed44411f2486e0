/**
 * One page of a Kubernetes list, read lean: a plain GET through the connection's HTTP(S) agent
 * and headers (`KubeConfig.applyToHTTPSOptions`: CA, client certificate, bearer token, exec and
 * token-file credentials — what client-node's own requests and its Watch use), gzip accepted, the
 * body split into items as its bytes arrive ({@link ListItemSplitter}), each item parsed once and
 * handed to `onItem` as plain JSON.
 *
 * Why not `CoreV1Api.listPodForAllNamespaces`: client-node keeps the body text, parses it, then
 * deserialises every object into class instances (Date fields), and callers turn those back into
 * plain JSON — three to four copies of each ~3 MB page of 500 pods, most of them promoted to the
 * old generation before they die. The agent's initial list of 100 000 pods peaked ~30 MiB higher
 * for that (docs/cluster-state.md).
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest, type RequestOptions } from 'node:https';
import { createGunzip } from 'node:zlib';
import { ApiException, type KubeConfig } from '@kubernetes/client-node';

/**
 * A page whose bytes stop arriving for this long fails (the reflector lists again). client-node's
 * own requests wait up to undici's 300 s body timeout; an API server serving 500 objects never
 * pauses for a minute.
 */
export const ListPageIdleTimeoutMs = 60_000;

/** The list's metadata: resourceVersion, and the continue token when more pages follow. */
export interface ListPageMetadata {
  resourceVersion?: string;
  continue?: string;
}

/**
 * GETs `path` (e.g. `/api/v1/pods`) with `query` (limit, continue, selectors) and calls `onItem`
 * on every item, in order.
 * @returns the list's metadata.
 * @throws ApiException (client-node's, `code` = HTTP status, `body` = the Status) for a non-2xx
 *   answer, as client-node's list calls do; the socket's error for a failed or stalled request.
 */
export async function listPage(
  kc: KubeConfig,
  path: string,
  query: Record<string, string | number | undefined>,
  onItem: (raw: any) => void,
): Promise<ListPageMetadata> {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('No currently active cluster');
  const url = new URL(cluster.server.replace(/\/$/, '') + path);
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') url.searchParams.set(k, String(v));
  const opts: RequestOptions = {};
  await kc.applyToHTTPSOptions(opts);
  const res = await get(url, { ...opts, headers: { ...opts.headers, accept: 'application/json', 'accept-encoding': 'gzip' } });
  const status = res.statusCode ?? 0;
  const body = res.headers['content-encoding'] === 'gzip' ? res.pipe(createGunzip()) : res;
  if (body !== res) res.on('error', (e) => body.destroy(e));
  if (status < 200 || status > 299) {
    const chunks: Buffer[] = [];
    for await (const c of body) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    let statusBody: unknown = text;
    try {
      statusBody = JSON.parse(text);
    } catch {
      // not a Status: keep the text
    }
    throw new ApiException(status, res.statusMessage ?? '', statusBody, res.headers as Record<string, string>);
  }
  const split = new ListItemSplitter((item) => onItem(JSON.parse(item)));
  for await (const c of body) split.write(c as Buffer);
  return (split.end() as { metadata?: ListPageMetadata }).metadata ?? {};
}

function get(url: URL, opts: RequestOptions): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = (url.protocol === 'http:' ? httpRequest : httpsRequest)(url, { ...opts, method: 'GET' }, resolve);
    req.setTimeout(ListPageIdleTimeoutMs, () => req.destroy(new Error(`list ${url.pathname}: no data for ${ListPageIdleTimeoutMs} ms`)));
    req.on('error', reject);
    req.end();
  });
}

const Quote = 0x22;
const Backslash = 0x5c;
const OpenBrace = 0x7b;
const CloseBrace = 0x7d;
const OpenBracket = 0x5b;
const CloseBracket = 0x5d;

/**
 * Splits the JSON text of a Kubernetes list (`{"kind":…,"metadata":{…},"items":[{…},{…}]}`), fed
 * as byte chunks in any cut, into the text of each item of the top-level `items` array, handed
 * over as soon as the item's last byte arrives; everything else (kind, apiVersion, metadata) is
 * kept and returned by {@link end} with `items: []`. So a page is never held whole: memory is one
 * item plus the chunk being read, and each item's parsed objects die young.
 *
 * Items must be objects or arrays (a Kubernetes list's always are). The input must be valid JSON
 * (it is the API server's); structural bytes are ASCII, so cutting UTF-8 between them is safe.
 */
export class ListItemSplitter {
  /** Nesting depth of objects / arrays at the scan position (1 inside the list object). */
  private depth = 0;
  private inString = false;
  /** The previous chunk ended inside a string on a backslash: its next byte is escaped. */
  private escaped = false;
  /** Between the `[` and `]` of the top-level `items` array. */
  private inItems = false;
  /** Parts of the item being read, from earlier chunks. */
  private itemParts: Buffer[] = [];
  private inItem = false;
  /** The list without its items' text. */
  private readonly envelope: Buffer[] = [];
  /** The last bytes of the envelope (latin1), to recognise the `"items":` key. */
  private tail = '';

  constructor(private readonly onItem: (text: string) => void) {}

  write(b: Buffer): void {
    const n = b.length;
    let i = 0;
    let itemStart = this.inItem ? 0 : -1;
    let envStart = this.inItems ? -1 : 0;
    let nextBackslash = -1;
    while (i < n) {
      if (this.inString) {
        if (this.escaped) {
          this.escaped = false;
          i++;
          continue;
        }
        if (nextBackslash < i) {
          nextBackslash = b.indexOf(Backslash, i);
          if (nextBackslash < 0) nextBackslash = n;
        }
        let q = b.indexOf(Quote, i);
        if (q < 0) q = n;
        if (nextBackslash < q) {
          if (nextBackslash === n - 1) {
            this.escaped = true;
            i = n;
          } else i = nextBackslash + 2;
          continue;
        }
        if (q === n) {
          i = n;
          continue;
        }
        this.inString = false;
        i = q + 1;
        continue;
      }
      const c = b[i];
      if (c === Quote) {
        this.inString = true;
      } else if (c === OpenBrace || c === OpenBracket) {
        if (this.inItems && this.depth === 2) {
          itemStart = i;
          this.inItem = true;
        } else if (c === OpenBracket && this.depth === 1 && !this.inItems && this.isItemsKey(b, envStart, i)) {
          this.inItems = true;
          this.keep(b, envStart, i + 1);
          envStart = -1;
        }
        this.depth++;
      } else if (c === CloseBrace || c === CloseBracket) {
        this.depth--;
        if (this.inItem && this.depth === 2) {
          this.emit(b.subarray(itemStart, i + 1));
          itemStart = -1;
        } else if (this.inItems && this.depth === 1) {
          this.inItems = false;
          envStart = i;
        }
      }
      i++;
    }
    if (this.inItem && itemStart >= 0) this.itemParts.push(b.subarray(itemStart));
    if (envStart >= 0) this.keep(b, envStart, n);
  }

  /** The list without its items (`items: []`), parsed. */
  end(): unknown {
    if (this.depth !== 0 || this.inString || this.inItem) throw new SyntaxError('list: the JSON text ended early');
    return JSON.parse(Buffer.concat(this.envelope).toString('utf8'));
  }

  private emit(last: Buffer): void {
    const parts = this.itemParts;
    const text = parts.length === 0 ? last.toString('utf8') : Buffer.concat([...parts, last]).toString('utf8');
    this.itemParts = [];
    this.inItem = false;
    this.onItem(text);
  }

  /** Keeps `b[from, to)` of the envelope (copied: the chunk need not stay alive). */
  private keep(b: Buffer, from: number, to: number): void {
    if (to <= from) return;
    this.envelope.push(Buffer.from(b.subarray(from, to)));
    this.tail = (this.tail + b.toString('latin1', Math.max(from, to - 32), to)).slice(-32);
  }

  /** Does the envelope, up to `b[i]` (a `[` at depth 1), end with the key `"items"` and its colon? */
  private isItemsKey(b: Buffer, envStart: number, i: number): boolean {
    const before = this.tail + b.toString('latin1', Math.max(envStart, i - 32), i);
    return /"items"\s*:\s*$/.test(before);
  }
}
