/**
 * `npm run bench -- [--json] [--quick] [--vs-karpenter]`: benchmarks (--vs-karpenter: nodefleet and
 * Karpenter side by side, test/bench/vs-karpenter.ts). `--exact [--seed N] [--scenarios 500]
 * [--time-limit S]`: gap to the optimum on small random scenarios (test/bench/exact-bench.ts). `--scale [--sizes NxP,...]`: only the
 * cluster-state scale benchmark (test/bench/scale/index.ts), last JSON line `{"scale": [...]}`.
 * Prints a table per benchmark; with --json
 * the last line is one JSON object `{"scheduling": [...], "solveSetup": {...}, "disruption"?: ...}`.
 * Scheduling: test/bench/scheduling.ts. Disruption (engineer D): test/bench/disruption.ts, run
 * when present (its exported `runDisruptionBench` / `benchDisruption` is called).
 */
import { existsSync } from 'node:fs';
import { benchKarpenterMix, benchRealCatalog, benchSolveSetup, type SchedulingBenchRow } from './scheduling.ts';

const argv = process.argv.slice(2);
const args = new Set(argv);
const json = args.has('--json');
const quick = args.has('--quick');

if (args.has('--scale')) {
  // Cluster-state scale benchmark (test/bench/scale): its own report, nothing else runs.
  const { parseSizes, runScaleBench, scaleTable } = await import('./scale/index.ts');
  const sizesAt = argv.indexOf('--sizes');
  const rows = await runScaleBench({ sizes: parseSizes(sizesAt >= 0 ? argv[sizesAt + 1] : undefined), log: (s) => process.stderr.write(`${s}\n`) });
  process.stdout.write(`scale\n${scaleTable(rows)}\n`);
  if (json) process.stdout.write(`${JSON.stringify({ scale: rows })}\n`);
  process.exit(0);
}

if (args.has('--exact')) {
  // nodefleet's packings against the optimum on random small scenarios (test/bench/exact-bench.ts).
  const { benchExact } = await import('./exact-bench.ts');
  const num = (flag: string, def: number) => (argv.includes(flag) ? Number(argv[argv.indexOf(flag) + 1]) : def);
  const { summary, rows } = await benchExact({
    seed: num('--seed', 1),
    scenarios: num('--scenarios', 500),
    timeLimitSeconds: num('--time-limit', 10),
    log: (s) => process.stderr.write(`${s}\n`),
  });
  const worst = [...rows]
    .filter((r) => r.costGap !== undefined)
    .sort((a, b) => b.costGap! - a.costGap!)
    .slice(0, 8);
  const flagged = rows.filter((r) => r.costGap === undefined);
  const pct = (v: number | undefined) => (v === undefined ? '' : `${(v * 100).toFixed(1)}%`);
  process.stdout.write(
    `exact (seed ${summary.seed}, ${summary.scenarios} scenarios, HiGHS time limit ${summary.timeLimitSeconds}s): ${summary.optimal} optimal, ${summary.timeLimited} hit the limit, ${summary.excluded} excluded\n`,
  );
  process.stdout.write(`  gap to the optimum   median   p95      max      above optimum   total cost / optimum\n`);
  process.stdout.write(
    `  cost (default)       ${pct(summary.costGapMedian).padEnd(9)}${pct(summary.costGapP95).padEnd(9)}${pct(summary.costGapMax).padEnd(9)}${String(summary.costAboveOptimum).padEnd(16)}${summary.costTotalRatio}\n`,
  );
  process.stdout.write(
    `  karpenter            ${pct(summary.karpenterGapMedian).padEnd(9)}${pct(summary.karpenterGapP95).padEnd(9)}${pct(summary.karpenterGapMax).padEnd(9)}${String(summary.karpenterAboveOptimum).padEnd(16)}${summary.karpenterTotalRatio}\n`,
  );
  process.stdout.write(`  solver seconds: median ${summary.solveSecondsMedian}, max ${summary.solveSecondsMax}\n`);
  process.stdout.write('worst default-packing gaps:\n');
  for (const r of worst)
    process.stdout.write(
      `  #${r.index} ${r.pool} ${r.kinds}: cost $${r.costPerHour.toFixed(4)} ${r.costNodes.join(' ')} | optimum $${r.optimumPerHour.toFixed(4)} ${r.optimumNodes.join(' ')} (+${pct(r.costGap)}; karpenter +${pct(r.karpenterGap)})\n`,
    );
  for (const r of flagged)
    process.stdout.write(
      `  not compared #${r.index} ${r.pool} ${r.kinds}: status ${r.status}, pending cost ${r.costPending} karpenter ${r.karpenterPending}, best found $${r.optimumPerHour.toFixed(4)} vs cost $${r.costPerHour.toFixed(4)}\n`,
    );
  if (json) process.stdout.write(`${JSON.stringify({ exact: summary, worst, notCompared: flagged })}\n`);
  process.exit(0);
}

