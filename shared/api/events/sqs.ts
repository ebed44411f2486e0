/**
 * The Lambda SQS event (https://docs.aws.amazon.com/lambda/latest/dg/with-sqs.html) and the
 * partial batch response (ReportBatchItemFailures). Only the fields nodefleet reads are required.
 */
import { z } from 'zod';

export const SqsRecordSchema = z.looseObject({
  messageId: z.string().min(1),
  receiptHandle: z.string().optional(),
  /** The EventBridge event as JSON text. */
  body: z.string(),
  attributes: z.looseObject({ ApproximateReceiveCount: z.string().optional() }).optional(),
  eventSource: z.string().optional(),
  eventSourceARN: z.string().optional(),
});
export type SqsRecord = z.infer<typeof SqsRecordSchema>;

export const SqsEventSchema = z.object({ Records: z.array(SqsRecordSchema) });
export type SqsEvent = z.infer<typeof SqsEventSchema>;

/** Partial batch response: the listed messages return to the queue (and reach the DLQ after maxReceiveCount). */
export interface SqsBatchResponse {
  batchItemFailures: { itemIdentifier: string }[];
}
