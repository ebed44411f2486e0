/**
 * DynamoNodeClaimStore against dynalite (a DynamoDB implementation: key conditions, the sparse
 * local secondary index, ConsistentRead on it, consumed capacity); apart from
 * dynamo-node-claim-store.test.ts, whose aws-sdk-client-mock replaces every document client of the
 * process.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoNodeClaimStore } from '../../../shared/aws/dynamo-node-claim-store.ts';
import { InMemoryNodeClaimStore, nodeClaim } from '../../fakes/index.ts';
import { startLocalDynamo, type LocalDynamo } from '../../../infra/local/dynamo.ts';
import { createClients } from '../../../shared/aws/clients.ts';
import { Table, keys } from '../../../shared/api/contract.ts';
import { setCondition, type NodeClaim } from '../../../shared/api/nodeclaim.ts';

let local: LocalDynamo;
let clients: ReturnType<typeof createClients>;
beforeAll(async () => {
  process.env.AWS_ACCESS_KEY_ID ??= 'local';
  process.env.AWS_SECRET_ACCESS_KEY ??= 'local';
  local = await startLocalDynamo();
  clients = createClients({ region: 'us-east-1', dynamodbEndpoint: local.endpoint });
});
afterAll(() => local.stop());

const initialized = (name: string, at: string) => ({
  ...nodeClaim({ name, phase: 'Initialized' }),
  conditions: [{ type: 'Initialized' as const, status: 'True' as const, lastTransitionTime: at }],
});

/** Names of the cluster's claims in the in-flight index, whatever their key: read straight from the index, consistently. */
async function indexed(cluster: string): Promise<string[]> {
  const out = await clients.doc.send(
    new QueryCommand({
      TableName: local.tableName,
      IndexName: Table.inFlightIndex,
      KeyConditionExpression: '#pk = :pk',
      ExpressionAttributeNames: { '#pk': Table.partitionKey },
      ExpressionAttributeValues: { ':pk': keys.cluster(cluster) },
      ConsistentRead: true,
    }),
  );
  return (out.Items ?? []).map((i) => String(i[Table.sortKey]).slice(keys.nodeClaim('').length)).sort();
}

