/**
 * `nodefleet plan --nodepools FILE --pods FILE|- [--nodes FILE] [--region R] [--account FILE]... [-o json|yaml|wide]`:
 * the NodeClaims nodefleet would create for pending pods, and the pods that cannot run with the
 * reason per NodePool. `--account`: the account as `aws ec2 describe-subnets` /
 * `describe-security-groups` / `describe-images` JSON (shared/aws/account-file.ts); the
 * EC2NodeClasses are resolved against it with the production resolver, so claims go only to the
 * zones their subnets cover and the launch requests name the real ids. Without it, stderr says
 * the subnets (every zone of the region), security groups and AMIs are placeholders. Reads `kubectl get pods -A -o json|yaml` (List or single objects;
 * Deployments, ReplicaSets, StatefulSets and Jobs stand for their replicas; DaemonSets add
 * per-node overhead, and so do DaemonSets known only from their pods; bound pods and Nodes are
 * existing capacity).
 *
 * `-o json|yaml`: a v1 List of karpenter.sh/v1 NodeClaims and pod Events ({@link planObjects}).
 * `--launch-requests` (JSON): `{nodeClaims: [{nodePool, requests, instanceTypes (launch set,
 * cheapest first), price (USD/h of the cheapest), capacityTypes, zones, pods, launchRequest}],
 * placements: [{pod, node}], unschedulable: [{pod, reasons: {<nodePool>: message}}]}`.
 * Exit codes: 0 ok (even with unschedulable pods), 1 unreadable or invalid input, 2 usage.
 */
import type { Command } from 'commander';
import type { Pod, StorageObjects } from '../../../shared/api/kube.ts';
import { notProvisionableReason } from '../../../shared/api/agent-events.ts';
import * as L from '../../../shared/api/labels.ts';

import type { EC2NodeClass, NodePool } from '../../../shared/api/nodepool.ts';
import { nodeClassReadiness, nodeClassRefusals } from '../../../shared/api/nodeclass-support.ts';
import { formatResource, type Resources } from '../../../shared/api/quantity.ts';
import { parseNodeClass, parseNodePool, validateYamlText } from '../../../shared/api/validate.ts';
import { readWorkloads, workloadInputProblems } from '../../../shared/api/workloads.ts';
import { parseYamlObjects } from '../../../shared/api/yaml.ts';
import { toKubeNodeClaim } from '../../../shared/api/nodeclaim.ts';
import { firstFive, toNodeClaim } from '../../../shared/launch/claims.ts';
import { CliError, checkRegion, encode, formatTable, kubeList, outputFormat, readText } from '../io.ts';
import { AmiFamilyFeatureTable, amiFamilyOf, loadCatalog, priceGap, unknownCatalogName } from '../../../shared/catalog/index.ts';
import type { InstanceType } from '../../../shared/catalog/types.ts';
import { podRequests, type DaemonSetTemplate, type SchedulingInput, type SchedulingResult } from '../../../shared/scheduling/index.ts';
import { hasClaimVolumes } from '../../../shared/scheduling/volumes.ts';
import { existingFromNodes } from '../cases/snapshot.ts';
import { clusterNameProblem, Env } from '../../../shared/api/contract.ts';
import { choosePacking, isPackingMode, packingProblem, type PackingMode } from '../../../shared/api/packing.ts';
import { MaxPlanRounds, planRounds, type LaterRound, type RoundsResult } from '../plan-rounds.ts';
import { addLaunchRequests, previewNodeClaimName } from '../../../shared/aws/launch-preview.ts';
import { readAccountFiles, resolveAgainstAccount } from '../../../shared/aws/account-file.ts';
import type { NodeClassResolutions } from '../../../shared/aws/node-class-resolver.ts';

/** One planned NodeClaim as printed. */
export interface PlannedNodeClaim {
  nodePool: string;
  /** Kubernetes quantities for cpu/memory/ephemeral-storage; counts (pods, GPUs) as numbers. */
  requests: Record<string, string | number>;
  /** The launch set (≤ 60), cheapest first. */
  instanceTypes: string[];
  /** How many instance types the NodeClaim keeps (≤ 600). */
  instanceTypeOptions: number;
  /** USD per hour of the cheapest launch offering; null when the catalog has no price for the node's OS (`priceGap`). */
  price: number | null;
  /** Why `price` is null (e.g. "no Windows prices in the catalog"). */
  priceGap?: string;
  capacityTypes: string[];
  zones: string[];
  pods: string[];
  /** Provisioning round (1 = now; 2 = once round 1's claims are launched and NodePool limits count their real size; plan-rounds.ts). */
  round: number;
}

