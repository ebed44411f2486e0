import { describe, expect, it } from 'vitest';
import { MaxLaunchTemplateNameLength, buildLaunchRequests, catalogArchitecture, launchTemplateName } from '../../../shared/aws/ec2.ts';
import { EC2NodeClassSchema } from '../../../shared/api/nodepool.ts';
import { nodeClaim } from '../../fakes/index.ts';

const cluster = {
  name: 'karpenter-demo',
  endpoint: 'https://ABC.gr7.ap-northeast-2.eks.amazonaws.com',
  certificateAuthority: 'Q0E=',
  serviceCidr: '10.100.0.0/16',
  kubernetesVersion: '1.32',
};
/** A valid Kubernetes name of the longest length (253). */
const longName = (tail: string) => `${'team-payments-production-general-purpose-'.repeat(6)}`.slice(0, 253 - tail.length) + tail;
const Ec2NamePattern = /^[a-zA-Z0-9().\-/_]+$/;

describe('launch template names (EC2: 3–128 characters of [a-zA-Z0-9().-/_])', () => {
  it('a short EC2NodeClass name is kept whole: nodefleet/<cluster>/<class>/<hash>', () => {
    expect(launchTemplateName('karpenter-demo', 'default', '{}')).toMatch(/^nodefleet\/karpenter-demo\/default\/[0-9a-f]{16}$/);
  });

  it('a 253-character class name is cut to fit; two classes sharing the cut still get their own templates', () => {
    const a = launchTemplateName('karpenter-demo', longName('a'), '{}');
    const b = launchTemplateName('karpenter-demo', longName('b'), '{}');
    for (const n of [a, b]) {
      expect(n.length).toBe(MaxLaunchTemplateNameLength);
      expect(n).toMatch(Ec2NamePattern);
      expect(n.startsWith('nodefleet/karpenter-demo/team-payments-production-')).toBe(true);
    }
    expect(a).not.toBe(b);
    expect(launchTemplateName('karpenter-demo', longName('a'), '{"x":1}')).not.toBe(a);
  });

  it('a 100-character cluster name (EKS maximum) leaves no room for the class name: it is dropped', () => {
    const n = launchTemplateName('c'.repeat(100), longName('a'), '{}');
    expect(n.length).toBeLessThanOrEqual(MaxLaunchTemplateNameLength);
    expect(n).toMatch(new RegExp(`^nodefleet/c{100}/[0-9a-f]{16}$`));
  });

  it('CreateFleet names the template CreateLaunchTemplate creates, within the limit, for a long class name', () => {
    const name = longName('z');
    const nc = EC2NodeClassSchema.parse({
      apiVersion: 'karpenter.k8s.aws/v1',
      kind: 'EC2NodeClass',
      metadata: { name },
      spec: {
        role: 'KarpenterNodeRole-karpenter-demo',
        amiSelectorTerms: [{ alias: 'al2023@latest' }],
        subnetSelectorTerms: [{ id: 'subnet-a' }],
        securityGroupSelectorTerms: [{ id: 'sg-1' }],
      },
    });
    const claim = nodeClaim({ name: 'long-abcde', cluster: 'karpenter-demo', nodeClass: name, labels: { 'karpenter.sh/nodepool': 'default' } });
    const resolved = {
      subnets: [{ subnetId: 'subnet-a', zone: 'ap-northeast-2a', availableIpAddressCount: 100 }],
      securityGroupIds: ['sg-1'],
      images: { amd64: 'ami-0amd64' },
    };
    const r = buildLaunchRequests(claim, { instanceTypes: ['m5.large'], zones: ['ap-northeast-2a'], capacityTypes: ['on-demand'] }, nc, resolved, {
      cluster,
      architectureOf: catalogArchitecture,
    });
    const lt = r.launchTemplates[0].LaunchTemplateName;
    expect(lt.length).toBeLessThanOrEqual(MaxLaunchTemplateNameLength);
    expect(r.createFleet.LaunchTemplateConfigs?.[0].LaunchTemplateSpecification?.LaunchTemplateName).toBe(lt);
  });
});