if (args.has('--vs-karpenter')) {
  const { benchVsKarpenter } = await import('./vs-karpenter.ts');
  const out = benchVsKarpenter({ quick, log: (line) => process.stderr.write(`${line}\n`) });
  const rows = out.rows as unknown as Record<string, unknown>[];
  process.stdout.write('nodefleet vs Karpenter (sigs.k8s.io/karpenter v1.15.0, same inputs, same run)\n');
  process.stdout.write(
    `${table(rows, ['workload', 'pods', 'instanceTypes', 'nodefleetPodsPerSecond', 'karpenterPodsPerSecond', 'speedRatio', 'nodefleetPodsPerCpuSecond', 'karpenterPodsPerCpuSecond', 'cpuSpeedRatio', 'nodefleetNodeClaims', 'karpenterNodeClaims', 'nodefleetUnschedulable', 'karpenterUnschedulable', 'nodefleetCostPerHour', 'karpenterCostPerHour', 'costRatio', 'clusterAutoscalerPerHour', 'costRatioVsClusterAutoscaler', 'runs'])}\n`,
  );
  if (out.clusterAutoscaler[0]) process.stdout.write(`baseline: ${out.clusterAutoscaler[0].description}: ${out.clusterAutoscaler[0].groups.join(', ')}\n`);
  process.stdout.write(
    'speed: Karpenter = Scheduler.Solve alone (its benchmark measure, 5 workers); nodefleet = the whole solve() call; median run; per wall-clock second and per CPU second of the process\n',
  );
  if (json) process.stdout.write(`${JSON.stringify({ vsKarpenter: out.rows, clusterAutoscaler: out.clusterAutoscaler.map(({ groups: _g, ...r }) => r) })}\n`);
  process.exit(0);
}

function table(rows: readonly Record<string, unknown>[], columns: string[]): string {
  const cells = rows.map((r) => columns.map((c) => String(r[c] ?? '')));
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((r) => r[i].length)));
  return [columns, ...cells].map((r) => r.map((c, i) => c.padStart(widths[i])).join('  ')).join('\n');
}

const scheduling: SchedulingBenchRow[] = [
  ...benchKarpenterMix(quick ? [1000, 5000] : [1000, 5000, 10000, 20000]),
  ...benchRealCatalog(quick ? [1000] : [1000, 5000]),
];
process.stdout.write('scheduling\n');
process.stdout.write(
  `${table(scheduling as unknown as Record<string, unknown>[], ['workload', 'pods', 'instanceTypes', 'podsPerSecond', 'podsPerCpuSecond', 'runs', 'firstRunMs', 'heapMiB', 'nodeClaims', 'unschedulable', 'costPerHour', 'lowerBoundPerHour', 'lpBoundPerHour', 'shapeLpBoundPerHour', 'baselinePerHour'])}\n`,
);
const real = scheduling.find((r) => r.baseline);
if (real) process.stdout.write(`baseline: ${real.baseline}\n`);
process.stdout.write(
  'bounds: lowerBound prices cpu at the cheapest $/vCPU type and memory at the cheapest $/GiB type (no type sells both) on capacity, not allocatable;\n' +
    '        lpBound is the cheapest fractional mix of types covering the requests with allocatable less daemonsets: the part of cost/lowerBound up to lpBound/lowerBound is structural,\n' +
    '        the rest is instance-size granularity, pod shapes and packing (test/bench/scheduling.ts lpBound);\n' +
    "        shapeLpBound also keeps each node's memory per cpu within the pods' own range (no node holds a mix outside it): no packing costs less.\n",
);

const setup = benchSolveSetup(quick ? 7 : 15);
process.stdout.write(
  `solve() fixed cost (1 pod, ${setup.admittedTypes} of ${setup.catalogTypes} ${setup.region} types admitted, median of ${setup.runs}): ${setup.coldMs} ms cold, ${setup.cachedMs} ms with createSchedulingCache()\n`,
);

const report: Record<string, unknown> = { scheduling: scheduling.map(({ baseline: _b, ...r }) => r), solveSetup: setup };
const disruptionFile = new URL('./disruption.ts', import.meta.url);
if (existsSync(disruptionFile)) {
  const mod = (await import(disruptionFile.href)) as Record<string, unknown>;
  const run = (mod.runDisruptionBench ?? mod.benchDisruption ?? mod.default) as ((o: { quick: boolean; json: boolean }) => unknown) | undefined;
  if (typeof run === 'function') report.disruption = await run({ quick, json });
}
if (json) process.stdout.write(`${JSON.stringify(report)}\n`);
