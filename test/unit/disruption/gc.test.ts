import { describe, expect, it } from 'vitest';
import { node, nodeClaim } from '../../fakes/index.ts';
import { setCondition } from '../../../shared/api/nodeclaim.ts';
import { ClaimsEpochSkewSeconds, OrphanInstanceGraceSeconds, planGarbageCollection } from '../../../shared/disruption/gc.ts';

const Now = new Date('2026-03-02T10:00:00Z');
/** The tags a launch puts on a claim's instance (shared/aws/ec2.ts launchTags; the fake claims' cluster is `test`). */
const launchTags = (claim: string, nodePool = 'default') => ({
  'nodefleet.io/cluster': 'test',
  'karpenter.sh/nodepool': nodePool,
  'karpenter.sh/nodeclaim': claim,
});
/** A registered Node of instance `instanceId` in NodePool default. */
const nodeOfInstance = (name: string, instanceId: string) =>
  node({ name, providerID: `aws:///us-east-1a/${instanceId}`, labels: { 'karpenter.sh/nodepool': 'default' } });
/** A running instance of `claim`, launched at 09:00. */
const instanceOf = (claim: string, instanceId: string) => ({ instanceId, state: 'running', launchTime: '2026-03-02T09:00:00Z', tags: launchTags(claim) });
/** The table has kept claims since well before every instance of these tests (the guard below has its own). */
const Epoch = Date.parse('2026-02-01T00:00:00Z');

describe('planGarbageCollection', () => {
  it('deletes claims that never launched (5 min) or never registered (15 min)', () => {
    const notLaunched = nodeClaim({ name: 'a', phase: 'Pending', createdAt: '2026-03-02T09:54:00Z' });
    const young = nodeClaim({ name: 'b', phase: 'Pending', createdAt: '2026-03-02T09:58:00Z' });
    const unregistered = setCondition(
      nodeClaim({ name: 'c', phase: 'Launched', instanceId: 'i-0c', createdAt: '2026-03-02T09:44:00Z' }),
      'Launched',
      'True',
      '2026-03-02T09:44:05Z',
    );
    const registering = setCondition(
      nodeClaim({ name: 'd', phase: 'Launched', instanceId: 'i-0d', createdAt: '2026-03-02T09:50:00Z' }),
      'Launched',
      'True',
      '2026-03-02T09:50:05Z',
    );
    const plan = planGarbageCollection(
      {
        cluster: 'test',
        tableEpochMs: Epoch,
        nodeClaims: [notLaunched, young, unregistered, registering],
        nodes: [],
        instances: [instanceOf('c', 'i-0c'), instanceOf('d', 'i-0d')],
      },
      Now,
    );
    expect(plan.deleteNodeClaims).toEqual([
      { nodeClaim: 'a', reason: 'launch_timeout' },
      { nodeClaim: 'c', reason: 'registration_timeout', instanceId: 'i-0c' },
    ]);
  });

  it('deletes claims whose instance is gone and terminates tagged instances no claim owns (after 30 s)', () => {
    const gone = nodeClaim({ name: 'gone', instanceId: 'i-0gone', providerId: 'aws:///us-east-1a/i-0gone', nodeName: 'n1', createdAt: '2026-03-01T00:00:00Z' });
    const fine = nodeClaim({ name: 'fine', instanceId: 'i-0fine', providerId: 'aws:///us-east-1a/i-0fine', nodeName: 'n2', createdAt: '2026-03-01T00:00:00Z' });
    const plan = planGarbageCollection(
      {
        cluster: 'test',
        tableEpochMs: Epoch,
        nodeClaims: [gone, fine],
        nodes: [nodeOfInstance('n1', 'i-0gone'), nodeOfInstance('n2', 'i-0fine')],
        instances: [
          { instanceId: 'i-0gone', state: 'terminated', tags: { 'nodefleet.io/cluster': 'test' } },
          { instanceId: 'i-0fine', state: 'running', tags: { 'nodefleet.io/cluster': 'test' } },
          {
            instanceId: 'i-0orphan',
            state: 'running',
            launchTime: '2026-03-02T09:00:00Z',
            tags: { 'nodefleet.io/cluster': 'test', 'karpenter.sh/nodepool': 'default' },
          },
          { instanceId: 'i-0launching', state: 'pending', launchTime: '2026-03-02T09:59:50Z', tags: { 'nodefleet.io/cluster': 'test' } },
          { instanceId: 'i-0notours', state: 'running', launchTime: '2026-03-01T00:00:00Z', tags: { Name: 'bastion' } },
        ],
      },
      Now,
    );
    expect(plan.deleteNodeClaims).toEqual([{ nodeClaim: 'gone', reason: 'instance_gone', nodeName: 'n1' }]);
    expect(plan.terminateInstances).toEqual([{ instanceId: 'i-0orphan', reason: 'orphan' }]);
  });
});

