/**
 * Every bad input found so far → the one line the CLI prints and its exit code. Run in process
 * through runCli (the code main.ts runs), with stdout / stderr captured and process.exit trapped.
 * The same table is the "bad input" table of the issue 15 closing note.
 */
import { mkdtempSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runCli } from '../../../functions/cli/program.ts';

const nodePool = `apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: default}
spec:
  role: my-node-role
  amiSelectorTerms: [{alias: al2023@latest}]
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: my-cluster}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: my-cluster}}]
`;
const pod = (cpu: string) => `apiVersion: v1
kind: Pod
metadata: {name: web, namespace: shop}
spec:
  containers:
    - name: app
      image: nginx
      resources: {requests: {cpu: ${JSON.stringify(cpu)}, memory: 1Gi}}
`;

let dir = '';
const f = (name: string) => join(dir, name);

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'nodefleet-bad-input-'));
  mkdirSync(f('folder'));
  mkdirSync(f('cases-empty'));
  mkdirSync(f('state/.nodefleet/executions'), { recursive: true });
  mkdirSync(f('state2/.nodefleet/executions'), { recursive: true });
  mkdirSync(f('cases-loop'));
  symlinkSync('loop-b', f('cases-loop/loop-a'));
  symlinkSync('loop-a', f('cases-loop/loop-b'));
  symlinkSync('loop-b', f('loop-a'));
  symlinkSync('loop-a', f('loop-b'));
  const files: Record<string, string> = {
    'np.yaml': nodePool,
    'pod.yaml': pod('1'),
    'lots.yaml': pod('lots'),
    'plain.txt': 'hello world\n',
    'items.json': '{"items":[1,2,3]}\n',
    'list.json': '{"apiVersion":"v1","kind":"List","items":[1]}\n',
    'empty.yaml': '',
    'broken.yaml': 'apiVersion: v1\nkind: Pod\nmetadata: {name: x\n',
    'deploy.yaml':
      'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: three\n  template: {spec: {containers: [{name: a, image: b}]}}\n',
    'nocontainers.yaml': 'apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec: {}\n',
    'node.yaml': 'apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: four}}\n',
    'np-equals.yaml': nodePool.replace('operator: In', 'operator: Equals'),
    'np-none.yaml': nodePool.split('---')[1],
    'bomb.yaml':
      ['a: &a [x, x, x, x, x, x, x, x, x]', ...'bcdefgh'.split('').map((k, i) => `${k}: &${k} [${Array(9).fill(`*${'abcdefgh'[i]}`).join(', ')}]`)].join('\n') +
      '\n',
    'deep.json': `${'['.repeat(20000)}${']'.repeat(20000)}\n`,
    'long-name.yaml': nodePool.split('---')[0].replace('name: default}', `name: ${'a'.repeat(5000)}}`),
    'affinity.yaml': pod('1').replace(
      '  containers:',
      '  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: a, operator: Equals, values: [x]}]}]}}}\n  containers:',
    ),
    'affinity-gt.yaml': pod('1').replace(
      '  containers:',
      '  affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 1, preference: {matchExpressions: [{key: a, operator: Gt, values: [abc]}]}}]}}\n  containers:',
    ),
    'spread.yaml': pod('1').replace(
      '  containers:',
      '  topologySpreadConstraints: [{maxSkew: -1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: Maybe}]\n  containers:',
    ),
    'toleration.yaml': pod('1').replace('  containers:', '  tolerations: [{key: a, operator: Like, value: b, effect: NoSchedule}]\n  containers:'),
    'selector-int.yaml': pod('1').replace('  containers:', '  nodeSelector: {tier: 1}\n  containers:'),
    'pvc-spec.yaml': `${pod('1')}---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data, namespace: shop}\nspec: oops\n`,
    'pv-nospec.yaml': `${pod('1')}---\napiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv-1}\n`,
    'pv-operator.yaml': `${pod('1')}---\napiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv-1}\nspec: {nodeAffinity: {required: {nodeSelectorTerms: [{matchExpressions: [{key: topology.kubernetes.io/zone, operator: Bogus, values: [a]}]}]}}}\n`,
    'sc-topology.yaml': `${pod('1')}---\napiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: gp3}\nprovisioner: ebs.csi.aws.com\nallowedTopologies: [{matchLabelExpressions: zz}]\n`,
    'sc-noprovisioner.yaml': `${pod('1')}---\napiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: gp3}\nvolumeBindingMode: Later\n`,
    'pod-claim.yaml': `${pod('1')}  volumes: [{name: data, persistentVolumeClaim: {}}]\n`,
    'replicas.yaml':
      'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 100000000\n  template: {spec: {containers: [{name: a, image: b}]}}\n',
    'acct-missing-ips.json': '{"Subnets": [{"SubnetId": "subnet-1", "AvailabilityZone": "us-east-1a"}]}\n',
    'acct-bad-ips.json': '{"Subnets": [{"SubnetId": "subnet-1", "AvailabilityZone": "us-east-1a", "AvailableIpAddressCount": "many"}]}\n',
    'acct-other-region.json': '{"Subnets": [{"SubnetId": "subnet-1", "AvailabilityZone": "eu-west-1a", "AvailableIpAddressCount": 10}]}\n',
    'acct-unknown.json': '{"Vpcs": []}\n',
    'acct-second.json': '{"Subnets": []}\n{"SecurityGroups": [{"GroupName": "nodes"}]}\n',
    'acct-cut.json': '{"Subnets": [\n',
    'acct-text.json': 'subnet-1 us-east-1a\n',
    'cases-empty/README.md': 'no cases here\n',
    'state/.nodefleet/executions/default-x.json': '{"name": "default-x", "status": "SUCC',
    'state2/.nodefleet/executions/default-y.json': '[1, 2]\n',
  };
  for (const [name, text] of Object.entries(files)) writeFileSync(f(name), text);
  writeFileSync(f('latin1.yaml'), Buffer.from('apiVersion: v1\nkind: Pod\nmetadata: {name: caf\xe9}\n', 'latin1'));
});
afterAll(() => vi.restoreAllMocks());

