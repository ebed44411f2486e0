/**
 * Lambda entry for the termination tasks: wraps a task's `run` once with the shared middy chain
 * (shared/runtime/middleware.ts wrapHandler: Powertools logger/tracer/metrics, zod parsing of the
 * execution state, error logging with the error's `name` so ASL Retry/Catch match it).
 * The runtime (SDK clients, Powertools) is imported on the first invocation, so tests and the
 * local runner that only call `run` never load it; esbuild still bundles it.
 */
import type { Context } from 'aws-lambda';
import type { Deps } from '../../shared/runtime/deps.ts';
import { TaskInputSchema, type TaskInput, type TerminationDeps } from './schemas.ts';

/** A Lambda handler for one Task state. */
export type TaskLambda<O> = (event: unknown, context: Context) => Promise<O>;

/** Builds the handler of a Task state's `run`; `name` is the function name used in logs and metrics. */
export function taskHandler<O>(name: string, run: (input: TaskInput, deps: TerminationDeps) => Promise<O>): TaskLambda<O> {
  let wrapped: TaskLambda<O> | undefined;
  return async (event, context) => {
    if (!wrapped) {
      const [{ wrapHandler }, { DynamoBudgetCounter }] = await Promise.all([
        import('../../shared/runtime/middleware.ts'),
        import('../../shared/aws/dynamo-budget-counter.ts'),
      ]);
      wrapped = wrapHandler(
        name,
        (input: TaskInput, deps: Deps) =>
          run(input, {
            kube: deps.kube,
            cloud: deps.cloud,
            store: deps.store,
            clock: deps.clock,
            clusterName: deps.env.clusterName,
            log: deps.log,
            metrics: deps.metrics,
            publisher: deps.publisher,
            budgets: deps.budgets ?? new DynamoBudgetCounter(deps.clients!.doc, deps.env.tableName, deps.env.clusterName),
          }),
        { schema: TaskInputSchema },
      );
    }
    return wrapped(event, context);
  };
}
