/**
 * The disruption part of the scenario-case runner (test/cases/FORMAT.md): builds a
 * {@link DisruptionSnapshot} from a case, runs {@link planDisruption} at the case's `now`, and
 * checks the disruption expectations (`disrupt`, `keep`, `disruptCount`, `disruptFrom`,
 * `disruptReason`, `replaceWith`). Garbage-collection expectations (`deleteNodeClaims`,
 * `terminateInstances`) are checked by {@link planGarbageCollection}-style logic below.
 *
 * The runner (functions/cli/cases/) calls {@link checkDisruptionCase} for every case whose
 * `expect` has one of {@link DisruptionExpectKeys}.
 */
import { catalogSettingsOf, schedulingSettingsOf, settingsFromCase } from '../../../shared/api/settings.ts';
import type { Node, Pod, PodDisruptionBudget, KubeObject } from '../../../shared/api/kube.ts';
import { NodePoolSchema, EC2NodeClassSchema, type NodePool, type EC2NodeClass } from '../../../shared/api/nodepool.ts';
import { fromKubeNodeClaim, NodeClaimSchema, type NodeClaim } from '../../../shared/api/nodeclaim.ts';
import { LabelCapacityType, LabelInstanceType, LabelNodePool, LabelOS, LabelTopologyZone } from '../../../shared/api/labels.ts';
import { loadCatalog, instanceTypeFromCase, type CaseInstanceType, type UnavailableOffering } from '../../../shared/catalog/index.ts';
import { AmiFamilyFeatureTable, amiFamilyOf } from '../../../shared/catalog/capacity.ts';
import type { InstanceType } from '../../../shared/catalog/types.ts';
import { nodeClassHash, nodePoolHash } from '../../../shared/api/hash.ts';
import { choosePacking, isPackingMode } from '../../../shared/api/packing.ts';
import type { DaemonSetTemplate } from '../../../shared/scheduling/index.ts';
import { claimOfNode, claimsByProviderId, planDisruption, type DisruptionPlan, type DisruptionSnapshot } from '../../../shared/disruption/index.ts';
import { planGarbageCollection, type GcInput } from '../../../shared/disruption/gc.ts';
import { providerIdOf } from '../../../shared/api/provider-id.ts';
import { parseDurationSeconds } from '../../../shared/api/duration.ts';

/** The `expect` keys this module checks. */
export const DisruptionExpectKeys = [
  'disrupt',
  'keep',
  'disruptCount',
  'disruptFrom',
  'disruptReason',
  'replaceWith',
  'allowedDisruptions',
  'deleteNodeClaims',
  'terminateInstances',
] as const;

/** A scenario case as parsed from YAML (only the fields disruption reads are typed). */
export interface DisruptionCaseDoc {
  name?: string;
  region?: string;
  now?: string;
  settings?: Record<string, unknown>;
  instanceTypes?: CaseInstanceType[];
  unavailableOfferings?: UnavailableOffering[];
  nodePools?: unknown[];
  nodeClasses?: unknown[];
  nodes?: Node[];
  existingNodeClaims?: KubeObject[];
  instances?: { id: string; instanceType?: string; zone?: string; capacityType?: string; state?: string; launchTime?: string; tags?: Record<string, string> }[];
  objects?: KubeObject[];
  /** Disruption passes to run (default 1); see {@link checkDisruptionCase}. */
  passes?: number;
  expect?: Record<string, unknown>;
}

/** Outcome of one case's disruption checks. */
export interface DisruptionCaseResult {
  /** Empty when every disruption / gc expectation holds. */
  failures: string[];
  plan?: DisruptionPlan;
}

/** True when the case's `expect` has any key this module checks. */
export function hasDisruptionExpectations(expect: Record<string, unknown> | undefined): boolean {
  return !!expect && DisruptionExpectKeys.some((k) => k in expect);
}

/**
 * The case's time: `now`, else the latest timestamp in the case (a fixed point, so a case
 * without `now` never depends on the wall clock).
 */