export interface PlanOutput {
  nodeClaims: PlannedNodeClaim[];
  /** Pods a NodePool limit held back in the round before, per later round (plan-rounds.ts). */
  laterRounds: LaterRound[];
  /** Set when plan-rounds.ts `MaxPlanRounds` ended the simulation with limit-held pods left. */
  roundsTruncated?: boolean;
  placements: { pod: string; node: string }[];
  unschedulable: { pod: string; reasons: Record<string, string> }[];
  /** Placed pods that gave up preferences: each preference and why it could not hold (NodePool → message). */
  relaxed: { pod: string; relaxed: { preference: string; reasons: Record<string, string> }[] }[];
}

const QuantityKeys = new Set(['cpu', 'memory', 'ephemeral-storage']);

function printableRequests(r: Resources): Record<string, string | number> {
  const out: Record<string, string | number> = {};
  for (const k of Object.keys(r).sort((a, b) => order(a) - order(b) || a.localeCompare(b))) {
    out[k] = QuantityKeys.has(k) || k.startsWith('hugepages-') ? formatResource(k, r[k]) : r[k];
  }
  return out;
}

function order(k: string): number {
  return ['cpu', 'memory', 'ephemeral-storage', 'pods'].indexOf(k) >>> 0;
}

function podName(p: Pod): string {
  return `${p.metadata.namespace ?? 'default'}/${p.metadata.name}`;
}

/** What {@link toPlanOutput} needs beyond the result. */
export interface PlanOutputOptions {
  /** The rounds of the plan (plan-rounds.ts); one round when absent. */
  rounds?: Pick<RoundsResult, 'claimRounds' | 'laterRounds' | 'truncated'>;
  /** NodePool name → why the catalog cannot price its nodes (shared/catalog `priceGap`). */
  priceGaps?: Record<string, string>;
}

/** NodePool name → why the catalog cannot price its nodes, for the pools whose EC2NodeClass it cannot price. */
export function nodePoolPriceGaps(nodePools: readonly NodePool[], nodeClasses: readonly EC2NodeClass[]): Record<string, string> {
  const gaps: Record<string, string> = {};
  for (const np of nodePools) {
    const gap = priceGap(nodeClasses.find((nc) => nc.metadata.name === np.spec.template.spec.nodeClassRef.name));
    if (gap) gaps[np.metadata.name] = gap;
  }
  return gaps;
}

/** The printable form of a scheduling result (one round unless `opts.rounds` says otherwise). */
export function toPlanOutput(result: SchedulingResult, opts: PlanOutputOptions = {}): PlanOutput {
  const rounds = opts.rounds;
  return {
    laterRounds: rounds?.laterRounds ?? [],
    ...(rounds?.truncated ? { roundsTruncated: true } : {}),
    nodeClaims: result.newNodeClaims.map((c, i) => ({
      nodePool: c.nodePool,
      requests: printableRequests(c.requests),
      instanceTypes: c.launchInstanceTypes.map((t) => t.name),
      instanceTypeOptions: c.instanceTypes.length,
      price: opts.priceGaps?.[c.nodePool] ? null : c.priceUsdPerHour,
      ...(opts.priceGaps?.[c.nodePool] ? { priceGap: opts.priceGaps[c.nodePool] } : {}),
      capacityTypes: c.capacityTypes,
      zones: c.zones,
      pods: c.pods.map(podName),
      round: rounds?.claimRounds[i] ?? 1,
    })),
    placements: result.placements.map((p) => ({ pod: podName(p.pod), node: p.node })),
    unschedulable: result.unschedulable.map((u) => ({ pod: podName(u.pod), reasons: u.reasons })),
    relaxed: (result.relaxed ?? []).map((r) => ({ pod: podName(r.pod), relaxed: r.relaxed })),
  };
}

