/**
 * The scenarios on the real control-plane tier: the same functions, termination state machine,
 * bus and expectations as test/e2e/scenarios.test.ts, with the Kubernetes side the real
 * kube-apiserver, kube-scheduler, kube-controller-manager and kwok (test/real/scenarios/real-cluster.ts).
 * The clock is wall time (docs/real-tier.md), so each takes as long as it would in AWS.
 * NODEFLEET_REAL_SCENARIOS=name,name runs only those.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadScenario } from '../../infra/local/scenario.ts';
import { runScenario } from '../../infra/local/runner.ts';
import { realCluster } from './scenarios/real-cluster.ts';

/**
 * The scenarios .ci/run runs on this tier. web-stateful's budget window at a fixed UTC hour is
 * moved with its start to the wall clock (infra/local/wall-time.ts, docs/real-tier.md); it joins
 * this list once it has passed here (`NODEFLEET_REAL_SCENARIOS=web-stateful npm run real-scenarios`).
 */
export const RealTierScenarios = ['seed-inflate', 'spot-interruption', 'stuck-drain', 'table-replaced'];
const only = process.env.NODEFLEET_REAL_SCENARIOS?.split(',').filter(Boolean);
const workDir = mkdtempSync(join(tmpdir(), 'nodefleet-real-scenarios-'));
afterAll(() => rmSync(workDir, { recursive: true, force: true }));

describe('scenarios on the real control plane', () => {
  for (const name of only ?? RealTierScenarios) {
    const scenario = loadScenario(name);
    it(
      name,
      async () => {
        const lines: string[] = [];
        const result = await runScenario(scenario, {
          cluster: realCluster,
          workDir: join(workDir, name),
          persist: false,
          failFast: true,
          out: (l) => lines.push(l),
        });
        const failed = result.checks.filter((c) => !c.ok).map((c) => `${c.name}: ${c.detail}`);
        process.stdout.write(`${name}: ${result.ok ? 'ok' : 'FAILED'} in ${result.realSeconds.toFixed(0)} s\n`);
        if (failed.length) process.stdout.write(`${lines.join('\n')}\n`);
        expect(failed).toEqual([]);
      },
      // Wall time: the scenario's own timeout plus the control plane's start and stop.
      (scenario.timeout + 300) * 1000,
    );
  }
});
