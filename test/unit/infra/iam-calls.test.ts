/**
 * shared/aws/calls.ts `AdapterCalls` is true: each adapter method, driven against mocked SDK
 * clients, sends exactly the IAM actions its row lists (a call added to an adapter without its row
 * fails here, and so does a row listing an action no longer sent).
 */
import { describe, expect, it } from 'vitest';
import { AdapterCalls, type AdapterCall } from '../../../shared/aws/calls.ts';
import { record, type CallTargets } from './iam-calls.ts';

const targets: CallTargets = {
  region: 'ap-northeast-2',
  clusterName: 'calls-cluster',
  tableName: 'nodefleet-table',
  stateMachineArn: 'arn:aws:states:ap-northeast-2:111122223333:stateMachine:termination',
  eventBusName: 'nodefleet-calls-cluster',
  instanceProfileName: 'nodefleet-node-calls-cluster',
  nodeRoleName: 'nodefleet-node-calls-cluster',
};

describe('AdapterCalls: what each adapter method sends', () => {
  const calls = (Object.keys(AdapterCalls) as AdapterCall[]).filter((c) => c !== 'queue.consume');
  it.each(calls)('%s', async (call) => {
    const sent = new Set<string>();
    for (const capacityType of call === 'cloud.create' ? (['on-demand', 'spot'] as const) : [undefined]) {
      for (const r of await record(call, { ...targets, capacityType })) sent.add(r.action);
    }
    expect([...sent].sort()).toEqual([...new Set(AdapterCalls[call])].sort());
  });
});
