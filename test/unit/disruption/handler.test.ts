import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { fakeWorld, node, nodeClaimOf, pod, type FakeWorld } from '../../fakes/index.ts';
import type { Node } from '../../../shared/api/kube.ts';
import { NodePoolSchema, type NodePool } from '../../../shared/api/nodepool.ts';
import { setCondition } from '../../../shared/api/nodeclaim.ts';
import type { BudgetCounter } from '../../../shared/api/ports.ts';
import type { Deps } from '../../../shared/runtime/deps.ts';
import { RecordingLog, RecordingMetrics } from '../../../shared/runtime/observability.ts';
import { DynamoBudgetCounter } from '../../../shared/aws/dynamo-budget-counter.ts';
import { startLocalDynamo, type LocalDynamo } from '../../../infra/local/dynamo.ts';
import { run, blockKind, BlockedLogQuietMs } from '../../../functions/disruption/handler.ts';
import { MetricNames } from '../../../shared/api/metrics.ts';
import { loadCatalog } from '../../../shared/catalog/index.ts';
import { provision } from '../../../functions/provisioner/provision.ts';
import { nodeClass, pendingPod } from '../provisioner/world.ts';

const Start = '2026-03-02T10:00:00Z';

function nodePool(budgetNodes = '100%'): NodePool {
  return NodePoolSchema.parse({
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: 'default' },
    spec: {
      template: {
        spec: {
          nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
          requirements: [
            { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
            { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] },
          ],
        },
      },
      disruption: { consolidationPolicy: 'WhenEmptyOrUnderutilized', consolidateAfter: '0s', budgets: [{ nodes: budgetNodes }] },
    },
  });
}

/** A managed, initialized on-demand node of a real type. */
function managedNode(name: string, instanceType: string, allocatable: Record<string, string>, zone = 'us-east-1a') {
  const n = node({
    name,
    providerID: `aws:///${zone}/i-${name
      .replace(/[^0-9a-z]/g, '')
      .padEnd(17, '0')
      .slice(0, 17)}`,
    allocatable,
    labels: {
      'karpenter.sh/nodepool': 'default',
      'karpenter.sh/initialized': 'true',
      'karpenter.sh/registered': 'true',
      'karpenter.sh/capacity-type': 'on-demand',
      'node.kubernetes.io/instance-type': instanceType,
      'topology.kubernetes.io/zone': zone,
      'kubernetes.io/arch': 'amd64',
      'kubernetes.io/os': 'linux',
    },
  });
  n.metadata.creationTimestamp = '2026-03-01T10:00:00Z';
  return n;
}

/** Adds nodefleet's nodes: each Node and its stored NodeClaim ({@link nodeClaimOf}). */
async function addManaged(w: FakeWorld, ...nodes: Node[]): Promise<void> {
  w.kube.addNode(...nodes);
  for (const n of nodes) await w.store.create(nodeClaimOf(n));
}

function depsOf(w: FakeWorld, budgets: BudgetCounter = w.budgets): Deps {
  return {
    env: { clusterName: 'test', tableName: 'nodefleet', region: 'us-east-1', logLevel: 'INFO' },
    clock: w.clock,
    log: new RecordingLog(),
    metrics: new RecordingMetrics(),
    store: w.store,
    unavailable: w.unavailable,
    cloud: w.cloud,
    kube: w.kube,
    termination: w.starter,
    budgets,
    clusterInfo: async () => ({}) as never,
  };
}