describe('DynamoNodeClaimStore.listInFlight (dynalite: the sparse in-flight LSI read consistently)', () => {
  it('returns claims not yet initialized and those initialized since the time, never older or terminating ones', async () => {
    // Prepare
    const s = new DynamoNodeClaimStore(clients.doc, local.tableName, 'c1');
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
    // the index holds the four in flight (old sorts below the time); the terminating one is not in it
    expect(await indexed('c1')).toEqual(['fresh', 'launched', 'old', 'pending']);
    // the in-memory store follows the same rule
    const mem = new InMemoryNodeClaimStore(await s.list());
    expect((await mem.listInFlight(Date.parse('2026-01-01T00:09:00Z'))).map((c) => c.name).sort()).toEqual(['fresh', 'launched', 'pending']);
  });

  it('a claim moving through its phases enters the index when created and leaves it in the write that ends its flight', async () => {
    // Prepare
    const s = new DynamoNodeClaimStore(clients.doc, local.tableName, 'c2');
    const since = Date.parse('2026-01-01T00:09:00Z');
    const seen: Record<string, { listed: boolean; indexed: boolean }> = {};
    const observe = async (label: string) => {
      seen[label] = { listed: (await s.listInFlight(since)).some((c) => c.name === 'a'), indexed: (await indexed('c2')).includes('a') };
    };
    // Act: the writes the provisioner, registration and termination make (store.update each)
    let c: NodeClaim = await s.create(nodeClaim({ name: 'a', phase: 'Pending' }));
    await observe('Pending');
    c = await s.update({ ...c, phase: 'Launched', instanceId: 'i-1' });
    await observe('Launched');
    c = await s.update({ ...c, phase: 'Registered' });
    await observe('Registered');
    c = await s.update({ ...setCondition(c, 'Initialized', 'True', '2026-01-01T00:10:00.000Z'), phase: 'Initialized' });
    await observe('Initialized');
    seen['Initialized, read past the window'] = {
      listed: (await s.listInFlight(Date.parse('2026-01-01T00:11:00Z'))).some((x) => x.name === 'a'),
      indexed: (await indexed('c2')).includes('a'),
    };
    c = await s.update({ ...c, phase: 'Terminating' });
    await observe('Terminating');
    await s.update({ ...c, phase: 'Terminated', retainUntil: '2026-01-01T01:10:00.000Z' });
    await observe('Terminated');
    await s.delete('a');
    await observe('deleted (expired)');
    // Assess
    expect(seen).toEqual({
      Pending: { listed: true, indexed: true },
      Launched: { listed: true, indexed: true },
      Registered: { listed: true, indexed: true },
      Initialized: { listed: true, indexed: true },
      'Initialized, read past the window': { listed: false, indexed: true },
      Terminating: { listed: false, indexed: false },
      Terminated: { listed: false, indexed: false },
      'deleted (expired)': { listed: false, indexed: false },
    });
    expect((await s.list()).map((x) => x.name)).toEqual([]);
  });

  it('a Failed claim (launch gave up) leaves the index too', async () => {
    const s = new DynamoNodeClaimStore(clients.doc, local.tableName, 'c3');
    const c = await s.create(nodeClaim({ name: 'a', phase: 'Pending' }));
    await s.update({ ...c, phase: 'Failed', lastError: 'InsufficientInstanceCapacity' });
    expect(await indexed('c3')).toEqual([]);
    expect(await s.listInFlight(0)).toEqual([]);
  });

  it('reads (and is charged for) the claims in flight only: 200 claims initialized long ago cost nothing', async () => {
    // Prepare: 2 claims in flight; the store's Query calls record what DynamoDB read and charged
    const { doc } = createClients({ region: 'us-east-1', dynamodbEndpoint: local.endpoint });
    const reads: { units: number; scanned: number }[] = [];
    doc.middlewareStack.add(
      (next, context) => async (a) => {
        if (context.commandName !== 'QueryCommand') return next(a);
        (a.input as Record<string, unknown>).ReturnConsumedCapacity = 'TOTAL';
        const out = await next(a);
        const o = out.output as { ConsumedCapacity?: { CapacityUnits?: number }; ScannedCount?: number };
        reads.push({ units: o.ConsumedCapacity?.CapacityUnits ?? NaN, scanned: o.ScannedCount ?? NaN });
        return out;
      },
      { step: 'initialize', name: 'testReadUnits' },
    );
    const s = new DynamoNodeClaimStore(doc, local.tableName, 'c4');
    const since = Date.parse('2026-01-01T00:09:00Z');
    await s.create(nodeClaim({ name: 'pending', phase: 'Pending' }));
    await s.create(initialized('fresh', '2026-01-01T00:10:00Z'));
    const before = (await s.listInFlight(since), reads.splice(0));
    // Act
    for (let i = 0; i < 200; i++) await s.create(initialized(`old-${i}`, '2026-01-01T00:00:00Z'));
    const got = await s.listInFlight(since);
    const after = reads.splice(0);
    // Assess: one page, two items read, the same units as before the 200
    expect(got.map((c) => c.name).sort()).toEqual(['fresh', 'pending']);
    expect(after).toEqual([{ units: 1, scanned: 2 }]);
    expect(after).toEqual(before);
    expect((await s.list()).length).toBe(202);
    expect(reads.splice(0)[0].units).toBeGreaterThan(after[0].units * 10);
  });
});

