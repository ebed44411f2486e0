/**
 * `nodefleet validate [--cluster] [--cluster-name NAME | --node-role ROLE] FILE...`: checks NodePool and EC2NodeClass YAML as the
 * Kubernetes API server would with Karpenter's CRDs installed, each file on its own unless
 * `--cluster` (see {@link validateFiles}). An EC2NodeClass field nodefleet does not honour
 * (shared/api/nodeclass-support.ts) is a problem too. One line per problem
 * (`FILE: <kind/name>: <field path>: <reason>`) and one summary line per valid object; exit 1
 * when any problem was found. `-` reads standard input.
 */
import type { Command } from 'commander';
import { CliError, readErrorReason, readInputText } from '../io.ts';
import { clusterNameProblem, nodeRoleNameOf, nodeRoleProblem } from '../../../shared/api/contract.ts';
import { validateYamlText, type ValidatedObject, type ValidateOptions } from '../../../shared/api/validate.ts';
import { checkSetting, SettingsError, type FeatureGates } from '../../../shared/api/settings.ts';
import { NodePoolSchema, EC2NodeClassSchema } from '../../../shared/api/nodepool.ts';
import { nodeClassRefusals } from '../../../shared/api/nodeclass-support.ts';
import { userDataFloorProblem } from '../../../shared/aws/ec2.ts';

/** One input file: its display name and its text (undefined when it could not be read). */
export interface ValidateInput {
  file: string;
  text?: string;
  readError?: string;
}

/** A one-line summary of a valid NodePool / EC2NodeClass (what a user wants to double-check). */
export function summarize(o: ValidatedObject): string {
  if (o.kind === 'NodePool') {
    const np = NodePoolSchema.parse(o.object);
    const reqs = np.spec.template.spec.requirements.length;
    const budgets = np.spec.disruption.budgets
      .map((b) => b.nodes + (b.schedule ? ` @ "${b.schedule}" for ${b.duration}` : '') + (b.reasons ? ` (${b.reasons.join('/')})` : ''))
      .join('; ');
    const parts = [
      `${reqs} requirement${reqs === 1 ? '' : 's'}`,
      `budgets ${budgets}`,
      `expireAfter ${np.spec.template.spec.expireAfter}`,
      `${np.spec.disruption.consolidationPolicy} after ${np.spec.disruption.consolidateAfter}`,
    ];
    if (np.spec.limits)
      parts.push(
        `limits ${Object.entries(np.spec.limits)
          .map(([k, v]) => `${k}=${v}`)
          .join(',')}`,
      );
    if (np.spec.weight !== undefined) parts.push(`weight ${np.spec.weight}`);
    if (np.spec.replicas !== undefined) parts.push(`static: replicas ${np.spec.replicas}`);
    parts.push(`nodeClassRef ${np.spec.template.spec.nodeClassRef.kind}/${np.spec.template.spec.nodeClassRef.name}`);
    return `valid (${parts.join(', ')})`;
  }
  if (o.kind === 'EC2NodeClass') {
    const nc = EC2NodeClassSchema.parse(o.object);
    const ami = nc.spec.amiSelectorTerms?.find((t) => t.alias)?.alias ?? nc.spec.amiFamily ?? 'AL2023';
    const root = nc.spec.blockDeviceMappings?.find((m) => m.rootVolume)?.ebs?.volumeSize;
    const parts = [`AMI ${ami}`, nc.spec.role !== undefined ? `role ${nc.spec.role}` : `instanceProfile ${nc.spec.instanceProfile}`];
    if (root !== undefined) parts.push(`root volume ${root}`);
    if (nc.spec.kubelet) parts.push(`kubelet ${Object.keys(nc.spec.kubelet).join(',')}`);
    return `valid (${parts.join(', ')})`;
  }
  return 'skipped (not a NodePool or EC2NodeClass)';
}

/**
 * Validates the inputs; returns the lines to print and the exit code (0 valid, 1 problems).
 * Each file is checked on its own (as `kubectl apply -f FILE` would be, one at a time): its
 * problems, then a `valid` line per valid object. Names must be unique within a file. With
 * `cluster`, the files are one cluster: NodePool / EC2NodeClass names are unique across them and
 * every NodePool's nodeClassRef names an EC2NodeClass one of the files defines. With `nodeRole`
 * (the stack's node role), an EC2NodeClass `spec.role` naming another role is a problem: nodefleet
 * launches only with its own node role (it creates no instance profile per role).
 */
