/**
 * gc over a real table (dynalite, DynamoNodeClaimStore wired by buildDeps) whose records went
 * wrong: a point-in-time restore that lost the claims of instances launched after the backup
 * (security review F4), and a malformed item (F5). Cloud and cluster are the in-memory fakes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeleteCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { run } from '../../../functions/gc/handler.ts';
import { startLocalDynamo, type LocalDynamo } from '../../../infra/local/dynamo.ts';
import { Table, keys } from '../../../shared/api/contract.ts';
import type { NodeClaim } from '../../../shared/api/nodeclaim.ts';
import { buildDeps } from '../../../shared/runtime/deps.ts';
import { RecordingLog, RecordingMetrics } from '../../../shared/runtime/observability.ts';
import { MetricNames } from '../../../shared/api/metrics.ts';
import { fakeWorld, node, nodeClaim, pod } from '../../fakes/index.ts';

let local: LocalDynamo;
beforeAll(async () => {
  process.env.AWS_ACCESS_KEY_ID ??= 'local';
  process.env.AWS_SECRET_ACCESS_KEY ??= 'local';
  local = await startLocalDynamo();
});
afterAll(() => local.stop());

const t0 = '2026-01-01T00:00:00.000Z';
const tags = (claim: string, cluster: string) => ({ 'nodefleet.io/cluster': cluster, 'karpenter.sh/nodepool': 'default', 'karpenter.sh/nodeclaim': claim });
const providerID = (id: string) => `aws:///us-east-1a/${id}`;

/** gc's deps as buildDeps builds them over the dynalite table for `cluster`, with the fake cloud and cluster. */
function world(cluster: string) {
  const w = fakeWorld({ start: t0, cloud: { tags: { 'nodefleet.io/cluster': cluster } } });
  const log = new RecordingLog();
  const metrics = new RecordingMetrics();
  const deps = buildDeps(
    {
      clusterName: cluster,
      tableName: local.tableName,
      region: 'us-east-1',
      dynamodbEndpoint: local.endpoint,
      ec2Endpoint: 'http://127.0.0.1:1',
      logLevel: 'INFO',
    },
    { log, metrics, clock: w.clock, overrides: { cloud: w.cloud, kube: w.kube, clock: w.clock } },
  );
  return { w, log, metrics, deps: { ...deps, termination: undefined } };
}

/** A claim whose node registered and initialized at `at`, its instance launched and its Node live with one pod. */
async function running(x: ReturnType<typeof world>, name: string, instanceId: string, opts: { registered?: boolean; node?: boolean } = {}): Promise<NodeClaim> {
  const at = x.w.clock.nowIso();
  const registered = opts.registered ?? true;
  const claim = nodeClaim({
    name,
    createdAt: at,
    phase: registered ? 'Initialized' : 'Launched',
    instanceId,
    providerId: providerID(instanceId),
    ...(registered ? { nodeName: `node-${name}` } : {}),
    conditions: [
      { type: 'Launched', status: 'True', lastTransitionTime: at },
      ...(registered
        ? [
            { type: 'Registered' as const, status: 'True' as const, lastTransitionTime: at },
            { type: 'Initialized' as const, status: 'True' as const, lastTransitionTime: at },
          ]
        : []),
    ],
  });
  await x.deps.store.create(claim);
  x.w.cloud.addInstance({ instanceId, launchTime: at, tags: tags(name, x.deps.env.clusterName) });
  if (opts.node !== false)
    x.w.kube.addNode(
      node({ name: `node-${name}`, providerID: providerID(instanceId), taints: registered ? [] : [{ key: 'karpenter.sh/unregistered', effect: 'NoExecute' }] }),
    );
  if (registered) x.w.kube.addPod(pod({ name: `db-${name}`, nodeName: `node-${name}`, annotations: { 'karpenter.sh/do-not-disrupt': 'true' } }));
  return claim;
}

/** Every item of the cluster's partition (claims and the claims epoch): what a backup holds. */
async function partition(x: ReturnType<typeof world>, cluster: string): Promise<Record<string, unknown>[]> {
  const out = await x.deps.clients!.doc.send(
    new QueryCommand({
      TableName: local.tableName,
      KeyConditionExpression: '#pk = :pk',
      ExpressionAttributeNames: { '#pk': Table.partitionKey },
      ExpressionAttributeValues: { ':pk': keys.cluster(cluster) },
      ConsistentRead: true,
    }),
  );
  return out.Items ?? [];
}

