/**
 * Scheduling simulation and bin packing: the provisioning brain.
 *
 * `solve(input)` takes a snapshot (pending pods, NodePools, existing nodes and in-flight
 * NodeClaims, instance types) and returns which pods go on existing capacity, which new
 * NodeClaims to create, and which pods cannot run with a reason per NodePool. Pure: no I/O,
 * no clock. Behaviour follows Karpenter's `Scheduler.Solve`
 * (kubernetes-sigs/karpenter pkg/controllers/provisioning/scheduling/scheduler.go).
 *
 * Repeated calls (disruption simulations, one per candidate): create one cache per pass (or per
 * Lambda container) and pass it in every call, so the per-NodePool template (admitted types,
 * offerings, daemonset overhead, price order) is built once instead of on every call:
 *
 * ```ts
 * const cache = createSchedulingCache();            // once per disruption pass
 * solve({ ...snapshotInput, pods, existingNodes, cache });  // each simulation
 * ```
 *
 * Hits need the same instance-type array object (`instanceTypes(pool)` returning the same
 * array each call, as `() => types` does) and the same NodePool template, daemonsets, ICE-cached
 * offerings and settings by content. Results are identical with or without the cache; never
 * mutate a cached instance-type array (pass a new one when the catalog changes).
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
  RelaxedPod,
  RelaxedPreference,
  SchedulingResult,
} from './types.ts';
export { solve } from './scheduler.ts';
export { createSchedulingCache, type SchedulingCache } from './cache.ts';
export { podRequests } from './resources.ts';
export { schedulingTaints } from './taints.ts';
