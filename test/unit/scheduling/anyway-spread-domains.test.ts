/**
 * Which NodePools register zones for a ScheduleAnyway spread under `packing: karpenter`
 * (topology.ts `topologyDomains`, template.ts `registeredZones`): a pool whose requirements admit
 * none of its listed types still registers their zones (KC topology.go `buildDomainGroups`); a
 * pool with no type listed registers none (KC provisioner.go skips it).
 */
import { describe, expect, it } from 'vitest';
import { node } from '../../fakes/index.ts';
import { existingFromNode } from '../../../shared/scheduling/existing-capacity.ts';
import { solve, type SchedulingInput, type SchedulingResult } from '../../../shared/scheduling/index.ts';
import { input, itype, nodePool, pendingPods } from './builders.ts';

const web = pendingPods('web', 4, {
  cpu: '1',
  labels: { app: 'web' },
  spec: {
    topologySpreadConstraints: [
      { maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: { matchLabels: { app: 'web' } } },
    ],
  },
});
const type = itype({ name: 'm-4x16', labels: { 'karpenter.k8s.aws/instance-family': 'm' } });
const twoZones = nodePool('np-a', { requirements: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['us-east-1a', 'us-east-1b'] }] });
/** A roomy node of np-a in us-east-1a: placed pods go there before any claim. */
const node0 = existingFromNode(
  node({
    name: 'node-0',
    allocatable: { cpu: '16', memory: '64Gi', pods: '110' },
    labels: { 'karpenter.sh/nodepool': 'np-a', 'topology.kubernetes.io/zone': 'us-east-1a' },
  }),
  [],
);

const run = (extra: Partial<SchedulingInput>): SchedulingResult =>
  solve({ ...input(web, [type], [twoZones], { settings: { packing: 'karpenter' }, existingNodes: [node0] }), ...extra });
const onNode0 = (r: SchedulingResult) => r.placements.filter((p) => p.node === 'node-0').length;

describe('ScheduleAnyway zone spread under packing: karpenter, zones of pools that launch nothing', () => {
  it('counts the zones of a pool that admits none of its listed types: us-east-1c stays at 0, so after 1/1 the spread relaxes onto node-0 (3/1)', () => {
    const noFamily = nodePool('np-fb', { requirements: [{ key: 'karpenter.k8s.aws/instance-family', operator: 'In', values: ['fb'] }] });
    const r = run({ nodePools: [twoZones, noFamily] });
    expect(r.unschedulable).toEqual([]);
    expect(onNode0(r)).toBe(3);
    expect(r.newNodeClaims.map((c) => c.pods.length)).toEqual([1]);
  });

  it('registers nothing for a pool with no type listed: its zone us-east-1c does not count, the spread holds at 2/2', () => {
    const empty = nodePool('np-empty', { requirements: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['us-east-1c'] }] });
    const r = run({ nodePools: [twoZones, empty], instanceTypes: (np) => (np.metadata.name === 'np-empty' ? [] : [type]) });
    expect(r.unschedulable).toEqual([]);
    expect(onNode0(r)).toBe(2);
    expect(r.newNodeClaims.map((c) => c.pods.length)).toEqual([2]);
  });
});