describe('gc after a point-in-time restore of the table (F4: a lost claim never ends in a raw termination of a node with pods)', () => {
  it('keeps and reports each instance whose Node is live; terminates only instances whose node never registered', async () => {
    // Prepare: one node before the backup, then the backup, then two more launches
    const x = world('restore-1');
    await running(x, 'default-a', 'i-0aaaaaaaaaaaaaaa1');
    x.w.clock.advanceSeconds(3600);
    const backup = await partition(x, 'restore-1');
    x.w.clock.advanceSeconds(3600);
    await running(x, 'default-b', 'i-0bbbbbbbbbbbbbbb2'); // registered, runs a do-not-disrupt pod
    await running(x, 'default-c', 'i-0ccccccccccccccc3', { registered: false }); // its kubelet's Node never registered
    await running(x, 'default-d', 'i-0ddddddddddddddd4', { registered: false, node: false }); // and one without a Node at all
    x.w.clock.advanceSeconds(600);
    // the table is put back to the backup: every item replaced by the backup's
    for (const item of await partition(x, 'restore-1')) {
      await x.deps.clients!.doc.send(
        new DeleteCommand({ TableName: local.tableName, Key: { [Table.partitionKey]: item[Table.partitionKey], [Table.sortKey]: item[Table.sortKey] } }),
      );
    }
    for (const item of backup) await x.deps.clients!.doc.send(new PutCommand({ TableName: local.tableName, Item: item }));
    expect((await x.deps.store.list()).map((c) => c.name)).toEqual(['default-a']);
    // Act: two gc passes (the second finds the same)
    const first = await run({}, x.deps);
    x.w.clock.advanceSeconds(60);
    const second = await run({}, x.deps);
    // Assess: no instance with a live registered Node terminated, none drained; it is reported each pass
    expect(first.terminated.sort()).toEqual(['i-0ccccccccccccccc3', 'i-0ddddddddddddddd4']);
    expect(second.terminated).toEqual([]);
    for (const id of ['i-0aaaaaaaaaaaaaaa1', 'i-0bbbbbbbbbbbbbbb2']) expect(x.w.cloud.peek(id)?.state).toBe('running');
    expect(x.w.kube.callsOf('evictPod')).toEqual([]);
    expect(x.w.kube.callsOf('deletePod')).toEqual([]);
    for (const r of [first, second])
      expect(r.orphansWithNode).toEqual([
        { instanceId: 'i-0bbbbbbbbbbbbbbb2', nodeName: 'node-default-b', launchTime: expect.any(String), nodeClaim: 'default-b', nodePool: 'default' },
      ]);
    const warned = x.log.withMessage('instance has no nodeclaim but its node is live, not terminating it: drain and remove the node');
    expect(warned).toHaveLength(2);
    expect(warned[0].fields).toMatchObject({ instance: 'i-0bbbbbbbbbbbbbbb2', Node: { name: 'node-default-b' } });
    expect(x.metrics.total(MetricNames.orphanInstancesWithNode)).toBe(2);
    // the claim the backup held is untouched
    expect((await x.deps.store.get('default-a'))?.phase).toBe('Initialized');
  });
});

describe('gc over a table holding a malformed item (F5: one bad item never stops gc)', () => {
  it('skips it, logs its key and first problem, counts it, and still carries out the rest of the plan', async () => {
    // Prepare: a good claim that never launched (due for launch_timeout), an orphan without a Node, and a bad item
    const x = world('malformed-1');
    await x.deps.store.create(nodeClaim({ name: 'default-p', phase: 'Pending', createdAt: t0 }));
    x.w.cloud.addInstance({ instanceId: 'i-0eeeeeeeeeeeeeee5', launchTime: t0, tags: tags('gone', 'malformed-1') });
    const bad = { ...nodeClaim({ name: 'default-bad' }), conditions: 'nope' };
    await x.deps.clients!.doc.send(
      new PutCommand({
        TableName: local.tableName,
        Item: { [Table.partitionKey]: keys.cluster('malformed-1'), [Table.sortKey]: keys.nodeClaim('default-bad'), type: 'NodeClaim', version: 0, claim: bad },
      }),
    );
    x.w.clock.advanceSeconds(600);
    // Act
    const r = await run({}, x.deps);
    // Assess
    expect(r.deleted).toEqual([{ nodeClaim: 'default-p', reason: 'launch_timeout' }]);
    expect(r.terminated).toEqual(['i-0eeeeeeeeeeeeeee5']);
    expect(r.failed).toEqual([]);
    const warned = x.log.withMessage('ignoring malformed nodeclaim item');
    expect(warned).toHaveLength(1);
    expect(warned[0].fields).toEqual({ key: keys.nodeClaim('default-bad'), problem: expect.stringMatching(/^claim\.conditions: /) });
    expect(x.metrics.total(MetricNames.malformedNodeClaimItems)).toBe(1);
  });
});