export function validateFiles(
  inputs: readonly ValidateInput[],
  opts: { cluster?: boolean; nodeRole?: string } & ValidateOptions = {},
): { lines: string[]; exitCode: number } {
  const lines: string[] = [];
  let failed = false;
  // NodePools and EC2NodeClasses are cluster-scoped: one name per kind (per file, or per cluster).
  const seenInCluster = new Map<string, string>();
  const nodeClassNames = new Set<string>();
  const refs: { file: string; pool: string; ref: { group?: unknown; kind?: unknown; name?: unknown } }[] = [];
  for (const input of inputs) {
    if (input.text === undefined) {
      lines.push(`${input.file}: cannot read file: ${input.readError ?? 'unknown error'}`);
      failed = true;
      continue;
    }
    const r = validateYamlText(input.text, input.file, { staticCapacity: opts.staticCapacity });
    const problems = [...r.problems];
    if (r.objects.length === 0 && r.problems.length === 0) problems.push(`${input.file}: no objects found (expected NodePool or EC2NodeClass YAML)`);
    const seenInFile = new Set<string>();
    for (const o of r.objects) {
      if (!o.checked) continue;
      const key = `${o.kind}/${o.name}`;
      if (seenInFile.has(key)) problems.push(`${input.file}: ${key}: metadata.name: duplicate ${o.kind} "${o.name}" in this file; names are cluster-wide`);
      else if (opts.cluster && seenInCluster.has(key))
        problems.push(
          `${input.file}: ${key}: metadata.name: duplicate ${o.kind} "${o.name}" (also defined in ${seenInCluster.get(key)}); names are cluster-wide`,
        );
      seenInFile.add(key);
      if (!seenInCluster.has(key)) seenInCluster.set(key, input.file);
      if (o.kind === 'EC2NodeClass') {
        nodeClassNames.add(o.name);
        // Valid for Karpenter's CRD, but a field nodefleet does not honour: refused, as the launch refuses it.
        const refusals = o.problems.length === 0 ? nodeClassRefusals((o.object as { spec?: unknown }).spec) : [];
        for (const line of refusals) problems.push(`${input.file}: ${key}: ${line}`);
        // User data over EC2's 16 KB, as far as it is known without the cluster (the launch checks the merged text).
        const sizeProblem = o.problems.length === 0 && refusals.length === 0 ? userDataFloorProblem(EC2NodeClassSchema.parse(o.object)) : undefined;
        if (sizeProblem) problems.push(`${input.file}: ${key}: ${sizeProblem}`);
        const roleProblem = opts.nodeRole && o.problems.length === 0 ? nodeRoleProblem(EC2NodeClassSchema.parse(o.object).spec, opts.nodeRole) : undefined;
        if (roleProblem) problems.push(`${input.file}: ${key}: ${roleProblem}`);
      }
      const spec = (o.object as { spec?: { template?: { spec?: { nodeClassRef?: Record<string, unknown> } } } }).spec;
      const ref = spec?.template?.spec?.nodeClassRef;
      if (o.kind === 'NodePool' && ref) refs.push({ file: input.file, pool: o.name, ref });
    }
    lines.push(...problems);
    if (problems.length > 0) failed = true;
    for (const o of r.objects)
      if (o.problems.length === 0 && !problems.some((p) => p.startsWith(`${input.file}: ${o.kind}/${o.name}: `)))
        lines.push(`${input.file}: ${o.kind}/${o.name}: ${summarize(o)}`);
  }
  if (opts.cluster) {
    for (const { file, pool, ref } of refs) {
      if (ref.group !== 'karpenter.k8s.aws' || ref.kind !== 'EC2NodeClass' || typeof ref.name !== 'string' || nodeClassNames.has(ref.name)) continue;
      lines.push(
        `${file}: NodePool/${pool}: spec.template.spec.nodeClassRef.name: EC2NodeClass "${ref.name}" is defined in none of the files (--cluster checks the files as one cluster)`,
      );
      failed = true;
    }
  }
  return { lines, exitCode: failed ? 1 : 0 };
}

function readInput(file: string): ValidateInput {
  try {
    return { file, text: readInputText(file) };
  } catch (e) {
    return { file, readError: readErrorReason(e) };
  }
}

/** Adds the command to the CLI (see the module doc for its contract). */
export function register(program: Command): void {
  program
    .command('validate')
    .description('check NodePool / EC2NodeClass YAML (karpenter.sh/v1, karpenter.k8s.aws/v1); exit 1 on any problem')
    .argument('<files...>', 'YAML files (multi-document and kubectl List allowed; - for stdin)')
    .option('--cluster', 'the files are one cluster: names unique across them, every nodeClassRef defined in one of them')
    .option('--cluster-name <name>', "the stack's clusterName: an EC2NodeClass spec.role must be its node role, nodefleet-node-<name>")
    .option('--node-role <name>', 'the node role the stack deployed (stack output NodeRoleName), when not nodefleet-node-<cluster-name>')
    .option('--feature-gates <gates>', "the stack's FEATURE_GATES (Karpenter's format, e.g. StaticCapacity=true): static NodePools need StaticCapacity=true")
    .action((files: string[], opts: { cluster?: boolean; clusterName?: string; nodeRole?: string; featureGates?: string }) => {
      let gates: FeatureGates | undefined;
      try {
        if (opts.featureGates !== undefined) gates = checkSetting('FEATURE_GATES', opts.featureGates) as FeatureGates;
      } catch (err) {
        if (err instanceof SettingsError) throw new CliError(`--feature-gates: ${err.message.replace(/^setting FEATURE_GATES: /, '')}`, 2);
        throw err;
      }
      const nameProblem = opts.clusterName !== undefined ? clusterNameProblem(opts.clusterName) : undefined;
      if (nameProblem) throw new CliError(`--cluster-name: ${nameProblem}`, 2);
      const nodeRole = opts.nodeRole ?? (opts.clusterName !== undefined ? nodeRoleNameOf(opts.clusterName) : undefined);
      if (opts.clusterName !== undefined && nodeRole === undefined) {
        throw new CliError(
          `--cluster-name: the stack lets CloudFormation name the node role of "${opts.clusterName}" (name too long); pass --node-role with the stack output NodeRoleName`,
          2,
        );
      }
      const { lines, exitCode } = validateFiles(files.map(readInput), { cluster: opts.cluster, nodeRole, staticCapacity: gates?.StaticCapacity });
      process.stdout.write(lines.map((l) => `${l}\n`).join(''));
      process.exitCode = exitCode;
    });
}