describe('planGarbageCollection: instances launched before the claims epoch (a replaced or emptied table)', () => {
  // gc recorded the epoch on its first pass over the new, empty table, 2 minutes ago.
  const epochMs = Now.getTime() - 120_000;
  const at = (msFromEpoch: number) => new Date(epochMs + msFromEpoch).toISOString();
  const ours = (nodeClaim: string) => ({ 'nodefleet.io/cluster': 'test', 'karpenter.sh/nodepool': 'default', 'karpenter.sh/nodeclaim': nodeClaim });

  it('keeps and reports every running unowned instance launched before the epoch; terminates the orphans launched after it', () => {
    // Prepare: three nodes of the old table (launched days before), one whose launch time is unknown,
    // a launch whose claim write was lost after the epoch, one at the edge of the skew margin, and
    // one launched before the epoch that a claim of the new table owns.
    const adopted = nodeClaim({ name: 'default-adopted', instanceId: 'i-0adopted', createdAt: at(10_000) });
    const instances = [
      { instanceId: 'i-0old1', state: 'running', launchTime: '2026-02-27T08:00:00Z', tags: ours('default-old1') },
      { instanceId: 'i-0old2', state: 'running', launchTime: '2026-02-28T08:00:00Z', tags: ours('default-old2') },
      { instanceId: 'i-0old3', state: 'running', launchTime: at(-(ClaimsEpochSkewSeconds + 1) * 1000), tags: { 'nodefleet.io/cluster': 'test' } },
      { instanceId: 'i-0unknown', state: 'running', tags: ours('default-unknown') },
      { instanceId: 'i-0oldgone', state: 'terminated', launchTime: '2026-02-27T08:00:00Z', tags: ours('default-oldgone') },
      { instanceId: 'i-0adopted', state: 'running', launchTime: '2026-02-27T08:00:00Z', tags: ours('default-adopted') },
      { instanceId: 'i-0lost', state: 'running', launchTime: at(5_000), tags: ours('default-lost') },
      { instanceId: 'i-0edge', state: 'running', launchTime: at(-(ClaimsEpochSkewSeconds - 1) * 1000), tags: ours('default-edge') },
    ];
    // Act
    const plan = planGarbageCollection({ cluster: 'test', nodeClaims: [adopted], nodes: [], instances, tableEpochMs: epochMs }, Now);
    // Assess
    expect(plan.terminateInstances).toEqual([
      { instanceId: 'i-0lost', reason: 'orphan' },
      { instanceId: 'i-0edge', reason: 'orphan' },
    ]);
    expect(plan.unownedBeforeEpoch).toEqual([
      { instanceId: 'i-0old1', launchTime: '2026-02-27T08:00:00Z', nodeClaim: 'default-old1', nodePool: 'default' },
      { instanceId: 'i-0old2', launchTime: '2026-02-28T08:00:00Z', nodeClaim: 'default-old2', nodePool: 'default' },
      { instanceId: 'i-0old3', launchTime: at(-(ClaimsEpochSkewSeconds + 1) * 1000) },
      { instanceId: 'i-0unknown', nodeClaim: 'default-unknown', nodePool: 'default' },
    ]);
    expect(plan.deleteNodeClaims).toEqual([]);
  });

  it('never terminates an orphan whose Node is live and registered: it is reported with its node; one whose Node never registered is terminated (F4)', () => {
    const orphan = (id: string) => ({
      instanceId: id,
      state: 'running',
      launchTime: '2026-03-02T09:00:00Z',
      tags: { 'nodefleet.io/cluster': 'test', 'karpenter.sh/nodepool': 'default', 'karpenter.sh/nodeclaim': `lost-${id}` },
    });
    const plan = planGarbageCollection(
      {
        cluster: 'test',
        tableEpochMs: Epoch,
        nodeClaims: [],
        nodes: [
          node({ name: 'busy', providerID: 'aws:///us-east-1a/i-0busy' }),
          node({ name: 'fresh', providerID: 'aws:///us-east-1a/i-0fresh', taints: [{ key: 'karpenter.sh/unregistered', effect: 'NoExecute' }] }),
        ],
        instances: [orphan('i-0busy'), orphan('i-0fresh'), orphan('i-0bare')],
      },
      Now,
    );
    expect(plan.orphansWithNode).toEqual([
      { instanceId: 'i-0busy', nodeName: 'busy', launchTime: '2026-03-02T09:00:00Z', nodeClaim: 'lost-i-0busy', nodePool: 'default' },
    ]);
    expect(plan.terminateInstances).toEqual([
      { instanceId: 'i-0fresh', reason: 'orphan' },
      { instanceId: 'i-0bare', reason: 'orphan' },
    ]);
  });

  it('an orphan launched after the epoch keeps the 30 s launch grace, and is not reported while it waits', () => {
    const young = {
      instanceId: 'i-0young',
      state: 'running',
      launchTime: new Date(Now.getTime() - (OrphanInstanceGraceSeconds - 1) * 1000).toISOString(),
      tags: ours('default-young'),
    };
    const plan = planGarbageCollection({ cluster: 'test', nodeClaims: [], nodes: [], instances: [young], tableEpochMs: epochMs }, Now);
    expect(plan.terminateInstances).toEqual([]);
    expect(plan.unownedBeforeEpoch).toEqual([]);
    const later = planGarbageCollection(
      { cluster: 'test', nodeClaims: [], nodes: [], instances: [young], tableEpochMs: epochMs },
      new Date(Now.getTime() + 2000),
    );
    expect(later.terminateInstances).toEqual([{ instanceId: 'i-0young', reason: 'orphan' }]);
  });
});

