/**
 * The shared middy chain every Lambda uses, and Powertools Idempotency on the shared table.
 *
 * ## How a function uses it (provisioner, registration, gc here; termination tasks, interruption
 * and disruption the same way)
 * ```ts
 * // functions/<name>/handler.ts
 * export async function run(input: Input, deps: Deps): Promise<Output> { ... }   // tests call this
 * export const handler = wrapHandler('<name>', run, { schema: InputSchema, required: ['stateMachineArn'] });
 * ```
 * `wrapHandler` builds, in order: Powertools Logger (`injectLambdaContext`), Tracer
 * (`captureLambdaHandler`), Metrics (`logMetrics`, EMF, namespace "nodefleet", cold-start metric),
 * input parsing with the zod schema (a bad event throws {@link ValidationError} naming the problems:
 * the invocation fails and the event goes to the DLQ / on-failure destination after Lambda's retries),
 * and error mapping (every error is logged once with its `name`, message and cause, then rethrown,
 * so ASL Retry/Catch can match on the name). The environment is parsed and `buildDeps(env)` called
 * once, on the first invocation (cold start); later invocations reuse the same clients.
 * Tests pass `depsFactory` to substitute fakes. Before `run`, the chain registers the invocation's
 * Lambda context on every idempotency config made by {@link idempotentOn}, so Powertools knows the
 * remaining time (an in-progress record then expires with the invocation instead of blocking
 * redeliveries for the whole idempotency window, and no "Could not determine remaining time" warning).
 */
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import type { ZodType } from 'zod';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import { captureLambdaHandler } from '@aws-lambda-powertools/tracer/middleware';
import { makeIdempotent, IdempotencyConfig } from '@aws-lambda-powertools/idempotency';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import type { BasePersistenceLayer } from '@aws-lambda-powertools/idempotency/persistence';
import type { DynamoDBClient } from '../aws/clients.ts';
import { Table, keys } from '../api/contract.ts';
import { ValidationError } from '../api/errors.ts';
import { parseRuntimeEnv, type OptionalEnvKey, type RuntimeEnv } from './env.ts';
import { createPowertools, powertoolsLog, powertoolsMetrics, type Powertools } from './observability.ts';
import { buildDeps, type Deps } from './deps.ts';

/** Parses `input` with `schema`; @throws ValidationError with one `<path>: <reason>` line per issue. */
export function parseWith<T>(schema: ZodType<T>, input: unknown, what = 'event'): T {
  const r = schema.safeParse(input);
  if (r.success) return r.data;
  const problems = r.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
  throw new ValidationError(`malformed ${what}: ${problems.slice(0, 5).join('; ')}`, problems);
}

/** Options of {@link wrapHandler}. */
export interface WrapOptions<I> {
  /** Input schema (parsing middleware). Omit for functions taking any input. */
  schema?: ZodType<I>;
  /** Custom parser instead of `schema` (throw ValidationError on bad input). */
  parse?: (input: unknown) => I;
  /** Optional env keys this function requires (the error names the variable). */
  required?: readonly OptionalEnvKey[];
  /** Replaces buildDeps (tests, embedded environment). */
  depsFactory?: (env: RuntimeEnv, pt: Powertools) => Deps;
  /** Environment source (default process.env). */
  envSource?: Record<string, string | undefined>;
}

/** The Lambda handler type produced by {@link wrapHandler}. */
export type WrappedHandler<O> = (event: unknown, context: Context) => Promise<O>;

/** Idempotency configs made by {@link idempotentOn} in this process (one function per Lambda process). */
const idempotencyConfigs = new Set<IdempotencyConfig>();

/** A real Lambda context (the embedded environment and tests may pass `{}`). */
function isLambdaContext(context: unknown): context is Context {
  return typeof (context as Partial<Context> | undefined)?.getRemainingTimeInMillis === 'function';
}

/** Registers `context` on every idempotency config of this process (called by the chain per invocation). */
export function registerIdempotencyContext(context: unknown): void {
  if (!isLambdaContext(context)) return;
  for (const c of idempotencyConfigs) c.registerLambdaContext(context);
}

/** Wraps `run` once with the shared chain (see module doc). `run` also gets the Lambda context. */
export function wrapHandler<I, O>(name: string, run: (input: I, deps: Deps, context?: Context) => Promise<O>, opts: WrapOptions<I> = {}): WrappedHandler<O> {
  const pt = createPowertools(name, (opts.envSource ?? process.env).POWERTOOLS_LOG_LEVEL ?? 'INFO');
  let deps: Deps | undefined;
  const getDeps = (): Deps => {
    if (deps) return deps;
    const env = parseRuntimeEnv(opts.envSource ?? process.env, opts.required ?? []);
    deps = opts.depsFactory
      ? opts.depsFactory(env, pt)
      : buildDeps(env, { log: powertoolsLog(pt.logger), metrics: powertoolsMetrics(pt.metrics), functionName: name });
    return deps;
  };
  const h = middy(async (event: I, context: Context) => run(event, getDeps(), context))
    .use(injectLambdaContext(pt.logger))
    .use(captureLambdaHandler(pt.tracer))
    .use(logMetrics(pt.metrics, { captureColdStartMetric: true }))
    .use({
      before: (request) => {
        registerIdempotencyContext(request.context);
        if (opts.parse) request.event = opts.parse(request.event) as never;
        else if (opts.schema) request.event = parseWith(opts.schema, request.event) as never;
      },
    })
    .use({
      onError: (request) => {
        const err = request.error as Error & { problems?: string[] };
        pt.logger.error('invocation failed', {
          errorName: err?.name,
          reason: err?.message,
          problems: err?.problems,
          cause: String((err as { cause?: unknown })?.cause ?? ''),
        });
      },
    });
  return h as unknown as WrappedHandler<O>;
}

/** Default idempotency record lifetime: 1 hour (Powertools default), enough to absorb redeliveries. */
export const IdempotencyExpirySeconds = 3600;

/** The Powertools persistence layer on the shared table: pk = `idempotency#<function>`, sk = hashed key, `ttl`. */
export function idempotencyStore(client: DynamoDBClient, tableName: string, functionName: string): BasePersistenceLayer {
  return new DynamoDBPersistenceLayer({
    tableName,
    awsSdkV3Client: client,
    keyAttr: Table.partitionKey,
    sortKeyAttr: Table.sortKey,
    staticPkValue: keys.idempotency(functionName),
    expiryAttr: Table.ttlAttribute,
  });
}

/**
 * Makes `fn(event)` idempotent on `event[keyPath]` (JMESPath; e.g. 'id' for an EventBridge event):
 * a second call with the same key returns the first result without running `fn` again; a call
 * while the first is still running throws IdempotencyAlreadyInProgressError (retried later).
 * The config is registered with the chain ({@link wrapHandler} registers each invocation's Lambda
 * context on it); `context`, when given, is registered at once.
 */
export function idempotentOn<E extends Record<string, unknown>, R>(
  fn: (event: E) => Promise<R>,
  persistence: BasePersistenceLayer,
  keyPath: string,
  context?: Context,
): (event: E) => Promise<R> {
  const config = new IdempotencyConfig({ eventKeyJmesPath: keyPath, expiresAfterSeconds: IdempotencyExpirySeconds, throwOnNoIdempotencyKey: true });
  if (isLambdaContext(context)) config.registerLambdaContext(context);
  idempotencyConfigs.add(config);
  return makeIdempotent(fn, { persistenceStore: persistence, config }) as (event: E) => Promise<R>;
}