/**
 * One line per preference given up and why, the pods it was given up for grouped:
 * `relaxed preferred pod anti-affinity (…) for 2 pod(s) (default/web-3, default/web-4): it held nowhere: nodepool default: exceeds limits: …`.
 */
export function relaxedLines(relaxed: PlanOutput['relaxed']): string[] {
  const groups = new Map<string, { preference: string; why: string; pods: string[] }>();
  for (const r of relaxed) {
    for (const step of r.relaxed) {
      const reasons = Object.entries(step.reasons);
      const why = reasons.length ? reasons.map(([np, m]) => `nodepool ${np}: ${m}`).join('; ') : 'no NodePool';
      const key = `${step.preference}\n${why}`;
      const g = groups.get(key);
      if (g) g.pods.push(r.pod);
      else groups.set(key, { preference: step.preference, why, pods: [r.pod] });
    }
  }
  return [...groups.values()].map(
    (g) => `relaxed ${g.preference} for ${g.pods.length} pod(s) (${firstFive(g.pods)}): with it the pod(s) fit nowhere: ${g.why}`,
  );
}

function firstFew(xs: readonly string[], n: number): string {
  return xs.length <= n ? xs.join(',') : `${xs.slice(0, n).join(',')} +${xs.length - n}`;
}

function extended(requests: Record<string, string | number>): string {
  const base = new Set(['cpu', 'memory', 'ephemeral-storage', 'pods']);
  return (
    Object.entries(requests)
      .filter(([k]) => !base.has(k))
      .map(([k, v]) => `${k}=${v}`)
      .join(',') || '-'
  );
}

/** A table for people; `wide` adds the first launch types and the extended resources. */
export function formatPlanTable(out: PlanOutput, wide = false): string {
  const lines: string[] = [];
  if (out.nodeClaims.length === 0) lines.push('No new NodeClaims.');
  else {
    const byRound = out.nodeClaims.some((c) => c.round > 1);
    const rows = out.nodeClaims.map((c) => [
      ...(byRound ? [String(c.round)] : []),
      c.nodePool,
      c.instanceTypes[0] ?? '-',
      c.price === null ? 'unknown' : `$${c.price.toFixed(4)}/h`,
      c.capacityTypes[0] ?? '-',
      String(c.instanceTypes.length),
      String(c.requests.cpu ?? '0'),
      String(c.requests.memory ?? '0'),
      String(c.pods.length),
      c.zones.join(','),
      ...(wide ? [firstFew(c.instanceTypes, 5), extended(c.requests)] : []),
    ]);
    const header = [
      ...(byRound ? ['ROUND'] : []),
      'NODEPOOL',
      'CHEAPEST',
      'PRICE',
      'CAPACITY',
      'LAUNCH-SET',
      'CPU',
      'MEMORY',
      'PODS',
      'ZONES',
      ...(wide ? ['INSTANCE-TYPES', 'EXTENDED'] : []),
    ];
    lines.push(formatTable(header, rows).trimEnd());
    const total = out.nodeClaims.reduce((s, c) => s + (c.price ?? 0), 0);
    const unpriced = out.nodeClaims.filter((c) => c.price === null).length;
    lines.push(`${out.nodeClaims.length} NodeClaim(s), $${total.toFixed(4)}/h${unpriced ? ` + ${unpriced} unpriced` : ''}`);
    const gaps = new Map(out.nodeClaims.filter((c) => c.priceGap).map((c) => [c.nodePool, c.priceGap!]));
    for (const [np, gap] of gaps) lines.push(`nodepool ${np}: ${gap}: price unknown; types ordered by Linux rates`);
  }
  for (const r of out.laterRounds) {
    const why = Object.entries(r.heldBy).map(([np, m]) => {
      const limit = /under its (\S+) limit \(([^)]+)\)/.exec(m);
      return limit ? `nodepool ${np}'s ${limit[1]} limit (${limit[2]})` : `nodepool ${np} (${m})`;
    });
    lines.push(`${r.pods.length} pod(s) placed in a later round (${r.round}): held by ${why.join(', ')} until round ${r.round - 1} launches`);
  }
  if (out.roundsTruncated) lines.push(`stopped after ${MaxPlanRounds} rounds: the pods below still wait on NodePool limits`);
  if (out.placements.length > 0) lines.push(`${out.placements.length} pod(s) fit on existing nodes`);
  lines.push(...relaxedLines(out.relaxed));
  for (const u of out.unschedulable) {
    const reasons = Object.entries(u.reasons);
    lines.push(`unschedulable ${u.pod}: ${reasons.length ? reasons.map(([np, why]) => `${np}: ${why}`).join('; ') : 'no NodePool'}`);
  }
  return lines.join('\n');
}

