/**
 * Provisioning expectations of a scenario case (test/cases/FORMAT.md "provisioning"): runs
 * `solve()` on the case snapshot and compares what it decided with `expect`.
 */
import type { Pod } from '../../../shared/api/kube.ts';
import * as L from '../../../shared/api/labels.ts';
import { Requirements } from '../../../shared/api/requirements.ts';
import { parseResources } from '../../../shared/api/quantity.ts';
import { solve, type NewNodeClaim, type SchedulingResult } from '../../../shared/scheduling/index.ts';
import type { CaseSnapshot } from './snapshot.ts';

/** Where each pod ended up: a node (existing name or new claim hostname) and its labels. */
interface Place {
  node: string;
  labels: Record<string, string>;
  claim?: NewNodeClaim;
}

/**
 * The labels a new claim's node will carry for checks: its cheapest launch type's, the pinned
 * ones, and the capacity type it launches first. The zone only when the claim is pinned to one
 * zone: a claim that may land in several zones has no zone yet, so it never passes a zone check.
 */
export function claimLabels(c: NewNodeClaim): Record<string, string> {
  const t = c.launchInstanceTypes[0];
  const labels: Record<string, string> = { ...(t?.labels ?? {}), ...c.labels, [L.LabelHostname]: c.hostname };
  if (t) labels[L.LabelInstanceType] = t.name;
  if (c.zones.length === 1) labels[L.LabelTopologyZone] = c.zones[0];
  else delete labels[L.LabelTopologyZone];
  if (c.capacityTypes.length > 0) labels[L.LabelCapacityType] = c.capacityTypes[0];
  return labels;
}

/** Parses "app=web,tier!=db,key,!key" into a matcher. */
export function parseSelector(text: string): (labels: Record<string, string> | undefined) => boolean {
  const parts = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const tests = parts.map((p) => {
    let m = /^([^!=]+)!=(.*)$/.exec(p);
    if (m) return (l: Record<string, string>) => l[m![1].trim()] !== m![2].trim();
    m = /^([^!=]+)==?(.*)$/.exec(p);
    if (m) return (l: Record<string, string>) => l[m![1].trim()] === m![2].trim();
    if (p.startsWith('!')) return (l: Record<string, string>) => l[p.slice(1)] === undefined;
    return (l: Record<string, string>) => l[p] !== undefined;
  });
  return (labels) => tests.every((t) => t(labels ?? {}));
}

interface ClaimCriteria {
  nodePool?: string;
  instanceTypeIn?: string[];
  labels?: Record<string, string>;
  capacityType?: string;
  /** The claim's launch price (cheapest compatible offering of its first type), USD/hour, to 1e-6. */
  priceUsdPerHour?: number;
  /** Every type the claim would launch carries these labels and has an offering in this zone / capacity type. */
  launchTypes?: { labels?: Record<string, string>; offering?: { zone?: string; capacityType?: string } };
  /** How many types the claim would launch: a number or { min, max }. */
  launchTypeCount?: number | { min?: number; max?: number };
  /** The claim's taints, exactly (order aside; startup taints not included). */
  taints?: { key: string; value?: string; effect: string }[];
  /** The claim's resource requests (pods' plus daemonset overhead, and `pods`), each listed one equal. */
  requests?: Record<string, string | number>;
}

const taintText = (ts: readonly { key: string; value?: string; effect: string }[]) =>
  ts
    .map((t) => `${t.key}=${t.value ?? ''}:${t.effect}`)
    .sort()
    .join(',');

