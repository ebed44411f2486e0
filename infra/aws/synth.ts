/**
 * `npm run synth [-- -c key=value ...]`: synthesises the stack offline (no AWS credentials, no
 * network, no Docker; esbuild bundles each function locally) into cdk.out, runs cdk-nag
 * AwsSolutions, and prints what it built and how long it took. Exits 1 on an unsuppressed
 * cdk-nag finding or another synth error.
 *
 * Without `-c clusterName=…` it synthesises for the example cluster name below, so a clean
 * clone can check the app; `npx cdk deploy` (cdk.json → app.ts) requires the name.
 */
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { join } from 'node:path';
import { buildApp, RepoRoot } from './app.ts';

/** Cluster name used when none is given (synth check only; deploy requires a real one). */
export const ExampleClusterName = 'example-cluster';

/** `-c k=v` / `--context k=v` pairs from argv. */
export function parseContextArgs(argv: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    let kv: string | undefined;
    if (a === '-c' || a === '--context') kv = argv[++i];
    else if (a.startsWith('--context=')) kv = a.slice('--context='.length);
    if (kv === undefined) continue;
    const eq = kv.indexOf('=');
    if (eq <= 0) throw new Error(`expected -c key=value, got '${kv}'`);
    out[kv.slice(0, eq)] = kv.slice(eq + 1);
  }
  return out;
}

/**
 * Removes `asset.*` entries of earlier synths that this assembly no longer references, so cdk.out
 * keeps one bundle per function (bundles of an unchanged tree are reused, see sourceTreeHash).
 * @returns how many were removed.
 */
export function pruneStaleAssets(outdir: string): number {
  const entries = readdirSync(outdir);
  const referenced = new Set<string>();
  for (const f of entries.filter((e) => e.endsWith('.assets.json'))) {
    const manifest = JSON.parse(readFileSync(join(outdir, f), 'utf8')) as { files?: Record<string, { source?: { path?: string } }> };
    for (const a of Object.values(manifest.files ?? {})) if (a.source?.path) referenced.add(a.source.path);
  }
  let removed = 0;
  for (const e of entries) {
    if (e.startsWith('asset.') && !referenced.has(e)) {
      rmSync(join(outdir, e), { recursive: true, force: true });
      removed++;
    }
  }
  return removed;
}

function main(): number {
  const started = performance.now();
  const context = parseContextArgs(process.argv.slice(2));
  if (!context.clusterName) {
    context.clusterName = ExampleClusterName;
    console.log(`synth: no -c clusterName=…, using '${ExampleClusterName}' (deploy needs your cluster's name)`);
  }
  const outdir = process.env.CDK_OUTDIR ?? join(RepoRoot, 'cdk.out');
  const { app, stack } = buildApp({ context, outdir });
  const assembly = app.synth();
  pruneStaleAssets(outdir);
  const artifact = assembly.getStackArtifact(stack.artifactId);
  const resources = Object.values((artifact.template as { Resources: Record<string, { Type: string }> }).Resources);
  const count = (type: string) => resources.filter((r) => r.Type === type).length;
  const errors = artifact.messages.filter((m) => m.level === 'error');
  const warnings = artifact.messages.filter((m) => m.level === 'warning');
  for (const w of warnings) console.log(`warning ${w.id}: ${String(w.entry.data)}`);
  for (const e of errors) console.log(`error ${e.id}: ${String(e.entry.data)}`);
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  console.log(
    `synth: ${stack.stackName} → ${outdir}: ${resources.length} resources, ` +
      `${count('AWS::Lambda::Function')} functions, ${count('AWS::StepFunctions::StateMachine')} state machine(s), ` +
      `${count('AWS::Events::Rule')} rules, ${count('AWS::SQS::Queue')} queues, ${count('AWS::CloudWatch::Alarm')} alarms; ` +
      `missing entries: ${stack.missingEntries.length ? stack.missingEntries.join(', ') : 'none'}; ` +
      `cdk-nag AwsSolutions: ${errors.length} unsuppressed error(s); ${seconds}s`,
  );
  return errors.length > 0 ? 1 : 0;
}

process.exitCode = main();
