/**
 * The metrics contract between the functions (which emit, shared/runtime/observability.ts) and
 * the stack (whose dashboard plots, infra/aws/observability.ts): namespace and names. Karpenter's
 * names and label names (sigs.k8s.io/karpenter v1.15 pkg/metrics and each controller's
 * metrics.go; the AWS provider's pkg/controllers/interruption/metrics.go); gauges are emitted as
 * one value per run and plotted with Maximum.
 */
import type { Pod } from './kube.ts';

/** CloudWatch namespace of every nodefleet metric. */
export const MetricsNamespace = 'nodefleet';

/** Every metric nodefleet emits. */
export const MetricNames = {
  nodeClaimsCreated: 'karpenter_nodeclaims_created_total',
  nodeClaimsLaunched: 'karpenter_nodeclaims_launched_total',
  nodeClaimsRegistered: 'karpenter_nodeclaims_registered_total',
  nodeClaimsInitialized: 'karpenter_nodeclaims_initialized_total',
  nodeClaimsTerminated: 'karpenter_nodeclaims_terminated_total',
  nodeClaimsDisrupted: 'karpenter_nodeclaims_disrupted_total',
  /** NodeClaims node repair terminated (labels condition, nodepool, capacity_type, image_id). */
  nodeClaimsUnhealthyDisrupted: 'karpenter_nodeclaims_unhealthy_disrupted_total',
  /** Seconds from the NodeClaim's deletion to its instance gone (label nodepool). */
  nodeClaimsTerminationDuration: 'karpenter_nodeclaims_termination_duration_seconds',
  /** Nodes registered (label nodepool), at the registration step as Karpenter counts them. */
  nodesCreated: 'karpenter_nodes_created_total',
  /** Nodes whose termination finished (label nodepool). */
  nodesTerminated: 'karpenter_nodes_terminated_total',
  /** Nodes whose drain finished (label nodepool). */
  nodesDrained: 'karpenter_nodes_drained_total',
  /** Pods drained from terminating nodes (label reason: the disruption reason, or "Forceful Termination"). */
  podsDrained: 'karpenter_pods_drained_total',
  /** Eviction API calls (label code: the HTTP status). */
  evictionRequests: 'karpenter_pods_eviction_requests_total',
  podsStartupDuration: 'karpenter_pods_startup_duration_seconds',
  podsSchedulingDecisionDuration: 'karpenter_pods_scheduling_decision_duration_seconds',
  schedulingDuration: 'karpenter_scheduler_scheduling_duration_seconds',
  unschedulablePods: 'karpenter_scheduler_unschedulable_pods_count',
  cloudProviderErrors: 'karpenter_cloudprovider_errors_total',
  cloudProviderDuration: 'karpenter_cloudprovider_duration_seconds',
  launchFailures: 'karpenter_cloudprovider_instance_launch_failures_total',
  /** Interruption queue messages parsed (label message_type). */
  interruptionReceived: 'karpenter_interruption_received_messages_total',
  /** Interruption queue messages done with (acknowledged, so SQS deletes them). */
  interruptionDeleted: 'karpenter_interruption_deleted_messages_total',
  /** Disruption commands started (labels decision, reason, consolidation_type). */
  disruptionDecisions: 'karpenter_voluntary_disruption_decisions_total',
  /** Gauge: candidates a method found before budgets (label reason). */
  disruptionEligibleNodes: 'karpenter_voluntary_disruption_eligible_nodes',
  /** Gauge: disruptions a budget allows now (labels nodepool, reason), bounded budgets only. */
  nodePoolsAllowedDisruptions: 'karpenter_nodepools_allowed_disruptions',
  /** Gauge: nodes NotReady or being deleted, per pool. */
  nodePoolsNodesConsumingBudgets: 'karpenter_nodepools_nodes_consuming_budgets',
  /** Gauge: resources the pool's NodeClaims hold (labels nodepool, resource_type; cpu in cores, memory in bytes). */
  nodePoolsUsage: 'karpenter_nodepools_usage',
  /** Gauge: the pool's spec.limits (labels nodepool, resource_type). */
  nodePoolsLimit: 'karpenter_nodepools_limit',
  /** nodefleet's own: candidates a method could not take, by method and kind of reason. */
  disruptionBlocked: 'nodefleet_disruption_blocked_total',
  /** nodefleet's own (no Karpenter equivalent): seconds from Launched to Initialized. */
  nodeClaimLaunchToInitialized: 'nodefleet_nodeclaim_launch_to_initialized_seconds',
  /** nodefleet's own: instances gc terminated because no NodeClaim owns them. */
  orphanInstancesTerminated: 'nodefleet_orphan_instances_terminated_total',
  /**
   * nodefleet's own: per gc pass, the running instances no NodeClaim owns that were launched before
   * the table's claims epoch (kept, not terminated: shared/disruption/gc.ts `unownedBeforeEpoch`).
   */
  unownedInstancesBeforeEpoch: 'nodefleet_unowned_instances_before_epoch',
  /** nodefleet's own: NodeClaim items skipped because they do not parse (shared/aws/dynamo-node-claim-store.ts). */
  malformedNodeClaimItems: 'nodefleet_malformed_nodeclaim_items_total',
  /**
   * nodefleet's own: per gc pass, the running instances no NodeClaim owns whose Node is live (kept,
   * not terminated: shared/disruption/gc.ts `orphansWithNode`).
   */
  orphanInstancesWithNode: 'nodefleet_orphan_instances_with_node',
  /**
   * nodefleet's own: cluster views a function refused and read the cluster live instead
   * (shared/runtime/cluster-picture.ts), dimension `reason`: absent, unreachable, too-large, invalid, stale, future.
   */
  clusterViewRefused: 'nodefleet_cluster_view_refused_total',
} as const;

/**
 * `karpenter_pods_startup_duration_seconds` samples: for each pod whose Ready condition turned True
 * in (fromMs, toMs], seconds from its creation to then (KC pkg/controllers/metrics/pod). nodefleet
 * has no long-lived pod watcher: the disruption loop's plan step passes the window since the
 * previous scheduled run, so each pod is counted once when runs keep their period.
 */
export function podStartupSeconds(pods: readonly Pod[], fromMs: number, toMs: number): number[] {
  const out: number[] = [];
  for (const p of pods) {
    const ready = p.status?.conditions?.find((c) => c.type === 'Ready' && c.status === 'True');
    const at = ready?.lastTransitionTime ? Date.parse(ready.lastTransitionTime) : NaN;
    const created = p.metadata.creationTimestamp ? Date.parse(p.metadata.creationTimestamp) : NaN;
    if (!(at > fromMs && at <= toMs) || !Number.isFinite(created)) continue;
    out.push(Math.max(0, (at - created) / 1000));
  }
  return out;
}
