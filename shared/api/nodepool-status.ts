/**
 * A NodePool's status resources: what its NodeClaims hold (KC pkg/controllers/nodepool/counter:
 * the capacity of each of the pool's nodes and claims, plus `nodes`, their count), and the
 * gauge values Karpenter derives from it and from spec.limits (KC
 * pkg/controllers/metrics/nodepool: label resource_type lower-cased with '-' → '_', cpu in cores,
 * every other resource in its base unit).
 */
import type { NodeClaim } from './nodeclaim.ts';
import type { NodePool } from './nodepool.ts';
import { parseResource, parseResources, type Resources } from './quantity.ts';

/** Canonical resources (cpu in millicores) the pool's live claims hold, with `nodes` their count. */
export function nodePoolResources(poolName: string, claims: readonly Pick<NodeClaim, 'nodePool' | 'phase' | 'capacity'>[]): Resources {
  const out: Resources = { nodes: 0 };
  for (const c of claims) {
    if (c.nodePool !== poolName || c.phase === 'Terminated' || c.phase === 'Failed') continue;
    out.nodes += 1;
    for (const [k, v] of Object.entries(parseResources(c.capacity))) out[k] = (out[k] ?? 0) + v;
  }
  return out;
}

/** One gauge sample per resource: Karpenter's resource_type label and value (cpu in cores). */
export function resourceGauges(resources: Resources): { resourceType: string; value: number }[] {
  return Object.entries(resources).map(([k, v]) => ({ resourceType: k.toLowerCase().replaceAll('-', '_'), value: k === 'cpu' ? v / 1000 : v }));
}

/** spec.limits in canonical units; empty when the pool has none. */
export function nodePoolLimits(pool: Pick<NodePool, 'spec'>): Resources {
  const out: Resources = {};
  for (const [k, v] of Object.entries(pool.spec.limits ?? {})) out[k] = parseResource(k, v);
  return out;
}
