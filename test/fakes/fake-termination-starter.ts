import type { TerminationInput, TerminationStarter } from '../../shared/api/ports.ts';
import { FakeBase, clone } from './fake-base.ts';

type Method = 'start';

/** Default ARN prefix of the fake's executions. */
export const FakeTerminationStateMachineArn = 'arn:aws:states:us-east-1:123456789012:stateMachine:nodefleet-termination';

/**
 * TerminationStarter that records starts. Like StartExecution on a Standard workflow with a name
 * derived from the claim, starting the same claim twice returns the same ARN and starts nothing new.
 */
export class FakeTerminationStarter extends FakeBase<Method> implements TerminationStarter {
  /** First input per claim, in start order (duplicates not repeated). */
  readonly started: TerminationInput[] = [];
  private readonly arns = new Map<string, string>();

  async start(input: TerminationInput): Promise<string> {
    this.record('start', input);
    const existing = this.arns.get(input.nodeClaim);
    if (existing) return existing;
    const arn = `${FakeTerminationStateMachineArn.replace(':stateMachine:', ':execution:')}:${input.nodeClaim}`;
    this.arns.set(input.nodeClaim, arn);
    this.started.push(clone(input));
    return arn;
  }

  /** The input the claim's execution was started with, if any. */
  startedFor(nodeClaim: string): TerminationInput | undefined {
    return this.started.find((s) => s.nodeClaim === nodeClaim);
  }

  override reset(): void {
    super.reset();
    this.started.length = 0;
    this.arns.clear();
  }
}
