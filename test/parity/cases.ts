/**
 * Writes a shrunk parity divergence as a scenario case (test/cases/FORMAT.md) under
 * test/cases/parity/, with expectations taken from Karpenter's decision, so the case runner keeps
 * checking it once fixed.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import type { Pod } from '../../shared/api/kube.ts';
import type { DivergenceKind } from './compare.ts';
import type { OracleOutput } from './oracle.ts';
import type { ParityScenario } from './scenario.ts';

export const ParityCasesDir = join(import.meta.dirname, '..', 'cases', 'parity');

/** The case document for a scenario, expecting what Karpenter decided. */
export function caseDocument(s: ParityScenario, k: OracleOutput, kind: DivergenceKind, detail: string, origin: string, name: string): Record<string, unknown> {
  const placed = k.nodeClaims.reduce((n, c) => n + (c.pods ?? []).length, 0) + k.placements.length;
  const samePacking = kind === 'claims' || kind === 'claim-shapes' || kind === 'existing' || kind === 'unplaced-karpenter-packing';
  const expect: Record<string, unknown> = { scheduled: placed };
  if (k.unschedulable.length) expect.unschedulable = k.unschedulable.map((u) => u.pod.split('/')[1]);
  if (samePacking) {
    expect.nodeClaims = k.nodeClaims.length;
    if (k.nodeClaims.length)
      expect.nodeClaimsMatch = k.nodeClaims.map((c) => ({
        nodePool: c.nodePool,
        instanceTypeIn: (c.instanceTypes ?? []).filter((_, i, all) => i === 0 || all[0] === all[i]).slice(0, 1),
      }));
  }
  // The case format has no cost expectation: a cost divergence is pinned by Karpenter's cheapest type per claim.
  if (kind === 'cost' && k.nodeClaims.length)
    expect.nodeClaimsMatch = k.nodeClaims.map((c) => ({ nodePool: c.nodePool, instanceTypeIn: (c.instanceTypes ?? []).slice(0, 1) }));
  return {
    name,
    about: `Parity with Karpenter (${kind}): ${detail}. Expectations are Karpenter's decision on this scenario.`,
    origin: `npm run parity (test/parity), ${origin}; oracle sigs.k8s.io/karpenter v1.15.0`,
    settings: { ...s.settings, ...(samePacking ? { packing: 'karpenter' } : {}) },
    instanceTypes: s.instanceTypes,
    nodePools: s.nodePools,
    nodes: s.nodes,
    objects: [...s.pods, ...s.daemonSets],
    expect,
  };
}

/** Writes the case; returns its path. */
export function writeCase(s: ParityScenario, k: OracleOutput, kind: DivergenceKind, detail: string, origin: string): string {
  const hash = createHash('sha256').update(JSON.stringify(s)).digest('hex').slice(0, 8);
  const name = `parity-${kind}-${hash}`;
  const file = join(ParityCasesDir, `${name}.yaml`);
  writeFileSync(file, stringify(caseDocument(s, k, kind, detail, origin, name), { lineWidth: 0 }));
  return file;
}

/** The scenario a parity case (as `writeCase` writes it) was made from. */
export function scenarioFromCase(file: string): ParityScenario {
  const doc = parse(readFileSync(file, 'utf8'), { merge: true }) as Record<string, unknown>;
  const objects = (doc.objects ?? []) as { kind?: string }[];
  const { packing: _packing, ...settings } = (doc.settings ?? {}) as Record<string, unknown>;
  return {
    instanceTypes: doc.instanceTypes as ParityScenario['instanceTypes'],
    nodePools: doc.nodePools as ParityScenario['nodePools'],
    nodes: (doc.nodes ?? []) as ParityScenario['nodes'],
    pods: objects.filter((o) => o.kind === 'Pod') as Pod[],
    daemonSets: objects.filter((o) => o.kind === 'DaemonSet') as Record<string, unknown>[],
    settings: settings as ParityScenario['settings'],
  };
}
