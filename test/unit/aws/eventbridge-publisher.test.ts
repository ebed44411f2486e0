import { beforeEach, describe, expect, it } from 'vitest';
import { mockClient } from 'aws-sdk-client-mock';
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { EventBridgePublisher, chunkEntries, entrySizeBytes, MaxPutEventsBytes, PublishMaxAttempts } from '../../../shared/aws/eventbridge-publisher.ts';

const eb = mockClient(EventBridgeClient);
const sleeps: number[] = [];
const publisher = () =>
  new EventBridgePublisher(new EventBridgeClient({ region: 'us-east-1' }), {
    eventBusName: 'nodefleet',
    sleep: async (ms) => void sleeps.push(ms),
    random: () => 1,
  });
const entry = (i: number) => ({ source: 'nodefleet.agent', detailType: 'Unschedulable Pods', detail: { i } });

describe('EventBridgePublisher', () => {
  beforeEach(() => {
    eb.reset();
    sleeps.length = 0;
  });

  it('sends at most 10 entries per PutEvents', async () => {
    eb.on(PutEventsCommand).callsFake((input: { Entries: unknown[] }) => ({ FailedEntryCount: 0, Entries: input.Entries.map(() => ({ EventId: 'x' })) }));
    expect(await publisher().publish(Array.from({ length: 25 }, (_, i) => entry(i)))).toEqual({ failed: 0 });
    expect(eb.commandCalls(PutEventsCommand).map((c) => c.args[0].input.Entries!.length)).toEqual([10, 10, 5]);
    expect(eb.commandCalls(PutEventsCommand)[0].args[0].input.Entries![0]).toEqual({
      Source: 'nodefleet.agent',
      DetailType: 'Unschedulable Pods',
      Detail: '{"i":0}',
      EventBusName: 'nodefleet',
    });
  });

  it('PutEvents partial failure: only the failed entry is retried, with backoff', async () => {
    eb.on(PutEventsCommand)
      .resolvesOnce({ FailedEntryCount: 1, Entries: [{ EventId: 'a' }, { ErrorCode: 'ThrottlingException', ErrorMessage: 'Rate exceeded' }, { EventId: 'c' }] })
      .resolvesOnce({ FailedEntryCount: 0, Entries: [{ EventId: 'b' }] });
    expect(await publisher().publish([entry(0), entry(1), entry(2)])).toEqual({ failed: 0 });
    const calls = eb.commandCalls(PutEventsCommand);
    expect(calls).toHaveLength(2);
    expect(calls[1].args[0].input.Entries!.map((e) => e.Detail)).toEqual(['{"i":1}']);
    expect(sleeps).toEqual([200]);
  });

  it('a throttled call is retried; an entry that keeps failing is reported after the last attempt', async () => {
    eb.on(PutEventsCommand)
      .rejectsOnce(Object.assign(new Error('slow down'), { name: 'ThrottlingException' }))
      .resolves({ FailedEntryCount: 1, Entries: [{ ErrorCode: 'InternalFailure' }] });
    const dropped: string[] = [];
    const p = new EventBridgePublisher(new EventBridgeClient({ region: 'us-east-1' }), {
      eventBusName: 'b',
      sleep: async () => {},
      onDropped: (_e, reason) => dropped.push(reason),
    });
    expect(await p.publish([entry(0)])).toEqual({ failed: 1 });
    expect(eb.commandCalls(PutEventsCommand)).toHaveLength(PublishMaxAttempts);
    expect(dropped[0]).toMatch(/InternalFailure/);
  });

  it('entries over 256 KB are never sent; requests stay under 256 KB', async () => {
    eb.on(PutEventsCommand).resolves({ FailedEntryCount: 0, Entries: [] });
    const big = { source: 's', detailType: 'd', detail: 'x'.repeat(MaxPutEventsBytes) };
    expect(await publisher().publish([big])).toEqual({ failed: 1 });
    expect(eb.commandCalls(PutEventsCommand)).toHaveLength(0);
    const chunks = chunkEntries(Array.from({ length: 4 }, () => ({ Source: 's', DetailType: 'd', Detail: 'y'.repeat(100 * 1024) })));
    expect(chunks.map((c) => c.length)).toEqual([2, 2]);
    expect(entrySizeBytes({ Source: 'ab', DetailType: 'c', Detail: 'é', Resources: ['r'] })).toBe(6);
  });
});
