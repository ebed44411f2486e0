/**
 * `npm run chaos -- [--seed N] [--runs N] [--faults-per-run N] [--json] [--only i,j] [--jobs N] [--no-shrink] [--cluster real]`
 *
 * `--cluster real` runs each run on the real control-plane tier (test/real, `npm run real-build`)
 * on wall time, with the real API's own faults (kube-apiserver restarts, watch expiry after an etcd
 * compaction, its PDBs' 429s) in place of the embedded API server's injected answers; one run at a
 * time unless --jobs says otherwise.
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
import { DefaultActiveSeconds, DefaultMaxRealSeconds, DefaultSettleSeconds, runChaos, shrink, type RunResult } from './run.ts';
import type { Violation } from './invariants.ts';

/** Real seconds a real-tier run gets beyond its active and settle windows: the control plane's start and stop, a loaded machine. */
const RealStartSlackSeconds = 10 * 60;

/** Prefix of a worker's per-run result line. */
const ResultPrefix = 'CHAOS-RESULT ';

const int = (name: string, min: number) => (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) throw new InvalidArgumentError(`${name} must be an integer ≥ ${min}, got "${v}"`);
  return n;
};
const list = (name: string) => (v: string) => {
  if (v === 'none') return [];
  const xs = v.split(',').filter(Boolean).map(Number);
  if (xs.length === 0 || xs.some((x) => !Number.isInteger(x) || x < 0))
    throw new InvalidArgumentError(`${name} must be comma-separated non-negative integers, got "${v}"`);
  return xs;
};

const program = new Command('chaos')
  .description('fault-injection runs of nodefleet in the embedded environment, with invariants')
  .option('--seed <n>', 'first seed', int('--seed', 0), 1)
  .option('--runs <n>', 'number of runs (seeds seed, seed+1, …)', int('--runs', 1), 1)
  .option('--faults-per-run <n>', 'faults scheduled per run', int('--faults-per-run', 0), 30)
  .option('--active-seconds <n>', `virtual seconds of workload changes and faults per run (default ${DefaultActiveSeconds})`, int('--active-seconds', 60))
  .option('--only <indices>', 'replay only these fault indices (comma-separated; none = no fault)', list('--only'))
  .option('--jobs <n>', 'runs in parallel processes (default: available parallelism)', int('--jobs', 1), Math.max(1, availableParallelism()))
  .option('--no-shrink', 'do not shrink a failing seed')
  .option(
    '--max-real-seconds <n>',
    `real seconds before a run is reported as did-not-finish (default ${DefaultMaxRealSeconds})`,
    int('--max-real-seconds', 10),
    DefaultMaxRealSeconds,
  )
  .option(
    '--shrink-budget-seconds <n>',
    'real seconds all shrinking together may take (then the smallest list found so far is printed)',
    int('--shrink-budget-seconds', 0),
    15 * 60,
  )
  .option('--cluster <kind>', 'embedded (stepped virtual time) or real (the real control-plane tier, wall time)', 'embedded')
  .option('--json', 'last line: one JSON object with the totals')
  .addOption(
    new Command().createOption('--worker-seeds <seeds>', 'internal: run these seeds and print result lines').argParser(list('--worker-seeds')).hideHelp(),
  )
  .exitOverride();

