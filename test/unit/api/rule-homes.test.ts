/**
 * The rules whose copies once disagreed (docs/architecture.md "One home for each rule"), pinned at
 * their one home: a second behaviour coming back through a changed home fails here.
 */
import { describe, expect, it } from 'vitest';
import { daemonSetOwnerName, isDaemonSetPod } from '../../../shared/api/kube.ts';
import { fnv1a32 } from '../../../shared/api/hash.ts';
import { instanceIdOfProviderId, providerIdOf } from '../../../shared/api/provider-id.ts';
import { NodeClassTagKey, NodePoolTagKey, RestrictedTagKeys } from '../../../shared/api/iam-policy.ts';
import { LabelNodePool, TagNodeClaim } from '../../../shared/api/labels.ts';
import { Tags } from '../../../shared/aws/ec2.ts';

describe('one home per rule', () => {
  it('a DaemonSet pod: any apps/v1 DaemonSet owner reference, controller or not; another group is not one', () => {
    const pod = (apiVersion: string, controller?: boolean) => ({
      metadata: { name: 'p', ownerReferences: [{ apiVersion, kind: 'DaemonSet', name: 'ds', uid: 'u', ...(controller === undefined ? {} : { controller }) }] },
    });
    expect(isDaemonSetPod(pod('apps/v1', false))).toBe(true);
    expect(daemonSetOwnerName(pod('apps/v1', true))).toBe('ds');
    expect(isDaemonSetPod(pod('example.com/v1'))).toBe(false);
    expect(isDaemonSetPod({ metadata: { name: 'p' } })).toBe(false);
  });

  it('FNV-1a 32 is the standard function (test vectors of the FNV reference)', () => {
    expect(fnv1a32('')).toBe(0x811c9dc5);
    expect(fnv1a32('a')).toBe(0xe40c292c);
    expect(fnv1a32('foobar')).toBe(0xbf9cf968);
  });

  it('providerID: the format and its parse agree; anything else has no instance id', () => {
    expect(instanceIdOfProviderId(providerIdOf('us-east-1a', 'i-0abc'))).toBe('i-0abc');
    expect(instanceIdOfProviderId('aws:///us-east-1a/i-0abc/x')).toBeUndefined();
    expect(instanceIdOfProviderId('kwok://n1')).toBeUndefined();
  });

  it("tag keys are Karpenter's: the NodePool tag is the NodePool label, the restricted keys are the ones nodefleet writes", () => {
    expect(NodePoolTagKey).toBe(LabelNodePool);
    expect(Tags.nodePool).toBe(LabelNodePool);
    expect(Tags.nodeClaim).toBe(TagNodeClaim);
    expect(Tags.nodeClass).toBe(NodeClassTagKey);
    expect([...RestrictedTagKeys].sort()).toEqual([Tags.eksClusterName, Tags.nodePool, Tags.nodeClaim, Tags.nodeClass].sort());
  });
});