export function caseNow(doc: DisruptionCaseDoc): Date {
  if (doc.now) return new Date(doc.now);
  let latest = 0;
  const visit = (t: unknown) => {
    const v = typeof t === 'string' ? Date.parse(t) : NaN;
    if (!Number.isNaN(v) && v > latest) latest = v;
  };
  for (const n of doc.nodes ?? []) visit(n.metadata?.creationTimestamp);
  for (const o of doc.objects ?? []) visit(o.metadata?.creationTimestamp);
  for (const c of doc.existingNodeClaims ?? []) visit(c.metadata?.creationTimestamp);
  return new Date(latest || Date.parse('2026-01-01T00:00:00Z'));
}

/**
 * A scenario's nodes and claims with a stand-in NodeClaim for every node labelled
 * karpenter.sh/nodepool that no listed claim owns (shared/disruption/state.ts `claimOfNode`), as
 * Karpenter has one for each of its nodes: name, providerID, NodePool, instance and creation
 * time from the node (a node without a providerID gets `aws:///<zone>/i-<name>`), and its
 * NodePool's terminationGracePeriod (as a claim gets it at creation). For scenario
 * descriptions only (cases, parity, benchmarks): the functions never invent a claim — there, a
 * node without a stored claim is not nodefleet's.
 */
export function withStandInClaims(
  nodes: readonly Node[],
  claims: readonly NodeClaim[],
  cluster = 'case',
  nodePools: readonly NodePool[] = [],
): { nodes: Node[]; nodeClaims: NodeClaim[] } {
  const byProviderId = claimsByProviderId(claims);
  const grace = new Map(nodePools.map((p) => [p.metadata.name, parseDurationSeconds(p.spec.template.spec.terminationGracePeriod)]));
  const outNodes: Node[] = [];
  const outClaims = [...claims];
  for (const n of nodes) {
    const labels = n.metadata.labels ?? {};
    if (!labels[LabelNodePool] || claimOfNode(n, byProviderId)) {
      outNodes.push(n);
      continue;
    }
    const zone = labels[LabelTopologyZone] ?? 'zone';
    const providerId = n.spec?.providerID ?? providerIdOf(zone, `i-${n.metadata.name}`);
    outNodes.push(n.spec?.providerID ? n : { ...n, spec: { ...n.spec, providerID: providerId } });
    outClaims.push(
      NodeClaimSchema.parse({
        name: n.metadata.name,
        cluster,
        nodePool: labels[LabelNodePool],
        nodeClass: 'default',
        requirements: [],
        labels,
        resources: { requests: {} },
        ...(labels[LabelInstanceType] ? { instanceType: labels[LabelInstanceType] } : {}),
        ...(labels[LabelTopologyZone] ? { zone: labels[LabelTopologyZone] } : {}),
        ...(labels[LabelCapacityType] ? { capacityType: labels[LabelCapacityType] } : {}),
        providerId,
        nodeName: n.metadata.name,
        ...(grace.get(labels[LabelNodePool]) !== undefined ? { terminationGracePeriodSeconds: grace.get(labels[LabelNodePool]) } : {}),
        phase: n.metadata.deletionTimestamp ? 'Terminating' : 'Registered',
        createdAt: n.metadata.creationTimestamp ?? '2026-01-01T00:00:00Z',
      }),
    );
  }
  return { nodes: outNodes, nodeClaims: outClaims };
}

/** A Karpenter v1 NodeClaim object (or nodefleet's stored shape) as nodefleet's NodeClaim. */
export function nodeClaimFromCase(o: KubeObject, cluster = 'case'): NodeClaim {
  if (typeof (o as Record<string, unknown>).nodePool === 'string') return NodeClaimSchema.parse(o);
  return fromKubeNodeClaim(o, cluster);
}

/**
 * Builds the disruption snapshot of a case.
 * @throws ZodError / ValidationError when a NodePool, EC2NodeClass or instance type is invalid.
 */
