/**
 * S3 stand-in: s3rver (an S3-compatible server on the file system) on a loopback port, with
 * nodefleet's cluster-view bucket created. The agent writes the cluster view to it and the
 * functions read it through the real @aws-sdk/client-s3 (path-style, endpoint override
 * `NODEFLEET_S3_ENDPOINT`), as they do S3 in AWS. s3rver knows one access key of its own; the
 * process's local credentials (`AWS_ACCESS_KEY_ID`, default "local", never real ones here) are
 * registered with its account so the SDK's signed requests are accepted.
 *
 * A PUT is atomic, as in S3: s3rver's own store truncates the object file and writes into it, then
 * its md5 (the ETag) and metadata, so a GET meanwhile read a half-written body (the reader saw
 * "aborted") or the new body under the old ETag. Here the body is written whole to a temporary
 * file, then swapped in (rename) with its md5 and metadata while no GET of that key is reading
 * them; a GET holds an open file, so it reads the body it found to the end.
 */
import { createRequire } from 'node:module';
import { createWriteStream, mkdirSync, mkdtempSync } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { dirname } from 'node:path';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';

const require = createRequire(import.meta.url);

/** The parts of s3rver's FilesystemStore (lib/stores/filesystem.js) the atomic store uses. */
interface S3rverStore {
  getResourcePath(bucket: string, key: string, resource: string): string;
  putMetadata(bucket: string, key: string, metadata: Record<string, string>, md5: string): Promise<void>;
  getObject(bucket: string, key: string, options?: unknown): Promise<unknown>;
}
type S3rverObject = { bucket: string; key: string; metadata: Record<string, string>; content: Buffer | NodeJS.ReadableStream };
type StoreClass = new (directory: string) => S3rverStore;

let temporaries = 0;

/** s3rver's store with atomic PUTs (module doc): whole body to a temporary file, then swapped in. */
function atomicStore(Base: StoreClass): StoreClass {
  return class AtomicStore extends Base {
    /** Per object: the tail of its swaps and reads, run one at a time. */
    private readonly turns = new Map<string, Promise<unknown>>();

    private inTurn<T>(bucket: string, key: string, fn: () => Promise<T>): Promise<T> {
      const id = `${bucket}/${key}`;
      const run = (this.turns.get(id) ?? Promise.resolve()).then(fn, fn);
      const tail = run.catch(() => undefined);
      this.turns.set(id, tail);
      void tail.then(() => this.turns.get(id) === tail && this.turns.delete(id));
      return run;
    }

    async putObject(object: S3rverObject): Promise<{ size: number; md5: string }> {
      const objectPath = this.getResourcePath(object.bucket, object.key, 'object');
      await mkdir(dirname(objectPath), { recursive: true });
      const temporary = `${objectPath}.${process.pid}-${++temporaries}.partial`;
      const hash = createHash('md5');
      let size = 0;
      try {
        if (Buffer.isBuffer(object.content)) {
          hash.update(object.content);
          size = object.content.length;
          await writeFile(temporary, object.content);
        } else {
          const count = new Transform({ transform: (chunk: Buffer, _enc, done) => (hash.update(chunk), (size += chunk.length), done(null, chunk)) });
          await pipeline(object.content, count, createWriteStream(temporary));
        }
      } catch (err) {
        await rm(temporary, { force: true });
        throw err;
      }
      const md5 = hash.digest('hex');
      await this.inTurn(object.bucket, object.key, async () => {
        await rename(temporary, objectPath);
        await this.putMetadata(object.bucket, object.key, object.metadata, md5);
      });
      return { size, md5 };
    }

    override getObject(bucket: string, key: string, options?: unknown): Promise<unknown> {
      // Resolves once the body's file is open: a later swap cannot change what this GET reads.
      return this.inTurn(bucket, key, () => super.getObject(bucket, key, options));
    }
  };
}

/** The embedded environment's view bucket (NODEFLEET_VIEW_BUCKET). */
export const LocalViewBucket = 'nodefleet-local-view';

export interface LocalS3 {
  /** http://127.0.0.1:<port> — use as NODEFLEET_S3_ENDPOINT. */
  endpoint: string;
  bucket: string;
  stop(): Promise<void>;
}

/**
 * Starts s3rver with the bucket.
 * @param opts.directory where objects live (created if missing); default a fresh temporary folder.
 */
export async function startLocalS3(opts: { directory?: string; bucket?: string; port?: number } = {}): Promise<LocalS3> {
  const S3rver = require('s3rver') as new (o: Record<string, unknown>) => { run(): Promise<AddressInfo>; close(): Promise<void>; httpServer?: Server };
  const directory = opts.directory ?? mkdtempSync(join(tmpdir(), 'nodefleet-s3-'));
  mkdirSync(directory, { recursive: true });
  const bucket = opts.bucket ?? LocalViewBucket;
  const account = require('s3rver/lib/models/account.js') as { DUMMY_ACCOUNT: { createKeyPair(id: string, secret: string): void } };
  account.DUMMY_ACCOUNT.createKeyPair(process.env.AWS_ACCESS_KEY_ID ?? 'local', process.env.AWS_SECRET_ACCESS_KEY ?? 'local');
  const server = new S3rver({ address: '127.0.0.1', port: opts.port ?? 0, silent: true, directory, configureBuckets: [{ name: bucket }] }) as InstanceType<
    typeof S3rver
  > & { logger?: { silent: boolean }; store: S3rverStore; context: { store: S3rverStore } };
  const Store = atomicStore(require('s3rver/lib/stores/filesystem.js') as StoreClass);
  server.store = server.context.store = new Store(directory);
  // `silent` silences s3rver's console transport, but a request answered after close() (which
  // removes the transports) still made winston print "Attempt to write logs with no transports".
  if (server.logger) server.logger.silent = true;
  const address = await server.run();
  return {
    endpoint: `http://127.0.0.1:${address.port}`,
    bucket,
    stop: async () => {
      server.httpServer?.closeAllConnections?.();
      await server.close().catch(() => {});
    },
  };
}
