import { beforeEach, describe, expect, it } from 'vitest';
import { mockClient } from 'aws-sdk-client-mock';
import { ConditionalCheckFailedException, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoNodeClaimStore } from '../../../shared/aws/dynamo-node-claim-store.ts';
import { DynamoUnavailableOfferings } from '../../../shared/aws/dynamo-unavailable-offerings.ts';
import { UnavailableOfferingsTtlSeconds } from '../../../shared/api/ports.ts';
import { ConflictError, TransientError } from '../../../shared/api/errors.ts';
import { nodeClaim } from '../../fakes/index.ts';

const ddb = mockClient(DynamoDBDocumentClient);
const doc = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1' }));
const store = () => new DynamoNodeClaimStore(doc, 'nodefleet', 'c1');
const ccf = () => new ConditionalCheckFailedException({ message: 'The conditional request failed', $metadata: {} });

describe('DynamoNodeClaimStore', () => {
  beforeEach(() => ddb.reset());

  it('create is conditional on the key not existing; a lost race is a ConflictError', async () => {
    ddb.on(PutCommand).resolves({});
    ddb.on(PutCommand, { Item: { sk: 'NODECLAIM#a' } } as never).rejects(ccf());
    await expect(store().create(nodeClaim({ name: 'a' }))).rejects.toBeInstanceOf(ConflictError);
    // First the claims epoch (put only if absent, at the claim's createdAt), then the claim.
    const epoch = ddb.commandCalls(PutCommand)[0].args[0].input;
    expect(epoch.ConditionExpression).toBe('attribute_not_exists(#pk)');
    expect(epoch.Item).toEqual({ pk: 'CLUSTER#c1', sk: 'META#claims-epoch', type: 'ClaimsEpoch', createdAt: nodeClaim({ name: 'a' }).createdAt });
    const input = ddb.commandCalls(PutCommand)[1].args[0].input;
    expect(input.ConditionExpression).toBe('attribute_not_exists(#pk)');
    expect(input.Item).toMatchObject({ pk: 'CLUSTER#c1', sk: 'NODECLAIM#a', version: 0, type: 'NodeClaim' });
    expect(input.Item).not.toHaveProperty('instanceId');
  });

  it('create goes on when the claims epoch is already recorded (its conditional put refused)', async () => {
    ddb.on(PutCommand).resolves({});
    ddb.on(PutCommand, { Item: { sk: 'META#claims-epoch' } } as never).rejects(ccf());
    await expect(store().create(nodeClaim({ name: 'a' }))).resolves.toMatchObject({ name: 'a' });
    expect(ddb.commandCalls(PutCommand).map((c) => c.args[0].input.Item?.sk)).toEqual(['META#claims-epoch', 'NODECLAIM#a']);
  });

  it('update writes version + 1 conditional on the read version and indexes the instance id', async () => {
    ddb.on(PutCommand).resolves({});
    const next = await store().update(nodeClaim({ name: 'a', version: 3, instanceId: 'i-1' }));
    expect(next.version).toBe(4);
    const input = ddb.commandCalls(PutCommand)[0].args[0].input;
    expect(input.ConditionExpression).toBe('#v = :v');
    expect(input.ExpressionAttributeValues).toEqual({ ':v': 3 });
    expect(input.Item).toMatchObject({ version: 4, instanceId: 'i-1' });
  });

  it('a Terminated claim is written with the DynamoDB TTL attribute (epoch seconds of retainUntil); a live one without', async () => {
    ddb.on(PutCommand).resolves({});
    await store().update(nodeClaim({ name: 'a', version: 1, phase: 'Terminated', retainUntil: '2026-01-01T01:00:00.000Z' }));
    await store().update(nodeClaim({ name: 'b', version: 1 }));
    const [a, b] = ddb.commandCalls(PutCommand).map((c) => c.args[0].input.Item!);
    expect(a.ttl).toBe(Date.parse('2026-01-01T01:00:00.000Z') / 1000);
    expect(b).not.toHaveProperty('ttl');
  });

  it('listInFlight is a strongly consistent Query of the in-flight LSI from the time on (no filter); list reads the table', async () => {
    ddb.on(QueryCommand).resolves({ Items: [] });
    await store().listInFlight(1_000);
    await store().list();
    const [inFlight, all] = ddb.commandCalls(QueryCommand).map((c) => c.args[0].input);
    expect(inFlight).toMatchObject({
      IndexName: 'inFlight',
      ConsistentRead: true,
      KeyConditionExpression: '#pk = :pk AND #inFlight >= :since',
      ExpressionAttributeNames: { '#inFlight': 'inFlightKeyMs' },
      ExpressionAttributeValues: { ':pk': 'CLUSTER#c1', ':since': 1_000 },
    });
    expect(inFlight).not.toHaveProperty('FilterExpression');
    expect(all).toMatchObject({ ConsistentRead: true, ExpressionAttributeValues: { ':prefix': 'NODECLAIM#' } });
    expect(all.IndexName).toBeUndefined();
  });

  it('a claim in flight is written with its index key, one out of flight without it (the whole item is replaced)', async () => {
    ddb.on(PutCommand).resolves({});
    await store().update(nodeClaim({ name: 'a', version: 1, phase: 'Launched' }));
    await store().update(nodeClaim({ name: 'a', version: 2, phase: 'Terminating' }));
    const [launched, terminating] = ddb.commandCalls(PutCommand).map((c) => c.args[0].input);
    expect(launched.Item).toMatchObject({ inFlightKeyMs: Number.MAX_SAFE_INTEGER });
    expect(terminating.Item).not.toHaveProperty('inFlightKeyMs');
    // a PutItem conditional on the version: the attribute leaves with the phase, in that one write
    expect(terminating.ConditionExpression).toBe('#v = :v');
  });

  it('a stale update is a ConflictError; throttling is a TransientError', async () => {
    ddb
      .on(PutCommand)
      .rejectsOnce(ccf())
      .rejectsOnce(Object.assign(new Error('slow'), { name: 'ProvisionedThroughputExceededException' }));
    await expect(store().update(nodeClaim({ name: 'a', version: 1 }))).rejects.toBeInstanceOf(ConflictError);
    await expect(store().update(nodeClaim({ name: 'a', version: 1 }))).rejects.toBeInstanceOf(TransientError);
  });

  it('items read back go through the NodeClaim schema; getByInstanceId uses the GSI then a consistent read', async () => {
    const claim = nodeClaim({ name: 'a', instanceId: 'i-9', version: 2 });
    ddb.on(QueryCommand).resolves({ Items: [{ pk: 'CLUSTER#c1', sk: 'NODECLAIM#a', instanceId: 'i-9' }] });
    ddb.on(GetCommand).resolves({ Item: { pk: 'CLUSTER#c1', sk: 'NODECLAIM#a', version: 2, claim } });
    const got = await store().getByInstanceId('i-9');
    expect(got?.name).toBe('a');
    expect(ddb.commandCalls(QueryCommand)[0].args[0].input.IndexName).toBe('byInstanceId');
    expect(ddb.commandCalls(GetCommand)[0].args[0].input.ConsistentRead).toBe(true);
  });
});

describe('DynamoUnavailableOfferings', () => {
  beforeEach(() => ddb.reset());
  it('marks with a TTL item and lists only unexpired ones', async () => {
    ddb.on(PutCommand).resolves({});
    ddb.on(QueryCommand).resolves({ Items: [{ instanceType: 'c5.large', zone: 'z1', capacityType: 'spot' }] });
    const ice = new DynamoUnavailableOfferings(doc, 'nodefleet', 'c1');
    await ice.mark(
      [{ instanceType: 'c5.large', zone: 'z1', capacityType: 'spot', reason: 'InsufficientCapacityError' }],
      1000 + UnavailableOfferingsTtlSeconds,
    );
    expect(ddb.commandCalls(PutCommand)[0].args[0].input.Item).toMatchObject({ sk: 'ICE#c5.large#z1#spot', ttl: 1180 });
    expect(await ice.list(1000)).toEqual([{ instanceType: 'c5.large', zone: 'z1', capacityType: 'spot' }]);
    expect(ddb.commandCalls(QueryCommand)[0].args[0].input.ExpressionAttributeValues).toMatchObject({ ':now': 1000, ':prefix': 'ICE#' });
  });
});
