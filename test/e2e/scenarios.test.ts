/**
 * Every shipped scenario of the embedded environment, end to end: the real functions, the
 * termination state machine and the EventBridge patterns against the local stand-ins. A test
 * passes only when all the scenario's expectations hold; a failure lists each failed check
 * with what was measured (and the run's summary is printed).
 *
 * The scenarios run on stepped virtual time (infra/local/clock.ts `stepped`, as the chaos
 * harness): time stands still while anything works, so a loaded machine cannot make a handler
 * look slow to a scenario's deadlines (on the ×10 real-time clock, load ~15 failed
 * statefulset-interruption). The seed scenario also runs as `npm start` runs it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DefaultScenario, listScenarioNames, loadScenario } from '../../infra/local/scenario.ts';
import { runScenario } from '../../infra/local/runner.ts';
import { DashboardMetrics } from '../../infra/aws/observability.ts';

const workDir = mkdtempSync(join(tmpdir(), 'nodefleet-e2e-'));
/** Every metric some scenario emitted (the dashboard check below reads it). */
const emitted = new Set<string>();
afterAll(() => rmSync(workDir, { recursive: true, force: true }));

describe('embedded environment scenarios', () => {
  it.each(listScenarioNames())(
    '%s',
    async (name) => {
      // Prepare
      const scenario = loadScenario(name);
      // Act
      const result = await runScenario(scenario, { quiet: true, workDir, failFast: true, stepped: true });
      for (const m of result.metricNames) emitted.add(m);
      // Assess
      const failed = result.checks.filter((c) => !c.ok).map((c) => `${c.name}: ${c.detail}`);
      if (failed.length) process.stdout.write(`${result.summary}\n`);
      expect(failed).toEqual([]);
    },
    // A generous ceiling, not a speed claim: speed belongs in `npm run bench`.
    300_000,
  );

  it(`${DefaultScenario} on the real-time clock, as npm start runs it`, async () => {
    const result = await runScenario(loadScenario(DefaultScenario), { quiet: true, workDir, failFast: true });
    const failed = result.checks.filter((c) => !c.ok).map((c) => `${c.name}: ${c.detail}`);
    if (failed.length) process.stdout.write(`${result.summary}\n`);
    expect(failed).toEqual([]);
  }, 300_000);

  // Runs after the scenarios (tests of a file run in order): a graph no function feeds is a defect.
  it('every metric on the CloudWatch dashboard is emitted by some scenario', () => {
    const never = DashboardMetrics.flatMap((g) => g.metrics).filter((m) => !emitted.has(m));
    expect(never.sort()).toEqual([]);
  });
});
