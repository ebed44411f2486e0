/**
 * The termination finalizer on the real tier: kube-apiserver with infra/k8s and its CRDs as they
 * ship, kwok running the Nodes and their pods. gc, registration and the agent run with their own
 * identities (their shipped RBAC: the agent with its ServiceAccount's token), the termination state
 * machine (local Step Functions) against the same API server; DynamoDB and EC2 are the in-memory
 * fakes. `kubectl delete nodeclaim` is seen by the agent's watch at once, registration starts the
 * drain and termination, and the NodeClaim object goes only after its instance; deleting a NodePool leaves none of its instances running;
 * a Node deleted with no event delivered is terminated by gc's pass.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startControlPlane, type ControlPlane } from './control-plane/cluster.ts';
import { applyShipped } from './control-plane/manifests.ts';
import { agentToken, functionIdentities } from './rbac.ts';
import { run as gcRun, type GcDeps } from '../../functions/gc/handler.ts';
import { parseInput as registrationInput, run as registrationRun, type RegistrationDeps } from '../../functions/registration/handler.ts';
import { Agent } from '../../functions/agent/agent.ts';
import { AgentSource } from '../../shared/api/contract.ts';
import { FakeEventPublisher } from '../fakes/index.ts';
import { createLocalTermination } from '../../infra/local/sfn.ts';
import { ClientNodeKubeApi } from '../../shared/kube/kube-api.ts';
import { FinalizerTermination } from '../../shared/api/labels.ts';
import type { NodeClaim } from '../../shared/api/nodeclaim.ts';
import { RecordingLog, RecordingMetrics } from '../../shared/runtime/observability.ts';
import { fakeWorld, nodeClaim, type FakeWorld } from '../fakes/index.ts';
import { until } from './control-plane/until.ts';

const Cluster = 'real';
const NodeClaims = '/apis/karpenter.sh/v1/nodeclaims';
const NodePools = '/apis/karpenter.sh/v1/nodepools';
const Registered: NodeClaim['conditions'] = [
  { type: 'Launched', status: 'True', lastTransitionTime: '2026-01-01T00:00:00.000Z' },
  { type: 'Registered', status: 'True', lastTransitionTime: '2026-01-01T00:00:10.000Z' },
  { type: 'Initialized', status: 'True', lastTransitionTime: '2026-01-01T00:00:20.000Z' },
];

/** The claims: name → NodePool, its Node and instance. */
const Claims = [
  { name: 'web-aaaaa', nodePool: 'web', node: 'ip-10-0-1-1.ec2.internal', instanceId: 'i-0000000000000aaa1' },
  { name: 'web-bbbbb', nodePool: 'web', node: 'ip-10-0-1-2.ec2.internal', instanceId: 'i-0000000000000bbb2' },
  { name: 'batch-ccccc', nodePool: 'batch', node: 'ip-10-0-1-3.ec2.internal', instanceId: 'i-0000000000000ccc3' },
];
const providerId = (id: string) => `aws:///us-east-1a/${id}`;

let cp: ControlPlane;
let w: FakeWorld;
let deps: GcDeps;
let registration: RegistrationDeps;
let agent: Agent | undefined;
const published = new FakeEventPublisher();
let sfn: ReturnType<typeof createLocalTermination>['sfn'];
const arns: string[] = [];
/** Each NodeClaim object gc removed, with its instance's state at that moment. */
const removals: { name: string; instanceState?: string }[] = [];

