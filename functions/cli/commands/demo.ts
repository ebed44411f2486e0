/**
 * `nodefleet demo [--scenario NAME|FILE] [--speed X]`: runs a scenario of the embedded
 * environment (infra/local) end to end — the same functions, state machine and event patterns
 * as in AWS against local stand-ins — printing Karpenter-style log lines, a live view and a
 * summary. Exit code 0 only when the scenario's expectations hold; 1 when they do not; 2 for
 * a usage error (unknown scenario, bad speed, invalid scenario file).
 */
import type { Command } from 'commander';
import { DefaultScenario, ScenarioError, listScenarioNames, loadScenario } from '../../../infra/local/scenario.ts';
import { runScenario } from '../../../infra/local/runner.ts';

export function register(program: Command): void {
  program
    .command('demo')
    .description(`run a scenario of the embedded environment end to end (default ${DefaultScenario})`)
    .option('--scenario <name|file>', `scenario name (${listScenarioNames().join(', ')}) or YAML file`, DefaultScenario)
    .option('--speed <x>', "virtual seconds per real second (default: the scenario's own, usually 10)")
    .option('--verbose', 'print DEBUG log lines too')
    .option('--keep', 'keep the environment running after the summary (kubectl --kubeconfig .nodefleet/kubeconfig …) until Ctrl-C')
    .action(async (opts: { scenario: string; speed?: string; verbose?: boolean; keep?: boolean }) => {
      let speed: number | undefined;
      if (opts.speed !== undefined) {
        speed = Number(opts.speed);
        if (!Number.isFinite(speed) || speed < 0.01) {
          process.stderr.write(`nodefleet demo: --speed must be a number ≥ 0.01, got "${opts.speed}"\n`);
          process.exit(2);
        }
      }
      let scenario;
      try {
        scenario = loadScenario(opts.scenario);
      } catch (err) {
        process.stderr.write(`nodefleet demo: ${err instanceof ScenarioError ? err.message : String(err)}\n`);
        process.exit(2);
      }
      const keepUntil = opts.keep
        ? (env: { kubeconfigPath: string }) => {
            process.stdout.write(`\nenvironment kept running: kubectl --kubeconfig ${env.kubeconfigPath} get nodes,pods -A   (Ctrl-C to stop)\n`);
            return new Promise<void>((resolve) => process.once('SIGINT', () => resolve()));
          }
        : undefined;
      const result = await runScenario(scenario, { speed, logLevel: opts.verbose ? 'DEBUG' : 'INFO', keepUntil });
      // Open sockets / SDK keep-alive agents must not keep the process (or its exit code) hostage.
      process.exit(result.ok ? 0 : 1);
    });
}
