/**
 * `nodefleet validate FILE...`: checks NodePool and EC2NodeClass YAML as the Kubernetes API
 * server would with Karpenter's CRDs installed. One line per problem
 * (`FILE: <kind/name>: <field path>: <reason>`) and exit 1; otherwise one summary line per
 * object and exit 0. `-` reads standard input.
 */
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { readErrorReason } from '../io.ts';
import { validateYamlText, type ValidatedObject } from '../../../shared/api/validate.ts';
import { NodePoolSchema, EC2NodeClassSchema } from '../../../shared/api/nodepool.ts';

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
    const budgets = np.spec.disruption.budgets.map((b) => b.nodes + (b.schedule ? ` @ "${b.schedule}" for ${b.duration}` : '') + (b.reasons ? ` (${b.reasons.join('/')})` : '')).join('; ');
    const parts = [
      `${reqs} requirement${reqs === 1 ? '' : 's'}`,
      `budgets ${budgets}`,
      `expireAfter ${np.spec.template.spec.expireAfter}`,
      `${np.spec.disruption.consolidationPolicy} after ${np.spec.disruption.consolidateAfter}`,
    ];
    if (np.spec.limits) parts.push(`limits ${Object.entries(np.spec.limits).map(([k, v]) => `${k}=${v}`).join(',')}`);
    if (np.spec.weight !== undefined) parts.push(`weight ${np.spec.weight}`);
    parts.push(`nodeClassRef ${np.spec.template.spec.nodeClassRef.kind}/${np.spec.template.spec.nodeClassRef.name}`);
    return `valid (${parts.join(', ')})`;
  }
  if (o.kind === 'EC2NodeClass') {
    const nc = EC2NodeClassSchema.parse(o.object);
    const ami = nc.spec.amiSelectorTerms?.find((t) => t.alias)?.alias ?? nc.spec.amiFamily ?? 'AL2023';
    const root = nc.spec.blockDeviceMappings?.find((m) => m.rootVolume)?.ebs?.volumeSize;
    const parts = [`AMI ${ami}`, nc.spec.role ? `role ${nc.spec.role}` : `instanceProfile ${nc.spec.instanceProfile}`];
    if (root !== undefined) parts.push(`root volume ${root}`);
    if (nc.spec.kubelet) parts.push(`kubelet ${Object.keys(nc.spec.kubelet).join(',')}`);
    return `valid (${parts.join(', ')})`;
  }
  return 'skipped (not a NodePool or EC2NodeClass)';
}

/** Validates the inputs; returns the lines to print and the exit code (0 valid, 1 problems). */
export function validateFiles(inputs: readonly ValidateInput[]): { lines: string[]; exitCode: number } {
  const problems: string[] = [];
  const summaries: string[] = [];
  // NodePools and EC2NodeClasses are cluster-scoped: one name per kind across all the files.
  const seen = new Map<string, string>();
  for (const input of inputs) {
    if (input.text === undefined) {
      problems.push(`${input.file}: cannot read file: ${input.readError ?? 'unknown error'}`);
      continue;
    }
    const r = validateYamlText(input.text, input.file);
    problems.push(...r.problems);
    if (r.objects.length === 0 && r.problems.length === 0) problems.push(`${input.file}: no objects found (expected NodePool or EC2NodeClass YAML)`);
    for (const o of r.objects) {
      if (o.checked) {
        const key = `${o.kind}/${o.name}`;
        const first = seen.get(key);
        if (first !== undefined) problems.push(`${input.file}: ${key}: metadata.name: duplicate ${o.kind} "${o.name}" (also defined in ${first}); names are cluster-wide`);
        else seen.set(key, input.file);
      }
      if (o.problems.length === 0) summaries.push(`${input.file}: ${o.kind}/${o.name}: ${summarize(o)}`);
    }
  }
  return problems.length > 0 ? { lines: problems, exitCode: 1 } : { lines: summaries, exitCode: 0 };
}

function readInput(file: string): ValidateInput {
  try {
    return { file, text: readFileSync(file === '-' ? 0 : file, 'utf8') };
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
    .action((files: string[]) => {
      const { lines, exitCode } = validateFiles(files.map(readInput));
      process.stdout.write(lines.map((l) => `${l}\n`).join(''));
      process.exitCode = exitCode;
    });
}