describe('planGarbageCollection beside Karpenter (docs/migration.md)', () => {
  it("never terminates nor reports an instance without nodefleet's cluster tag: Karpenter's own, or another cluster's", () => {
    // Prepare: Karpenter's instance (its tags, no nodefleet.io/cluster), another stack's, and a real orphan
    const karpenters = {
      instanceId: 'i-0karp',
      state: 'running',
      launchTime: '2026-03-02T09:00:00Z',
      tags: {
        'karpenter.sh/nodepool': 'theirs',
        'karpenter.sh/nodeclaim': 'theirs-abc',
        'karpenter.sh/managed-by': 'test',
        'karpenter.k8s.aws/ec2nodeclass': 'default',
      },
    };
    const otherCluster = {
      instanceId: 'i-0other',
      state: 'running',
      launchTime: '2026-03-02T09:00:00Z',
      tags: { 'nodefleet.io/cluster': 'prod', 'karpenter.sh/nodepool': 'default', 'karpenter.sh/nodeclaim': 'default-x' },
    };
    const orphan = { instanceId: 'i-0mine', state: 'running', launchTime: '2026-03-02T09:00:00Z', tags: launchTags('default-lost') };
    const nodes = [node({ name: 'karp', providerID: 'aws:///us-east-1a/i-0karp', labels: { 'karpenter.sh/nodepool': 'theirs' } })];
    // Act
    const plan = planGarbageCollection({ cluster: 'test', tableEpochMs: Epoch, nodeClaims: [], nodes, instances: [karpenters, otherCluster, orphan] }, Now);
    // Assess
    expect(plan.terminateInstances).toEqual([{ instanceId: 'i-0mine', reason: 'orphan' }]);
    expect(plan.orphansWithNode).toEqual([]);
    expect(plan.unownedBeforeEpoch).toEqual([]);
    expect(plan.deleteNodeClaims).toEqual([]);
  });
});

