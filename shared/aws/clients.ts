/**
 * The AWS SDK client factory: the only place nodefleet says `new EC2Client` (and friends). The
 * composition root (shared/runtime/deps.ts `buildDeps`) calls {@link createClients} once per
 * process and injects the clients into the adapters of this folder, so no file outside shared/aws
 * imports `@aws-sdk/*` (architecture rule `aws-sdk-only-in-shared-aws`, .dependency-cruiser.cjs).
 *
 * Endpoint overrides (embedded environment, infra/local): DynamoDB ← `dynamodbEndpoint`, EC2 and
 * SSM ← `ec2Endpoint`, S3 ← `s3Endpoint`. EKS, STS, Step Functions and EventBridge always use the regional endpoint.
 * Every client retries with shared/aws/retry.ts, its backoff waited by `sleep` (default real time).
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { EC2Client } from '@aws-sdk/client-ec2';
import { SSMClient } from '@aws-sdk/client-ssm';
import { EKSClient } from '@aws-sdk/client-eks';
import { STSClient } from '@aws-sdk/client-sts';
import { SFNClient } from '@aws-sdk/client-sfn';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { S3Client } from '@aws-sdk/client-s3';
import { SleepingRetryStrategy } from './retry.ts';

export type { DynamoDBClient } from '@aws-sdk/client-dynamodb';

/** The SDK clients the adapters use, one of each per process. */
export interface Clients {
  dynamodb: DynamoDBClient;
  /** Document client over `dynamodb` (undefined attributes removed, class instances as maps). */
  doc: DynamoDBDocumentClient;
  ec2: EC2Client;
  ssm: SSMClient;
  eks: EKSClient;
  sts: STSClient;
  sfn: SFNClient;
  eventbridge: EventBridgeClient;
  /** The cluster view bucket (path-style when an endpoint override is set). */
  s3: S3Client;
}

/** Options of {@link createClients}. */
export interface ClientOptions {
  /** AWS region, e.g. `ap-northeast-2`. */
  region: string;
  /** DynamoDB endpoint override (a local DynamoDB-compatible server). */
  dynamodbEndpoint?: string;
  /** EC2 and SSM endpoint override (the embedded EC2 stand-in). */
  ec2Endpoint?: string;
  /** S3 endpoint override (the embedded environment's S3-compatible server). */
  s3Endpoint?: string;
  /**
   * Static credentials instead of the default provider chain. Only the embedded environment sets
   * them: one access key id per function, by which its local EC2 endpoint knows the caller and
   * authorizes each call against that function's IAM policy. Lambda uses the function role's.
   */
  credentials?: { accessKeyId: string; secretAccessKey: string };
  /**
   * Where a retry's backoff is waited (ms); default real time. The embedded environment passes its
   * clock's, so on its stepped clock a retry comes later in virtual time (shared/aws/retry.ts).
   */
  sleep?: (ms: number) => Promise<void>;
}

/** Creates every SDK client (no connection is opened until the first request). */
export function createClients(opts: ClientOptions): Clients {
  const base = { region: opts.region, retryStrategy: new SleepingRetryStrategy(opts.sleep) };
  const dynamodbAt = opts.dynamodbEndpoint ? { endpoint: opts.dynamodbEndpoint } : {};
  const ec2At = opts.ec2Endpoint ? { endpoint: opts.ec2Endpoint, ...(opts.credentials ? { credentials: opts.credentials } : {}) } : {};
  const dynamodb = new DynamoDBClient({ ...base, ...dynamodbAt });
  return {
    dynamodb,
    doc: DynamoDBDocumentClient.from(dynamodb, { marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: true } }),
    ec2: new EC2Client({ ...base, ...ec2At }),
    ssm: new SSMClient({ ...base, ...ec2At }),
    eks: new EKSClient(base),
    sts: new STSClient(base),
    sfn: new SFNClient(base),
    eventbridge: new EventBridgeClient(base),
    s3: new S3Client({ ...base, ...(opts.s3Endpoint ? { endpoint: opts.s3Endpoint, forcePathStyle: true } : {}) }),
  };
}