/** Inputs of a plan, already read. */
export interface PlanTexts {
  nodePools: { file: string; text: string };
  pods: { file: string; text: string };
  nodes?: { file: string; text: string };
  region: string;
  /**
   * The operator's packing mode (`--packing`, else `NODEFLEET_PACKING`); the NodePools'
   * `nodefleet.io/packing` annotation wins over it (shared/api/packing.ts). Default: the scheduler's (cost).
   */
  packing?: PackingMode;
  /**
   * The EC2NodeClasses resolved against `--account` ({@link resolveAgainstAccount}): offerings only
   * in the zones each class's subnets cover, and a class whose terms select nothing launches nothing.
   * Absent: every zone of the region (placeholders).
   */
  resolutions?: Pick<NodeClassResolutions, 'resolved' | 'problems'>;
}

/** The objects of a workloads file, checked (see {@link workloadInputProblems}). @throws CliError with every problem, one per line. */
function readWorkloadObjects(x: { file: string; text: string }): unknown[] {
  const { objects, errors } = parseYamlObjects(x.text);
  const problems = [
    ...errors.map(
      (e) => `${x.file}: document ${e.document}: ${e.line !== undefined ? `line ${e.line}, column ${e.column}: ` : ''}YAML syntax error: ${e.message}`,
    ),
    ...workloadInputProblems(objects).map((p) => `${x.file}: ${p}`),
  ];
  if (objects.length === 0 && errors.length === 0)
    problems.push(`${x.file}: no objects found (expected kubectl get pods -A -o yaml|json output, Pods or workloads)`);
  const kinds = new Set(objects.map((o) => (o.object as { kind?: unknown } | null)?.kind));
  if (objects.length > 0 && [...kinds].every((k) => k === 'NodePool' || k === 'EC2NodeClass')) {
    problems.push(`${x.file}: holds only ${[...kinds].join(' and ')} objects, no pods or workloads (a NodePool file goes to --nodepools)`);
  }
  if (problems.length > 0) throw new CliError(problems.join('\n'));
  return objects.map((o) => o.object);
}

/** NodePools and EC2NodeClasses of the NodePool file. @throws CliError with every problem. */
export function readNodePoolFile(x: { file: string; text: string }): { nodePools: NodePool[]; nodeClasses: EC2NodeClass[] } {
  const pools = validateYamlText(x.text, x.file);
  if (pools.problems.length > 0) throw new CliError(pools.problems.join('\n'));
  const nodePools: NodePool[] = pools.objects.filter((o) => o.kind === 'NodePool').map((o) => parseNodePool(o.object));
  const nodeClasses: EC2NodeClass[] = pools.objects.filter((o) => o.kind === 'EC2NodeClass').map((o) => parseNodeClass(o.object));
  if (nodePools.length === 0) throw new CliError(`${x.file}: no NodePool found`);
  return { nodePools, nodeClasses };
}

/** What `plan` reports about its input beyond the scheduling input ({@link planInput}). */
export interface PlanNotes {
  notProvisionable?: Pod[];
  /** DaemonSets counted from their pods, the input holding no DaemonSet object for them. */
  daemonSetsFromPods?: DaemonSetTemplate[];
}

/**
 * Builds the scheduling input from the texts.
 * @throws CliError with every problem when a file is unreadable YAML, the NodePool file is invalid
 * or has no NodePool, the workloads have a bad object, or the region is unknown.
 */
