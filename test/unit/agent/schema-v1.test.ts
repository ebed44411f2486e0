import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { NodeClaimLifecycleEventSchema, UnschedulablePodsEventSchema, toPod } from '../../../shared/api/agent-events.ts';
import { parseInput } from '../../../functions/registration/handler.ts';
import { AgentSchemaVersion } from '../../../shared/api/contract.ts';
import { podRequests } from '../../../shared/scheduling/index.ts';

const read = (name: string) => JSON.parse(readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8'));
const fixture = () => read('unschedulable-pods-v1.json');

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

describe('NodeClaim Lifecycle v1 (compatibility fixture)', () => {
  it('the recorded v1 event parses, as registration reads it', () => {
    const e = NodeClaimLifecycleEventSchema.parse(read('nodeclaim-lifecycle-v1.json'));
    expect(e.detail).toMatchObject({ change: 'deleting', nodeClaim: { metadata: { name: 'web-7x2kq' } } });
    expect(parseInput(read('nodeclaim-lifecycle-v1.json'))['detail-type']).toBe('NodeClaim Lifecycle');
  });

  it('another schema version or change is rejected', () => {
    const e = read('nodeclaim-lifecycle-v1.json');
    expect(NodeClaimLifecycleEventSchema.safeParse({ ...e, detail: { ...e.detail, schemaVersion: '2' } }).success).toBe(false);
    expect(NodeClaimLifecycleEventSchema.safeParse({ ...e, detail: { ...e.detail, change: 'created' } }).success).toBe(false);
  });
});
