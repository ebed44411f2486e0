/**
 * Kubernetes resource quantities ("100m", "1.5Gi", "2", "1e3") to plain numbers and back.
 *
 * Canonical units used everywhere in nodefleet's domain code (a {@link Resources} map):
 * - `cpu`: millicores (1 vCPU = 1000)
 * - `memory`, `ephemeral-storage`, `hugepages-*`: bytes
 * - `pods` and extended resources (`nvidia.com/gpu`, …): whole units
 *
 * Rule source: k8s.io/apimachinery `resource.Quantity` (binary suffixes Ki…Ei, decimal
 * suffixes n, u, m, k, M, G, T, P, E, and exponent notation).
 */

/** A resource list in canonical units (see module doc). Missing key = 0. */
export type Resources = Record<string, number>;

const BINARY: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60 };
const DECIMAL: Record<string, number> = { n: 1e-9, u: 1e-6, m: 1e-3, '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18 };
const QUANTITY = /^([+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?)(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?$/;

/** Thrown for a string that is not a Kubernetes quantity. */
export class QuantityError extends Error {
  override name = 'QuantityError';
}

/**
 * Parses a quantity into its value in base units ("100m" → 0.1, "1Ki" → 1024).
 * @throws QuantityError when the text is not a quantity.
 */
export function parseQuantity(q: string | number): number {
  if (typeof q === 'number') return q;
  const m = QUANTITY.exec(q.trim());
  if (!m) throw new QuantityError(`"${q}" is not a Kubernetes quantity`);
  const n = Number(m[1]);
  if (!Number.isFinite(n)) throw new QuantityError(`"${q}" is not a Kubernetes quantity`);
  const suffix = m[2] ?? '';
  return n * (BINARY[suffix] ?? DECIMAL[suffix]);
}

/** Parses a quantity into the canonical unit of `resource` (millicores for cpu). */
export function parseResource(resource: string, q: string | number): number {
  const v = parseQuantity(q);
  return resource === 'cpu' ? Math.round(v * 1000) : Math.round(v);
}

/** Parses a Kubernetes ResourceList (`{cpu: "500m", memory: "1Gi"}`) into canonical units. */
export function parseResources(list: Record<string, string | number> | undefined | null): Resources {
  const out: Resources = {};
  for (const [k, v] of Object.entries(list ?? {})) out[k] = parseResource(k, v);
  return out;
}

/** Formats a canonical value as a Kubernetes quantity string: cpu "7910m"/"8", memory "14162Mi". */
export function formatResource(resource: string, value: number): string {
  if (resource === 'cpu') return value % 1000 === 0 ? String(value / 1000) : `${Math.round(value)}m`;
  if (resource === 'memory' || resource === 'ephemeral-storage' || resource.startsWith('hugepages-')) {
    for (const [suffix, f] of [
      ['Gi', 2 ** 30],
      ['Mi', 2 ** 20],
      ['Ki', 2 ** 10],
    ] as const) {
      if (value !== 0 && value % f === 0) return `${value / f}${suffix}`;
    }
    if (value > 2 ** 20) return `${Math.floor(value / 2 ** 20)}Mi`;
    return String(Math.round(value));
  }
  return String(value);
}

/** Formats a whole resource map (keys kept, zero values kept). */
export function formatResources(r: Resources): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(r)) out[k] = formatResource(k, v);
  return out;
}

/** a + b, key by key. */
export function addResources(a: Resources, b: Resources): Resources {
  const out: Resources = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = (out[k] ?? 0) + v;
  return out;
}

/** a - b, key by key (may go negative). */
export function subtractResources(a: Resources, b: Resources): Resources {
  const out: Resources = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = (out[k] ?? 0) - v;
  return out;
}

/** Key-wise max (used for init containers vs. app containers). */
export function maxResources(a: Resources, b: Resources): Resources {
  const out: Resources = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = Math.max(out[k] ?? 0, v);
  return out;
}

/** True when every requested amount fits in `available` (missing available key = 0). */
export function fits(requests: Resources, available: Resources): boolean {
  for (const [k, v] of Object.entries(requests)) {
    if (v > 0 && v > (available[k] ?? 0)) return false;
  }
  return true;
}

/** The first resource in `requests` that exceeds `available`, or undefined. */
export function firstExceeded(requests: Resources, available: Resources): string | undefined {
  for (const [k, v] of Object.entries(requests)) {
    if (v > 0 && v > (available[k] ?? 0)) return k;
  }
  return undefined;
}

export const MiB = 2 ** 20;
export const GiB = 2 ** 30;
