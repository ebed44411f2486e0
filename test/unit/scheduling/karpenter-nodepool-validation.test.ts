/**
 * Karpenter's NodePool validation tests for well-known values (sigs.k8s.io/karpenter v1.15.0
 * pkg/controllers/nodepool/validation/suite_test.go): a NodePool whose capacity-type requirement
 * lists only unknown values is not ready (nothing launches from it, the reason says "no valid
 * values found"), and `validate` refuses it in one line; one known value among unknown ones passes.
 */
import { describe, expect, it } from 'vitest';
import { validateObject } from '../../../shared/api/validate.ts';
import { solve } from '../../../shared/scheduling/index.ts';
import { nodePoolNotReadyReason } from '../../../shared/scheduling/template.ts';
import { input, itype, nodePool, pendingPod } from './builders.ts';

const Types = [itype({ name: 'small', cpu: 2, memoryMiB: 4096 })];
const pool = (values: string[], key = 'karpenter.sh/capacity-type') => nodePool('default', { requirements: [{ key, operator: 'In', values }] });
const raw = (values: string[], key = 'karpenter.sh/capacity-type') => ({
  apiVersion: 'karpenter.sh/v1',
  kind: 'NodePool',
  metadata: { name: 'default' },
  spec: {
    template: {
      spec: { nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' }, requirements: [{ key, operator: 'In', values }] },
    },
  },
});

describe('Karpenter NodePool validation: well-known values', () => {
  it('should fail validation with only invalid capacity types', () => {
    const np = pool(['xspot']);
    expect(nodePoolNotReadyReason(np)).toBe(
      'nodepool is not ready: no valid values found in [xspot] for karpenter.sh/capacity-type, expected one of: [on-demand spot reserved], got: [xspot]',
    );
    const r = solve(input([pendingPod('p', { cpu: '1' })], Types, [np]));
    expect(r.newNodeClaims).toHaveLength(0);
    expect(JSON.stringify(r.unschedulable[0].reasons)).toContain('no valid values found');
    const problems = validateObject(raw(['xspot']));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain('no valid values found in [xspot] for karpenter.sh/capacity-type');
  });

  it('should pass validation with valid capacity types', () => {
    expect(nodePoolNotReadyReason(pool(['on-demand']))).toBeUndefined();
    expect(validateObject(raw(['on-demand']))).toEqual([]);
    expect(solve(input([pendingPod('p', { cpu: '1' })], Types, [pool(['on-demand'])])).newNodeClaims).toHaveLength(1);
  });

  it('should fail open if invalid and valid capacity types are present', () => {
    expect(nodePoolNotReadyReason(pool(['on-demand', 'xspot']))).toBeUndefined();
    expect(validateObject(raw(['on-demand', 'xspot']))).toEqual([]);
  });

  it('instance tenancy has known values too (the AWS provider adds dedicated, default)', () => {
    expect(nodePoolNotReadyReason(pool(['shared'], 'karpenter.k8s.aws/instance-tenancy'))).toContain(
      'no valid values found in [shared] for karpenter.k8s.aws/instance-tenancy',
    );
    expect(nodePoolNotReadyReason(pool(['default'], 'karpenter.k8s.aws/instance-tenancy'))).toBeUndefined();
  });

  it('not enough valid values for minValues', () => {
    const np = nodePool('default', { requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot', 'on_demand'], minValues: 2 }] });
    expect(nodePoolNotReadyReason(np)).toContain('not enough valid values found in [spot on_demand] for karpenter.sh/capacity-type, expected at least 2');
  });
});
