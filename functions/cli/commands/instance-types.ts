/**
 * `nodefleet instance-types --region R [--nodepool FILE] [-o json|yaml|wide]`: the instance
 * types a NodePool admits in a region (all priced types without --nodepool), with capacity,
 * allocatable and price per offering, cheapest first.
 *
 * JSON: an array of `{name, capacity, allocatable, offerings: [{zone, capacityType, price, available}]}`
 * with Kubernetes quantity strings; with several NodePools in the file each entry also has `nodePool`.
 */
import type { Command } from 'commander';
import type { EC2NodeClass, NodePool } from '../../../shared/api/nodepool.ts';
import { checkRegion, encode, outputFormat, readText } from '../io.ts';
import { nodePoolPriceGaps, readNodePoolFile } from './plan.ts';
import { formatResources } from '../../../shared/api/quantity.ts';
import { cheapestPrice, filterInstanceTypes, loadCatalog, nodePoolRequirements, sortByPrice, type InstanceType } from '../../../shared/catalog/index.ts';

/** One row of the output. Prices in USD per hour. */
export interface InstanceTypeRow {
  name: string;
  nodePool?: string;
  capacity: Record<string, string>;
  allocatable: Record<string, string>;
  offerings: { zone: string; capacityType: string; price: number; available: boolean }[];
}

function toRow(it: InstanceType, nodePool?: string): InstanceTypeRow {
  const offerings = [...it.offerings]
    .sort((a, b) => a.priceUsdPerHour - b.priceUsdPerHour || a.zone.localeCompare(b.zone) || a.capacityType.localeCompare(b.capacityType))
    .map((o) => ({ zone: o.zone, capacityType: o.capacityType, price: o.priceUsdPerHour, available: o.available }));
  return { name: it.name, ...(nodePool ? { nodePool } : {}), capacity: formatResources(it.capacity), allocatable: formatResources(it.allocatable), offerings };
}

/**
 * Rows for `region`, admitted by each NodePool in `objects` (all types when there is none),
 * cheapest first. NodePools use the EC2NodeClass of the same file their nodeClassRef names.
 */
export function listInstanceTypes(region: string, nodePools: NodePool[] = [], nodeClasses: EC2NodeClass[] = []): InstanceTypeRow[] {
  if (nodePools.length === 0) return sortByPrice(loadCatalog({ region })).map((it) => toRow(it));
  const rows: { row: InstanceTypeRow; price: number }[] = [];
  for (const np of nodePools) {
    const ref = np.spec.template.spec.nodeClassRef;
    const nodeClass = nodeClasses.find((nc) => nc.metadata.name === ref.name && ref.kind === 'EC2NodeClass');
    const admitted = filterInstanceTypes(loadCatalog({ region, nodeClass }), nodePoolRequirements(np));
    for (const it of admitted) rows.push({ row: toRow(it, nodePools.length > 1 ? np.metadata.name : undefined), price: cheapestPrice(it) });
  }
  return rows.sort((a, b) => a.price - b.price || a.row.name.localeCompare(b.row.name)).map((r) => r.row);
}

function minPrice(row: InstanceTypeRow, capacityType: string): string {
  const prices = row.offerings.filter((o) => o.capacityType === capacityType && o.available).map((o) => o.price);
  return prices.length ? Math.min(...prices).toFixed(4) : '-';
}

/** A fixed-width table for people: one line per type; `wide` adds the extended resources (GPUs, ENIs, …). */
export function formatTable(rows: readonly InstanceTypeRow[], wide = false): string {
  const withPool = rows.some((r) => r.nodePool);
  const header = [
    ...(withPool ? ['NODEPOOL'] : []),
    'NAME',
    'CPU',
    'MEMORY',
    'PODS',
    'ALLOC CPU',
    'ALLOC MEMORY',
    'ALLOC STORAGE',
    'ON-DEMAND $/H',
    'SPOT $/H',
    'ZONES',
    ...(wide ? ['EXTENDED'] : []),
  ];
  const base = new Set(['cpu', 'memory', 'pods', 'ephemeral-storage']);
  const body = rows.map((r) => [
    ...(withPool ? [r.nodePool ?? ''] : []),
    r.name,
    r.capacity.cpu,
    r.capacity.memory,
    r.capacity.pods,
    r.allocatable.cpu,
    r.allocatable.memory,
    r.allocatable['ephemeral-storage'],
    minPrice(r, 'on-demand'),
    minPrice(r, 'spot'),
    String(new Set(r.offerings.map((o) => o.zone)).size),
    ...(wide
      ? [
          Object.entries(r.capacity)
            .filter(([k]) => !base.has(k))
            .map(([k, v]) => `${k}=${v}`)
            .join(',') || '-',
        ]
      : []),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]))
      .join('  ')
      .trimEnd();
  return [line(header), ...body.map(line)].join('\n') + '\n';
}

/** Adds the command to the CLI (see the module doc for its contract). */
export function register(program: Command): void {
  program
    .command('instance-types')
    .description('list the instance types a NodePool admits, with capacity, allocatable and prices, cheapest first')
    .requiredOption('--region <region>', 'AWS region, e.g. us-east-1')
    .option('--nodepool <file>', 'NodePool YAML (EC2NodeClasses in the same file are used for root volume and kubelet settings)')
    .option('-o, --output <format>', 'json|yaml (one entry per type with capacity, allocatable and offerings), wide, or a table by default', 'table')
    .action((opts: { region: string; nodepool?: string; output: string }) => {
      const format = outputFormat(opts.output, ['table', 'wide', 'json', 'yaml']);
      checkRegion(opts.region);
      const { nodePools, nodeClasses } = opts.nodepool ? readNodePoolFile(readText(opts.nodepool)) : { nodePools: [], nodeClasses: [] };
      const rows = listInstanceTypes(opts.region, nodePools, nodeClasses);
      for (const [np, gap] of Object.entries(nodePoolPriceGaps(nodePools, nodeClasses))) {
        process.stderr.write(`nodepool ${np}: ${gap}: the prices shown are Linux/UNIX rates\n`);
      }
      process.stdout.write(format === 'json' || format === 'yaml' ? encode(rows, format) : formatTable(rows, format === 'wide'));
    });
}
