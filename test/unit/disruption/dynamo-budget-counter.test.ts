import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { startLocalDynamo, type LocalDynamo } from '../../../infra/local/dynamo.ts';
import { DynamoBudgetCounter } from '../../../shared/aws/dynamo-budget-counter.ts';

let dynamo: LocalDynamo;
let doc: DynamoDBDocumentClient;

beforeAll(async () => {
  // dynalite on a free loopback port, the table from shared/api/contract.ts.
  dynamo = await startLocalDynamo({ tableName: 'budget-test' });
  const client = new DynamoDBClient({ region: 'us-east-1', endpoint: dynamo.endpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  doc = DynamoDBDocumentClient.from(client);
}, 30_000);

afterAll(async () => {
  await dynamo?.stop();
});

describe('DynamoBudgetCounter', () => {
  it('takes up to allowed slots, is idempotent per holder, and releases', async () => {
    const counter = new DynamoBudgetCounter(doc, dynamo.tableName, 'c1');
    expect(await counter.take('default', 'claim-a', 1, '2026-03-02T10:00:00Z')).toBe(true);
    expect(await counter.take('default', 'claim-b', 1, '2026-03-02T10:00:01Z')).toBe(false);
    // the same holder again (a retried run) keeps its one slot
    expect(await counter.take('default', 'claim-a', 1, '2026-03-02T10:00:02Z')).toBe(true);
    expect(await counter.holders('default')).toEqual({ 'claim-a': '2026-03-02T10:00:00Z' });

    await counter.release('default', 'claim-a');
    await counter.release('default', 'claim-a'); // absent = success, no double decrement
    expect(await counter.holders('default')).toEqual({});
    expect(await counter.take('default', 'claim-b', 1, '2026-03-02T10:01:00Z')).toBe(true);
    const item = await dynamo.call('GetItem', {
      TableName: dynamo.tableName,
      Key: { pk: { S: 'CLUSTER#c1' }, sk: { S: 'BUDGET#default' } },
      ConsistentRead: true,
    });
    expect(item.Item.inFlight).toEqual({ N: '1' });
  });

  it('a budget of 0 never gives a slot; releasing an unknown pool is fine', async () => {
    const counter = new DynamoBudgetCounter(doc, dynamo.tableName, 'c2');
    expect(await counter.take('zero', 'claim-x', 0, '2026-03-02T10:00:00Z')).toBe(false);
    await expect(counter.release('never-seen', 'claim-x')).resolves.toBeUndefined();
  });

  it('concurrent takes against a budget of 2 from 6 holders give exactly 2 slots', async () => {
    const counter = new DynamoBudgetCounter(doc, dynamo.tableName, 'c3');
    const results = await Promise.all(['a', 'b', 'c', 'd', 'e', 'f'].map((h) => counter.take('busy', `claim-${h}`, 2, '2026-03-02T10:00:00Z')));
    expect(results.filter(Boolean)).toHaveLength(2);
    expect(Object.keys(await counter.holders('busy'))).toHaveLength(2);
  });
});
