/**
 * Interruption function: an SQS batch of EventBridge events (spot interruption warning, rebalance
 * recommendation, AWS Health scheduled change, instance state change, capacity reservation
 * interruption). Each record is parsed with zod (shared/api/events); a malformed record is
 * reported in the partial batch response so SQS redelivers it and, after maxReceiveCount, moves it
 * to the DLQ. A record whose handling throws (throttling …) is reported too; everything else is
 * acknowledged, unknown kinds, unknown instances and refused messages (another account or region,
 * a notice EC2 does not bear out: one warn line each) included.
 */
import type { Context } from 'aws-lambda';
import { ZodError } from 'zod';
import type { Deps } from '../../shared/runtime/deps.ts';
import {
  InterruptionDetailTypes,
  InterruptionEventSchema,
  EventBridgeEnvelopeSchema,
  toInterruptionMessage,
  karpenterMessageType,
  type SqsBatchResponse,
  type SqsEvent,
} from '../../shared/api/events/index.ts';
import { MetricNames } from '../../shared/api/metrics.ts';
import { handleMessage, messageRefusal, type InterruptionDeps, type InterruptionOutcome } from './handle-message.ts';

export { SqsEventSchema as InputSchema } from '../../shared/api/events/index.ts';
export type { InterruptionDeps } from './handle-message.ts';

/** Per-record result, for logs and tests. */
export interface RecordResult {
  messageId: string;
  /** refused: the message is not the stack's (account, region) or names too many instances; acknowledged, not redelivered. */
  status: 'handled' | 'ignored' | 'malformed' | 'failed' | 'refused';
  outcomes?: InterruptionOutcome[];
  error?: string;
}

/** Handles the batch; returns the partial batch response plus what happened to each record. */
export async function run(event: SqsEvent, deps: InterruptionDeps): Promise<SqsBatchResponse & { results: RecordResult[] }> {
  const results: RecordResult[] = [];
  for (const record of event.Records) results.push(await handleRecord(record.messageId, record.body, deps));
  // Acknowledged records are deleted by SQS (the event source mapping), as Karpenter deletes a message once handled.
  const deleted = results.filter((r) => r.status !== 'malformed' && r.status !== 'failed').length;
  if (deleted > 0) deps.metrics.count(MetricNames.interruptionDeleted, {}, deleted);
  return {
    batchItemFailures: results.filter((r) => r.status === 'malformed' || r.status === 'failed').map((r) => ({ itemIdentifier: r.messageId })),
    results,
  };
}

async function handleRecord(messageId: string, body: string, deps: InterruptionDeps): Promise<RecordResult> {
  let raw: unknown;
  try {
    raw = JSON.parse(body);
  } catch (err) {
    deps.log.warn('malformed interruption message: body is not JSON', { messageId, error: String(err) });
    return { messageId, status: 'malformed', error: 'body is not JSON' };
  }
  const envelope = EventBridgeEnvelopeSchema.safeParse(raw);
  if (!envelope.success) return malformed(messageId, envelope.error, deps);
  if (!InterruptionDetailTypes.includes(envelope.data['detail-type'])) {
    deps.log.debug('ignoring event of an unhandled kind', { messageId, detailType: envelope.data['detail-type'] });
    return { messageId, status: 'ignored' };
  }
  const parsed = InterruptionEventSchema.safeParse(raw);
  if (!parsed.success) return malformed(messageId, parsed.error, deps);
  const msg = toInterruptionMessage(parsed.data);
  if (!msg) {
    deps.log.debug('ignoring health event outside EC2 scheduled changes', { messageId });
    return { messageId, status: 'ignored' };
  }
  deps.metrics.count(MetricNames.interruptionReceived, { message_type: karpenterMessageType(msg) });
  const refusal = messageRefusal(msg, deps.env);
  if (refusal) {
    deps.log.warn('interruption message refused', { messageId, kind: msg.kind, eventId: msg.eventId, reason: refusal });
    return { messageId, status: 'refused', error: refusal };
  }
  try {
    return { messageId, status: 'handled', outcomes: await handleMessage(msg, deps) };
  } catch (err) {
    deps.log.warn('interruption message failed; SQS will redeliver it', {
      messageId,
      kind: msg.kind,
      error: err instanceof Error ? `${err.name}: ${err.message}` : String(err),
    });
    return { messageId, status: 'failed', error: err instanceof Error ? err.name : String(err) };
  }
}

function malformed(messageId: string, error: ZodError, deps: InterruptionDeps): RecordResult {
  const problems = error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
  deps.log.warn('malformed interruption message', { messageId, problems });
  return { messageId, status: 'malformed', error: problems.join('; ') };
}

/**
 * Lambda handler (SQS event source with ReportBatchItemFailures): `run` wrapped once by the shared
 * middy chain. The runtime is imported on the first invocation (tests calling `run` never load it).
 */
export const handler = (() => {
  let wrapped: ((event: unknown, context: Context) => Promise<SqsBatchResponse>) | undefined;
  return async (event: unknown, context: Context): Promise<SqsBatchResponse> => {
    if (!wrapped) {
      const [{ wrapHandler }, { requireTermination }, { DynamoBudgetCounter }, { SqsEventSchema }] = await Promise.all([
        import('../../shared/runtime/middleware.ts'),
        import('../../shared/runtime/deps.ts'),
        import('../../shared/aws/dynamo-budget-counter.ts'),
        import('../../shared/api/events/index.ts'),
      ]);
      wrapped = wrapHandler(
        'interruption',
        async (e: SqsEvent, deps: Deps) => {
          const r = await run(e, {
            store: deps.store,
            cloud: deps.cloud,
            env: deps.env,
            termination: requireTermination(deps),
            unavailable: deps.unavailable,
            kube: deps.kube,
            budgets: deps.budgets ?? new DynamoBudgetCounter(deps.clients!.doc, deps.env.tableName, deps.env.clusterName),
            metrics: deps.metrics,
            clock: deps.clock,
            log: deps.log,
          });
          return { batchItemFailures: r.batchItemFailures };
        },
        { schema: SqsEventSchema, required: ['stateMachineArn'] },
      );
    }
    return wrapped(event, context);
  };
})();
