/**
 * The embedded environment enforces the IAM policies the CDK stack deploys: with one statement
 * removed from the provisioner's policy (PassRole of the node role), the seed scenario fails the
 * way it would fail in AWS — CreateFleet refused with UnauthorizedOperation naming iam:PassRole —
 * and nothing launches. (With the full policy the same scenario passes: scenarios.test.ts.)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadScenario } from '../../infra/local/scenario.ts';
import { runScenario } from '../../infra/local/runner.ts';

const workDir = mkdtempSync(join(tmpdir(), 'nodefleet-iam-'));
afterAll(() => rmSync(workDir, { recursive: true, force: true }));

describe('IAM enforcement in the embedded environment', () => {
  it('a provisioner without PassRole cannot launch: the scenario fails with UnauthorizedOperation on iam:PassRole', async () => {
    // Prepare: the seed scenario, only as far as its first wait (the launch)
    const scenario = loadScenario('seed-inflate');
    const firstWait = scenario.timeline.findIndex((s) => 'waitFor' in s);
    scenario.timeline = scenario.timeline.slice(0, firstWait + 1);
    const lines: string[] = [];
    // Act
    const result = await runScenario(scenario, {
      quiet: false,
      out: (l) => lines.push(l),
      workDir,
      failFast: true,
      // Slow virtual time: the launch must be attempted within the 5-minute wait even on a loaded
      // machine (each IAM evaluation is real CPU time); the scenario fails either way, this is
      // about failing for the right reason.
      speed: 3,
      policyFilter: (fn, st) => !(fn === 'provisioner' && st.Sid === 'PassNodeRoleToEc2'),
    });
    // Assess
    if (result.ok) process.stdout.write(`${result.summary}\n${lines.join('\n')}\n`);
    expect(result.ok).toBe(false);
    const iam = result.checks.find((c) => c.name === 'iam')!;
    expect(iam.ok).toBe(false);
    expect(iam.detail).toMatch(
      /provisioner ec2:CreateFleet: UnauthorizedOperation: .*iam:PassRole on resource: arn:aws:iam::\d+:role\/KarpenterNodeRole-karpenter-demo/,
    );
    expect(result.checks.find((c) => c.name === 'launched.count')?.ok).toBe(false);
    // The provisioner's log line (its fields may wrap onto continuation lines).
    expect(lines.join('\n')).toMatch(/failed launching nodeclaim[\s\S]{0,600}?UnauthorizedOperation/);
  }, 300_000);
});
