/**
 * infra/k8s/admission-policy.yaml evaluated as the API server evaluates a ValidatingAdmissionPolicy:
 * its matchConstraints, then its matchConditions and validations in CEL over `request`,
 * `object` and `oldObject` (shared/api/cel.ts, the evaluator the CRD rules use).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { RepoRoot } from '../../../infra/aws/app.ts';
import { evalCel } from '../../../shared/api/cel.ts';
import { LabelNodePool } from '../../../shared/api/labels.ts';

type Obj = Record<string, any>;
const docs = parseAllDocuments(readFileSync(join(RepoRoot, 'infra/k8s/admission-policy.yaml'), 'utf8')).map((d) => d.toJS() as Obj);
const policy = docs.find((d) => d.kind === 'ValidatingAdmissionPolicy')!;
const binding = docs.find((d) => d.kind === 'ValidatingAdmissionPolicyBinding')!;

type Operation = 'CREATE' | 'UPDATE' | 'DELETE';
/** The API server's answer: 'allowed' or the policy's message. */
function admit(op: Operation, resource: string, groups: string[], oldObject: Obj | null, object: Obj | null): string {
  const matches = policy.spec.matchConstraints.resourceRules.some(
    (r: Obj) => r.operations.includes(op) && r.resources.includes(resource) && r.apiGroups.includes(''),
  );
  if (!matches) return 'allowed';
  const request = { operation: op, userInfo: { username: 'arn:aws:sts::111122223333:assumed-role/x/y', groups: [...groups, 'system:authenticated'] } };
  const vars = { request, object, oldObject };
  for (const c of policy.spec.matchConditions) {
    const r = evalCel(c.expression, vars);
    if (typeof r === 'string') return `error: ${r}`;
    if (!r) return 'allowed';
  }
  for (const v of policy.spec.validations) if (evalCel(v.expression, vars) !== true) return v.message;
  return 'allowed';
}

const node = (name: string, labels?: Record<string, string>): Obj => ({ apiVersion: 'v1', kind: 'Node', metadata: { name, ...(labels ? { labels } : {}) } });
const ours = node('ip-10-0-1-5.ec2.internal', { [LabelNodePool]: 'default', 'kubernetes.io/os': 'linux' });
const mng = node('ip-10-0-9-9.ec2.internal', { 'eks.amazonaws.com/nodegroup': 'system' });
const bare = node('ip-10-0-9-10.ec2.internal');
const rbac = parseAllDocuments(readFileSync(join(RepoRoot, 'infra/k8s/rbac-controllers.yaml'), 'utf8'))
  .map((d) => d.toJS() as Obj)
  .filter(Boolean);
/** Every Kubernetes group nodefleet's functions are bound to (the EKS access entries' groups). */
const groups: string[] = rbac
  .filter((d) => d.kind === 'ClusterRoleBinding')
  .flatMap((b) => b.subjects.filter((s: Obj) => s.kind === 'Group').map((s: Obj) => s.name));
/** The groups whose ClusterRole may patch, update or delete nodes. */
const nodeWriters = rbac
  .filter(
    (d) =>
      d.kind === 'ClusterRole' &&
      d.rules.some((r: Obj) => r.resources.includes('nodes') && r.verbs.some((v: string) => ['patch', 'update', 'delete'].includes(v))),
  )
  .map((r) => r.metadata.name);

describe('ValidatingAdmissionPolicy: nodefleet touches only NodePool nodes', () => {
  it('binds the policy with Deny', () => {
    expect(binding.spec.policyName).toBe(policy.metadata.name);
    expect(binding.spec.validationActions).toEqual(['Deny']);
    expect(policy.spec.failurePolicy).toBe('Fail');
  });

  it('every nodefleet group may patch and delete a node labelled karpenter.sh/nodepool', () => {
    expect(nodeWriters.length).toBeGreaterThanOrEqual(5);
    for (const w of nodeWriters) expect(groups, w).toContain(w);
    for (const g of groups) {
      expect(admit('UPDATE', 'nodes', [g], ours, { ...ours, spec: { unschedulable: true } }), g).toBe('allowed');
      expect(admit('DELETE', 'nodes', [g], ours, null), g).toBe('allowed');
    }
  });

  it('refuses every nodefleet group a managed node group node or an unlabelled node, even when the request adds the label', () => {
    for (const g of groups) {
      for (const victim of [mng, bare]) {
        expect(admit('DELETE', 'nodes', [g], victim, null), g).toMatch(/only nodes labelled karpenter.sh\/nodepool/);
        expect(admit('UPDATE', 'nodes', [g], victim, { ...victim, spec: { unschedulable: true } }), g).toMatch(/only nodes labelled/);
        const relabelled = { ...victim, metadata: { ...victim.metadata, labels: { ...victim.metadata.labels, [LabelNodePool]: 'default' } } };
        expect(admit('UPDATE', 'nodes', [g], victim, relabelled), g).toMatch(/only nodes labelled/);
        expect(admit('UPDATE', 'nodes/status', [g], victim, victim), g).toMatch(/only nodes labelled/);
      }
    }
  });

  it('leaves everyone else and node creation alone (kubelets register their own Nodes)', () => {
    expect(admit('DELETE', 'nodes', ['system:masters'], mng, null)).toBe('allowed');
    expect(admit('UPDATE', 'nodes', ['system:nodes'], mng, mng)).toBe('allowed');
    expect(admit('CREATE', 'nodes', [groups[0]], null, ours)).toBe('allowed');
  });
});
