/**
 * Where the packing mode of a scheduling round comes from (shared/scheduling/types.ts
 * `SchedulingSettings.packing`: `cost`, nodefleet's default, or `karpenter`, Karpenter's own).
 *
 * Precedence, highest first: the NodePools' `nodefleet.io/packing` annotation, then the
 * operator's setting (`plan --packing`, or the provisioner's `NODEFLEET_PACKING` environment
 * variable, set by the CDK stack from its `packing` context), then the default (`cost`).
 *
 * Packing is a property of the whole round (the queue order and the claims' growth rule are
 * shared by every NodePool the round tries), not of one NodePool; so the annotation counts only
 * when the annotated NodePools of the round agree. When they disagree it is ignored, with
 * {@link PackingChoice.conflict} saying so, and the setting or default applies.
 */
import { PackingModes, type PackingMode } from './contract.ts';
import { AnnotationPacking } from './labels.ts';
import type { NodePool } from './nodepool.ts';

export { PackingModes, type PackingMode };

/** Whether `v` is a packing mode. */
export function isPackingMode(v: unknown): v is PackingMode {
  return typeof v === 'string' && (PackingModes as readonly string[]).includes(v);
}

/** Why `v` is not a packing mode (for `validate` and env parsing), or undefined when it is one. */
export function packingProblem(v: unknown): string | undefined {
  return isPackingMode(v) ? undefined : `unknown packing mode ${JSON.stringify(v)}; modes: ${PackingModes.join(', ')}`;
}

/** The mode a round uses and where it came from. */
export interface PackingChoice {
  /** Undefined: nothing set, the scheduler's default (`cost`) applies. */
  packing?: PackingMode;
  source: 'annotation' | 'setting' | 'default';
  /** Set when annotated NodePools disagree: names them and their modes. */
  conflict?: string;
}

/**
 * The packing mode for a round over `nodePools` (see the file comment for the precedence).
 * Annotations with a value that is not a mode are skipped (`validate` reports them).
 * @param setting the operator's choice (`plan --packing`, `NODEFLEET_PACKING`), if any.
 */
export function choosePacking(nodePools: readonly NodePool[], setting?: PackingMode): PackingChoice {
  const byMode = new Map<PackingMode, string[]>();
  for (const np of nodePools) {
    const v = np.metadata.annotations?.[AnnotationPacking];
    if (isPackingMode(v)) byMode.set(v, [...(byMode.get(v) ?? []), np.metadata.name]);
  }
  const fallback: PackingChoice = setting ? { packing: setting, source: 'setting' } : { source: 'default' };
  if (byMode.size === 1) return { packing: [...byMode.keys()][0], source: 'annotation' };
  if (byMode.size > 1) {
    const conflict = `NodePools disagree on ${AnnotationPacking} (${[...byMode].map(([m, pools]) => `${m}: ${pools.join(', ')}`).join('; ')}); using ${setting ?? 'the default, cost'}`;
    return { ...fallback, conflict };
  }
  return fallback;
}