export function snapshotFromCase(doc: DisruptionCaseDoc): DisruptionSnapshot {
  const region = doc.region ?? 'us-east-1';
  const settings = doc.settings ?? {};
  const nodePools: NodePool[] = (doc.nodePools ?? []).map((p) => NodePoolSchema.parse(p));
  const nodeClasses: EC2NodeClass[] = (doc.nodeClasses ?? []).map((c) => EC2NodeClassSchema.parse(c));
  const classByName = new Map(nodeClasses.map((c) => [c.metadata.name, c]));
  const karpenter = settingsFromCase(settings);
  const catalogSettings = catalogSettingsOf(karpenter);
  const byClass = new Map<string, InstanceType[]>();
  const typesFor = (className: string): InstanceType[] => {
    const cached = byClass.get(className);
    if (cached) return cached;
    const nodeClass = classByName.get(className);
    const types = doc.instanceTypes
      ? doc.instanceTypes.map((t) => instanceTypeFromCase(t, { region, nodeClass, unavailable: doc.unavailableOfferings, settings: catalogSettings }))
      : loadCatalog({ region, nodeClass, unavailable: doc.unavailableOfferings, settings: catalogSettings });
    byClass.set(className, types);
    return types;
  };
  // A NodePool launches only types its node class has an image for (AMI family → OS).
  const instanceTypes = (pool: NodePool): InstanceType[] => {
    const className = pool.spec.template.spec.nodeClassRef.name;
    const os = AmiFamilyFeatureTable[amiFamilyOf(classByName.get(className))].os;
    return typesFor(className).filter((t) => (t.labels[LabelOS] ?? 'linux') === os);
  };
  const catalog = new Map<string, InstanceType>();
  for (const p of nodePools) for (const t of typesFor(p.spec.template.spec.nodeClassRef.name)) if (!catalog.has(t.name)) catalog.set(t.name, t);
  if (nodePools.length === 0) for (const t of typesFor('default')) catalog.set(t.name, t);

  const objects = doc.objects ?? [];
  const pods = objects.filter((o) => o.kind === 'Pod') as unknown as Pod[];
  const pdbs = objects.filter((o) => o.kind === 'PodDisruptionBudget') as unknown as PodDisruptionBudget[];
  const daemonSets: DaemonSetTemplate[] = objects
    .filter((o) => o.kind === 'DaemonSet' && o.spec?.template)
    .map((o) => ({ metadata: { name: o.metadata.name, namespace: o.metadata.namespace, ...(o.spec.template.metadata ?? {}) }, spec: o.spec.template.spec }));
  // The consolidation simulations pack as the disruption function's would (functions/disruption/snapshot.ts):
  // NodePool annotation, then `settings.packing`, then the default.
  const packing = choosePacking(nodePools, isPackingMode(settings.packing) ? settings.packing : undefined).packing;
  // A case states the whole cluster: a claim it does not list does not exist.
  const storage = {
    claims: objects.filter((o) => o.kind === 'PersistentVolumeClaim'),
    volumes: objects.filter((o) => o.kind === 'PersistentVolume'),
    classes: objects.filter((o) => o.kind === 'StorageClass'),
  };

  return {
    nodePools,
    nodeClasses,
    nodePoolHashes: Object.fromEntries(nodePools.map((p) => [p.metadata.name, nodePoolHash(p)])),
    nodeClassHashes: Object.fromEntries(nodeClasses.map((c) => [c.metadata.name, nodeClassHash(c)])),
    ...withStandInClaims(
      doc.nodes ?? [],
      (doc.existingNodeClaims ?? []).map((c) => nodeClaimFromCase(c)),
      'case',
      nodePools,
    ),
    pods,
    pdbs,
    instanceTypes,
    catalog: [...catalog.values()],
    daemonSets,
    unavailableOfferings: doc.unavailableOfferings,
    storage,
    settings: {
      spotToSpotConsolidation: karpenter.featureGates.SpotToSpotConsolidation,
      staticCapacity: karpenter.featureGates.StaticCapacity,
      scheduling: { ...(packing ? { packing } : {}), ...schedulingSettingsOf(karpenter) },
    },
  };
}

function asList(v: unknown): string[] {
  return Array.isArray(v) ? v.map(String) : [];
}

function countMatches(n: number, want: unknown): boolean {
  if (typeof want === 'number') return n === want;
  const r = want as { min?: number; max?: number };
  return (r.min === undefined || n >= r.min) && (r.max === undefined || n <= r.max);
}

