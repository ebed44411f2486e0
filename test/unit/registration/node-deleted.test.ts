/**
 * `kubectl delete node` on a node nodefleet owns: the API server sets deletionTimestamp and keeps the
 * Node (karpenter.sh/termination holds it); the agent forwards the change; registration checks the
 * live Node and starts that claim's termination (local Step Functions), which cordons, drains,
 * terminates the instance and removes the finalizer. Forged or unverified events start nothing.
 */
import { describe, expect, it } from 'vitest';
import { parseInput, run, type RegistrationDeps } from '../../../functions/registration/handler.ts';
import { compactNode, compactNodeClaim } from '../../../shared/api/agent-events.ts';
import { AgentSchemaVersion, AgentSource, DetailTypeNodeClaimLifecycle, DetailTypeNodeLifecycle } from '../../../shared/api/contract.ts';
import type { Node } from '../../../shared/api/kube.ts';
import { toKubeNodeClaim, type KubeNodeClaim, type NodeClaim } from '../../../shared/api/nodeclaim.ts';
import { AnnotationNodeClaimMirror, FinalizerTermination } from '../../../shared/api/labels.ts';
import { RecordingLog, RecordingMetrics } from '../../../shared/runtime/observability.ts';
import { node, nodeClaim } from '../../fakes/index.ts';
import { ClaimName, InstanceId, NodeName, harness, type Harness } from '../termination/helpers.ts';

const OtherClaim = 'default-other';
const OtherNode = 'ip-10-0-9-9.ec2.internal';
const OtherInstance = 'i-0fff0000aaaa11112';
const OtherProviderId = `aws:///us-east-1a/${OtherInstance}`;
const Registered: NodeClaim['conditions'] = [
  { type: 'Launched', status: 'True', lastTransitionTime: '2026-01-01T00:00:00.000Z' },
  { type: 'Registered', status: 'True', lastTransitionTime: '2026-01-01T00:00:10.000Z' },
  { type: 'Initialized', status: 'True', lastTransitionTime: '2026-01-01T00:00:20.000Z' },
];

function event(n: Node, cluster = 'test') {
  return parseInput({
    version: '0',
    id: 'e-1',
    'detail-type': DetailTypeNodeLifecycle,
    source: AgentSource,
    account: '123456789012',
    time: '2026-01-01T00:01:00Z',
    region: 'us-east-1',
    resources: [],
    detail: { schemaVersion: AgentSchemaVersion, cluster, change: 'updated', observedAt: '2026-01-01T00:01:00Z', node: compactNode(n) },
  });
}

/** Two registered claims with Nodes (holding the finalizer) and instances; registration wired to the local termination. */
async function world(): Promise<{ h: Harness; deps: RegistrationDeps; arns: string[] }> {
  const h = harness();
  const { w } = h;
  w.store.put({ ...w.store.peek(ClaimName)!, phase: 'Initialized', conditions: Registered });
  w.store.put(
    nodeClaim({ name: OtherClaim, nodeName: OtherNode, instanceId: OtherInstance, providerId: OtherProviderId, phase: 'Initialized', conditions: Registered }),
  );
  w.kube.addNode(node({ name: OtherNode, providerID: OtherProviderId, labels: { 'karpenter.sh/nodepool': 'default' } }));
  w.cloud.addInstance({
    instanceId: OtherInstance,
    tags: { 'nodefleet.io/cluster': 'test', 'karpenter.sh/nodepool': 'default', 'karpenter.sh/nodeclaim': OtherClaim },
  });
  await w.kube.setNodeFinalizer(NodeName, FinalizerTermination, true);
  await w.kube.setNodeFinalizer(OtherNode, FinalizerTermination, true);
  const arns: string[] = [];
  const termination = {
    start: async (i: Parameters<typeof h.starter.start>[0]) => {
      const a = await h.starter.start(i);
      arns.push(a);
      return a;
    },
  };
  const deps = {
    env: { clusterName: 'test' },
    clock: w.clock,
    log: new RecordingLog(),
    metrics: new RecordingMetrics(),
    store: w.store,
    kube: w.kube,
    cloud: w.cloud,
    termination,
  };
  return { h, deps, arns };
}

