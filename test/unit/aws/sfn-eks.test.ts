import { describe, expect, it } from 'vitest';
import { mockClient } from 'aws-sdk-client-mock';
import { SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { SfnTerminationStarter, executionArn, executionName } from '../../../shared/aws/sfn-termination-starter.ts';
import { terminationExecutionName } from '../../../shared/api/termination.ts';
import { eksToken, EksTokenPrefix } from '../../../shared/aws/eks.ts';

const arn = 'arn:aws:states:ap-northeast-2:123456789012:stateMachine:nodefleet-termination';

describe('SfnTerminationStarter', () => {
  it('names the execution after the claim; ExecutionAlreadyExists counts as started', async () => {
    const sfn = mockClient(SFNClient);
    sfn
      .on(StartExecutionCommand)
      .resolvesOnce({ executionArn: `${arn.replace(':stateMachine:', ':execution:')}:default-abcde`, startDate: new Date() })
      .rejectsOnce(Object.assign(new Error('exists'), { name: 'ExecutionAlreadyExists' }));
    const s = new SfnTerminationStarter(new SFNClient({ region: 'ap-northeast-2' }), arn);
    const a = await s.start({ nodeClaim: 'default-abcde', reason: 'gc' });
    const b = await s.start({ nodeClaim: 'default-abcde', reason: 'gc' });
    expect(a).toBe(b);
    expect(sfn.commandCalls(StartExecutionCommand)[0].args[0].input.name).toBe('default-abcde');
  });

  it('uses terminationExecutionName, so history finds the execution for any claim name', async () => {
    const sfn = mockClient(SFNClient);
    sfn.on(StartExecutionCommand).resolves({});
    const s = new SfnTerminationStarter(new SFNClient({ region: 'ap-northeast-2' }), arn);
    const long = `team.a/${'x'.repeat(100)}`;
    for (const nodeClaim of ['default-abcde', 'a.b/c', 'a/b.c', long]) {
      const started = await s.start({ nodeClaim, reason: 'gc' });
      expect(started).toBe(executionArn(arn, terminationExecutionName(nodeClaim)));
    }
    const names = sfn.commandCalls(StartExecutionCommand).map((c) => c.args[0].input.name!);
    expect(names[0]).toBe('default-abcde');
    expect(names.slice(1).every((n) => /^[A-Za-z0-9_-]{1,80}$/.test(n))).toBe(true);
    expect(new Set(names).size).toBe(4); // 'a.b/c' and 'a/b.c' no longer collide on 'a-b-c'
    expect(names[3]).toHaveLength(80);
    expect(executionName('a.b/c')).toBe(terminationExecutionName('a.b/c'));
  });
});

describe('EKS token', () => {
  it('is k8s-aws-v1. + base64url of a presigned STS GetCallerIdentity URL signing x-k8s-aws-id', async () => {
    const token = await eksToken(
      'karpenter-demo',
      'ap-northeast-2',
      { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' },
      new Date('2026-01-01T00:00:00Z'),
    );
    expect(token.startsWith(EksTokenPrefix)).toBe(true);
    const body = token.slice(EksTokenPrefix.length);
    expect(body).not.toMatch(/[=+/]/);
    const url = new URL(Buffer.from(body, 'base64url').toString());
    expect(url.host).toBe('sts.ap-northeast-2.amazonaws.com');
    expect(url.searchParams.get('Action')).toBe('GetCallerIdentity');
    expect(url.searchParams.get('X-Amz-Expires')).toBe('60');
    expect(url.searchParams.get('X-Amz-SignedHeaders')).toBe('host;x-k8s-aws-id');
    expect(url.searchParams.get('X-Amz-Date')).toBe('20260101T000000Z');
  });
});
