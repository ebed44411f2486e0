/**
 * What one launch may send to EC2 (issue 24): EFA interfaces for a claim whose pods request
 * `vpc.amazonaws.com/efa` (as Karpenter's AWS provider builds them), EC2's 16 KB user data limit
 * (refused at validate and at launch, never sent), and CreateFleet's 50 LaunchTemplateConfigs.
 */
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { buildLaunchRequests, catalogArchitecture, MaxLaunchTemplateConfigs, MaxUserDataBytes, userDataFloorProblem } from '../../../shared/aws/ec2.ts';
import { chooseLaunch } from '../../../shared/launch/launch.ts';
import { Requirements } from '../../../shared/api/requirements.ts';
import { ValidationError } from '../../../shared/api/errors.ts';
import { EC2NodeClassSchema, type EC2NodeClass } from '../../../shared/api/nodepool.ts';
import { loadCatalog } from '../../../shared/catalog/index.ts';
import { MaxLaunchInstanceTypes } from '../../../shared/api/ports.ts';
import { validateFiles } from '../../../functions/cli/commands/validate.ts';
import { nodeClaim } from '../../fakes/index.ts';
import { nodeClass } from '../provisioner/world.ts';

const cluster = {
  name: 'demo',
  endpoint: 'https://ABC.gr7.us-east-1.eks.amazonaws.com',
  certificateAuthority: 'Q0E=',
  serviceCidr: '10.100.0.0/16',
  kubernetesVersion: '1.33',
};
const zones = ['us-east-1a', 'us-east-1b', 'us-east-1c'];
const resolved = {
  subnets: zones.map((zone, i) => ({ subnetId: `subnet-${i}`, zone, availableIpAddressCount: 100 })),
  securityGroupIds: ['sg-1', 'sg-2'],
  images: { amd64: 'ami-amd64', arm64: 'ami-arm64' },
  variants: { nvidia: { amd64: 'ami-nvidia', arm64: 'ami-nvidia-arm' } },
};
const ctx = { cluster, instanceProfileName: 'NodeProfile', architectureOf: catalogArchitecture };
const withSpec = (spec: Partial<EC2NodeClass['spec']>): EC2NodeClass => {
  const base = nodeClass();
  return { ...base, spec: { ...base.spec, ...spec } };
};
const efaClaim = (requests: Record<string, string> = { 'vpc.amazonaws.com/efa': '1', cpu: '4' }) =>
  nodeClaim({ name: 'train-abcde', nodePool: 'train', phase: 'Pending', labels: { 'karpenter.sh/nodepool': 'train' }, resources: { requests } });

describe('EFA: a claim requesting vpc.amazonaws.com/efa launches with EFA interfaces', () => {
  const types = loadCatalog({ region: 'us-east-1' }).filter((t) => ['m6idn.32xlarge', 'c6in.32xlarge', 'c5n.18xlarge'].includes(t.name));
  const launchOf = (claim: ReturnType<typeof efaClaim>) => {
    const choice = chooseLaunch(types, Requirements.fromSpecs([{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] }]), new Set())!;
    return buildLaunchRequests(
      claim,
      {
        instanceTypes: choice.instanceTypes,
        zones: choice.zones,
        capacityTypes: [choice.capacityType],
        offerings: choice.offerings,
        maxPods: choice.maxPods,
        efaCount: choice.efaCount,
      },
      withSpec({ kubelet: { maxPods: 110 } }),
      resolved,
      ctx,
    );
  };

  it("one interface per EFA device of the type (the catalog's count), card i, device 0 then 1, type efa, the class's groups; one launch template per count", () => {
    const r = launchOf(efaClaim());
    const byTemplate = new Map(r.launchTemplates.map((t) => [t.LaunchTemplateName, t.LaunchTemplateData!]));
    const shapes = r.createFleet.LaunchTemplateConfigs!.map((c) => {
      const data = byTemplate.get(c.LaunchTemplateSpecification!.LaunchTemplateName!)!;
      return {
        types: [...new Set(c.Overrides!.map((o) => String(o.InstanceType)))].sort(),
        interfaces: data.NetworkInterfaces,
        securityGroupIds: data.SecurityGroupIds,
      };
    });
    const efa = (card: number) => ({ NetworkCardIndex: card, DeviceIndex: card === 0 ? 0 : 1, InterfaceType: 'efa', Groups: ['sg-1', 'sg-2'] });
    expect(shapes.sort((a, b) => String(a.types[0]).localeCompare(String(b.types[0])))).toEqual([
      { types: ['c5n.18xlarge'], interfaces: [efa(0)], securityGroupIds: undefined },
      { types: ['c6in.32xlarge', 'm6idn.32xlarge'], interfaces: [efa(0), efa(1)], securityGroupIds: undefined },
    ]);
  });

  it('associatePublicIPAddress goes on every EFA interface', () => {
    const choice = chooseLaunch(types, Requirements.fromSpecs([]), new Set())!;
    const r = buildLaunchRequests(
      efaClaim(),
      { instanceTypes: choice.instanceTypes, zones: choice.zones, capacityTypes: ['on-demand'], offerings: choice.offerings, efaCount: choice.efaCount },
      withSpec({ associatePublicIPAddress: false, kubelet: { maxPods: 110 } }),
      resolved,
      ctx,
    );
    for (const t of r.launchTemplates)
      for (const ni of t.LaunchTemplateData!.NetworkInterfaces!) expect(ni).toMatchObject({ InterfaceType: 'efa', AssociatePublicIpAddress: false });
  });

  it('without the request, the same types launch with the default interface only', () => {
    const r = launchOf(efaClaim({ cpu: '4' }));
    expect(r.launchTemplates).toHaveLength(1);
    expect(r.launchTemplates[0].LaunchTemplateData!.NetworkInterfaces).toBeUndefined();
    expect(r.launchTemplates[0].LaunchTemplateData!.SecurityGroupIds).toEqual(['sg-1', 'sg-2']);
  });
});

