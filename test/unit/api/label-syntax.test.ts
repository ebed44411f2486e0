/**
 * Label and taint keys and values in the runtime path (security review F9): NodePoolSchema and
 * NodeClaimSchema — what the handlers read NodePools (shared/kube/kube-api.ts listNodePools) and
 * stored claims with — refuse what `cli validate` refuses, with the same line, from one rule
 * (shared/api/nodepool.ts labelKeyProblem / labelValueProblem / taintValueProblem).
 */
import { describe, expect, it } from 'vitest';
import { NodePoolSchema, type NodePoolInput } from '../../../shared/api/nodepool.ts';
import { NodeClaimSchema } from '../../../shared/api/nodeclaim.ts';
import { formatPath, nodePoolProblems } from '../../../shared/api/validate.ts';
import { nodeClaim } from '../../fakes/index.ts';

function pool(spec: { labels?: Record<string, string>; taints?: unknown[]; startupTaints?: unknown[]; requirements?: unknown[] }): NodePoolInput {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: 'default' },
    spec: {
      template: {
        ...(spec.labels ? { metadata: { labels: spec.labels } } : {}),
        spec: {
          nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
          requirements: (spec.requirements ?? []) as never,
          ...(spec.taints ? { taints: spec.taints as never } : {}),
          ...(spec.startupTaints ? { startupTaints: spec.startupTaints as never } : {}),
        },
      },
    },
  } as NodePoolInput;
}

/** The runtime schema's problem lines (`<path>: <message>`), as cli validate prints them. */
function runtimeProblems(obj: unknown): string[] {
  const r = NodePoolSchema.safeParse(obj);
  return r.success ? [] : r.error.issues.map((i) => `${formatPath(i.path)}: ${i.message}`);
}

describe('NodePoolSchema refuses label, taint and requirement values that could reach a kubelet flag unescaped', () => {
  it.each([
    [
      'a template label value carrying a second label',
      pool({ labels: { team: 'a,topology.kubernetes.io/zone=us-east-1z' } }),
      'spec.template.metadata.labels.team: "a,topology.kubernetes.io/zone=us-east-1z" is not a valid label value',
    ],
    ['a template label key with "="', pool({ labels: { 'team=x': 'a' } }), 'spec.template.metadata.labels.team=x: "team=x" is not a valid label key'],
    [
      'a taint value carrying a second taint',
      pool({ taints: [{ key: 'dedicated', value: 'v:NoSchedule,evil', effect: 'NoSchedule' }] }),
      'spec.template.spec.taints[0].value: "v:NoSchedule,evil" is not a valid taint value',
    ],
    [
      'a startup taint key with ","',
      pool({ startupTaints: [{ key: 'a,b', effect: 'NoSchedule' }] }),
      'spec.template.spec.startupTaints[0].key: "a,b" is not a valid taint key',
    ],
    [
      'a requirement value with ","',
      pool({ requirements: [{ key: 'team', operator: 'In', values: ['a,b=c'] }] }),
      'spec.template.spec.requirements[0].values[0]: "a,b=c" is not a valid label value',
    ],
    [
      'a requirement key with ":"',
      pool({ requirements: [{ key: 'team:x', operator: 'Exists' }] }),
      'spec.template.spec.requirements[0].key: "team:x" is not a valid label key',
    ],
  ])('%s', (_what, obj, line) => {
    const runtime = runtimeProblems(obj);
    expect(runtime).toHaveLength(1);
    expect(runtime[0].startsWith(line)).toBe(true);
    // cli validate prints the same line, once
    expect(nodePoolProblems(obj)).toEqual(runtime);
  });

  it('accepts what Karpenter accepts: empty label values, prefixed keys, taint values with a prefix, numeric Gt values', () => {
    const ok = pool({
      labels: { team: '', 'example.com/tier': 'a-1.b_2' },
      taints: [{ key: 'example.com/dedicated', value: 'example.com/gpu', effect: 'NoSchedule' }],
      requirements: [
        { key: 'karpenter.k8s.aws/instance-cpu', operator: 'Gt', values: ['3'] },
        { key: 'topology.kubernetes.io/zone', operator: 'In', values: ['us-east-1a'] },
      ],
    });
    expect(runtimeProblems(ok)).toEqual([]);
    expect(nodePoolProblems(ok)).toEqual([]);
  });
});

describe('NodeClaimSchema (stored claims) refuses the same', () => {
  it('a claim whose taint value carries a second taint does not parse', () => {
    const claim = { ...nodeClaim({ name: 'default-a' }), taints: [{ key: 'dedicated', value: 'v:NoSchedule,evil', effect: 'NoSchedule' }] };
    const r = NodeClaimSchema.safeParse(claim);
    expect(r.success).toBe(false);
    expect(r.error?.issues[0].message).toMatch(/is not a valid taint value/);
  });
});