/** Runs the CLI in process; returns the exit code and what it printed. */
async function run(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const o = vi.spyOn(process.stdout, 'write').mockImplementation((s: string | Uint8Array) => ((out += String(s)), true));
  const e = vi.spyOn(process.stderr, 'write').mockImplementation((s: string | Uint8Array) => ((err += String(s)), true));
  // A command that calls process.exit stops there: the trap throws, runCli catches, the code wins.
  let exited: number | undefined;
  const x = vi.spyOn(process, 'exit').mockImplementation((c?: string | number | null) => {
    exited ??= Number(c ?? 0);
    throw new Error('process.exit');
  });
  try {
    const code = await runCli(['node', 'nodefleet', ...args], {});
    if (exited !== undefined) err = err.replace(/^nodefleet \S+: internal error: Error: process.exit.*\n/m, '');
    return { code: exited ?? code, out, err };
  } finally {
    o.mockRestore();
    e.mockRestore();
    x.mockRestore();
    process.exitCode = undefined;
  }
}

/** [arguments ($ = the temp folder), the first stderr line (exact, $ = the temp folder), exit code]. */
const Table: [string, string, number][] = [
  [
    'plan --nodepools $/np.yaml --pods $/pod.yaml --region us-east-9',
    'nodefleet plan: --region "us-east-9": no such region in the shipped catalog; known regions: af-south-1, ',
    1,
  ],
  ['plan --nodepools $/np.yaml --pods $/pod.yaml --region mars-1', 'nodefleet plan: --region "mars-1": not an AWS region name; known regions: af-south-1, ', 1],
  [
    'plan --nodepools $/np.yaml --pods $/lots.yaml',
    'nodefleet plan: $/lots.yaml: Pod shop/web: spec.containers[0].resources.requests.cpu: "lots" is not a Kubernetes quantity (e.g. 500m, 2, 1Gi)',
    1,
  ],
  [
    'plan --nodepools $/np.yaml --pods $/plain.txt',
    'nodefleet plan: $/plain.txt: document 1: expected a Kubernetes object (a mapping with apiVersion, kind and metadata), got text "hello world"',
    1,
  ],
  [
    'plan --nodepools $/np.yaml --pods $/items.json',
    'nodefleet plan: $/items.json: document 1: kind: required (a list needs kind: List, as kubectl prints it)',
    1,
  ],
  [
    'plan --nodepools $/np.yaml --pods $/list.json',
    'nodefleet plan: $/list.json: document 1 item 1: expected a Kubernetes object (a mapping with apiVersion, kind and metadata), got number 1',
    1,
  ],
  [
    'plan --nodepools $/np.yaml --pods $/empty.yaml',
    'nodefleet plan: $/empty.yaml: no objects found (expected kubectl get pods -A -o yaml|json output, Pods or workloads)',
    1,
  ],
  ['plan --nodepools $/np.yaml --pods $/broken.yaml', 'nodefleet plan: $/broken.yaml: document 1: line 4, column 1: YAML syntax error: ', 1],
  [
    'plan --nodepools $/np.yaml --pods $/deploy.yaml',
    'nodefleet plan: $/deploy.yaml: Deployment web: spec.replicas: must be a whole number ≥ 0, got text "three"',
    1,
  ],
  [
    'plan --nodepools $/np.yaml --pods $/nocontainers.yaml',
    'nodefleet plan: $/nocontainers.yaml: Pod web: spec.containers: required (a list of containers)',
    1,
  ],
  [
    'plan --nodepools $/np.yaml --pods $/pod.yaml --nodes $/node.yaml',
    'nodefleet plan: $/node.yaml: Node n1: status.allocatable.cpu: "four" is not a Kubernetes quantity (e.g. 500m, 2, 1Gi)',
    1,
  ],
  ['plan --nodepools $/np.yaml --pods $/missing.yaml', 'nodefleet plan: $/missing.yaml: cannot read: no such file', 1],
  ['plan --nodepools $/folder --pods $/pod.yaml', 'nodefleet plan: $/folder: cannot read: is a folder, not a file', 1],
  [
    'plan --nodepools $/np-equals.yaml --pods $/pod.yaml',
    'nodefleet plan: $/np-equals.yaml: NodePool/default: spec.template.spec.requirements[0].operator: unsupported operator "Equals"; valid operators are In, NotIn, Exists, DoesNotExist, Gt, Lt, Gte, Lte',
    1,
  ],
  ['plan --nodepools $/np-none.yaml --pods $/pod.yaml', 'nodefleet plan: $/np-none.yaml: no NodePool found', 1],
  [
    'plan --nodepools $/np.yaml --pods $/pod.yaml -o xml',
    'nodefleet plan: --output: unknown format "xml"; allowed formats: wide, json, yaml (default: a table)',
    2,
  ],
  ['plan --nodepools $/np.yaml --pods $/pod.yaml --packing fast', 'nodefleet plan: --packing: unknown packing mode "fast"; modes: cost, karpenter', 2],
  [
    'plan --nodepools $/np.yaml --pods $/np.yaml',
    'nodefleet plan: $/np.yaml: holds only NodePool and EC2NodeClass objects, no pods or workloads (a NodePool file goes to --nodepools)',
    1,
  ],
  [
    'plan --nodepools $/np.yaml --pods $/pod.yaml --cluster-name bad!name',
    "nodefleet plan: --cluster-name: must be an EKS cluster name (letters, digits, '-' and '_', starting with a letter or digit, max 100), got 'bad!name'",
    2,
  ],
  [
    'validate --cluster-name -x $/np.yaml',
    "nodefleet validate: --cluster-name: must be an EKS cluster name (letters, digits, '-' and '_', starting with a letter or digit, max 100), got '-x'",
    2,
  ],
  ['plan --nodepools $/np.yaml', "error: required option '--pods <file>' not specified", 2],
  ['instance-types --region mars-1', 'nodefleet instance-types: --region "mars-1": not an AWS region name; known regions: af-south-1, ', 1],
  ['instance-types --region us-east-1 --nodepool $/missing.yaml', 'nodefleet instance-types: $/missing.yaml: cannot read: no such file', 1],
  ['instance-types --region us-east-1 --nodepool $/pod.yaml', 'nodefleet instance-types: $/pod.yaml: no NodePool found', 1],
  [
    'instance-types --region us-east-1 -o csv',
    'nodefleet instance-types: --output: unknown format "csv"; allowed formats: wide, json, yaml (default: a table)',
    2,
  ],
  ['status --local /nonexistent', 'nodefleet status: --local /nonexistent: no such folder (run `nodefleet demo` there first)', 1],
  ['status --local $', 'nodefleet status: --local $: no .nodefleet/ in $ (run `nodefleet demo` there first)', 1],
  ['status -o xml --local $', 'nodefleet status: --output: unknown format "xml"; allowed formats: wide, json, yaml (default: a table)', 2],
  ['history default-x --local /nonexistent', 'nodefleet history: --local /nonexistent: no such folder (run `nodefleet demo` there first)', 1],
  ['history default-x -o xml --local $', 'nodefleet history: --output: unknown format "xml"; allowed formats: json, yaml (default: timelines)', 2],
  ['validate $/missing.yaml', '', 1],
  ['validate --feature-gates StaticCapacity=yes $/np.yaml', 'nodefleet validate: --feature-gates: feature gate StaticCapacity needs =true or =false', 2],
  [
    `validate --cluster-name ${'c'.repeat(60)} $/np.yaml`,
    `nodefleet validate: --cluster-name: the stack lets CloudFormation name the node role of "${'c'.repeat(60)}" (name too long); pass --node-role with the stack output NodeRoleName`,
    2,
  ],
  ['demo --speed fast', 'nodefleet demo: --speed must be a number ≥ 0.01, got "fast"', 2],
  ['demo --scenario no-such-scenario', 'nodefleet demo: ', 2],
  ['demo --scenario $/bomb.yaml', 'nodefleet demo: $/bomb.yaml: more than 100 aliases (*name): refused as a possible YAML bomb (billion laughs)', 2],
  ['cases $/missing', 'nodefleet cases: no such file or folder: $/missing', 2],
  [
    'plan --nodepools $/np.yaml --pods $/bomb.yaml',
    'nodefleet plan: $/bomb.yaml: document 1: YAML syntax error: more than 100 aliases (*name) in one document: refused as a possible YAML bomb (billion laughs)',
    1,
  ],
  [
    'instance-types --region us-east-1 --nodepool $/bomb.yaml',
    'nodefleet instance-types: $/bomb.yaml: document 1: YAML syntax error: more than 100 aliases (*name) in one document: refused as a possible YAML bomb (billion laughs)',
    1,
  ],
  [
    'plan --nodepools $/long-name.yaml --pods $/pod.yaml',
    `nodefleet plan: $/long-name.yaml: NodePool/${'a'.repeat(80)}…: metadata.name: "${'a'.repeat(80)}"… (5000 characters) is not a valid name (at most 253 lowercase letters, digits, "-" and ".", starting and ending alphanumeric)`,
    1,
  ],
  [
    'plan --nodepools $/np.yaml --pods $/latin1.yaml',
    'nodefleet plan: $/latin1.yaml: cannot read: not UTF-8 text (byte 0xe9 at offset 45; YAML and JSON are UTF-8)',
    1,
  ],
  ['plan --nodepools $/loop-a --pods $/pod.yaml', 'nodefleet plan: $/loop-a: cannot read: symbolic link loop', 1],
  [
    'plan --nodepools $/np.yaml --pods $/affinity.yaml',
    'nodefleet plan: $/affinity.yaml: Pod shop/web: spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator: unsupported operator "Equals"; valid operators are In, NotIn, Exists, DoesNotExist, Gt, Lt',
    1,
  ],
  [
    'plan --nodepools $/np.yaml --pods $/affinity-gt.yaml',
    'nodefleet plan: $/affinity-gt.yaml: Pod shop/web: spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].preference.matchExpressions[0].values: operator Gt needs exactly one integer value, got ["abc"]',
    1,
  ],
  [
    'plan --nodepools $/np.yaml --pods $/spread.yaml',
    'nodefleet plan: $/spread.yaml: Pod shop/web: spec.topologySpreadConstraints[0].maxSkew: must be an integer ≥ 1, got number -1',
    1,
  ],
  [
    'plan --nodepools $/np.yaml --pods $/toleration.yaml',
    'nodefleet plan: $/toleration.yaml: Pod shop/web: spec.tolerations[0].operator: text "Like" is not valid; expected one of Exists, Equal',
    1,
  ],
  [
    'plan --nodepools $/np.yaml --pods $/selector-int.yaml',
    'nodefleet plan: $/selector-int.yaml: Pod shop/web: spec.nodeSelector.tier: must be a string (quote it), got number 1',
    1,
  ],
  [
    'plan --nodepools $/np.yaml --pods $/pvc-spec.yaml',
    'nodefleet plan: $/pvc-spec.yaml: PersistentVolumeClaim shop/data: spec: must be a mapping, got text "oops"',
    1,
  ],
  ['plan --nodepools $/np.yaml --pods $/pv-nospec.yaml', 'nodefleet plan: $/pv-nospec.yaml: PersistentVolume pv-1: spec: required', 1],
  [
    'plan --nodepools $/np.yaml --pods $/pv-operator.yaml',
    'nodefleet plan: $/pv-operator.yaml: PersistentVolume pv-1: spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].operator: unsupported operator "Bogus"; valid operators are In, NotIn, Exists, DoesNotExist, Gt, Lt',
    1,
  ],
  [
    'plan --nodepools $/np.yaml --pods $/sc-topology.yaml',
    'nodefleet plan: $/sc-topology.yaml: StorageClass gp3: allowedTopologies[0].matchLabelExpressions: must be a list, got text "zz"',
    1,
  ],
  ['plan --nodepools $/np.yaml --pods $/sc-noprovisioner.yaml', 'nodefleet plan: $/sc-noprovisioner.yaml: StorageClass gp3: provisioner: required', 1],
  [
    'plan --nodepools $/np.yaml --pods $/pod-claim.yaml',
    'nodefleet plan: $/pod-claim.yaml: Pod shop/web: spec.volumes[0].persistentVolumeClaim.claimName: required',
    1,
  ],
  [
    'plan --nodepools $/np.yaml --pods $/replicas.yaml',
    'nodefleet plan: $/replicas.yaml: Deployment web: spec.replicas: 100000000 is more than the 150000 pods plan simulates per workload',
    1,
  ],
  [
    'plan --nodepools $/np.yaml --pods $/pod.yaml --account $/acct-missing-ips.json',
    'nodefleet plan: $/acct-missing-ips.json: Subnets[0].AvailableIpAddressCount: required: the number of free IPv4 addresses',
    1,
  ],
  [
    'plan --nodepools $/np.yaml --pods $/pod.yaml --account $/acct-bad-ips.json',
    'nodefleet plan: $/acct-bad-ips.json: Subnets[0].AvailableIpAddressCount: expected a number, got "many"',
    1,
  ],
  [
    'plan --nodepools $/np.yaml --pods $/pod.yaml --account $/acct-other-region.json',
    'nodefleet plan: $/acct-other-region.json: Subnets[0].AvailabilityZone: "eu-west-1a" is not a zone of us-east-1 (the region of the plan: --region)',
    1,
  ],
  [
    'plan --nodepools $/np.yaml --pods $/pod.yaml --account $/acct-unknown.json',
    'nodefleet plan: $/acct-unknown.json: none of Subnets, SecurityGroups, Images, Parameter, Parameters (expected the output of aws ec2 describe-subnets, describe-security-groups or describe-images)',
    1,
  ],
  [
    'plan --nodepools $/np.yaml --pods $/pod.yaml --account $/acct-second.json',
    'nodefleet plan: $/acct-second.json: document 2: SecurityGroups[0].GroupId: required: the security group id (sg-…)',
    1,
  ],
  [
    'plan --nodepools $/np.yaml --pods $/pod.yaml --account $/acct-cut.json',
    'nodefleet plan: $/acct-cut.json: line 1, column 1: a JSON value is not closed (the file is cut short)',
    1,
  ],
  [
    'plan --nodepools $/np.yaml --pods $/pod.yaml --account $/acct-text.json',
    'nodefleet plan: $/acct-text.json: line 1, column 1: expected a JSON object (the output of aws ec2 describe-subnets, describe-security-groups or describe-images)',
    1,
  ],
  ['plan --nodepools $/np.yaml --pods $/pod.yaml --account $/missing.json', 'nodefleet plan: $/missing.json: cannot read: no such file', 1],
  [
    'status --local $/state',
    'nodefleet status: $/state/.nodefleet/executions/default-x.json: not an execution record: Unterminated string in JSON at position 37 (line 1 column 38)',
    1,
  ],
  [
    'history default-x --local $/state',
    'nodefleet history: $/state/.nodefleet/executions/default-x.json: not an execution record: Unterminated string in JSON at position 37 (line 1 column 38)',
    1,
  ],
  [
    'history default-y --local $/state2',
    'nodefleet history: $/state2/.nodefleet/executions/default-y.json: not an execution record: expected a JSON object with name and events',
    1,
  ],
  ['cases $/cases-empty', 'nodefleet cases: $/cases-empty: no *.yaml cases found', 1],
  ['cases $/cases-loop', 'nodefleet cases: $/cases-loop/loop-a: cannot read: symbolic link loop', 1],
];

