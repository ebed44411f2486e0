/**
 * `nodefleet plan --nodepools FILE --pods FILE|- [--nodes FILE] [--region R] [--output json|table]`:
 * the NodeClaims nodefleet would create for pending pods, and the pods that cannot run with the
 * reason per NodePool. Reads `kubectl get pods -A -o json|yaml` (List or single objects;
 * Deployments, ReplicaSets, StatefulSets and Jobs stand for their replicas; DaemonSets add
 * per-node overhead; bound pods and Nodes are existing capacity).
 *
 * JSON: `{nodeClaims: [{nodePool, requests, instanceTypes (launch set, cheapest first), price
 * (USD/h of the cheapest), capacityTypes, zones, pods}], placements: [{pod, node}],
 * unschedulable: [{pod, reasons: {<nodePool>: message}}]}`.
 * Exit codes: 0 ok (even with unschedulable pods), 1 unreadable or invalid input.
 */
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { Pod } from '../../../shared/api/kube.ts';
import * as L from '../../../shared/api/labels.ts';
import type { EC2NodeClass, NodePool } from '../../../shared/api/nodepool.ts';
import { formatResource, type Resources } from '../../../shared/api/quantity.ts';
import { parseNodeClass, parseNodePool, validateYamlText } from '../../../shared/api/validate.ts';
import { readWorkloads } from '../../../shared/api/workloads.ts';
import { AmiFamilyFeatureTable, amiFamilyOf, loadCatalog } from '../../../shared/catalog/index.ts';
import type { InstanceType } from '../../../shared/catalog/types.ts';
import { solve, type SchedulingInput, type SchedulingResult } from '../../../shared/scheduling/index.ts';
import { existingFromNode } from '../cases/snapshot.ts';
import { addLaunchRequests } from '../../../shared/aws/launch-preview.ts';

/** One planned NodeClaim as printed. */
export interface PlannedNodeClaim {
  nodePool: string;
  /** Kubernetes quantities for cpu/memory/ephemeral-storage; counts (pods, GPUs) as numbers. */
  requests: Record<string, string | number>;
  /** The launch set (≤ 60), cheapest first. */
  instanceTypes: string[];
  /** How many instance types the NodeClaim keeps (≤ 600). */
  instanceTypeOptions: number;
  /** USD per hour of the cheapest launch offering. */
  price: number;
  capacityTypes: string[];
  zones: string[];
  pods: string[];
}

