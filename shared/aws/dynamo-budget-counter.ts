/**
 * BudgetCounter on DynamoDB (port in shared/api/ports.ts; item design in shared/api/contract.ts):
 * pk = `CLUSTER#<cluster>`, sk = `BUDGET#<nodePool>`; `inFlight` (number) and `holders`
 * (map holder → RFC 3339 time the slot was taken or its lease last renewed).
 *
 * Taking a slot is ONE conditional UpdateItem — `inFlight < allowed` and the holder not yet in
 * `holders` → add the holder and increment — so concurrent disruption runs can never exceed a
 * budget: DynamoDB serializes conditional writes on one item. The very first take for a pool
 * finds no item (a nested map path cannot be set on a missing item), creates the empty item with
 * a conditional put, and retries once. Release removes the holder and decrements, conditional on
 * the holder being there, so a double release never decrements twice; an absent holder is success.
 * Renew rewrites the holder's time, conditional on the holder being there (a reclaimed lease is
 * not silently re-taken: the caller learns it lost the slot).
 *
 * Errors: TransientError (throttled), NodefleetError (anything else).
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { BudgetCounter } from '../api/ports.ts';
import { Table, keys } from '../api/contract.ts';
import { mapDynamoError } from './dynamo-node-claim-store.ts';

function isConditionFailed(err: unknown): boolean {
  return err instanceof ConditionalCheckFailedException || (err as Error | undefined)?.name === 'ConditionalCheckFailedException';
}

/** DynamoDB rejects a SET on a nested path whose parent map does not exist with a ValidationException. */
function isMissingPath(err: unknown): boolean {
  const e = err as Error | undefined;
  return e?.name === 'ValidationException' && /document path/i.test(e.message ?? '');
}

/** BudgetCounter over a DynamoDB document client (injected; created once in buildDeps). */
export class DynamoBudgetCounter implements BudgetCounter {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly cluster: string,
  ) {}

  private key(nodePool: string) {
    return { [Table.partitionKey]: keys.cluster(this.cluster), [Table.sortKey]: keys.budget(nodePool) };
  }

  private async conditionalTake(nodePool: string, holder: string, allowed: number, nowIso: string): Promise<void> {
    await this.doc.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: this.key(nodePool),
        UpdateExpression: 'SET #holders.#h = :since ADD #inFlight :one',
        ConditionExpression: 'attribute_exists(#holders) AND #inFlight < :allowed AND attribute_not_exists(#holders.#h)',
        ExpressionAttributeNames: { '#holders': 'holders', '#inFlight': 'inFlight', '#h': holder },
        ExpressionAttributeValues: { ':since': nowIso, ':one': 1, ':allowed': allowed },
      }),
    );
  }

  /** Creates the pool's empty counter item unless it exists. */
  private async ensureItem(nodePool: string): Promise<void> {
    try {
      await this.doc.send(
        new PutCommand({
          TableName: this.tableName,
          Item: { ...this.key(nodePool), type: 'Budget', nodePool, inFlight: 0, holders: {} },
          ConditionExpression: 'attribute_not_exists(#pk)',
          ExpressionAttributeNames: { '#pk': Table.partitionKey },
        }),
      );
    } catch (err) {
      if (!isConditionFailed(err)) throw err; // someone else created it: fine
    }
  }

  /**
   * Takes a slot for `holder` when fewer than `allowed` are in flight. Idempotent: a holder that
   * already has a slot gets true again without taking a second one.
   * @throws TransientError when throttled.
   */
  async take(nodePool: string, holder: string, allowed: number, nowIso: string): Promise<boolean> {
    if (!(allowed > 0)) return (await this.holders(nodePool))[holder] !== undefined;
    try {
      try {
        await this.conditionalTake(nodePool, holder, allowed, nowIso);
      } catch (err) {
        // No item yet (or an item without the map): create it once, then the one update again.
        if (!isConditionFailed(err) && !isMissingPath(err)) throw err;
        const current = await this.doc.send(new GetCommand({ TableName: this.tableName, Key: this.key(nodePool), ConsistentRead: true }));
        if (current.Item?.holders) throw err;
        await this.ensureItem(nodePool);
        await this.conditionalTake(nodePool, holder, allowed, nowIso);
      }
      return true;
    } catch (err) {
      if (!isConditionFailed(err)) throw mapDynamoError(err, `take budget slot ${nodePool}/${holder}`);
      // Full, or this holder already has its slot (idempotent retry).
      return (await this.holders(nodePool))[holder] !== undefined;
    }
  }

  /** Releases `holder`'s slot; absent holder (or pool) is success. @throws TransientError when throttled. */
  async release(nodePool: string, holder: string): Promise<void> {
    try {
      await this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: this.key(nodePool),
          UpdateExpression: 'REMOVE #holders.#h ADD #inFlight :minusOne',
          ConditionExpression: 'attribute_exists(#holders.#h)',
          ExpressionAttributeNames: { '#holders': 'holders', '#inFlight': 'inFlight', '#h': holder },
          ExpressionAttributeValues: { ':minusOne': -1 },
        }),
      );
    } catch (err) {
      if (isConditionFailed(err) || isMissingPath(err)) return;
      throw mapDynamoError(err, `release budget slot ${nodePool}/${holder}`);
    }
  }

  /** Renews `holder`'s lease; false when it holds no slot. @throws TransientError when throttled. */
  async renew(nodePool: string, holder: string, nowIso: string): Promise<boolean> {
    try {
      await this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: this.key(nodePool),
          UpdateExpression: 'SET #holders.#h = :now',
          ConditionExpression: 'attribute_exists(#holders.#h)',
          ExpressionAttributeNames: { '#holders': 'holders', '#h': holder },
          ExpressionAttributeValues: { ':now': nowIso },
        }),
      );
      return true;
    } catch (err) {
      if (isConditionFailed(err) || isMissingPath(err)) return false;
      throw mapDynamoError(err, `renew budget slot ${nodePool}/${holder}`);
    }
  }

  /** Current holders (holder → RFC 3339 taken or last renewed). @throws TransientError when throttled. */
  async holders(nodePool: string): Promise<Record<string, string>> {
    try {
      const out = await this.doc.send(new GetCommand({ TableName: this.tableName, Key: this.key(nodePool), ConsistentRead: true }));
      const h = out.Item?.holders;
      return h && typeof h === 'object' ? Object.fromEntries(Object.entries(h as Record<string, unknown>).map(([k, v]) => [k, String(v)])) : {};
    } catch (err) {
      throw mapDynamoError(err, `read budget holders ${nodePool}`);
    }
  }
}