async function must(method: string, path: string, body?: unknown): Promise<any> {
  const r = await cp.request(method, path, body);
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.body).slice(0, 400)}`);
  return r.body;
}

function nodePool(name: string) {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name },
    spec: {
      template: {
        spec: {
          nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
          requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] }],
        },
      },
    },
  };
}

async function finished(): Promise<void> {
  for (const a of arns) expect((await sfn.waitForExecution(a.split(':').pop()!)).status).toBe('SUCCEEDED');
}

const instanceState = (name: string) => w.cloud.peek(Claims.find((c) => c.name === name)!.instanceId)?.state;

describe('real tier: deleting a NodeClaim, a NodePool, a Node with its event lost', () => {
  beforeAll(async () => {
    const gc = functionIdentities().find((i) => i.name === 'nodefleet-gc')!;
    const reg = functionIdentities().find((i) => i.name === 'nodefleet-registration')!;
    cp = await startControlPlane({
      kwok: true,
      identities: { [gc.name]: { user: gc.user, groups: gc.groups }, [reg.name]: { user: reg.user, groups: reg.groups } },
      log: (l) => console.log(l),
    });
    await applyShipped(cp);
    w = fakeWorld({ cloud: { tags: { 'nodefleet.io/cluster': Cluster } }, kube: {} });
    const connect = (token: string) =>
      new ClientNodeKubeApi(async () => ({ kind: 'token', server: cp.server, caData: Buffer.from(cp.caData).toString('base64'), token, clusterName: Cluster }));
    const gcKube = connect(cp.tokens[gc.name]);
    const remove = gcKube.deleteNodeClaimObject.bind(gcKube);
    gcKube.deleteNodeClaimObject = async (o) => {
      removals.push({ name: o.metadata.name, instanceState: instanceState(o.metadata.name) });
      return remove(o);
    };
    // The termination tasks as the admin (their own identities are checked by real-rbac); waits
    // advance the fake clock, with a short real pause so kwok can remove the evicted pods.
    const local = createLocalTermination(
      { kube: connect(cp.adminToken), cloud: w.cloud, store: w.store, budgets: w.budgets, clock: w.clock },
      {
        wait: async (s) => {
          w.clock.advanceSeconds(s);
          await new Promise((r) => setTimeout(r, 300));
        },
        retryPauseMs: 0,
      },
    );
    sfn = local.sfn;
    const termination = {
      start: async (i: Parameters<typeof local.starter.start>[0]) => {
        const a = await local.starter.start(i);
        arns.push(a);
        return a;
      },
    };
    registration = {
      env: { clusterName: Cluster },
      clock: w.clock,
      log: new RecordingLog(),
      metrics: new RecordingMetrics(),
      store: w.store,
      kube: connect(cp.tokens[reg.name]),
      cloud: w.cloud,
      termination,
    };
    deps = {
      env: { clusterName: Cluster, tableName: 'nodefleet', region: 'us-east-1', logLevel: 'INFO' },
      clock: w.clock,
      log: new RecordingLog(),
      metrics: new RecordingMetrics(),
      store: w.store,
      cloud: w.cloud,
      kube: gcKube,
      budgets: w.budgets,
      termination,
    };

    await must('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'apps' } });
    // Its default ServiceAccount (no controller-manager here to make it).
    await must('POST', '/api/v1/namespaces/apps/serviceaccounts', { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' } });
    for (const p of ['web', 'batch']) await must('POST', NodePools, nodePool(p));
    for (const c of Claims) {
      await must('POST', '/api/v1/nodes', {
        apiVersion: 'v1',
        kind: 'Node',
        metadata: {
          name: c.node,
          finalizers: [FinalizerTermination],
          annotations: { 'kwok.x-k8s.io/node': 'fake' },
          labels: {
            'kubernetes.io/hostname': c.node,
            'karpenter.sh/nodepool': c.nodePool,
            'karpenter.sh/registered': 'true',
            'karpenter.sh/initialized': 'true',
          },
        },
        spec: { providerID: providerId(c.instanceId) },
        status: { allocatable: { cpu: '4', memory: '16Gi', pods: '110' }, capacity: { cpu: '4', memory: '16Gi', pods: '110' } },
      });
      await must('POST', '/api/v1/namespaces/apps/pods', {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: `${c.name}-app`, labels: { app: c.nodePool } },
        spec: {
          nodeName: c.node,
          terminationGracePeriodSeconds: 1,
          containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10', resources: { requests: { cpu: '1' } } }],
        },
      });
      w.store.put(
        nodeClaim({
          name: c.name,
          cluster: Cluster,
          nodePool: c.nodePool,
          nodeName: c.node,
          instanceId: c.instanceId,
          providerId: providerId(c.instanceId),
          phase: 'Initialized',
          conditions: Registered,
          terminationGracePeriodSeconds: 300,
          instanceType: 'm5.xlarge',
          zone: 'us-east-1a',
          capacityType: 'on-demand',
        }),
      );
      w.cloud.addInstance({
        instanceId: c.instanceId,
        launchTime: '2026-01-01T00:00:00.000Z',
        tags: { 'nodefleet.io/cluster': Cluster, 'karpenter.sh/nodepool': c.nodePool, 'karpenter.sh/nodeclaim': c.name },
      });
    }
    for (const c of Claims)
      await until(`pod ${c.name}-app running`, async () =>
        (await cp.request('GET', `/api/v1/namespaces/apps/pods/${c.name}-app`)).body.status?.phase === 'Running' ? true : undefined,
      );
    // The first pass mirrors the records into NodeClaim objects (validated by the real CRD).
    const first = await gcRun({}, deps);
    expect(first.failed).toEqual([]);
    expect(first.nodeClaimObjects?.put.sort()).toEqual(Claims.map((c) => c.name).sort());
    expect(first.started).toEqual([]);
    // The agent, with its ServiceAccount's token (no ServiceAccount controller here: the token is
    // the TokenRequest API's), its events recorded instead of sent.
    const token = await agentToken(cp);
    agent = new Agent({
      connection: { kind: 'token', server: cp.server, caData: Buffer.from(cp.caData).toString('base64'), token, clusterName: Cluster },
      publisher: published,
      clusterName: Cluster,
    });
    await agent.start();
    await until('the agent listed', async () => (agent!.ready() ? true : undefined));
  });
  afterAll(async () => {
    await agent?.stop();
    await cp?.stop();
  });

  it('kubectl delete nodeclaim: the agent forwards it at once, the pod is evicted, the instance terminated, the Node deleted; the NodeClaim object goes only after the instance', async () => {
    // Act: DELETE, as kubectl does; the finalizer holds the object
    const c = Claims[0];
    const deletedAt = Date.now();
    await must('DELETE', `${NodeClaims}/${c.name}`);
    expect((await must('GET', `${NodeClaims}/${c.name}`)).metadata.deletionTimestamp).toBeDefined();
    // The agent's NodeClaim watch sees it (seconds, not gc's minute) and registration starts the termination.
    const sent = await until('the agent forwards the deletion', async () => published.ofType('NodeClaim Lifecycle')[0], 15_000);
    const seconds = (Date.now() - deletedAt) / 1000;
    expect(seconds).toBeLessThan(10);
    const started = await registrationRun(
      registrationInput({ version: '0', id: 'nc-1', 'detail-type': sent.detailType, source: AgentSource, time: new Date().toISOString(), detail: sent.detail }),
      registration,
    );
    expect(started).toEqual({ action: 'terminating', nodeClaim: c.name, started: true });
    // Assess
    await finished();
    // Drained through the Eviction API before the deadline: no Cutoff.
    const states = (await sfn.waitForExecution(arns[0].split(':').pop()!)).events.filter((e) => e.type.endsWith('StateEntered')).map((e) => e.stateName);
    expect(states).toEqual(expect.arrayContaining(['Cordon', 'Drain', 'TerminateInstance', 'DeleteNode', 'Finalize']));
    expect(states).not.toContain('Cutoff');
    expect(instanceState(c.name)).not.toBe('running');
    expect((await cp.request('GET', `/api/v1/namespaces/apps/pods/${c.name}-app`)).status).toBe(404);
    expect((await cp.request('GET', `/api/v1/nodes/${c.node}`)).status).toBe(404);
    expect((await cp.request('GET', `${NodeClaims}/${c.name}`)).status).toBe(200);
    expect(removals).toEqual([]);
    // gc's next pass starts nothing more (every request allowed) and takes the object's finalizer off.
    const after = await gcRun({}, deps);
    expect(after.started).toEqual([]);
    expect(after.failed).toEqual([]);
    expect(after.nodeClaimObjects?.removed).toEqual([c.name]);
    expect((await cp.request('GET', `${NodeClaims}/${c.name}`)).status).toBe(404);
    expect(removals).toEqual([{ name: c.name, instanceState: 'shutting-down' }]);
    expect(instanceState(Claims[1].name)).toBe('running');
    expect(instanceState(Claims[2].name)).toBe('running');
  });

  it('deleting a NodePool leaves none of its instances running, and its NodeClaim objects go', async () => {
    await must('DELETE', `${NodePools}/batch`);
    await until('NodePool batch gone', async () => ((await cp.request('GET', `${NodePools}/batch`)).status === 404 ? true : undefined));
    const r = await gcRun({}, deps);
    expect(r.started).toEqual([{ nodeClaim: 'batch-ccccc', cause: 'nodepool' }]);
    expect(r.failed).toEqual([]);
    await finished();
    expect((await w.cloud.list()).filter((i) => i.tags['karpenter.sh/nodepool'] === 'batch' && i.state === 'running')).toEqual([]);
    expect(instanceState('web-bbbbb')).toBe('running');
    expect((await gcRun({}, deps)).nodeClaimObjects?.removed).toEqual(['batch-ccccc']);
    expect((await cp.request('GET', `${NodeClaims}/batch-ccccc`)).status).toBe(404);
  });

  it("a Node deleted with no event delivered: gc's pass starts its termination, and the Node goes after its instance", async () => {
    const c = Claims[1];
    await must('DELETE', `/api/v1/nodes/${c.node}`);
    expect((await must('GET', `/api/v1/nodes/${c.node}`)).metadata.deletionTimestamp).toBeDefined();
    const r = await gcRun({}, deps);
    expect(r.started).toEqual([{ nodeClaim: c.name, cause: 'node' }]);
    await finished();
    expect(instanceState(c.name)).not.toBe('running');
    expect((await cp.request('GET', `/api/v1/nodes/${c.node}`)).status).toBe(404);
    expect((await gcRun({}, deps)).started).toEqual([]);
  });
});
