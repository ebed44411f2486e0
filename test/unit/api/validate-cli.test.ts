import { describe, expect, it } from 'vitest';
import { validateFiles } from '../../../functions/cli/commands/validate.ts';

const good = `apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - {key: kubernetes.io/arch, operator: In, values: [amd64]}
        - {key: kubernetes.io/os, operator: In, values: [linux]}
        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
        - {key: karpenter.k8s.aws/instance-category, operator: In, values: [c, m, r]}
`;

describe('validate command', () => {
  it('prints one summary line per valid object and exits 0', () => {
    expect(validateFiles([{ file: 'nodepool.yaml', text: good }])).toEqual({
      exitCode: 0,
      lines: [
        'nodepool.yaml: NodePool/default: valid (4 requirements, budgets 10%, expireAfter 720h, WhenEmptyOrUnderutilized after 0s, nodeClassRef EC2NodeClass/default)',
      ],
    });
  });

  it('prints the problems and the valid objects of every file, and exits 1', () => {
    const bad = good.replace('operator: In, values: [amd64]', 'operator: Gt, values: [amd64]').replace('metadata: {name: default}', 'metadata: {name: other}');
    const r = validateFiles([
      { file: 'a.yaml', text: good },
      { file: 'b.yaml', text: bad },
      { file: 'c.yaml', readError: 'ENOENT' },
    ]);
    expect(r.exitCode).toBe(1);
    expect(r.lines).toEqual([
      'a.yaml: NodePool/default: valid (4 requirements, budgets 10%, expireAfter 720h, WhenEmptyOrUnderutilized after 0s, nodeClassRef EC2NodeClass/default)',
      'b.yaml: NodePool/other: spec.template.spec.requirements[0].values: operator Gt needs exactly one non-negative integer value, got ["amd64"]',
      'c.yaml: cannot read file: ENOENT',
    ]);
  });

  it('treats a file without objects as a problem', () => {
    expect(validateFiles([{ file: 'empty.yaml', text: '# nothing\n' }])).toEqual({
      exitCode: 1,
      lines: ['empty.yaml: no objects found (expected NodePool or EC2NodeClass YAML)'],
    });
  });

  it('checks each file on its own: the same name in two files is fine, twice in one file is not', () => {
    const valid = 'valid (4 requirements, budgets 10%, expireAfter 720h, WhenEmptyOrUnderutilized after 0s, nodeClassRef EC2NodeClass/default)';
    expect(
      validateFiles([
        { file: 'a.yaml', text: good },
        { file: 'b.yaml', text: good },
      ]),
    ).toEqual({ exitCode: 0, lines: [`a.yaml: NodePool/default: ${valid}`, `b.yaml: NodePool/default: ${valid}`] });
    expect(validateFiles([{ file: 'a.yaml', text: `${good}---\n${good}` }]).lines).toEqual([
      'a.yaml: NodePool/default: metadata.name: duplicate NodePool "default" in this file; names are cluster-wide',
    ]);
  });

  it('--cluster: names unique across the files, and every nodeClassRef defined in one of them', () => {
    const r = validateFiles(
      [
        { file: 'a.yaml', text: good },
        { file: 'b.yaml', text: good },
      ],
      { cluster: true },
    );
    expect(r.exitCode).toBe(1);
    expect(r.lines).toEqual([
      'a.yaml: NodePool/default: valid (4 requirements, budgets 10%, expireAfter 720h, WhenEmptyOrUnderutilized after 0s, nodeClassRef EC2NodeClass/default)',
      'b.yaml: NodePool/default: metadata.name: duplicate NodePool "default" (also defined in a.yaml); names are cluster-wide',
      'a.yaml: NodePool/default: spec.template.spec.nodeClassRef.name: EC2NodeClass "default" is defined in none of the files (--cluster checks the files as one cluster)',
      'b.yaml: NodePool/default: spec.template.spec.nodeClassRef.name: EC2NodeClass "default" is defined in none of the files (--cluster checks the files as one cluster)',
    ]);
    const nodeClass =
      'apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata: {name: default}\nspec: {role: r, amiSelectorTerms: [{alias: al2023@latest}], subnetSelectorTerms: [{tags: {a: b}}], securityGroupSelectorTerms: [{tags: {a: b}}]}\n';
    expect(
      validateFiles(
        [
          { file: 'a.yaml', text: good },
          { file: 'nc.yaml', text: nodeClass },
        ],
        { cluster: true },
      ).exitCode,
    ).toBe(0);
    expect(validateFiles([{ file: 'a.yaml', text: good }]).exitCode).toBe(0);
  });

  it("--cluster-name / --node-role: an EC2NodeClass role other than the stack's node role is a problem", () => {
    const nodeClass = (role: string) =>
      `apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata: {name: default}\nspec: {${role}, amiSelectorTerms: [{alias: al2023@latest}], subnetSelectorTerms: [{tags: {a: b}}], securityGroupSelectorTerms: [{tags: {a: b}}]}\n`;
    const other = validateFiles([{ file: 'nc.yaml', text: nodeClass('role: KarpenterNodeRole-demo') }], { nodeRole: 'nodefleet-node-demo' });
    expect(other).toEqual({
      exitCode: 1,
      lines: [
        'nc.yaml: EC2NodeClass/default: spec.role: "KarpenterNodeRole-demo" is not the node role nodefleet deploys ("nodefleet-node-demo", stack output NodeRoleName): nodes launch only with that role\'s instance profile, so set spec.role: nodefleet-node-demo',
      ],
    });
    expect(validateFiles([{ file: 'nc.yaml', text: nodeClass('role: nodefleet-node-demo') }], { nodeRole: 'nodefleet-node-demo' }).exitCode).toBe(0);
    expect(validateFiles([{ file: 'nc.yaml', text: nodeClass('instanceProfile: my-profile') }], { nodeRole: 'nodefleet-node-demo' }).exitCode).toBe(0);
    // Without the stack's name, validate cannot know the role (Karpenter's own examples stay valid).
    expect(validateFiles([{ file: 'nc.yaml', text: nodeClass('role: KarpenterNodeRole-demo') }]).exitCode).toBe(0);
  });
});
