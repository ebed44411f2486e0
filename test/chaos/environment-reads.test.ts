/**
 * The chaos monitor reads NodeClaims through the environment (`env.nodeClaims()`); injected
 * DynamoDB throttling is for nodefleet's functions, not for that read. Seed 27: while a
 * `dynamo-throttle` window was open the read came back empty, a node being interrupted was taken
 * for a voluntary disruption, and the monitor reported a budget violation nodefleet never made.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LocalEnvironment } from '../../infra/local/environment.ts';
import type { FaultHooks } from '../../infra/local/faults.ts';
import { DynamoNodeClaimStore } from '../../shared/aws/dynamo-node-claim-store.ts';
import { createClients } from '../../shared/aws/clients.ts';
import { nodeClaim } from '../fakes/index.ts';
import { buildWorld } from './world.ts';

const workDir = mkdtempSync(join(tmpdir(), 'nodefleet-env-reads-'));
let env: LocalEnvironment | undefined;
afterAll(async () => {
  await env?.stop();
  rmSync(workDir, { recursive: true, force: true });
});

describe('LocalEnvironment.nodeClaims under injected DynamoDB faults', () => {
  it('lists the stored claims while every DynamoDB call of the functions is throttled', { timeout: 120_000 }, async () => {
    // Prepare: an environment whose fault proxy throttles every call once armed
    let throttle = false;
    const faults: FaultHooks = {
      dynamo: () => (throttle ? { status: 400, code: 'ProvisionedThroughputExceededException', message: 'throttled (test)' } : undefined),
    };
    const world = buildWorld(1, 60_000);
    env = new LocalEnvironment({ scenario: world.scenario, stepped: true, persist: false, workDir, faults, seed: 1 });
    await env.start();
    const clients = createClients({ region: world.scenario.region, dynamodbEndpoint: env.dynamo.endpoint });
    await new DynamoNodeClaimStore(clients.doc, env.dynamo.tableName, world.scenario.clusterName).create(
      nodeClaim({ name: 'pool-0-abcde', phase: 'Launched' }),
    );
    // Act
    throttle = true;
    const seen = await env.nodeClaims();
    // Assess
    expect(seen.map((c) => c.name)).toContain('pool-0-abcde');
  });
});
