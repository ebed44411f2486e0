import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startLocalDynamo } from './dynamo.ts';

describe('startLocalDynamo', () => {
  it('creates the contract table with its GSI and LSI and keeps items across restarts when given a path', async () => {
    // Prepare
    const dir = mkdtempSync(join(tmpdir(), 'nodefleet-dynamo-'));
    try {
      const a = await startLocalDynamo({ path: dir });
      // Act
      const d = await a.call('DescribeTable', { TableName: a.tableName });
      await a.call('PutItem', { TableName: a.tableName, Item: { pk: { S: 'CLUSTER#c' }, sk: { S: 'NODECLAIM#default-abcde' }, instanceId: { S: 'i-0abc' } } });
      await a.stop();
      const b = await startLocalDynamo({ path: dir });
      const q = await b.call('Query', {
        TableName: b.tableName,
        IndexName: 'byInstanceId',
        KeyConditionExpression: 'instanceId = :i',
        ExpressionAttributeValues: { ':i': { S: 'i-0abc' } },
      });
      await b.stop();
      // Assess
      expect(d.Table.KeySchema).toEqual([
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ]);
      expect(d.Table.GlobalSecondaryIndexes[0].IndexName).toBe('byInstanceId');
      expect(d.Table.LocalSecondaryIndexes.map((i: any) => [i.IndexName, i.KeySchema, i.Projection])).toEqual([
        [
          'inFlight',
          [
            { AttributeName: 'pk', KeyType: 'HASH' },
            { AttributeName: 'inFlightKeyMs', KeyType: 'RANGE' },
          ],
          { ProjectionType: 'ALL' },
        ],
      ]);
      expect(q.Items.map((i: any) => i.sk.S)).toEqual(['NODECLAIM#default-abcde']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
