import { describe, expect, it } from 'vitest';
import {
  fromKubeNodeClaim,
  inFlightKeyMs,
  inFlightSince,
  NodeClaimPhase,
  NotInitializedInFlightKeyMs,
  toKubeNodeClaim,
  type NodeClaim,
} from '../../../shared/api/nodeclaim.ts';
import { nodeClaim } from '../../fakes/index.ts';

const InitializedAt = '2026-01-01T00:10:00.000Z';
const initialized = (phase: NodeClaim['phase']) => ({
  ...nodeClaim({ name: 'a', phase }),
  conditions: [{ type: 'Initialized' as const, status: 'True' as const, lastTransitionTime: InitializedAt }],
});

describe('inFlightKeyMs (the in-flight index key: shared/api/contract.ts Table.inFlightAttribute)', () => {
  // Every phase of the schema, so a phase added later must be placed here.
  const cases: Record<NodeClaim['phase'], number | undefined> = {
    Pending: NotInitializedInFlightKeyMs,
    Launched: NotInitializedInFlightKeyMs,
    Registered: NotInitializedInFlightKeyMs,
    Initialized: Date.parse(InitializedAt),
    Terminating: undefined,
    Terminated: undefined,
    Failed: undefined,
  };
  it('covers every phase', () => {
    expect(Object.keys(cases).sort()).toEqual([...NodeClaimPhase.options].sort());
  });
  it.each(Object.entries(cases))('%s → %s', (phase, want) => {
    // Prepare: the claim as it is once initialized (the condition stays True when it moves on)
    const c = initialized(phase as NodeClaim['phase']);
    // Act / Assess
    expect(inFlightKeyMs(c)).toBe(want);
  });
  it('an Initialized claim whose time is unknown stays in flight for any reader', () => {
    expect(inFlightKeyMs(nodeClaim({ name: 'a', phase: 'Initialized' }))).toBe(NotInitializedInFlightKeyMs);
    expect(inFlightSince(nodeClaim({ name: 'a', phase: 'Initialized' }), Date.parse('2099-01-01T00:00:00Z'))).toBe(true);
  });
  it('inFlightSince is "key at least the time": an Initialized claim drops out once the window passes it', () => {
    const c = initialized('Initialized');
    expect(inFlightSince(c, Date.parse(InitializedAt))).toBe(true);
    expect(inFlightSince(c, Date.parse(InitializedAt) + 1)).toBe(false);
    expect(inFlightSince(initialized('Registered'), Date.parse('2099-01-01T00:00:00Z'))).toBe(true);
    expect(inFlightSince(initialized('Terminating'), 0)).toBe(false);
  });
});

describe('fromKubeNodeClaim: the inverse of toKubeNodeClaim, every field kept', () => {
  it('a record round-trips through the karpenter.sh/v1 object', () => {
    const c: NodeClaim = {
      ...nodeClaim({ name: 'default-abc12', nodePool: 'default', instanceId: 'i-0123456789abcdef0', nodeName: 'ip-10-0-0-1.ec2.internal' }),
      providerId: 'aws:///us-east-1a/i-0123456789abcdef0',
      zone: 'us-east-1a',
      instanceType: 'm5.large',
      capacityType: 'spot',
      createdAt: '2026-03-02T10:00:00.000Z',
      expireAt: '2026-04-01T10:00:00.000Z',
      terminationGracePeriodSeconds: 5400,
      taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }],
      startupTaints: [{ key: 'node.cilium.io/agent-not-ready', effect: 'NoExecute' }],
      requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['m5.large', 'm5.xlarge'], minValues: 2 }],
    };
    const back = fromKubeNodeClaim(toKubeNodeClaim(c), c.cluster);
    for (const k of [
      'name',
      'nodePool',
      'instanceId',
      'providerId',
      'zone',
      'instanceType',
      'capacityType',
      'expireAt',
      'terminationGracePeriodSeconds',
      'taints',
      'startupTaints',
      'requirements',
      'nodeName',
    ] as const) {
      expect(back[k], k).toEqual(c[k]);
    }
  });

  it('expireAfter Never and no terminationGracePeriod stay absent', () => {
    const back = fromKubeNodeClaim(
      { metadata: { name: 'x', creationTimestamp: '2026-03-02T10:00:00Z', labels: { 'karpenter.sh/nodepool': 'p' } }, spec: { expireAfter: 'Never' } },
      'c',
    );
    expect(back.expireAt).toBeUndefined();
    expect(back.terminationGracePeriodSeconds).toBeUndefined();
  });
});
