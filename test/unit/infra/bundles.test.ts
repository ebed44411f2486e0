/**
 * The Lambda bundles carry the locked AWS SDK (package-lock.json, the version the tests run), not
 * the Lambda runtime's own copy: one function (the provisioner) is synthesised through the real stack with real
 * esbuild bundling (no Docker), and its bundle's source map must list the SDK's files from
 * node_modules, with no import of `@aws-sdk/*` left for the runtime to resolve.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { afterAll, describe, expect, it } from 'vitest';
import { RepoRoot } from '../../../infra/aws/app.ts';
import { readConfig } from '../../../infra/aws/config.ts';
import { Functions } from '../../../infra/aws/functions.ts';
import { NodefleetStack } from '../../../infra/aws/nodefleet-stack.ts';
import { TestCluster } from './stack-fixture.ts';

/** Lambda's limit on a function's unzipped deployment package (code and layers), bytes. */
const LambdaUnzippedLimitBytes = 250 * 1024 * 1024;

const outdir = mkdtempSync(join(tmpdir(), 'nodefleet-bundle-'));
afterAll(() => rmSync(outdir, { recursive: true, force: true }));

function dirBytes(dir: string): number {
  let n = 0;
  for (const e of readdirSync(dir)) {
    const p = join(dir, e);
    n += statSync(p).isDirectory() ? dirBytes(p) : statSync(p).size;
  }
  return n;
}

describe('Lambda bundles', () => {
  it('bundle the locked AWS SDK instead of leaving @aws-sdk/* to the runtime', () => {
    // Prepare: the stack with only the provisioner (no termination definition: no task bundles), bundled for real
    const app = new App({ outdir, context: { clusterName: TestCluster } });
    const provisioner = Functions.filter((f) => f.name === 'provisioner');
    new NodefleetStack(app, 'Bundle', {
      config: readConfig(app.node),
      repoRoot: RepoRoot,
      terminationAslPath: 'test/unit/infra/fixtures/none.asl.json',
      functions: provisioner,
    });
    // Act
    app.synth();
    // Assess
    const assets = readdirSync(outdir).filter((e) => e.startsWith('asset.') && statSync(join(outdir, e)).isDirectory());
    expect(assets).toHaveLength(1);
    const asset = join(outdir, assets[0]);
    const code = readFileSync(join(asset, 'index.mjs'), 'utf8');
    const sources = (JSON.parse(readFileSync(join(asset, 'index.mjs.map'), 'utf8')) as { sources: string[] }).sources;
    const locked = JSON.parse(readFileSync(join(RepoRoot, 'node_modules/@aws-sdk/client-ec2/package.json'), 'utf8')) as { version: string };
    expect(sources.some((s) => s.includes('node_modules/@aws-sdk/client-ec2/'))).toBe(true);
    expect(sources.some((s) => s.includes('node_modules/@aws-sdk/client-dynamodb/'))).toBe(true);
    // The client's own version string (its user agent) is the locked one.
    expect(code).toContain(`"${locked.version}"`);
    expect(code).not.toMatch(/(from|import\()\s*["']@aws-sdk\//);
    expect(dirBytes(asset)).toBeLessThan(LambdaUnzippedLimitBytes);
  }, 180_000);
});
