/**
 * ClusterViewStore (shared/api/ports.ts) over S3: one object per cluster
 * (`clusters/<cluster>/view.json.gz`, contract.ts `clusterViewKey`). Reads are conditional on the
 * ETag the caller holds (If-None-Match → 304 → `'unchanged'`, nothing transferred). An object
 * larger than MaxViewGzipBytes is refused before it is read (ContentLength), and the read stops
 * there whatever the header says.
 *
 * IAM: the agent needs s3:PutObject on the key; functions s3:GetObject.
 */
import { GetObjectCommand, PutObjectCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import type { ClusterViewStore } from '../api/ports.ts';
import { NodefleetError, TransientError } from '../api/errors.ts';
import { clusterViewKey } from '../api/contract.ts';
import { ClusterViewTooLargeError, MaxViewGzipBytes } from '../api/cluster-view.ts';

function statusOf(err: unknown): number | undefined {
  return (err as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode;
}

function mapError(err: unknown, what: string): Error {
  const status = statusOf(err);
  if (status === undefined || status === 429 || status === 503 || status >= 500)
    return new TransientError(`${what}: ${status ? `HTTP ${status}` : ((err as Error)?.message ?? String(err))}`, { cause: err });
  return new NodefleetError(`${what}: HTTP ${status} ${(err as S3ServiceException)?.name ?? ''}`.trim(), { cause: err });
}

export class S3ClusterViewStore implements ClusterViewStore {
  private readonly key: string;

  constructor(
    private readonly s3: S3Client,
    private readonly bucket: string,
    cluster: string,
  ) {
    this.key = clusterViewKey(cluster);
  }

  async put(body: Uint8Array): Promise<void> {
    try {
      await this.s3.send(new PutObjectCommand({ Bucket: this.bucket, Key: this.key, Body: body, ContentType: 'application/json', ContentEncoding: 'gzip' }));
    } catch (err) {
      throw mapError(err, `put s3://${this.bucket}/${this.key}`);
    }
  }

  /** @throws ClusterViewTooLargeError past `maxBytes` (default MaxViewGzipBytes). */
  async get(etag?: string, maxBytes = MaxViewGzipBytes): Promise<{ body: Uint8Array; etag: string } | 'unchanged' | undefined> {
    try {
      const out = await this.s3.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.key, ...(etag ? { IfNoneMatch: etag } : {}) }));
      const body = await readAtMost(
        out.Body as unknown as AsyncIterable<Uint8Array> & { destroy?: () => void },
        out.ContentLength,
        maxBytes,
        `s3://${this.bucket}/${this.key}`,
      );
      return { body, etag: out.ETag ?? '' };
    } catch (err) {
      if (err instanceof ClusterViewTooLargeError) throw err;
      const status = statusOf(err);
      if (status === 304) return 'unchanged';
      if (status === 404 || (err as Error)?.name === 'NoSuchKey') return undefined;
      throw mapError(err, `get s3://${this.bucket}/${this.key}`);
    }
  }
}

/** The stream's bytes, refused past `maxBytes` (first by its declared length, then as it is read). */
async function readAtMost(
  body: AsyncIterable<Uint8Array> & { destroy?: () => void },
  declared: number | undefined,
  maxBytes: number,
  what: string,
): Promise<Uint8Array> {
  const tooLarge = (n: number | string) => {
    body.destroy?.();
    return new ClusterViewTooLargeError(`cluster view object ${what} is ${n} bytes (cap ${maxBytes})`);
  };
  if (declared !== undefined && declared > maxBytes) throw tooLarge(declared);
  const chunks: Uint8Array[] = [];
  let total = 0;
  for await (const c of body) {
    total += c.byteLength;
    if (total > maxBytes) throw tooLarge(`more than ${maxBytes}`);
    chunks.push(c);
  }
  return Buffer.concat(chunks);
}

/**
 * The store with its own S3 client, for the agent (which has no composition root of functions;
 * as createEventBridgePublisher). `endpoint`: an S3-compatible server, addressed path-style.
 */
export function createS3ClusterViewStore(opts: { region: string; bucket: string; cluster: string; endpoint?: string }): S3ClusterViewStore {
  const s3 = new S3Client({ region: opts.region, ...(opts.endpoint ? { endpoint: opts.endpoint, forcePathStyle: true } : {}) });
  return new S3ClusterViewStore(s3, opts.bucket, opts.cluster);
}