export function planInput(t: PlanTexts, notes?: PlanNotes): SchedulingInput {
  checkRegion(t.region);
  const { nodePools, nodeClasses } = readNodePoolFile(t.nodePools);
  const objects = [...readWorkloadObjects(t.pods), ...(t.nodes ? readWorkloadObjects(t.nodes) : [])];
  // `kubectl get pods -A` lists the DaemonSets' pods but not the DaemonSets: their pods stand for them.
  const w = readWorkloads(objects, { daemonSetsFromPods: true });
  if (notes) {
    notes.notProvisionable = w.notProvisionable;
    notes.daemonSetsFromPods = w.daemonSets.filter((d) => w.daemonSetsFromPods.includes(`${d.metadata.namespace}/${d.metadata.name}`));
  }
  const packing = choosePacking(nodePools, t.packing);
  const byClass = new Map<string, InstanceType[]>();
  const instanceTypes = (np: NodePool): InstanceType[] => {
    const name = np.spec.template.spec.nodeClassRef.name;
    let types = byClass.get(name);
    if (!types) {
      const nodeClass = nodeClasses.find((c) => c.metadata.name === name);
      const os = AmiFamilyFeatureTable[amiFamilyOf(nodeClass)].os;
      types = loadCatalog({ region: t.region, nodeClass, subnets: t.resolutions?.resolved.get(name)?.subnets }).filter(
        (it) => (it.labels[L.LabelOS] ?? 'linux') === os,
      );
      byClass.set(name, types);
    }
    return types;
  };
  return {
    pods: w.pendingPods,
    nodePools,
    instanceTypes,
    existingNodes: existingFromNodes(w.nodes, w.boundPods),
    boundPods: w.boundPods,
    daemonSets: w.daemonSets,
    // Volumes are checked only against storage objects the input holds: a pods file alone
    // (kubectl get pods) says nothing about claims, and every claim would read as missing.
    ...(hasStorage(w.storage) ? { storage: w.storage } : {}),
    ...(packing.packing ? { settings: { packing: packing.packing } } : {}),
    // A class whose terms select nothing in the account is not ready: its NodePools launch nothing (the provisioner's rule).
    ...(t.resolutions?.problems.size ? { nodePoolNotReady: nodeClassReadiness([], t.resolutions.problems).nodePoolNotReady } : {}),
  };
}

function hasStorage(s: StorageObjects): boolean {
  return s.claims.length + s.volumes.length + s.classes.length > 0;
}

/**
 * One line for the unbound pods the provisioner would not solve for (shared/api/agent-events.ts
 * `notProvisionableReason`: nominated, terminating, gated, …), the first five named with why;
 * DaemonSet pods are left out (their node runs them). None when there are none.
 */
export function notProvisionableLine(file: string, pods: readonly Pod[]): string[] {
  const listed = pods.map((p) => ({ p, why: notProvisionableReason(p, { assumeUnschedulable: true }) })).filter((x) => x.why && x.why !== 'DaemonSet pod');
  if (listed.length === 0) return [];
  return [
    `${file}: ${listed.length} unbound pod(s) not planned for, as the provisioner skips them: ${firstFive(listed.map((x) => `${x.p.metadata.namespace ?? 'default'}/${x.p.metadata.name} (${x.why})`))}`,
  ];
}

/**
 * One line when DaemonSets were counted from their pods because the input holds no DaemonSet
 * object for them (plain `kubectl get pods -A`): which, at most how much they take per node, and
 * that a DaemonSet with no pod in the input is not counted. None otherwise.
 */
export function daemonSetsFromPodsLine(file: string, daemonSets: readonly DaemonSetTemplate[]): string[] {
  if (daemonSets.length === 0) return [];
  const total: Resources = {};
  for (const d of daemonSets) for (const [k, v] of Object.entries(podRequests(d.spec))) if (k !== 'pods') total[k] = (total[k] ?? 0) + v;
  const perNode = ['cpu', 'memory'].filter((k) => total[k]).map((k) => `${formatResource(k, total[k])} ${k}`);
  const names = daemonSets.map((d) => `${d.metadata.namespace ?? 'default'}/${d.metadata.name}`);
  return [
    `${file}: ${daemonSets.length} DaemonSet(s) counted from their pods (the input holds no DaemonSet object for them)${perNode.length ? `, up to ${perNode.join(' and ')} per node` : ''}: ${firstFive(names)}; a DaemonSet with no pod in the input is not counted (add \`kubectl get daemonsets -A -o yaml\` to count every one)`,
  ];
}

/**
 * A line when pods mount PersistentVolumeClaims but the input holds no storage objects, so their
 * volumes were not checked (shared/scheduling/volumes.ts); none otherwise.
 */