/**
 * Runs disruption (and gc) for a case and checks its expectations.
 * @param now overrides the case time (default {@link caseNow}).
 */
export function checkDisruptionCase(doc: DisruptionCaseDoc, now: Date = caseNow(doc)): DisruptionCaseResult {
  const expect = doc.expect ?? {};
  const failures: string[] = [];
  let plan: DisruptionPlan | undefined;
  const needsPlan = ['disrupt', 'keep', 'disruptCount', 'disruptFrom', 'disruptReason', 'replaceWith', 'replacementCount', 'allowedDisruptions'].some(
    (k) => k in expect,
  );
  if (needsPlan) {
    let snapshot = snapshotFromCase(doc);
    const reasons = new Map<string, string>();
    // Pass after pass (`passes`, default 1): the nodes a pass chose are being deleted in the next,
    // as a command in progress marks its candidates in Karpenter (they count against budgets).
    const passes = doc.passes ?? 1;
    let decided: DisruptionPlan | undefined;
    let first: DisruptionPlan | undefined;
    for (let pass = 0; pass < passes; pass++) {
      plan = planDisruption(snapshot, now);
      first ??= plan;
      const chosenNow = [...plan.expirations.map((e) => e.nodeName), ...(plan.command?.candidates ?? []).map((c) => c.nodeName)];
      for (const e of plan.expirations) reasons.set(e.nodeName, 'Expired');
      for (const c of plan.command?.candidates ?? []) reasons.set(c.nodeName, plan.command!.reason);
      if (plan.command) decided = plan;
      if (chosenNow.length === 0) break;
      const deleting = new Set(chosenNow);
      snapshot = {
        ...snapshot,
        nodes: snapshot.nodes.map((n) =>
          deleting.has(n.metadata.name) && !n.metadata.deletionTimestamp ? { ...n, metadata: { ...n.metadata, deletionTimestamp: now.toISOString() } } : n,
        ),
      };
    }
    if (!plan) throw new Error('no disruption pass ran');
    const chosen = [...reasons.keys()];
    const last = plan;
    const why = (name: string) =>
      last.blocked
        .filter((b) => b.nodeName === name)
        .map((b) => `${b.method}: ${b.reason}`)
        .join('; ') || 'no method chose it';
    for (const n of asList(expect.disrupt)) if (!reasons.has(n)) failures.push(`expected ${n} to be disrupted, it was not (${why(n)})`);
    for (const n of asList(expect.keep)) if (reasons.has(n)) failures.push(`expected ${n} to be kept, it was disrupted (${reasons.get(n)})`);
    if ('disruptCount' in expect) {
      const from = 'disruptFrom' in expect ? asList(expect.disruptFrom) : (doc.nodes ?? []).map((n) => n.metadata.name);
      const n = from.filter((x) => reasons.has(x)).length;
      if (!countMatches(n, expect.disruptCount))
        failures.push(`expected disruptCount ${JSON.stringify(expect.disruptCount)}, got ${n} (${chosen.join(', ') || 'none'})`);
    }
    for (const [node, reason] of Object.entries((expect.disruptReason ?? {}) as Record<string, string>)) {
      if (reasons.get(node) !== reason) failures.push(`expected ${node} disrupted as ${reason}, got ${reasons.get(node) ?? 'not disrupted'}`);
    }
    // allowedDisruptions: { pool: n } — before the first pass, every budget reason of the pool
    // (Empty, Drifted, Underutilized) allows exactly n more nodes.
    for (const [pool, want] of Object.entries((expect.allowedDisruptions ?? {}) as Record<string, number>)) {
      const got = (first?.budgets ?? []).filter((b) => b.nodePool === pool && ['Empty', 'Drifted', 'Underutilized'].includes(b.reason));
      const bad = got.filter((b) => b.allowed !== want);
      if (got.length === 0) failures.push(`expected allowed disruptions for nodepool ${pool}, it has no budget status`);
      for (const b of bad) failures.push(`expected nodepool ${pool} to allow ${want} ${b.reason} disruptions, it allows ${b.allowed}`);
    }
    if ('replacementCount' in expect) {
      const n = (decided ?? plan).command?.replacements.length ?? 0;
      if (!countMatches(n, expect.replacementCount))
        failures.push(`expected replacementCount ${JSON.stringify(expect.replacementCount)}, got ${n}${decided ? '' : ' (no command)'}`);
    }
    if (expect.replaceWith) {
      const want = expect.replaceWith as {
        instanceTypeIn?: string[];
        capacityType?: string;
        nodePool?: string;
        labels?: Record<string, string>;
        includes?: string[];
        excludes?: string[];
        launchCount?: number;
      };
      const reps = (decided ?? plan).command?.replacements ?? [];
      const catalog = new Map((snapshot.catalog ?? []).map((t) => [t.name, t]));
      const ok = reps.some((r) => {
        const first = r.instanceTypes[0];
        if (want.instanceTypeIn && !want.instanceTypeIn.includes(first)) return false;
        if (want.includes && !want.includes.every((t) => r.instanceTypes.includes(t))) return false;
        if (want.excludes && want.excludes.some((t) => r.instanceTypes.includes(t))) return false;
        if (want.launchCount !== undefined && r.instanceTypes.length !== want.launchCount) return false;
        if (want.nodePool && r.nodePool !== want.nodePool) return false;
        if (want.capacityType) {
          const offers =
            catalog
              .get(first)
              ?.offerings.filter((o) => o.available && r.capacityTypes.includes(o.capacityType) && (r.zones.length === 0 || r.zones.includes(o.zone))) ?? [];
          const cheapest = offers.sort((a, b) => a.priceUsdPerHour - b.priceUsdPerHour)[0];
          if ((cheapest?.capacityType ?? r.capacityTypes[0]) !== want.capacityType) return false;
        }
        for (const [k, v] of Object.entries(want.labels ?? {})) {
          const req = r.requirements.find((x) => x.key === k);
          const single = req && req.operator === 'In' && req.values?.length === 1 ? req.values[0] : undefined;
          if ((r.labels[k] ?? single) !== v) return false;
        }
        return true;
      });
      if (!ok) {
        const got =
          reps
            .map(
              (r) =>
                `${r.nodePool}:${r.instanceTypes.slice(0, 3).join('|')}${r.instanceTypes.length > 3 ? `|…(${r.instanceTypes.length})` : ''} ${r.capacityTypes.join('/')}`,
            )
            .join(', ') || 'no replacement';
        failures.push(`expected a replacement ${JSON.stringify(want)}, got ${got}`);
      }
    }
  }
  if ('deleteNodeClaims' in expect || 'terminateInstances' in expect) {
    const gcInput: GcInput = {
      cluster: 'case',
      nodeClaims: (doc.existingNodeClaims ?? []).map((c) => nodeClaimFromCase(c)),
      nodes: doc.nodes ?? [],
      instances: (doc.instances ?? []).map((i) => ({ instanceId: i.id, state: i.state ?? 'running', launchTime: i.launchTime, tags: i.tags ?? {} })),
      // A case's table has kept the cluster's claims since before any of its instances (the Unix
      // epoch): every unowned instance is an orphan, as Karpenter judges it.
      tableEpochMs: 0,
    };
    const gc = planGarbageCollection(gcInput, now);
    const deleted = new Set(gc.deleteNodeClaims.map((d) => d.nodeClaim));
    const terminated = new Set(gc.terminateInstances.map((t) => t.instanceId));
    for (const c of asList(expect.deleteNodeClaims)) if (!deleted.has(c)) failures.push(`expected NodeClaim ${c} to be garbage-collected, it was not`);
    for (const d of deleted)
      if ('deleteNodeClaims' in expect && !asList(expect.deleteNodeClaims).includes(d))
        failures.push(`NodeClaim ${d} was garbage-collected but is not in deleteNodeClaims`);
    for (const i of asList(expect.terminateInstances)) if (!terminated.has(i)) failures.push(`expected instance ${i} to be terminated, it was not`);
    for (const t of terminated)
      if ('terminateInstances' in expect && !asList(expect.terminateInstances).includes(t))
        failures.push(`instance ${t} was terminated but is not in terminateInstances`);
  }
  return { failures, ...(plan ? { plan } : {}) };
}
