import { describe, expect, it, vi } from 'vitest';
import { BasePersistenceLayer, IdempotencyRecord } from '@aws-lambda-powertools/idempotency/persistence';
import { IdempotencyItemAlreadyExistsError, IdempotencyItemNotFoundError } from '@aws-lambda-powertools/idempotency';
import { EnvError, parseRuntimeEnv } from '../../../shared/runtime/env.ts';
import { buildDeps } from '../../../shared/runtime/deps.ts';
import { DynamoBudgetCounter } from '../../../shared/aws/dynamo-budget-counter.ts';
import { CatalogRefresher } from '../../../shared/aws/catalog-refresh.ts';
import { idempotentOn, wrapHandler } from '../../../shared/runtime/middleware.ts';
import { handle, parseInput, run } from '../../../functions/provisioner/handler.ts';
import { ValidationError } from '../../../shared/api/errors.ts';
import { z } from 'zod';
import { provisionerWorld, pendingPod, unschedulableEvent } from '../provisioner/world.ts';

/** Powertools persistence in memory (same contract as the DynamoDB layer: put fails while a live record exists). */
class InMemoryPersistence extends BasePersistenceLayer {
  readonly records = new Map<string, IdempotencyRecord>();
  protected async _getRecord(key: string): Promise<IdempotencyRecord> {
    const r = this.records.get(key);
    if (!r) throw new IdempotencyItemNotFoundError();
    return r;
  }
  protected async _putRecord(record: IdempotencyRecord): Promise<void> {
    const r = this.records.get(record.idempotencyKey);
    if (r && !r.isExpired()) throw new IdempotencyItemAlreadyExistsError(`exists: ${record.idempotencyKey}`, r);
    this.records.set(record.idempotencyKey, record);
  }
  protected async _updateRecord(record: IdempotencyRecord): Promise<void> {
    this.records.set(record.idempotencyKey, record);
  }
  protected async _deleteRecord(record: IdempotencyRecord): Promise<void> {
    this.records.delete(record.idempotencyKey);
  }
}

const baseEnv = { NODEFLEET_CLUSTER_NAME: 'c1', NODEFLEET_TABLE_NAME: 't', AWS_REGION: 'ap-northeast-2' };

describe('env', () => {
  it('names the missing or malformed variable', () => {
    expect(() => parseRuntimeEnv({ ...baseEnv, NODEFLEET_TABLE_NAME: undefined })).toThrow('environment variable NODEFLEET_TABLE_NAME: is required');
    expect(() => parseRuntimeEnv({ ...baseEnv, NODEFLEET_EC2_ENDPOINT: 'not a url' })).toThrow(/NODEFLEET_EC2_ENDPOINT/);
    expect(() => parseRuntimeEnv(baseEnv, ['stateMachineArn'])).toThrow(EnvError);
    expect(parseRuntimeEnv({ ...baseEnv, NODEFLEET_DYNAMODB_ENDPOINT: 'http://127.0.0.1:4567' })).toMatchObject({
      clusterName: 'c1',
      dynamodbEndpoint: 'http://127.0.0.1:4567',
      logLevel: 'INFO',
    });
  });

  it('buildDeps wires endpoint overrides into the clients once', async () => {
    const deps = buildDeps(
      parseRuntimeEnv({ ...baseEnv, NODEFLEET_DYNAMODB_ENDPOINT: 'http://127.0.0.1:4567', NODEFLEET_EC2_ENDPOINT: 'http://127.0.0.1:4568' }),
    );
    const ddb = await deps.clients!.dynamodb.config.endpoint!();
    const ec2 = await deps.clients!.ec2.config.endpoint!();
    const ssm = await deps.clients!.ssm.config.endpoint!();
    expect([ddb.hostname, ddb.port]).toEqual(['127.0.0.1', 4567]);
    expect([ec2.port, ssm.port]).toEqual([4568, 4568]);
    expect(deps.termination).toBeUndefined();
    expect(deps.publisher).toBeUndefined();
    expect(deps.budgets).toBeInstanceOf(DynamoBudgetCounter);
    // Embedded environment (EC2 endpoint override): shipped catalog data, no refresher.
    expect(deps.catalogRefresher).toBeUndefined();
  });

  it('buildDeps creates one catalog refresher per container in AWS', () => {
    const deps = buildDeps(parseRuntimeEnv(baseEnv));
    expect(deps.catalogRefresher).toBeInstanceOf(CatalogRefresher);
    expect(buildDeps(parseRuntimeEnv(baseEnv), { overrides: { catalogRefresher: undefined } }).catalogRefresher).toBeUndefined();
  });
});

