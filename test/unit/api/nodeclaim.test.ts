import { describe, expect, it } from 'vitest';
import { inFlightKeyMs, inFlightSince, NodeClaimPhase, NotInitializedInFlightKeyMs, type NodeClaim } from '../../../shared/api/nodeclaim.ts';
import { nodeClaim } from '../../fakes/index.ts';

const InitializedAt = '2026-01-01T00:10:00.000Z';
const initialized = (phase: NodeClaim['phase']) => ({ ...nodeClaim({ name: 'a', phase }), conditions: [{ type: 'Initialized' as const, status: 'True' as const, lastTransitionTime: InitializedAt }] });

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