describe('staleDisruptions', () => {
  it('releases holders whose claim and node are gone, and leases not renewed for DisruptionLeaseSeconds (untainting their node); keeps a terminating one and a live lease', async () => {
    const { staleDisruptions, DisruptionLeaseSeconds } = await import('../../../shared/disruption/gc.ts');
    const disrupted = [{ key: 'karpenter.sh/disrupted', effect: 'NoSchedule' as const }];
    const nodes = [
      node({ name: 'n-draining', taints: disrupted }),
      node({ name: 'n-stuck', taints: disrupted }),
      node({ name: 'n-idle' }),
      node({ name: 'n-renewed', taints: disrupted }),
    ];
    const claims = [
      nodeClaim({
        name: 'c-draining',
        nodeName: 'n-draining',
        phase: 'Terminating',
        termination: { attempt: 1, reason: 'drift', startedAt: Now.toISOString(), heartbeatAt: Now.toISOString(), failures: 0, budgetNodePool: 'default' },
      }),
      nodeClaim({ name: 'c-stuck', nodeName: 'n-stuck' }),
      nodeClaim({ name: 'c-idle', nodeName: 'n-idle' }),
      nodeClaim({ name: 'c-renewed', nodeName: 'n-renewed' }),
    ];
    const at = (s: number) => new Date(Now.getTime() - s * 1000).toISOString();
    const out = staleDisruptions(
      {
        default: {
          'c-gone': at(60),
          'c-draining': at(7200),
          'c-stuck': at(DisruptionLeaseSeconds),
          'c-idle': at(DisruptionLeaseSeconds + 60),
          'c-renewed': at(DisruptionLeaseSeconds - 1),
        },
      },
      claims,
      nodes,
      Now,
    );
    expect(out.releaseBudgetSlots).toEqual([
      { nodePool: 'default', holder: 'c-gone', reason: 'gone' },
      { nodePool: 'default', holder: 'c-stuck', reason: 'abandoned' },
      { nodePool: 'default', holder: 'c-idle', reason: 'abandoned' },
    ]);
    expect(out.untaintNodes).toEqual([{ nodeName: 'n-stuck', reason: 'abandoned' }]);
  });

  it('a lease no termination owns runs out even on a terminating or terminated claim: an interruption took over the node from a disruption run (chaos seed 1136); its node keeps its taint', async () => {
    const { staleDisruptions, DisruptionLeaseSeconds } = await import('../../../shared/disruption/gc.ts');
    const at = (s: number) => new Date(Now.getTime() - s * 1000).toISOString();
    const disrupted = [{ key: 'karpenter.sh/disrupted', effect: 'NoSchedule' as const }];
    const interruption = { attempt: 1, reason: 'interruption', startedAt: at(60), heartbeatAt: at(60), failures: 0 };
    const nodes = [node({ name: 'n-interrupted', taints: disrupted })];
    const claims = [
      nodeClaim({ name: 'c-interrupted', nodeName: 'n-interrupted', phase: 'Terminating', termination: interruption }),
      nodeClaim({ name: 'c-terminated', nodeName: 'n-terminated', phase: 'Terminated', termination: interruption }),
      nodeClaim({ name: 'c-young', nodeName: 'n-young', phase: 'Terminated', termination: interruption }),
    ];
    const out = staleDisruptions(
      { default: { 'c-interrupted': at(DisruptionLeaseSeconds), 'c-terminated': at(DisruptionLeaseSeconds + 60), 'c-young': at(60) } },
      claims,
      nodes,
      Now,
    );
    expect(out.releaseBudgetSlots).toEqual([
      { nodePool: 'default', holder: 'c-interrupted', reason: 'abandoned' },
      { nodePool: 'default', holder: 'c-terminated', reason: 'abandoned' },
    ]);
    expect(out.untaintNodes).toEqual([]);
  });

  it('a disrupted taint with no slot and no termination is removed once older than the lease (its timeAdded)', async () => {
    const { staleDisruptions, DisruptionLeaseSeconds } = await import('../../../shared/disruption/gc.ts');
    const at = (s: number) => new Date(Now.getTime() - s * 1000).toISOString();
    const nodes = [
      node({ name: 'old', taints: [{ key: 'karpenter.sh/disrupted', effect: 'NoSchedule', timeAdded: at(DisruptionLeaseSeconds) }] }),
      node({ name: 'young', taints: [{ key: 'karpenter.sh/disrupted', effect: 'NoSchedule', timeAdded: at(60) }] }),
      node({ name: 'draining', taints: [{ key: 'karpenter.sh/disrupted', effect: 'NoSchedule', timeAdded: at(7200) }] }),
    ];
    const claims = [
      nodeClaim({ name: 'a', nodeName: 'old' }),
      nodeClaim({ name: 'b', nodeName: 'young' }),
      nodeClaim({ name: 'c', nodeName: 'draining', phase: 'Terminating' }),
    ];
    expect(staleDisruptions({}, claims, nodes, Now).untaintNodes).toEqual([{ nodeName: 'old', reason: 'abandoned' }]);
  });
});

