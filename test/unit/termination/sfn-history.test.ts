import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { mockClient } from 'aws-sdk-client-mock';
import { DescribeExecutionCommand, GetExecutionHistoryCommand, SFNClient } from '@aws-sdk/client-sfn';
import { executionArnOf, readExecution, readTerminationAttempts } from '../../../shared/aws/sfn-history.ts';
import { buildTimeline } from '../../../functions/cli/commands/status.ts';
import { NotFoundError } from '../../../shared/api/errors.ts';

const fixture = JSON.parse(readFileSync(new URL('../../fixtures/events/stepfunctions-execution-history.json', import.meta.url), 'utf8'));
const arn = executionArnOf('arn:aws:states:us-east-1:123456789012:stateMachine:nodefleet-termination', 'default-x7k2p');

describe('readExecution (GetExecutionHistory sample)', () => {
  it('reads every page and names Task events after the state they belong to', async () => {
    const sfn = mockClient(SFNClient);
    sfn.on(DescribeExecutionCommand).resolves({
      name: 'default-x7k2p',
      status: 'SUCCEEDED',
      startDate: new Date('2026-03-10T12:00:00.100Z'),
      stopDate: new Date('2026-03-10T12:00:12Z'),
      executionArn: arn,
      stateMachineArn: 'x',
    });
    const events = fixture.events.map((e: any) => ({ ...e, timestamp: new Date(e.timestamp) }));
    sfn
      .on(GetExecutionHistoryCommand)
      .resolvesOnce({ events: events.slice(0, 4), nextToken: 'p2' })
      .resolvesOnce({ events: events.slice(4) });
    const rec = await readExecution(sfn as unknown as SFNClient, arn);
    expect(arn).toBe('arn:aws:states:us-east-1:123456789012:execution:nodefleet-termination:default-x7k2p');
    expect(rec.events).toHaveLength(fixture.events.length);
    expect(rec.events[1]).toMatchObject({ type: 'ChoiceStateEntered', stateName: 'HasPendingPods', timestamp: '2026-03-10T12:00:00.135Z' });
    const taskScheduled = rec.events.find((e) => e.type === 'TaskScheduled');
    expect(taskScheduled?.stateName).toBe(rec.events.find((e) => e.type === 'TaskStateEntered')?.stateName);
    expect(buildTimeline(rec, { verbose: true }).map((r) => [r.state, r.durationMs])).toEqual([
      ['HasPendingPods', 15],
      ['WaitForBatch', 10_001],
      [rec.events.find((e) => e.type === 'TaskStateEntered')!.stateName, expect.any(Number)],
    ]);
  });

  it('maps ExecutionDoesNotExist to NotFoundError', async () => {
    const sfn = mockClient(SFNClient);
    const err = new Error('no such execution');
    err.name = 'ExecutionDoesNotExist';
    sfn.on(DescribeExecutionCommand).rejects(err);
    await expect(readExecution(sfn as unknown as SFNClient, arn)).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe('readTerminationAttempts: every attempt, not only the first', () => {
  const machine = 'arn:aws:states:us-east-1:123456789012:stateMachine:nodefleet-termination';
  const missing = () => Object.assign(new Error('no such execution'), { name: 'ExecutionDoesNotExist' });
  const mockAttempts = (exist: string[]) => {
    const sfn = mockClient(SFNClient);
    sfn.on(DescribeExecutionCommand).callsFake((input: { executionArn: string }) => {
      const name = input.executionArn.split(':').pop()!;
      if (!exist.includes(name)) throw missing();
      return {
        name,
        status: name === exist.at(-1) ? 'SUCCEEDED' : 'FAILED',
        startDate: new Date('2026-03-10T12:00:00Z'),
        executionArn: input.executionArn,
        stateMachineArn: machine,
      };
    });
    sfn.on(GetExecutionHistoryCommand).resolves({ events: [] });
    return sfn as unknown as SFNClient;
  };

  it("reads <claim>, <claim>_2, … up to the claim's last attempt, skipping one recorded but never started", async () => {
    const recs = await readTerminationAttempts(mockAttempts(['default-x7k2p', 'default-x7k2p_3']), machine, 'default-x7k2p', 3);
    expect(recs.map((r) => [r.name, r.status])).toEqual([
      ['default-x7k2p', 'FAILED'],
      ['default-x7k2p_3', 'SUCCEEDED'],
    ]);
  });

  it('without the claim (expired record) reads on until the first missing attempt', async () => {
    const recs = await readTerminationAttempts(mockAttempts(['default-x7k2p', 'default-x7k2p_2']), machine, 'default-x7k2p');
    expect(recs.map((r) => r.name)).toEqual(['default-x7k2p', 'default-x7k2p_2']);
  });
});
