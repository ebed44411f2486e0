import { describe, expect, it } from 'vitest';
import { computePdbStatus, podRequests, scaledValue, tolerates, untoleratedTaint } from '../../../infra/local/kube/pods.ts';
import type { Pod, PodDisruptionBudget } from '../../../shared/api/kube.ts';

function pod(name: string, over: Partial<Pod['spec']> = {}, ready = true): Pod {
  return {
    metadata: { name, namespace: 'default', labels: { app: 'w' } },
    spec: { containers: [{ name: 'c', resources: { requests: { cpu: '500m', memory: '1Gi' } } }], ...over },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
  };
}

describe('podRequests', () => {
  it('takes the larger of app containers and the biggest init container, plus overhead and one pod', () => {
    const p = pod('p', {
      containers: [
        { name: 'a', resources: { requests: { cpu: '250m' } } },
        { name: 'b', resources: { requests: { cpu: '250m', memory: '256Mi' } } },
      ],
      initContainers: [{ name: 'init', resources: { requests: { cpu: '2', memory: '128Mi' } } }],
      overhead: { cpu: '100m' },
    });
    expect(podRequests(p)).toEqual({ cpu: 2100, memory: 256 * 2 ** 20, pods: 1 });
  });

  it('adds restartable init containers (sidecars) to the app containers', () => {
    const p = pod('p', {
      containers: [{ name: 'a', resources: { requests: { cpu: '1' } } }],
      initContainers: [{ name: 'proxy', restartPolicy: 'Always', resources: { requests: { cpu: '200m' } } }],
    });
    expect(podRequests(p).cpu).toBe(1200);
  });
});

describe('tolerations', () => {
  it('Exists without key tolerates everything; Equal compares values; effects must match when set', () => {
    expect(tolerates({ operator: 'Exists' }, { key: 'x', effect: 'NoExecute' })).toBe(true);
    expect(tolerates({ key: 'x', operator: 'Equal', value: 'a' }, { key: 'x', value: 'b', effect: 'NoSchedule' })).toBe(false);
    expect(tolerates({ key: 'x', operator: 'Exists', effect: 'NoSchedule' }, { key: 'x', effect: 'NoExecute' })).toBe(false);
    expect(untoleratedTaint([{ key: 'soft', effect: 'PreferNoSchedule' }], [])).toBeUndefined();
  });
});

describe('PDB arithmetic', () => {
  const pdb = (spec: PodDisruptionBudget['spec']): PodDisruptionBudget => ({
    metadata: { name: 'b' },
    spec: { selector: { matchLabels: { app: 'w' } }, ...spec },
  });
  const pods = [pod('a'), pod('b'), pod('c'), pod('d', {}, false)];
  it.each([
    [{ minAvailable: 2 }, { expectedPods: 4, currentHealthy: 3, desiredHealthy: 2, disruptionsAllowed: 1 }],
    [{ minAvailable: '80%' }, { expectedPods: 5, currentHealthy: 3, desiredHealthy: 4, disruptionsAllowed: 0 }],
    [{ maxUnavailable: 1 }, { expectedPods: 5, currentHealthy: 3, desiredHealthy: 4, disruptionsAllowed: 0 }],
    [{ maxUnavailable: '50%' }, { expectedPods: 5, currentHealthy: 3, desiredHealthy: 2, disruptionsAllowed: 1 }],
  ])('%j', (spec, want) => {
    // all four pods belong to one controller scaled to 5
    expect(computePdbStatus(pdb(spec), pods, () => ({ uid: 'rs', replicas: 5 }))).toEqual(want);
  });

  it('rounds percentages up', () => {
    expect(scaledValue('80%', 7)).toBe(6);
    expect(scaledValue(3, 7)).toBe(3);
  });
});
