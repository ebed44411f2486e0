import { describe, expect, it, vi } from 'vitest';
import { FaultKinds, RealApiFaultKinds, RealTierFaultKinds, clusterWrite, planFaults } from './injector.ts';
import { evictionRefusedBy } from './invariants.ts';
import type { Pod } from '../../shared/api/kube.ts';

describe('the real tier fault plan', () => {
  it("has the real API's own faults and none of the embedded API server's injected answers; the embedded plan is unchanged", () => {
    expect(RealTierFaultKinds).toEqual(expect.arrayContaining([...RealApiFaultKinds]));
    for (const k of ['kube-429', 'kube-500', 'kube-410']) expect(RealTierFaultKinds).not.toContain(k);
    const plan = planFaults(7, 60, 600_000, RealTierFaultKinds);
    expect(new Set(plan.map((f) => f.kind))).toEqual(new Set(RealTierFaultKinds));
    expect(planFaults(7, 60, 600_000)).toEqual(planFaults(7, 60, 600_000, FaultKinds));
  });
});

describe('clusterWrite', () => {
  it('sends a refused write again a second later until it is taken', async () => {
    vi.useFakeTimers();
    try {
      let calls = 0;
      const write = () => (++calls < 3 ? Promise.reject(new Error('connection refused')) : Promise.resolve());
      clusterWrite(write);
      await vi.advanceTimersByTimeAsync(5_000);
      expect(calls).toBe(3);
      let sync = 0;
      clusterWrite(() => void sync++);
      expect(sync).toBe(1);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('evictionRefusedBy on the real tier', () => {
  const pod = (labels: Record<string, string>, phase = 'Running'): Pod =>
    ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'default', labels }, spec: { containers: [] }, status: { phase } }) as unknown as Pod;
  const pdb = (app: string, disruptionsAllowed: number) => ({
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name: app, namespace: 'default' },
    spec: { selector: { matchLabels: { app } } },
    status: { disruptionsAllowed },
  });
  it("reads the controller-manager's PDB status: refused when it allows no disruption, or two PDBs cover the pod", () => {
    const pdbs = [pdb('web', 0), pdb('api', 1), pdb('api2', 1)];
    const cluster = { objects: () => pdbs } as never;
    const refused = evictionRefusedBy({ cluster });
    expect(refused(pod({ app: 'web' }))).toBe(true);
    expect(refused(pod({ app: 'api' }))).toBe(false);
    expect(refused(pod({ app: 'web' }, 'Pending'))).toBe(false);
    expect(refused(pod({ app: 'none' }))).toBe(false);
    pdbs.push(pdb('api', 1));
    expect(refused(pod({ app: 'api' }))).toBe(true);
  });
});
