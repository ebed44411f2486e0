/**
 * The IAM simulator (AGPL-3.0 devDependency) is loaded only when installed: with it, calls are
 * checked; without it, the authorizer lets known callers through and the run says so
 * (IamNotEnforced), never claiming the calls were allowed by a policy.
 */
import { describe, expect, it } from 'vitest';
import { IamNotEnforced, LocalAuthorizer } from './authorizer.ts';
import { iamCheck } from '../expectations.ts';
import { loadEvaluator } from './evaluate.ts';

const principal = { name: 'provisioner', roleArn: 'arn:aws:iam::111122223333:role/provisioner', policies: [{ Version: '2012-10-17', Statement: [] }] };
const ctx = { partition: 'aws', region: 'us-east-1', account: '111122223333' };

describe('IAM evaluator loading', () => {
  it('loads from a checkout (devDependencies installed): tests enforce IAM', async () => {
    expect(await loadEvaluator()).toBeTypeOf('function');
  });

  it('is undefined when the package is not installed', async () => {
    expect(await loadEvaluator('@cloud-copilot/not-installed-package')).toBeUndefined();
  });

  it('without an evaluator, calls pass and the iam check says IAM is not enforced', async () => {
    const authorizer = new LocalAuthorizer(new Map([['key', principal]]), undefined);
    expect(authorizer.enforced).toBe(false);
    expect(await authorizer.authorize('key', 'ec2:DescribeInstances', {}, ctx)).toBeUndefined();
    // An unknown caller is still refused.
    expect((await authorizer.authorize('other', 'ec2:DescribeInstances', {}, ctx))?.code).toBe('AuthFailure');
    const quiet = new LocalAuthorizer(new Map([['key', principal]]), undefined);
    await quiet.authorize('key', 'ec2:DescribeInstances', {}, ctx);
    const iam = iamCheck(quiet);
    expect(iam.detail).toContain(IamNotEnforced);
    expect(iam.detail).not.toMatch(/allowed by/);
  });

  it('with the evaluator, a policy without the action denies', async () => {
    const authorizer = new LocalAuthorizer(new Map([['key', principal]]), await loadEvaluator());
    expect(authorizer.enforced).toBe(true);
    expect((await authorizer.authorize('key', 'ec2:DescribeInstances', {}, ctx))?.code).toBe('UnauthorizedOperation');
  });
});