export function uncheckedVolumesLine(file: string, input: Pick<SchedulingInput, 'pods' | 'storage'>): string[] {
  if (input.storage) return [];
  const n = input.pods.filter(hasClaimVolumes).length;
  if (n === 0) return [];
  return [
    `${file}: ${n} pod(s) mount PersistentVolumeClaims but the input holds no PersistentVolumeClaim, PersistentVolume or StorageClass: their volumes are not checked (add \`kubectl get pvc,pv,storageclass -A -o yaml\` to check them)`,
  ];
}

/**
 * One line per instance type or family that the NodePools or the pods ask for by name and the
 * catalog cannot launch in `region` (shared/catalog `unknownCatalogName`), naming the file, the
 * object and the field: `np.yaml: NodePool/gpu: spec.template.spec.requirements[0].values[1]: instance type "p3.2xlarge" is not in the catalog (…)`.
 * Pods asking for the same value are reported once, with how many others do.
 */
export function unknownInstanceTypeLines(
  files: { nodePools: string; pods: string },
  nodePools: readonly NodePool[],
  pods: readonly Pod[],
  region: string,
): string[] {
  const lines: string[] = [];
  nodePools.forEach((np) => {
    np.spec.template.spec.requirements.forEach((r, i) => {
      if (r.operator !== 'In') return;
      (r.values ?? []).forEach((v, j) => {
        const why = unknownCatalogName(r.key, v, region);
        if (why) lines.push(`${files.nodePools}: NodePool/${np.metadata.name}: spec.template.spec.requirements[${i}].values[${j}]: ${why}`);
      });
    });
  });
  const byValue = new Map<string, { first: string; others: number }>();
  const note = (key: string, v: string, where: string) => {
    const why = unknownCatalogName(key, v, region);
    if (!why) return;
    const seen = byValue.get(why);
    if (seen) seen.others++;
    else byValue.set(why, { first: where, others: 0 });
  };
  for (const p of pods) {
    const name = `Pod ${podName(p)}`;
    for (const [k, v] of Object.entries(p.spec.nodeSelector ?? {})) note(k, v, `${name}: spec.nodeSelector["${k}"]`);
    const terms = p.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [];
    terms.forEach((t, ti) =>
      (t.matchExpressions ?? []).forEach((e, ei) => {
        if (e.operator === 'In')
          for (const v of e.values ?? [])
            note(
              e.key,
              v,
              `${name}: spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[${ti}].matchExpressions[${ei}]`,
            );
      }),
    );
  }
  for (const [why, { first, others }] of byValue) lines.push(`${files.pods}: ${first}: ${why}${others ? ` (and ${others} more pod(s))` : ''}`);
  return lines;
}

/** Annotation carrying a planned NodeClaim's price (USD/h of its cheapest launch offering). */
export const AnnotationPlannedPrice = 'nodefleet.io/planned-price-usd-per-hour';
/** Annotation set instead of the price when the catalog cannot price the node (shared/catalog `priceGap`). */
export const AnnotationPriceUnknown = 'nodefleet.io/planned-price-unknown';
/** Annotation carrying a planned NodeClaim's provisioning round when it is not the first (plan-rounds.ts). */
export const AnnotationPlannedRound = 'nodefleet.io/planned-round';

/**
 * The plan as `kubectl get -o yaml|json` prints objects: a v1 List of the NodeClaims
 * (karpenter.sh/v1, as the provisioner would store them, not yet launched) followed by one v1
 * Event per pod: `Nominated` (the NodeClaim or existing node it would run on) or
 * `FailedScheduling` (why, per NodePool).
 */
