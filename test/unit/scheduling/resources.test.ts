import { describe, expect, it } from 'vitest';
import { podRequests } from '../../../shared/scheduling/resources.ts';

describe('podRequests', () => {
  it('sums app containers and counts one pod slot', () => {
    const r = podRequests({
      containers: [
        { name: 'a', resources: { requests: { cpu: '250m', memory: '1Gi' } } },
        { name: 'b', resources: { requests: { cpu: '1', memory: '512Mi' } } },
      ],
    });
    expect(r).toEqual({ cpu: 1250, memory: 1536 * 2 ** 20, pods: 1 });
  });

  it('takes the larger of the biggest init container and the app containers', () => {
    const r = podRequests({
      initContainers: [{ name: 'init', resources: { requests: { cpu: '2', memory: '64Mi' } } }],
      containers: [{ name: 'a', resources: { requests: { cpu: '500m', memory: '256Mi' } } }],
    });
    expect(r.cpu).toBe(2000);
    expect(r.memory).toBe(256 * 2 ** 20);
  });

  it('adds sidecars (restartPolicy Always) to the app containers and to later init steps', () => {
    const r = podRequests({
      initContainers: [
        { name: 'proxy', restartPolicy: 'Always', resources: { requests: { cpu: '300m' } } },
        { name: 'migrate', resources: { requests: { cpu: '1' } } },
      ],
      containers: [{ name: 'a', resources: { requests: { cpu: '500m' } } }],
    });
    // init step: 300m sidecar + 1000m migrate = 1300m > 300m + 500m running
    expect(r.cpu).toBe(1300);
  });

  it('adds pod overhead and uses limits when requests are absent', () => {
    const r = podRequests({ overhead: { cpu: '250m' }, containers: [{ name: 'a', resources: { limits: { cpu: '1', 'nvidia.com/gpu': 2 } } }] });
    expect(r).toEqual({ cpu: 1250, 'nvidia.com/gpu': 2, pods: 1 });
  });
});
