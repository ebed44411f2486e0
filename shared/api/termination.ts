/**
 * The termination state machine's contract shared by its starters (shared/aws, infra/local), the
 * CDK stack and the CLI: execution naming, the substitution variables of
 * statemachines/termination.asl.json, and the execution-history record the CLI prints.
 */

import { fnv1a32 } from './hash.ts';

/** Step Functions execution names: 1–80 characters of [0-9A-Za-z_-] (StartExecution `name`). */
export const ExecutionNameMaxLength = 80;

/**
 * The execution name of attempt `attempt` (1, 2, …) of a NodeClaim's termination. Attempt 1: the
 * claim name itself when it is a valid execution name (Karpenter-style names such as
 * `default-x7k2p` are), else the name with invalid characters replaced by `-`, truncated, and
 * suffixed with an FNV-1a hash so distinct claims keep distinct names. Attempt n ≥ 2: that name
 * (shortened to fit) + `_n` — `_` never occurs in a Kubernetes name, so an attempt name can never
 * be another claim's. Starting the same attempt twice hits the same execution (idempotent); a
 * failed or continued attempt is carried on under the next name, and the failed one's history
 * stays readable (`history` lists every attempt).
 */
export function terminationExecutionName(nodeClaim: string, attempt = 1): string {
  const suffix = attempt > 1 ? `_${attempt}` : '';
  const max = ExecutionNameMaxLength - suffix.length;
  const clean = nodeClaim.replace(/[^0-9A-Za-z_-]/g, '-');
  if (clean === nodeClaim && clean.length > 0 && clean.length <= max) return `${clean}${suffix}`;
  const hash = fnv1a32(nodeClaim).toString(16).padStart(8, '0');
  return `${clean.slice(0, max - hash.length - 1)}-${hash}${suffix}`;
}

/** The attempt number of an execution name made by {@link terminationExecutionName} (1 when it has no `_n`). */
export function terminationAttemptOf(executionName: string): number {
  const m = /_(\d+)$/.exec(executionName);
  return m ? Number(m[1]) : 1;
}

/**
 * Definition substitutions of statemachines/termination.asl.json (`${Name}` in Task `Resource`),
 * each the ARN of the Lambda built from functions/termination/<file>.ts.
 */
export const TerminationTaskFunctions = {
  CordonFunctionArn: 'cordon',
  DrainFunctionArn: 'drain',
  CutoffFunctionArn: 'cutoff',
  TerminateInstanceFunctionArn: 'terminate-instance',
  DeleteNodeFunctionArn: 'delete-node',
  FinalizeFunctionArn: 'finalize',
  RecordFailureFunctionArn: 'record-failure',
} as const;
export type TerminationSubstitution = keyof typeof TerminationTaskFunctions;

/**
 * One event of an execution's history, in the shape GetExecutionHistory gives (simplified):
 * `type` is the Step Functions HistoryEventType (TaskStateEntered, WaitStateExited,
 * ExecutionFailed, …); times are RFC 3339.
 */
export interface ExecutionHistoryEvent {
  id: number;
  type: string;
  timestamp: string;
  stateName?: string;
  /** JSON text, as Step Functions reports it. */
  input?: string;
  output?: string;
  error?: string;
  cause?: string;
}

/** An execution with its history (what `nodefleet history NODECLAIM` prints). */
export interface ExecutionRecord {
  name: string;
  executionArn?: string;
  status: 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'TIMED_OUT' | 'ABORTED';
  startDate: string;
  stopDate?: string;
  input?: string;
  output?: string;
  error?: string;
  cause?: string;
  events: ExecutionHistoryEvent[];
}