describe("CreateFleet: at most 50 LaunchTemplateConfigs (EC2's limit)", () => {
  it('several AMIs × 60 types with distinct maxPods × 3 zones: the cheapest types that fit in 50 templates, every override of them', () => {
    // 60 types (amd64, Graviton and NVIDIA: three images), each planned with its own pod count: 60 templates unless capped.
    const catalogNames = loadCatalog({ region: 'us-east-1' }).map((t) => t.name);
    const names = [...catalogNames.filter((n) => n.startsWith('g4dn.')), ...catalogNames.filter((n) => /^(m5|m6g|c5|c6g|r5|r6g)\./.test(n))].slice(
      0,
      MaxLaunchInstanceTypes,
    );
    expect(names).toHaveLength(MaxLaunchInstanceTypes);
    const maxPods = Object.fromEntries(names.map((n, i) => [n, 10 + i]));
    const r = buildLaunchRequests(efaClaim({ cpu: '1' }), { instanceTypes: names, zones, capacityTypes: ['spot'], maxPods }, nodeClass(), resolved, ctx);
    const configs = r.createFleet.LaunchTemplateConfigs!;
    expect(configs).toHaveLength(MaxLaunchTemplateConfigs);
    expect(r.launchTemplates).toHaveLength(MaxLaunchTemplateConfigs);
    const launched = configs.flatMap((c) => c.Overrides!.map((o) => o.InstanceType));
    expect([...new Set(launched)]).toEqual(names.slice(0, MaxLaunchTemplateConfigs));
    expect(launched).toHaveLength(MaxLaunchTemplateConfigs * zones.length);
    expect(new Set(configs.flatMap((c) => c.Overrides!.map((o) => o.ImageId)))).toEqual(new Set(['ami-amd64', 'ami-arm64', 'ami-nvidia']));
    // Every template a config names is one the launch creates.
    expect(new Set(configs.map((c) => c.LaunchTemplateSpecification!.LaunchTemplateName))).toEqual(new Set(r.launchTemplates.map((t) => t.LaunchTemplateName)));
  });
});

describe("user data over EC2's 16 KB (raw, before base64) is never sent", () => {
  const yamlOf = (spec: Record<string, unknown>) =>
    stringify({ apiVersion: 'karpenter.k8s.aws/v1', kind: 'EC2NodeClass', metadata: { name: 'big' }, spec: { ...nodeClass().spec, ...spec } });
  const script = (bytes: number) => `#!/bin/bash\n${'#'.repeat(bytes - 13)}\n`;
  const launch = (userData: string, spec: Record<string, unknown> = {}) =>
    buildLaunchRequests(
      efaClaim({ cpu: '1' }),
      { instanceTypes: ['m5.large'], zones: ['us-east-1a'], capacityTypes: ['on-demand'] },
      EC2NodeClassSchema.parse({ ...nodeClass(), spec: { ...nodeClass().spec, ...spec, userData } }),
      resolved,
      ctx,
    );

  it('validate refuses a class whose user data alone is over the limit, naming spec.userData', () => {
    for (const spec of [
      { userData: script(MaxUserDataBytes + 1) },
      { amiSelectorTerms: [{ alias: 'windows2022@latest' }], userData: 'Write-Host "x"\n'.repeat(1200) },
    ]) {
      const r = validateFiles([{ file: 'nc.yaml', text: yamlOf(spec) }]);
      expect(r.exitCode).toBe(1);
      expect(r.lines).toHaveLength(1);
      expect(r.lines[0]).toMatch(
        /^nc\.yaml: EC2NodeClass\/big: spec\.userData: the user data with the least nodefleet adds to it is \d+ bytes, over EC2's user data limit of 16384 bytes/,
      );
    }
    expect(validateFiles([{ file: 'nc.yaml', text: yamlOf({ userData: script(8000) }) }]).exitCode).toBe(0);
  });

  it('the launch refuses the merged user data over the limit with one line, before any request', () => {
    expect(() => launch(script(MaxUserDataBytes + 1))).toThrow(ValidationError);
    // Under the limit alone, over it once nodefleet's NodeConfig part is added: validate cannot know (no cluster CA), the launch refuses.
    const near = script(MaxUserDataBytes - 1000);
    expect(userDataFloorProblem(EC2NodeClassSchema.parse({ ...nodeClass(), spec: { ...nodeClass().spec, userData: near } }))).toBeUndefined();
    const bigCluster = { ...ctx, cluster: { ...cluster, certificateAuthority: 'Q'.repeat(1500) } };
    const nc = EC2NodeClassSchema.parse({ ...nodeClass(), spec: { ...nodeClass().spec, userData: near } });
    let message = '';
    try {
      buildLaunchRequests(
        efaClaim({ cpu: '1' }),
        { instanceTypes: ['m5.large'], zones: ['us-east-1a'], capacityTypes: ['on-demand'] },
        nc,
        resolved,
        bigCluster,
      );
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toMatch(
      /^ec2nodeclass default: spec\.userData: the user data nodefleet would send \(the class's merged with its bootstrap\) is \d+ bytes, over EC2's user data limit of 16384 bytes/,
    );
    expect(message).not.toContain('\n');
    expect(launch(script(4000)).launchTemplates).toHaveLength(1);
  });
});
