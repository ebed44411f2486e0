/**
 * The graceful disruption methods, in the order they run. The first one that produces a command
 * wins the run (one command per run). Karpenter's order (KC pkg/controllers/disruption/controller.go
 * `NewMethods`): emptiness → static drift → drift → multi-node → single-node consolidation. nodefleet's graceful
 * expiration (an opt-in extension) runs before drift, where Karpenter before v1 ran expiration.
 * nodefleet's rebalance replacement (opt-in, rebalance.ts) runs first: a node EC2 flagged for
 * elevated interruption risk should be replaced before its two-minute notice comes.
 */
import { Drift } from './drift.ts';
import { Emptiness } from './emptiness.ts';
import { GracefulExpiration } from './graceful-expiration.ts';
import type { DisruptionMethod } from './method.ts';
import { Rebalance } from './rebalance.ts';
import { MultiNodeConsolidation } from './multi-node-consolidation.ts';
import { SingleNodeConsolidation } from './single-node-consolidation.ts';
import { StaticDrift } from './static-drift.ts';

export const Methods: readonly DisruptionMethod[] = [
  Rebalance,
  Emptiness,
  StaticDrift,
  GracefulExpiration,
  Drift,
  MultiNodeConsolidation,
  SingleNodeConsolidation,
];
