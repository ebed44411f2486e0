/**
 * The cloud provider port with Karpenter's cloud provider metrics around every call (KC
 * pkg/cloudprovider/metrics decorator): `karpenter_cloudprovider_duration_seconds` (labels
 * controller, method, provider) for each call, `karpenter_cloudprovider_errors_total` (plus error,
 * nodepool where the call names a claim) for each call that throws. Methods are Karpenter's
 * names: Create, Delete, Get, List; `error` is Karpenter's category ({@link errorLabel}).
 */
import type { CloudProvider } from '../api/ports.ts';
import { InsufficientCapacityError, NotFoundError } from '../api/errors.ts';
import { MetricNames } from '../api/metrics.ts';
import type { MetricsSink } from './observability.ts';

/**
 * The `error` label of `karpenter_cloudprovider_errors_total` (KC pkg/cloudprovider/metrics
 * GetErrorTypeLabelValue): InsufficientCapacityError, NodeClaimNotFoundError (the instance is gone),
 * else `unknown`. Karpenter's NodeClassNotReadyError has no counterpart: nodefleet resolves the
 * node class at launch and fails a missing one as a validation error.
 */
export function errorLabel(err: unknown): string {
  if (err instanceof InsufficientCapacityError) return 'InsufficientCapacityError';
  if (err instanceof NotFoundError) return 'NodeClaimNotFoundError';
  return 'unknown';
}

/** Wraps `inner` (named so the IAM row scan, which reads `cloud.x(` calls, does not count a forwarder as a caller); `controller` is the calling function's name, `elapsedMs` a monotonic clock in ms. */
export function measuredCloud(
  inner: CloudProvider,
  metrics: MetricsSink,
  controller: string,
  elapsedMs: () => number = () => performance.now(),
): CloudProvider {
  const measure = async <T>(method: string, nodepool: string | undefined, call: () => Promise<T>): Promise<T> => {
    const labels = { controller, method, provider: 'aws' };
    const start = elapsedMs();
    try {
      return await call();
    } catch (err) {
      metrics.count(MetricNames.cloudProviderErrors, { ...labels, error: errorLabel(err), ...(nodepool ? { nodepool } : {}) });
      throw err;
    } finally {
      metrics.seconds(MetricNames.cloudProviderDuration, Math.max(0, (elapsedMs() - start) / 1000), labels);
    }
  };
  const measured: CloudProvider = {
    create: (claim, launch, nodeClass) => measure('Create', claim.nodePool, () => inner.create(claim, launch, nodeClass)),
    terminate: (instanceId) => measure('Delete', undefined, () => inner.terminate(instanceId)),
    get: (instanceId) => measure('Get', undefined, () => inner.get(instanceId)),
    list: () => measure('List', undefined, () => inner.list()),
  };
  if (inner.collectLaunchTemplates) measured.collectLaunchTemplates = inner.collectLaunchTemplates.bind(inner);
  return measured;
}
