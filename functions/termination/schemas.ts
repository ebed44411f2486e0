/**
 * zod schemas of the termination state machine's data (statemachines/termination.asl.json).
 * Every Task receives the whole execution state (the input plus each earlier Task's result under
 * its ResultPath) and parses what it needs; unknown keys are ignored.
 */
import type { MetricsSink } from '../../shared/runtime/observability.ts';
import { z } from 'zod';
import type { BudgetCounter, Clock, CloudProvider, EventPublisher, KubeApi, NodeClaimStore } from '../../shared/api/ports.ts';

/** TerminationInput (shared/api/ports.ts) as the execution receives it. */
export const TerminationInputSchema = z.object({
  nodeClaim: z.string().min(1),
  nodeName: z.string().nullish(),
  instanceId: z.string().nullish(),
  reason: z.enum(['consolidation', 'drift', 'expiration', 'interruption', 'emptiness', 'manual', 'gc', 'unhealthy', 'overprovisioned']),
  /**
   * Epoch ms, a request: obeyed only as far as the claim's record allows
   * (shared/api/termination-target.ts terminationDeadline); absent = no deadline beyond a verified notice.
   */
  deadlineEpochMs: z.number().nullish(),
  budgetNodePool: z.string().nullish(),
  /** Which execution of the claim's termination this is (1 when absent). */
  attempt: z.number().int().min(1).nullish(),
});
export type TerminationState = z.infer<typeof TerminationInputSchema>;

/**
 * Cordon's result, at `$.target`: for the history and the status CLI only. No task acts on it
 * (it is part of the execution state a StartExecution could forge): each reads its target from
 * the claim (functions/termination/target.ts).
 */
export const TargetSchema = z.object({
  nodeName: z.string().nullable(),
  instanceId: z.string().nullable(),
  nodeFound: z.boolean(),
});
export type Target = z.infer<typeof TargetSchema>;

/** Drain's result, at `$.drain`. `retryAfterSeconds` feeds the WaitForDrain state. */
export const DrainResultSchema = z.object({
  /** Drained and no VolumeAttachment keeps the instance: go on to TerminateInstance. */
  done: z.boolean(),
  /** Every pod the drain waits for is gone (the NodeClaim's Drained condition). */
  drained: z.boolean().default(false),
  /** VolumeAttachments still keeping the instance once drained (first 10 names; the count is exact). */
  volumesPending: z.array(z.string()).default([]),
  volumesPendingCount: z.number().int().default(0),
  deadlineReached: z.boolean(),
  retryAfterSeconds: z.number().int().min(0),
  /** Loop count, 1 on the first Drain. */
  attempt: z.number().int(),
  evicted: z.array(z.string()),
  blocked: z.array(z.string()),
  deletedEarly: z.array(z.string()),
  /** Pods still keeping the node (first 10, namespace/name). */
  remaining: z.array(z.string()),
  remainingCount: z.number().int(),
  /** The loop has run MaxDrainLoopsPerExecution rounds: end this execution and carry on as the next attempt (history limit). */
  continueAsNew: z.boolean().default(false),
  /** The provisioner was asked for the capacity of the pods only the cutoff will move (drain-plan.ts `replacementDue`); not asked again in this execution. */
  replacementRequested: z.boolean().default(false),
});
export type DrainResult = z.infer<typeof DrainResultSchema>;

/** An error caught by a Catch (ResultPath `$.error`). */
export const CaughtErrorSchema = z.object({ Error: z.string(), Cause: z.string().nullish() });

/** RecordFailure's result, at `$.failure` (see functions/termination/record-failure.ts). */
export const FailureResultSchema = z.object({
  recorded: z.boolean(),
  secondsUntilDeadline: z.number().nullable(),
  lastError: z.string(),
  /** Drain-phase failures so far in this execution. */
  failures: z.number().int().default(0),
  /** Seconds to wait before trying Cordon + Drain again. */
  retryAfterSeconds: z.number().int().min(0).default(0),
  deadlineReached: z.boolean().default(false),
  continueAsNew: z.boolean().default(false),
});

/** The whole execution state, as each Task receives it. */
export const TaskInputSchema = TerminationInputSchema.extend({
  target: TargetSchema.optional(),
  drain: DrainResultSchema.optional(),
  /** Caught in the terminate phase (TerminateInstance, Finalize): the execution will fail. */
  error: CaughtErrorSchema.optional(),
  /** Caught in the drain phase (Cordon, Drain): recorded, then Cordon + Drain are tried again. */
  drainError: CaughtErrorSchema.optional(),
  failure: FailureResultSchema.optional(),
  /** Set by the ContinueAsNew Pass state: this execution ends and the next attempt carries on. */
  ending: z.enum(['continued']).optional(),
});
export type TaskInput = z.infer<typeof TaskInputSchema>;

/** Ports the termination tasks use (each task takes the subset it needs). */
export interface TerminationDeps {
  kube: KubeApi;
  cloud: CloudProvider;
  store: NodeClaimStore;
  budgets: BudgetCounter;
  clock: Clock;
  /** This stack's cluster (NODEFLEET_CLUSTER_NAME): instances must carry its tag; the claim's own `cluster` when absent. */
  clusterName?: string;
  /** Structured log (Karpenter's termination log lines); optional so tests may omit it. */
  log?: TaskLog;
  /** Karpenter's termination metrics (shared/api/metrics.ts); optional so tests may omit it. */
  metrics?: MetricsSink;
  /** nodefleet's bus (the Drain task asks the provisioner for capacity due before the cutoff); absent = not asked. */
  publisher?: EventPublisher;
}

/** The log calls the tasks make (Powertools' logger and the local LogTap both fit). */
export interface TaskLog {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
}