describe('planGarbageCollection: a node that never initializes (chaos never-ready)', () => {
  it('a registered claim not Initialized 15 min after registration is deleted with its instance and node; an initialized one is kept', async () => {
    const { InitializationTimeoutSeconds } = await import('../../../shared/disruption/gc.ts');
    const reg = (name: string, secondsAgo: number) =>
      setCondition(
        setCondition(
          nodeClaim({ name, instanceId: `i-0${name}`, providerId: `aws:///us-east-1a/i-0${name}`, nodeName: `n-${name}`, createdAt: '2026-03-02T09:00:00Z' }),
          'Launched',
          'True',
          '2026-03-02T09:00:00Z',
        ),
        'Registered',
        'True',
        new Date(Now.getTime() - secondsAgo * 1000).toISOString(),
      );
    const stuck = reg('a', InitializationTimeoutSeconds);
    const young = reg('b', InitializationTimeoutSeconds - 1);
    const ready = setCondition(reg('c', InitializationTimeoutSeconds + 600), 'Initialized', 'True', '2026-03-02T09:02:00Z');
    const nodes = ['a', 'b', 'c'].map((n) => nodeOfInstance(`n-${n}`, `i-0${n}`));
    const plan = planGarbageCollection(
      { cluster: 'test', tableEpochMs: Epoch, nodeClaims: [stuck, young, ready], nodes, instances: ['a', 'b', 'c'].map((n) => instanceOf(n, `i-0${n}`)) },
      Now,
    );
    expect(plan.deleteNodeClaims).toEqual([{ nodeClaim: 'a', reason: 'initialization_timeout', instanceId: 'i-0a', nodeName: 'n-a' }]);
  });
});

describe('planGarbageCollection: a Node deleted out of band', () => {
  const registeredAt = (c: ReturnType<typeof nodeClaim>, iso: string) =>
    setCondition(setCondition(setCondition(c, 'Launched', 'True', '2026-03-02T09:00:00Z'), 'Registered', 'True', iso), 'Initialized', 'True', iso);

  it('a registered claim whose Node is gone (by name and providerID) has its instance terminated and is deleted, after the grace', async () => {
    const { NodeGoneGraceSeconds } = await import('../../../shared/disruption/gc.ts');
    const gone = registeredAt(
      nodeClaim({ name: 'gone', instanceId: 'i-0gone', nodeName: 'n-gone', providerId: 'aws:///us-east-1a/i-0gone', createdAt: '2026-03-02T09:00:00Z' }),
      '2026-03-02T09:01:00Z',
    );
    const fresh = registeredAt(
      nodeClaim({ name: 'fresh', instanceId: 'i-0fresh', nodeName: 'n-fresh', createdAt: '2026-03-02T09:00:00Z' }),
      new Date(Now.getTime() - (NodeGoneGraceSeconds - 1) * 1000).toISOString(),
    );
    const renamed = registeredAt(
      nodeClaim({ name: 'renamed', instanceId: 'i-0ren', nodeName: 'n-old-name', providerId: 'aws:///us-east-1a/i-0ren', createdAt: '2026-03-02T09:00:00Z' }),
      '2026-03-02T09:01:00Z',
    );
    const instances = [instanceOf('gone', 'i-0gone'), instanceOf('fresh', 'i-0fresh'), instanceOf('renamed', 'i-0ren')];
    const plan = planGarbageCollection(
      {
        cluster: 'test',
        tableEpochMs: Epoch,
        nodeClaims: [gone, fresh, renamed],
        nodes: [node({ name: 'n-new-name', providerID: 'aws:///us-east-1a/i-0ren' })],
        instances,
      },
      Now,
    );
    expect(plan.deleteNodeClaims).toEqual([{ nodeClaim: 'gone', reason: 'node_gone', instanceId: 'i-0gone' }]);
    expect(plan.terminateInstances).toEqual([]);
  });

  it('a claim still launching (not registered) or terminating is not judged by its missing Node', () => {
    const launching = setCondition(
      nodeClaim({ name: 'l', phase: 'Launched', instanceId: 'i-0l', createdAt: '2026-03-02T09:55:00Z' }),
      'Launched',
      'True',
      '2026-03-02T09:55:00Z',
    );
    const terminating = registeredAt(
      nodeClaim({ name: 't', phase: 'Terminating', instanceId: 'i-0t', nodeName: 'n-t', createdAt: '2026-03-02T09:00:00Z' }),
      '2026-03-02T09:01:00Z',
    );
    const instances = ['i-0l', 'i-0t'].map((instanceId) => ({
      instanceId,
      state: 'running',
      launchTime: '2026-03-02T09:00:00Z',
      tags: { 'nodefleet.io/cluster': 'test' },
    }));
    expect(
      planGarbageCollection({ cluster: 'test', tableEpochMs: Epoch, nodeClaims: [launching, terminating], nodes: [], instances }, Now).deleteNodeClaims,
    ).toEqual([]);
  });
});

