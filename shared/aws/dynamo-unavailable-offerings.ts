/**
 * The unavailable-offerings (ICE) cache on DynamoDB: one item per (type, zone, capacity type),
 * sk = `ICE#<type>#<zone>#<capacityType>`, `ttl` = epoch seconds when it expires. DynamoDB's TTL
 * deletion can lag by hours, so reads filter on `ttl` too.
 */
import { PutCommand, QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { UnavailableOfferings } from '../api/ports.ts';
import { Table, keys } from '../api/contract.ts';
import { mapDynamoError } from './dynamo-node-claim-store.ts';

/** UnavailableOfferings over a DynamoDB document client. */
export class DynamoUnavailableOfferings implements UnavailableOfferings {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly cluster: string,
  ) {}

  async mark(entries: { instanceType: string; zone: string; capacityType: string; reason: string }[], untilEpochSeconds: number): Promise<void> {
    for (const e of entries) {
      try {
        await this.doc.send(
          new PutCommand({
            TableName: this.tableName,
            Item: {
              [Table.partitionKey]: keys.cluster(this.cluster),
              [Table.sortKey]: keys.ice(e.instanceType, e.zone, e.capacityType),
              type: 'UnavailableOffering',
              instanceType: e.instanceType,
              zone: e.zone,
              capacityType: e.capacityType,
              reason: e.reason,
              [Table.ttlAttribute]: untilEpochSeconds,
            },
          }),
        );
      } catch (err) {
        throw mapDynamoError(err, `mark ${e.instanceType}/${e.zone}/${e.capacityType} unavailable`);
      }
    }
  }

  async list(nowEpochSeconds: number): Promise<{ instanceType: string; zone: string; capacityType: string }[]> {
    const out: { instanceType: string; zone: string; capacityType: string }[] = [];
    let ExclusiveStartKey: Record<string, unknown> | undefined;
    try {
      do {
        const page = await this.doc.send(
          new QueryCommand({
            TableName: this.tableName,
            KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :prefix)',
            FilterExpression: '#ttl > :now',
            ExpressionAttributeNames: { '#pk': Table.partitionKey, '#sk': Table.sortKey, '#ttl': Table.ttlAttribute },
            ExpressionAttributeValues: { ':pk': keys.cluster(this.cluster), ':prefix': 'ICE#', ':now': nowEpochSeconds },
            ExclusiveStartKey,
          }),
        );
        for (const i of page.Items ?? []) out.push({ instanceType: String(i.instanceType), zone: String(i.zone), capacityType: String(i.capacityType) });
        ExclusiveStartKey = page.LastEvaluatedKey;
      } while (ExclusiveStartKey);
    } catch (err) {
      throw mapDynamoError(err, 'list unavailable offerings');
    }
    return out;
  }
}
