/**
 * When a chaos run may call itself settled while a termination with no deadline still runs
 * (`drainWaitsForGood`, invariants.ts): only when that drain waits for good, never while a PDB
 * merely paces it (seed 35: the last pod of a PDB-paced drain was evicted after the run had called
 * itself settled, and its replacement was Pending at the final check).
 */
import { describe, expect, it } from 'vitest';
import type { Pod } from '../../shared/api/kube.ts';
import { drainWaitsForGood } from './invariants.ts';
import { settleLook } from './run.ts';
import { VirtualClock } from '../../infra/local/clock.ts';

const NowMs = Date.parse('2026-03-02T10:10:40Z');

function pod(name: string, over: { deletionTimestamp?: string; daemonSet?: boolean } = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: 'default',
      labels: { app: 'app-0' },
      ...(over.deletionTimestamp ? { deletionTimestamp: over.deletionTimestamp } : {}),
      ownerReferences: [{ apiVersion: 'apps/v1', kind: over.daemonSet ? 'DaemonSet' : 'ReplicaSet', name: 'owner', uid: 'u1', controller: true }],
    },
    spec: { nodeName: 'ip-192-168-32-12.us-east-1.compute.internal', containers: [{ name: 'main', image: 'app:1' }] },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
  } as unknown as Pod;
}

describe('drainWaitsForGood (when a run with a no-deadline drain is settled)', () => {
  it('a drain a PDB only paces (the eviction would be accepted now) is not waiting for good', () => {
    // Prepare: the last app-0 pod; its PDB (maxUnavailable 1) allows a disruption again because the previous replacement runs.
    const pods = [pod('app-0-b6bcdb7bd-tj82x')];
    // Act
    const stuck = drainWaitsForGood(pods, NowMs, () => false);
    // Assess
    expect(stuck).toBe(false);
  });

  it('a drain whose every pod is refused by its PDB, with nothing terminating or held, waits for good', () => {
    // Prepare: the stuck-prestop fault's pod under a PDB with maxUnavailable 0.
    const pods = [pod('stuck-3-abc'), pod('node-agent', { daemonSet: true })];
    // Act
    const stuck = drainWaitsForGood(pods, NowMs, (p) => p.metadata.name === 'stuck-3-abc');
    // Assess
    expect(stuck).toBe(true);
  });

  it('one pod refused and one evictable: the drain moves on', () => {
    // Prepare
    const pods = [pod('a'), pod('b')];
    // Act
    const stuck = drainWaitsForGood(pods, NowMs, (p) => p.metadata.name === 'a');
    // Assess
    expect(stuck).toBe(false);
  });

  it('a pod still terminating on the node is an event of the drain: not waiting for good', () => {
    // Prepare: evicted 10 s ago (grace ends then), every other pod refused.
    const pods = [pod('a'), pod('b', { deletionTimestamp: new Date(NowMs - 10_000).toISOString() })];
    // Act
    const stuck = drainWaitsForGood(pods, NowMs, () => true);
    // Assess
    expect(stuck).toBe(false);
  });

  it('a node with DaemonSet pods only is not waiting while their evictions go through (Karpenter v1 evicts them too)', () => {
    // Act
    const stuck = drainWaitsForGood([pod('node-agent', { daemonSet: true })], NowMs, () => false);
    // Assess
    expect(stuck).toBe(false);
  });

  it('a node whose DaemonSet pod is refused eviction for good is waiting (its pods are drained too, last)', () => {
    // Act
    const stuck = drainWaitsForGood([pod('node-agent', { daemonSet: true })], NowMs, () => true);
    // Assess
    expect(stuck).toBe(true);
  });
});

describe('settleLook (settled and the final checks at one virtual instant)', () => {
  it('virtual time stands still while the monitor reads over real I/O: final() sees what settled() judged', async () => {
    // Prepare: a stepped clock with a disruption round due 1 s on, which makes a pod Pending again
    const clock = new VirtualClock({ start: 0, speed: 1, stepped: { quietRealMs: 2 }, frozen: true });
    let podPhase = 'Running';
    clock.setTimer(() => (podPhase = 'Pending'), 1_000);
    clock.begin();
    const seen: { settledAt?: number; finalAt?: number; finalPhase?: string } = {};
    const realRead = () => new Promise((r) => setTimeout(r, 40)); // a DynamoDB read: longer than a quiet period
    const monitor = {
      check: async () => void (await realRead()),
      settled: async () => {
        const running = podPhase === 'Running';
        seen.settledAt = clock.nowMs();
        await realRead();
        return running;
      },
      final: async () => {
        await realRead();
        seen.finalAt = clock.nowMs();
        seen.finalPhase = podPhase;
      },
    };
    // Act
    const settled = await settleLook(clock, monitor, true);
    // Assess
    expect(settled).toBe(true);
    expect(seen).toEqual({ settledAt: 0, finalAt: 0, finalPhase: 'Running' });
    clock.stop();
  });
});
