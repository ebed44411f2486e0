/**
 * NodeClaimStore on DynamoDB (one table, keys in shared/api/contract.ts `Table` / `keys`):
 * pk = `CLUSTER#<cluster>`, sk = `NODECLAIM#<name>`; top-level `version` (optimistic lock: every
 * write is conditional on it), `instanceId` (sparse GSI `byInstanceId`), `nodePool`, `phase`,
 * `inFlightKeyMs` (sparse LSI `inFlight`, only while the claim is in flight: shared/api/nodeclaim.ts
 * `inFlightKeyMs`), `ttl` (epoch seconds, only once Terminated: DynamoDB's TTL deletes the record),
 * and the claim itself under `claim` (read back through NodeClaimSchema: a zod schema at every boundary).
 *
 * Every write of a claim is a whole-item PutItem built by {@link nodeClaimItem}: the sparse index
 * attributes are derived from the claim in the same conditional write that changes its phase, and
 * an attribute the new claim does not have is removed with it (a claim leaving the in-flight
 * phases leaves the index atomically; nothing else writes claim items).
 *
 * The claims epoch (sk = `META#claims-epoch`, `createdAt` RFC 3339): when this table began keeping
 * the cluster's claims. `create` puts it, conditional on its absence, before the first claim it
 * writes (every create tries: one conditional write more per claim, and no state to go stale when
 * the table is replaced under a warm function); `claimsEpochMs` reads it (gc, every pass) and
 * records it when absent. gc terminates an instance no claim owns only when it was launched after
 * the epoch (shared/disruption/gc.ts `tableEpochMs`).
 *
 * A claim item that does not parse (NodeClaimSchema, or a version that is no number) is skipped by
 * get / list / listInFlight / getByInstanceId as if absent, and reported through `onMalformed`
 * (its sort key and the first problem): one bad item must not stop gc, disruption or the
 * provisioner (a claim it hides is, for gc, an instance without a claim: shared/disruption/gc.ts).
 *
 * Errors: ConflictError (condition failed: name exists / version stale), TransientError (throttled).
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { z } from 'zod';
import { DeleteCommand, GetCommand, PutCommand, QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { NodeClaimStore } from '../api/ports.ts';
import { NodeClaimSchema, inFlightKeyMs, type NodeClaim } from '../api/nodeclaim.ts';
import { Table, keys } from '../api/contract.ts';
import { ConflictError, NodefleetError, TransientError } from '../api/errors.ts';

/** DynamoDB error names that mean "retry later". */
const ThrottlingNames = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'InternalServerError',
  'TransactionConflictException',
]);

/** Maps a DynamoDB SDK error to nodefleet's typed errors. */
export function mapDynamoError(err: unknown, what: string): Error {
  const name = (err as Error | undefined)?.name ?? '';
  if (err instanceof ConditionalCheckFailedException || name === 'ConditionalCheckFailedException')
    return new ConflictError(`${what}: condition failed`, { cause: err });
  if (ThrottlingNames.has(name)) return new TransientError(`${what}: ${name}`, { cause: err });
  if (err instanceof NodefleetError) return err;
  return new NodefleetError(`${what}: ${name} ${(err as Error)?.message ?? ''}`.trim(), { cause: err });
}

/** The item written for a claim (the whole item: every write of a claim replaces it). */
export function nodeClaimItem(cluster: string, claim: NodeClaim): Record<string, unknown> {
  const inFlight = inFlightKeyMs(claim);
  return {
    [Table.partitionKey]: keys.cluster(cluster),
    [Table.sortKey]: keys.nodeClaim(claim.name),
    type: 'NodeClaim',
    version: claim.version,
    nodePool: claim.nodePool,
    phase: claim.phase,
    // Sparse LSI: only claims in flight are indexed (absent = out of the index).
    ...(inFlight !== undefined ? { [Table.inFlightAttribute]: inFlight } : {}),
    // Sparse GSI: only launched claims are indexed by instance id.
    ...(claim.instanceId ? { [Table.instanceIdAttribute]: claim.instanceId } : {}),
    // DynamoDB TTL (epoch seconds): a Terminated claim expires (shared/api/nodeclaim.ts retainUntil).
    ...(claim.retainUntil ? { [Table.ttlAttribute]: Math.ceil(Date.parse(claim.retainUntil) / 1000) } : {}),
    claim,
  };
}

