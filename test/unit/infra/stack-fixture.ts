/**
 * Builds the nodefleet stack for template tests: inline stand-in code instead of esbuild bundles
 * (context InlineCodeContextKey — template tests only; `npm run synth` bundles the real entries)
 * and a fixture termination definition, so the tests pin the stack whatever functions exist yet.
 */
import { App, Aspects } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { RepoRoot } from '../../../infra/aws/app.ts';
import { readConfig } from '../../../infra/aws/config.ts';
import type { FunctionSpec } from '../../../infra/aws/functions.ts';
import { InlineCodeContextKey, NodefleetStack } from '../../../infra/aws/nodefleet-stack.ts';

export const FixtureAsl = 'test/unit/infra/fixtures/termination.asl.json';
export const TestCluster = 'test-cluster';

/** A synthesised test stack and its template. */
export function buildTestStack(context: Record<string, unknown> = {}, opts: { nag?: boolean; functions?: readonly FunctionSpec[] } = {}) {
  const app = new App({ context: { clusterName: TestCluster, [InlineCodeContextKey]: true, ...context } });
  const stack = new NodefleetStack(app, 'Test', {
    config: readConfig(app.node),
    repoRoot: RepoRoot,
    terminationAslPath: FixtureAsl,
    functions: opts.functions,
  });
  if (opts.nag) Aspects.of(app).add(new AwsSolutionsChecks({ verbose: true }));
  const template = Template.fromStack(stack);
  return { app, stack, template };
}
