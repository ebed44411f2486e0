/**
 * Existing nodes and in-flight NodeClaims as the simulation sees them: room left after the pods
 * already bound, host ports in use, labels, taints, and (for a claim not yet registered) its
 * requirements. Follows Karpenter's ExistingNode (kubernetes-sigs/karpenter
 * pkg/controllers/provisioning/scheduling/existingnode.go): a pending pod goes there when it
 * fits the room, tolerates the taints, matches the labels (or the claim's requirements) and
 * keeps every topology rule.
 */
import type { Pod, Taint } from '../api/kube.ts';
import * as L from '../api/labels.ts';
import type { Resources } from '../api/quantity.ts';
import type { Requirements } from '../api/requirements.ts';
import { PodInfo, portsConflict } from './pod.ts';
import { isDaemonSetPod } from '../api/kube.ts';
import { fitsRoom, sharedPodRequests } from './resources.ts';
import { formatTaint, untoleratedTaint } from './taints.ts';
import type { PodGroups, Topology, TopologyGroup, TopologyTarget } from './topology.ts';
import type { DaemonSetTemplate, ExistingNode } from './types.ts';

/** Why a node or claim refused a pod; `monotone` when it can never accept a pod with this signature later in the run. */
export interface Failure {
  reason: string;
  monotone: boolean;
}

/** An existing node or in-flight claim during the simulation. */
export class SimNode implements TopologyTarget {
  readonly hostname: string;
  readonly room: Resources;
  readonly ports: string[] = [];
  readonly labels: Record<string, string>;
  readonly taints: Taint[];
  readonly requirements?: Requirements;

  /** @param room what is left of the node's allocatable (see {@link prepareExistingNodes}); copied, the simulation consumes it. */
  constructor(
    readonly node: ExistingNode,
    room: Resources,
  ) {
    this.labels = node.labels;
    this.hostname = node.labels[L.LabelHostname] ?? node.name;
    this.taints = node.taints ?? [];
    this.requirements = node.requirements;
    this.room = { ...room };
  }

  domains(key: string): readonly string[] {
    if (key === L.LabelHostname) return [this.hostname];
    const v = this.labels[key];
    if (v !== undefined) return [v];
    const r = this.requirements?.get(key);
    if (r && !r.complement) return [...r.values];
    return [];
  }

  /**
   * Places the pod here when every rule allows it (room, host ports, taints, node affinity,
   * labels or claim requirements, topology) and records it in `topology`.
   * @param allowUndefined label keys an in-flight claim's requirements may leave undefined.
   * @returns undefined when placed, else why not.
   */
  add(info: PodInfo, groups: PodGroups, topology: Topology, allowUndefined: ReadonlySet<string> | undefined): Failure | undefined {
    if (this.node.unschedulable) return { reason: 'node is cordoned or being deleted', monotone: true };
    // Not monotone: another pod with the same signature (a pending replica) may still land here.
    if (this.node.refusedPods?.has(`${info.pod.metadata.namespace ?? 'default'}/${info.pod.metadata.name}`))
      return { reason: 'node refuses this pod (within its consolidateAfter)', monotone: false };
    if (!fitsRoom(info.requests, this.room)) return { reason: 'not enough room', monotone: true };
    for (const p of info.hostPorts) if (this.ports.some((q) => portsConflict(p, q))) return { reason: `host port ${p} in use`, monotone: true };
    const taint = untoleratedTaint(this.taints, info.tolerations, info.toleratePreferNoSchedule);
    if (taint) return { reason: `did not tolerate taint ${formatTaint(taint)}`, monotone: true };
    const term = info.nodeTerm;
    if (term.nodeNames && !term.nodeNames.has(this.node.name)) return { reason: 'node affinity selects other nodes', monotone: true };
    if (this.requirements) {
      const m = this.requirements.incompatibility(info.requirements, allowUndefined);
      if (m) return { reason: m, monotone: true };
    } else if (!info.requirements.matchesLabels(this.labels)) {
      return { reason: 'node labels do not match', monotone: true };
    }
    const topo = topology.check(groups, this, info.strictRequirements);
    if (!(topo instanceof Map)) return topo;
    for (const [k, v] of Object.entries(info.requests)) this.room[k] = (this.room[k] ?? 0) - v;
    this.ports.push(...info.hostPorts);
    topology.record(info, groups.ownedAnti, this);
    return undefined;
  }
}

/** An existing node as every simulation of one solve starts from it. */
export interface PreparedNode {
  node: ExistingNode;
  /** Allocatable less the requests of the pods listed on the node and of the DaemonSet pods still to come. */
  room: Resources;
  /** The pods bound to the node (its own, then those of `boundPods` naming it). */
  pods: Pod[];
}

/**
 * The existing nodes to simulate (registered ones before launching claims, so pods fill running
 * capacity first), each with its room and the pods bound to it: a pod listed on a node and again
 * in `boundPods` counts once, on the first node that lists it; `boundPods` on unknown nodes are
 * ignored. Depends only on the cluster, so one solve prepares it once for both of its simulations
 * (each copies the room it consumes: {@link simulateExistingNodes}); at 100 000 bound pods this is
 * most of the work spent on existing capacity.
 */
