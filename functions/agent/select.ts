/**
 * Which pods the agent forwards: those kube-scheduler gave up on (Karpenter's rule, KC
 * pkg/utils/pod/scheduling.go `IsProvisionable`): PodScheduled=False with reason Unschedulable,
 * not bound, not nominated (preempting), not terminating, not DaemonSet-owned, not mirror.
 * The agent only selects and forwards; every decision is the provisioner's.
 */
export { isProvisionable } from '../../shared/api/agent-events.ts';
