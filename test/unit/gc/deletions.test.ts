/**
 * Deletions gc finds on its periodic pass against the live API (shared/disruption/deletion.ts):
 * `kubectl delete nodeclaim`, a deleted Node whose agent event was lost, and a deleted NodePool each
 * start the claim's termination (local Step Functions: cordon, drain, terminate), and the NodeClaim
 * object goes only once the instance is terminated. Forged or mismatching objects start nothing.
 */
import { describe, expect, it } from 'vitest';
import { run, type GcDeps } from '../../../functions/gc/handler.ts';
import { FinalizerTermination } from '../../../shared/api/labels.ts';
import { NodePoolSchema, type NodePool } from '../../../shared/api/nodepool.ts';
import type { NodeClaim } from '../../../shared/api/nodeclaim.ts';
import { RecordingLog, RecordingMetrics } from '../../../shared/runtime/observability.ts';
import { node, nodeClaim } from '../../fakes/index.ts';
import { ClaimName, InstanceId, NodeName, harness, type Harness } from '../termination/helpers.ts';

const OtherClaim = 'other-q9w8e';
const OtherNode = 'ip-10-0-9-9.ec2.internal';
const OtherInstance = 'i-0fff0000aaaa11112';
const OtherProviderId = `aws:///us-east-1a/${OtherInstance}`;
const Registered: NodeClaim['conditions'] = [
  { type: 'Launched', status: 'True', lastTransitionTime: '2026-01-01T00:00:00.000Z' },
  { type: 'Registered', status: 'True', lastTransitionTime: '2026-01-01T00:00:10.000Z' },
  { type: 'Initialized', status: 'True', lastTransitionTime: '2026-01-01T00:00:20.000Z' },
];

