/**
 * `npm run parity -- --disruption [--seed N] [--scenarios N] [--json] [--only I]`: differential
 * testing of nodefleet's `planDisruption` against Karpenter's disruption methods (issue 13).
 *
 * Generates small clusters (test/parity/generate-disruption.ts), asks the Karpenter oracle in its
 * disruption mode for the first command its disruption controller would start, runs nodefleet's
 * planner on the same cluster through the case runner's conversion, and compares the two
 * (test/parity/compare-disruption.ts). A divergence explained by test/parity/differences.ts
 * `DisruptionDifferences` is documented; any other fails the run.
 *
 * Output: one line per undocumented divergence and a summary; with --json the last line is
 * `{"mode": "disruption", "scenarios", "seed", "divergences": {"total", "undocumented", "documented",
 * "knownOpen", "byKind", "documentedBy", "knownOpenBy"}, "decided": {"karpenter", "nodefleet", "byMethod"},
 * "oracleErrors"}`; `byKind` counts the undocumented ones. `knownOpen`: divergences an open gap in
 * differences.ts (`DisruptionGaps`) explains, printed with --all, not failed on.
 * Exit: 0 when every divergence is documented or a known gap and the oracle answered every scenario,
 * 1 on an oracle error, 3 on an undocumented divergence.
 */
import fc from 'fast-check';
import { planDisruption } from '../../shared/disruption/index.ts';
import { compareDisruption, type DisruptionDivergenceKind, type OracleDisruption } from './compare-disruption.ts';
import { documentedDisruptionReason, openDisruptionGap } from './differences.ts';
import { toDisruptionSnapshot, toOracleDisruptionScenario, type DisruptionScenario } from './disruption-scenario.ts';
import { disruptionScenario } from './generate-disruption.ts';
import { Oracle } from './oracle.ts';

export interface DisruptionParityOptions {
  seed: number;
  scenarios: number;
  json: boolean;
  only?: number;
  oracleJson?: boolean;
  verbose?: boolean;
}

/** nodefleet's plan for a scenario. */
export function nodefleetPlan(s: DisruptionScenario) {
  return planDisruption(toDisruptionSnapshot(s), new Date(s.now));
}

export async function runDisruptionParity(opts: DisruptionParityOptions, bin: string, log: (line: string) => void): Promise<number> {
  const started = Date.now();
  const scenarios: DisruptionScenario[] = [];
  fc.assert(
    fc.property(disruptionScenario, (s) => {
      scenarios.push(s);
    }),
    { seed: opts.seed, numRuns: opts.scenarios },
  );
  const oracle = new Oracle(bin);
  const ask = (s: DisruptionScenario) => oracle.solve(toOracleDisruptionScenario(s)) as unknown as Promise<OracleDisruption>;

  if (opts.only !== undefined) {
    const s = scenarios[opts.only];
    if (opts.oracleJson) {
      log(JSON.stringify(toOracleDisruptionScenario(s)));
    } else {
      const k = await ask(s);
      const plan = nodefleetPlan(s);
      log(`scenario: ${JSON.stringify(toOracleDisruptionScenario(s))}`);
      log(`karpenter: ${JSON.stringify(k)}`);
      log(`nodefleet: ${JSON.stringify({ command: plan.command ? { method: plan.command.method, candidates: plan.command.candidates.map((c) => c.nodeName), replacements: plan.command.replacements.map((r) => ({ types: r.instanceTypes.slice(0, 5), price: r.priceUsdPerHour, pods: r.pods })) } : null, blocked: plan.blocked })}`);
      log(JSON.stringify(compareDisruption(k, plan)));
    }
    oracle.close();
    return 0;
  }

  const answers = await Promise.all(scenarios.map((s) => ask(s).catch((e: Error) => e)));
  oracle.close();
  const byKind: Partial<Record<DisruptionDivergenceKind, number>> = {};
  const documentedBy: Record<string, number> = {};
  const knownOpen: Record<string, number> = {};
  const open: { index: number; id: string; detail: string }[] = [];
  const byMethod: Record<string, { karpenter: number; nodefleet: number }> = {};
  const oracleErrors: string[] = [];
  const failing: { index: number; kind: DisruptionDivergenceKind; detail: string }[] = [];
  let total = 0;
  let decidedK = 0;
  let decidedN = 0;
  scenarios.forEach((s, index) => {
    const k = answers[index];
    if (k instanceof Error) {
      oracleErrors.push(`scenario ${index}: ${k.message}`);
      return;
    }
    const plan = nodefleetPlan(s);
    if (k.command) {
      decidedK++;
      (byMethod[k.command.method] ??= { karpenter: 0, nodefleet: 0 }).karpenter++;
    }
    if (plan.command) {
      decidedN++;
      (byMethod[plan.command.method] ??= { karpenter: 0, nodefleet: 0 }).nodefleet++;
    }
    for (const d of compareDisruption(k, plan)) {
      total++;
      const id = documentedDisruptionReason(d, s, k, plan);
      if (id) {
        documentedBy[id] = (documentedBy[id] ?? 0) + 1;
        continue;
      }
      const gap = openDisruptionGap(d, s, k, plan);
      if (gap) {
        knownOpen[gap] = (knownOpen[gap] ?? 0) + 1;
        open.push({ index, id: gap, detail: d.detail });
        continue;
      }
      byKind[d.kind] = (byKind[d.kind] ?? 0) + 1;
      failing.push({ index, kind: d.kind, detail: d.detail });
    }
  });
  for (const e of oracleErrors.slice(0, 10)) log(`oracle error: ${e}`);
  if (opts.verbose) for (const o of open) log(`known open ${o.id} (path "${o.index}"): ${o.detail}`);
  for (const f of failing.slice(0, opts.verbose ? failing.length : 30)) log(`divergence ${f.kind} (seed ${opts.seed}, path "${f.index}"): ${f.detail}`);
  if (!opts.verbose && failing.length > 30) log(`… ${failing.length - 30} more`);
  const documented = total - failing.length - open.length;
  const summary = {
    mode: 'disruption',
    scenarios: scenarios.length,
    seed: opts.seed,
    divergences: { total, undocumented: failing.length, documented, knownOpen: open.length, byKind, documentedBy, knownOpenBy: knownOpen },
    decided: { karpenter: decidedK, nodefleet: decidedN, byMethod },
    oracleErrors: oracleErrors.length,
  };
  const seconds = Math.round((Date.now() - started) / 100) / 10;
  log(`${summary.scenarios} disruption scenarios (seed ${opts.seed}): ${failing.length} undocumented divergence(s), ${open.length} known open gap(s), ${documented} documented; Karpenter decided ${decidedK}, nodefleet ${decidedN}; ${oracleErrors.length} oracle error(s); ${seconds} s`);
  if (opts.json) log(JSON.stringify(summary));
  return oracleErrors.length > 0 ? 1 : failing.length > 0 ? 3 : 0;
}
