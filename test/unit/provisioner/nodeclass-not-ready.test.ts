/**
 * An EC2NodeClass with a field nodefleet does not honour is not ready at runtime: its NodePools
 * launch nothing, the reason is logged and is the pool's reason for every unschedulable pod; the
 * launch path refuses such a class too (shared/aws/ec2.ts).
 */
import { describe, expect, it } from 'vitest';
import { run, parseInput } from '../../../functions/provisioner/handler.ts';
import { TransientError, ValidationError } from '../../../shared/api/errors.ts';
import { accountLookups, readAccountFiles } from '../../../shared/aws/account-file.ts';
import { Ec2NodeClassResolver } from '../../../shared/aws/node-class-resolver.ts';
import { buildLaunchRequests, catalogArchitecture } from '../../../shared/aws/ec2.ts';
import type { EC2NodeClass } from '../../../shared/api/nodepool.ts';
import { nodeClaim } from '../../fakes/index.ts';
import { nodeClass, pendingPod, provisionerWorld, unschedulableEvent } from './world.ts';

const Reason =
  'ec2nodeclass default is not ready: spec.placementGroupSelector: not supported by nodefleet: instances are not launched into placement groups; remove spec.placementGroupSelector';

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
    expect(log.withMessage('ec2nodeclass not ready').map((l) => [l.level, l.fields])).toEqual([
      ['error', { EC2NodeClass: { name: 'default' }, error: Reason }],
    ]);
    expect(summary.unschedulable.map((u) => u.reasons)).toEqual([{ default: Reason }, { default: Reason }]);
  });

  it('a class with only honoured fields (RAID0 instance store, volume initialization rate) launches', async () => {
    const pods = [pendingPod('web-0', '1')];
    const { w, log, deps } = provisionerWorld({ pods });
    w.kube.setNodeClasses([
      withSpec({
        instanceStorePolicy: 'RAID0',
        blockDeviceMappings: [
          { deviceName: '/dev/xvda', rootVolume: true, ebs: { volumeSize: '40Gi', snapshotID: 'snap-0123456789abcdef0', volumeInitializationRate: 200 } },
        ],
      }),
    ]);
    const summary = await run(parseInput(unschedulableEvent(pods)), deps);
    expect(summary.launched).toHaveLength(1);
    expect(log.withMessage('ec2nodeclass not ready')).toEqual([]);
  });

  it('the launch refuses it with the same reason', () => {
    const cluster = {
      name: 'karpenter-demo',
      endpoint: 'https://x.example',
      certificateAuthority: 'Q0E=',
      serviceCidr: '10.100.0.0/16',
      kubernetesVersion: '1.32',
    };
    const resolved = {
      subnets: [{ subnetId: 'subnet-a', zone: 'ap-northeast-2a', availableIpAddressCount: 10 }],
      securityGroupIds: ['sg-1'],
      images: { amd64: 'ami-0amd64' },
    };
    const launch = (nc: EC2NodeClass) => () =>
      buildLaunchRequests(
        nodeClaim({ name: 'default-abc', phase: 'Pending' }),
        { instanceTypes: ['c5a.large'], zones: ['ap-northeast-2a'], capacityTypes: ['on-demand'] },
        nc,
        resolved,
        { cluster, architectureOf: catalogArchitecture },
      );
    expect(launch(withSpec({ placementGroupSelector: { name: 'training' } }))).toThrow(ValidationError);
    expect(launch(withSpec({ placementGroupSelector: { name: 'training' } }))).toThrow(Reason);
    expect(launch(withSpec({ amiFamily: 'AL2' }))).toThrow(/^ec2nodeclass default is not ready: spec.amiFamily: "AL2" is not supported by nodefleet/);
    expect(launch(withSpec({ amiFamily: 'Bottlerocket' }))).not.toThrow();
    expect(launch(withSpec({ instanceStorePolicy: 'RAID0' }))).not.toThrow();
  });
});

describe('an EC2NodeClass whose selector terms select nothing in the account', () => {
  const account = (subnetTag: string) =>
    readAccountFiles([
      {
        file: 'account.json',
        text: JSON.stringify({
          Subnets: [
            {
              SubnetId: 'subnet-0a',
              AvailabilityZone: 'ap-northeast-2a',
              AvailabilityZoneId: 'apne2-az1',
              AvailableIpAddressCount: 100,
              Tags: [{ Key: 'karpenter.sh/discovery', Value: subnetTag }],
            },
          ],
          SecurityGroups: [{ GroupId: 'sg-0a', Tags: [{ Key: 'karpenter.sh/discovery', Value: 'karpenter-demo' }] }],
          Parameters: [
            {
              Name: '/aws/service/eks/optimized-ami/1.32/amazon-linux-2023/x86_64/standard/amazon-eks-node-al2023-x86_64-standard-1.32-v20250228/image_id',
              Value: 'ami-0a',
            },
          ],
        }),
      },
    ]);
  const Unresolved = 'ec2nodeclass default is not ready: subnetSelectorTerms match no subnet';

  it('is not ready through the production resolver: one log line, the reason for each pod, nothing launched', async () => {
    const pods = [pendingPod('web-0', '1')];
    const { w, log, deps } = provisionerWorld({ pods });
    const resolver = new Ec2NodeClassResolver(accountLookups(account('another-cluster'), { placeholderZones: [] }), '1.32');
    const summary = await run(parseInput(unschedulableEvent(pods)), { ...deps, resolver });
    expect(summary.created).toEqual([]);
    expect(w.cloud.callsOf('create')).toHaveLength(0);
    expect(log.withMessage('ec2nodeclass not ready').map((l) => l.fields)).toEqual([{ EC2NodeClass: { name: 'default' }, error: Unresolved }]);
    expect(summary.unschedulable.map((u) => u.reasons)).toEqual([{ default: Unresolved }]);
    // The same class with a subnet of the cluster launches, in that subnet's zone.
    const ok = provisionerWorld({ pods });
    const launched = await run(parseInput(unschedulableEvent(pods)), {
      ...ok.deps,
      resolver: new Ec2NodeClassResolver(accountLookups(account('karpenter-demo'), { placeholderZones: [] }), '1.32'),
    });
    expect(launched.launched.map((l) => l.zone)).toEqual(['ap-northeast-2a']);
  });

  it('a resolution that fails otherwise (throttled) fails the pass before any claim is created', async () => {
    const pods = [pendingPod('web-0', '1')];
    const { w, deps } = provisionerWorld({ pods });
    const resolver = { resolve: async () => Promise.reject(new TransientError('DescribeSubnets: Request limit exceeded.')) };
    await expect(run(parseInput(unschedulableEvent(pods)), { ...deps, resolver })).rejects.toThrow(TransientError);
    expect(await w.store.list()).toEqual([]);
  });
});
