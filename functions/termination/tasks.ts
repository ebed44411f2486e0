/**
 * The termination Task functions by ASL substitution variable (shared/api/termination.ts), bound to
 * deps: what the local Step Functions runner (infra/local/sfn.ts) and the tests execute, and the
 * list the CDK stack builds one Lambda each from.
 */
import type { TerminationSubstitution } from '../../shared/api/termination.ts';
import { TaskInputSchema, type TerminationDeps } from './schemas.ts';
import * as cordon from './cordon.ts';
import * as drain from './drain.ts';
import * as cutoff from './cutoff.ts';
import * as terminateInstance from './terminate-instance.ts';
import * as deleteNode from './delete-node.ts';
import * as finalize from './finalize.ts';
import * as recordFailure from './record-failure.ts';

/** A Task state's local handler: raw state in, result out; throws typed errors for Retry/Catch. */
export type TaskFunction = (input: unknown) => Promise<unknown>;

/** Each Task's `run`, parsing the raw execution state first (a ZodError is a permanent failure). */
export function terminationTasks(deps: TerminationDeps): Record<TerminationSubstitution, TaskFunction> {
  const bind =
    <D>(run: (input: ReturnType<typeof TaskInputSchema.parse>, deps: D) => Promise<unknown>): TaskFunction =>
    (input) =>
      run(TaskInputSchema.parse(input), deps as D);
  return {
    CordonFunctionArn: bind(cordon.run),
    DrainFunctionArn: bind(drain.run),
    CutoffFunctionArn: bind(cutoff.run),
    TerminateInstanceFunctionArn: bind(terminateInstance.run),
    DeleteNodeFunctionArn: bind(deleteNode.run),
    FinalizeFunctionArn: bind(finalize.run),
    RecordFailureFunctionArn: bind(recordFailure.run),
  };
}
