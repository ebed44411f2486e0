/**
 * Provisioner Lambda: `Unschedulable Pods` events from the agent → NodeClaims → CreateFleet.
 *
 * Input: the EventBridge event itself (rule target = this function, as deployed) or an SQS batch
 * whose bodies are such events (kept for an SQS-fronted deployment). A malformed event throws
 * ValidationError: the invocation fails, Lambda's async retries give up and the event lands in the
 * function's DLQ / on-failure destination with the reason in the log line "invocation failed".
 *
 * Serialised decisions per cluster: the function runs with **reserved concurrency 1** (one stack =
 * one cluster), so two passes never decide at once in production. Not relied on alone: `handler`
 * is Powertools-idempotent on the EventBridge event id (pk `idempotency#provisioner` in the shared
 * table; see {@link handle}), so a redelivered event does not decide again; and a later pass for
 * the same pods finds them assigned to the in-flight claim made for them and skips them. Claim
 * names are unique per creation (NodePool + random suffix, conditional create).
 */
import { z } from 'zod';
import type { Context } from 'aws-lambda';
import { UnschedulablePodsEventSchema, toPod, type UnschedulablePodsEvent } from '../../shared/api/agent-events.ts';
import { wrapHandler, idempotencyStore, idempotentOn, parseWith } from '../../shared/runtime/middleware.ts';
import type { Deps } from '../../shared/runtime/deps.ts';
import { provision, type ProvisionerDeps, type ProvisionSummary } from './provision.ts';

const SqsBatchSchema = z.object({ Records: z.array(z.looseObject({ messageId: z.string(), body: z.string() })).min(1) });

/** Input: one agent event, or an SQS batch of them (bodies parsed below). */
export const InputSchema = z.union([UnschedulablePodsEventSchema, SqsBatchSchema]);
export type Input = z.infer<typeof InputSchema>;

/** Parses an input (EventBridge event or SQS batch). @throws ValidationError naming the problems. */
export function parseInput(input: unknown): Input {
  if (input && typeof input === 'object' && 'Records' in input) return parseWith(SqsBatchSchema, input, 'provisioner input (SQS batch)');
  return parseWith(UnschedulablePodsEventSchema, input, 'provisioner input');
}

function eventsOf(input: Input): UnschedulablePodsEvent[] {
  if ('Records' in input) return input.Records.map((r) => parseWith(UnschedulablePodsEventSchema, JSON.parse(r.body), `SQS message ${r.messageId}`));
  return [input];
}

/** Processes the pods of every event in one pass (pods deduplicated by namespace/name). */
export async function run(input: Input, deps: ProvisionerDeps): Promise<ProvisionSummary> {
  const all = eventsOf(input);
  // One bus may carry several clusters' agents: another cluster's pods are never provisioned here.
  const events = all.filter((e) => e.detail.cluster === deps.env.clusterName);
  for (const e of all)
    if (e.detail.cluster !== deps.env.clusterName)
      deps.log.warn('ignoring unschedulable pods event for another cluster', { event: e.id, cluster: e.detail.cluster, expected: deps.env.clusterName });
  // No event of this cluster: nothing to do (an event of this cluster without pods asks for a full pass, provision.ts).
  if (events.length === 0)
    return { provisionable: 0, created: [], launched: [], unfulfillable: [], failed: [], unschedulable: [], placedOnExisting: 0, backingOff: 0 };
  const pods = events.flatMap((e) => e.detail.pods.map(toPod));
  deps.log.debug('computing scheduling decision for provisionable pod(s)', { events: events.map((e) => e.id), 'pending-pods': pods.length });
  return provision(deps, pods);
}

/** The idempotent run per deps (one per Lambda process in AWS; tests and the local environment bring their own deps). */
const idempotentRuns = new WeakMap<Deps, (e: Record<string, unknown>) => Promise<ProvisionSummary>>();

/** The idempotent run, made on the first invocation with its Lambda context (later ones: the chain registers theirs). */
function idempotent(deps: Deps, context?: Context): (e: Record<string, unknown>) => Promise<ProvisionSummary> {
  let f = idempotentRuns.get(deps);
  if (!f) {
    const persistence = deps.idempotency ?? (deps.clients ? idempotencyStore(deps.clients.dynamodb, deps.env.tableName, 'provisioner') : undefined);
    f = persistence ? idempotentOn((e: Record<string, unknown>) => run(e as Input, deps), persistence, 'id', context) : (e) => run(e as Input, deps);
    idempotentRuns.set(deps, f);
  }
  return f;
}

/**
 * What `handler` runs inside the shared chain: an SQS batch goes to `run` (its messages carry their
 * own redelivery); an EventBridge event goes to `run` made idempotent on the event id (Powertools,
 * persistence `deps.idempotency` or the shared table), so a redelivered event returns the first
 * result without a second pass. Tests call this with their deps.
 */
export async function handle(input: Input, deps: Deps, context?: Context): Promise<ProvisionSummary> {
  return 'Records' in input ? run(input, deps) : idempotent(deps, context)(input as unknown as Record<string, unknown>);
}

/** Lambda entry: the shared middy chain around {@link handle}. */
export const handler: (event: unknown, context: Context) => Promise<ProvisionSummary> = wrapHandler('provisioner', handle, { parse: parseInput });
