/**
 * `npm run attack -- [--json] [--seed N] [--count N] [--family F[,G…]] [--jobs N]`
 *
 * Forged inputs (issue 23: views, events, queue messages, execution inputs, table items,
 * disruption commands) against the real handlers and state machines over test/fakes; trial i
 * (0-based) forges an input of family i mod |families| from seed N + i, so
 * `--family F --seed S --count 1` replays one trial. Each violation is printed with its family,
 * seed, kind, the forged input and the invariant it broke. With --json the last line is one JSON
 * object: `{ trials, violations, byFamily: { <family>: { trials, violations, kinds } }, seconds, effects, failures: [...] }`
 * (`effects`: what the trials did to the worlds by kind — terminations, evictions, pod deletions, launches —
 * legitimate ones included, so a pass that exercised nothing shows).
 * Exit code 0 when no invariant was violated, 1 otherwise, 2 for a usage error.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { Command, InvalidArgumentError } from 'commander';
import { FamilyNames, type FamilyName } from './families.ts';
import { runTrial, type TrialResult } from './run.ts';
import { stopLocalDynamo } from './world.ts';

const ResultPrefix = 'ATTACK-RESULT ';

const int = (name: string, min: number) => (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) throw new InvalidArgumentError(`${name} must be an integer ≥ ${min}, got "${v}"`);
  return n;
};
const families = (v: string): FamilyName[] => {
  const xs = v.split(',').filter(Boolean);
  const bad = xs.filter((x) => !(FamilyNames as readonly string[]).includes(x));
  if (xs.length === 0 || bad.length) throw new InvalidArgumentError(`--family must be one or more of ${FamilyNames.join(', ')} (comma-separated), got "${v}"`);
  return xs as FamilyName[];
};

const program = new Command('attack')
  .description("forged inputs against nodefleet's real handlers and state machines, with invariants")
  .option('--seed <n>', 'seed of the first trial (trial i uses seed + i)', int('--seed', 0), 1)
  .option('--count <n>', 'number of trials', int('--count', 1), 60)
  .option('--family <names>', `families, comma-separated (default all: ${FamilyNames.join(', ')})`, families)
  .option('--jobs <n>', 'trials in parallel processes', int('--jobs', 1), 1)
  .option('--json', 'last line: one JSON object with the totals')
  .addOption(new Command().createOption('--worker <trials>', 'internal: run these family:seed trials and print result lines').hideHelp())
  .exitOverride();

interface Opts {
  seed: number;
  count: number;
  family?: FamilyName[];
  jobs: number;
  json?: boolean;
  worker?: string;
}
let opts: Opts;
try {
  program.parse(process.argv);
  opts = program.opts();
} catch (err) {
  const code = (err as { code?: string }).code;
  process.exit(code === 'commander.helpDisplayed' || code === 'commander.version' ? 0 : 2);
}

type Trial = { family: FamilyName; seed: number };
const parseTrials = (s: string): Trial[] =>
  s.split(',').map((t) => {
    const [family, seed] = t.split(':');
    return { family: family as FamilyName, seed: Number(seed) };
  });

if (opts.worker) {
  for (const t of parseTrials(opts.worker)) process.stdout.write(`${ResultPrefix}${JSON.stringify(await runTrial(t.family, t.seed))}\n`);
  await stopLocalDynamo();
  process.exit(0);
}

const chosen = opts.family ?? [...FamilyNames];
const trials: Trial[] = Array.from({ length: opts.count }, (_, i) => ({ family: chosen[i % chosen.length], seed: opts.seed + i }));

/** A batch of trials in a child process (this script with --worker). */
function inWorker(batch: Trial[], onResult: (r: TrialResult) => void): Promise<void> {
  const script = fileURLToPath(import.meta.url);
  const child = spawn(process.execPath, [...process.execArgv, script, '--worker', batch.map((t) => `${t.family}:${t.seed}`).join(',')], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const seen = new Set<string>();
  createInterface({ input: child.stdout }).on('line', (l) => {
    if (!l.startsWith(ResultPrefix)) return;
    const r = JSON.parse(l.slice(ResultPrefix.length)) as TrialResult;
    seen.add(`${r.family}:${r.seed}`);
    onResult(r);
  });
  return new Promise((resolve) => {
    child.on('close', (code, signal) => {
      for (const t of batch) {
        if (seen.has(`${t.family}:${t.seed}`)) continue;
        onResult({
          ...t,
          kind: '?',
          summary: '',
          seconds: 0,
          effects: {},
          violations: [{ invariant: 'harness-error', message: `worker exited with ${code ?? signal} before this trial's result` }],
        });
      }
      resolve();
    });
  });
}

const started = performance.now();
const results: TrialResult[] = [];
const report = (r: TrialResult) => {
  results.push(r);
  for (const v of r.violations) {
    process.stdout.write(`VIOLATION ${v.invariant} family=${r.family} seed=${r.seed} kind=${r.kind}: ${v.message}\n`);
    process.stdout.write(`  input: ${r.summary}\n  replay: npm run attack -- --family ${r.family} --seed ${r.seed} --count 1\n`);
  }
  if (results.length % 50 === 0)
    process.stderr.write(
      `${results.length}/${trials.length} trials, ${results.reduce((n, x) => n + x.violations.length, 0)} violations, ${((performance.now() - started) / 1000).toFixed(0)} s\n`,
    );
};

if (opts.jobs <= 1) {
  for (const t of trials) report(await runTrial(t.family, t.seed));
  await stopLocalDynamo();
} else {
  const batches: Trial[][] = Array.from({ length: opts.jobs }, () => []);
  trials.forEach((t, i) => batches[i % opts.jobs].push(t));
  await Promise.all(batches.filter((b) => b.length).map((b) => inWorker(b, report)));
}
results.sort((a, b) => a.seed - b.seed);

const seconds = Math.round((performance.now() - started) / 100) / 10;
const byFamily: Record<string, { trials: number; violations: number; kinds: Record<string, number> }> = {};
for (const r of results) {
  const f = (byFamily[r.family] ??= { trials: 0, violations: 0, kinds: {} });
  f.trials += 1;
  f.violations += r.violations.length;
  f.kinds[r.kind] = (f.kinds[r.kind] ?? 0) + 1;
}
const violations = results.reduce((n, r) => n + r.violations.length, 0);
const effects: Record<string, number> = {};
for (const r of results) for (const [k, n] of Object.entries(r.effects)) effects[k] = (effects[k] ?? 0) + n;
process.stdout.write(`${results.length} forged inputs, ${violations} violations, ${seconds} s\n`);
process.stdout.write(
  `  effects on the worlds: ${
    Object.entries(effects)
      .map(([k, n]) => `${k} ${n}`)
      .join(', ') || 'none'
  }\n`,
);
for (const [name, f] of Object.entries(byFamily))
  process.stdout.write(
    `  ${name.padEnd(10)} ${String(f.trials).padStart(5)} trials ${String(f.violations).padStart(4)} violations  (${Object.entries(f.kinds)
      .map(([k, n]) => `${k} ${n}`)
      .join(', ')})\n`,
  );
if (opts.json) {
  const failures = results.flatMap((r) => r.violations.map((v) => ({ family: r.family, seed: r.seed, kind: r.kind, input: r.summary, ...v })));
  process.stdout.write(`${JSON.stringify({ trials: results.length, violations, byFamily, seconds, effects, failures })}\n`);
}
process.exit(violations ? 1 : 0);
