/**
 * Which pods the agent forwards: those kube-scheduler gave up on (Karpenter's rule, KC
 * pkg/utils/pod/scheduling.go `IsProvisionable`): PodScheduled=False with reason Unschedulable,
 * not bound, not nominated (preempting), not terminating, not DaemonSet-owned, not mirror.
 * The agent only selects and forwards; every decision is the provisioner's.
 */
import type { Pod } from '../../shared/api/kube.ts';

export function isProvisionable(p: Pod): boolean {
  if (p.spec?.nodeName) return false;
  if (p.metadata.deletionTimestamp) return false;
  if (p.status?.nominatedNodeName) return false;
  if (p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed') return false;
  if (p.metadata.ownerReferences?.some((o) => o.kind === 'DaemonSet')) return false;
  if (p.metadata.annotations?.['kubernetes.io/config.mirror']) return false;
  const scheduled = p.status?.conditions?.find((c) => c.type === 'PodScheduled');
  return scheduled?.status === 'False' && scheduled.reason === 'Unschedulable';
}
