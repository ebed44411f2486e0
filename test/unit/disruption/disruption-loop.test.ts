import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { StateMachine } from 'aws-local-stepfunctions';
import { fakeWorld, node, nodeClaimOf, pod } from '../../fakes/index.ts';
import { NodePoolSchema } from '../../../shared/api/nodepool.ts';
import { RecordingLog, RecordingMetrics } from '../../../shared/runtime/observability.ts';
import type { Deps } from '../../../shared/runtime/deps.ts';
import { run } from '../../../functions/disruption/handler.ts';
import { NodefleetError } from '../../../shared/api/errors.ts';

const aslValidator = createRequire(import.meta.url)('asl-validator') as (d: unknown) => { isValid: boolean; errorsText: (sep?: string) => string };
const definitionText = readFileSync(new URL('../../../statemachines/disruption-loop.asl.json', import.meta.url), 'utf8');
const filled = JSON.parse(definitionText.replace('${DisruptionFunctionArn}', 'arn:aws:lambda:us-east-1:123456789012:function:nodefleet-disruption'));

describe('disruption-loop.asl.json', () => {
  it('is valid ASL with one substitution, and its Task retries TransientError and catches everything', () => {
    expect([...new Set([...definitionText.matchAll(/\$\{(\w+)\}/g)].map((m) => m[1]))]).toEqual(['DisruptionFunctionArn']);
    const r = aslValidator(filled);
    expect(r.errorsText('\n')).toBe('');
    expect(filled.States.Disrupt.Retry[0].ErrorEquals).toContain('TransientError');
    expect(filled.States.Disrupt.Catch[0].ErrorEquals).toEqual(['States.ALL']);
  });

  it('plans, waits the validation delay, calls again with the command and ends once terminations start', async () => {
    // Prepare: an empty managed node next to a busy one
    const w = fakeWorld({ start: '2026-03-02T10:00:00Z' });
    w.kube.setNodePools([
      NodePoolSchema.parse({
        apiVersion: 'karpenter.sh/v1',
        kind: 'NodePool',
        metadata: { name: 'default' },
        spec: {
          template: { spec: { nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' }, requirements: [] } },
          disruption: { consolidationPolicy: 'WhenEmpty', consolidateAfter: '0s', budgets: [{ nodes: '100%' }] },
        },
      }),
    ]);
    for (const [name, zone] of [
      ['busy', 'us-east-1a'],
      ['idle', 'us-east-1b'],
    ]) {
      const n = node({
        name,
        providerID: `aws:///${zone}/i-0000000000000${name === 'busy' ? '0001' : '0002'}`,
        labels: {
          'karpenter.sh/nodepool': 'default',
          'karpenter.sh/initialized': 'true',
          'karpenter.sh/capacity-type': 'on-demand',
          'node.kubernetes.io/instance-type': 'm5.large',
          'topology.kubernetes.io/zone': zone,
          'kubernetes.io/arch': 'amd64',
          'kubernetes.io/os': 'linux',
        },
      });
      n.metadata.creationTimestamp = '2026-03-01T10:00:00Z';
      w.kube.addNode(n);
      await w.store.create(nodeClaimOf(n, { phase: 'Initialized' }));
    }
    w.kube.addPod(pod({ name: 'web-1', nodeName: 'busy' }));
    const deps: Deps = {
      env: { clusterName: 'test', tableName: 'nodefleet', region: 'us-east-1', logLevel: 'INFO' },
      clock: w.clock,
      log: new RecordingLog(),
      metrics: new RecordingMetrics(),
      store: w.store,
      unavailable: w.unavailable,
      cloud: w.cloud,
      kube: w.kube,
      termination: w.starter,
      budgets: w.budgets,
      clusterInfo: async () => ({}) as never,
    };
    const inputs: unknown[] = [];

    // Act: Wait takes no real time; the task advances the fake clock instead
    const execution = new StateMachine(filled).run({ version: '0', 'detail-type': 'Scheduled Event', detail: {} } as never, {
      overrides: {
        taskResourceLocalHandlers: {
          Disrupt: async (input: any) => {
            inputs.push(input);
            // the Wait state before this call stands for retryAfterSeconds of virtual time
            if (input.command) w.clock.advanceSeconds(15);
            return run(input, deps) as never;
          },
        },
        waitTimeOverrides: { Wait: 0 },
      },
    });
    const output = (await execution.result) as any;

    // Assess
    expect(output.status).toBe('terminating');
    expect(inputs).toHaveLength(2);
    expect((inputs[1] as any).command.candidates[0].nodeName).toBe('idle');
    expect(w.starter.started.map((s) => s.nodeClaim)).toEqual(['idle']);
  });

  it('a step that fails after tainting and taking the slot runs Abandon: the taint and the budget slot are released, then the execution fails', async () => {
    const w = fakeWorld({ start: '2026-03-02T10:00:00Z' });
    w.kube.setNodePools([
      NodePoolSchema.parse({
        apiVersion: 'karpenter.sh/v1',
        kind: 'NodePool',
        metadata: { name: 'default' },
        spec: {
          template: { spec: { nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' }, requirements: [] } },
          disruption: { consolidationPolicy: 'WhenEmpty', consolidateAfter: '0s', budgets: [{ nodes: '100%' }] },
        },
      }),
    ]);
    for (const [name, zone] of [
      ['busy', 'us-east-1a'],
      ['idle', 'us-east-1b'],
    ]) {
      const n = node({
        name,
        providerID: `aws:///${zone}/i-0000000000000${name === 'busy' ? '0001' : '0002'}`,
        labels: {
          'karpenter.sh/nodepool': 'default',
          'karpenter.sh/initialized': 'true',
          'karpenter.sh/capacity-type': 'on-demand',
          'node.kubernetes.io/instance-type': 'm5.large',
          'topology.kubernetes.io/zone': zone,
          'kubernetes.io/arch': 'amd64',
          'kubernetes.io/os': 'linux',
        },
      });
      n.metadata.creationTimestamp = '2026-03-01T10:00:00Z';
      w.kube.addNode(n);
      await w.store.create(nodeClaimOf(n, { phase: 'Initialized' }));
    }
    w.kube.addPod(pod({ name: 'web-1', nodeName: 'busy' }));
    const deps: Deps = {
      env: { clusterName: 'test', tableName: 'nodefleet', region: 'us-east-1', logLevel: 'INFO' },
      clock: w.clock,
      log: new RecordingLog(),
      metrics: new RecordingMetrics(),
      store: w.store,
      unavailable: w.unavailable,
      cloud: w.cloud,
      kube: w.kube,
      termination: w.starter,
      budgets: w.budgets,
      clusterInfo: async () => ({}) as never,
    };
    // StartExecution refused for good (not a TransientError: no Retry), after the slot and the taint were taken
    w.starter.failAlways('start', new NodefleetError('StartExecution: AccessDeniedException'));
    const states: string[] = [];
    const execution = new StateMachine(filled).run({ version: '0', 'detail-type': 'Scheduled Event', detail: {} } as never, {
      overrides: {
        taskResourceLocalHandlers: {
          Disrupt: async (input: any) => {
            states.push('Disrupt');
            if (input.command) w.clock.advanceSeconds(15);
            return run(input, deps) as never;
          },
          Abandon: async (input: any) => {
            states.push('Abandon');
            return run(input, deps) as never;
          },
        },
        waitTimeOverrides: { Wait: 0 },
      },
    });
    await expect(execution.result).rejects.toThrow();
    expect(states).toEqual(['Disrupt', 'Disrupt', 'Abandon']);
    expect(w.kube.peekNode('idle')?.spec?.taints ?? []).not.toContainEqual(expect.objectContaining({ key: 'karpenter.sh/disrupted' }));
    expect(await w.budgets.holders('default')).toEqual({});
    expect((deps.log as RecordingLog).withMessage('abandoning disruption command after a failed step')).toHaveLength(1);
  });
});