describe("DynamoNodeClaimStore claims epoch (dynalite: the meta item gc's orphan guard reads)", () => {
  const epochItem = async (cluster: string) =>
    (
      await clients.doc.send(
        new GetCommand({
          TableName: local.tableName,
          Key: { [Table.partitionKey]: keys.cluster(cluster), [Table.sortKey]: keys.claimsEpoch() },
          ConsistentRead: true,
        }),
      )
    ).Item;
  const t = (iso: string) => Date.parse(iso);

  it('is recorded once, by the first of concurrent callers, and read back by every later one', async () => {
    // Prepare: five gc passes (or stores) racing on an empty partition, each with its own now
    const nows = [1, 2, 3, 4, 5].map((m) => t(`2026-03-01T00:0${m}:00Z`));
    // Act
    const got = await Promise.all(nows.map((now) => new DynamoNodeClaimStore(clients.doc, local.tableName, 'e1').claimsEpochMs(now)));
    const later = await new DynamoNodeClaimStore(clients.doc, local.tableName, 'e1').claimsEpochMs(t('2026-03-02T00:00:00Z'));
    // Assess: one value for all, one of theirs, stored as the item's createdAt; the item is no claim
    expect(new Set(got).size).toBe(1);
    expect(nows).toContain(got[0]);
    expect(later).toBe(got[0]);
    expect(await epochItem('e1')).toMatchObject({ type: 'ClaimsEpoch', createdAt: new Date(got[0]).toISOString() });
    expect(await new DynamoNodeClaimStore(clients.doc, local.tableName, 'e1').list()).toEqual([]);
    expect(await indexed('e1')).toEqual([]);
  });

  it('the first claim written records it as its createdAt; later claims and an existing epoch are never overwritten', async () => {
    // Prepare
    const s = new DynamoNodeClaimStore(clients.doc, local.tableName, 'e2');
    // Act
    await s.create(nodeClaim({ name: 'first', createdAt: '2026-03-01T10:00:00.000Z' }));
    await s.create(nodeClaim({ name: 'second', createdAt: '2026-03-01T11:00:00.000Z' }));
    // Assess
    expect(await s.claimsEpochMs(t('2026-03-01T12:00:00Z'))).toBe(t('2026-03-01T10:00:00Z'));
    expect((await s.list()).map((c) => c.name).sort()).toEqual(['first', 'second']);

    // An epoch already there (written by gc, here directly) is kept by a create's conditional put
    await clients.doc.send(
      new PutCommand({
        TableName: local.tableName,
        Item: { [Table.partitionKey]: keys.cluster('e3'), [Table.sortKey]: keys.claimsEpoch(), type: 'ClaimsEpoch', createdAt: '2026-02-01T00:00:00.000Z' },
      }),
    );
    const s3 = new DynamoNodeClaimStore(clients.doc, local.tableName, 'e3');
    await s3.create(nodeClaim({ name: 'later', createdAt: '2026-03-01T10:00:00.000Z' }));
    expect(await s3.claimsEpochMs(t('2026-03-01T12:00:00Z'))).toBe(t('2026-02-01T00:00:00Z'));
    // each cluster's partition has its own epoch
    expect(await epochItem('e4')).toBeUndefined();
  });
});

describe('DynamoNodeClaimStore: a malformed item is skipped and reported, never fatal (security review F5)', () => {
  it('list, listInFlight, get and getByInstanceId skip an item that does not parse and report its key and first problem', async () => {
    // Prepare: one good claim, and two items a bad write (or a hand edit) left behind
    const seen: { key: string; problem: string }[] = [];
    const s = new DynamoNodeClaimStore(clients.doc, local.tableName, 'm1', (m) => seen.push(m));
    await s.create(nodeClaim({ name: 'good', phase: 'Launched', instanceId: 'i-0000000000000good' }));
    const put = (name: string, extra: Record<string, unknown>) =>
      clients.doc.send(
        new PutCommand({
          TableName: local.tableName,
          Item: { [Table.partitionKey]: keys.cluster('m1'), [Table.sortKey]: keys.nodeClaim(name), type: 'NodeClaim', ...extra },
        }),
      );
    const bad = { ...nodeClaim({ name: 'bad-phase', instanceId: 'i-00000000000000bad' }), phase: 'Exploded' };
    await put('bad-phase', { version: 0, phase: 'Exploded', [Table.inFlightAttribute]: 0, [Table.instanceIdAttribute]: 'i-00000000000000bad', claim: bad });
    await put('no-claim', { version: 'x' });
    // Act
    const listed = await s.list();
    const inFlight = await s.listInFlight(0);
    const got = await s.get('bad-phase');
    const byInstance = await s.getByInstanceId('i-00000000000000bad');
    // Assess: the good claim is still read everywhere; each bad read is reported with its key and its first problem
    expect(listed.map((c) => c.name)).toEqual(['good']);
    expect(inFlight.map((c) => c.name)).toEqual(['good']);
    expect(got).toBeUndefined();
    expect(byInstance).toBeUndefined();
    expect(await s.get('good')).toMatchObject({ name: 'good', version: 0 });
    expect(seen.filter((m) => m.key === keys.nodeClaim('no-claim'))[0]?.problem).toMatch(/^claim: /);
    const phaseProblems = seen.filter((m) => m.key === keys.nodeClaim('bad-phase'));
    expect(phaseProblems.length).toBeGreaterThanOrEqual(3); // list, listInFlight, get (and getByInstanceId's get)
    expect(phaseProblems[0].problem).toMatch(/^claim\.phase: /);
  });
});
