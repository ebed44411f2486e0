/**
 * Every Lambda function of nodefleet, in one list: adding a function is one line here. The stack
 * builds each entry the same way (NodejsFunction, own role, log group, env, DLQ for async paths)
 * and wires its trigger and permissions from this description.
 *
 * This list is also the one place where not-yet-written functions are tolerated: an entry whose
 * file does not exist is skipped at synth with a warning (never replaced by a fake).
 * The termination state machine's task functions are not listed: they are derived from the
 * `${…FunctionArn}` substitutions in statemachines/termination.asl.json (see termination.ts).
 */
import { DisruptionLoopPeriodSeconds, EventRules, InterruptionRuleNames } from '../../shared/api/contract.ts';
import { FunctionPermissions, type Permission } from '../../shared/api/iam-policy.ts';

export type { Permission } from '../../shared/api/iam-policy.ts';

/** How a function is invoked. */
export type Trigger =
  /** An EventBridge rule on nodefleet's bus → SQS FIFO (one message group per cluster) → the function: serialised decisions. */
  | { kind: 'fifoQueue'; rule: keyof typeof EventRules }
  /** An EventBridge rule on nodefleet's bus → the function (async invoke). */
  | { kind: 'rule'; rule: keyof typeof EventRules }
  /** EventBridge rules on the default bus → SQS (SSE, DLQ) → the function (batch, ReportBatchItemFailures). */
  | { kind: 'queue'; rules: readonly (keyof typeof EventRules)[]; optional: 'interruption' }
  /** EventBridge Scheduler, every `minutes` minutes (async invoke). */
  | { kind: 'schedule'; minutes: number }
  /**
   * EventBridge Scheduler, every `minutes` minutes, starts an execution of a Standard state
   * machine (`definition`, repository-relative ASL with one substitution `${<Name>FunctionArn}`)
   * that invokes the function (synchronously) in a loop: plan → Wait → act. For re-entrant
   * functions whose steps are separated by waits longer than an invocation should last.
   */
  | { kind: 'loop'; minutes: number; definition: string };

/** One Lambda function. */
export interface FunctionSpec {
  /** Short name: construct id and suffix of the function name (`nodefleet-<cluster>-<name>`). */
  name: string;
  /** Entry file relative to the repository root; exports `handler`. */
  entry: string;
  trigger: Trigger;
  /** Permission sets (shared/api/iam-policy.ts `FunctionPermissions`, one source with the embedded environment). */
  permissions: readonly Permission[];
  /** Timeout in seconds. */
  timeoutSeconds: number;
  /** Memory in MiB (CPU scales with it; the provisioner's simulation is CPU-bound). */
  memoryMiB: number;
  /**
   * Reserved concurrency, when decisions must not run concurrently (1 = serialised). Throttled
   * async invocations wait in Lambda's internal queue, so such a function is alarmed on
   * AsyncEventAge instead of Throttles.
   */
  reservedConcurrency?: number;
}

/** The event-driven and scheduled functions (the agent is not here: it runs in the cluster). */
export const Functions: readonly FunctionSpec[] = [
  // Serialised by reserved concurrency 1 (engineer P's choice, functions/provisioner/handler.ts); `{ kind: 'fifoQueue', rule: 'provisioner' }` is the alternative.
  {
    name: 'provisioner',
    entry: 'functions/provisioner/handler.ts',
    trigger: { kind: 'rule', rule: 'provisioner' },
    permissions: FunctionPermissions.provisioner,
    timeoutSeconds: 120,
    memoryMiB: 2048,
    reservedConcurrency: 1,
  },
  {
    name: 'registration',
    entry: 'functions/registration/handler.ts',
    trigger: { kind: 'rule', rule: 'registration' },
    permissions: FunctionPermissions.registration,
    timeoutSeconds: 30,
    memoryMiB: 512,
  },
  // Re-entrant (functions/disruption/handler.ts): invoked directly it only plans, so the disruption
  // loop state machine drives it (plan → Wait 15 s validation → act → Wait for replacements → terminate).
  // 300 s: a planning run's consolidation search is bounded by Karpenter's time budgets, 1 min
  // multi-node + 3 min single-node (shared/disruption/constants.ts), plus reading the picture.
  {
    name: 'disruption',
    entry: 'functions/disruption/handler.ts',
    trigger: { kind: 'loop', minutes: DisruptionLoopPeriodSeconds / 60, definition: 'statemachines/disruption-loop.asl.json' },
    permissions: FunctionPermissions.disruption,
    timeoutSeconds: 300,
    memoryMiB: 2048,
  },
  // gc terminates orphans and deletes nodes itself, and starts the next attempt of a termination
  // that ended unfinished (StartExecution): functions/gc/handler.ts.
  {
    name: 'gc',
    entry: 'functions/gc/handler.ts',
    trigger: { kind: 'schedule', minutes: 1 },
    permissions: FunctionPermissions.gc,
    timeoutSeconds: 55,
    memoryMiB: 512,
  },
  {
    name: 'interruption',
    entry: 'functions/interruption/handler.ts',
    trigger: { kind: 'queue', rules: InterruptionRuleNames, optional: 'interruption' },
    permissions: FunctionPermissions.interruption,
    timeoutSeconds: 20,
    memoryMiB: 512,
  },
];

export { DefaultTerminationTaskPermissions, TerminationTaskPermissions } from '../../shared/api/iam-policy.ts';

/** Termination task functions: timeout (seconds) and memory (MiB). Each call is one short, re-entrant step. */
export const TerminationTaskTimeoutSeconds = 60;
export const TerminationTaskMemoryMiB = 512;