export function prepareExistingNodes(
  existing: readonly ExistingNode[],
  boundPods: readonly Pod[],
  daemonSets: readonly DaemonSetTemplate[] = [],
): PreparedNode[] {
  // Initialized nodes first, then managed nodes still coming up, then claims without a node
  // (KC scheduler.go orders existing nodes so pods land on initialized ones first).
  const rank = (n: ExistingNode) => (n.launching ? 2 : n.nodePool !== undefined && n.labels[L.LabelInitialized] !== 'true' ? 1 : 0);
  const sorted = [...existing].sort((a, b) => rank(a) - rank(b));
  // Pods seen so far, by name then namespace: keyed on the strings the pods already hold (their
  // hashes are cached), not on a `namespace/name` string built per pod.
  const seen = new Map<string, string | Set<string>>();
  const ns = (p: Pod) => String(p.metadata.namespace);
  const isSeen = (p: Pod): boolean => {
    const had = seen.get(p.metadata.name);
    return had !== undefined && (typeof had === 'string' ? had === ns(p) : had.has(ns(p)));
  };
  const markSeen = (p: Pod): void => {
    const had = seen.get(p.metadata.name);
    if (had === undefined) seen.set(p.metadata.name, ns(p));
    else if (typeof had === 'string') {
      if (had !== ns(p)) seen.set(p.metadata.name, new Set([had, ns(p)]));
    } else had.add(ns(p));
  };
  const podsOf = new Map<string, Pod[]>();
  for (const n of sorted) {
    const own = (n.pods ?? []).filter((p) => !isSeen(p));
    for (const p of own) markSeen(p);
    podsOf.set(n.name, own);
  }
  const extra = new Map<string, Pod[]>();
  for (const p of boundPods) {
    if (isSeen(p) || !p.spec.nodeName || !podsOf.has(p.spec.nodeName)) continue;
    markSeen(p);
    let list = extra.get(p.spec.nodeName);
    if (!list) extra.set(p.spec.nodeName, (list = []));
    list.push(p);
  }
  const daemons = daemonSets.map((d) => ({ tolerations: d.spec.tolerations, info: new PodInfo({ metadata: d.metadata, spec: d.spec }) }));
  return sorted.map((n) => {
    const own = podsOf.get(n.name)!;
    const more = extra.get(n.name);
    const pods = more ? [...own, ...more] : own;
    const room: Resources = { ...n.allocatable };
    for (const p of own) {
      const req = sharedPodRequests(p.spec);
      for (const k in req) room[k] = (room[k] ?? 0) - req[k];
    }
    for (const [k, v] of Object.entries(unboundDaemonRequests(n, pods, daemons))) room[k] = (room[k] ?? 0) - v;
    return { node: n, room, pods };
  });
}

/** The simulation's view of prepared nodes: fresh SimNodes (their own room) and the pods bound to each. */
export function simulateExistingNodes(prepared: readonly PreparedNode[]): { nodes: SimNode[]; bound: Map<SimNode, Pod[]> } {
  const nodes: SimNode[] = [];
  const bound = new Map<SimNode, Pod[]>();
  for (const p of prepared) {
    const sim = new SimNode(p.node, p.room);
    nodes.push(sim);
    bound.set(sim, p.pods);
  }
  return { nodes, bound };
}

/**
 * What the DaemonSets that will run on a node still need there: the requests of every DaemonSet
 * whose pod tolerates the node's taints and whose node selector / required node affinity matches
 * its labels, less the requests of the DaemonSet pods already bound to it, never below zero (KC
 * existingnode.go `NewExistingNode` remainingDaemonResources). A node whose labels are not known
 * yet (an in-flight claim with requirements) reserves nothing.
 */
function unboundDaemonRequests(
  n: ExistingNode,
  pods: readonly Pod[],
  daemons: readonly { tolerations: PodInfo['tolerations'] | undefined; info: PodInfo }[],
): Resources {
  if (n.requirements || daemons.length === 0) return {};
  const out: Resources = {};
  for (const d of daemons) {
    if (untoleratedTaint(n.taints, d.tolerations, true)) continue;
    if (!d.info.requiredTerms.some((t) => (!t.nodeNames || t.nodeNames.has(n.name)) && t.requirements.matchesLabels(n.labels))) continue;
    for (const [k, v] of Object.entries(d.info.requests)) out[k] = (out[k] ?? 0) + v;
  }
  for (const p of pods) {
    if (!isDaemonSetPod(p)) continue;
    const req = sharedPodRequests(p.spec);
    for (const k in req) if (out[k] !== undefined) out[k] -= req[k];
  }
  for (const k of Object.keys(out)) if (out[k] <= 0) delete out[k];
  return out;
}

/**
 * Counts the running pods in the topology groups that select them. Only pods with required
 * anti-affinity need parsing (their terms block domains for the pending pods they select).
 */
export function recordBoundPods(
  topology: Topology,
  bound: ReadonlyMap<SimNode, readonly Pod[]>,
  groupsFor: (info: PodInfo) => PodGroups,
  infoCache: Map<string, PodInfo>,
): void {
  // Register the running pods' anti-affinity groups first (in pod order), then count every pod,
  // unless no group exists at all: then there is nothing to count and 100 000 pods are skipped.
  const anti = new Map<Pod, [PodInfo, TopologyGroup[]]>();
  for (const pods of bound.values()) {
    for (const p of pods) {
      if (!p.spec.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.length) continue;
      const bi = new PodInfo(p, [], true, infoCache);
      anti.set(p, [bi, groupsFor(bi).ownedAnti]);
    }
  }
  if (topology.empty) return;
  for (const [node, pods] of bound) {
    for (const p of pods) {
      const a = anti.get(p);
      if (a) topology.record(a[0], a[1], node);
      else topology.record({ namespace: p.metadata.namespace ?? 'default', labels: p.metadata.labels ?? {} }, [], node);
    }
  }
}
