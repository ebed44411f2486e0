/**
 * The disruption function's input and output (zod schemas; types inferred). The input is what
 * EventBridge Scheduler sends (anything: a fresh run) or what the previous invocation returned
 * (Step Functions loop: a command to validate, then replacement claims to wait for).
 */
import { z } from 'zod';

const CapacityType = z.enum(['reserved', 'spot', 'on-demand']);

export const ReplacementClaimSchema = z.object({
  nodePool: z.string(),
  requirements: z.array(
    z.object({
      key: z.string(),
      operator: z.enum(['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt', 'Gte', 'Lte']),
      values: z.array(z.string()).optional(),
      minValues: z.number().optional(),
    }),
  ),
  instanceTypes: z.array(z.string()).min(1),
  labels: z.record(z.string(), z.string()),
  taints: z.array(
    z.object({
      key: z.string(),
      value: z.string().optional(),
      effect: z.enum(['NoSchedule', 'PreferNoSchedule', 'NoExecute']),
      timeAdded: z.string().optional(),
    }),
  ),
  startupTaints: z.array(
    z.object({
      key: z.string(),
      value: z.string().optional(),
      effect: z.enum(['NoSchedule', 'PreferNoSchedule', 'NoExecute']),
      timeAdded: z.string().optional(),
    }),
  ),
  requests: z.record(z.string(), z.string()),
  capacityTypes: z.array(CapacityType),
  zones: z.array(z.string()),
  priceUsdPerHour: z.number(),
  pods: z.array(z.string()),
});

export const CommandCandidateSchema = z.object({
  nodeName: z.string(),
  nodeClaim: z.string(),
  nodePool: z.string(),
  instanceType: z.string(),
  zone: z.string(),
  capacityType: CapacityType,
  priceUsdPerHour: z.number().optional(),
  instanceId: z.string().optional(),
  providerID: z.string().optional(),
  driftReason: z
    .enum(['NodePoolDrifted', 'RequirementsDrifted', 'InstanceTypeNotFound', 'NodeClassDrift', 'AMIDrift', 'SubnetDrift', 'SecurityGroupDrift'])
    .optional(),
  pods: z.array(z.string()),
});

export const DisruptionCommandSchema = z.object({
  id: z.string(),
  method: z.enum(['rebalance', 'emptiness', 'static-drift', 'graceful-expiration', 'drift', 'multi-node-consolidation', 'single-node-consolidation']),
  reason: z.enum(['Empty', 'Drifted', 'Underutilized', 'Expired', 'Rebalance']),
  decision: z.enum(['delete', 'replace']),
  candidates: z.array(CommandCandidateSchema).min(1),
  replacements: z.array(ReplacementClaimSchema),
  savingsUsdPerHour: z.number().optional(),
  createdAt: z.string(),
  validateAfter: z.string(),
});

/** Input: empty / scheduler payload = plan; `command` = validate and act; plus `replacementClaims` = wait for them. */
export const DisruptionInputSchema = z.looseObject({
  command: DisruptionCommandSchema.optional(),
  /** NodeClaim names of the replacements launched for `command`. */
  replacementClaims: z.array(z.string()).optional(),
  /** A loop step failed (disruption-loop.asl.json Abandon): release what `command` holds that no termination took over. */
  abandon: z.boolean().optional(),
});
export type DisruptionInput = z.infer<typeof DisruptionInputSchema>;

/** What one invocation did; `retryAfterSeconds` + the same shape as input = call again (Step Functions Wait). */
export interface DisruptionOutput {
  status: 'idle' | 'validating' | 'invalidated' | 'budget-exhausted' | 'waiting-for-replacements' | 'terminating' | 'abandoned';
  command?: z.infer<typeof DisruptionCommandSchema>;
  replacementClaims?: string[];
  retryAfterSeconds?: number;
  /** Why the command was dropped. */
  reason?: string;
  /** NodeClaims whose termination was started (expirations and the command's candidates). */
  terminationsStarted: string[];
  simulations?: number;
  /** Static NodePools' claims launched and excess ones whose termination started this pass. */
  staticCapacity?: { launched: string[]; terminating: string[] };
}