describe('bad input: one line naming input, field and reason; non-zero exit; never a stack trace', () => {
  it.each(Table)('%s', async (args, firstLine, code) => {
    const r = await run(args.replaceAll('$', dir).split(' '));
    expect(r.code).toBe(code);
    expect(r.err).not.toMatch(/^\s+at |internal error|Error:/m);
    expect(r.err.split('\n')[0]).toContain(firstLine.replaceAll('$', dir));
    if (firstLine.endsWith(', ') || firstLine.endsWith(': ')) expect(r.err.split('\n')[0].length).toBeGreaterThan(firstLine.length);
    else if (firstLine) expect(r.err.split('\n')[0]).toBe(firstLine.replaceAll('$', dir));
  });

  it('validate of an unreadable file says so on stdout, with every other problem, and exits 1', async () => {
    const r = await run(['validate', f('missing.yaml'), f('plain.txt')]);
    expect(r.code).toBe(1);
    expect(r.out.split('\n')[0]).toBe(`${f('missing.yaml')}: cannot read file: no such file`);
  });

  it('validate of an alias bomb, a deep nesting and a non-UTF-8 file: one line each, exit 1', async () => {
    const r = await run(['validate', f('bomb.yaml'), f('deep.json'), f('latin1.yaml')]);
    expect(r.code).toBe(1);
    expect(r.err).toBe('');
    expect(r.out.split('\n')).toEqual([
      `${f('bomb.yaml')}: document 1: YAML syntax error: more than 100 aliases (*name) in one document: refused as a possible YAML bomb (billion laughs)`,
      expect.stringMatching(/^.*deep\.json: document 1: line 1, column \d+: YAML syntax error: nested too deeply to read \(thousands of levels\)$/),
      `${f('latin1.yaml')}: cannot read file: not UTF-8 text (byte 0xe9 at offset 45; YAML and JSON are UTF-8)`,
      '',
    ]);
  });
});