describe('kubectl delete node (termination finalizer)', () => {
  it("cordons, drains and terminates exactly that claim's instance, then the finalizer comes off and the Node goes", async () => {
    // Prepare
    const { h, deps, arns } = await world();
    await h.w.kube.deleteNode(NodeName);
    const deleting = (await h.w.kube.getNode(NodeName))!;
    expect(deleting.metadata.deletionTimestamp).toBeDefined();
    // Act
    const r = await run(event(deleting), deps);
    expect(r).toEqual({ action: 'terminating', nodeClaim: ClaimName, started: true });
    expect(arns).toHaveLength(1);
    const rec = await h.sfn.waitForExecution(arns[0].split(':').pop()!);
    // Assess
    expect(rec.status).toBe('SUCCEEDED');
    const states = h.statesVisited(rec);
    expect(states.indexOf('Cordon')).toBeGreaterThanOrEqual(0);
    expect(states.indexOf('Cordon')).toBeLessThan(states.indexOf('Drain'));
    expect(h.terminateCalls).toHaveLength(1);
    expect((await h.w.cloud.get(InstanceId))?.state).not.toBe('running');
    expect((await h.w.cloud.get(OtherInstance))?.state).toBe('running');
    expect(await h.w.kube.getNode(NodeName)).toBeUndefined();
    expect((await h.w.kube.getNode(OtherNode))?.spec?.unschedulable ?? false).toBe(false);
    expect(h.w.store.peek(OtherClaim)?.phase).toBe('Initialized');
  });

  it('a second event for the same deleting Node starts nothing new', async () => {
    const { h, deps, arns } = await world();
    await h.w.kube.deleteNode(NodeName);
    const deleting = (await h.w.kube.getNode(NodeName))!;
    await run(event(deleting), deps);
    await h.sfn.waitForExecution(arns[0].split(':').pop()!);
    h.w.kube.addNode({ ...deleting, metadata: { ...deleting.metadata, finalizers: [FinalizerTermination] } });
    const again = await run(event(deleting), deps);
    expect(again).toMatchObject({ action: 'terminating', started: false });
    expect(h.terminateCalls).toHaveLength(1);
  });

  it('forged or unverified events start nothing: wrong providerID, another cluster, a Node not being deleted in the live API', async () => {
    const { h, deps, arns } = await world();
    const live = (await h.w.kube.getNode(NodeName))!;
    const claimedDeleting = { ...live, metadata: { ...live.metadata, deletionTimestamp: '2026-01-01T00:00:50Z' } };
    // The event says the Node is being deleted; the API server says it is not.
    expect(await run(event(claimedDeleting), deps)).toEqual({ action: 'unchanged', nodeClaim: ClaimName });
    // Another cluster's event.
    await h.w.kube.deleteNode(NodeName);
    const deleting = (await h.w.kube.getNode(NodeName))!;
    expect(await run(event(deleting, 'other'), deps)).toMatchObject({ action: 'ignored' });
    // The other claim's providerID on this (deleting) Node's name: the live Node is not that claim's.
    const forged = { ...deleting, spec: { ...deleting.spec, providerID: OtherProviderId } };
    expect(await run(event(forged), deps)).toMatchObject({ action: 'ignored' });
    expect(arns).toEqual([]);
    expect(h.terminateCalls).toEqual([]);
    expect((await h.w.cloud.get(OtherInstance))?.state).toBe('running');
  });

  it('a Node deleted without the finalizer (removed by hand) starts nothing: gc handles its claim', async () => {
    const { h, deps, arns } = await world();
    await h.w.kube.setNodeFinalizer(NodeName, FinalizerTermination, false);
    h.w.kube.addNode({
      ...(await h.w.kube.getNode(NodeName))!,
      metadata: { ...(await h.w.kube.getNode(NodeName))!.metadata, deletionTimestamp: '2026-01-01T00:00:50Z', finalizers: ['example.com/other'] },
    });
    expect(await run(event((await h.w.kube.getNode(NodeName))!), deps)).toMatchObject({ action: 'ignored' });
    expect(arns).toEqual([]);
  });

  it("an event for a registered claim's Node without the finalizer puts it back", async () => {
    const { h, deps } = await world();
    await h.w.kube.setNodeFinalizer(NodeName, FinalizerTermination, false);
    await run(event((await h.w.kube.getNode(NodeName))!), deps);
    expect((await h.w.kube.getNode(NodeName))?.metadata.finalizers).toContain(FinalizerTermination);
  });
});