describe('wrapHandler', () => {
  it('parses with the schema, runs with the deps built once, and rethrows typed errors', async () => {
    let built = 0;
    const h = wrapHandler('t', async (input: { n: number }, deps) => input.n + (deps.env.clusterName === 'c1' ? 1 : 0), {
      schema: z.object({ n: z.number() }),
      envSource: baseEnv,
      depsFactory: (env) => {
        built++;
        return buildDeps(env);
      },
    });
    expect(await h({ n: 1 }, {} as never)).toBe(2);
    expect(await h({ n: 2 }, {} as never)).toBe(3);
    expect(built).toBe(1);
    await expect(h({ n: 'x' }, {} as never)).rejects.toBeInstanceOf(ValidationError);
  });
});

describe('provisioner handler idempotency (Powertools, keyed on the event id)', () => {
  it('a redelivered event returns the first result without running again', async () => {
    // Prepare
    const pods = Array.from({ length: 5 }, (_, i) => pendingPod(`inflate-${i}`));
    const { w, deps } = provisionerWorld({ pods });
    const persistence = new InMemoryPersistence();
    // handler.ts's own wiring (`handle` is what `handler` runs inside the chain), with an in-memory persistence layer.
    const d = { ...deps, idempotency: persistence } as unknown as Parameters<typeof handle>[1];
    const event = parseInput(unschedulableEvent(pods, 'evt-dup'));
    // Act
    const first = await handle(event, d);
    const listsAfterFirst = w.kube.callsOf('listPods').length;
    // a new pod arrives: a second pass would now provision it, the redelivery must not
    w.kube.addPod(pendingPod('late-0'));
    const second = await handle(event, d);
    // Assess
    expect(second).toEqual(first);
    expect(w.kube.callsOf('listPods').length).toBe(listsAfterFirst);
    expect(w.cloud.callsOf('create')).toHaveLength(1);
    expect(persistence.records.size).toBe(1);
  });

  it('the chain registers the Lambda context: the in-progress record expires with the invocation, no warning', async () => {
    const pods = [pendingPod('inflate-0')];
    const { deps } = provisionerWorld({ pods });
    const persistence = new InMemoryPersistence();
    const remaining: (number | undefined)[] = [];
    const save = persistence.saveInProgress.bind(persistence);
    persistence.saveInProgress = (data: Parameters<InMemoryPersistence['saveInProgress']>[0], ms?: number) => {
      remaining.push(ms);
      return save(data, ms);
    };
    const once = idempotentOn((x: Record<string, unknown>) => run(parseInput(x), deps), persistence, 'id');
    const h = wrapHandler('provisioner-ctx-test', (e: Record<string, unknown>) => once(e), { envSource: baseEnv });
    const context = { functionName: 'provisioner', awsRequestId: 'req-1', getRemainingTimeInMillis: () => 42_000 } as never;
    const warnings: string[] = [];
    const warn = vi.spyOn(console, 'warn').mockImplementation((m: unknown) => void warnings.push(String(m)));
    try {
      await h(unschedulableEvent(pods, 'evt-ctx'), context);
    } finally {
      warn.mockRestore();
    }
    expect(remaining).toEqual([42_000]);
    expect(warnings.filter((m) => m.includes('Could not determine remaining time'))).toEqual([]);
  });
});
