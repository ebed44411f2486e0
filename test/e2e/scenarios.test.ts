/**
 * Every shipped scenario of the embedded environment, end to end: the real functions, the
 * termination state machine and the EventBridge patterns against the local stand-ins. A test
 * passes only when all the scenario's expectations hold; a failure lists each failed check
 * with what was measured (and the run's summary is printed).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { listScenarioNames, loadScenario } from '../../infra/local/scenario.ts';
import { runScenario } from '../../infra/local/runner.ts';

const workDir = mkdtempSync(join(tmpdir(), 'nodefleet-e2e-'));
afterAll(() => rmSync(workDir, { recursive: true, force: true }));

describe('embedded environment scenarios', () => {
  it.each(listScenarioNames())(
    '%s',
    async (name) => {
      // Prepare
      const scenario = loadScenario(name);
      // Act
      const result = await runScenario(scenario, { quiet: true, workDir, failFast: true });
      // Assess
      const failed = result.checks.filter((c) => !c.ok).map((c) => `${c.name}: ${c.detail}`);
      if (failed.length) process.stdout.write(`${result.summary}\n`);
      expect(failed).toEqual([]);
    },
    // A generous ceiling, not a speed claim: speed belongs in `npm run bench`.
    300_000,
  );
});
