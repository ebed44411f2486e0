/**
 * TerminationStarter on Step Functions: one execution of statemachines/termination.asl.json per
 * NodeClaim and attempt. The execution name is derived from the claim and `input.attempt`, so
 * starting twice is idempotent: StartExecution with the same name and input returns the running
 * execution, and `ExecutionAlreadyExists` (same name, other input, or already finished) counts as
 * success. A failed or continued attempt is carried on by starting the next attempt (gc does it
 * from the claim's `termination` record: functions/gc/handler.ts), never by reusing a name.
 */
import { StartExecutionCommand, type SFNClient } from '@aws-sdk/client-sfn';
import type { TerminationInput, TerminationStarter } from '../api/ports.ts';
import { NodefleetError, TransientError } from '../api/errors.ts';
import { terminationExecutionName } from '../api/termination.ts';

/**
 * The execution name for a NodeClaim: shared/api/termination.ts `terminationExecutionName` (the
 * claim name when valid, else sanitized + hash), the same name `history` and the embedded
 * environment look executions up by, so every claim name finds its execution.
 */
export function executionName(nodeClaim: string, attempt = 1): string {
  return terminationExecutionName(nodeClaim, attempt);
}

/** ARN of the execution named `name` of `stateMachineArn`. */
export function executionArn(stateMachineArn: string, name: string): string {
  return `${stateMachineArn.replace(':stateMachine:', ':execution:')}:${name}`;
}

export class SfnTerminationStarter implements TerminationStarter {
  constructor(
    private readonly sfn: SFNClient,
    private readonly stateMachineArn: string,
  ) {}

  /** @throws TransientError throttled; NodefleetError otherwise. */
  async start(input: TerminationInput): Promise<string> {
    const name = executionName(input.nodeClaim, input.attempt ?? 1);
    try {
      const out = await this.sfn.send(new StartExecutionCommand({ stateMachineArn: this.stateMachineArn, name, input: JSON.stringify(input) }));
      return out.executionArn ?? executionArn(this.stateMachineArn, name);
    } catch (err) {
      const code = (err as Error)?.name;
      if (code === 'ExecutionAlreadyExists') return executionArn(this.stateMachineArn, name);
      if (code === 'ThrottlingException' || code === 'TooManyRequestsException' || code === 'ServiceUnavailable') {
        throw new TransientError(`StartExecution ${name}: ${code}`, { cause: err });
      }
      throw new NodefleetError(`StartExecution ${name}: ${code} ${(err as Error)?.message ?? ''}`.trim(), { cause: err });
    }
  }
}
