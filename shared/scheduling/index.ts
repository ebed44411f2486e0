/**
 * Scheduling simulation and bin packing: the provisioning brain.
 *
 * `solve(input)` takes a snapshot (pending pods, NodePools, existing nodes and in-flight
 * NodeClaims, instance types) and returns which pods go on existing capacity, which new
 * NodeClaims to create, and which pods cannot run with a reason per NodePool. Pure: no I/O,
 * no clock. Behaviour follows Karpenter's `Scheduler.Solve`
 * (kubernetes-sigs/karpenter pkg/controllers/provisioning/scheduling/scheduler.go).
 */
export type {
  ExistingNode,
  DaemonSetTemplate,
  UnavailableOffering,
  SchedulingSettings,
  SchedulingInput,
  NewNodeClaim,
  Placement,
  UnschedulablePod,
  SchedulingResult,
} from './types.ts';
export { solve } from './scheduler.ts';
export { podRequests } from './resources.ts';
