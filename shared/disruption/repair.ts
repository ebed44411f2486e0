/**
 * Node repair decisions (pure; gc runs them every minute on the live Nodes, behind the NodeRepair
 * feature gate): a NodeClaim whose Node has kept an unhealthy condition past its repair policy's
 * toleration is terminated forcefully, unless too many of its NodePool's nodes are unhealthy.
 *
 * Sources: KC pkg/controllers/node/legacyrepair (the node.health controller: the condition whose
 * toleration ends first, the NodePool health guard, a termination deadline of now, the metrics),
 * KA pkg/cloudprovider/cloudprovider.go `legacyRepairPolicies` (the conditions and tolerations).
 * Karpenter v1.15 runs that controller with LEGACY_NODE_REPAIR=true; by default it repairs as a
 * disruption method instead (budgets, a replacement launched first, `karpenter.sh/do-not-repair`,
 * per-reason policies with a bounded drain, reboot). nodefleet implements the controller only, for
 * both values (docs/settings.md).
 */
import type { Node, NodeCondition } from '../api/kube.ts';
import type { NodeClaim } from '../api/nodeclaim.ts';
import { LabelNodePool } from '../api/labels.ts';
import { nodeDisagreement } from '../api/termination-target.ts';

/** One unhealthy condition the cloud provider replaces a node for, after `tolerationSeconds` in it. */
export interface RepairPolicy {
  conditionType: string;
  conditionStatus: NodeCondition['status'];
  /** Only a condition whose reason matches (absent: any reason). */
  reasonRegex?: string;
  tolerationSeconds: number;
  /** Only ReplaceNode policies are acted on (the node.health controller ignores the others). */
  action: 'ReplaceNode' | 'RebootNode';
}

/**
 * The AWS provider's repair policies for the node.health controller: kubelet Ready False or
 * Unknown, and the EKS node monitoring agent's conditions (AcceleratedHardwareReady 10 minutes,
 * the others 30).
 */
export const RepairPolicies: readonly RepairPolicy[] = [
  { conditionType: 'Ready', conditionStatus: 'False', tolerationSeconds: 30 * 60, action: 'ReplaceNode' },
  { conditionType: 'Ready', conditionStatus: 'Unknown', tolerationSeconds: 30 * 60, action: 'ReplaceNode' },
  { conditionType: 'AcceleratedHardwareReady', conditionStatus: 'False', tolerationSeconds: 10 * 60, action: 'ReplaceNode' },
  { conditionType: 'StorageReady', conditionStatus: 'False', tolerationSeconds: 30 * 60, action: 'ReplaceNode' },
  { conditionType: 'NetworkingReady', conditionStatus: 'False', tolerationSeconds: 30 * 60, action: 'ReplaceNode' },
  { conditionType: 'KernelReady', conditionStatus: 'False', tolerationSeconds: 30 * 60, action: 'ReplaceNode' },
  { conditionType: 'ContainerRuntimeReady', conditionStatus: 'False', tolerationSeconds: 30 * 60, action: 'ReplaceNode' },
];

/**
 * No node of a NodePool is repaired while more than this share of the pool's Nodes has a condition
 * a policy matches (whatever its toleration), rounded up: one of three may be unhealthy.
 */
export const RepairUnhealthyPercent = 20;

/** The Node's condition that makes it due for repair first, and when (epoch ms). */
export interface UnhealthyCondition {
  condition: NodeCondition;
  policy: RepairPolicy;
  repairAtMs: number;
}

function matches(policy: RepairPolicy, c: NodeCondition | undefined): c is NodeCondition {
  if (!c || c.status !== policy.conditionStatus) return false;
  return policy.reasonRegex === undefined || new RegExp(policy.reasonRegex).test(c.reason ?? '');
}

function replacePolicies(policies: readonly RepairPolicy[]): RepairPolicy[] {
  return policies.filter((p) => p.action === 'ReplaceNode');
}

/**
 * The unhealthy condition whose toleration ends first (measured from its lastTransitionTime, never
 * before the Node's creation), or undefined when the Node is healthy by every policy.
 */