function pool(name: string, deletionTimestamp?: string): NodePool {
  return NodePoolSchema.parse({
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name, ...(deletionTimestamp ? { deletionTimestamp } : {}) },
    spec: { template: { spec: { nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' }, requirements: [] } } },
  });
}

/**
 * Two registered claims of NodePools `default` and `other`, their Nodes holding the finalizer,
 * their instances running; gc wired to the local termination, one pass run so the NodeClaim
 * objects exist.
 */
async function world(): Promise<{ h: Harness; deps: GcDeps; arns: string[] }> {
  const h = harness();
  const { w } = h;
  w.store.put({ ...w.store.peek(ClaimName)!, phase: 'Initialized', conditions: Registered });
  w.store.put(
    nodeClaim({
      name: OtherClaim,
      nodePool: 'other',
      nodeName: OtherNode,
      instanceId: OtherInstance,
      providerId: OtherProviderId,
      phase: 'Initialized',
      conditions: Registered,
    }),
  );
  w.kube.addNode(node({ name: OtherNode, providerID: OtherProviderId, labels: { 'karpenter.sh/nodepool': 'other' } }));
  w.cloud.addInstance({
    instanceId: OtherInstance,
    launchTime: '2026-01-01T00:00:00.000Z',
    tags: { 'nodefleet.io/cluster': 'test', 'karpenter.sh/nodepool': 'other', 'karpenter.sh/nodeclaim': OtherClaim },
  });
  await w.kube.setNodeFinalizer(NodeName, FinalizerTermination, true);
  await w.kube.setNodeFinalizer(OtherNode, FinalizerTermination, true);
  w.kube.setNodePools([pool('default'), pool('other')]);
  const arns: string[] = [];
  const termination = {
    start: async (i: Parameters<typeof h.starter.start>[0]) => {
      const a = await h.starter.start(i);
      arns.push(a);
      return a;
    },
  };
  const deps: GcDeps = {
    env: { clusterName: 'test', tableName: 'nodefleet', region: 'us-east-1', logLevel: 'INFO' },
    clock: w.clock,
    log: new RecordingLog(),
    metrics: new RecordingMetrics(),
    store: w.store,
    cloud: w.cloud,
    kube: w.kube,
    budgets: w.budgets,
    termination,
  };
  const first = await run({}, deps);
  expect(first.nodeClaimObjects?.put.sort()).toEqual([ClaimName, OtherClaim].sort());
  expect(first.started).toEqual([]);
  return { h, deps, arns };
}

/** `kubectl delete nodeclaim NAME`: the API server sets deletionTimestamp, the finalizer keeps the object. */
function kubectlDeleteNodeClaim(h: Harness, name: string): void {
  const o = h.w.kube.nodeClaimObjects.get(name)!;
  h.w.kube.nodeClaimObjects.set(name, { ...o, metadata: { ...o.metadata, deletionTimestamp: h.w.clock.nowIso() } });
}

async function finished(h: Harness, arns: string[]): Promise<void> {
  for (const a of arns) expect((await h.sfn.waitForExecution(a.split(':').pop()!)).status).toBe('SUCCEEDED');
}

describe('gc: deletions start terminations', () => {
  it("kubectl delete nodeclaim: drains and terminates that claim's instance; the object goes only after the instance is terminated", async () => {
    // Prepare
    const { h, deps, arns } = await world();
    const instanceStateAtObjectRemoval: (string | undefined)[] = [];
    const remove = h.w.kube.deleteNodeClaimObject.bind(h.w.kube);
    h.w.kube.deleteNodeClaimObject = async (o) => {
      instanceStateAtObjectRemoval.push(h.w.cloud.peek(InstanceId)?.state);
      return remove(o);
    };
    kubectlDeleteNodeClaim(h, ClaimName);
    // Act
    const r = await run({}, deps);
    // Assess
    expect(r.started).toEqual([{ nodeClaim: ClaimName, cause: 'nodeclaim' }]);
    expect(arns).toHaveLength(1);
    await finished(h, arns);
    const rec = await h.sfn.waitForExecution(arns[0].split(':').pop()!);
    expect(h.statesVisited(rec)).toEqual(expect.arrayContaining(['Cordon', 'Drain']));
    expect(h.terminateCalls).toHaveLength(1);
    expect(h.w.cloud.peek(InstanceId)?.state).not.toBe('running');
    expect(h.w.cloud.peek(OtherInstance)?.state).toBe('running');
    expect(await h.w.kube.getNode(NodeName)).toBeUndefined();
    // The object is still there (Terminating) until a pass sees the claim terminated.
    expect(h.w.kube.nodeClaimObjects.get(ClaimName)?.metadata.deletionTimestamp).toBeDefined();
    expect(instanceStateAtObjectRemoval).toEqual([]);
    const after = await run({}, deps);
    expect(after.nodeClaimObjects?.removed).toEqual([ClaimName]);
    expect(h.w.kube.nodeClaimObjects.has(ClaimName)).toBe(false);
    expect(instanceStateAtObjectRemoval).toHaveLength(1);
    expect(instanceStateAtObjectRemoval[0]).not.toBe('running');
    expect(h.w.kube.nodeClaimObjects.has(OtherClaim)).toBe(true);
    // Later passes start nothing more.
    expect((await run({}, deps)).started).toEqual([]);
    expect(arns).toHaveLength(1);
  });

  it('forged or mismatching NodeClaim objects start nothing', async () => {
    const { h, deps, arns } = await world();
    const o = h.w.kube.nodeClaimObjects.get(ClaimName)!;
    const forged = [
      // not being deleted
      { ...o },
      // another cluster's mirror
      { ...o, metadata: { ...o.metadata, deletionTimestamp: h.w.clock.nowIso(), annotations: { ...o.metadata.annotations, 'nodefleet.io/cluster': 'other' } } },
      // another controller's object of the claim's name (no mirror annotation)
      { ...o, metadata: { ...o.metadata, deletionTimestamp: h.w.clock.nowIso(), annotations: {} } },
      // the other claim's providerID
      { ...o, metadata: { ...o.metadata, deletionTimestamp: h.w.clock.nowIso() }, status: { ...o.status, providerID: OtherProviderId } },
      // another NodePool
      { ...o, metadata: { ...o.metadata, deletionTimestamp: h.w.clock.nowIso(), labels: { ...o.metadata.labels, 'karpenter.sh/nodepool': 'other' } } },
      // without the finalizer
      { ...o, metadata: { ...o.metadata, deletionTimestamp: h.w.clock.nowIso(), finalizers: ['example.com/other'] } },
    ];
    for (const f of forged) {
      h.w.kube.nodeClaimObjects.set(ClaimName, f);
      expect((await run({}, deps)).started).toEqual([]);
    }
    // An object of a name no record has, being deleted: nothing to terminate (the mirror is removed).
    h.w.kube.nodeClaimObjects.set('default-nosuch', { ...o, metadata: { ...o.metadata, name: 'default-nosuch', deletionTimestamp: h.w.clock.nowIso() } });
    expect((await run({}, deps)).started).toEqual([]);
    expect(arns).toEqual([]);
    expect(h.terminateCalls).toEqual([]);
    expect(h.w.cloud.peek(InstanceId)?.state).toBe('running');
  });

  it('a NodeClaim deleted before its claim launched waits for the launch', async () => {
    const { h, deps, arns } = await world();
    await h.w.store.create(nodeClaim({ name: 'default-pend1', phase: 'Pending', createdAt: h.w.clock.nowIso() }));
    expect((await run({}, deps)).nodeClaimObjects?.put).toEqual(['default-pend1']);
    kubectlDeleteNodeClaim(h, 'default-pend1');
    expect((await run({}, deps)).started).toEqual([]);
    expect(arns).toEqual([]);
  });

  it('a deleted Node whose event was lost: the next pass starts its termination; the Node goes after its instance', async () => {
    // Prepare: kubectl delete node, and the agent's event never delivered (registration not run)
    const { h, deps, arns } = await world();
    await h.w.kube.deleteNode(NodeName);
    expect((await h.w.kube.getNode(NodeName))?.metadata.deletionTimestamp).toBeDefined();
    // Act
    const r = await run({}, deps);
    // Assess
    expect(r.started).toEqual([{ nodeClaim: ClaimName, cause: 'node' }]);
    await finished(h, arns);
    expect(h.w.cloud.peek(InstanceId)?.state).not.toBe('running');
    expect(await h.w.kube.getNode(NodeName)).toBeUndefined();
    expect(h.w.cloud.peek(OtherInstance)?.state).toBe('running');
    expect(h.w.store.peek(OtherClaim)?.phase).toBe('Initialized');
  });

  it("a Node being deleted without the finalizer, or whose providerID is another claim's, starts nothing", async () => {
    const { h, deps, arns } = await world();
    await h.w.kube.setNodeFinalizer(NodeName, FinalizerTermination, false);
    const live = (await h.w.kube.getNode(NodeName))!;
    h.w.kube.addNode({ ...live, metadata: { ...live.metadata, deletionTimestamp: h.w.clock.nowIso(), finalizers: ['example.com/other'] } });
    expect((await run({}, deps)).started).toEqual([]);
    h.w.kube.addNode({
      ...live,
      metadata: { ...live.metadata, deletionTimestamp: h.w.clock.nowIso(), finalizers: [FinalizerTermination] },
      spec: { ...live.spec, providerID: OtherProviderId },
    });
    expect((await run({}, deps)).started).toEqual([]);
    expect(arns).toEqual([]);
  });

  it("deleting a NodePool terminates every instance of its claims and none of another NodePool's", async () => {
    // Prepare: a second claim in `default`
    const { h, deps, arns } = await world();
    const second = 'default-b2c3d';
    const secondNode = 'ip-10-0-1-77.ec2.internal';
    const secondInstance = 'i-0abc1234def5678bb';
    const secondProvider = `aws:///us-east-1a/${secondInstance}`;
    h.w.store.put(
      nodeClaim({ name: second, nodeName: secondNode, instanceId: secondInstance, providerId: secondProvider, phase: 'Initialized', conditions: Registered }),
    );
    h.w.kube.addNode(node({ name: secondNode, providerID: secondProvider, labels: { 'karpenter.sh/nodepool': 'default' } }));
    h.w.cloud.addInstance({
      instanceId: secondInstance,
      launchTime: '2026-01-01T00:00:00.000Z',
      tags: { 'nodefleet.io/cluster': 'test', 'karpenter.sh/nodepool': 'default', 'karpenter.sh/nodeclaim': second },
    });
    // Act: kubectl delete nodepool default
    h.w.kube.setNodePools([pool('other')]);
    const r = await run({}, deps);
    // Assess
    expect(r.started.sort((a, b) => a.nodeClaim.localeCompare(b.nodeClaim))).toEqual([
      { nodeClaim: second, cause: 'nodepool' },
      { nodeClaim: ClaimName, cause: 'nodepool' },
    ]);
    await finished(h, arns);
    expect(h.w.cloud.peek(InstanceId)?.state).not.toBe('running');
    expect(h.w.cloud.peek(secondInstance)?.state).not.toBe('running');
    expect((await h.w.cloud.list()).filter((i) => i.state === 'running' && i.tags['karpenter.sh/nodepool'] === 'default')).toEqual([]);
    expect(h.w.cloud.peek(OtherInstance)?.state).toBe('running');
    expect(h.w.store.peek(OtherClaim)?.phase).toBe('Initialized');
    // The NodeClaim objects of the deleted NodePool go once their claims are terminated.
    expect((await run({}, deps)).nodeClaimObjects?.removed.sort()).toEqual([ClaimName, second].sort());
    expect([...h.w.kube.nodeClaimObjects.keys()]).toEqual([OtherClaim]);
  });

  it('a NodePool being deleted (deletionTimestamp, a finalizer holding it) cascades too; an unknown NodePool list starts nothing', async () => {
    const { h, deps, arns } = await world();
    h.w.kube.nodePoolCrd(false).setNodePools([]);
    expect((await run({}, deps)).started).toEqual([]);
    h.w.kube.nodePoolCrd(true).setNodePools([pool('default'), pool('other', h.w.clock.nowIso())]);
    expect((await run({}, deps)).started).toEqual([{ nodeClaim: OtherClaim, cause: 'nodepool' }]);
    await finished(h, arns);
    expect(h.w.cloud.peek(OtherInstance)?.state).not.toBe('running');
    expect(h.w.cloud.peek(InstanceId)?.state).toBe('running');
  });

  it('a claim of another cluster in the table is never terminated for a deletion', async () => {
    const { h, deps, arns } = await world();
    h.w.store.put({ ...h.w.store.peek(ClaimName)!, cluster: 'elsewhere' });
    kubectlDeleteNodeClaim(h, ClaimName);
    await h.w.kube.deleteNode(NodeName);
    h.w.kube.setNodePools([pool('other')]);
    expect((await run({}, deps)).started).toEqual([]);
    expect(arns).toEqual([]);
    expect(h.w.cloud.peek(InstanceId)?.state).toBe('running');
  });
});
