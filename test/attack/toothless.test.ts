/**
 * The attack harness is not toothless: with two protections of issue 23 taken out here (vi.mock;
 * the product is unchanged), trials that pass on the real code break invariants.
 * - functions/termination/target.ts believes the execution input's instance id (F1 step 3, F6):
 *   a StartExecution naming one claim and another node's instance terminates that node undrained;
 * - the interruption handler takes a message from any account (F7): a forged spot warning from
 *   account 999999999999 cuts a spot node's PDB-protected pods off two minutes later.
 */
import { afterAll, describe, expect, it, vi } from 'vitest';
import { runTrial } from './run.ts';
import { stopLocalDynamo } from './world.ts';
import type * as Target from '../../functions/termination/target.ts';
import type * as HandleMessage from '../../functions/interruption/handle-message.ts';
import { accountOfArn } from '../../shared/api/events/index.ts';

vi.mock('../../functions/termination/target.ts', async (importOriginal) => {
  const real = await importOriginal<typeof Target>();
  const verifiedTarget: typeof real.verifiedTarget = async (task, input, deps, check = {}) => {
    const t = await real.verifiedTarget(task, { ...input, instanceId: undefined }, deps, { ...check, instance: false });
    const instanceId = input.instanceId ?? t.instanceId;
    const instance = check.instance && instanceId && deps.cloud ? await deps.cloud.get(instanceId) : undefined;
    return { ...t, instanceId, ...(instance ? { instance } : {}) };
  };
  return { ...real, verifiedTarget };
});

vi.mock('../../functions/interruption/handle-message.ts', async (importOriginal) => {
  const real = await importOriginal<typeof HandleMessage>();
  const messageRefusal: typeof real.messageRefusal = (msg, env) =>
    real.messageRefusal({ ...msg, account: accountOfArn(env.stateMachineArn) ?? msg.account }, env);
  return { ...real, messageRefusal };
});

afterAll(() => stopLocalDynamo());

describe('npm run attack catches a protection taken out', () => {
  it("the termination tasks believing the input's instance id: a forged StartExecution terminates another node undrained", async () => {
    // Act: trials that break no invariant on the real code (npm run attack -- --family executions --seed 8 --count 1)
    const results = await Promise.all([8, 16, 36].map((seed) => runTrial('executions', seed)));
    // Assess
    expect(results.map((r) => r.kind)).toEqual(['other-instance', 'other-instance', 'other-instance']);
    const invariants = results.flatMap((r) => r.violations.map((v) => v.invariant));
    expect(invariants).toContain('terminated-without-drain');
  }, 60_000);

  it('the interruption handler taking any account: a forged spot warning cuts PDB-protected pods off', async () => {
    const results = await Promise.all([104, 114].map((seed) => runTrial('queue', seed)));
    expect(results.map((r) => r.kind)).toEqual(['foreign-account', 'foreign-account']);
    const invariants = results.flatMap((r) => r.violations.map((v) => v.invariant));
    expect(invariants).toContain('pod-deleted-early');
    expect(invariants).toContain('disrupted-on-forged-input');
  }, 60_000);
});
