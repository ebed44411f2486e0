import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { VirtualClock } from './clock.ts';
import { LocalEventBus } from './bus.ts';
import { DynamoFaultProxy, InjectedCrash, InvocationCrashes, type FaultHooks } from './faults.ts';

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
});

/** A loopback server counting the requests it served. */
async function counter(): Promise<{ url: string; served: string[] }> {
  const served: string[] = [];
  const s = createServer((req, res) => {
    served.push(req.url ?? '');
    res.end('{}');
  });
  servers.push(s);
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(s.address() as AddressInfo).port}`, served };
}

const get = (url: string) =>
  new Promise<void>((resolve, reject) => {
    const r = request(url, (res) => {
      res.resume();
      res.on('end', () => resolve());
    });
    r.on('error', reject);
    r.end();
  });

describe('InvocationCrashes', () => {
  it('a crash before effect 2 lets effect 1 through, refuses 2 and 3, and fails the invocation', async () => {
    // Prepare
    const { url, served } = await counter();
    const hooks: FaultHooks = { invocation: () => ({ effect: 2, when: 'before' }) };
    const crashes = new InvocationCrashes(() => hooks);
    // Act
    const run = crashes.run('provisioner', async () => {
      await get(`${url}/1`);
      await get(`${url}/2`).catch(() => undefined); // a handler that swallows the error still stops here
      await get(`${url}/3`).catch(() => undefined);
      return 'done';
    });
    // Assess
    await expect(run).rejects.toBeInstanceOf(InjectedCrash);
    expect(served).toEqual(['/1']);
    expect(crashes.crashes).toMatchObject([{ name: 'provisioner', effect: 2, when: 'before' }]);
    crashes.close();
  });

  it('a crash after effect 1 lets effect 1 happen, then nothing else; fetch (undici) requests count too', async () => {
    // Prepare
    const { url, served } = await counter();
    const crashes = new InvocationCrashes(() => ({ invocation: () => ({ effect: 1, when: 'after' }) }));
    // Act
    const run = crashes.run('gc', async () => {
      await fetch(`${url}/a`).then((r) => r.text());
      await fetch(`${url}/b`).catch(() => undefined);
      crashes.effect(); // an in-process effect (publish) after the crash throws too
    });
    // Assess
    await expect(run).rejects.toThrow(/gc crashed after effect 1/);
    expect(served).toEqual(['/a']);
    crashes.close();
  });

  it('requests outside an invocation and invocations without a plan are untouched', async () => {
    // Prepare
    const { url, served } = await counter();
    const crashes = new InvocationCrashes(() => ({}));
    // Act
    await get(`${url}/outside`);
    const out = await crashes.run('registration', async () => (await get(`${url}/inside`), 'ok'));
    // Assess
    expect(out).toBe('ok');
    expect(served).toEqual(['/outside', '/inside']);
    crashes.close();
  });
});

describe('DynamoFaultProxy', () => {
  it('forwards requests, and answers the error the hook returns in the DynamoDB JSON protocol', async () => {
    // Prepare
    const { url, served } = await counter();
    let fail = false;
    const proxy = new DynamoFaultProxy(url, () => ({
      dynamo: (op, body) =>
        fail && op === 'UpdateItem' && body.includes('ConditionExpression')
          ? { status: 400, code: 'ConditionalCheckFailedException', message: 'injected' }
          : undefined,
    }));
    const endpoint = await proxy.start();
    const call = (body: string) => fetch(endpoint, { method: 'POST', headers: { 'x-amz-target': 'DynamoDB_20120810.UpdateItem' }, body });
    // Act
    const ok = await call('{"ConditionExpression":"x"}');
    fail = true;
    const plain = await call('{}');
    const failed = await call('{"ConditionExpression":"x"}');
    // Assess
    expect([ok.status, plain.status, failed.status]).toEqual([200, 200, 400]);
    expect(await failed.json()).toEqual({ __type: 'com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException', message: 'injected' });
    expect(served).toHaveLength(2);
    await proxy.stop();
  });
});

describe('LocalEventBus faults', () => {
  it('drops, duplicates and delays deliveries as the hook says; a delayed event arrives after a later one', async () => {
    // Prepare
    const clock = new VirtualClock({ start: '2026-03-10T12:00:00Z', speed: 1, stepped: {}, frozen: true });
    const actions = [{ kind: 'drop' as const }, { kind: 'duplicate' as const }, { kind: 'delay' as const, ms: 30_000 }, undefined];
    const bus = new LocalEventBus({ clock, region: 'us-east-1', fault: () => actions.shift(), work: (fn) => clock.work(fn) });
    const got: string[] = [];
    bus.addTarget({ rule: 'r', pattern: { source: ['t'], 'detail-type': ['x'] }, kind: 'lambda', invoke: async (e: any) => void got.push(e.detail.n) });
    clock.begin();
    // Act
    await bus.publish(['a', 'b', 'c', 'd'].map((n) => ({ source: 't', detailType: 'x', detail: { n } })));
    await clock.sleep(60_000);
    // Assess
    expect(got).toEqual(['b', 'b', 'd', 'c']);
    expect(bus.dropped).toHaveLength(1);
    clock.stop();
  });
});

describe('VirtualClock stepped', () => {
  it('jumps straight to the next timer, in order, and waits while work is running', async () => {
    // Prepare
    const clock = new VirtualClock({ start: 0, speed: 1, stepped: { quietRealMs: 2 }, frozen: true });
    const seen: number[] = [];
    clock.setTimer(() => seen.push(clock.nowMs()), 3_600_000);
    clock.setTimer(() => seen.push(clock.nowMs()), 1_000);
    clock.begin();
    // Act: real work of 50 ms must not let an hour of virtual time pass under it.
    const during = await clock.work(async () => {
      await new Promise((r) => setTimeout(r, 50));
      return clock.nowMs();
    });
    await clock.sleep(7_200_000);
    // Assess
    expect(during).toBe(0);
    expect(seen).toEqual([1_000, 3_600_000]);
    expect(clock.nowMs()).toBe(7_200_000);
    clock.stop();
  });
});
