/**
 * Provisioner Lambda: `Unschedulable Pods` events from the agent → NodeClaims → CreateFleet.
 *
 * Input: the EventBridge event itself (rule target = this function, as deployed) or an SQS batch
 * whose bodies are such events (kept for an SQS-fronted deployment). A malformed event throws
 * ValidationError: the invocation fails, Lambda's async retries give up and the event lands in the
 * function's DLQ / on-failure destination with the reason in the log line "invocation failed".
 *
 * Serialised decisions per cluster: the function runs with **reserved concurrency 1** (one stack =
 * one cluster), so two passes never decide at once in production. Not relied on alone: claim names
 * are derived from their pods and created with a conditional put, so a concurrent or repeated pass
 * for the same pods creates (and launches) nothing new; pods already assigned to an in-flight claim
 * are skipped; and `handler` is Powertools-idempotent on the EventBridge event id (pk
 * `idempotency#provisioner` in the shared table).
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
  for (const e of all) if (e.detail.cluster !== deps.env.clusterName) deps.log.warn('ignoring unschedulable pods event for another cluster', { event: e.id, cluster: e.detail.cluster, expected: deps.env.clusterName });
  const pods = events.flatMap((e) => e.detail.pods.map(toPod));
  deps.log.debug('computing scheduling decision for provisionable pod(s)', { events: events.map((e) => e.id), 'pending-pods': pods.length });
  return provision(deps, pods);
}

let idempotentRun: ((e: Record<string, unknown>) => Promise<ProvisionSummary>) | undefined;

/** The idempotent run, made on the first invocation with its Lambda context (later ones: the chain registers theirs). */
function idempotent(deps: Deps, context?: Context): (e: Record<string, unknown>) => Promise<ProvisionSummary> {
  const persistence = deps.idempotency ?? (deps.clients ? idempotencyStore(deps.clients.dynamodb, deps.env.tableName, 'provisioner') : undefined);
  idempotentRun ??= persistence ? idempotentOn((e: Record<string, unknown>) => run(e as Input, deps), persistence, 'id', context) : (e) => run(e as Input, deps);
  return idempotentRun;
}

/** Lambda entry: the shared middy chain around run, idempotent on the event id. */
export const handler: (event: unknown, context: Context) => Promise<ProvisionSummary> = wrapHandler(
  'provisioner',
  async (input: Input, deps: Deps, context?: Context) => ('Records' in input ? run(input, deps) : idempotent(deps, context)(input as unknown as Record<string, unknown>)),
  { parse: parseInput },
);