function claimMeets(c: NewNodeClaim, want: ClaimCriteria): boolean {
  if (want.nodePool && c.nodePool !== want.nodePool) return false;
  if (want.instanceTypeIn && !want.instanceTypeIn.includes(c.launchInstanceTypes[0]?.name ?? '')) return false;
  if (want.capacityType && c.capacityTypes[0] !== want.capacityType) return false;
  if (want.taints && taintText(c.taints) !== taintText(want.taints)) return false;
  if (want.launchTypeCount !== undefined && !countOk(c.launchInstanceTypes.length, want.launchTypeCount)) return false;
  if (want.priceUsdPerHour !== undefined && Math.abs(c.priceUsdPerHour - Number(want.priceUsdPerHour)) > 1e-6) return false;
  if (want.launchTypes) {
    const { labels: wl = {}, offering } = want.launchTypes;
    const ok = (t: NewNodeClaim['launchInstanceTypes'][number]) =>
      Object.entries(wl).every(([k, v]) => t.labels[k] === String(v)) &&
      (!offering ||
        t.offerings.some(
          (o) => (offering.zone === undefined || o.zone === offering.zone) && (offering.capacityType === undefined || o.capacityType === offering.capacityType),
        ));
    if (c.launchInstanceTypes.length === 0 || !c.launchInstanceTypes.every(ok)) return false;
  }
  const labels = claimLabels(c);
  for (const [k, v] of Object.entries(want.labels ?? {})) if (labels[k] !== String(v)) return false;
  if (want.requests) {
    const wanted = parseResources(want.requests);
    for (const [k, v] of Object.entries(wanted)) if (Math.abs((c.requests[k] ?? 0) - v) > 1e-9) return false;
  }
  return true;
}

function describeClaim(c: NewNodeClaim): string {
  const taints = c.taints.length > 0 ? ` taints ${taintText(c.taints)}` : '';
  return `${c.nodePool}:${c.launchInstanceTypes[0]?.name ?? '?'} ($${c.priceUsdPerHour.toFixed(4)}, ${c.launchInstanceTypes.length} types) ${c.capacityTypes[0] ?? '?'} ${c.zones.join('/')}${taints} [${c.pods.map((p) => p.metadata.name).join(' ')}]`;
}

function countOk(n: number, want: unknown): boolean {
  if (typeof want === 'number') return n === want;
  const r = (want ?? {}) as { min?: number; max?: number };
  return (r.min === undefined || n >= r.min) && (r.max === undefined || n <= r.max);
}

