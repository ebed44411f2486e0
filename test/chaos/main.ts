/**
 * `npm run chaos -- [--seed N] [--runs N] [--faults-per-run N] [--json] [--only i,j] [--no-shrink]`
 *
 * Runs `runs` chaos runs with seeds N, N+1, … (default seed 1, 1 run, 30 faults per run), one
 * line per run, then a summary. A failing seed is replayed with fewer faults to a small
 * reproduction (unless --no-shrink). With --json the last line is one JSON object:
 * `{ runs, faultsInjected, faultsByKind, violations: [...] , reproductions: [...] }`.
 * Exit code 0 when no invariant was violated, 1 otherwise, 2 for a usage error.
 */
import { Command, InvalidArgumentError } from 'commander';
import { runChaos, shrink, type RunResult } from './run.ts';
import type { Violation } from './invariants.ts';

const int = (name: string, min: number) => (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) throw new InvalidArgumentError(`${name} must be an integer ≥ ${min}, got "${v}"`);
  return n;
};

const program = new Command('chaos')
  .description('fault-injection runs of nodefleet in the embedded environment, with invariants')
  .option('--seed <n>', 'first seed', int('--seed', 0), 1)
  .option('--runs <n>', 'number of runs (seeds seed, seed+1, …)', int('--runs', 1), 1)
  .option('--faults-per-run <n>', 'faults scheduled per run', int('--faults-per-run', 0), 30)
  .option('--only <indices>', 'replay only these fault indices (comma-separated)', (v) => {
    const xs = v.split(',').filter(Boolean).map(Number);
    if (xs.some((x) => !Number.isInteger(x) || x < 0)) throw new InvalidArgumentError(`--only must be comma-separated fault indices, got "${v}"`);
    return xs;
  })
  .option('--active-seconds <n>', 'virtual seconds of workload changes and faults per run (default 720)', int('--active-seconds', 60))
  .option('--no-shrink', 'do not shrink a failing seed')
  .option('--json', 'last line: one JSON object with the totals')
  .exitOverride();

let opts: { seed: number; runs: number; faultsPerRun: number; only?: number[]; activeSeconds?: number; shrink: boolean; json?: boolean };
try {
  program.parse(process.argv);
  opts = program.opts();
} catch (err) {
  const code = (err as { code?: string }).code;
  process.exit(code === 'commander.helpDisplayed' || code === 'commander.version' ? 0 : 2);
}

const log = (l: string) => process.stderr.write(`${l}\n`);
const results: RunResult[] = [];
const violations: Violation[] = [];
const reproductions: { seed: number; command: string; invariant: string }[] = [];
for (let i = 0; i < opts.runs; i++) {
  const seed = opts.seed + i;
  const base = { seed, faultsPerRun: opts.faultsPerRun, only: opts.only, activeSeconds: opts.activeSeconds, log };
  const r = await runChaos(base);
  results.push(r);
  const kinds = new Set(r.injected.map((f) => f.kind)).size;
  process.stdout.write(`seed ${seed}: ${r.injected.length} faults (${kinds} kinds), ${r.violations.length} violations, virtual ${r.virtualSeconds}s, real ${r.realSeconds.toFixed(1)}s${r.settled ? '' : ', did not settle'}\n`);
  for (const v of r.violations) process.stdout.write(`  VIOLATION ${v.invariant} seed=${v.seed} t=${v.atSeconds}s: ${v.message} [${v.objects.filter(Boolean).join(', ')}]\n`);
  violations.push(...r.violations);
  if (r.violations.length && opts.shrink && !opts.only) {
    const s = await shrink(r, base);
    const command = `npm run chaos -- --seed ${seed} --faults-per-run ${opts.faultsPerRun}${opts.activeSeconds ? ` --active-seconds ${opts.activeSeconds}` : ''} --only ${s.only.join(',')}`;
    reproductions.push({ seed, command, invariant: r.violations[0].invariant });
    process.stdout.write(`  reproduction (${s.only.length} of ${r.planned.length} faults): ${command}\n`);
  }
}

const faultsByKind: Record<string, number> = {};
for (const r of results) for (const f of r.injected) faultsByKind[f.kind] = (faultsByKind[f.kind] ?? 0) + 1;
const faultsInjected = Object.values(faultsByKind).reduce((a, b) => a + b, 0);
process.stdout.write(`${results.length} runs, ${faultsInjected} faults injected (${Object.keys(faultsByKind).length} kinds), ${violations.length} violations\n`);
if (opts.json) process.stdout.write(`${JSON.stringify({ runs: results.length, faultsInjected, faultsByKind, violations, reproductions })}\n`);
process.exit(violations.length ? 1 : 0);
