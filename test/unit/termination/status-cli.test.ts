import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  buildTimeline,
  chooseSource,
  formatAttempts,
  formatStatus,
  formatTimeline,
  humanDuration,
  localExecution,
  localTerminationAttempts,
  unmarshal,
} from '../../../functions/cli/commands/status.ts';
import { createLocalTermination } from '../../../infra/local/sfn.ts';
import { fakeWorld, node, nodeClaim, pdb, pod } from '../../fakes/index.ts';
import type { ExecutionRecord } from '../../../shared/api/termination.ts';

const dir = mkdtempSync(join(tmpdir(), 'nodefleet-history-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs a PDB-blocked termination through the local runner, persisting its record under `dir`. */
async function blockedExecution(): Promise<ExecutionRecord> {
  const w = fakeWorld({ kube: { podTermination: 'graceful' } });
  w.store.put(nodeClaim({ name: 'default-x7k2p', nodeName: 'n1', instanceId: 'i-1', providerId: 'aws:///us-east-1a/i-1', terminationGracePeriodSeconds: 120 }));
  w.kube.addNode(node({ name: 'n1', providerID: 'aws:///us-east-1a/i-1', labels: { 'karpenter.sh/nodepool': 'default' } }));
  w.cloud.addInstance({
    instanceId: 'i-1',
    tags: { 'nodefleet.io/cluster': 'test', 'karpenter.sh/nodepool': 'default', 'karpenter.sh/nodeclaim': 'default-x7k2p' },
  });
  w.kube.addPdb(pdb({ name: 'web', matchLabels: { app: 'web' }, disruptionsAllowed: 0 }));
  w.kube.addPod(pod({ name: 'web-1', nodeName: 'n1', labels: { app: 'web' } }));
  const { sfn, starter } = createLocalTermination(
    { kube: w.kube, cloud: w.cloud, store: w.store, budgets: w.budgets, clock: w.clock },
    { wait: (s) => w.clock.advanceSeconds(s), retryPauseMs: 0, historyDir: join(dir, '.nodefleet', 'executions') },
  );
  await starter.start({ nodeClaim: 'default-x7k2p', reason: 'drift', deadlineEpochMs: w.clock.nowMs() + 120_000 });
  expect(await starter.start({ nodeClaim: 'default-x7k2p', reason: 'drift' })).toBe(
    'arn:aws:states:us-east-1:123456789012:execution:termination:default-x7k2p',
  );
  return sfn.waitForExecution('default-x7k2p');
}

describe('nodefleet history', () => {
  it('persists the execution record and folds identical drain rounds into one timeline row', async () => {
    const rec = await blockedExecution();
    const onDisk = localExecution(join(dir, '.nodefleet'), 'default-x7k2p');
    expect(onDisk?.status).toBe('SUCCEEDED');
    expect(onDisk?.events.length).toBe(rec.events.length);
    expect(JSON.parse(readFileSync(join(dir, '.nodefleet', 'executions', 'default-x7k2p.json'), 'utf8')).name).toBe('default-x7k2p');

    const rows = buildTimeline(rec);
    expect(rows.map((r) => r.state)).toEqual([
      'Cordon',
      'Drain',
      'WaitForDrain',
      'Drain',
      'WaitForDrain',
      'Drain',
      'WaitForDrain',
      'Drain',
      'TerminateInstance',
      'DeleteNode',
      'Finalize',
      'Terminated',
    ]);
    // 18 blocked rounds at 5 s fold into one row; at deadline − 30 s (the pod's grace) it is deleted early.
    expect(rows[1]).toMatchObject({ count: 18, detail: 'blocked by PDB 1 (default/web-1), 1 pod(s) left (default/web-1)' });
    expect(rows[2]).toMatchObject({ count: 18, durationMs: 90_000 });
    expect(rows[3]).toMatchObject({ offsetMs: 90_000, detail: 'deleted early 1 (default/web-1), 1 pod(s) left (default/web-1)' });
    expect(rows[5]).toMatchObject({ count: 5, detail: '1 pod(s) left (default/web-1)' });
    expect(rows[7]).toMatchObject({ offsetMs: 120_000, detail: 'drained, deadline reached' });
    expect(rows[8].detail).toBe('instance shutting-down');

    const text = formatTimeline(rec);
    expect(text).toContain('execution default-x7k2p  SUCCEEDED  started 2026-01-01T00:00:00.000Z  took 2m');
    expect(text).toMatch(/\+90s\s+Drain\s+0s\s+deleted early 1/);
    expect(buildTimeline(rec, { verbose: true }).some((r) => r.state === 'DrainProgress')).toBe(true);
  });

  it('lists every attempt of a retried termination, oldest first (the failed record kept)', () => {
    // Prepare: attempt 1 failed, gc carried it on as _2 and _10 (another claim's records alongside)
    const attemptsDir = mkdtempSync(join(tmpdir(), 'nodefleet-attempts-'));
    const execDir = join(attemptsDir, 'executions');
    mkdirSync(execDir);
    const rec = (name: string, status: ExecutionRecord['status']): ExecutionRecord => ({
      name,
      status,
      startDate: '2026-01-01T00:00:00.000Z',
      events: [{ id: 1, type: 'ExecutionStarted', timestamp: '2026-01-01T00:00:00.000Z' }],
    });
    for (const [name, status] of [
      ['default-a', 'FAILED'],
      ['default-a_2', 'FAILED'],
      ['default-a_10', 'SUCCEEDED'],
      ['default-ab', 'SUCCEEDED'],
      ['default-a_x', 'SUCCEEDED'],
    ] as const) {
      writeFileSync(join(execDir, `${name}.json`), JSON.stringify(rec(name, status)));
    }
    // Act
    const recs = localTerminationAttempts(attemptsDir, 'default-a');
    // Assess
    expect(recs.map((r) => r.name)).toEqual(['default-a', 'default-a_2', 'default-a_10']);
    const text = formatAttempts(recs);
    expect(text).toContain('attempt 1 (1 of 3)\nexecution default-a  FAILED');
    expect(text).toContain('attempt 10 (3 of 3)\nexecution default-a_10  SUCCEEDED');
    rmSync(attemptsDir, { recursive: true, force: true });
  });

  it('shows a retried task failure on its row', () => {
    const rec: ExecutionRecord = {
      name: 'c1',
      status: 'SUCCEEDED',
      startDate: '2026-01-01T00:00:00.000Z',
      events: [
        { id: 1, type: 'ExecutionStarted', timestamp: '2026-01-01T00:00:00.000Z' },
        { id: 2, type: 'TaskStateEntered', stateName: 'TerminateInstance', timestamp: '2026-01-01T00:00:01.000Z' },
        {
          id: 3,
          type: 'LambdaFunctionFailed',
          stateName: 'TerminateInstance',
          error: 'TransientError',
          cause: 'RequestLimitExceeded',
          timestamp: '2026-01-01T00:00:01.500Z',
        },
        { id: 4, type: 'TaskStateRetried', stateName: 'TerminateInstance', timestamp: '2026-01-01T00:00:03.000Z' },
        {
          id: 5,
          type: 'TaskStateExited',
          stateName: 'TerminateInstance',
          output: '{"instance":{"done":true,"state":"shutting-down"}}',
          timestamp: '2026-01-01T00:00:04.000Z',
        },
      ],
    };
    expect(formatTimeline(rec).split('\n')[2]).toBe(
      '2026-01-01T00:00:01.000Z   +1s      TerminateInstance   3s         instance shutting-down  ERROR TransientError: RequestLimitExceeded (retried)',
    );
  });
});

describe('nodefleet status', () => {
  it('prints kubectl-style columns with kubectl ages', () => {
    const claims = [
      nodeClaim({
        name: 'default-b',
        instanceType: 'c6g.large',
        capacityType: 'spot',
        zone: 'us-east-1b',
        nodeName: 'ip-10-0-2-2',
        createdAt: '2026-01-01T00:10:00Z',
      }),
      nodeClaim({
        name: 'default-a',
        instanceType: 'm5.large',
        capacityType: 'on-demand',
        zone: 'us-east-1a',
        nodeName: 'ip-10-0-1-1',
        createdAt: '2026-01-01T00:00:00Z',
        phase: 'Launched',
      }),
    ];
    expect(formatStatus(claims, Date.parse('2026-01-01T00:15:30Z'))).toBe(
      [
        'NAME        TYPE        CAPACITY    ZONE         NODE          READY     AGE',
        'default-a   m5.large    on-demand   us-east-1a   ip-10-0-1-1   Unknown   15m',
        'default-b   c6g.large   spot        us-east-1b   ip-10-0-2-2   True      5m30s',
        '',
      ].join('\n'),
    );
  });

  it('humanDuration matches kubectl', () => {
    expect([5_000, 119_000, 330_000, 2_700_000, 19_800_000, 82_800_000, 273_600_000, 3_888_000_000].map(humanDuration)).toEqual([
      '5s',
      '119s',
      '5m30s',
      '45m',
      '5h30m',
      '23h',
      '3d4h',
      '45d',
    ]);
  });

  it('unmarshals DynamoDB JSON and picks the source', () => {
    expect(unmarshal({ M: { a: { S: 'x' }, n: { N: '2' }, l: { L: [{ BOOL: true }, { NULL: true }] } } })).toEqual({ a: 'x', n: 2, l: [true, null] });
    expect(chooseSource(undefined, { NODEFLEET_TABLE_NAME: 't' }, dir)).toEqual({ kind: 'aws' });
    expect(chooseSource(undefined, {}, dir)).toEqual({ kind: 'local', dir: join(dir, '.nodefleet') });
    expect(chooseSource(true, { NODEFLEET_TABLE_NAME: 't' }, dir)).toEqual({ kind: 'local', dir: join(dir, '.nodefleet') });
    expect(chooseSource(undefined, {}, join(dir, 'nowhere'))).toBeUndefined();
  });
});
