/**
 * DynamoNodeClaimStore against dynalite (a DynamoDB implementation that evaluates the filter
 * expression); apart from dynamo-node-claim-store.test.ts, whose aws-sdk-client-mock replaces
 * every document client of the process.
 */
import { describe, expect, it } from 'vitest';
import { DynamoNodeClaimStore } from '../../../shared/aws/dynamo-node-claim-store.ts';
import { InMemoryNodeClaimStore, nodeClaim } from '../../fakes/index.ts';
import { startLocalDynamo } from '../../../infra/local/dynamo.ts';
import { createClients } from '../../../shared/aws/clients.ts';

describe('DynamoNodeClaimStore.listInFlight (dynalite: the filter evaluated by a DynamoDB implementation)', () => {
  it('returns claims not yet initialized and those initialized since the time, never older or terminating ones', async () => {
    // Prepare
    process.env.AWS_ACCESS_KEY_ID ??= 'local';
    process.env.AWS_SECRET_ACCESS_KEY ??= 'local';
    const local = await startLocalDynamo();
    try {
      const { doc: realDoc } = createClients({ region: 'us-east-1', dynamodbEndpoint: local.endpoint });
      const s = new DynamoNodeClaimStore(realDoc, local.tableName, 'c1');
      const initialized = (name: string, at: string) => ({ ...nodeClaim({ name, phase: 'Initialized' }), conditions: [{ type: 'Initialized' as const, status: 'True' as const, lastTransitionTime: at }] });
      await s.create(nodeClaim({ name: 'pending', phase: 'Pending' }));
      await s.create(nodeClaim({ name: 'launched', phase: 'Launched' }));
      await s.create(initialized('fresh', '2026-01-01T00:10:00Z'));
      await s.create(initialized('old', '2026-01-01T00:00:00Z'));
      await s.create(nodeClaim({ name: 'going', phase: 'Terminating' }));
      // Act
      const got = await s.listInFlight(Date.parse('2026-01-01T00:09:00Z'));
      // Assess
      expect(got.map((c) => c.name).sort()).toEqual(['fresh', 'launched', 'pending']);
      expect((await s.list()).length).toBe(5);
      // the in-memory store follows the same rule
      const mem = new InMemoryNodeClaimStore(await s.list());
      expect((await mem.listInFlight(Date.parse('2026-01-01T00:09:00Z'))).map((c) => c.name).sort()).toEqual(['fresh', 'launched', 'pending']);
    } finally {
      await local.stop();
    }
  });
});
