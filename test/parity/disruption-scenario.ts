/**
 * One disruption parity scenario and its two readings: the snapshot nodefleet's `planDisruption`
 * gets (built by the case runner's own conversion, functions/cli/cases/disruption.ts
 * `snapshotFromCase`, as a test/cases disruption case is run), and the JSON the Karpenter oracle
 * reads in its disruption mode (test/oracle/karpenter/README.md "Disruption mode").
 */
import type { KubeObject, PodDisruptionBudget } from '../../shared/api/kube.ts';
import type { DisruptionSnapshot } from '../../shared/disruption/index.ts';
import { snapshotFromCase } from '../../functions/cli/cases/disruption.ts';
import { toOracleScenario, type ParityScenario } from './scenario.ts';

/** A parity scenario at a point in time: NodePools carry `spec.disruption`, nodes and pods their creation times. */
export interface DisruptionScenario extends ParityScenario {
  /** RFC 3339: when the disruption pass runs. */
  now: string;
  pdbs: PodDisruptionBudget[];
  /** Karpenter's `SpotToSpotConsolidation` feature gate, given to both sides. */
  spotToSpotConsolidation: boolean;
}

/** nodefleet's snapshot of the scenario, through the case runner's conversion. */
export function toDisruptionSnapshot(s: DisruptionScenario): DisruptionSnapshot {
  const clone = <T>(x: T): T => structuredClone(x);
  return snapshotFromCase({
    now: s.now,
    instanceTypes: clone(s.instanceTypes),
    nodePools: clone(s.nodePools),
    nodes: clone(s.nodes),
    objects: [...clone(s.pods).map((p) => ({ ...p, kind: 'Pod', apiVersion: 'v1' })), ...clone(s.daemonSets), ...clone(s.pdbs).map((p) => ({ ...p, kind: 'PodDisruptionBudget', apiVersion: 'policy/v1' }))] as KubeObject[],
    settings: { ...s.settings, featureGates: { SpotToSpotConsolidation: s.spotToSpotConsolidation } },
  });
}

/** The oracle's input: the scheduling scenario JSON plus PDBs, the feature gate and `disruption.now`. */
export function toOracleDisruptionScenario(s: DisruptionScenario): Record<string, unknown> {
  const base = toOracleScenario(s);
  return {
    ...base,
    podDisruptionBudgets: s.pdbs,
    settings: { ...(base.settings as object), spotToSpotConsolidation: s.spotToSpotConsolidation },
    disruption: { now: s.now },
  };
}
