import { describe, expect, it } from 'vitest';
import { LocalStepFunctions, LocalTerminationStarter, waitSeconds } from '../../../infra/local/sfn.ts';
import { terminationExecutionName } from '../../../shared/api/termination.ts';
import { FixedClock } from '../../fakes/index.ts';

const loop = {
  StartAt: 'Count',
  States: {
    Count: { Type: 'Task', Resource: '${CountFunctionArn}', ResultPath: '$.count', Next: 'Enough' },
    Enough: { Type: 'Choice', Choices: [{ Variable: '$.count.n', NumericGreaterThanEquals: 3, Next: 'Done' }], Default: 'Pause' },
    Pause: { Type: 'Wait', SecondsPath: '$.count.wait', Next: 'Count' },
    Done: { Type: 'Succeed' },
  },
};

function counter() {
  let n = 0;
  return async () => ({ n: ++n, wait: 2 });
}

describe('LocalStepFunctions', () => {
  it('compresses Wait states by the speed factor (2 waits of 2 s at speed 100 take ~40 ms)', async () => {
    const sfn = new LocalStepFunctions({ speed: 100 });
    sfn.register('loop', loop, { CountFunctionArn: counter() });
    const started = Date.now();
    sfn.startExecution('loop', {}, 'run-1');
    const rec = await sfn.waitForExecution('run-1');
    const tookMs = Date.now() - started;
    expect(rec.status).toBe('SUCCEEDED');
    expect(JSON.parse(rec.output!)).toEqual({ count: { n: 3, wait: 2 } });
    expect(tookMs).toBeGreaterThanOrEqual(40);
    expect(tookMs).toBeLessThan(2000);
    expect(rec.events.filter((e) => e.type === 'WaitStateEntered')).toHaveLength(2);
  });

  it('a wait hook moves a virtual clock; history timestamps follow it', async () => {
    const clock = new FixedClock('2026-05-01T00:00:00Z');
    const sfn = new LocalStepFunctions({ clock, wait: (s) => clock.advanceSeconds(s) });
    sfn.register('loop', loop, { CountFunctionArn: counter() });
    sfn.startExecution('loop', {}, 'run-1');
    const rec = await sfn.waitForExecution('run-1');
    const waits = rec.events.filter((e) => e.stateName === 'Pause').map((e) => `${e.type}@${e.timestamp.slice(11, 19)}`);
    expect(waits).toEqual(['WaitStateEntered@00:00:00', 'WaitStateExited@00:00:02', 'WaitStateEntered@00:00:02', 'WaitStateExited@00:00:04']);
    expect(rec.stopDate).toBe('2026-05-01T00:00:04.000Z');
  });

  it('starting an existing execution name returns it and starts nothing', async () => {
    const sfn = new LocalStepFunctions({ wait: () => undefined });
    const count = counter();
    sfn.register('loop', loop, { CountFunctionArn: count });
    const a = sfn.startExecution('loop', {}, 'same');
    const b = sfn.startExecution('loop', { other: true }, 'same');
    expect(b).toEqual({ executionArn: a.executionArn, alreadyExists: true });
    await sfn.waitForExecution('same');
    expect(await count()).toEqual({ n: 4, wait: 2 });
  });

  it('refuses a definition with an unbound Task', () => {
    const sfn = new LocalStepFunctions();
    expect(() => sfn.register('loop', loop, {})).toThrow('no local function for Task state(s) Count (${CountFunctionArn})');
  });

  it('the termination starter names executions after the claim', async () => {
    const sfn = new LocalStepFunctions({ wait: () => undefined });
    sfn.register('termination', { StartAt: 'Done', States: { Done: { Type: 'Succeed' } } }, {});
    const starter = new LocalTerminationStarter(sfn);
    const arn = await starter.start({ nodeClaim: 'default-x7k2p', reason: 'manual' });
    expect(arn).toBe('arn:aws:states:us-east-1:123456789012:execution:termination:default-x7k2p');
    expect(await starter.start({ nodeClaim: 'default-x7k2p', reason: 'manual' })).toBe(arn);
    expect(sfn.listExecutions()).toHaveLength(1);
  });

  it('computes Wait durations like Step Functions', () => {
    const clock = new FixedClock('2026-05-01T00:00:00Z');
    expect(waitSeconds({ Seconds: 7 }, {}, clock)).toBe(7);
    expect(waitSeconds({ SecondsPath: '$.a.b' }, { a: { b: 3 } }, clock)).toBe(3);
    expect(waitSeconds({ TimestampPath: '$.at' }, { at: '2026-05-01T00:01:00Z' }, clock)).toBe(60);
    expect(() => waitSeconds({ SecondsPath: '$.missing' }, {}, clock)).toThrow('not found');
  });
});

describe('terminationExecutionName', () => {
  it('keeps Karpenter-style names, makes others valid and distinct', () => {
    expect(terminationExecutionName('default-x7k2p')).toBe('default-x7k2p');
    const long = 'a.'.repeat(60);
    const n = terminationExecutionName(long);
    expect(n).toMatch(/^[0-9A-Za-z_-]{1,80}$/);
    expect(n).not.toBe(terminationExecutionName('a.'.repeat(59) + 'b.'));
  });
});

describe('LocalStepFunctions.stop', () => {
  it('aborts an execution blocked in a Wait at once', async () => {
    const sfn = new LocalStepFunctions({ wait: () => new Promise<void>(() => undefined) });
    sfn.register('loop', loop, { CountFunctionArn: counter() });
    sfn.startExecution('loop', {}, 'stuck');
    await new Promise((r) => setTimeout(r, 50));
    await sfn.stop();
    expect(sfn.describeExecution('stuck')?.status).toBe('ABORTED');
  });
});