describe('planGarbageCollection: terminations and records', () => {
  const failed = (o: { failures: number; endedSecondsAgo: number; deadlineSecondsAgo?: number }) =>
    nodeClaim({
      name: 'f',
      phase: 'Terminating',
      instanceId: 'i-0f',
      nodeName: 'n-f',
      createdAt: '2026-03-02T09:00:00Z',
      termination: {
        attempt: o.failures,
        reason: 'drift',
        ...(o.deadlineSecondsAgo !== undefined ? { deadlineEpochMs: Now.getTime() - o.deadlineSecondsAgo * 1000 } : {}),
        startedAt: '2026-03-02T09:00:00Z',
        heartbeatAt: '2026-03-02T09:00:00Z',
        failures: o.failures,
        ended: { attempt: o.failures, outcome: 'failed' as const, at: new Date(Now.getTime() - o.endedSecondsAgo * 1000).toISOString() },
      },
    });
  const restarts = (c: ReturnType<typeof nodeClaim>) =>
    planGarbageCollection({ cluster: 'test', tableEpochMs: Epoch, nodeClaims: [c], nodes: [node({ name: 'n-f' })] }, Now).restartTerminations.map(
      (r) => r.input.attempt,
    );

  it('restarts a failed termination within 3 minutes however often it failed (never left without an attempt for long)', () => {
    expect(restarts(failed({ failures: 6, endedSecondsAgo: 179 }))).toEqual([]);
    expect(restarts(failed({ failures: 6, endedSecondsAgo: 180 }))).toEqual([7]);
  });

  it('past its deadline a failed termination is restarted on the next pass, without backoff', () => {
    expect(restarts(failed({ failures: 1, endedSecondsAgo: 5, deadlineSecondsAgo: 1 }))).toEqual([2]);
    expect(restarts(failed({ failures: 1, endedSecondsAgo: 5, deadlineSecondsAgo: -60 }))).toEqual([]);
  });

  it('deletes Terminated claims once their record expired; never touches a live one', () => {
    const expired = nodeClaim({ name: 'old', phase: 'Terminated', retainUntil: '2026-03-02T09:59:59Z' });
    const kept = nodeClaim({ name: 'recent', phase: 'Terminated', retainUntil: '2026-03-02T10:30:00Z' });
    const plan = planGarbageCollection({ cluster: 'test', tableEpochMs: Epoch, nodeClaims: [expired, kept], nodes: [], instances: [] }, Now);
    expect(plan.deleteNodeClaims).toEqual([{ nodeClaim: 'old', reason: 'expired' }]);
  });

  it('an instance tagged with a live claim that owns another instance is an orphan (a duplicate launch), not "still recording"', () => {
    const c = nodeClaim({ name: 'default-a', instanceId: 'i-0one', createdAt: '2026-03-01T00:00:00Z' });
    const tags = launchTags('default-a');
    const plan = planGarbageCollection(
      {
        cluster: 'test',
        tableEpochMs: Epoch,
        nodeClaims: [c],
        nodes: [node({ name: c.nodeName ?? 'n' })],
        instances: [
          { instanceId: 'i-0one', state: 'running', launchTime: '2026-03-01T00:00:00Z', tags },
          { instanceId: 'i-0two', state: 'running', launchTime: '2026-03-01T00:00:00Z', tags },
        ],
      },
      Now,
    );
    expect(plan.terminateInstances).toEqual([{ instanceId: 'i-0two', reason: 'orphan' }]);
  });
});

