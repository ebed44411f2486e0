/**
 * S3 stand-in: s3rver (an S3-compatible server on the file system) on a loopback port, with
 * nodefleet's cluster-view bucket created. The agent writes the cluster view to it and the
 * functions read it through the real @aws-sdk/client-s3 (path-style, endpoint override
 * `NODEFLEET_S3_ENDPOINT`), as they do S3 in AWS. s3rver knows one access key of its own; the
 * process's local credentials (`AWS_ACCESS_KEY_ID`, default "local", never real ones here) are
 * registered with its account so the SDK's signed requests are accepted.
 */
import { createRequire } from 'node:module';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';

const require = createRequire(import.meta.url);

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
  const server = new S3rver({ address: '127.0.0.1', port: opts.port ?? 0, silent: true, directory, configureBuckets: [{ name: bucket }] }) as InstanceType<typeof S3rver> & { logger?: { silent: boolean } };
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
