/**
 * What the live view and the report show, as one JSON document ({@link ViewSnapshot}) built from
 * the running embedded environment: nodes with their pods, pending pods, NodeClaims with their
 * lifecycle, nodes / pending pods / cost per hour over time, the timeline, and each termination
 * execution with where it is on the state machine's graph.
 *
 * Times in the snapshot are virtual seconds since the scenario's start (`t`), so the page needs
 * no clock. Prices are the catalog's USD per hour of the offering each instance runs on.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isDaemonSetPod, type Node, type Pod } from '../../../shared/api/kube.ts';
import type { NodeClaim } from '../../../shared/api/nodeclaim.ts';
import { LabelNodePool } from '../../../shared/api/labels.ts';
import { parseResource } from '../../../shared/api/quantity.ts';
import type { ExecutionRecord } from '../../../shared/api/termination.ts';
import type { LocalEnvironment } from '../environment.ts';
import type { LocalInstance } from '../ec2/local-ec2.ts';
import { RepoRoot } from '../functions.ts';
import { claimState, costFigures, rateAt, type CostFigures, type TimelineEntry } from '../summary.ts';
import { executionProgress, stateGraph, type ExecutionProgress, type StateGraph } from './graph.ts';
import { providerIdOf } from '../../../shared/api/provider-id.ts';

/** The state machine whose executions the view draws. */
export const TerminationDefinitionFile = 'statemachines/termination.asl.json';

export interface ViewPod {
  namespace: string;
  name: string;
  /** Pending, Running, Succeeded, Failed. */
  phase: string;
  terminating: boolean;
  daemonSet: boolean;
  /** Requests: millicores and bytes (containers summed; an init container's larger request wins). */
  cpuMilli: number;
  memoryBytes: number;
}

export interface ViewNode {
  name: string;
  instanceType: string;
  capacityType: string;
  zone: string;
  /** NodePool for nodefleet's nodes; undefined for managed (node group) nodes. */
  nodePool?: string;
  managed: boolean;
  instanceId?: string;
  priceUsdPerHour?: number;
  ready: boolean;
  cordoned: boolean;
  allocatableCpuMilli: number;
  allocatableMemoryBytes: number;
  requestedCpuMilli: number;
  requestedMemoryBytes: number;
  pods: ViewPod[];
}

export interface ViewClaim {
  name: string;
  nodePool: string;
  instanceType?: string;
  capacityType?: string;
  zone?: string;
  priceUsdPerHour?: number;
  nodeName?: string;
  /** Stored phase (Pending … Terminated). */
  phase: string;
  /** What `status` calls it: Pending, Launched, Registered, Ready, Terminating, … */
  state: string;
  /** Seconds since start the claim was created. */
  createdT: number;
  /** Lifecycle conditions that are True, with the second they became so. */
  lifecycle: { type: string; t: number }[];
}

/** An EC2 instance that ran during the run (managed node group or launched by nodefleet). */
export interface ViewInstance {
  instanceId: string;
  instanceType: string;
  capacityType: string;
  zone: string;
  nodePool?: string;
  managed: boolean;
  /** pending, running, shutting-down, terminated. */
  state: string;
  launchT: number;
  /** Second TerminateInstances (or the spot reclaim) hit it. */
  endT?: number;
  priceUsdPerHour?: number;
  /** Price × time it ran so far (virtual), USD. */
  costUsd: number;
}

export interface ViewSample {
  t: number;
  nodes: number;
  readyNodes: number;
  pendingPods: number;
  costUsdPerHour: number;
}

export interface ViewExecution {
  name: string;
  status: ExecutionRecord['status'];
  reason?: string;
  nodeName?: string;
  instanceId?: string;
  startT: number;
  stopT?: number;
  events: number;
  progress: ExecutionProgress;
}

export interface ViewSnapshot {
  /** Schema version of this document. */
  version: 1;
  mode: 'live' | 'report';
  scenario: string;
  region: string;
  speed: number;
  /** ISO time of t = 0 (virtual). */
  startIso: string;
  /** Virtual seconds since start. */
  t: number;
  nodes: ViewNode[];
  pendingPods: ViewPod[];
  claims: ViewClaim[];
  instances: ViewInstance[];
  series: ViewSample[];
  timeline: { t: number; text: string }[];
  graph: StateGraph;
  executions: ViewExecution[];
  cost: CostFigures;
  /** Set in the report: whether the expectations held, and the summary text. */
  result?: { ok: boolean; summary: string };
}