describe("planGarbageCollection: a record naming another claim's instance (forged or corrupted item; npm run attack, records)", () => {
  // The victim: a registered, initialized claim whose instance and Node are live.
  const victim = setCondition(
    setCondition(
      setCondition(
        nodeClaim({
          name: 'default-victim',
          instanceId: 'i-0victim',
          nodeName: 'n-victim',
          providerId: 'aws:///us-east-1a/i-0victim',
          createdAt: '2026-03-01T00:00:00Z',
        }),
        'Launched',
        'True',
        '2026-03-01T00:00:00Z',
      ),
      'Registered',
      'True',
      '2026-03-01T00:01:00Z',
    ),
    'Initialized',
    'True',
    '2026-03-01T00:02:00Z',
  );
  const nodes = [nodeOfInstance('n-victim', 'i-0victim')];
  const instances = [instanceOf('default-victim', 'i-0victim')];
  const old = '2026-02-01T00:00:00Z';
  const plan = (evil: ReturnType<typeof nodeClaim>) =>
    planGarbageCollection({ cluster: 'test', tableEpochMs: Epoch, nodeClaims: [victim, evil], nodes, instances }, Now);
  const touched = (p: ReturnType<typeof plan>) =>
    [...p.deleteNodeClaims.flatMap((d) => [d.instanceId, d.nodeName]), ...p.terminateInstances.map((t) => t.instanceId)].filter(Boolean);

  it('a Launched claim past the registration timeout: deleted, the instance and Node left alone', () => {
    const evil = setCondition(nodeClaim({ name: 'evil-1', phase: 'Launched', instanceId: 'i-0victim', createdAt: old }), 'Launched', 'True', old);
    const p = plan(evil);
    expect(p.deleteNodeClaims).toEqual([{ nodeClaim: 'evil-1', reason: 'registration_timeout' }]);
    expect(touched(p)).toEqual([]);
  });

  it('a Registered claim whose Node is gone: deleted, the instance left alone', () => {
    const evil = setCondition(
      setCondition(nodeClaim({ name: 'evil-2', instanceId: 'i-0victim', nodeName: 'n-ghost', createdAt: old }), 'Launched', 'True', old),
      'Registered',
      'True',
      old,
    );
    const p = plan(evil);
    expect(p.deleteNodeClaims).toEqual([{ nodeClaim: 'evil-2', reason: 'node_gone' }]);
    expect(touched(p)).toEqual([]);
  });

  it("a Registered claim that never initialized, naming the victim's Node too: neither the Node nor the instance is touched", () => {
    const evil = setCondition(
      setCondition(
        nodeClaim({
          name: 'evil-3',
          phase: 'Registered',
          instanceId: 'i-0victim',
          nodeName: 'n-victim',
          providerId: 'aws:///us-east-1a/i-0victim',
          createdAt: old,
        }),
        'Launched',
        'True',
        old,
      ),
      'Registered',
      'True',
      old,
    );
    expect(touched(plan(evil))).toEqual([]);
  });

  it('a Terminating claim past its deadline: the deadline backstop does not terminate the instance', () => {
    const evil = nodeClaim({
      name: 'evil-4',
      phase: 'Terminating',
      instanceId: 'i-0victim',
      nodeName: 'n-victim',
      createdAt: old,
      termination: { attempt: 1, reason: 'expiration', deadlineEpochMs: 0, startedAt: old, failures: 0 },
    });
    expect(plan(evil).terminateInstances).toEqual([]);
  });

  it("a claim naming the victim's Node (with or without its providerID) and an instance that is gone: deleted, the Node left alone", () => {
    for (const providerId of ['aws:///us-east-1a/i-0victim', 'aws:///us-east-1a/i-0gone']) {
      const evil = setCondition(
        setCondition(nodeClaim({ name: 'evil-5', instanceId: 'i-0gone', providerId, nodeName: 'n-victim', createdAt: old }), 'Launched', 'True', old),
        'Registered',
        'True',
        old,
      );
      const p = plan(evil);
      expect(p.deleteNodeClaims).toEqual([{ nodeClaim: 'evil-5', reason: 'instance_gone' }]);
      expect(touched(p)).toEqual([]);
    }
  });

  it("the victim's own record still works: its Node gone, its instance is terminated; its instance gone, its Node is deleted", () => {
    const p = planGarbageCollection({ cluster: 'test', tableEpochMs: Epoch, nodeClaims: [victim], nodes: [], instances }, Now);
    expect(p.deleteNodeClaims).toEqual([{ nodeClaim: 'default-victim', reason: 'node_gone', instanceId: 'i-0victim' }]);
    const q = planGarbageCollection({ cluster: 'test', tableEpochMs: Epoch, nodeClaims: [victim], nodes, instances: [] }, Now);
    expect(q.deleteNodeClaims).toEqual([{ nodeClaim: 'default-victim', reason: 'instance_gone', nodeName: 'n-victim' }]);
  });
});