describe('disruption handler run()', () => {
  let w: FakeWorld;
  beforeEach(() => {
    w = fakeWorld({ start: Start });
    w.kube.setNodePools([nodePool()]);
  });

  it('plans an empty node, validates after 15 s, takes a budget slot, taints it and starts its termination', async () => {
    // Prepare
    await addManaged(
      w,
      managedNode('busy', 'm5.large', { cpu: '1930m', memory: '7220Mi', pods: '29' }),
      managedNode('idle', 'm5.large', { cpu: '1930m', memory: '7220Mi', pods: '29' }, 'us-east-1b'),
    );
    w.kube.addPod(pod({ name: 'web-1', nodeName: 'busy', cpu: '500m' }));
    const deps = depsOf(w);

    // Act: plan
    const planned = await run({}, deps);
    // Assess
    expect(planned.status).toBe('validating');
    expect(planned.retryAfterSeconds).toBe(15);
    expect(planned.command?.method).toBe('emptiness');
    expect(planned.command?.candidates.map((c) => c.nodeName)).toEqual(['idle']);

    // too early: still validating, nothing taken
    const early = await run({ command: planned.command }, deps);
    expect(early.status).toBe('validating');
    expect(w.budgets.inFlight('default')).toBe(0);

    w.clock.advanceSeconds(15);
    const acted = await run({ command: planned.command }, deps);
    expect(acted.status).toBe('terminating');
    expect(w.starter.started).toEqual([
      { nodeClaim: 'idle', nodeName: 'idle', instanceId: expect.stringMatching(/^i-/), reason: 'emptiness', budgetNodePool: 'default' },
    ]);
    expect(w.budgets.inFlight('default')).toBe(1);
    expect(w.kube.peekNode('idle')?.spec?.taints).toContainEqual(expect.objectContaining({ key: 'karpenter.sh/disrupted', effect: 'NoSchedule' }));
  });

  it('eventual disruption: a drifted node held by a do-not-disrupt pod goes when its claim has a terminationGracePeriod, and its termination gets the claim\u2019s deadline', async () => {
    // The NodePool has no terminationGracePeriod (now); the claim, made before, has 300 s.
    const n = managedNode('old', 'm5.large', { cpu: '1930m', memory: '7220Mi', pods: '29' });
    w.kube.addNode(n);
    await w.store.create(nodeClaimOf(n, { terminationGracePeriodSeconds: 300, nodePoolHash: 'made-from-an-older-template' }));
    w.kube.addPod(pod({ name: 'batch-1', nodeName: 'old', cpu: '500m', annotations: { 'karpenter.sh/do-not-disrupt': 'true' } }));
    const deps = depsOf(w);
    const planned = await run({}, deps);
    expect(planned.command).toMatchObject({ method: 'drift', decision: 'delete', replacements: [] });
    w.clock.advanceSeconds(15);
    const acted = await run({ command: planned.command }, deps);
    expect(acted.reason).toBeUndefined();
    expect(acted.status).toBe('terminating');
    expect(w.starter.startedFor('old')).toMatchObject({ reason: 'drift', deadlineEpochMs: w.clock.now().getTime() + 300_000 });
  });

  it('drops the command when the node got a pod during the validation delay', async () => {
    await addManaged(
      w,
      managedNode('busy', 'm5.large', { cpu: '1930m', memory: '7220Mi', pods: '29' }),
      managedNode('idle', 'm5.large', { cpu: '1930m', memory: '7220Mi', pods: '29' }),
    );
    w.kube.addPod(pod({ name: 'web-1', nodeName: 'busy', cpu: '1500m' }));
    const deps = depsOf(w);
    const planned = await run({}, deps);
    w.kube.addPod(pod({ name: 'web-2', nodeName: 'idle', cpu: '1500m' }));
    w.clock.advanceSeconds(15);
    const acted = await run({ command: planned.command }, deps);
    expect(acted.status).toBe('invalidated');
    expect(acted.reason).toMatch(/idle: no longer empty/);
    expect(w.starter.started).toHaveLength(0);
    expect(w.budgets.inFlight('default')).toBe(0);
  });

  it('replaces a big node with a cheaper one, and starts the termination only once the replacement is Initialized', async () => {
    const catalog = new Map(loadCatalog({ region: 'us-east-1' }).map((t) => [t.name, t]));
    const bigPrice = catalog.get('m5.4xlarge')!.offerings.find((o) => o.capacityType === 'on-demand')!.priceUsdPerHour;
    await addManaged(w, managedNode('big', 'm5.4xlarge', { cpu: '15890m', memory: '57691Mi', pods: '234' }));
    w.kube.addPod(pod({ name: 'api-1', nodeName: 'big', cpu: '500m', memory: '512Mi' }));
    const deps = depsOf(w);

    const planned = await run({}, deps);
    expect(planned.command?.method).toBe('single-node-consolidation');
    expect(planned.command?.decision).toBe('replace');
    const replacement = planned.command!.replacements[0];
    expect(replacement.priceUsdPerHour).toBeLessThan(bigPrice);
    expect(replacement.capacityTypes).toEqual(['on-demand']);
    expect(replacement.instanceTypes.length).toBeGreaterThan(0);
    expect(replacement.instanceTypes.length).toBeLessThanOrEqual(60);

    w.clock.advanceSeconds(15);
    const launched = await run({ command: planned.command }, deps);
    expect(launched.status).toBe('waiting-for-replacements');
    expect(launched.replacementClaims).toHaveLength(1);
    expect(w.cloud.callsOf('create')).toHaveLength(1);
    const claimName = launched.replacementClaims![0];
    const claim = await w.store.get(claimName);
    expect(claim?.phase).toBe('Launched');
    expect(claim?.nodePoolHash).toBeDefined();
    expect(w.starter.started).toHaveLength(0);
    expect(w.kube.peekNode('big')?.spec?.taints).toContainEqual(expect.objectContaining({ key: 'karpenter.sh/disrupted', effect: 'NoSchedule' }));

    // not initialized yet: keep waiting
    w.clock.advanceSeconds(15);
    expect((await run({ command: launched.command, replacementClaims: launched.replacementClaims }, deps)).status).toBe('waiting-for-replacements');

    await w.store.update(setCondition({ ...claim!, phase: 'Initialized' }, 'Initialized', 'True', w.clock.nowIso()));
    const done = await run({ command: launched.command, replacementClaims: launched.replacementClaims }, deps);
    expect(done.status).toBe('terminating');
    expect(w.starter.started.map((s) => [s.nodeClaim, s.reason])).toEqual([['big', 'consolidation']]);
  });

  it("records the replacement before it taints the candidate: a provisioning pass the taint sets off finds the candidate's pods and the pending pods it is sized for on the replacement (chaos seed 1136)", async () => {
    // Prepare: a big node whose one pod, and a pending pod, fit one cheaper replacement
    w.kube.setNodeClasses([nodeClass()]);
    await addManaged(w, managedNode('big', 'm5.4xlarge', { cpu: '15890m', memory: '57691Mi', pods: '234' }));
    w.kube.addPod(pod({ name: 'api-1', nodeName: 'big', cpu: '500m', memory: '512Mi' }));
    w.kube.addPod(pendingPod('db-0', '500m'));
    const deps = depsOf(w);
    const planned = await run({}, deps);
    expect(planned.command?.decision).toBe('replace');
    expect(planned.command!.replacements[0].pods.sort()).toEqual(['default/api-1', 'default/db-0']);
    // The provisioner's full pass runs the moment the candidate is tainted (the agent's node-deletion event).
    const passes: Awaited<ReturnType<typeof provision>>[] = [];
    const patchNode = w.kube.patchNode.bind(w.kube);
    w.kube.patchNode = async (name, patch) => {
      const n = await patchNode(name, patch);
      if (patch.taints?.some((t) => t.key === 'karpenter.sh/disrupted')) passes.push(await provision(deps, []));
      return n;
    };

    // Act
    w.clock.advanceSeconds(15);
    const launched = await run({ command: planned.command }, deps);

    // Assess: the pass saw both pods on the replacement and made no claim of its own; one launch in all
    expect(launched.status).toBe('waiting-for-replacements');
    expect(passes).toHaveLength(1);
    expect(passes[0].created).toEqual([]);
    expect(w.cloud.callsOf('create')).toHaveLength(1);
    expect((await w.store.list()).map((c) => c.name).sort()).toEqual(['big', ...launched.replacementClaims!].sort());
  });

  it("a provisioner claim written for a pending pod after the command read the claims takes that pod: the replacement gives it up and keeps the candidate's pods (chaos seed 1136)", async () => {
    // Prepare
    w.kube.setNodeClasses([nodeClass()]);
    await addManaged(w, managedNode('big', 'm5.4xlarge', { cpu: '15890m', memory: '57691Mi', pods: '234' }));
    w.kube.addPod(pod({ name: 'api-1', nodeName: 'big', cpu: '500m', memory: '512Mi' }));
    w.kube.addPod(pendingPod('db-0', '500m'));
    const deps = depsOf(w);
    const planned = await run({}, deps);
    expect(planned.command!.replacements[0].pods.sort()).toEqual(['default/api-1', 'default/db-0']);
    // The provisioner's claim for db-0 (and, racing too, the candidate's pod) lands just before the replacement's record.
    const create = w.store.create.bind(w.store);
    w.store.create = async (claim) => {
      if (claim.annotations?.['nodefleet.io/disruption-command'])
        await create({ ...claim, name: 'default-p1234', annotations: {}, pods: ['default/db-0', 'default/api-1'] });
      return create(claim);
    };

    // Act
    w.clock.advanceSeconds(15);
    const launched = await run({ command: planned.command }, deps);

    // Assess
    expect(launched.status).toBe('waiting-for-replacements');
    const replacement = (await w.store.get(launched.replacementClaims![0]))!;
    expect(replacement.pods).toEqual(['default/api-1']);
    expect(replacement.phase).toBe('Launched');
  });

  it('a replacement is made like a provisioned claim (template annotations, allocatable) and launched with its capacity retries (shared/launch; #28)', async () => {
    const np = nodePool();
    np.spec.template.metadata = { annotations: { 'example.com/owner': 'team-a' } };
    w.kube.setNodePools([np]);
    await addManaged(w, managedNode('big', 'm5.4xlarge', { cpu: '15890m', memory: '57691Mi', pods: '234' }));
    w.kube.addPod(pod({ name: 'api-1', nodeName: 'big', cpu: '500m', memory: '512Mi' }));
    const deps = depsOf(w);
    const planned = await run({}, deps);
    const r = planned.command!.replacements[0];
    // The cheapest type of the launch set is out of capacity in every zone of the replacement.
    for (const zone of r.zones) w.cloud.setInsufficientCapacity(r.instanceTypes[0], zone, 'on-demand');
    w.clock.advanceSeconds(15);
    const launched = await run({ command: planned.command }, deps);
    expect(launched.status).toBe('waiting-for-replacements');
    const claim = (await w.store.get(launched.replacementClaims![0]))!;
    expect(claim.phase).toBe('Launched');
    expect(claim.instanceType).not.toBe(r.instanceTypes[0]);
    expect(claim.annotations['example.com/owner']).toBe('team-a');
    expect(claim.annotations['nodefleet.io/disruption-command']).toBe(planned.command!.id);
    expect(claim.allocatable).toBeDefined();
    expect(claim.requirements.find((q) => q.key === 'topology.kubernetes.io/zone')?.values?.sort()).toEqual([...r.zones].sort());
  });

  it('a failed replacement untaints the candidate and releases its slot', async () => {
    await addManaged(w, managedNode('big', 'm5.4xlarge', { cpu: '15890m', memory: '57691Mi', pods: '234' }));
    w.kube.addPod(pod({ name: 'api-1', nodeName: 'big', cpu: '500m', memory: '512Mi' }));
    const deps = depsOf(w);
    const planned = await run({}, deps);
    w.clock.advanceSeconds(15);
    const launched = await run({ command: planned.command }, deps);
    const claim = (await w.store.get(launched.replacementClaims![0]))!;
    await w.store.update({ ...claim, phase: 'Failed' });
    const out = await run({ command: launched.command, replacementClaims: launched.replacementClaims }, deps);
    expect(out.status).toBe('invalidated');
    expect(w.budgets.inFlight('default')).toBe(0);
    expect(w.kube.peekNode('big')?.spec?.taints ?? []).not.toContainEqual(expect.objectContaining({ key: 'karpenter.sh/disrupted', effect: 'NoSchedule' }));
    expect(w.starter.started).toHaveLength(0);
  });

  it('holds its slot as a lease: each poll renews it, and a lease gc reclaimed abandons the command (untaint, no termination)', async () => {
    // Prepare
    await addManaged(w, managedNode('big', 'm5.4xlarge', { cpu: '15890m', memory: '57691Mi', pods: '234' }));
    w.kube.addPod(pod({ name: 'api-1', nodeName: 'big', cpu: '500m', memory: '512Mi' }));
    const deps = depsOf(w);
    const planned = await run({}, deps);
    w.clock.advanceSeconds(15);
    const launched = await run({ command: planned.command }, deps);
    w.clock.advanceSeconds(15);
    // Act: a poll renews the lease
    expect((await run({ command: launched.command, replacementClaims: launched.replacementClaims }, deps)).status).toBe('waiting-for-replacements');
    // Assess
    expect(await w.budgets.holders('default')).toEqual({ big: w.clock.nowIso() });

    // Act: gc reclaimed the lease (the loop looked dead), then the replacement is ready
    await w.budgets.release('default', 'big');
    const claim = (await w.store.get(launched.replacementClaims![0]))!;
    await w.store.update(setCondition({ ...claim, phase: 'Initialized' }, 'Initialized', 'True', w.clock.nowIso()));
    const out = await run({ command: launched.command, replacementClaims: launched.replacementClaims }, deps);
    // Assess: no termination without a slot
    expect(out.status).toBe('invalidated');
    expect(out.reason).toMatch(/lease/);
    expect(w.starter.started).toHaveLength(0);
    expect(w.budgets.inFlight('default')).toBe(0);
    expect(w.kube.peekNode('big')?.spec?.taints ?? []).not.toContainEqual(expect.objectContaining({ key: 'karpenter.sh/disrupted' }));
  });

  it('expires old nodes forcefully, outside the budget, and logs blocks with a metric', async () => {
    w.kube.setNodePools([nodePool('0')]);
    const old = managedNode('old', 'm5.large', { cpu: '1930m', memory: '7220Mi', pods: '29' });
    old.metadata.creationTimestamp = '2026-01-20T10:00:00Z'; // 41 days: past the default 720h
    await addManaged(w, old, managedNode('young', 'm5.large', { cpu: '1930m', memory: '7220Mi', pods: '29' }));
    const deps = depsOf(w);
    const out = await run({}, deps);
    expect(out.status).toBe('idle');
    expect(out.terminationsStarted).toEqual(['old']);
    expect(w.starter.started[0]).toMatchObject({ nodeClaim: 'old', reason: 'expiration' });
    expect(w.starter.started[0].budgetNodePool).toBeUndefined();
    const metrics = deps.metrics as RecordingMetrics;
    expect(JSON.stringify(metrics)).toContain(MetricNames.disruptionBlocked);
  });

  it('a forged loop input (a command with replacement claims it never launched) neither untaints nor releases a node whose termination started (npm run attack, commands replacements-step)', async () => {
    // Prepare: "going" is being terminated: its claim Terminating, its node tainted, its slot held by the termination
    const going = managedNode('going', 'm5.large', { cpu: '1930m', memory: '7220Mi', pods: '29' });
    going.spec = { ...going.spec, taints: [{ key: 'karpenter.sh/disrupted', effect: 'NoSchedule', timeAdded: Start }], unschedulable: true };
    w.kube.addNode(going);
    await w.store.create(
      nodeClaimOf(going, {
        phase: 'Terminating',
        termination: { attempt: 1, reason: 'consolidation', budgetNodePool: 'default', startedAt: Start, failures: 0 },
      }),
    );
    await w.budgets.take('default', 'going', 1, Start);
    const c = nodeClaimOf(going);
    const command = {
      id: 'forged-1',
      method: 'emptiness' as const,
      reason: 'Empty' as const,
      decision: 'delete' as const,
      candidates: [
        {
          nodeName: 'going',
          nodeClaim: c.name,
          nodePool: 'default',
          instanceType: 'm5.large',
          zone: 'us-east-1a',
          capacityType: 'on-demand' as const,
          pods: [],
        },
      ],
      replacements: [],
      createdAt: Start,
      validateAfter: Start,
    };
    // Act: the slot renews (it is the termination's, held under the claim's name), the replacement is not the command's: abandoned
    const out = await run({ command, replacementClaims: ['default-rforged'] }, depsOf(w));
    // Assess: the drain keeps its taint and its slot
    expect(out.status).toBe('invalidated');
    expect(w.kube.peekNode('going')?.spec?.taints).toContainEqual(expect.objectContaining({ key: 'karpenter.sh/disrupted' }));
    expect(w.kube.callsOf('patchNode')).toEqual([]);
    expect(Object.keys(await w.budgets.holders('default'))).toEqual(['going']);
    // Act: and when the renew finds no slot (gc took it back, or the command never had one)
    await w.budgets.release('default', 'going');
    expect((await run({ command, replacementClaims: ['default-rforged'] }, depsOf(w))).status).toBe('invalidated');
    expect(w.kube.callsOf('patchNode')).toEqual([]);
  });

  it('logs a blocked node and reason once per quiet window, every run still counts in the metric', async () => {
    const n = managedNode('young', 'm5.large', { cpu: '1930m', memory: '7220Mi', pods: '29' });
    delete n.metadata.labels!['karpenter.sh/initialized'];
    await addManaged(w, n);
    const deps = depsOf(w);
    const log = deps.log as RecordingLog;
    const lines = () => log.withMessage('disruption blocked').filter((l) => l.fields.node === 'young');
    await run({}, deps);
    w.clock.advanceSeconds(60);
    await run({}, deps);
    expect(lines()).toHaveLength(1);
    expect((deps.metrics as RecordingMetrics).emitted.filter((m) => m.name === MetricNames.disruptionBlocked).length).toBeGreaterThanOrEqual(2);
    w.clock.advanceSeconds(BlockedLogQuietMs / 1000);
    await run({}, deps);
    expect(lines()).toHaveLength(2);
  });

  it('classifies block reasons for the metric', () => {
    expect(blockKind('pdb default/critical prevents pod evictions (pod default/b-1)')).toBe('pdb');
    expect(blockKind('pod default/x has "karpenter.sh/do-not-disrupt" annotation')).toBe('do-not-disrupt');
    expect(blockKind('disruption budget for Empty in nodepool "default" is spent')).toBe('budget');
  });
});