/** Keeps the samples of a run and builds snapshots of it. */
export class ViewRecorder {
  private readonly series: ViewSample[] = [];
  private readonly graph: StateGraph;

  constructor(
    private readonly env: LocalEnvironment,
    private readonly timeline: readonly TimelineEntry[],
  ) {
    this.graph = stateGraph(JSON.parse(readFileSync(join(RepoRoot, TerminationDefinitionFile), 'utf8')));
  }

  /** Seconds since the scenario's start for a virtual epoch ms. */
  private t(ms: number): number {
    return Math.max(0, Math.round((ms - this.env.clock.startEpochMs()) / 100) / 10);
  }

  /** Records one point of the time series (kept only when a value changed since the last one). */
  sample(): void {
    const nodes = this.env.cluster.nodes();
    const s: ViewSample = {
      t: this.t(this.env.clock.nowMs()),
      nodes: nodes.length,
      readyNodes: nodes.filter(isReady).length,
      pendingPods: this.env.cluster.pods().filter((p) => p.status?.phase === 'Pending' && !isDaemonSetPod(p)).length,
      costUsdPerHour: round4(rateAt([...this.env.ec2.instances.values()], this.env.clock.nowMs())),
    };
    const last = this.series[this.series.length - 1];
    if (last && last.nodes === s.nodes && last.readyNodes === s.readyNodes && last.pendingPods === s.pendingPods && last.costUsdPerHour === s.costUsdPerHour)
      return;
    // A step: repeat the previous values just before the change so the chart draws it square.
    if (last && s.t > last.t) this.series.push({ ...last, t: s.t });
    if (last && last.t === s.t) this.series[this.series.length - 1] = s;
    else this.series.push(s);
  }

  /** The current picture. `claims` as read from the NodeClaim store. */
  snapshot(claims: NodeClaim[], mode: ViewSnapshot['mode'] = 'live', result?: ViewSnapshot['result']): ViewSnapshot {
    const env = this.env;
    const nowMs = env.clock.nowMs();
    const instances = [...env.ec2.instances.values()];
    const byProvider = new Map(instances.map((i) => [providerIdOf(i.zone, i.instanceId), i]));
    const pods = env.cluster.pods();
    const podsByNode = new Map<string, ViewPod[]>();
    const pendingPods: ViewPod[] = [];
    for (const p of pods) {
      const v = viewPod(p);
      if (p.spec.nodeName) podsByNode.set(p.spec.nodeName, [...(podsByNode.get(p.spec.nodeName) ?? []), v]);
      else if (v.phase === 'Pending' && !v.daemonSet) pendingPods.push(v);
    }
    const nodes = env.cluster
      .nodes()
      .map((n) => viewNode(n, byProvider.get(n.spec?.providerID ?? ''), podsByNode.get(n.metadata.name) ?? []))
      .sort((a, b) => Number(b.managed) - Number(a.managed) || a.name.localeCompare(b.name));
    const execs = ((env.sfn?.listExecutions?.() ?? []) as ExecutionRecord[]).map((e) => this.viewExecution(e));
    const series = [...this.series];
    const last = series[series.length - 1];
    const tNow = this.t(nowMs);
    if (last && last.t < tNow) series.push({ ...last, t: tNow });
    return {
      version: 1,
      mode,
      scenario: env.scenario.name,
      region: env.scenario.region,
      speed: env.clock.speed,
      startIso: new Date(env.clock.startEpochMs()).toISOString(),
      t: tNow,
      nodes,
      pendingPods,
      claims: claims.map((c) => this.viewClaim(c)).sort((a, b) => a.createdT - b.createdT || a.name.localeCompare(b.name)),
      instances: instances.map((i) => this.viewInstance(i, nowMs)).sort((a, b) => Number(b.managed) - Number(a.managed) || a.launchT - b.launchT),
      series,
      timeline: this.timeline.map((e) => ({ t: this.t(e.atMs), text: e.text })),
      graph: this.graph,
      executions: execs,
      cost: costFigures(instances, nowMs),
      ...(result ? { result } : {}),
    };
  }

  private viewInstance(i: LocalInstance, nowMs: number): ViewInstance {
    return {
      instanceId: i.instanceId,
      instanceType: i.instanceType,
      capacityType: i.capacityType,
      zone: i.zone,
      nodePool: i.tags[LabelNodePool],
      managed: Boolean(i.preexisting),
      state: i.state,
      launchT: this.t(i.launchTimeMs),
      ...(i.terminatingAtMs !== undefined ? { endT: this.t(i.terminatingAtMs) } : {}),
      priceUsdPerHour: i.priceUsdPerHour,
      costUsd: Math.round((((i.terminatingAtMs ?? nowMs) - i.launchTimeMs) / 3_600_000) * (i.priceUsdPerHour ?? 0) * 1e5) / 1e5,
    };
  }

