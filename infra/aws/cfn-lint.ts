/**
 * `npm run cfn-lint`: synthesises the stack offline with the real bundles (the default
 * configuration, and a variant: IRSA, functions in a VPC, no interruption path) into cdk.out and
 * runs cfn-lint (PyPI, at the version pinned in .ci/cfn-lint/requirements.txt) over each template.
 * Exits 1 on any cfn-lint error, on a warning not in {@link AcceptedWarnings}, or when cfn-lint is
 * missing or at another version.
 *
 * cfn-lint is `$NODEFLEET_CFN_LINT`, else `cfn-lint` on PATH:
 *   export NODEFLEET_CFN_LINT="$(bash .ci/cfn-lint/install)"   # a cached venv; .ci/run does this
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { buildApp, RepoRoot } from './app.ts';

/** The pinned requirements; the `cfn-lint==<version>` line is the version required. */
export const CfnLintRequirements = '.ci/cfn-lint/requirements.txt';

/**
 * cfn-lint warnings accepted, by rule id, with why (docs/security.md lists them too). Any other
 * warning fails.
 */
export const AcceptedWarnings: Record<string, string> = {
  W3005:
    "CDK gives each Lambda function (and state machine) a DependsOn on its role and on the role's policy; " +
    'the DependsOn on the role is redundant with the GetAtt of its ARN. Harmless: CloudFormation orders the same way.',
};

/** The configurations linted: context for buildApp. */
export const LintedConfigurations: Record<string, Record<string, string>> = {
  default: { clusterName: 'example-cluster' },
  variant: {
    clusterName: 'example-variant',
    interruption: 'false',
    agentIdentity: 'irsa',
    oidcProviderArn: 'arn:aws:iam::123456789012:oidc-provider/oidc.eks.eu-west-1.amazonaws.com/id/EXAMPLE',
    vpcId: 'vpc-0123456789abcdef0',
    subnetIds: 'subnet-0a1b2c3d4e5f60718,subnet-0a1b2c3d4e5f60719',
  },
};

/** One cfn-lint finding (`--format json`). */
export interface CfnLintFinding {
  Rule: { Id: string };
  Level: 'Error' | 'Warning' | 'Informational';
  Message: string;
  Location: { Path?: (string | number)[]; Start?: { LineNumber?: number } };
}

/** Findings that fail: every error, and warnings / informational findings not accepted. */
export function failingFindings(findings: readonly CfnLintFinding[], accepted: Record<string, string> = AcceptedWarnings): CfnLintFinding[] {
  return findings.filter((f) => f.Level === 'Error' || !(f.Rule.Id in accepted));
}

/** The version `requirements` pins for cfn-lint. @throws Error when it pins none. */
export function pinnedVersion(requirements: string): string {
  const m = /^cfn-lint==(\S+)\s*$/m.exec(requirements);
  if (!m) throw new Error(`${CfnLintRequirements}: no cfn-lint==<version> line`);
  return m[1];
}

function main(): number {
  const started = performance.now();
  const cfnLint = process.env.NODEFLEET_CFN_LINT || 'cfn-lint';
  const want = pinnedVersion(readFileSync(join(RepoRoot, CfnLintRequirements), 'utf8'));
  const version = spawnSync(cfnLint, ['--version'], { encoding: 'utf8' });
  const got = /cfn-lint (\S+)/.exec(version.stdout ?? '')?.[1];
  if (got !== want) {
    console.error(
      `cfn-lint: ${cfnLint} is ${got ? `version ${got}` : 'not installed'}, ${CfnLintRequirements} pins ${want}: export NODEFLEET_CFN_LINT="$(bash .ci/cfn-lint/install)"`,
    );
    return 1;
  }
  const outdir = process.env.CDK_OUTDIR ?? join(RepoRoot, 'cdk.out');
  let failed = 0;
  for (const [name, context] of Object.entries(LintedConfigurations)) {
    const { app, stack } = buildApp({ context, outdir, nag: false });
    const template = app.synth().getStackArtifact(stack.artifactId).templateFullPath;
    const run = spawnSync(cfnLint, ['--format', 'json', '--', template], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    // Exit code: a bit mask of what was found (2 errors, 4 warnings, 8 informational); 1 is cfn-lint's own failure.
    if (run.error || run.status === null || (run.status & 1) !== 0) {
      console.error(`cfn-lint: ${name}: cfn-lint failed (${run.error?.message ?? `exit ${run.status}`}): ${run.stderr}`);
      return 1;
    }
    const findings = JSON.parse(run.stdout || '[]') as CfnLintFinding[];
    const bad = failingFindings(findings);
    for (const f of bad)
      console.log(`${f.Level} ${f.Rule.Id} ${name}:${f.Location.Start?.LineNumber ?? '?'} ${(f.Location.Path ?? []).join('/')}: ${f.Message}`);
    const accepted = findings.length - bad.length;
    const errors = findings.filter((f) => f.Level === 'Error').length;
    const byRule = [...new Set(findings.filter((f) => !bad.includes(f)).map((f) => f.Rule.Id))].map(
      (id) => `${id} ×${findings.filter((f) => f.Rule.Id === id).length}`,
    );
    console.log(
      `cfn-lint ${got}: ${name} (${stack.stackName}): ${errors} error(s), ${bad.length - errors} other failing finding(s), ${accepted} accepted warning(s)${byRule.length ? ` (${byRule.join(', ')})` : ''}`,
    );
    failed += bad.length;
  }
  console.log(`cfn-lint: ${failed === 0 ? 'passed' : `${failed} failing finding(s)`}; ${((performance.now() - started) / 1000).toFixed(1)}s`);
  return failed === 0 ? 0 : 1;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) process.exitCode = main();
