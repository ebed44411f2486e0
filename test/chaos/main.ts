/**
 * `npm run chaos -- [--seed N] [--runs N] [--faults-per-run N] [--json] [--only i,j] [--jobs N] [--no-shrink]`
 *
 * Runs `runs` chaos runs with seeds N, N+1, … (default seed 1, 1 run, 30 faults per run), one
 * line per run, then a summary. Runs are spread over `jobs` processes (default: the machine's
 * available parallelism); each run is deterministic in its own process. A failing seed is
 * replayed with fewer faults to a small reproduction (unless --no-shrink). With --json the last
 * line is one JSON object: `{ runs, faultsInjected, faultsByKind, violations: [...], reproductions: [...] }`.
 * Exit code 0 when no invariant was violated, 1 otherwise, 2 for a usage error.
 */
import { spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { Command, InvalidArgumentError } from 'commander';
import { DefaultActiveSeconds, runChaos, shrink, type RunResult } from './run.ts';
import type { Violation } from './invariants.ts';

/** Prefix of a worker's per-run result line. */
const ResultPrefix = 'CHAOS-RESULT ';

const int = (name: string, min: number) => (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) throw new InvalidArgumentError(`${name} must be an integer ≥ ${min}, got "${v}"`);
  return n;
};
const list = (name: string) => (v: string) => {
  const xs = v.split(',').filter(Boolean).map(Number);
  if (xs.length === 0 || xs.some((x) => !Number.isInteger(x) || x < 0)) throw new InvalidArgumentError(`${name} must be comma-separated non-negative integers, got "${v}"`);
  return xs;
};

const program = new Command('chaos')
  .description('fault-injection runs of nodefleet in the embedded environment, with invariants')
  .option('--seed <n>', 'first seed', int('--seed', 0), 1)
  .option('--runs <n>', 'number of runs (seeds seed, seed+1, …)', int('--runs', 1), 1)
  .option('--faults-per-run <n>', 'faults scheduled per run', int('--faults-per-run', 0), 30)
  .option('--active-seconds <n>', `virtual seconds of workload changes and faults per run (default ${DefaultActiveSeconds})`, int('--active-seconds', 60))
  .option('--only <indices>', 'replay only these fault indices (comma-separated)', list('--only'))
  .option('--jobs <n>', 'runs in parallel processes (default: available parallelism)', int('--jobs', 1), Math.max(1, availableParallelism()))
  .option('--no-shrink', 'do not shrink a failing seed')
  .option('--json', 'last line: one JSON object with the totals')
  .addOption(new Command().createOption('--worker-seeds <seeds>', 'internal: run these seeds and print result lines').argParser(list('--worker-seeds')).hideHelp())
  .exitOverride();

interface Opts {
  seed: number;
  runs: number;
  faultsPerRun: number;
  activeSeconds?: number;
  only?: number[];
  jobs: number;
  shrink: boolean;
  json?: boolean;
  workerSeeds?: number[];
}
let opts: Opts;
try {
  program.parse(process.argv);
  opts = program.opts();
} catch (err) {
  const code = (err as { code?: string }).code;
  process.exit(code === 'commander.helpDisplayed' || code === 'commander.version' ? 0 : 2);
}

const log = (l: string) => process.stderr.write(`${l}\n`);
const runOpts = (seed: number) => ({ seed, faultsPerRun: opts.faultsPerRun, only: opts.only, activeSeconds: opts.activeSeconds, log });

if (opts.workerSeeds) {
  for (const seed of opts.workerSeeds) process.stdout.write(`${ResultPrefix}${JSON.stringify(await runChaos(runOpts(seed)))}\n`);
  process.exit(0);
}

/** Runs `seeds` in `jobs` worker processes (this script with --worker-seeds); calls `done` per finished run. */
async function runInWorkers(seeds: number[], jobs: number, done: (r: RunResult) => void): Promise<void> {
  const groups: number[][] = Array.from({ length: Math.min(jobs, seeds.length) }, () => []);
  seeds.forEach((s, i) => groups[i % groups.length].push(s));
  const script = fileURLToPath(import.meta.url);
  await Promise.all(
    groups.map(
      (g) =>
        new Promise<void>((resolve, reject) => {
          const args = [...process.execArgv, script, '--worker-seeds', g.join(','), '--faults-per-run', String(opts.faultsPerRun)];
          if (opts.activeSeconds) args.push('--active-seconds', String(opts.activeSeconds));
          if (opts.only) args.push('--only', opts.only.join(','));
          const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
          createInterface({ input: child.stdout }).on('line', (l) => {
            if (l.startsWith(ResultPrefix)) done(JSON.parse(l.slice(ResultPrefix.length)) as RunResult);
          });
          child.on('error', reject);
          child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`chaos worker for seeds ${g.join(',')} exited with ${code}`))));
        }),
    ),
  );
}

const results: RunResult[] = [];
const report = (r: RunResult) => {
  results.push(r);
  const kinds = new Set(r.injected.map((f) => f.kind)).size;
  process.stdout.write(`seed ${r.seed}: ${r.injected.length} faults (${kinds} kinds), ${r.violations.length} violations, virtual ${r.virtualSeconds}s, real ${r.realSeconds.toFixed(1)}s${r.settled ? '' : ', did not settle'}\n`);
  for (const v of r.violations) process.stdout.write(`  VIOLATION ${v.invariant} seed=${v.seed} t=${v.atSeconds}s: ${v.message} [${v.objects.filter(Boolean).join(', ')}]\n`);
};
const seeds = Array.from({ length: opts.runs }, (_, i) => opts.seed + i);
if (opts.jobs > 1 && seeds.length > 1) await runInWorkers(seeds, opts.jobs, report);
else for (const s of seeds) report(await runChaos(runOpts(s)));
results.sort((a, b) => a.seed - b.seed);

const violations: Violation[] = results.flatMap((r) => r.violations);
const reproductions: { seed: number; command: string; invariant: string }[] = [];
if (opts.shrink && !opts.only) {
  for (const r of results.filter((x) => x.violations.length)) {
    const s = await shrink(r, runOpts(r.seed));
    const command = `npm run chaos -- --seed ${r.seed} --faults-per-run ${opts.faultsPerRun}${opts.activeSeconds ? ` --active-seconds ${opts.activeSeconds}` : ''} --only ${s.only.join(',')}`;
    reproductions.push({ seed: r.seed, command, invariant: r.violations[0].invariant });
    process.stdout.write(`seed ${r.seed} reproduction (${s.only.length} of ${r.planned.length} faults): ${command}\n`);
  }
}

const faultsByKind: Record<string, number> = {};
for (const r of results) for (const f of r.injected) faultsByKind[f.kind] = (faultsByKind[f.kind] ?? 0) + 1;
const faultsInjected = Object.values(faultsByKind).reduce((a, b) => a + b, 0);
process.stdout.write(`${results.length} runs, ${faultsInjected} faults injected (${Object.keys(faultsByKind).length} kinds), ${violations.length} violations\n`);
if (opts.json) process.stdout.write(`${JSON.stringify({ runs: results.length, faultsInjected, faultsByKind, violations, reproductions })}\n`);
process.exit(violations.length ? 1 : 0);
