/**
 * `nodefleet demo [--scenario NAME|FILE] [--speed X] [--cluster embedded|real] [--no-ui] [--ui-port N] [--log-format text|json]`:
 * runs a scenario of the embedded environment (infra/local) end to end — the same functions,
 * state machine and event patterns as in AWS against local stand-ins — printing one human line
 * per log record and a one-line live status (≤ 100 columns), serving the live view on 127.0.0.1,
 * then the summary and `.nodefleet/report.html`. Every log record is also a Karpenter JSON line
 * in `.nodefleet/logs.jsonl`. Exit code 0 only when the scenario's expectations hold; 1 when they
 * do not; 2 for a usage error (unknown scenario, bad speed, port, log format or cluster, invalid
 * scenario file). `--cluster real` runs it on the real control-plane tier (docs/real-tier.md).
 */
import { relative } from 'node:path';
import type { Command } from 'commander';
import { DefaultScenario, ScenarioError, listScenarioNames, loadScenario } from '../../../infra/local/scenario.ts';
import { runScenario } from '../../../infra/local/runner.ts';
import { DefaultViewPort } from '../../../infra/local/ui/index.ts';

export function register(program: Command): void {
  program
    .command('demo')
    .description(`run a scenario of the embedded environment end to end (default ${DefaultScenario})`)
    .option('--scenario <name|file>', `scenario name (${listScenarioNames().join(', ')}) or YAML file`, DefaultScenario)
    .option('--speed <x>', "virtual seconds per real second (default: the scenario's own, usually 10)")
    .option('--verbose', 'print DEBUG log lines too')
    .option('--no-ui', 'do not serve the live view')
    .option('--ui-port <port>', `live view port on 127.0.0.1 (default ${DefaultViewPort}, or any free port when it is busy; 0 = any)`)
    .option('--log-format <format>', 'log lines on the console: text (for people) or json (Karpenter JSON, as in .nodefleet/logs.jsonl)', 'text')
    .option(
      '--cluster <kind>',
      'embedded (the in-process cluster, scaled virtual time) or real (kube-apiserver, scheduler, controller-manager and kwok from `npm run real-build`, wall time)',
      'embedded',
    )
    .option('--keep', 'keep the environment running after the summary (kubectl --kubeconfig .nodefleet/kubeconfig …) until Ctrl-C')
    .action(
      async (opts: {
        scenario: string;
        speed?: string;
        cluster: string;
        verbose?: boolean;
        keep?: boolean;
        ui: boolean;
        uiPort?: string;
        logFormat: string;
      }) => {
        if (opts.cluster !== 'embedded' && opts.cluster !== 'real') {
          process.stderr.write(`nodefleet demo: --cluster must be embedded or real, got "${opts.cluster}"\n`);
          process.exit(2);
        }
        if (opts.cluster === 'real' && opts.speed !== undefined) {
          process.stderr.write('nodefleet demo: --speed: the real cluster runs on wall time (speed 1); leave --speed out\n');
          process.exit(2);
        }
        let speed: number | undefined;
        if (opts.speed !== undefined) {
          speed = Number(opts.speed);
          if (!Number.isFinite(speed) || speed < 0.01) {
            process.stderr.write(`nodefleet demo: --speed must be a number ≥ 0.01, got "${opts.speed}"\n`);
            process.exit(2);
          }
        }
        let uiPort: number | undefined;
        if (opts.uiPort !== undefined) {
          uiPort = Number(opts.uiPort);
          if (!/^\d+$/.test(opts.uiPort) || uiPort > 65535) {
            process.stderr.write(`nodefleet demo: --ui-port must be a port number 0-65535, got "${opts.uiPort}"\n`);
            process.exit(2);
          }
        }
        if (opts.logFormat !== 'text' && opts.logFormat !== 'json') {
          process.stderr.write(`nodefleet demo: --log-format must be text or json, got "${opts.logFormat}"\n`);
          process.exit(2);
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
              const kubeconfig = relative(process.cwd(), env.kubeconfigPath).startsWith('..')
                ? env.kubeconfigPath
                : relative(process.cwd(), env.kubeconfigPath);
              process.stdout.write(
                `\nenvironment kept running (Ctrl-C to stop); the live view keeps serving. Try:\n  kubectl --kubeconfig ${kubeconfig} get nodes,pods -A\n`,
              );
              return new Promise<void>((resolve) => process.once('SIGINT', () => resolve()));
            }
          : undefined;
        // The real tier is a dev tool of this repository (test/real), loaded only when asked for.
        const cluster = opts.cluster === 'real' ? (await import('../../../test/real/scenarios/real-cluster.ts')).realCluster : undefined;
        const result = await runScenario(scenario, {
          speed,
          cluster,
          logLevel: opts.verbose ? 'DEBUG' : 'INFO',
          logFormat: opts.logFormat,
          ui: opts.ui ? { port: uiPort } : undefined,
          keepUntil,
        });
        // Open sockets / SDK keep-alive agents must not keep the process (or its exit code) hostage.
        process.exit(result.ok ? 0 : 1);
      },
    );
}
