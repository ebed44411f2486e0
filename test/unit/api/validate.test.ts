import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { cronProblem, parseNodeClass, parseNodePool, validateObject, validateYamlText } from '../../../shared/api/validate.ts';
import { ValidationError } from '../../../shared/api/errors.ts';
import { NodePoolDefaults } from '../../../shared/api/nodepool.ts';

const casesDir = join(import.meta.dirname, '../../cases');

function nodePool(spec: Record<string, unknown> = {}, template: Record<string, unknown> = {}) {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: 'default' },
    spec: {
      template: {
        spec: {
          nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
          requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot', 'on-demand'] }],
          ...template,
        },
      },
      ...spec,
    },
  };
}

function nodeClass(spec: Record<string, unknown> = {}) {
  return {
    apiVersion: 'karpenter.k8s.aws/v1',
    kind: 'EC2NodeClass',
    metadata: { name: 'default' },
    spec: {
      amiSelectorTerms: [{ alias: 'al2023@latest' }],
      role: 'KarpenterNodeRole-demo',
      subnetSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'demo' } }],
      securityGroupSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'demo' } }],
      ...spec,
    },
  };
}

function requirement(r: Record<string, unknown>) {
  return nodePool({}, { requirements: [r] });
}

describe('parseNodePool', () => {
  it('applies Karpenter defaults', () => {
    const np = parseNodePool(nodePool());
    expect(np.spec.disruption).toEqual({
      consolidationPolicy: 'WhenEmptyOrUnderutilized',
      consolidateAfter: '0s',
      budgets: [{ nodes: '10%' }],
    });
    expect(np.spec.template.spec.expireAfter).toBe(NodePoolDefaults.expireAfter);
  });

  it('throws ValidationError carrying every problem', () => {
    const bad = requirement({ key: 'topology.kubernetes.io/zone', operator: 'Equals', values: ['us-east-1a'] });
    let err: unknown;
    try {
      parseNodePool(bad);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as ValidationError).problems).toEqual([
      'spec.template.spec.requirements[0].operator: unsupported operator "Equals"; valid operators are In, NotIn, Exists, DoesNotExist, Gt, Lt, Gte, Lte',
    ]);
  });
});

