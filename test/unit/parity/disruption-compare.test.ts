/**
 * The disruption parity comparison (test/parity/compare-disruption.ts) and the way
 * test/parity/differences/ explains its divergences: a tie in Karpenter's candidate order is
 * documented, a different ranking is not (nodefleet orders by savings ratio as Karpenter v1.15 does).
 */
import { describe, expect, it } from 'vitest';
import type { DisruptionPlan } from '../../../shared/disruption/index.ts';
import { compareDisruption, type OracleCandidate, type OracleDisruption } from '../../parity/compare-disruption.ts';
import { documentedDisruptionReason, openDisruptionGap } from '../../parity/differences/index.ts';
import type { DisruptionScenario } from '../../parity/disruption-scenario.ts';

const cand = (node: string, savingsRatio: number, empty = true): OracleCandidate => ({ node, price: savingsRatio, savingsRatio, empty });

function karpenter(method: string, candidates: string[], ranked: OracleCandidate[], replacements: { type: string; price: number }[] = []): OracleDisruption {
  return {
    command: {
      method,
      reason: 'Empty',
      decision: replacements.length ? 'replace' : 'delete',
      candidates,
      replacements: replacements.map((r) => ({ nodePool: 'np-0', instanceTypes: [r.type], price: r.price, capacityTypes: ['on-demand'], pods: [] })),
      savingsUsdPerHour: 0,
    },
    methods: [{ method, candidates: ranked }],
  };
}

function plan(
  method: string,
  candidates: string[],
  replacements: { type: string; price: number; pods?: string[] }[] = [],
  pods: string[] = [],
): DisruptionPlan {
  return {
    expirations: [],
    command: {
      method,
      candidates: candidates.map((nodeName) => ({ nodeName, pods })),
      replacements: replacements.map((r) => ({ instanceTypes: [r.type], priceUsdPerHour: r.price, pods: r.pods ?? [] })),
    },
    blocked: [],
    budgets: [],
    simulations: 0,
    timedOut: [],
  } as unknown as DisruptionPlan;
}

const none = { expirations: [], blocked: [], budgets: [], simulations: 0, timedOut: [] } as unknown as DisruptionPlan;

function scenario(consolidateAfter: string, podStarted: string): DisruptionScenario {
  return {
    now: '2026-03-02T10:00:00Z',
    instanceTypes: [],
    nodePools: [
      { metadata: { name: 'np-0' }, spec: { disruption: { consolidationPolicy: 'WhenEmptyOrUnderutilized', consolidateAfter, budgets: [{ nodes: '100%' }] } } },
    ],
    nodes: [{ metadata: { name: 'node-0', creationTimestamp: '2026-03-02T08:00:00Z', labels: { 'karpenter.sh/nodepool': 'np-0' } } }],
    pods: [
      {
        metadata: { name: 'p', namespace: 'default', creationTimestamp: podStarted },
        spec: { nodeName: 'node-0', containers: [] },
        status: { startTime: podStarted },
      },
    ],
    daemonSets: [],
    pdbs: [],
    settings: {},
    spotToSpotConsolidation: false,
  } as unknown as DisruptionScenario;
}

describe('compareDisruption', () => {
  it('finds no divergence when both sides start the same command', () => {
    // Prepare
    const k = karpenter('single-node-consolidation', ['node-1'], [cand('node-1', 1, false)], [{ type: 'small', price: 0.1 }]);
    const n = plan('single-node-consolidation', ['node-1'], [{ type: 'small', price: 0.1 }]);
    // Act / Assess
    expect(compareDisruption(k, n)).toEqual([]);
  });

  it('reports the first kind that differs: method, candidates, replacement count, replacement type', () => {
    const k = karpenter('single-node-consolidation', ['node-1'], [cand('node-1', 1, false)], [{ type: 'small', price: 0.1 }]);
    expect(compareDisruption(k, none).map((d) => d.kind)).toEqual(['method']);
    expect(compareDisruption(k, plan('emptiness', ['node-1'])).map((d) => d.kind)).toEqual(['method']);
    expect(compareDisruption(k, plan('single-node-consolidation', ['node-2'])).map((d) => d.kind)).toEqual(['candidates']);
    expect(compareDisruption(k, plan('single-node-consolidation', ['node-1'])).map((d) => d.kind)).toEqual(['replacements']);
    expect(compareDisruption(k, plan('single-node-consolidation', ['node-1'], [{ type: 'medium', price: 0.2 }])).map((d) => d.kind)).toEqual([
      'replacement-type',
    ]);
  });
});

describe('explaining disruption divergences', () => {
  const s = scenario('0s', '2026-03-02T09:00:00Z');

  it('calls two equally ranked empty nodes under a budget of one a Karpenter tie', () => {
    const k = karpenter('emptiness', ['node-b'], [cand('node-a', 0.2), cand('node-b', 0.2)]);
    const n = plan('emptiness', ['node-a']);
    const [d] = compareDisruption(k, n);
    expect(documentedDisruptionReason(d, s, k, n)).toBe('karpenter-random-tie');
  });

  it('does not call it a tie when Karpenter ranks its choice higher, nor an open gap', () => {
    const k = karpenter('emptiness', ['node-b'], [cand('node-a', 0.1), cand('node-b', 0.2)]);
    const n = plan('emptiness', ['node-a']);
    const [d] = compareDisruption(k, n);
    expect(documentedDisruptionReason(d, s, k, n)).toBeUndefined();
    expect(openDisruptionGap(d, s, k, n)).toBeUndefined();
  });

  it('leaves a divergence unexplained when nodefleet took the highest-ranked node', () => {
    const k = karpenter('emptiness', ['node-b'], [cand('node-a', 0.3), cand('node-b', 0.2)]);
    const n = plan('emptiness', ['node-a']);
    const [d] = compareDisruption(k, n);
    expect(documentedDisruptionReason(d, s, k, n)).toBeUndefined();
    expect(openDisruptionGap(d, s, k, n)).toBeUndefined();
  });
});