/** The agent's `NodeClaim Lifecycle` event for object `o` (as it saw it). */
function nodeClaimEvent(o: KubeNodeClaim, cluster = 'test') {
  return parseInput({
    version: '0',
    id: `e-nc-${o.metadata.name}`,
    'detail-type': DetailTypeNodeClaimLifecycle,
    source: AgentSource,
    account: '123456789012',
    time: '2026-01-01T00:01:00Z',
    region: 'us-east-1',
    resources: [],
    detail: { schemaVersion: AgentSchemaVersion, cluster, change: 'deleting', observedAt: '2026-01-01T00:01:00Z', nodeClaim: compactNodeClaim(o) },
  });
}

describe('kubectl delete nodeclaim (the agent forwards the deletion)', () => {
  /** The world above with gc's mirrors of both claims, as the API server keeps them. */
  async function mirrored() {
    const r = await world();
    for (const name of [ClaimName, OtherClaim]) {
      const o = toKubeNodeClaim(r.h.w.store.peek(name)!, { [AnnotationNodeClaimMirror]: 'test' });
      r.h.w.kube.nodeClaimObjects.set(name, o);
    }
    return r;
  }
  const deleting = (o: KubeNodeClaim): KubeNodeClaim => ({ ...o, metadata: { ...o.metadata, deletionTimestamp: '2026-01-01T00:00:55Z' } });

  it("the live object being deleted starts exactly that claim's termination, at once; a second event starts nothing new", async () => {
    // Prepare
    const { h, deps, arns } = await mirrored();
    const o = deleting(h.w.kube.nodeClaimObjects.get(ClaimName)!);
    h.w.kube.nodeClaimObjects.set(ClaimName, o);
    // Act
    const r = await run(nodeClaimEvent(o), deps);
    // Assess
    expect(r).toEqual({ action: 'terminating', nodeClaim: ClaimName, started: true });
    expect(arns).toHaveLength(1);
    expect((await h.sfn.waitForExecution(arns[0].split(':').pop()!)).status).toBe('SUCCEEDED');
    expect(h.terminateCalls).toHaveLength(1);
    expect((await h.w.cloud.get(InstanceId))?.state).not.toBe('running');
    expect((await h.w.cloud.get(OtherInstance))?.state).toBe('running');
    expect((deps.log as RecordingLog).lines.map((l) => l.message)).toContain('nodeclaim deleted: terminating its nodeclaim');
    expect(await run(nodeClaimEvent(o), deps)).toMatchObject({ action: 'terminating', started: false });
    expect(arns).toHaveLength(1);
  });

  it('the event is only a hint: an object not being deleted live, another cluster, a forged providerID or no record start nothing', async () => {
    const { h, deps, arns } = await mirrored();
    const live = h.w.kube.nodeClaimObjects.get(ClaimName)!;
    // The event says deleting; the API server says not.
    expect(await run(nodeClaimEvent(deleting(live)), deps)).toEqual({ action: 'ignored', reason: `nodeclaim object ${ClaimName} is not being deleted` });
    // Another cluster's event.
    expect(await run(nodeClaimEvent(deleting(live), 'other'), deps)).toMatchObject({ action: 'ignored' });
    // Live and deleting, but carrying the other claim's providerID.
    h.w.kube.nodeClaimObjects.set(ClaimName, { ...deleting(live), status: { ...live.status, providerID: OtherProviderId } });
    expect(await run(nodeClaimEvent(deleting(live)), deps)).toMatchObject({ action: 'ignored' });
    // Another controller's object (no mirror annotation) of the claim's name.
    h.w.kube.nodeClaimObjects.set(ClaimName, { ...deleting(live), metadata: { ...deleting(live).metadata, annotations: {} } });
    expect(await run(nodeClaimEvent(deleting(live)), deps)).toMatchObject({ action: 'ignored' });
    // No record of that name; an object already gone.
    const ghost = { ...deleting(live), metadata: { ...deleting(live).metadata, name: 'default-ghost' } };
    h.w.kube.nodeClaimObjects.set('default-ghost', ghost);
    expect(await run(nodeClaimEvent(ghost), deps)).toEqual({ action: 'ignored', reason: 'no nodeclaim default-ghost' });
    h.w.kube.nodeClaimObjects.delete(ClaimName);
    expect(await run(nodeClaimEvent(deleting(live)), deps)).toEqual({ action: 'ignored', reason: `nodeclaim object ${ClaimName} is gone` });
    expect(arns).toEqual([]);
    expect(h.terminateCalls).toEqual([]);
  });
});
