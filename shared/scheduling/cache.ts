/**
 * An explicit cache for repeated `solve()` calls over the same catalog (disruption runs one
 * simulation per candidate, the provisioner one per batch): the per-NodePool template — the
 * admitted instance types with their available offerings, daemonset overhead, room for pods,
 * cheapest-first order and efficiency marks — and the label keys each instance-type list
 * defines. Building these costs tens of milliseconds with ~800 admitted types; a simulation
 * otherwise spends most of its time there.
 *
 * Pure: nothing is global. A cache lives as long as the object the caller keeps (one disruption
 * pass, one Lambda container), entries are keyed on the identity of the instance-type array
 * (WeakMap, so a new catalog array starts afresh and the old one can be collected) and on the
 * content of everything else the template depends on (NodePool name and template, daemonset
 * templates, ICE-cached offerings, label keys, efficiency margin). The caller must not mutate an
 * instance-type array or its types after passing them: pass a new array instead.
 */
import type { NodePool } from '../api/nodepool.ts';
import type { InstanceType } from '../catalog/types.ts';
import { PoolTemplate } from './template.ts';
import type { DaemonSetTemplate, UnavailableOffering } from './types.ts';

/**
 * Templates kept per instance-type array. ICE-cached offerings change every few minutes, so a
 * long-lived cache sees new keys; the oldest is dropped past this many.
 */
export const MaxTemplatesPerTypeList = 32;

/** Opaque cache for {@link SchedulingInput.cache}; create with {@link createSchedulingCache}. */
export interface SchedulingCache {
  /** @internal instance-type array → (content key → template). */
  readonly templates: WeakMap<readonly InstanceType[], Map<string, PoolTemplate>>;
  /** @internal instance-type array → label keys its types define. */
  readonly typeKeys: WeakMap<readonly InstanceType[], ReadonlySet<string>>;
  /** Templates built (misses) and reused (hits), for tests and benchmarks. */
  readonly stats: { hits: number; misses: number };
}

/** A new, empty cache. Keep it as long as the catalog (instance-type arrays) stays the same. */
export function createSchedulingCache(): SchedulingCache {
  return { templates: new WeakMap(), typeKeys: new WeakMap(), stats: { hits: 0, misses: 0 } };
}

function templateKey(
  nodePool: NodePool,
  daemonSets: readonly DaemonSetTemplate[],
  unavailable: readonly UnavailableOffering[],
  typeKeys: ReadonlySet<string>,
  margin: number | undefined,
): string {
  const ice = unavailable.map((u) => `${u.instanceType}|${u.zone}|${u.capacityType}`).sort();
  return JSON.stringify([nodePool.metadata.name, nodePool.spec.template, daemonSets.map((d) => d.spec), ice, [...typeKeys].sort(), margin ?? null]);
}

/**
 * The template of `nodePool` over `instanceTypes`, from `cache` when one with the same inputs
 * was built before (a new one otherwise, stored when a cache is given).
 */
export function poolTemplate(
  cache: SchedulingCache | undefined,
  nodePool: NodePool,
  instanceTypes: readonly InstanceType[],
  daemonSets: readonly DaemonSetTemplate[],
  unavailable: readonly UnavailableOffering[],
  typeKeys: ReadonlySet<string>,
  margin: number | undefined,
): PoolTemplate {
  if (!cache) return new PoolTemplate(nodePool, instanceTypes, daemonSets, unavailable, typeKeys, margin);
  let byKey = cache.templates.get(instanceTypes);
  if (!byKey) cache.templates.set(instanceTypes, (byKey = new Map()));
  const key = templateKey(nodePool, daemonSets, unavailable, typeKeys, margin);
  const hit = byKey.get(key);
  if (hit) {
    cache.stats.hits++;
    return hit;
  }
  cache.stats.misses++;
  const built = new PoolTemplate(nodePool, instanceTypes, daemonSets, unavailable, typeKeys, margin);
  if (byKey.size >= MaxTemplatesPerTypeList) byKey.delete(byKey.keys().next().value!);
  byKey.set(key, built);
  return built;
}

/** Label keys the types of `list` define, from `cache` when known (see template.ts `collectTypeKeys`). */
export function listTypeKeys(
  cache: SchedulingCache | undefined,
  list: readonly InstanceType[],
  collect: (l: readonly InstanceType[]) => ReadonlySet<string>,
): ReadonlySet<string> {
  if (!cache) return collect(list);
  let keys = cache.typeKeys.get(list);
  if (!keys) cache.typeKeys.set(list, (keys = collect(list)));
  return keys;
}