  private viewClaim(c: NodeClaim): ViewClaim {
    return {
      name: c.name,
      nodePool: c.nodePool,
      instanceType: c.instanceType,
      capacityType: c.capacityType,
      zone: c.zone,
      priceUsdPerHour: c.priceUsdPerHour,
      nodeName: c.nodeName,
      phase: c.phase,
      state: claimState(c),
      createdT: this.t(Date.parse(c.createdAt)),
      lifecycle: c.conditions
        .filter((x) => x.status === 'True' && ['Launched', 'Registered', 'Initialized', 'Drained', 'InstanceTerminating'].includes(x.type))
        .map((x) => ({ type: x.type, t: this.t(Date.parse(x.lastTransitionTime)) }))
        .sort((a, b) => a.t - b.t),
    };
  }

  private viewExecution(e: ExecutionRecord): ViewExecution {
    let input: { reason?: string; nodeName?: string; instanceId?: string } = {};
    try {
      input = JSON.parse(e.input ?? '{}') ?? {};
    } catch {
      // A record without a JSON input still has a history to draw.
    }
    return {
      name: e.name,
      status: e.status,
      reason: input.reason,
      nodeName: input.nodeName,
      instanceId: input.instanceId,
      startT: this.t(Date.parse(e.startDate)),
      ...(e.stopDate ? { stopT: this.t(Date.parse(e.stopDate)) } : {}),
      events: e.events.length,
      progress: executionProgress(e.events),
    };
  }
}

function round4(x: number): number {
  return Math.round(x * 1e4) / 1e4;
}

function isReady(n: Node): boolean {
  return n.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
}

function viewPod(p: Pod): ViewPod {
  const sum = (containers: { resources?: { requests?: Record<string, string | number> } }[] | undefined, r: string) =>
    (containers ?? []).map((c) => quantity(r, c.resources?.requests?.[r]));
  const req = (r: string) =>
    Math.max(
      sum(p.spec.containers, r).reduce((a, b) => a + b, 0),
      ...sum((p.spec as { initContainers?: { resources?: { requests?: Record<string, string | number> } }[] }).initContainers, r),
    );
  return {
    namespace: p.metadata.namespace ?? 'default',
    name: p.metadata.name,
    phase: p.status?.phase ?? 'Pending',
    terminating: Boolean(p.metadata.deletionTimestamp),
    daemonSet: isDaemonSetPod(p),
    cpuMilli: req('cpu'),
    memoryBytes: req('memory'),
  };
}

function quantity(resource: string, q: string | number | undefined): number {
  if (q === undefined) return 0;
  try {
    return parseResource(resource, q);
  } catch {
    // The local API server stores what it is given; a bad quantity counts as nothing here.
    return 0;
  }
}

function viewNode(n: Node, i: LocalInstance | undefined, pods: ViewPod[]): ViewNode {
  const labels = n.metadata.labels ?? {};
  const live = pods.filter((p) => p.phase !== 'Succeeded' && p.phase !== 'Failed');
  return {
    name: n.metadata.name,
    instanceType: i?.instanceType ?? labels['node.kubernetes.io/instance-type'] ?? '?',
    capacityType: i?.capacityType ?? labels['karpenter.sh/capacity-type'] ?? '?',
    zone: i?.zone ?? labels['topology.kubernetes.io/zone'] ?? '?',
    nodePool: labels[LabelNodePool] ?? i?.tags[LabelNodePool],
    managed: i?.preexisting ?? !labels[LabelNodePool],
    instanceId: i?.instanceId,
    priceUsdPerHour: i?.priceUsdPerHour,
    ready: isReady(n),
    cordoned: Boolean(n.spec?.unschedulable),
    allocatableCpuMilli: quantity('cpu', n.status?.allocatable?.cpu),
    allocatableMemoryBytes: quantity('memory', n.status?.allocatable?.memory),
    requestedCpuMilli: live.reduce((s, p) => s + p.cpuMilli, 0),
    requestedMemoryBytes: live.reduce((s, p) => s + p.memoryBytes, 0),
    pods: pods.sort((a, b) => Number(a.daemonSet) - Number(b.daemonSet) || a.name.localeCompare(b.name)),
  };
}