/** Runs the simulation and checks every provisioning expectation present; returns failure lines. */
export function checkProvisioning(snapshot: CaseSnapshot, expect: Record<string, any>): { failures: string[]; result: SchedulingResult } {
  const result = solve(snapshot.input);
  const failures: string[] = [];
  const places = new Map<Pod, Place>();
  const existingByName = new Map((snapshot.input.existingNodes ?? []).map((n) => [n.name, n]));
  for (const p of snapshot.workloads.boundPods) {
    const n = existingByName.get(p.spec.nodeName!);
    places.set(p, { node: p.spec.nodeName!, labels: n?.labels ?? {} });
  }
  for (const pl of result.placements) places.set(pl.pod, { node: pl.node, labels: existingByName.get(pl.node)?.labels ?? {} });
  for (const c of result.newNodeClaims) {
    const labels = claimLabels(c);
    for (const p of c.pods) places.set(p, { node: c.hostname, labels, claim: c });
  }
  const allPods = [...snapshot.workloads.boundPods, ...snapshot.workloads.pendingPods, ...snapshot.workloads.notProvisionable];
  const findPods = (name: string): Pod[] => {
    const exact = allPods.filter((p) => p.metadata.name === name);
    return exact.length > 0 ? exact : allPods.filter((p) => p.metadata.name.startsWith(name));
  };
  const where = (p: Pod) => places.get(p);
  const placedCounted = snapshot.countedPending.filter((p) => places.has(p));
  const claimsText = () => result.newNodeClaims.map(describeClaim).join('; ') || 'none';
  const reasonsOf = (p: Pod) => {
    const u = result.unschedulable.find((x) => x.pod === p);
    return u
      ? Object.entries(u.reasons)
          .map(([k, v]) => `${k}: ${v}`)
          .join('; ') || 'no nodepool'
      : '';
  };

  if ('scheduled' in expect) {
    const want = expect.scheduled === 'all' ? snapshot.countedPending.length : Number(expect.scheduled);
    if (placedCounted.length !== want) {
      const missing = snapshot.countedPending.filter((p) => !places.has(p)).map((p) => `${p.metadata.name} (${reasonsOf(p)})`);
      failures.push(
        `scheduled: expected ${expect.scheduled === 'all' ? `all ${want}` : want}, got ${placedCounted.length}${missing.length ? `; not placed: ${missing.slice(0, 5).join(', ')}` : ''}`,
      );
    }
  }
  for (const prefix of (expect.unschedulable ?? []) as string[]) {
    const pods = [...snapshot.workloads.pendingPods, ...snapshot.workloads.notProvisionable].filter(
      (p) => p.metadata.name === prefix || p.metadata.name.startsWith(prefix),
    );
    if (pods.length === 0) failures.push(`unschedulable: no pending pod named ${prefix}*`);
    for (const p of pods) if (places.has(p)) failures.push(`unschedulable: expected ${p.metadata.name} to stay pending, got a place on ${places.get(p)!.node}`);
  }
  if (expect.reasonIncludes !== undefined) {
    const want = String(expect.reasonIncludes).toLowerCase();
    for (const p of snapshot.countedPending.filter((x) => !places.has(x))) {
      if (!reasonsOf(p).toLowerCase().includes(want))
        failures.push(`reasonIncludes: expected ${p.metadata.name}'s reason to mention "${expect.reasonIncludes}", got "${reasonsOf(p)}"`);
    }
  }
  if ('unschedulableCount' in expect) {
    const n = snapshot.countedPending.length - placedCounted.length;
    if (n !== Number(expect.unschedulableCount)) failures.push(`unschedulableCount: expected ${expect.unschedulableCount}, got ${n}`);
  }
  if ('nodeClaims' in expect && !countOk(result.newNodeClaims.length, expect.nodeClaims)) {
    failures.push(`nodeClaims: expected ${JSON.stringify(expect.nodeClaims)}, got ${result.newNodeClaims.length} (${claimsText()})`);
  }
  for (const want of (expect.nodeClaimsMatch ?? []) as ClaimCriteria[]) {
    if (!result.newNodeClaims.some((c) => claimMeets(c, want))) failures.push(`nodeClaimsMatch: expected a claim ${JSON.stringify(want)}, got ${claimsText()}`);
  }
  if (expect.allNodeClaims) {
    const bad = result.newNodeClaims.filter((c) => !claimMeets(c, expect.allNodeClaims));
    if (bad.length > 0) failures.push(`allNodeClaims: expected every claim ${JSON.stringify(expect.allNodeClaims)}, got ${bad.map(describeClaim).join('; ')}`);
  }
  for (const group of (expect.podsOnSameNode ?? []) as string[][]) {
    const nodes = group.map((n) => findPods(n).map((p) => where(p)?.node ?? '(not placed)'));
    const flat = new Set(nodes.flat());
    if (flat.size !== 1 || flat.has('(not placed)'))
      failures.push(
        `podsOnSameNode: expected ${group.join(', ')} together, got ${group.map((n, i) => `${n}→${nodes[i].join('|') || '(no such pod)'}`).join(', ')}`,
      );
  }
  for (const group of (expect.podsOnDifferentNodes ?? []) as string[][]) {
    const nodes = group.flatMap((n) => findPods(n).map((p) => ({ n: p.metadata.name, node: where(p)?.node })));
    const seen = new Set<string>();
    let ok = nodes.length >= group.length;
    for (const x of nodes) {
      if (!x.node || seen.has(x.node)) ok = false;
      if (x.node) seen.add(x.node);
    }
    if (!ok)
      failures.push(`podsOnDifferentNodes: expected ${group.join(', ')} apart, got ${nodes.map((x) => `${x.n}→${x.node ?? '(not placed)'}`).join(', ')}`);
  }
  for (const e of (expect.podsInSameDomain ?? []) as { topologyKey: string; pods: string[] }[]) {
    const got = e.pods.flatMap((n) => findPods(n).map((p) => ({ n: p.metadata.name, d: where(p)?.labels[e.topologyKey] })));
    const domains = new Set(got.map((g) => g.d));
    if (domains.size !== 1 || domains.has(undefined))
      failures.push(`podsInSameDomain: expected ${e.pods.join(', ')} in one ${e.topologyKey}, got ${got.map((g) => `${g.n}→${g.d ?? '?'}`).join(', ')}`);
  }
  if (expect.zonesDistinct) {
    const match = parseSelector(String(expect.zonesDistinct));
    const pods = allPods.filter((p) => match(p.metadata.labels) && places.has(p));
    const zones = pods.map((p) => where(p)!.labels[L.LabelTopologyZone]);
    if (new Set(zones).size !== zones.length || zones.includes(undefined as unknown as string))
      failures.push(
        `zonesDistinct: expected ${expect.zonesDistinct} pods in distinct zones, got ${pods.map((p, i) => `${p.metadata.name}→${zones[i]}`).join(', ')}`,
      );
  }
  const skews = expect.maxSkew ? (Array.isArray(expect.maxSkew) ? expect.maxSkew : [expect.maxSkew]) : [];
  for (const s of skews as { selector: string; topologyKey: string; skew: number }[]) {
    const match = parseSelector(s.selector);
    const counts = new Map<string, number>();
    if (s.topologyKey === L.LabelHostname) {
      for (const c of result.newNodeClaims) counts.set(c.hostname, 0);
    } else {
      for (const [name, types] of snapshot.typesByPool) {
        const np = snapshot.nodePools.find((p) => p.metadata.name === name)!;
        const req = Requirements.fromSpecs(np.spec.template.spec.requirements).get(s.topologyKey);
        for (const t of types) {
          const values =
            s.topologyKey === L.LabelTopologyZone
              ? t.offerings.map((o) => o.zone)
              : s.topologyKey === L.LabelCapacityType
                ? t.offerings.map((o) => o.capacityType)
                : [t.labels[s.topologyKey]];
          for (const v of values) if (v !== undefined && (!req || req.has(v))) counts.set(v, counts.get(v) ?? 0);
        }
      }
    }
    const unpinned: string[] = [];
    for (const p of allPods) {
      if (!match(p.metadata.labels)) continue;
      const d = where(p)?.labels[s.topologyKey] ?? (s.topologyKey === L.LabelHostname ? where(p)?.node : undefined);
      if (d !== undefined) counts.set(d, (counts.get(d) ?? 0) + 1);
      else if (where(p)) unpinned.push(p.metadata.name);
    }
    if (unpinned.length > 0) failures.push(`maxSkew: ${unpinned.join(', ')} placed on nodes not pinned to one ${s.topologyKey}`);
    const values = [...counts.values()];
    const skew = values.length > 0 ? Math.max(...values) - Math.min(...values) : 0;
    if (skew > s.skew)
      failures.push(
        `maxSkew: expected ${s.selector} on ${s.topologyKey} skew ≤ ${s.skew}, got ${skew} (${[...counts].map(([k, v]) => `${k}=${v}`).join(', ')})`,
      );
  }
  const domainCounts = expect.domainCounts ? (Array.isArray(expect.domainCounts) ? expect.domainCounts : [expect.domainCounts]) : [];
  for (const s of domainCounts as { selector: string; topologyKey: string; namespace?: string; counts?: number[]; max?: number }[]) {
    const match = parseSelector(s.selector);
    const namespace = s.namespace ?? 'default';
    const counts = new Map<string, number>();
    const unpinned: string[] = [];
    for (const p of allPods) {
      const at = where(p);
      // As kube-scheduler counts a spread: same namespace, not terminating, not finished.
      if (!at || !match(p.metadata.labels) || (p.metadata.namespace ?? 'default') !== namespace) continue;
      if (p.metadata.deletionTimestamp || p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed') continue;
      const d = s.topologyKey === L.LabelHostname ? at.node : at.labels[s.topologyKey];
      if (d !== undefined) counts.set(d, (counts.get(d) ?? 0) + 1);
      else if (at.claim) unpinned.push(p.metadata.name);
    }
    const seen = `(${[...counts].map(([k, v]) => `${k}=${v}`).join(', ')})`;
    if (unpinned.length > 0) failures.push(`domainCounts: ${unpinned.join(', ')} placed on nodes not pinned to one ${s.topologyKey}`);
    const got = [...counts.values()].sort((a, b) => a - b);
    if (s.counts) {
      const want = [...s.counts].map(Number).sort((a, b) => a - b);
      if (got.join(',') !== want.join(','))
        failures.push(`domainCounts: expected ${s.selector} per ${s.topologyKey} [${want.join(', ')}], got [${got.join(', ')}] ${seen}`);
    }
    if (s.max !== undefined && got.some((n) => n > Number(s.max)))
      failures.push(`domainCounts: expected at most ${s.max} ${s.selector} pods per ${s.topologyKey}, got ${seen}`);
  }
  return { failures, result };
}
