/**
 * Pods requesting `vpc.amazonaws.com/efa` through the real provisioner and EC2 cloud provider: the
 * claim goes to a type with EFA devices and its launch templates carry one EFA interface per device
 * (as Karpenter's AWS provider builds them); other pods' launches keep the default interface.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { mockClient } from 'aws-sdk-client-mock';
import { CreateFleetCommand, CreateLaunchTemplateCommand, DescribeLaunchTemplatesCommand, EC2Client, type CreateFleetCommandInput } from '@aws-sdk/client-ec2';
import { run, parseInput } from '../../../functions/provisioner/handler.ts';
import { Ec2CloudProvider, catalogArchitecture } from '../../../shared/aws/ec2.ts';
import { StaticNodeClassResolver } from '../../../shared/aws/node-class-resolver.ts';
import { instanceTypeInfos } from '../../../shared/catalog/index.ts';
import type { Pod } from '../../../shared/api/kube.ts';
import { Region, pendingPod, provisionerWorld, unschedulableEvent } from './world.ts';

const resolved = {
  subnets: [{ subnetId: 'subnet-0a', zone: 'ap-northeast-2a', zoneId: 'apne2-az1', availableIpAddressCount: 200 }],
  securityGroupIds: ['sg-0a'],
  images: { amd64: 'ami-0amd64', arm64: 'ami-0arm64' },
};
const cluster = {
  name: 'karpenter-demo',
  endpoint: 'https://x.example',
  certificateAuthority: 'Q0E=',
  serviceCidr: '10.100.0.0/16',
  kubernetesVersion: '1.32',
};

describe('provisioner: EFA pods launch with EFA interfaces', () => {
  const ec2 = mockClient(EC2Client);
  beforeEach(() => {
    ec2.reset();
    ec2.on(DescribeLaunchTemplatesCommand).rejects(Object.assign(new Error('not found'), { name: 'InvalidLaunchTemplateName.NotFoundException' }));
    ec2.on(CreateLaunchTemplateCommand).resolves({});
    let seq = 0;
    ec2.on(CreateFleetCommand).callsFake((input: CreateFleetCommandInput) => {
      const o = input.LaunchTemplateConfigs![0].Overrides![0];
      return {
        Instances: [{ InstanceIds: [`i-0000000000000000${++seq}`], InstanceType: o.InstanceType, LaunchTemplateAndOverrides: { Overrides: o } }],
        Errors: [],
      };
    });
  });

  function world(pods: Pod[]) {
    const x = provisionerWorld({ pods, capacityTypes: ['on-demand'] });
    const resolver = new StaticNodeClassResolver(resolved);
    const cloud = new Ec2CloudProvider({ ec2: new EC2Client({ region: Region }), resolver, cluster, architectureOf: catalogArchitecture });
    return { ...x, deps: { ...x.deps, cloud, resolver } };
  }
  const efaPod = (name: string) => {
    const p = pendingPod(name);
    const c = p.spec.containers[0];
    c.resources = { requests: { ...(c.resources?.requests ?? {}), 'vpc.amazonaws.com/efa': '1' }, limits: { 'vpc.amazonaws.com/efa': '1' } };
    return p;
  };
  const efaOf = (type: string) => instanceTypeInfos.find((t) => t.name === type)!.efaCount;

  it('every template of the fleet has one efa interface per device of its types (card i, device 0 then 1), and the types all have EFA', async () => {
    const pods = [efaPod('train-0')];
    const { deps } = world(pods);
    const summary = await run(parseInput(unschedulableEvent(pods)), deps);
    expect(summary.failed).toEqual([]);
    expect(summary.launched).toHaveLength(1);
    const templates = new Map(
      ec2.commandCalls(CreateLaunchTemplateCommand).map((c) => [c.args[0].input.LaunchTemplateName, c.args[0].input.LaunchTemplateData!]),
    );
    const configs = ec2.commandCalls(CreateFleetCommand)[0].args[0].input.LaunchTemplateConfigs!;
    for (const cfg of configs) {
      const data = templates.get(cfg.LaunchTemplateSpecification!.LaunchTemplateName)!;
      const counts = new Set(cfg.Overrides!.map((o) => efaOf(String(o.InstanceType))));
      expect(counts.size).toBe(1);
      const n = [...counts][0];
      expect(n).toBeGreaterThan(0);
      expect(data.NetworkInterfaces).toEqual(
        Array.from({ length: n }, (_, i) => ({ NetworkCardIndex: i, DeviceIndex: i === 0 ? 0 : 1, InterfaceType: 'efa', Groups: ['sg-0a'] })),
      );
      expect(data.SecurityGroupIds).toBeUndefined();
    }
  });

  it('a pod without the request: no EFA interface', async () => {
    const pods = [pendingPod('web-0')];
    const { deps } = world(pods);
    await run(parseInput(unschedulableEvent(pods)), deps);
    for (const c of ec2.commandCalls(CreateLaunchTemplateCommand)) {
      expect(c.args[0].input.LaunchTemplateData!.NetworkInterfaces).toBeUndefined();
      expect(c.args[0].input.LaunchTemplateData!.SecurityGroupIds).toEqual(['sg-0a']);
    }
  });
});