export function unhealthyCondition(node: Node, policies: readonly RepairPolicy[] = RepairPolicies): UnhealthyCondition | undefined {
  const created = node.metadata.creationTimestamp ? Date.parse(node.metadata.creationTimestamp) : NaN;
  let best: UnhealthyCondition | undefined;
  for (const policy of replacePolicies(policies)) {
    const c = node.status?.conditions?.find((x) => x.type === policy.conditionType);
    if (!matches(policy, c)) continue;
    const since = c.lastTransitionTime ? Date.parse(c.lastTransitionTime) : NaN;
    const from = Math.max(Number.isNaN(since) ? -Infinity : since, Number.isNaN(created) ? -Infinity : created);
    const repairAtMs = (Number.isFinite(from) ? from : 0) + policy.tolerationSeconds * 1000;
    if (!best || repairAtMs < best.repairAtMs) best = { condition: c, policy, repairAtMs };
  }
  return best;
}

/** Whether any policy matches one of the Node's conditions, toleration aside (the health guard's count). */
export function isUnhealthy(node: Node, policies: readonly RepairPolicy[] = RepairPolicies): boolean {
  return replacePolicies(policies).some((p) =>
    matches(
      p,
      node.status?.conditions?.find((x) => x.type === p.conditionType),
    ),
  );
}

/** The most unhealthy Nodes of `total` the guard allows: {@link RepairUnhealthyPercent}, rounded up. */
export function allowedUnhealthy(total: number): number {
  return Math.ceil((total * RepairUnhealthyPercent) / 100);
}

export interface RepairPlan {
  /** Claims to terminate now, forcefully (deadline now), with the condition that decided it. */
  repair: { nodeClaim: string; nodeName: string; nodePool: string; condition: NodeCondition }[];
  /** Claims due for repair that the NodePool health guard holds, with Karpenter's message. */
  blocked: { nodeClaim: string; nodeName: string; nodePool: string; message: string }[];
}

/**
 * What node repair does at `now`: for each claim not already terminating whose Node (its own:
 * providerID and NodePool agree) is past an unhealthy condition's toleration, repair it, unless
 * more than {@link allowedUnhealthy} of the Nodes labelled with its NodePool are unhealthy. Node
 * disruption budgets and `karpenter.sh/do-not-disrupt` do not hold a repair (forceful termination).
 */
export function planNodeRepair(
  nodeClaims: readonly NodeClaim[],
  nodes: readonly Node[],
  now: Date,
  policies: readonly RepairPolicy[] = RepairPolicies,
): RepairPlan {
  const out: RepairPlan = { repair: [], blocked: [] };
  const nodesByName = new Map(nodes.map((n) => [n.metadata.name, n]));
  const poolHealth = new Map<string, { total: number; unhealthy: number }>();
  for (const n of nodes) {
    const pool = n.metadata.labels?.[LabelNodePool];
    if (!pool) continue;
    const h = poolHealth.get(pool) ?? { total: 0, unhealthy: 0 };
    h.total++;
    if (isUnhealthy(n, policies)) h.unhealthy++;
    poolHealth.set(pool, h);
  }
  for (const c of nodeClaims) {
    if (c.phase === 'Terminating' || c.phase === 'Terminated' || c.nodeName === undefined) continue;
    const node = nodesByName.get(c.nodeName);
    if (!node || node.metadata.deletionTimestamp || nodeDisagreement(c, node) !== undefined) continue;
    const bad = unhealthyCondition(node, policies);
    if (!bad || now.getTime() < bad.repairAtMs) continue;
    const h = poolHealth.get(c.nodePool) ?? { total: 0, unhealthy: 0 };
    if (h.unhealthy > allowedUnhealthy(h.total)) {
      out.blocked.push({
        nodeClaim: c.name,
        nodeName: node.metadata.name,
        nodePool: c.nodePool,
        message: `more than ${RepairUnhealthyPercent}% nodes are unhealthy in the nodepool`,
      });
      continue;
    }
    out.repair.push({ nodeClaim: c.name, nodeName: node.metadata.name, nodePool: c.nodePool, condition: bad.condition });
  }
  return out;
}

/** A condition type in snake case, as Karpenter's `condition` metric label (`AcceleratedHardwareReady` → `accelerated_hardware_ready`). */
export function conditionLabel(type: string): string {
  return type
    .replace(/(.)([A-Z][a-z]+)/g, '$1_$2')
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase();
}