export function planObjects(
  result: SchedulingResult,
  input: SchedulingInput,
  nodeClasses: readonly EC2NodeClass[],
  opts: { cluster: string; now: Date; claimRounds?: readonly number[] },
) {
  const claims = result.newNodeClaims.map((c, i) => {
    const nodePool = input.nodePools.find((p) => p.metadata.name === c.nodePool)!;
    const nodeClass = nodeClasses.find((nc) => nc.metadata.name === nodePool.spec.template.spec.nodeClassRef.name);
    const name = previewNodeClaimName(
      c.nodePool,
      c.pods.map((p) => `${p.metadata.namespace ?? 'default'}/${p.metadata.name}`),
    );
    return {
      planned: c,
      gap: priceGap(nodeClass),
      round: opts.claimRounds?.[i] ?? 1,
      claim: toNodeClaim(c, { cluster: opts.cluster, nodePool, nodeClass, now: opts.now, name }),
    };
  });
  const event = (p: Pod, reason: 'Nominated' | 'FailedScheduling', message: string) => ({
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: `${p.metadata.name}.nodefleet-plan`, namespace: p.metadata.namespace ?? 'default' },
    involvedObject: { apiVersion: 'v1', kind: 'Pod', name: p.metadata.name, namespace: p.metadata.namespace ?? 'default' },
    reason,
    message,
    type: reason === 'Nominated' ? 'Normal' : 'Warning',
    source: { component: 'nodefleet' },
  });
  const events = [
    ...claims.flatMap(({ planned, claim, round }) =>
      planned.pods.map((p) =>
        event(p, 'Nominated', `Pod should schedule on: nodeclaim/${claim.name}${round > 1 ? ` (placed in a later round: ${round})` : ''}`),
      ),
    ),
    ...result.placements.map((pl) => event(pl.pod, 'Nominated', `Pod should schedule on: node/${pl.node}`)),
    ...result.unschedulable.map((u) => {
      const reasons = Object.entries(u.reasons);
      return event(u.pod, 'FailedScheduling', reasons.length ? reasons.map(([np, why]) => `nodepool ${np}: ${why}`).join('; ') : 'no NodePool');
    }),
  ];
  return kubeList([
    ...claims.map(({ planned, claim, round, gap }) =>
      toKubeNodeClaim(claim, {
        ...(gap ? { [AnnotationPriceUnknown]: gap } : { [AnnotationPlannedPrice]: String(planned.priceUsdPerHour) }),
        ...(round > 1 ? { [AnnotationPlannedRound]: String(round) } : {}),
      }),
    ),
    ...events,
  ]);
}

