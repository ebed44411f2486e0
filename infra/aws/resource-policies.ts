/**
 * Resource policies of nodefleet's entry points: the view bucket, the bus and the queues
 * EventBridge rules feed. Each has an explicit Deny for every principal but the intended ones, so
 * an identity policy granting `s3:PutObject`, `events:PutEvents` or `sqs:SendMessage` on `*` to
 * another principal of the account does not reach nodefleet (docs/security.md).
 *
 * Only data-plane actions are denied (s3:PutObject / s3:GetObject, events:PutEvents,
 * sqs:SendMessage): the account and CloudFormation keep managing the resources and their policies.
 * No statement allows anything: the intended callers are allowed by their own identity policies.
 */
import { Stack } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type * as sqs from 'aws-cdk-lib/aws-sqs';

/**
 * Who may publish on the bus; `source` / `detailTypes`, when given, are all that principal may send
 * (multivalued keys: a Deny when any value is outside the list).
 */
export interface BusPublisher {
  role: iam.IRole;
  source?: string;
  detailTypes?: readonly string[];
}

const deny = (sid: string, actions: string[], resources: string[], conditions: Record<string, Record<string, unknown>>) =>
  new iam.PolicyStatement({ sid, effect: iam.Effect.DENY, principals: [new iam.AnyPrincipal()], actions, resources, conditions });

/** Only `writers` may put and only `readers` may get the bucket's objects (TLS-only is the bucket's `enforceSSL`). */
export function protectViewBucket(bucket: s3.Bucket, writers: readonly iam.IRole[], readers: readonly iam.IRole[]): void {
  const objects = bucket.arnForObjects('*');
  bucket.addToResourcePolicy(
    deny('DenyViewWritesButAgent', ['s3:PutObject'], [objects], { ArnNotEquals: { 'aws:PrincipalArn': writers.map((r) => r.roleArn) } }),
  );
  bucket.addToResourcePolicy(
    deny('DenyViewReadsButReaders', ['s3:GetObject'], [objects], { ArnNotEquals: { 'aws:PrincipalArn': readers.map((r) => r.roleArn) } }),
  );
}

/**
 * The bus's policy, set inline on the bus (AWS::Events::EventBus `Policy`): AWS::Events::EventBusPolicy
 * resources use their statement id as physical id, account-wide, so two clusters' stacks in one
 * account would collide (aws/aws-cdk#29627). The bus ARN is built from `busName`: the bus cannot
 * refer to its own Arn attribute.
 */
export function protectBus(bus: events.EventBus, busName: string, publishers: readonly BusPublisher[]): void {
  const arn = Stack.of(bus).formatArn({ service: 'events', resource: 'event-bus', resourceName: busName });
  const statements = [
    deny('DenyPutEventsButPublishers', ['events:PutEvents'], [arn], { ArnNotEquals: { 'aws:PrincipalArn': publishers.map((p) => p.role.roleArn) } }),
  ];
  publishers.forEach((p, i) => {
    const only = { ArnEquals: { 'aws:PrincipalArn': p.role.roleArn } };
    if (p.source)
      statements.push(
        deny(`DenyPublisher${i}OtherSources`, ['events:PutEvents'], [arn], { ...only, 'ForAnyValue:StringNotEquals': { 'events:source': [p.source] } }),
      );
    if (p.detailTypes)
      statements.push(
        deny(`DenyPublisher${i}OtherDetailTypes`, ['events:PutEvents'], [arn], {
          ...only,
          'ForAnyValue:StringNotEquals': { 'events:detail-type': [...p.detailTypes] },
        }),
      );
  });
  (bus.node.defaultChild as events.CfnEventBus).policy = new iam.PolicyDocument({ statements });
}

/**
 * Only EventBridge delivering for one of `rules` (aws:SourceArn, which only a service principal's
 * request carries) may send to `queue`. So an operator's DLQ redrive into this queue is denied too:
 * a redriven message is as unverified as any other.
 */
export function protectRuleQueue(queue: sqs.Queue, rules: readonly events.IRule[]): void {
  queue.addToResourcePolicy(
    deny('DenySendButFromRules', ['sqs:SendMessage'], [queue.queueArn], { ArnNotEquals: { 'aws:SourceArn': rules.map((r) => r.ruleArn) } }),
  );
}
