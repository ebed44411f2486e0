/** Event schemas at the function boundaries: EventBridge (AWS interruption events) and SQS. */
export * from './eventbridge.ts';
export * from './sqs.ts';