describe('NodePool errors a Karpenter user can act on', () => {
  it('misspelled operator lists the valid ones and suggests the closest', () => {
    expect(validateObject(requirement({ key: 'kubernetes.io/arch', operator: 'Inn', values: ['amd64'] }))).toEqual([
      'spec.template.spec.requirements[0].operator: unsupported operator "Inn" (did you mean "In"?); valid operators are In, NotIn, Exists, DoesNotExist, Gt, Lt, Gte, Lte',
    ]);
  });

  it('Gt/Lt/Gte/Lte need exactly one non-negative integer', () => {
    const msg = (op: string, values: unknown) => validateObject(requirement({ key: 'karpenter.k8s.aws/instance-cpu', operator: op, values }));
    expect(msg('Gt', ['large'])).toEqual([
      'spec.template.spec.requirements[0].values: operator Gt needs exactly one non-negative integer value, got ["large"]',
    ]);
    expect(msg('Lt', ['-1'])).toHaveLength(1);
    expect(msg('Gte', ['1', '2'])).toHaveLength(1);
    expect(msg('Lte', [])).toHaveLength(1);
    expect(msg('Gt', ['4'])).toEqual([]);
    expect(msg('Lte', ['0'])).toEqual([]);
  });

  it('In needs a value, Exists/DoesNotExist accept (and ignore) values as Karpenter does, minValues at most the values', () => {
    expect(validateObject(requirement({ key: 'kubernetes.io/arch', operator: 'In', values: [] }))).toEqual([
      'spec.template.spec.requirements[0].values: operator In needs at least one value',
    ]);
    // The API server with Karpenter's CRD accepts these (test/real/validate-differential.ts).
    expect(validateObject(requirement({ key: 'kubernetes.io/arch', operator: 'Exists', values: ['amd64'] }))).toEqual([]);
    expect(validateObject(requirement({ key: 'kubernetes.io/arch', operator: 'DoesNotExist', values: ['amd64'] }))).toEqual([]);
    expect(validateObject(requirement({ key: 'karpenter.k8s.aws/instance-family', operator: 'In', values: ['m5', 'c5'], minValues: 3 }))[0]).toMatch(
      /^spec\.template\.spec\.requirements\[0\]\.minValues: minValues 3 is more than the 2 value\(s\) listed/,
    );
    expect(validateObject(requirement({ key: 'karpenter.k8s.aws/instance-family', operator: 'Exists', minValues: 3 }))).toEqual([]);
  });

  it('missing nodeClassRef says what to write', () => {
    const np = nodePool();
    delete (np.spec.template.spec as Record<string, unknown>).nodeClassRef;
    expect(validateObject(np)).toEqual([
      'spec.template.spec.nodeClassRef: required: the EC2NodeClass this NodePool launches with, e.g. nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}',
    ]);
  });

  it('unknown fields are named, with a suggestion or the v1 move', () => {
    expect(validateObject(nodePool({ disruption: { consolidationPolicy: 'WhenEmpty', consolidateAfterr: '30s' } }))).toEqual([
      'spec.disruption.consolidateAfterr: unknown field "consolidateAfterr" (did you mean "consolidateAfter"?)',
    ]);
    expect(validateObject(nodePool({ disruption: { expireAfter: '720h' } }))).toEqual([
      'spec.disruption.expireAfter: unknown field "expireAfter" (moved to spec.template.spec.expireAfter in karpenter.sh/v1)',
    ]);
  });

  it('rejects unknown karpenter.sh keys and restricted domains, accepts well-known and custom ones', () => {
    expect(validateObject(requirement({ key: 'karpenter.sh/capacity-typ', operator: 'In', values: ['spot'] }))[0]).toContain(
      'did you mean "karpenter.sh/capacity-type"?',
    );
    expect(validateObject(requirement({ key: 'karpenter.k8s.aws/instance-cpus', operator: 'Exists' }))[0]).toContain('"karpenter.k8s.aws" is restricted');
    expect(validateObject(requirement({ key: 'kubernetes.io/hostname', operator: 'Exists' }))[0]).toContain('"kubernetes.io/hostname" is restricted');
    for (const key of [
      'node.kubernetes.io/instance-type',
      'kubernetes.io/test',
      'subdomain.k8s.io/test',
      'topology.k8s.aws/zone-id',
      'karpenter.k8s.aws/instance-gpu-count',
      'example.com/team',
      'team',
    ]) {
      expect(validateObject(requirement({ key, operator: 'Exists' }))).toEqual([]);
    }
    const labelled = nodePool();
    (labelled.spec.template as Record<string, unknown>).metadata = { labels: { 'karpenter.sh/team': 'a', team: 'b' } };
    expect(validateObject(labelled)).toEqual([
      'spec.template.metadata.labels.karpenter.sh/team: label domain "karpenter.sh" is restricted: "karpenter.sh/team" cannot be set in a NodePool template',
    ]);
  });

  it('budgets: duration only with schedule, cron syntax checked', () => {
    expect(validateObject(nodePool({ disruption: { budgets: [{ nodes: '0', duration: '8h' }] } }))).toEqual([
      "spec.disruption.budgets[0].schedule: required when duration is set ('duration' must be set with 'schedule')",
    ]);
    expect(validateObject(nodePool({ disruption: { budgets: [{ nodes: '0', schedule: '0 9 * * mon-fri' }] } }))).toEqual([
      "spec.disruption.budgets[0].duration: required when schedule is set ('schedule' must be set with 'duration')",
    ]);
    expect(validateObject(nodePool({ disruption: { budgets: [{ nodes: '0', schedule: '0 25 * * *', duration: '8h' }] } }))[0]).toMatch(
      /^spec\.disruption\.budgets\[0\]\.schedule: "0 25 \* \* \*" is not a valid cron schedule/,
    );
    expect(validateObject(nodePool({ disruption: { budgets: [{ nodes: '20%', schedule: '@daily', duration: '10m', reasons: ['Drifted'] }] } }))).toEqual([]);
    // reasons is a set in the CRD: the API server refuses a repeated reason.
    expect(validateObject(nodePool({ disruption: { budgets: [{ nodes: '1', reasons: ['Empty', 'Drifted', 'Empty'] }] } }))).toEqual([
      'spec.disruption.budgets[0].reasons[2]: duplicate reason "Empty"',
    ]);
    expect(validateObject(nodePool({ disruption: { budgets: [{ nodes: '10 %' }] } }))).toEqual([
      'spec.disruption.budgets[0].nodes: "10 %" must be a node count such as 5 or a percentage such as 10%',
    ]);
  });

  it('checks cron schedules like Karpenter (5 fields or a macro, UTC)', () => {
    expect(cronProblem('0 9 * * 1-5')).toBeUndefined();
    expect(cronProblem('@hourly')).toBeUndefined();
    expect(cronProblem('@every 5m')).toContain('not a valid schedule macro');
    expect(cronProblem('TZ=UTC 0 9 * * *')).toContain('expected 5 fields');
  });

  it('names wrong types and the apiVersion', () => {
    const np = nodePool({ weight: 1.5 });
    np.apiVersion = 'karpenter.sh/v1beta1';
    expect(validateObject(np)).toEqual([
      'apiVersion: unsupported apiVersion "karpenter.sh/v1beta1"; expected karpenter.sh/v1 (migrate with the Karpenter v1 upgrade guide)',
      'spec.weight: must be a whole number, got number 1.5',
    ]);
  });
});

