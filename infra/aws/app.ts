/**
 * The CDK app: one NodefleetStack per cluster, parameterised by context
 * (`npx cdk deploy -c clusterName=my-cluster`, see config.ts for the other keys).
 * cdk.json points here; `npm run synth` (synth.ts) builds the same app offline.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { App, Aspects, type AppProps } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { readConfig } from './config.ts';
import { NodefleetStack } from './nodefleet-stack.ts';

/** Absolute path of the repository root (two levels above this file). */
export const RepoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Stack name for a cluster: one stack per cluster in an account/region. */
export function stackName(clusterName: string): string {
  return `Nodefleet-${clusterName}`;
}

/**
 * Builds the app. The stack is environment-agnostic unless a VPC lookup needs an account and
 * region (context `subnetTag`), so synth needs no credentials.
 * @throws ConfigError when the context is invalid (e.g. no clusterName).
 */
export function buildApp(props: AppProps & { nag?: boolean } = {}): { app: App; stack: NodefleetStack } {
  const app = new App(props);
  const config = readConfig(app.node);
  const needsEnv = Boolean(config.vpc?.subnetTag);
  const stack = new NodefleetStack(app, stackName(config.clusterName), {
    config,
    repoRoot: RepoRoot,
    env: needsEnv ? { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION } : undefined,
  });
  if (props.nag ?? true) Aspects.of(app).add(new AwsSolutionsChecks({ verbose: true }));
  return { app, stack };
}

// Run by the CDK CLI (cdk.json "app"): synthesise into the directory the CLI asks for.
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  buildApp().app.synth();
}
