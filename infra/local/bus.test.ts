import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { EventRules, InterruptionRuleNames } from '../../shared/api/contract.ts';
import { VirtualClock } from './clock.ts';
import { LocalEventBus } from './bus.ts';

const fixture = (name: string) => JSON.parse(readFileSync(new URL(`../../test/fixtures/events/${name}`, import.meta.url), 'utf8'));

function bus() {
  const clock = new VirtualClock({ start: '2026-03-10T12:00:00Z', speed: 1000 });
  const b = new LocalEventBus({ clock, region: 'ap-northeast-2' });
  const calls: Record<string, unknown[]> = { provisioner: [], interruption: [] };
  b.addTarget({ rule: 'provisioner', pattern: EventRules.provisioner, kind: 'lambda', invoke: async (e) => void calls.provisioner.push(e) });
  for (const r of InterruptionRuleNames) b.addTarget({ rule: r, pattern: EventRules[r], kind: 'sqs', invoke: async (e) => void calls.interruption.push(e) });
  return { clock, b, calls };
}

describe('LocalEventBus', () => {
  it('routes agent events with the contract patterns and wraps them in a full EventBridge envelope', async () => {
    // Prepare
    const { b, calls, clock } = bus();
    // Act
    await b.publish([{ source: 'nodefleet.agent', detailType: 'Unschedulable Pods', detail: { schemaVersion: '1', pods: [] } }]);
    await b.publish([{ source: 'nodefleet.agent', detailType: 'Something Else', detail: {} }]);
    await b.idle();
    // Assess
    expect(calls.provisioner).toHaveLength(1);
    expect(calls.provisioner[0]).toMatchObject({
      version: '0',
      source: 'nodefleet.agent',
      'detail-type': 'Unschedulable Pods',
      region: 'ap-northeast-2',
      account: '123456789012',
      resources: [],
    });
    expect(calls.interruption).toHaveLength(0);
    clock.stop();
  });

  it('delivers an EC2 spot warning to the interruption target as an SQS batch shaped like the fixture', async () => {
    const { b, calls, clock } = bus();
    const warning = fixture('spot-interruption-warning.json');
    b.deliver(warning);
    await new Promise((r) => setImmediate(r));
    await b.idle();
    const batch = calls.interruption[0] as any;
    const want = fixture('sqs-record-wrapping.json').Records[0];
    expect(Object.keys(batch.Records[0]).sort()).toEqual(Object.keys(want).sort());
    expect(JSON.parse(batch.Records[0].body)).toEqual(warning);
    expect(batch.Records[0].md5OfBody).toBe(want.md5OfBody);
    expect(batch.Records[0].eventSource).toBe('aws:sqs');
    clock.stop();
  });

  it('redelivers batch item failures and dead-letters after the max receive count', async () => {
    const clock = new VirtualClock({ start: '2026-03-10T12:00:00Z', speed: 1000 });
    const b = new LocalEventBus({ clock, region: 'ap-northeast-2' });
    let n = 0;
    b.addTarget({
      rule: 'spotInterruption',
      pattern: EventRules.spotInterruption,
      kind: 'sqs',
      invoke: async (e: any) => {
        n += 1;
        return { batchItemFailures: [{ itemIdentifier: e.Records[0].messageId }] };
      },
    });
    b.deliver(fixture('spot-interruption-warning.json'));
    // Redeliveries come after the (virtual) visibility timeout; wait for the outcome, not a fixed time.
    for (let i = 0; i < 500 && b.deadLetters.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    await b.idle();
    expect(n).toBe(3);
    expect(b.deadLetters).toHaveLength(1);
    clock.stop();
  });
});