interface Opts {
  seed: number;
  runs: number;
  faultsPerRun: number;
  activeSeconds?: number;
  only?: number[];
  jobs: number;
  shrink: boolean;
  maxRealSeconds: number;
  shrinkBudgetSeconds: number;
  json?: boolean;
  cluster: string;
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
if (opts.cluster !== 'embedded' && opts.cluster !== 'real') {
  process.stderr.write(`chaos: --cluster must be embedded or real, got "${opts.cluster}"\n`);
  process.exit(2);
}
const cluster = opts.cluster as 'embedded' | 'real';
// One real control plane at a time on a small machine, unless asked; a real run lasts its wall time.
if (cluster === 'real' && !process.argv.includes('--jobs')) opts.jobs = 1;
if (cluster === 'real' && !process.argv.includes('--max-real-seconds'))
  opts.maxRealSeconds = (opts.activeSeconds ?? DefaultActiveSeconds) + DefaultSettleSeconds + RealStartSlackSeconds;

const log = (l: string) => process.stderr.write(`${l}\n`);
const runOpts = (seed: number) => ({
  seed,
  faultsPerRun: opts.faultsPerRun,
  only: opts.only,
  activeSeconds: opts.activeSeconds,
  maxRealSeconds: opts.maxRealSeconds,
  cluster,
  log,
});

if (opts.workerSeeds) {
  for (const seed of opts.workerSeeds) process.stdout.write(`${ResultPrefix}${JSON.stringify(await runChaos(runOpts(seed)))}\n`);
  process.exit(0);
}

/**
 * Real seconds the parent waits for a worker's run beyond the run's own cap before it kills the
 * worker (a run stuck outside its watchdog: the event loop blocked, the process wedged).
 */
const WorkerKillSlackSeconds = 120;

/** A run that produced no result: its worker crashed or was killed. Reported as `did-not-finish`. */
function unfinished(seed: number, only: number[] | undefined, why: string, realSeconds: number): RunResult {
  return {
    seed,
    planned: [],
    injected: [],
    violations: [
      { invariant: 'did-not-finish', seed, atSeconds: 0, message: `run ${only ? `--only ${only.join(',')} ` : ''}did not finish: ${why}`, objects: [] },
    ],
    virtualSeconds: 0,
    realSeconds,
    settled: false,
  };
}

/**
 * One run in its own process (this script with --worker-seeds): a run cannot leave state, handles
 * or a wedged event loop to the next, and a worker past its cap is killed, never waited on for ever.
 */
function runIsolated(seed: number, only?: number[]): Promise<RunResult> {
  const script = fileURLToPath(import.meta.url);
  const args = [
    ...process.execArgv,
    script,
    '--worker-seeds',
    String(seed),
    '--faults-per-run',
    String(opts.faultsPerRun),
    '--max-real-seconds',
    String(opts.maxRealSeconds),
    '--cluster',
    cluster,
  ];
  if (opts.activeSeconds) args.push('--active-seconds', String(opts.activeSeconds));
  const replay = only ?? opts.only;
  if (replay) args.push('--only', replay.length ? replay.join(',') : 'none');
  const start = Date.now();
  return new Promise((resolve) => {
    let result: RunResult | undefined;
    let killed = false;
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    const timer = setTimeout(
      () => {
        killed = true;
        child.kill('SIGKILL');
      },
      (opts.maxRealSeconds + WorkerKillSlackSeconds) * 1000,
    );
    createInterface({ input: child.stdout }).on('line', (l) => {
      if (l.startsWith(ResultPrefix)) result = JSON.parse(l.slice(ResultPrefix.length)) as RunResult;
    });
    const done = (why: string) => {
      clearTimeout(timer);
      resolve(result ?? unfinished(seed, only, why, (Date.now() - start) / 1000));
    };
    child.on('error', (err) => done(`worker failed to start: ${err.message}`));
    // 'close' (not 'exit'): stdout is fully read by then, so the result line is never lost.
    child.on('close', (code, signal) =>
      done(killed ? `worker killed after ${opts.maxRealSeconds + WorkerKillSlackSeconds}s real` : `worker exited with ${code ?? signal} and no result`),
    );
  });
}

/** Runs `tasks` at most `jobs` at a time. */
async function pool<T, R>(tasks: T[], jobs: number, fn: (t: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(tasks.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(jobs, tasks.length) }, async () => {
      while (next < tasks.length) {
        const i = next++;
        out[i] = await fn(tasks[i]);
      }
    }),
  );
  return out;
}

const isolated = opts.jobs > 1 || opts.runs > 1;
const runOne = (seed: number, only?: number[]): Promise<RunResult> =>
  isolated ? runIsolated(seed, only) : runChaos({ ...runOpts(seed), ...(only ? { only } : {}) });

const results: RunResult[] = [];
const report = (r: RunResult) => {
  results.push(r);
  const kinds = new Set(r.injected.map((f) => f.kind)).size;
  process.stdout.write(
    `seed ${r.seed}: ${r.injected.length} faults (${kinds} kinds), ${r.violations.length} violations, virtual ${r.virtualSeconds}s, real ${r.realSeconds.toFixed(1)}s${r.settled ? '' : ', did not settle'}\n`,
  );
  for (const v of r.violations)
    process.stdout.write(`  VIOLATION ${v.invariant} seed=${v.seed} t=${v.atSeconds}s: ${v.message} [${v.objects.filter(Boolean).join(', ')}]\n`);
};
const seeds = Array.from({ length: opts.runs }, (_, i) => opts.seed + i);
await pool(seeds, opts.jobs, async (s) => report(await runOne(s)));
results.sort((a, b) => a.seed - b.seed);

const violations: Violation[] = results.flatMap((r) => r.violations);
const reproductions: { seed: number; command: string; invariant: string }[] = [];
if (opts.shrink && !opts.only) {
  const failing = results.filter((x) => x.violations.length && x.planned.length);
  const deadline = Date.now() + opts.shrinkBudgetSeconds * 1000;
  await pool(failing, opts.jobs, async (r) => {
    const s = await shrink(r, (only) => runOne(r.seed, only), { deadlineMs: deadline });
    const command = `npm run chaos -- --seed ${r.seed} --faults-per-run ${opts.faultsPerRun}${opts.activeSeconds ? ` --active-seconds ${opts.activeSeconds}` : ''}${cluster === 'real' ? ' --cluster real' : ''} --only ${s.only.length ? s.only.join(',') : 'none'}`;
    reproductions.push({ seed: r.seed, command, invariant: r.violations[0].invariant });
    process.stdout.write(`seed ${r.seed} reproduction (${s.only.length} of ${r.planned.length} faults): ${command}\n`);
  });
  reproductions.sort((a, b) => a.seed - b.seed);
}

const faultsByKind: Record<string, number> = {};
for (const r of results) for (const f of r.injected) faultsByKind[f.kind] = (faultsByKind[f.kind] ?? 0) + 1;
const faultsInjected = Object.values(faultsByKind).reduce((a, b) => a + b, 0);
process.stdout.write(
  `${results.length} runs, ${faultsInjected} faults injected (${Object.keys(faultsByKind).length} kinds), ${violations.length} violations\n`,
);
const realSeconds = Math.round(results.reduce((a, r) => a + r.realSeconds, 0));
if (opts.json)
  process.stdout.write(`${JSON.stringify({ cluster, runs: results.length, faultsInjected, faultsByKind, violations, reproductions, realSeconds })}\n`);
process.exit(violations.length ? 1 : 0);