/** The claims epoch item as read back (the attributes gc needs). */
const ClaimsEpochItemSchema = z.object({ createdAt: z.string().refine((t) => !Number.isNaN(Date.parse(t)), 'not an RFC 3339 time') });

/** A claim item that does not parse: its sort key and the first problem (`<field path>: <reason>`). */
export interface MalformedItem {
  key: string;
  problem: string;
}

/** The claim of an item, or the first reason it is not one. */
export function claimOfItem(item: Record<string, unknown>): { claim: NodeClaim } | { problem: string } {
  const r = NodeClaimSchema.safeParse(item.claim);
  if (!r.success) {
    const issue = r.error.issues[0];
    return { problem: `${['claim', ...issue.path.map(String)].join('.')}: ${issue.message}` };
  }
  const version = item.version === undefined ? r.data.version : item.version;
  if (typeof version !== 'number' || !Number.isInteger(version)) return { problem: `version: expected an integer, got ${JSON.stringify(version)}` };
  return { claim: { ...r.data, version } };
}

/** NodeClaimStore over a DynamoDB document client (injected; created once in buildDeps). */
export class DynamoNodeClaimStore implements NodeClaimStore {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly cluster: string,
    /** Called once per malformed item read (default: skipped silently); buildDeps logs and counts it. */
    private readonly onMalformed: (m: MalformedItem) => void = () => {},
  ) {}

  /** The item's claim, or undefined (reported) when the item is malformed. */
  private fromItem(item: Record<string, unknown>): NodeClaim | undefined {
    const r = claimOfItem(item);
    if ('claim' in r) return r.claim;
    this.onMalformed({ key: String(item[Table.sortKey] ?? '(no sort key)'), problem: r.problem });
    return undefined;
  }

  private key(name: string) {
    return { [Table.partitionKey]: keys.cluster(this.cluster), [Table.sortKey]: keys.nodeClaim(name) };
  }

  /** @throws ConflictError when a claim with that name exists. */
  async create(claim: NodeClaim): Promise<NodeClaim> {
    // The epoch first: an instance is launched only for a claim already written, so every instance
    // of this table's claims is launched after the epoch (a claim write lost later does not move it).
    const createdMs = Date.parse(claim.createdAt);
    if (!Number.isNaN(createdMs)) await this.recordEpoch(createdMs);
    try {
      await this.doc.send(
        new PutCommand({
          TableName: this.tableName,
          Item: nodeClaimItem(this.cluster, claim),
          ConditionExpression: 'attribute_not_exists(#pk)',
          ExpressionAttributeNames: { '#pk': Table.partitionKey },
        }),
      );
      return claim;
    } catch (err) {
      throw mapDynamoError(err, `create nodeclaim ${claim.name}`);
    }
  }

  /** The recorded epoch, or `nowMs` recorded as it (conditional put; the loser of a race reads the winner's). */
  async claimsEpochMs(nowMs: number): Promise<number> {
    const recorded = await this.readEpoch();
    if (recorded !== undefined) return recorded;
    if (await this.recordEpoch(nowMs)) return nowMs;
    const winner = await this.readEpoch();
    if (winner === undefined) throw new NodefleetError('claims epoch: the conditional put found an item that a consistent read does not');
    return winner;
  }

  private epochKey() {
    return { [Table.partitionKey]: keys.cluster(this.cluster), [Table.sortKey]: keys.claimsEpoch() };
  }

  private async readEpoch(): Promise<number | undefined> {
    try {
      const out = await this.doc.send(new GetCommand({ TableName: this.tableName, Key: this.epochKey(), ConsistentRead: true }));
      return out.Item ? Date.parse(ClaimsEpochItemSchema.parse(out.Item).createdAt) : undefined;
    } catch (err) {
      throw mapDynamoError(err, 'read claims epoch');
    }
  }

  /** Puts the epoch item unless one exists; false when one does. */
  private async recordEpoch(epochMs: number): Promise<boolean> {
    try {
      await this.doc.send(
        new PutCommand({
          TableName: this.tableName,
          Item: { ...this.epochKey(), type: 'ClaimsEpoch', createdAt: new Date(epochMs).toISOString() },
          ConditionExpression: 'attribute_not_exists(#pk)',
          ExpressionAttributeNames: { '#pk': Table.partitionKey },
        }),
      );
      return true;
    } catch (err) {
      const mapped = mapDynamoError(err, 'record claims epoch');
      if (mapped instanceof ConflictError) return false;
      throw mapped;
    }
  }

  async get(name: string): Promise<NodeClaim | undefined> {
    try {
      const out = await this.doc.send(new GetCommand({ TableName: this.tableName, Key: this.key(name), ConsistentRead: true }));
      return out.Item ? this.fromItem(out.Item) : undefined;
    } catch (err) {
      throw mapDynamoError(err, `get nodeclaim ${name}`);
    }
  }

  async list(): Promise<NodeClaim[]> {
    return this.query({
      KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :prefix)',
      ExpressionAttributeNames: { '#pk': Table.partitionKey, '#sk': Table.sortKey },
      ExpressionAttributeValues: { ':pk': keys.cluster(this.cluster), ':prefix': keys.nodeClaim('') },
    });
  }

  /**
   * The in-flight claims (port doc; rule: shared/api/nodeclaim.ts `inFlightKeyMs`): a strongly
   * consistent Query of the sparse LSI `inFlight` for keys ≥ `initializedSinceMs`. Only claims in
   * flight have the key, and claims initialized before the time sort below the range, so DynamoDB
   * reads (and charges read units for) the in-flight claims only, not the cluster's. Not a GSI: a
   * GSI is eventually consistent, and a claim the previous provisioning pass created must never be
   * missed (it would be launched twice); an LSI honours ConsistentRead.
   */
  async listInFlight(initializedSinceMs: number): Promise<NodeClaim[]> {
    return this.query({
      IndexName: Table.inFlightIndex,
      KeyConditionExpression: '#pk = :pk AND #inFlight >= :since',
      ExpressionAttributeNames: { '#pk': Table.partitionKey, '#inFlight': Table.inFlightAttribute },
      ExpressionAttributeValues: { ':pk': keys.cluster(this.cluster), ':since': initializedSinceMs },
    });
  }

  private async query(q: {
    IndexName?: string;
    KeyConditionExpression: string;
    ExpressionAttributeNames: Record<string, string>;
    ExpressionAttributeValues: Record<string, unknown>;
  }): Promise<NodeClaim[]> {
    const out: NodeClaim[] = [];
    let ExclusiveStartKey: Record<string, unknown> | undefined;
    try {
      do {
        const page = await this.doc.send(new QueryCommand({ TableName: this.tableName, ...q, ConsistentRead: true, ExclusiveStartKey }));
        for (const item of page.Items ?? []) {
          const claim = this.fromItem(item);
          if (claim) out.push(claim);
        }
        ExclusiveStartKey = page.LastEvaluatedKey;
      } while (ExclusiveStartKey);
    } catch (err) {
      throw mapDynamoError(err, 'list nodeclaims');
    }
    return out;
  }

  /** GSI query (eventually consistent); the claim is re-read consistently before returning. */
  async getByInstanceId(instanceId: string): Promise<NodeClaim | undefined> {
    try {
      const page = await this.doc.send(
        new QueryCommand({
          TableName: this.tableName,
          IndexName: Table.instanceIdIndex,
          KeyConditionExpression: '#i = :i',
          ExpressionAttributeNames: { '#i': Table.instanceIdAttribute },
          ExpressionAttributeValues: { ':i': instanceId },
        }),
      );
      const item = (page.Items ?? []).find((i) => i[Table.partitionKey] === keys.cluster(this.cluster));
      if (!item) return undefined;
      const name = String(item[Table.sortKey]).slice(keys.nodeClaim('').length);
      return this.get(name);
    } catch (err) {
      throw mapDynamoError(err, `get nodeclaim by instance ${instanceId}`);
    }
  }

  /** @throws ConflictError when absent or the stored version is not `claim.version`. */
  async update(claim: NodeClaim): Promise<NodeClaim> {
    const next = { ...claim, version: claim.version + 1 };
    try {
      await this.doc.send(
        new PutCommand({
          TableName: this.tableName,
          Item: nodeClaimItem(this.cluster, next),
          ConditionExpression: '#v = :v',
          ExpressionAttributeNames: { '#v': 'version' },
          ExpressionAttributeValues: { ':v': claim.version },
        }),
      );
      return next;
    } catch (err) {
      throw mapDynamoError(err, `update nodeclaim ${claim.name} (version ${claim.version})`);
    }
  }

  async delete(name: string): Promise<void> {
    try {
      await this.doc.send(new DeleteCommand({ TableName: this.tableName, Key: this.key(name) }));
    } catch (err) {
      throw mapDynamoError(err, `delete nodeclaim ${name}`);
    }
  }
}
