/**
 * DynamoDB stand-in: dynalite (a DynamoDB-compatible server on LevelDB) on a loopback port,
 * with nodefleet's one table created from `tableCreateInput` in shared/api/contract.ts — the
 * same definition the CDK stack uses. With a `path` the data persists (`.nodefleet/dynamodb`),
 * so `status` / `history` can read what the last run left.
 *
 * Table creation speaks DynamoDB's JSON protocol directly (dynalite checks that a SigV4
 * `Authorization` header is present, not the signature), so infra/local needs no AWS SDK.
 */
import { createRequire } from 'node:module';
import { mkdirSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tableCreateInput } from '../../shared/api/contract.ts';

const require = createRequire(import.meta.url);

/** Real ms without a request in flight before dynalite is closed, and the most stop() waits for it. */
const StopQuietMs = 150;
const StopQuietMaxMs = 5000;

/** Default table name of the embedded environment. */
export const LocalTableName = 'nodefleet-local';

/** A running dynalite. */
export interface LocalDynamo {
  /** http://127.0.0.1:<port> — use as NODEFLEET_DYNAMODB_ENDPOINT. */
  endpoint: string;
  tableName: string;
  /** Calls DynamoDB operation `op` (JSON protocol) and returns the parsed response. */
  call(op: string, input: unknown): Promise<any>;
  stop(): Promise<void>;
}

/** A DynamoDB JSON-protocol error response. */
export class LocalDynamoError extends Error {
  override name = 'LocalDynamoError';
  constructor(
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Starts dynalite and makes sure the table exists.
 * @param opts.path LevelDB folder to persist in (created if missing); absent = in memory.
 * @param opts.port 0 (default) = any free port.
 */
export async function startLocalDynamo(opts: { path?: string; port?: number; tableName?: string; region?: string } = {}): Promise<LocalDynamo> {
  const dynalite = require('dynalite') as (o: Record<string, unknown>) => Server;
  if (opts.path) mkdirSync(opts.path, { recursive: true });
  // createTableMs 0: the table is ACTIVE at once (AWS takes seconds; nothing here depends on it).
  const server = dynalite({ path: opts.path, createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => resolve());
  });
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const region = opts.region ?? 'us-east-1';
  const call = async (op: string, input: unknown): Promise<any> => {
    const res = await fetch(endpoint, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-amz-json-1.0',
        'x-amz-target': `DynamoDB_20120810.${op}`,
        'x-amz-date': '20260101T000000Z',
        authorization: `AWS4-HMAC-SHA256 Credential=local/20260101/${region}/dynamodb/aws4_request, SignedHeaders=host;x-amz-date, Signature=00`,
      },
      body: JSON.stringify(input),
    });
    const out = (await res.json()) as Record<string, any>;
    if (!res.ok)
      throw new LocalDynamoError(
        String(out.__type ?? '')
          .split('#')
          .pop() ?? 'Error',
        String(out.message ?? out.Message ?? res.statusText),
      );
    return out;
  };
  const tableName = opts.tableName ?? LocalTableName;
  try {
    await call('CreateTable', tableCreateInput(tableName));
  } catch (err) {
    if (!(err instanceof LocalDynamoError && err.type === 'ResourceInUseException')) {
      server.close();
      throw err;
    }
  }
  // Requests being served: the database must not close under one (dynalite throws from its
  // callbacks when it does), so stop() waits for a quiet moment first.
  let active = 0;
  server.on('request', (_req, res) => {
    active += 1;
    res.once('close', () => (active -= 1));
  });
  const quiet = async (): Promise<void> => {
    const until = Date.now() + StopQuietMaxMs;
    let quietSince = active === 0 ? Date.now() : undefined;
    while (Date.now() < until) {
      if (active === 0) {
        quietSince ??= Date.now();
        if (Date.now() - quietSince >= StopQuietMs) return;
      } else quietSince = undefined;
      await new Promise((r) => setTimeout(r, 10));
    }
  };
  return {
    endpoint,
    tableName,
    call,
    stop: async () => {
      await quiet();
      await new Promise<void>((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      });
    },
  };
}
