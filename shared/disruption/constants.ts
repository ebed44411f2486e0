/**
 * Tuning numbers that carry behaviour, each with its reason and source.
 */

/**
 * Seconds between planning a command and acting on it: the cluster is re-read and the command
 * re-simulated after this wait, and dropped if pods churned meanwhile. Karpenter
 * `commandValidationDelay = 15s` (KC pkg/controllers/disruption/validation.go).
 */
export const CommandValidationDelaySeconds = 15;

/**
 * A single spot node is replaced by another spot node only when at least this many cheaper
 * instance types can hold its pods, and only the 15 cheapest are launched: with fewer, the
 * replacement would likely land on the same interruption-prone pools and churn. Karpenter
 * `MinInstanceTypesForSpotToSpotConsolidation` (KC pkg/controllers/disruption/consolidation.go).
 */
export const MinInstanceTypesForSpotToSpotConsolidation = 15;

/** Multi-node consolidation looks at the first 100 candidates only, to bound the binary search (KC multinodeconsolidation.go). */
export const MultiNodeMaxCandidates = 100;

/**
 * Upper bound on scheduling simulations per plan, next to the time budgets below: one
 * simulation of a 200-node / 4 000-pod cluster costs ~0.2 s on a Lambda-sized CPU, so 150 keep
 * a run near 30 s there; on a big cluster a simulation costs more and the time budget ends the
 * search first. Candidates beyond either bound are reached by the next runs
 * (single-node-consolidation.ts rotates its start).
 */
export const DefaultMaxSimulations = 150;

/**
 * Multi-node consolidation stops its search after this much time and keeps the best command
 * found so far. Karpenter `MultiNodeConsolidationTimeoutDuration = 1 * time.Minute`
 * (KC pkg/controllers/disruption/multinodeconsolidation.go).
 */
export const MultiNodeConsolidationTimeoutMs = 60_000;

/**
 * Single-node consolidation gives up (no command this run) after this much time.
 * Karpenter `SingleNodeConsolidationTimeoutDuration = 3 * time.Minute`
 * (KC pkg/controllers/disruption/singlenodeconsolidation.go).
 */
export const SingleNodeConsolidationTimeoutMs = 180_000;

/** Default budget when a NodePool lists none (KC pkg/apis/v1/nodepool.go kubebuilder default). */
export const DefaultBudgetNodes = '10%';

/** Pod annotation value forms of karpenter.sh/do-not-disrupt that block: "true", or a duration since pod start. */
export const DoNotDisruptTrue = 'true';

/** Karpenter's per-pod disruption cost terms (KC pkg/utils/disruption/disruption.go `EvictionCost`). */
export const PodDeletionCostDivisor = 2 ** 27;
export const PodPriorityDivisor = 2 ** 25;
export const PodEvictionCostClamp = 10;
/** Rescheduling cost of a node before its pods, so an empty node's savings ratio is its price (KC pkg/utils/disruption/disruption.go `PerNodeBaseDisruptionCost`). */
export const PerNodeRescheduleCost = 1;

/** Balanced consolidation approves a move when score ≥ 1/k, k = 2 (KC nodepool.go `BalancedK`, designs/balanced-consolidation.md). */
export const BalancedK = 2;
