import { beforeEach, describe, expect, it } from 'vitest';
import { mockClient } from 'aws-sdk-client-mock';
import { DeleteLaunchTemplateCommand, DescribeLaunchTemplatesCommand, EC2Client } from '@aws-sdk/client-ec2';
import { Ec2CloudProvider, LaunchTemplateMinAgeSeconds, guessArchitecture } from '../../../shared/aws/ec2.ts';
import { StaticNodeClassResolver } from '../../../shared/aws/node-class-resolver.ts';
import type { CloudInstance } from '../../../shared/api/ports.ts';

const ec2 = mockClient(EC2Client);
const cluster = { name: 'karpenter-demo', endpoint: 'https://x', certificateAuthority: 'Q0E=', serviceCidr: '10.100.0.0/16', kubernetesVersion: '1.32' };
const provider = () =>
  new Ec2CloudProvider({
    ec2: new EC2Client({ region: 'us-east-1' }),
    resolver: new StaticNodeClassResolver({ subnets: [], securityGroupIds: [], images: {} }),
    cluster,
    architectureOf: guessArchitecture,
  });
const nowMs = Date.parse('2026-01-01T01:00:00Z');
const ago = (s: number) => new Date(nowMs - s * 1000);
const instance = (id: string, templateId: string, state: CloudInstance['state'] = 'running'): CloudInstance => ({
  instanceId: id,
  instanceType: 'm5.large',
  zone: 'us-east-1a',
  capacityType: 'on-demand',
  state,
  launchTime: '',
  tags: { 'aws:ec2launchtemplate:id': templateId },
});

describe('launch-template GC (Ec2CloudProvider.collectLaunchTemplates)', () => {
  beforeEach(() => {
    ec2.reset();
    ec2.on(DeleteLaunchTemplateCommand).resolves({});
  });

  it("deletes the cluster's templates older than the minimum age that no live instance was launched from", async () => {
    ec2.on(DescribeLaunchTemplatesCommand).resolves({
      LaunchTemplates: [
        { LaunchTemplateId: 'lt-used', LaunchTemplateName: 'nodefleet/karpenter-demo/default/used', CreateTime: ago(3600) },
        { LaunchTemplateId: 'lt-old', LaunchTemplateName: 'nodefleet/karpenter-demo/default/old', CreateTime: ago(LaunchTemplateMinAgeSeconds + 1) },
        { LaunchTemplateId: 'lt-young', LaunchTemplateName: 'nodefleet/karpenter-demo/default/young', CreateTime: ago(LaunchTemplateMinAgeSeconds - 1) },
        { LaunchTemplateId: 'lt-ended', LaunchTemplateName: 'nodefleet/karpenter-demo/default/ended', CreateTime: ago(3600) },
      ],
    });
    const deleted = await provider().collectLaunchTemplates([instance('i-1', 'lt-used'), instance('i-2', 'lt-ended', 'terminated')], nowMs);
    expect(deleted.sort()).toEqual(['nodefleet/karpenter-demo/default/ended', 'nodefleet/karpenter-demo/default/old']);
    expect(
      ec2
        .commandCalls(DeleteLaunchTemplateCommand)
        .map((c) => c.args[0].input.LaunchTemplateId)
        .sort(),
    ).toEqual(['lt-ended', 'lt-old']);
    expect(ec2.commandCalls(DescribeLaunchTemplatesCommand)[0].args[0].input.Filters).toEqual([
      { Name: 'tag:nodefleet.io/cluster', Values: ['karpenter-demo'] },
    ]);
  });

  it('a template deleted meanwhile (not found) is no failure and not reported', async () => {
    ec2
      .on(DescribeLaunchTemplatesCommand)
      .resolves({ LaunchTemplates: [{ LaunchTemplateId: 'lt-gone', LaunchTemplateName: 'nodefleet/karpenter-demo/default/gone', CreateTime: ago(3600) }] });
    ec2.on(DeleteLaunchTemplateCommand).rejects(Object.assign(new Error('gone'), { name: 'InvalidLaunchTemplateId.NotFound' }));
    expect(await provider().collectLaunchTemplates([], nowMs)).toEqual([]);
  });
});