describe('EC2NodeClass', () => {
  it('accepts a typical v1 EC2NodeClass', () => {
    const nc = parseNodeClass(
      nodeClass({
        kubelet: { maxPods: 110, evictionHard: { 'memory.available': '5%' } },
        blockDeviceMappings: [{ deviceName: '/dev/xvda', rootVolume: true, ebs: { volumeSize: '100Gi', volumeType: 'gp3' } }],
      }),
    );
    expect(nc.spec.kubelet?.maxPods).toBe(110);
  });

  it('enforces role xor instanceProfile, alias alone, restricted tags', () => {
    expect(validateObject(nodeClass({ instanceProfile: 'p' }))).toEqual(["spec: must specify exactly one of ['role', 'instanceProfile']"]);
    expect(validateObject(nodeClass({ amiSelectorTerms: [{ alias: 'al2023@latest' }, { id: 'ami-1' }] }))).toEqual([
      "spec.amiSelectorTerms: 'alias' is mutually exclusive, cannot be set with a combination of other amiSelectorTerms",
    ]);
    expect(validateObject(nodeClass({ amiSelectorTerms: [{ id: 'ami-1' }] }))[0]).toMatch(
      /^spec\.amiFamily: required when amiSelectorTerms does not use an alias/,
    );
    expect(validateObject(nodeClass({ tags: { 'karpenter.sh/nodepool': 'x' } }))[0]).toContain('is restricted');
    expect(validateObject(nodeClass({ kubelet: { evictionHard: { 'memory.availble': '5%' } } }))[0]).toContain('unknown eviction signal');
  });
});

describe('validateYamlText', () => {
  it('reads multi-document files and unwraps Lists', () => {
    const text = [
      'apiVersion: v1',
      'kind: List',
      'items:',
      '  - {apiVersion: karpenter.sh/v1, kind: NodePool, metadata: {name: a}, spec: {template: {spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}, requirements: []}}}}',
      '---',
      '---',
      'apiVersion: apps/v1',
      'kind: Deployment',
      'metadata: {name: web}',
    ].join('\n');
    const r = validateYamlText(text, 'f.yaml');
    expect(r.problems).toEqual([]);
    expect(r.objects.map((o) => [o.kind, o.name, o.checked])).toEqual([
      ['NodePool', 'a', true],
      ['Deployment', 'web', false],
    ]);
  });

  it('prefixes each problem with file and kind/name, unknown fields (the likely typo) first', () => {
    const text =
      'apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: bad}\nspec:\n  template:\n    spec:\n      requirements: []\n      colour: blue\n';
    expect(validateYamlText(text, 'np.yaml').problems).toEqual([
      'np.yaml: NodePool/bad: spec.template.spec.colour: unknown field "colour" (allowed fields: nodeClassRef, taints, startupTaints, requirements, expireAfter, terminationGracePeriod)',
      'np.yaml: NodePool/bad: spec.template.spec.nodeClassRef: required: the EC2NodeClass this NodePool launches with, e.g. nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}',
    ]);
  });

  it('a misspelled field is reported before the required field it was meant to be', () => {
    const text = [
      'apiVersion: karpenter.sh/v1',
      'kind: NodePool',
      'metadata: {name: typo}',
      'spec:',
      '  template:',
      '    spec:',
      '      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}',
      '      requirments: []',
    ].join('\n');
    const problems = validateYamlText(text, 'np.yaml').problems;
    expect(problems[0]).toContain('spec.template.spec.requirments: unknown field "requirments" (did you mean "requirements"?)');
    expect(problems[1]).toContain('spec.template.spec.requirements: required');
  });

  it('shows only the first YAML syntax error of a document, with its line', () => {
    const text =
      'apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: x\nspec:\n  template:\n    spec:\n      requirements:\n        - key: a\n         operator: In\n';
    const problems = validateYamlText(text, 'np.yaml').problems;
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^np\.yaml: document 1: line \d+, column \d+: YAML syntax error: /);
  });

  it('shows the line of a YAML syntax error', () => {
    const text = 'apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: x\n   bad: indent\n';
    const problems = validateYamlText(text, 'np.yaml').problems;
    expect(problems.length).toBeGreaterThan(0);
    expect(problems[0]).toMatch(/^np\.yaml: document 1: line 4, column 9: YAML syntax error: Nested mappings are not allowed in compact mappings$/);
  });

  it('flags a misspelled Karpenter kind', () => {
    expect(validateYamlText('apiVersion: karpenter.sh/v1\nkind: NodePol\nmetadata: {name: x}\n', 'f.yaml').problems).toEqual([
      'f.yaml: NodePol/x: kind: unknown kind "NodePol" in karpenter.sh (did you mean "NodePool"?); nodefleet reads NodePool and EC2NodeClass',
    ]);
  });
});

describe.each(readdirSync(casesDir).filter((f) => f.endsWith('.yaml')))('case %s', (file) => {
  const c = parse(readFileSync(join(casesDir, file), 'utf8')) as { nodePools?: unknown[]; nodeClasses?: unknown[]; expect?: { errors?: string[] } };
  const problems = [...(c.nodePools ?? []), ...(c.nodeClasses ?? [])].flatMap((o) => validateObject(o));
  it(c.expect?.errors ? 'produces the expected errors' : 'has valid NodePools and EC2NodeClasses', () => {
    if (!c.expect?.errors) {
      expect(problems).toEqual([]);
      return;
    }
    expect(problems.length).toBeGreaterThan(0);
    const text = problems.join('\n').toLowerCase();
    for (const e of c.expect.errors) expect(text).toContain(e.toLowerCase());
  });
});
