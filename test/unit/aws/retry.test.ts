import { afterEach, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { createClients } from '../../../shared/aws/clients.ts';
import { SdkMaxAttempts, SdkThrottlingBackoffBaseMs, SleepingRetryStrategy } from '../../../shared/aws/retry.ts';

/** A DynamoDB endpoint that throttles the first `throttled` requests, then answers ListTables. */
async function throttlingDynamo(throttled: number): Promise<{ endpoint: string; requests: () => number; server: Server }> {
  let n = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      n += 1;
      res.setHeader('content-type', 'application/x-amz-json-1.0');
      if (n <= throttled) {
        res.statusCode = 400;
        res.end(
          JSON.stringify({ __type: 'com.amazonaws.dynamodb.v20120810#ThrottlingException', message: 'Rate of requests exceeds the allowed throughput.' }),
        );
      } else res.end(JSON.stringify({ TableNames: ['t'] }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests: () => n, server };
}

describe('SDK retries', () => {
  let server: Server | undefined;
  afterEach(() => server?.close());

  it("a throttled call waits each retry's backoff through the clients' sleep (the embedded environment's clock), then succeeds", async () => {
    // Arrange
    process.env.AWS_ACCESS_KEY_ID ??= 'local';
    process.env.AWS_SECRET_ACCESS_KEY ??= 'local';
    const d = await throttlingDynamo(SdkMaxAttempts - 1);
    server = d.server;
    const slept: number[] = [];
    const clients = createClients({ region: 'us-east-1', dynamodbEndpoint: d.endpoint, sleep: async (ms) => void slept.push(ms) });
    // Act
    const out = await clients.dynamodb.send(new ListTablesCommand({}));
    // Assess
    expect(out.TableNames).toEqual(['t']);
    expect(d.requests()).toBe(SdkMaxAttempts);
    expect(slept).toHaveLength(SdkMaxAttempts - 1);
    slept.forEach((ms, retry) => expect(ms).toBeLessThan(SdkThrottlingBackoffBaseMs * 2 ** retry));
  });

  it('backoff is full jitter over base × 2^retry: throttling from 1 s, other retryable errors from 50 ms, 3 attempts in all', async () => {
    const s = new SleepingRetryStrategy(
      async () => {},
      () => 0.999,
    );
    expect([0, 1, 2].map((r) => s.backoffMs(r, true))).toEqual([999, 1998, 3996]);
    expect([0, 1].map((r) => s.backoffMs(r, false))).toEqual([49, 99]);
    const t0 = await s.acquireInitialRetryToken();
    const t1 = await s.refreshRetryTokenForRetry(t0, { errorType: 'TRANSIENT' });
    const t2 = await s.refreshRetryTokenForRetry(t1, { errorType: 'THROTTLING' });
    expect(t2.getRetryCount()).toBe(SdkMaxAttempts - 1);
    await expect(s.refreshRetryTokenForRetry(t2, { errorType: 'THROTTLING' })).rejects.toThrow('No retry token');
    await expect(s.refreshRetryTokenForRetry(t0, { errorType: 'CLIENT_ERROR' })).rejects.toThrow('No retry token');
  });
});
