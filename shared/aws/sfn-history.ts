/**
 * Reads a termination execution and its history from Step Functions (DescribeExecution +
 * GetExecutionHistory, paginated) into the ExecutionRecord `nodefleet history` prints.
 * Only the two calls below are used (narrow SDK surface, as KA pkg/aws/sdk.go).
 */
import { DescribeExecutionCommand, GetExecutionHistoryCommand, type HistoryEvent, type SFNClient } from '@aws-sdk/client-sfn';
import { terminationExecutionName, type ExecutionHistoryEvent, type ExecutionRecord } from '../api/termination.ts';
import { NodefleetError, NotFoundError, TransientError } from '../api/errors.ts';

/** Events per GetExecutionHistory page (the API maximum). */
const PageSize = 1000;

/** ARN of execution `name` of `stateMachineArn`. */
export function executionArnOf(stateMachineArn: string, name: string): string {
  return `${stateMachineArn.replace(':stateMachine:', ':execution:')}:${name}`;
}

/**
 * The execution's record with every history event in order.
 * @throws NotFoundError when the execution does not exist; TransientError when throttled.
 */
export async function readExecution(sfn: Pick<SFNClient, 'send'>, executionArn: string): Promise<ExecutionRecord> {
  try {
    const d = await sfn.send(new DescribeExecutionCommand({ executionArn }));
    const events: ExecutionHistoryEvent[] = [];
    let nextToken: string | undefined;
    let current: string | undefined;
    do {
      const page = await sfn.send(new GetExecutionHistoryCommand({ executionArn, maxResults: PageSize, nextToken, includeExecutionData: true }));
      for (const e of page.events ?? []) {
        const ev = toHistoryEvent(e, current);
        current = ev.stateName ?? current;
        events.push(ev);
      }
      nextToken = page.nextToken;
    } while (nextToken);
    return {
      name: d.name ?? executionArn.split(':').pop()!,
      executionArn,
      status: (d.status ?? 'RUNNING') as ExecutionRecord['status'],
      startDate: (d.startDate ?? new Date(0)).toISOString(),
      ...(d.stopDate ? { stopDate: d.stopDate.toISOString() } : {}),
      ...(d.input ? { input: d.input } : {}),
      ...(d.output ? { output: d.output } : {}),
      ...(d.error ? { error: d.error } : {}),
      ...(d.cause ? { cause: d.cause } : {}),
      events,
    };
  } catch (err) {
    const name = (err as Error)?.name;
    if (name === 'ExecutionDoesNotExist') throw new NotFoundError(`execution ${executionArn} does not exist`, { cause: err });
    if (name === 'ThrottlingException' || name === 'TooManyRequestsException')
      throw new TransientError(`read execution ${executionArn}: ${name}`, { cause: err });
    throw new NodefleetError(`read execution ${executionArn}: ${name} ${(err as Error)?.message ?? ''}`.trim(), { cause: err });
  }
}

/** Most attempts `readTerminationAttempts` reads (the latest ones): a permanent error restarts every few minutes for as long as it lasts. */
export const MaxAttemptsRead = 50;

/**
 * Every attempt of a NodeClaim's termination (executions `<claim>`, `<claim>_2`, …), oldest first.
 * `lastAttempt` (the claim's `termination.attempt`, when the claim still exists) bounds the scan,
 * and an attempt recorded but never started is skipped; without it the scan stops at the first
 * missing attempt after the first. At most the latest {@link MaxAttemptsRead} are read.
 * @throws TransientError when throttled; NodefleetError otherwise.
 */
export async function readTerminationAttempts(
  sfn: Pick<SFNClient, 'send'>,
  stateMachineArn: string,
  nodeClaim: string,
  lastAttempt?: number,
): Promise<ExecutionRecord[]> {
  const out: ExecutionRecord[] = [];
  const first = lastAttempt !== undefined ? Math.max(1, lastAttempt - MaxAttemptsRead + 1) : 1;
  for (let n = first; lastAttempt === undefined || n <= lastAttempt; n++) {
    try {
      out.push(await readExecution(sfn, executionArnOf(stateMachineArn, terminationExecutionName(nodeClaim, n))));
    } catch (err) {
      if (!(err instanceof NotFoundError)) throw err;
      if (lastAttempt === undefined && n > 1) break;
    }
    if (lastAttempt === undefined && out.length >= MaxAttemptsRead) break;
  }
  return out;
}

/**
 * One HistoryEvent → ExecutionHistoryEvent. Task/Lambda events carry no state name, so the name of
 * the state entered last (`current`) is used.
 */
export function toHistoryEvent(e: HistoryEvent, current?: string): ExecutionHistoryEvent {
  const details = Object.entries(e).find(([k, v]) => k.endsWith('EventDetails') && v && typeof v === 'object')?.[1] as
    { name?: string; input?: string; output?: string; error?: string; cause?: string } | undefined;
  const ts = e.timestamp instanceof Date ? e.timestamp : new Date(e.timestamp ?? 0);
  const entersOrExits = /State(Entered|Exited)$/.test(e.type ?? '');
  const stateName = entersOrExits ? details?.name : e.type?.startsWith('Execution') ? undefined : current;
  return {
    id: e.id ?? 0,
    type: e.type ?? 'Unknown',
    timestamp: ts.toISOString(),
    ...(stateName ? { stateName } : {}),
    ...(details?.input !== undefined ? { input: details.input } : {}),
    ...(details?.output !== undefined ? { output: details.output } : {}),
    ...(details?.error !== undefined ? { error: details.error } : {}),
    ...(details?.cause !== undefined ? { cause: details.cause } : {}),
  };
}
