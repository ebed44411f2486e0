/** NodePool status resources and Karpenter's usage / limit gauge values (shared/api/nodepool-status.ts). */
import { describe, expect, it } from 'vitest';
import type { NodeClaim } from '../../../shared/api/nodeclaim.ts';
import { nodePoolLimits, nodePoolResources, resourceGauges } from '../../../shared/api/nodepool-status.ts';

describe('NodePool usage and limits', () => {
  it("sums the capacity of the pool's live claims, counts them as nodes, and gives cpu in cores with resource_type in snake case", () => {
    const claims = [
      { nodePool: 'default', phase: 'Initialized' as const, capacity: { cpu: '4', memory: '16Gi', 'ephemeral-storage': '20Gi', pods: '58' } },
      { nodePool: 'default', phase: 'Launched' as const, capacity: { cpu: '2', memory: '8Gi' } },
      { nodePool: 'default', phase: 'Terminated' as const, capacity: { cpu: '64', memory: '256Gi' } },
      { nodePool: 'other', phase: 'Initialized' as const, capacity: { cpu: '8' } },
      { nodePool: 'default', phase: 'Pending' as const },
    ] as Pick<NodeClaim, 'nodePool' | 'phase' | 'capacity'>[];
    const usage = nodePoolResources('default', claims);
    expect(usage).toEqual({ nodes: 3, cpu: 6000, memory: 24 * 2 ** 30, 'ephemeral-storage': 20 * 2 ** 30, pods: 58 });
    expect(resourceGauges(usage)).toContainEqual({ resourceType: 'cpu', value: 6 });
    expect(resourceGauges(usage)).toContainEqual({ resourceType: 'ephemeral_storage', value: 20 * 2 ** 30 });
  });

  it('limits as written, none when the pool has none', () => {
    expect(nodePoolLimits({ spec: { limits: { cpu: '1000', memory: '1000Gi' } } } as never)).toEqual({ cpu: 1_000_000, memory: 1000 * 2 ** 30 });
    expect(nodePoolLimits({ spec: {} } as never)).toEqual({});
  });
});