export function register(program: Command): void {
  program
    .command('plan')
    .description('show the NodeClaims nodefleet would create for pending pods')
    .requiredOption('--nodepools <file>', 'NodePool (and EC2NodeClass) YAML')
    .requiredOption('--pods <file>', 'pods / workloads: kubectl get pods -A -o json|yaml, or - for stdin')
    .option('--nodes <file>', 'existing nodes: kubectl get nodes -o json|yaml')
    .option('--region <region>', 'AWS region of the instance catalog', 'us-east-1')
    .option('-o, --output <format>', 'json|yaml (a List of karpenter.sh/v1 NodeClaims and pod Events), wide, or a table by default', 'table')
    .option('--launch-requests', 'add per NodeClaim the exact CreateFleet input under launchRequest (prints JSON)')
    .option('--cluster-name <name>', 'cluster name used in --launch-requests', 'my-cluster')
    .option(
      '--packing <mode>',
      "cost (default: a claim stops growing when no efficiently priced type could hold it) or karpenter (grow until no type can hold more); env NODEFLEET_PACKING; a NodePool's nodefleet.io/packing annotation wins",
    )
    .option(
      '--account <file>',
      'the account: JSON of aws ec2 describe-subnets / describe-security-groups / describe-images (several in one file, or the option repeated); the EC2NodeClasses are resolved against it, claims go only where their subnets are',
      (v: string, prev: string[]) => [...prev, v],
      [] as string[],
    )
    .action(
      async (opts: {
        nodepools: string;
        pods: string;
        nodes?: string;
        region: string;
        output: string;
        launchRequests?: boolean;
        clusterName: string;
        packing?: string;
        account: string[];
      }) => {
        const envPacking = process.env[Env.packing] || undefined;
        if (opts.packing === undefined && envPacking !== undefined && !isPackingMode(envPacking))
          throw new CliError(`${Env.packing}: ${packingProblem(envPacking)}`, 2);
        const settingFrom = opts.packing !== undefined ? '--packing' : Env.packing;
        opts.packing ??= envPacking;
        const format = outputFormat(opts.output, ['table', 'wide', 'json', 'yaml']);
        if (opts.packing !== undefined && !isPackingMode(opts.packing)) throw new CliError(`--packing: ${packingProblem(opts.packing)}`, 2);
        const nameProblem = clusterNameProblem(opts.clusterName);
        if (nameProblem) throw new CliError(`--cluster-name: ${nameProblem}`, 2);
        const nodePoolText = readText(opts.nodepools);
        checkRegion(opts.region);
        const account = opts.account.length > 0 ? readAccountFiles(opts.account.map(readText), opts.region) : undefined;
        const pools = readNodePoolFile(nodePoolText);
        const against = account
          ? await resolveAgainstAccount(account, pools.nodePools, pools.nodeClasses, { region: opts.region, clusterName: opts.clusterName })
          : undefined;
        const notes: PlanNotes = {};
        const input = planInput(
          {
            nodePools: nodePoolText,
            pods: readText(opts.pods),
            nodes: opts.nodes ? readText(opts.nodes) : undefined,
            region: opts.region,
            packing: opts.packing as PlanTexts['packing'],
            ...(against ? { resolutions: against.resolutions } : {}),
          },
          notes,
        );
        const { nodeClasses } = pools;
        // The plan places pods as Karpenter would; a class nodefleet refuses launches nothing at runtime: said here.
        for (const c of nodeClasses)
          for (const line of nodeClassRefusals(c.spec))
            process.stderr.write(`${opts.nodepools}: EC2NodeClass/${c.metadata.name}: ${line} (nodefleet launches nothing from this class)\n`);
        for (const line of unknownInstanceTypeLines({ nodePools: opts.nodepools, pods: opts.pods }, input.nodePools, input.pods, opts.region))
          process.stderr.write(`${line}\n`);
        for (const line of uncheckedVolumesLine(opts.pods, input)) process.stderr.write(`${line}\n`);
        for (const line of notProvisionableLine(opts.pods, notes.notProvisionable ?? [])) process.stderr.write(`${line}\n`);
        for (const line of daemonSetsFromPodsLine(opts.pods, notes.daemonSetsFromPods ?? [])) process.stderr.write(`${line}\n`);
        for (const [name, problem] of against?.resolutions.problems ?? [])
          process.stderr.write(`${opts.account.join(', ')}: EC2NodeClass/${name}: ${problem} (nodefleet launches nothing from this class)\n`);
        if (!against)
          process.stderr.write(
            `no --account: subnets, security groups and AMIs are placeholders (every zone of ${opts.region} assumed, zone ids as in the shipped catalog)\n`,
          );
        else if (against.placeholders.length > 0) process.stderr.write(`${opts.account.join(', ')}: placeholders for ${against.placeholders.join('; ')}\n`);
        const packing = choosePacking(input.nodePools, opts.packing as PackingMode | undefined);
        if (packing.conflict) process.stderr.write(`${opts.nodepools}: ${packing.conflict}\n`);
        const rounds = planRounds(input);
        const result = rounds.result;
        const out = toPlanOutput(result, { rounds, priceGaps: nodePoolPriceGaps(input.nodePools, nodeClasses) });
        if (opts.launchRequests) {
          // Added for issue 4: the CreateFleet input per NodeClaim (shared/aws/launch-preview.ts).
          const nodeClassOf = (np: string) => input.nodePools.find((p) => p.metadata.name === np)?.spec.template.spec.nodeClassRef.name ?? 'default';
          const nodeClaims = addLaunchRequests(out.nodeClaims, result.newNodeClaims, {
            nodeClasses,
            nodeClassOf,
            clusterName: opts.clusterName,
            region: opts.region,
            ...(against ? { resolved: against.resolutions.resolved } : {}),
          });
          process.stdout.write(`${JSON.stringify({ ...out, nodeClaims }, null, 2)}\n`);
          return;
        }
        if (format === 'json' || format === 'yaml') {
          process.stdout.write(
            encode(planObjects(result, input, nodeClasses, { cluster: opts.clusterName, now: new Date(), claimRounds: rounds.claimRounds }), format),
          );
        } else {
          const from = { annotation: ` (${L.AnnotationPacking})`, setting: ` (${settingFrom})`, default: '' }[packing.source];
          const header = `region ${opts.region} (shipped catalog; --region to change), packing ${packing.packing ?? 'cost'}${from}${against ? `, account ${opts.account.join(', ')}` : ''}`;
          process.stdout.write(`${header}\n${formatPlanTable(out, format === 'wide')}\n`);
        }
      },
    );
}
