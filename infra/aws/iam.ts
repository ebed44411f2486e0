/**
 * The function roles' IAM statements as CDK objects. The statements themselves live in
 * shared/api/iam-policy.ts (one source for the stack and the embedded environment, which enforces
 * the same documents locally); here they get CloudFormation tokens for partition, region, account
 * and the stack's ARNs.
 */
import { Aws, type Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import { policyStatements, type Permission, type PolicyTargets } from '../../shared/api/iam-policy.ts';

export { ClusterTagValue, clusterTagKey } from '../../shared/api/iam-policy.ts';

/** The stack's resources the statements refer to. */
export type IamTargets = Omit<PolicyTargets, 'partition' | 'region' | 'account'>;

/**
 * The statements for one permission set, in `stack`'s partition, region and account.
 * @throws Error when `startTermination` is asked for and there is no state machine.
 */
export function statementsFor(stack: Stack, permission: Permission, t: IamTargets): iam.PolicyStatement[] {
  return policyStatements(permission, { ...t, partition: Aws.PARTITION, region: stack.region, account: Aws.ACCOUNT_ID }).map((s) =>
    iam.PolicyStatement.fromJson(s),
  );
}
