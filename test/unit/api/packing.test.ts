/**
 * Where a round's packing mode comes from (shared/api/packing.ts): NodePool annotation, then the
 * operator's setting, then the default; a bad annotation is a `validate` problem and a bad
 * NODEFLEET_PACKING fails the function's start with the variable's name.
 */
import { describe, expect, it } from 'vitest';
import { choosePacking, type PackingMode } from '../../../shared/api/packing.ts';
import { NodePoolSchema, type NodePool } from '../../../shared/api/nodepool.ts';
import { validateYamlText } from '../../../shared/api/validate.ts';
import { parseRuntimeEnv } from '../../../shared/runtime/env.ts';

function pool(name: string, packing?: string): NodePool {
  return NodePoolSchema.parse({
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name, ...(packing ? { annotations: { 'nodefleet.io/packing': packing } } : {}) },
    spec: { template: { spec: { nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' }, requirements: [] } } },
  });
}

describe('choosePacking', () => {
  const cases: { name: string; pools: NodePool[]; setting?: PackingMode; packing?: PackingMode; source: string; conflict?: RegExp }[] = [
    { name: 'nothing set: the default', pools: [pool('a')], source: 'default' },
    { name: 'the setting when no NodePool says', pools: [pool('a')], setting: 'karpenter', packing: 'karpenter', source: 'setting' },
    { name: 'the annotation over the setting', pools: [pool('a', 'cost'), pool('b')], setting: 'karpenter', packing: 'cost', source: 'annotation' },
    { name: 'annotated pools that agree', pools: [pool('a', 'karpenter'), pool('b', 'karpenter')], packing: 'karpenter', source: 'annotation' },
    {
      name: 'annotated pools that disagree: the setting, with the conflict named',
      pools: [pool('a', 'karpenter'), pool('b', 'cost')],
      setting: 'karpenter',
      packing: 'karpenter',
      source: 'setting',
      conflict: /^NodePools disagree on nodefleet\.io\/packing \(karpenter: a; cost: b\); using karpenter$/,
    },
    { name: 'an invalid annotation is skipped (validate reports it)', pools: [pool('a', 'tight')], setting: 'cost', packing: 'cost', source: 'setting' },
  ];
  it.each(cases)('$name', ({ pools, setting, packing, source, conflict }) => {
    const c = choosePacking(pools, setting);
    expect(c.packing).toBe(packing);
    expect(c.source).toBe(source);
    if (conflict) expect(c.conflict).toMatch(conflict);
    else expect(c.conflict).toBeUndefined();
  });
});

describe('packing values', () => {
  it('validate names an unknown nodefleet.io/packing value', () => {
    const text = `apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: a, annotations: {nodefleet.io/packing: tight}}
spec: {template: {spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}, requirements: []}}}
`;
    expect(validateYamlText(text, 'np.yaml').problems).toEqual([
      'np.yaml: NodePool/a: metadata.annotations["nodefleet.io/packing"]: unknown packing mode "tight"; modes: cost, karpenter',
    ]);
    expect(validateYamlText(text.replace('tight', 'karpenter'), 'np.yaml').problems).toEqual([]);
  });

  it('NODEFLEET_PACKING is parsed once and a bad value names the variable', () => {
    const base = { NODEFLEET_CLUSTER_NAME: 'c', NODEFLEET_TABLE_NAME: 't', AWS_REGION: 'us-east-1' };
    expect(parseRuntimeEnv({ ...base, NODEFLEET_PACKING: 'karpenter' }).packing).toBe('karpenter');
    expect(parseRuntimeEnv(base).packing).toBeUndefined();
    expect(() => parseRuntimeEnv({ ...base, NODEFLEET_PACKING: 'tight' })).toThrow(/^environment variable NODEFLEET_PACKING: /);
  });
});
