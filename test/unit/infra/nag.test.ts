/**
 * cdk-nag AwsSolutions on the stack: no finding may be left unsuppressed, and every suppression
 * must say why (infra/aws/nag.ts). Built with inline stand-in code, see stack-fixture.ts.
 */
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { buildTestStack } from './stack-fixture.ts';

function findings(context: Record<string, unknown>) {
  const { stack, template } = buildTestStack(context, { nag: true });
  const annotations = Annotations.fromStack(stack);
  const all = [
    ...annotations.findError('*', Match.stringLikeRegexp('AwsSolutions-.*')),
    ...annotations.findWarning('*', Match.stringLikeRegexp('AwsSolutions-.*')),
  ];
  const suppressions = Object.values(template.toJSON().Resources as Record<string, any>).flatMap(
    (r) => (r.Metadata?.cdk_nag?.rules_to_suppress ?? []) as { id: string; reason: string; applies_to?: unknown[] }[],
  );
  return { messages: all.map((m) => `${m.id}: ${String(m.entry.data).slice(0, 200)}`), suppressions };
}

/** Builds with cdk-nag are slow on a loaded machine. */
describe('cdk-nag AwsSolutions', { timeout: 240_000 }, () => {
  it('reports no unsuppressed finding on the default stack, and every suppression states a reason', () => {
    const { messages, suppressions } = findings({});
    expect(messages).toEqual([]);
    const ids = new Set(suppressions.map((s) => s.id));
    expect([...ids].sort()).toEqual(['AwsSolutions-IAM4', 'AwsSolutions-IAM5', 'AwsSolutions-L1', 'AwsSolutions-S1', 'AwsSolutions-SQS3']);
    for (const s of suppressions) expect(s.reason.length, `${s.id} reason`).toBeGreaterThanOrEqual(40);
    // IAM5 (wildcard resources) is never suppressed wholesale: always for named patterns.
    for (const s of suppressions.filter((x) => x.id === 'AwsSolutions-IAM5')) expect(s.applies_to?.length).toBeGreaterThan(0);
  });

  it('reports no unsuppressed finding with a VPC and without interruption handling', () => {
    const { messages } = findings({ vpcId: 'vpc-0123456789abcdef0', subnetIds: 'subnet-0a1b2c3d4e5f60718,subnet-0a1b2c3d4e5f60719', interruption: 'false' });
    expect(messages).toEqual([]);
  });
});