export interface PlanOutput {
  nodeClaims: PlannedNodeClaim[];
  placements: { pod: string; node: string }[];
  unschedulable: { pod: string; reasons: Record<string, string> }[];
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

/** The printable form of a scheduling result. */
export function toPlanOutput(result: SchedulingResult): PlanOutput {
  return {
    nodeClaims: result.newNodeClaims.map((c) => ({
      nodePool: c.nodePool,
      requests: printableRequests(c.requests),
      instanceTypes: c.launchInstanceTypes.map((t) => t.name),
      instanceTypeOptions: c.instanceTypes.length,
      price: c.priceUsdPerHour,
      capacityTypes: c.capacityTypes,
      zones: c.zones,
      pods: c.pods.map(podName),
    })),
    placements: result.placements.map((p) => ({ pod: podName(p.pod), node: p.node })),
    unschedulable: result.unschedulable.map((u) => ({ pod: podName(u.pod), reasons: u.reasons })),
  };
}

/** A table for people. */
export function formatPlanTable(out: PlanOutput): string {
  const lines: string[] = [];
  if (out.nodeClaims.length === 0) lines.push('No new NodeClaims.');
  else {
    const rows = out.nodeClaims.map((c) => [
      c.nodePool,
      c.instanceTypes[0] ?? '-',
      `$${c.price.toFixed(4)}/h`,
      c.capacityTypes[0] ?? '-',
      String(c.instanceTypes.length),
      String(c.requests.cpu ?? '0'),
      String(c.requests.memory ?? '0'),
      String(c.pods.length),
      c.zones.join(','),
    ]);
    const header = ['NODEPOOL', 'CHEAPEST', 'PRICE', 'CAPACITY', 'LAUNCH-SET', 'CPU', 'MEMORY', 'PODS', 'ZONES'];
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
    for (const r of [header, ...rows]) lines.push(r.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd());
    const total = out.nodeClaims.reduce((s, c) => s + c.price, 0);
    lines.push(`${out.nodeClaims.length} NodeClaim(s), $${total.toFixed(4)}/h`);
  }
  if (out.placements.length > 0) lines.push(`${out.placements.length} pod(s) fit on existing nodes`);
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
}

/**
 * Builds the scheduling input from the texts.
 * @throws Error with every problem when the NodePool file is invalid or has no NodePool.
 */
export function planInput(t: PlanTexts): SchedulingInput {
  const pools = validateYamlText(t.nodePools.text, t.nodePools.file);
  if (pools.problems.length > 0) throw new Error(pools.problems.join('\n'));
  const nodePools: NodePool[] = pools.objects.filter((o) => o.kind === 'NodePool').map((o) => parseNodePool(o.object));
  const nodeClasses: EC2NodeClass[] = pools.objects.filter((o) => o.kind === 'EC2NodeClass').map((o) => parseNodeClass(o.object));
  if (nodePools.length === 0) throw new Error(`${t.nodePools.file}: no NodePool found`);
  const read = (x: { file: string; text: string }) => {
    const r = validateYamlText(x.text, x.file);
    const syntax = r.problems.filter((p) => p.includes('YAML syntax error'));
    if (syntax.length > 0) throw new Error(syntax.join('\n'));
    return r.objects.map((o) => o.object);
  };
  const objects = [...read(t.pods), ...(t.nodes ? read(t.nodes) : [])];
  const w = readWorkloads(objects);
  const byClass = new Map<string, InstanceType[]>();
  const instanceTypes = (np: NodePool): InstanceType[] => {
    const name = np.spec.template.spec.nodeClassRef.name;
    let types = byClass.get(name);
    if (!types) {
      const nodeClass = nodeClasses.find((c) => c.metadata.name === name);
      const os = AmiFamilyFeatureTable[amiFamilyOf(nodeClass)].os;
      types = loadCatalog({ region: t.region, nodeClass }).filter((it) => (it.labels[L.LabelOS] ?? 'linux') === os);
      byClass.set(name, types);
    }
    return types;
  };
  return {
    pods: w.pendingPods,
    nodePools,
    instanceTypes,
    existingNodes: w.nodes.map((n) => existingFromNode(n, w.boundPods)),
    boundPods: w.boundPods,
    daemonSets: w.daemonSets,
    volumes: w.volumes,
  };
}

function readText(file: string): { file: string; text: string } {
  try {
    return { file, text: readFileSync(file === '-' ? 0 : file, 'utf8') };
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a folder, not a file' : code === 'EACCES' ? 'permission denied' : (e as Error).message;
    throw new Error(`${file}: cannot read: ${why}`);
  }
}

export function register(program: Command): void {
  program
    .command('plan')
    .description('show the NodeClaims nodefleet would create for pending pods')
    .requiredOption('--nodepools <file>', 'NodePool (and EC2NodeClass) YAML')
    .requiredOption('--pods <file>', 'pods / workloads: kubectl get pods -A -o json|yaml, or - for stdin')
    .option('--nodes <file>', 'existing nodes: kubectl get nodes -o json|yaml')
    .option('--region <region>', 'AWS region of the instance catalog', 'us-east-1')
    .option('--output <format>', 'json or table', 'table')
    .option('--launch-requests', 'add per NodeClaim the exact CreateFleet input under launchRequest (prints JSON)')
    .option('--cluster-name <name>', 'cluster name used in --launch-requests', 'my-cluster')
    .action((opts: { nodepools: string; pods: string; nodes?: string; region: string; output: string; launchRequests?: boolean; clusterName: string }) => {
      if (opts.output !== 'json' && opts.output !== 'table') {
        process.stderr.write(`nodefleet plan: --output must be json or table, got "${opts.output}"\n`);
        process.exit(2);
      }
      let input: SchedulingInput;
      try {
        input = planInput({
          nodePools: readText(opts.nodepools),
          pods: readText(opts.pods),
          nodes: opts.nodes ? readText(opts.nodes) : undefined,
          region: opts.region,
        });
      } catch (e) {
        process.stderr.write(`nodefleet plan: ${(e as Error).message}\n`);
        process.exit(1);
      }
      const result = solve(input);
      const out = toPlanOutput(result);
      if (opts.launchRequests) {
        // Added for issue 4: the CreateFleet input per NodeClaim (shared/aws/launch-preview.ts).
        const objects = validateYamlText(readText(opts.nodepools).text, opts.nodepools).objects;
        const nodeClasses = objects.filter((o) => o.kind === 'EC2NodeClass').map((o) => parseNodeClass(o.object));
        const nodeClassOf = (np: string) => input.nodePools.find((p) => p.metadata.name === np)?.spec.template.spec.nodeClassRef.name ?? 'default';
        const nodeClaims = addLaunchRequests(out.nodeClaims, result.newNodeClaims, { nodeClasses, nodeClassOf, clusterName: opts.clusterName, region: opts.region });
        process.stdout.write(`${JSON.stringify({ ...out, nodeClaims }, null, 2)}\n`);
        return;
      }
      if (opts.output === 'json') process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
      else process.stdout.write(`region ${opts.region} (prices and offerings of the shipped catalog; --region to change)\n${formatPlanTable(out)}\n`);
    });
}
