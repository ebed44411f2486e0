/**
 * The provisioner places claims only where the EC2NodeClass's subnets are: the resolver the launch
 * uses (here a static one over two of ap-northeast-2's four zones) decides the zones the scheduler
 * may use, so the first CreateFleet goes to a covered zone even when the cheapest offering is in
 * an uncovered one; a `topology.k8s.aws/zone-id` requirement restricts placement by the subnets'
 * zone ids, and the launched claim carries the zone id.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { mockClient } from 'aws-sdk-client-mock';
import { CreateFleetCommand, CreateLaunchTemplateCommand, DescribeLaunchTemplatesCommand, EC2Client, type CreateFleetCommandInput } from '@aws-sdk/client-ec2';
import { run, parseInput } from '../../../functions/provisioner/handler.ts';
import { Ec2CloudProvider, catalogArchitecture } from '../../../shared/aws/ec2.ts';
import { StaticNodeClassResolver, type ResolvedNodeClass } from '../../../shared/aws/node-class-resolver.ts';
import { shippedRegionData } from '../../../shared/catalog/index.ts';
import type { Pod } from '../../../shared/api/kube.ts';
import { Region, pendingPod, provisionerWorld, unschedulableEvent } from './world.ts';

const Covered = ['ap-northeast-2b', 'ap-northeast-2c'];
const resolved: ResolvedNodeClass = {
  subnets: [
    { subnetId: 'subnet-0b', zone: 'ap-northeast-2b', zoneId: 'apne2-az2', availableIpAddressCount: 200 },
    { subnetId: 'subnet-0c', zone: 'ap-northeast-2c', zoneId: 'apne2-az3', availableIpAddressCount: 200 },
  ],
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

/** Spot sold only in ap-northeast-2a (uncovered), at half the on-demand price, for every type: the cheapest offering is where no subnet is. */
const cheapestInUncoveredZone = {
  get: async () => ({
    region: Region,
    spotUsdPerHour: Object.fromEntries(Object.entries(shippedRegionData(Region).onDemandUsdPerHour).map(([t, p]) => [t, { 'ap-northeast-2a': p / 2 }])),
  }),
};

describe('provisioner: offerings only in the zones of the node class subnets', () => {
  const ec2 = mockClient(EC2Client);
  beforeEach(() => {
    ec2.reset();
    ec2.on(DescribeLaunchTemplatesCommand).resolves({ LaunchTemplates: [{ LaunchTemplateName: 'x' }] });
    ec2.on(CreateLaunchTemplateCommand).resolves({});
    // EC2 launches the first override it is given (one instance per fleet).
    let seq = 0;
    ec2.on(CreateFleetCommand).callsFake((input: CreateFleetCommandInput) => {
      const o = input.LaunchTemplateConfigs![0].Overrides![0];
      return {
        Instances: [
          {
            InstanceIds: [`i-0000000000000000${++seq}`],
            InstanceType: o.InstanceType,
            Lifecycle: input.TargetCapacitySpecification!.DefaultTargetCapacityType === 'spot' ? 'spot' : undefined,
            LaunchTemplateAndOverrides: { Overrides: o },
          },
        ],
        Errors: [],
      };
    });
  });

  /** The world with the real EC2 cloud provider and the provisioner on one resolver, as buildDeps wires them. */
  function world(pods: Pod[], capacityTypes: string[]) {
    const x = provisionerWorld({ pods, capacityTypes });
    const resolver = new StaticNodeClassResolver(resolved);
    const cloud = new Ec2CloudProvider({ ec2: new EC2Client({ region: Region }), resolver, cluster, architectureOf: catalogArchitecture });
    return { ...x, deps: { ...x.deps, cloud, resolver, catalogRefresher: cheapestInUncoveredZone } };
  }
  const fleetZones = () =>
    ec2.commandCalls(CreateFleetCommand).map((c) => [...new Set(c.args[0].input.LaunchTemplateConfigs![0].Overrides!.map((o) => o.AvailabilityZone))]);

  it('the cheapest offering in an uncovered zone: the claim launches in a covered zone on the first CreateFleet', async () => {
    const pods = [pendingPod('web-0')];
    const { deps } = world(pods, ['spot', 'on-demand']);
    const summary = await run(parseInput(unschedulableEvent(pods)), deps);
    expect(summary.failed).toEqual([]);
    expect(summary.launched).toHaveLength(1);
    expect(Covered).toContain(summary.launched[0].zone);
    expect(summary.launched[0].capacityType).toBe('on-demand');
    expect(fleetZones()).toHaveLength(1);
    for (const z of fleetZones()[0]) expect(Covered).toContain(z);
  });

  it('zone-spread replicas get claims only in the covered zones, and each claim carries its zone id', async () => {
    const pods = ['web-0', 'web-1', 'web-2', 'web-3'].map((n) => {
      const p = pendingPod(n);
      p.metadata.labels = { app: 'web' };
      p.spec.topologySpreadConstraints = [
        { maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { app: 'web' } } },
      ];
      return p;
    });
    const { w, deps } = world(pods, ['on-demand']);
    const summary = await run(parseInput(unschedulableEvent(pods)), deps);
    expect(summary.failed).toEqual([]);
    expect(summary.unschedulable).toEqual([]);
    expect(new Set(summary.launched.map((l) => l.zone))).toEqual(new Set(Covered));
    const claims = await w.store.list();
    expect(claims.map((c) => [c.zone, c.labels['topology.k8s.aws/zone-id']]).sort()).toEqual(
      summary.launched.map((l) => [l.zone, l.zone === 'ap-northeast-2b' ? 'apne2-az2' : 'apne2-az3']).sort(),
    );
  });

  it('a pod requiring a zone id lands in that zone; a zone id no subnet has leaves it pending', async () => {
    const wants = (name: string, zoneId: string) => {
      const p = pendingPod(name);
      p.spec.nodeSelector = { 'topology.k8s.aws/zone-id': zoneId };
      return p;
    };
    const pods = [wants('in-az3', 'apne2-az3'), wants('in-az1', 'apne2-az1')];
    const { deps } = world(pods, ['on-demand']);
    const summary = await run(parseInput(unschedulableEvent(pods)), deps);
    expect(summary.launched.map((l) => l.zone)).toEqual(['ap-northeast-2c']);
    expect(summary.unschedulable.map((u) => u.pod)).toEqual(['default/in-az1']);
    expect(summary.unschedulable[0].reasons.default).toMatch(/no instance type satisfies/);
  });
});
