/**
 * One disruption parity scenario and its two readings: the snapshot nodefleet's `planDisruption`
 * gets (built by the case runner's own conversion, functions/cli/cases/disruption.ts
 * `snapshotFromCase`, as a test/cases disruption case is run), and the JSON the Karpenter oracle
 * reads in its disruption mode (test/oracle/karpenter/README.md "Disruption mode").
 */
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import type { KubeObject, PodDisruptionBudget } from '../../shared/api/kube.ts';
import type { PackingMode } from '../../shared/api/packing.ts';
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

/**
 * nodefleet's snapshot of the scenario, through the case runner's conversion.
 * @param packing the consolidation simulations' packing (`settings.packing` of a case); default nodefleet's, cost-aware
 */
export function toDisruptionSnapshot(s: DisruptionScenario, packing?: PackingMode): DisruptionSnapshot {
  const clone = <T>(x: T): T => structuredClone(x);
  return snapshotFromCase({
    now: s.now,
    instanceTypes: clone(s.instanceTypes),
    nodePools: clone(s.nodePools),
    nodes: clone(s.nodes),
    objects: [
      ...clone(s.pods).map((p) => ({ ...p, kind: 'Pod', apiVersion: 'v1' })),
      ...clone(s.daemonSets),
      ...clone(s.pdbs).map((p) => ({ ...p, kind: 'PodDisruptionBudget', apiVersion: 'policy/v1' })),
    ] as KubeObject[],
    settings: { ...s.settings, ...(packing ? { packing } : {}), featureGates: { SpotToSpotConsolidation: s.spotToSpotConsolidation } },
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

/**
 * The scenario of a disruption case (test/cases/FORMAT.md) with made-up instance types: its own
 * keys, or in a group file (`cases:`) the shared keys overlaid with the entry named `name`.
 * `settings.packing` is left out: packing is {@link toDisruptionSnapshot}'s parameter.
 */
export function disruptionScenarioFromCase(file: string, name?: string): DisruptionScenario {
  const { cases, ...shared } = parse(readFileSync(file, 'utf8')) as Record<string, unknown> & { cases?: Record<string, unknown>[] };
  const entry = name === undefined ? {} : cases?.find((c) => c.name === name);
  if (!entry) throw new Error(`${file}: no case named ${name}`);
  const doc = { ...shared, ...entry } as Record<string, unknown>;
  const objects = (doc.objects ?? []) as KubeObject[];
  const { packing: _packing, featureGates, ...settings } = (doc.settings ?? {}) as Record<string, unknown>;
  return {
    now: doc.now as string,
    instanceTypes: doc.instanceTypes as DisruptionScenario['instanceTypes'],
    nodePools: doc.nodePools as DisruptionScenario['nodePools'],
    nodes: (doc.nodes ?? []) as DisruptionScenario['nodes'],
    pods: objects.filter((o) => o.kind === 'Pod') as unknown as DisruptionScenario['pods'],
    daemonSets: objects.filter((o) => o.kind === 'DaemonSet') as Record<string, unknown>[],
    pdbs: objects.filter((o) => o.kind === 'PodDisruptionBudget') as unknown as PodDisruptionBudget[],
    settings: settings as DisruptionScenario['settings'],
    spotToSpotConsolidation: (featureGates as Record<string, boolean> | undefined)?.SpotToSpotConsolidation ?? false,
  };
}
