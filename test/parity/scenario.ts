/**
 * One parity scenario and its two readings: nodefleet's `solve()` input, and the JSON the Karpenter
 * oracle (test/oracle/karpenter, README.md there) reads. Both come from the same objects, so the two
 * schedulers see the same instance types (capacity, allocatable, labels, offerings), NodePools,
 * nodes, pods and DaemonSets.
 */
import type { Node, Pod } from '../../shared/api/kube.ts';
import { formatResource, type Resources } from '../../shared/api/quantity.ts';
import { parseNodePool } from '../../shared/api/validate.ts';
import { readWorkloads } from '../../shared/api/workloads.ts';
import { instanceTypeFromCase, type CaseInstanceType } from '../../shared/catalog/index.ts';
import type { InstanceType } from '../../shared/catalog/types.ts';
import type { SchedulingInput, SchedulingSettings } from '../../shared/scheduling/index.ts';
import { existingFromNodes } from '../../functions/cli/cases/snapshot.ts';

/** A scenario as Kubernetes users write it: case-format instance types (test/cases/FORMAT.md) and objects. */
export interface ParityScenario {
  /** Made-up or catalog-derived types, `allocatable` always given so both sides use the same figure. */
  instanceTypes: CaseInstanceType[];
  /** karpenter.sh/v1 NodePool objects. */
  nodePools: Record<string, unknown>[];
  /** v1 Node objects (labels incl. karpenter.sh/nodepool, status.capacity/allocatable). */
  nodes: Node[];
  /** v1 Pods: with spec.nodeName bound to a node, without pending. */
  pods: Pod[];
  /** apps/v1 DaemonSets. */
  daemonSets: Record<string, unknown>[];
  settings: { minValuesPolicy?: 'Strict' | 'BestEffort'; preferencePolicy?: 'Respect' | 'Ignore' };
}

/** The resolved instance types of a scenario (as nodefleet's catalog would give them). */
export function resolvedTypes(s: ParityScenario): InstanceType[] {
  return s.instanceTypes.map((t) => instanceTypeFromCase(t));
}

/** nodefleet's input for the scenario. */
export function toSchedulingInput(s: ParityScenario, packing: SchedulingSettings['packing'], types = resolvedTypes(s)): SchedulingInput {
  const clone = <T>(x: T): T => structuredClone(x);
  const w = readWorkloads([
    ...clone(s.pods).map((p) => ({ kind: 'Pod', apiVersion: 'v1', ...p })),
    ...clone(s.daemonSets),
    ...clone(s.nodes).map((n) => ({ kind: 'Node', apiVersion: 'v1', ...n })),
  ]);
  return {
    pods: w.pendingPods,
    nodePools: s.nodePools.map((np) => parseNodePool(clone(np))),
    instanceTypes: () => types,
    existingNodes: existingFromNodes(w.nodes, w.boundPods),
    boundPods: w.boundPods,
    daemonSets: w.daemonSets,
    settings: { ...s.settings, packing },
  };
}

function quantities(r: Resources): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(r)) if (v > 0) out[k] = formatResource(k, v);
  return out;
}

/** The oracle's scenario JSON (test/oracle/karpenter/README.md). */
export function toOracleScenario(s: ParityScenario, types = resolvedTypes(s)): Record<string, unknown> {
  return {
    instanceTypes: types.map((t) => {
      const overhead: Resources = {};
      for (const k of Object.keys(t.capacity)) overhead[k] = Math.max(0, t.capacity[k] - (t.allocatable[k] ?? 0));
      return {
        name: t.name,
        capacity: quantities(t.capacity),
        overhead: quantities(overhead),
        labels: t.labels,
        offerings: t.offerings.map((o) => ({ zone: o.zone, capacityType: o.capacityType, price: o.priceUsdPerHour, available: o.available })),
      };
    }),
    nodePools: s.nodePools,
    nodes: s.nodes,
    pods: s.pods,
    daemonSets: s.daemonSets,
    settings: s.settings,
  };
}
