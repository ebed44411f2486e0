/**
 * An EC2NodeClass with a field nodefleet does not honour is not ready at runtime: its NodePools
 * launch nothing, the reason is logged and is the pool's reason for every unschedulable pod; the
 * launch path refuses such a class too (shared/aws/ec2.ts).
 */
import { describe, expect, it } from 'vitest';
import { run, parseInput } from '../../../functions/provisioner/handler.ts';
import { ValidationError } from '../../../shared/api/errors.ts';
import { buildLaunchRequests, catalogArchitecture } from '../../../shared/aws/ec2.ts';
import type { EC2NodeClass } from '../../../shared/api/nodepool.ts';
import { nodeClaim } from '../../fakes/index.ts';
import { nodeClass, pendingPod, provisionerWorld, unschedulableEvent } from './world.ts';

const Reason = 'ec2nodeclass default is not ready: spec.placementGroupSelector: not supported by nodefleet: instances are not launched into placement groups; remove spec.placementGroupSelector';

function withSpec(spec: Partial<EC2NodeClass['spec']>): EC2NodeClass {
  const c = nodeClass();
  return { ...c, spec: { ...c.spec, ...spec } };
}

describe('an EC2NodeClass nodefleet does not honour, at runtime', () => {
  it('launches nothing: one log line with the reason, and the reason is the pool reason of each pod', async () => {
    const pods = [pendingPod('web-0', '1'), pendingPod('web-1', '1')];
    const { w, log, deps } = provisionerWorld({ pods });
    w.kube.setNodeClasses([withSpec({ placementGroupSelector: { name: 'training' } })]);
    const summary = await run(parseInput(unschedulableEvent(pods)), deps);
    expect(summary.created).toEqual([]);
    expect(w.cloud.callsOf('create')).toHaveLength(0);
    expect(log.withMessage('ec2nodeclass not ready').map((l) => [l.level, l.fields])).toEqual([['error', { EC2NodeClass: { name: 'default' }, error: Reason }]]);
    expect(summary.unschedulable.map((u) => u.reasons)).toEqual([{ default: Reason }, { default: Reason }]);
  });

  it('a class with only honoured fields (RAID0 instance store, volume initialization rate) launches', async () => {
    const pods = [pendingPod('web-0', '1')];
    const { w, log, deps } = provisionerWorld({ pods });
    w.kube.setNodeClasses([withSpec({ instanceStorePolicy: 'RAID0', blockDeviceMappings: [{ deviceName: '/dev/xvda', rootVolume: true, ebs: { volumeSize: '40Gi', snapshotID: 'snap-0123456789abcdef0', volumeInitializationRate: 200 } }] })]);
    const summary = await run(parseInput(unschedulableEvent(pods)), deps);
    expect(summary.launched).toHaveLength(1);
    expect(log.withMessage('ec2nodeclass not ready')).toEqual([]);
  });

  it('the launch refuses it with the same reason', () => {
    const cluster = { name: 'karpenter-demo', endpoint: 'https://x.example', certificateAuthority: 'Q0E=', serviceCidr: '10.100.0.0/16', kubernetesVersion: '1.32' };
    const resolved = { subnets: [{ subnetId: 'subnet-a', zone: 'ap-northeast-2a', availableIpAddressCount: 10 }], securityGroupIds: ['sg-1'], images: { amd64: 'ami-0amd64' } };
    const launch = (nc: EC2NodeClass) => () => buildLaunchRequests(nodeClaim({ name: 'default-abc', phase: 'Pending' }), { instanceTypes: ['c5a.large'], zones: ['ap-northeast-2a'], capacityTypes: ['on-demand'] }, nc, resolved, { cluster, architectureOf: catalogArchitecture });
    expect(launch(withSpec({ placementGroupSelector: { name: 'training' } }))).toThrow(ValidationError);
    expect(launch(withSpec({ placementGroupSelector: { name: 'training' } }))).toThrow(Reason);
    expect(launch(withSpec({ amiFamily: 'Bottlerocket' }))).toThrow(/^ec2nodeclass default is not ready: spec.amiFamily: "Bottlerocket" is not supported by nodefleet/);
    expect(launch(withSpec({ instanceStorePolicy: 'RAID0' }))).not.toThrow();
  });
});
