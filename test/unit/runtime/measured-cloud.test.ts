/** Karpenter's cloud provider metrics around every call of the cloud port (shared/runtime/measured-cloud.ts). */
import { describe, expect, it } from 'vitest';
import { measuredCloud } from '../../../shared/runtime/measured-cloud.ts';
import { RecordingMetrics } from '../../../shared/runtime/observability.ts';
import { MetricNames } from '../../../shared/api/metrics.ts';
import { InsufficientCapacityError, TransientError } from '../../../shared/api/errors.ts';
import type { CloudProvider } from '../../../shared/api/ports.ts';
import type { NodeClaim } from '../../../shared/api/nodeclaim.ts';

const claim = { name: 'default-abc12', nodePool: 'default' } as NodeClaim;

describe('measuredCloud', () => {
  it("times each call by method, and counts the ones that throw with the error and the claim's nodepool", async () => {
    // Prepare: a provider whose Create fails for capacity and whose Get answers; a clock that moves 250 ms per read.
    let t = 0;
    const inner: CloudProvider = {
      create: async () => {
        throw new InsufficientCapacityError('no capacity', []);
      },
      terminate: async () => {
        throw new TransientError('RequestLimitExceeded');
      },
      get: async () => undefined,
      list: async () => [],
    };
    const metrics = new RecordingMetrics();
    const cloud = measuredCloud(inner, metrics, 'provisioner', () => (t += 250));
    // Act
    await expect(cloud.create(claim, { instanceTypes: ['m5.large'], zones: ['us-east-1a'], capacityTypes: ['on-demand'] })).rejects.toBeInstanceOf(
      InsufficientCapacityError,
    );
    await cloud.get('i-0123456789abcdef0');
    await expect(cloud.terminate('i-0123456789abcdef0')).rejects.toBeInstanceOf(TransientError);
    // Assess
    expect(
      metrics.total(MetricNames.cloudProviderErrors, {
        controller: 'provisioner',
        method: 'Create',
        provider: 'aws',
        error: 'InsufficientCapacityError',
        nodepool: 'default',
      }),
    ).toBe(1);
    expect(metrics.total(MetricNames.cloudProviderErrors, { method: 'Get' })).toBe(0);
    // Outside Karpenter's categories: `unknown` (not the error's class name).
    expect(metrics.total(MetricNames.cloudProviderErrors, { method: 'Delete', error: 'unknown' })).toBe(1);
    expect(metrics.emitted.filter((m) => m.name === MetricNames.cloudProviderDuration).map((m) => [m.dimensions.method, m.value])).toEqual([
      ['Create', 0.25],
      ['Get', 0.25],
      ['Delete', 0.25],
    ]);
  });
});
