/** Karpenter's termination metrics from the termination tasks (Drain, Finalize), through the local state machine. */
import { describe, expect, it } from 'vitest';
import { MetricNames } from '../../../shared/api/metrics.ts';
import { RecordingMetrics } from '../../../shared/runtime/observability.ts';
import { pdb, pod } from '../../fakes/index.ts';
import { ClaimName, NodeName, harness } from './helpers.ts';

describe('termination metrics', () => {
  it('a drain that finishes: each eviction (200) and drained pod by reason, the node drained and terminated, the claim terminated once with its duration', async () => {
    const metrics = new RecordingMetrics();
    const h = harness({ metrics });
    h.w.kube.addPod(pod({ name: 'web-1', nodeName: NodeName, labels: { app: 'web' } }));
    h.w.kube.addPod(pod({ name: 'web-2', nodeName: NodeName, labels: { app: 'web' } }));
    const rec = await h.run({ reason: 'consolidation' });
    expect(rec.status).toBe('SUCCEEDED');
    expect(metrics.total(MetricNames.evictionRequests, { code: '200' })).toBe(2);
    expect(metrics.total(MetricNames.podsDrained, { reason: 'consolidation' })).toBe(2);
    expect(metrics.total(MetricNames.nodesDrained, { nodepool: 'default' })).toBe(1);
    expect(metrics.total(MetricNames.nodesTerminated, { nodepool: 'default' })).toBe(1);
    expect(metrics.total(MetricNames.nodeClaimsTerminated, { nodepool: 'default', reason: 'consolidation' })).toBe(1);
    const durations = metrics.emitted.filter((e) => e.name === MetricNames.nodeClaimsTerminationDuration);
    expect(durations).toHaveLength(1);
    expect(durations[0].value).toBe((h.w.clock.nowMs() - h.t0) / 1000);
    // A second Finalize (Step Functions retry) counts nothing again.
    await h.run({ reason: 'consolidation' });
    expect(metrics.total(MetricNames.nodeClaimsTerminated)).toBe(1);
  });

  it('a PDB at zero: refused evictions are 429s, the pod deleted at the cutoff is a forceful termination', async () => {
    const metrics = new RecordingMetrics();
    const h = harness({ metrics });
    h.w.store.put({ ...h.w.store.peek(ClaimName)!, terminationGracePeriodSeconds: 600 });
    h.w.kube.addPdb(pdb({ name: 'db', matchLabels: { app: 'db' }, disruptionsAllowed: 0 }));
    h.w.kube.addPod(pod({ name: 'db-0', nodeName: NodeName, labels: { app: 'db' }, terminationGracePeriodSeconds: 30 }));
    const rec = await h.run({ reason: 'manual', deadlineEpochMs: 0 });
    expect(rec.status).toBe('SUCCEEDED');
    expect(metrics.total(MetricNames.evictionRequests, { code: '429' })).toBe(h.w.kube.callsOf('evictPod').length);
    expect(metrics.total(MetricNames.evictionRequests, { code: '200' })).toBe(0);
    expect(metrics.total(MetricNames.podsDrained, { reason: 'Forceful Termination' })).toBe(1);
    expect(metrics.total(MetricNames.podsDrained, { reason: 'manual' })).toBe(0);
    expect(metrics.total(MetricNames.nodeClaimsTerminated, { reason: 'manual' })).toBe(1);
  });
});
