/** infra/aws/cfn-lint.ts: which findings fail `npm run cfn-lint`, and the pinned version it requires. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RepoRoot } from '../../../infra/aws/app.ts';
import { AcceptedWarnings, CfnLintRequirements, failingFindings, pinnedVersion, type CfnLintFinding } from '../../../infra/aws/cfn-lint.ts';

const finding = (Id: string, Level: CfnLintFinding['Level']): CfnLintFinding => ({ Rule: { Id }, Level, Message: 'm', Location: {} });

describe('cfn-lint findings', () => {
  it('fails on every error, even of an accepted rule id, and on warnings not accepted; passes accepted warnings', () => {
    const accepted = Object.keys(AcceptedWarnings)[0];
    const all = [
      finding('E3002', 'Error'),
      finding(accepted, 'Error'),
      finding('W1001', 'Warning'),
      finding(accepted, 'Warning'),
      finding('I3042', 'Informational'),
    ];
    expect(failingFindings(all).map((f) => `${f.Level} ${f.Rule.Id}`)).toEqual(['Error E3002', `Error ${accepted}`, 'Warning W1001', 'Informational I3042']);
  });

  it('requires the exact cfn-lint version the requirements pin, and every requirement is pinned exactly', () => {
    const text = readFileSync(join(RepoRoot, CfnLintRequirements), 'utf8');
    expect(pinnedVersion(text)).toMatch(/^\d+\.\d+\.\d+$/);
    for (const line of text.split('\n').filter((l) => l.trim() && !l.startsWith('#'))) expect(line).toMatch(/^[A-Za-z0-9_.-]+==[^=\s]+$/);
    expect(() => pinnedVersion('cfn-lint>=1\n')).toThrow(/no cfn-lint==<version> line/);
  });
});
