import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { UnschedulablePodsEventSchema, toPod } from '../../../shared/api/agent-events.ts';
import { AgentSchemaVersion } from '../../../shared/api/contract.ts';
import { podRequests } from '../../../shared/scheduling/index.ts';

const fixture = () => JSON.parse(readFileSync(new URL('./fixtures/unschedulable-pods-v1.json', import.meta.url), 'utf8'));

describe('agent event schema v1 (compatibility fixture)', () => {
  it('the recorded v1 event still parses and yields a schedulable pod', () => {
    const e = UnschedulablePodsEventSchema.parse(fixture());
    expect(e.detail.schemaVersion).toBe(AgentSchemaVersion);
    const pod = toPod(e.detail.pods[0]);
    expect(podRequests(pod.spec).cpu).toBe(1000);
    expect(pod.spec.nodeSelector).toEqual({ 'kubernetes.io/os': 'linux' });
    // Compaction dropped images, container ports without hostPort and unrelated annotations.
    expect(pod.spec.containers[0]).toEqual({ name: 'inflate', resources: { requests: { cpu: '1' } } });
    expect(pod.metadata.annotations).toEqual({ 'karpenter.sh/do-not-disrupt': 'true' });
  });

  it('an event of another schema version is rejected', () => {
    const e = fixture();
    e.detail.schemaVersion = '2';
    expect(UnschedulablePodsEventSchema.safeParse(e).success).toBe(false);
  });
});