describe('two disruption runs at once against one budget of 1 (DynamoDB counter on dynalite)', () => {
  let dynamo: LocalDynamo;
  let doc: DynamoDBDocumentClient;
  beforeAll(async () => {
    dynamo = await startLocalDynamo({ tableName: 'disruption-race' });
    doc = DynamoDBDocumentClient.from(
      new DynamoDBClient({ region: 'us-east-1', endpoint: dynamo.endpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }),
    );
  }, 30_000);
  afterAll(async () => {
    await dynamo?.stop();
  });

  it('only one node is taken', async () => {
    // Prepare: two empty nodes, budget nodes "1"
    const w = fakeWorld({ start: Start });
    w.kube.setNodePools([nodePool('1')]);
    await addManaged(
      w,
      managedNode('empty-a', 'm5.large', { cpu: '1930m', memory: '7220Mi', pods: '29' }),
      managedNode('empty-b', 'm5.large', { cpu: '1930m', memory: '7220Mi', pods: '29' }, 'us-east-1b'),
    );
    const counter = new DynamoBudgetCounter(doc, dynamo.tableName, 'race');
    const deps = depsOf(w, counter);
    const planned = await run({}, deps);
    const cmdA = planned.command!;
    expect(cmdA.candidates).toHaveLength(1);
    // A second run that planned from a slightly different view picked the other node.
    const other = cmdA.candidates[0].nodeName === 'empty-a' ? 'empty-b' : 'empty-a';
    const cmdB = {
      ...cmdA,
      id: `${cmdA.id}-b`,
      candidates: [{ ...cmdA.candidates[0], nodeName: other, nodeClaim: other, zone: other === 'empty-b' ? 'us-east-1b' : 'us-east-1a' }],
    };
    w.clock.advanceSeconds(15);

    // Act: both invocations at once
    const results = await Promise.all([run({ command: cmdA }, depsOf(w, counter)), run({ command: cmdB }, depsOf(w, counter))]);

    // Assess
    expect(results.filter((r) => r.status === 'terminating')).toHaveLength(1);
    expect(w.starter.started).toHaveLength(1);
    expect(Object.keys(await counter.holders('default'))).toEqual([w.starter.started[0].nodeClaim]);
  });
});
