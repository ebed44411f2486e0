/**
 * `npm run parity -- --launch [--seed N] [--scenarios N] [--json] [--only I]`: what nodefleet sends
 * to EC2 against what Karpenter's AWS provider sends (issue 24). Each scenario
 * (./launch-scenario.ts) goes through nodefleet's launch path — the production node class
 * resolver over the account (shared/aws/account-file.ts lookups), the NodeClaim record
 * (shared/launch/claims.ts), the launch choice (shared/launch/launch.ts `chooseLaunch`) and the
 * request builders (shared/aws/ec2.ts `buildLaunchRequests`, shared/aws/user-data.ts) — and
 * through the launch oracle (test/oracle/launch). Both answers are normalised to what reaches
 * the instance, per (instance type, zone) override: subnet, image, and its launch template's user
 * data (parsed: AL2023 MIME parts, the NodeConfig YAML, the kubelet flags; Bottlerocket settings
 * TOML table by table), block devices, metadata
 * options, each network interface (EFA claims included), monitoring, instance profile, capacity reservation preference and tags;
 * and the fleet's capacity type, allocation strategy and tags. Every difference is either
 * documented (./launch-differences.ts, with its reason and a case) or counted as undocumented.
 *
 * Output: one line per undocumented difference (first 30), a summary, and with --json as the
 * last line `{"scenarios", "seed", "bothLaunched", "bothLaunchedByFamily", "differences": {"total", "undocumented", "documented", "byField"}}`
 * (byField: every difference, documented or not, by compared field).
 * Exit 0 when nothing is undocumented, 3 otherwise, 1 when the oracle fails, 2 when it cannot be built.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { parse as parseYaml } from 'yaml';
import { parse as parseToml } from 'smol-toml';
import type { Image } from '@aws-sdk/client-ec2';
import { EC2NodeClassSchema, type EC2NodeClass } from '../../shared/api/nodepool.ts';
import { parseNodePool } from '../../shared/api/validate.ts';
import { amiFamilyOfSpec, nodeClassRefusals } from '../../shared/api/nodeclass-support.ts';
import { Requirements } from '../../shared/api/requirements.ts';
import { accountLookups } from '../../shared/aws/account-file.ts';
import { Ec2NodeClassResolver } from '../../shared/aws/node-class-resolver.ts';
import { buildLaunchRequests, catalogArchitecture, type LaunchRequests } from '../../shared/aws/ec2.ts';
import { subnetCoverage, zoneAsCovered } from '../../shared/catalog/subnets.ts';
import { instanceTypeFromInfo, instanceTypeInfos, type InstanceType } from '../../shared/catalog/index.ts';
import { chooseLaunch } from '../../shared/launch/launch.ts';
import { newNodeClaimRecord } from '../../shared/launch/claims.ts';
import { AccountId, Cluster, InstanceProfile, launchScenario, toOracleInput, type LaunchScenario } from './launch-scenario.ts';
import { documentedLaunchDifference, type LaunchDifference } from './launch-differences.ts';

/** The launch oracle's clock (test/oracle/launch main.go): deprecation times are judged against it. */
const OracleNowMs = Date.parse('2026-01-01T00:00:00.000Z');

export const LaunchOracleDir = join(import.meta.dirname, '..', 'oracle', 'launch');
const LaunchOracleBin = join(LaunchOracleDir, 'bin', 'oracle');

/** Builds the launch oracle unless the binary is newer than its sources. @throws Error with the go command's output. */
export function buildLaunchOracle(log: (line: string) => void): string {
  const sources = readdirSync(LaunchOracleDir)
    .filter((f) => f.endsWith('.go') || f === 'go.mod' || f === 'go.sum')
    .map((f) => join(LaunchOracleDir, f));
  const newest = Math.max(...sources.map((f) => statSync(f).mtimeMs));
  if (existsSync(LaunchOracleBin) && statSync(LaunchOracleBin).mtimeMs >= newest) return LaunchOracleBin;
  log('building the launch oracle (go build, first time takes minutes)…');
  const r = spawnSync('go', ['build', '-o', LaunchOracleBin, '.'], {
    cwd: LaunchOracleDir,
    env: { ...process.env, GOTOOLCHAIN: process.env.GOTOOLCHAIN ?? 'auto', GOFLAGS: '-mod=readonly' },
    encoding: 'utf8',
  });
  if (r.error) throw new Error(`launch oracle: cannot run go: ${r.error.message}`);
  if (r.status !== 0) throw new Error(`launch oracle: go build failed:\n${r.stderr.trim()}`);
  return LaunchOracleBin;
}

type Json = Record<string, unknown>;
/** What the oracle prints per scenario. */
export interface LaunchOracleOutput {
  launchTemplates: { LaunchTemplateName: string; LaunchTemplateData: Json; TagSpecifications?: Json[] }[];
  createFleet?: Json;
  error?: string;
}

/** Runs the oracle once over all scenarios (`--lines`, one JSON per line each way). */
export function runLaunchOracle(bin: string, inputs: unknown[]): LaunchOracleOutput[] {
  const r = spawnSync(bin, ['--lines'], { input: inputs.map((i) => JSON.stringify(i)).join('\n') + '\n', encoding: 'utf8', maxBuffer: 1 << 30 });
  if (r.status !== 0) throw new Error(`launch oracle exited ${r.status}: ${r.stderr.trim().slice(-2000)}`);
  const lines = r.stdout.trim().split('\n');
  if (lines.length !== inputs.length) throw new Error(`launch oracle: ${lines.length} answers for ${inputs.length} scenarios`);
  return lines.map((l) => JSON.parse(l) as LaunchOracleOutput);
}

/** nodefleet's answer: the requests it would send, or why it launches nothing. */
export type NodefleetLaunch = { requests: LaunchRequests } | { refused: string[] } | { error: string };

/** nodefleet's launch path on one scenario (production code, account from the scenario). */
export async function nodefleetLaunch(s: LaunchScenario): Promise<NodefleetLaunch> {
  const parsed = EC2NodeClassSchema.safeParse(s.nodeClass);
  if (!parsed.success) return { refused: [`schema: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`] };
  const nodeClass: EC2NodeClass = parsed.data;
  const refusals = nodeClassRefusals(nodeClass.spec);
  if (refusals.length) return { refused: refusals };
  const lookups = accountLookups(
    {
      subnets: s.account.subnets,
      securityGroups: s.account.securityGroups,
      images: s.account.images as Image[],
      parameters: new Map(Object.entries(s.account.ssmParameters)),
      self: new Set([AccountId]),
    },
    { placeholderZones: [] },
  );
  try {
    const resolved = await new Ec2NodeClassResolver(lookups, Cluster.kubernetesVersion, () => OracleNowMs).resolve(nodeClass);
    const coverage = subnetCoverage(resolved.subnets);
    // The catalog's types for the class (labels, exotic, capacity) with the scenario's offerings, available where a subnet is.
    // (a type whose overhead exceeds its capacity has no available offering, as in the catalog).
    const types: InstanceType[] = s.instanceTypes.map((t) => {
      const catalogType = instanceTypeFromInfo(
        instanceTypeInfos.find((x) => x.name === t.name)!,
        { region: 'us-west-2', nodeClass, subnets: resolved.subnets },
      );
      return {
        ...catalogType,
        offerings: t.offerings.map((o) => ({
          zone: o.zone,
          capacityType: o.capacityType,
          priceUsdPerHour: o.price,
          available: zoneAsCovered(coverage, o.zone, undefined).covered && !catalogType.overcommitted,
        })),
      };
    });
    const nodePool = parseNodePool({
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodePool',
      metadata: { name: s.nodeClaim.nodePool },
      spec: { template: { spec: { nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: nodeClass.metadata.name }, requirements: [] } } },
    });
    const c = s.nodeClaim;
    const claim = newNodeClaimRecord(
      {
        nodePool: c.nodePool,
        requirements: c.requirements,
        taints: c.taints as never,
        startupTaints: c.startupTaints as never,
        labels: c.labels,
        requests: c.requests,
        pods: [],
      },
      { cluster: Cluster.name, nodePool, nodeClass, now: new Date(0), name: c.name },
    );
    const choice = chooseLaunch(types, Requirements.fromSpecs(claim.requirements), new Set());
    if (!choice) return { error: 'no available offering' };
    // As shared/launch/launch.ts launchClaim hands the choice to the CloudProvider.
    const launch = {
      instanceTypes: choice.instanceTypes,
      zones: choice.zones,
      capacityTypes: [choice.capacityType],
      offerings: choice.offerings,
      maxPods: choice.maxPods,
      efaCount: choice.efaCount,
    };
    const requests = buildLaunchRequests(claim, launch, nodeClass, resolved, {
      cluster: {
        name: Cluster.name,
        endpoint: Cluster.endpoint,
        certificateAuthority: Cluster.caBundle,
        serviceCidr: Cluster.serviceCidr,
        kubernetesVersion: Cluster.kubernetesVersion,
      },
      instanceProfileName: InstanceProfile,
      nodeRoleName: 'parity-node-role',
      architectureOf: catalogArchitecture,
    });
    return { requests };
  } catch (err) {
    if (process.env.NODEFLEET_PARITY_DEBUG) console.error(err);
    return { error: (err as Error).message };
  }
}

// ---------------------------------------------------------------------------------------------
// Normalisation: both answers as what reaches each (instance type, zone).

interface UserDataView {
  /** The class's own parts (content type + body; NodeConfig bodies parsed). */
  userParts: unknown[];
  cluster: unknown;
  kubeletConfig: Json;
  labels: Record<string, string>;
  taints: string[];
  otherFlags: string[];
  instance: unknown;
  problem?: string;
}

interface TemplateView {
  userData: UserDataView;
  blockDevices: unknown;
  metadataOptions: unknown;
  network: unknown;
  monitoring: boolean;
  instanceProfile: unknown;
  capacityReservation: string;
  enclave: boolean;
  tenancy: string;
  tags: Record<string, Record<string, string>>;
}

interface LaunchView {
  capacityType?: string;
  allocationStrategy?: string;
  context?: string;
  overrides: Map<string, { subnet?: string; image?: string; template?: TemplateView }>;
  fleetTags: Record<string, Record<string, string>>;
}

/** MIME multi-part → parts (independent of nodefleet's own parser). */
function mimeParts(text: string): { type: string; body: string }[] | undefined {
  const m = /boundary="?([^"\r\n;]+)"?/i.exec(text);
  if (!/^MIME-Version:/im.test(text) || !m) return undefined;
  const sep = `--${m[1]}`;
  const chunks = text.split(sep).slice(1);
  const out: { type: string; body: string }[] = [];
  for (const ch of chunks) {
    if (ch.startsWith('--')) break;
    const c = ch.replace(/^\r?\n/, '');
    const split = c.search(/\r?\n\r?\n/);
    const head = split < 0 ? c : c.slice(0, split);
    const body = split < 0 ? '' : c.slice(split).replace(/^\r?\n\r?\n/, '');
    const type = /^Content-Type:\s*([^\r\n]+)/im.exec(head)?.[1]?.trim() ?? '';
    out.push({ type, body: body.trim() });
  }
  return out;
}

/** Drops null / undefined values (the Go SDK prints every field). */
const compact = (o: unknown): unknown =>
  Array.isArray(o)
    ? o.map(compact)
    : o && typeof o === 'object'
      ? Object.fromEntries(
          Object.entries(o as Json)
            .filter(([, v]) => v !== null && v !== undefined && v !== '')
            .map(([k, v]) => [k, compact(v)])
            .sort(([a], [b]) => String(a).localeCompare(String(b))),
        )
      : o;
const stripQuotes = (v: string) => v.replace(/^"(.*)"$/, '$1');
const sortObj = (o: unknown): unknown =>
  Array.isArray(o)
    ? o.map(sortObj)
    : o && typeof o === 'object'
      ? Object.fromEntries(
          Object.entries(o as Json)
            .sort(([a], [b]) => a.localeCompare(b))
            .map(([k, v]) => [k, sortObj(v)]),
        )
      : o;

/**
 * Bottlerocket settings TOML, parsed: the cluster (name, API server, CA, DNS IP), the other
 * `settings.kubernetes` keys as the kubelet block, node labels, node taints as `key=value:Effect`,
 * and every other `settings` table (bootstrap commands included) as the class's own part.
 */
function bottlerocketView(text: string): UserDataView {
  const empty: UserDataView = { userParts: [], cluster: undefined, kubeletConfig: {}, labels: {}, taints: [], otherFlags: [], instance: {} };
  let doc: Json;
  try {
    doc = parseToml(text) as Json;
  } catch (err) {
    return { ...empty, problem: `not TOML: ${(err as Error).message.split('\n')[0]}` };
  }
  const { settings = {}, ...top } = doc as { settings?: Json };
  const { kubernetes = {}, ...other } = settings as { kubernetes?: Json };
  const k: Json = { ...kubernetes };
  const take = (key: string) => {
    const v = k[key];
    delete k[key];
    return v;
  };
  const cluster = { name: take('cluster-name'), apiServer: take('api-server'), certificate: take('cluster-certificate'), dnsIp: take('cluster-dns-ip') };
  const labels = (take('node-labels') as Record<string, string> | undefined) ?? {};
  const taints: string[] = [];
  for (const [key, values] of Object.entries((take('node-taints') as Record<string, string[]> | undefined) ?? {})) {
    for (const v of values) {
      const i = v.lastIndexOf(':');
      taints.push(`${key}${v.slice(0, i) ? `=${v.slice(0, i)}` : ''}:${v.slice(i + 1)}`);
    }
  }
  return {
    ...empty,
    userParts:
      Object.keys(other).length || Object.keys(top).length
        ? [{ type: 'settings', settings: sortObj(other), ...(Object.keys(top).length ? { top: sortObj(top) } : {}) }]
        : [],
    cluster: sortObj(compact(cluster)),
    kubeletConfig: sortObj(k) as Json,
    labels: sortObj(labels) as Record<string, string>,
    taints: taints.sort(),
  };
}

/**
 * Windows PowerShell user data, parsed: the class's own lines before the bootstrap call, the
 * call's cluster parameters, and its -KubeletExtraArgs flags (labels, taints, each other flag with
 * its comma-separated entries sorted).
 */
function windowsView(text: string): UserDataView {
  const empty: UserDataView = { userParts: [], cluster: undefined, kubeletConfig: {}, labels: {}, taints: [], otherFlags: [], instance: {} };
  const lines = text.replace(/\r\n/g, '\n').split('\n');
  if (lines[0] !== '<powershell>' || lines[lines.length - 1] !== '</powershell>')
    return { ...empty, problem: `not a <powershell> block: ${text.slice(0, 60)}` };
  const at = lines.findIndex((l) => l.startsWith('[string]$EKSBootstrapScriptFile'));
  const call = lines[at + 1] ?? '';
  if (at < 0 || !call.startsWith('& $EKSBootstrapScriptFile')) return { ...empty, problem: 'no EKS bootstrap call' };
  const params = Object.fromEntries([...call.matchAll(/ -(\w+) '([^']*)'/g)].map((m) => [m[1], m[2]]));
  const config: Json = {};
  const labels: Record<string, string> = {};
  const taints: string[] = [];
  for (const flag of (params.KubeletExtraArgs ?? '').split(/ (?=--)/).filter(Boolean)) {
    const [name, ...rest] = flag.split('=');
    const value = stripQuotes(rest.join('='));
    if (name === '--node-labels') for (const kv of value.split(',').filter(Boolean)) labels[kv.split('=')[0]] = kv.split('=').slice(1).join('=');
    else if (name === '--register-with-taints') taints.push(...value.split(',').filter(Boolean));
    else config[name] = value.split(',').sort().join(',');
  }
  const userLines = lines.slice(1, at).join('\n').trim();
  return {
    ...empty,
    userParts: userLines ? [{ type: 'powershell', body: userLines }] : [],
    cluster: sortObj({
      name: params.EKSClusterName,
      endpoint: params.APIServerEndpoint,
      ca: params.Base64ClusterCA,
      dnsIp: params.DNSClusterIP,
      script: lines[at],
    }),
    kubeletConfig: sortObj(config) as Json,
    labels: sortObj(labels) as Record<string, string>,
    taints: taints.sort(),
  };
}

function userDataView(b64: unknown): UserDataView {
  const text = Buffer.from(String(b64 ?? ''), 'base64').toString('utf8');
  if (text.startsWith('<powershell>')) return windowsView(text);
  if (!/^MIME-Version:/im.test(text)) return bottlerocketView(text);
  const parts = mimeParts(text);
  const empty: UserDataView = { userParts: [], cluster: undefined, kubeletConfig: {}, labels: {}, taints: [], otherFlags: [], instance: undefined };
  if (!parts || parts.length === 0) return { ...empty, problem: `not MIME multi-part: ${text.slice(0, 60)}` };
  const own = parts[parts.length - 1];
  const userParts = parts
    .slice(0, -1)
    .map((p) =>
      p.type.startsWith('application/node.eks.aws') ? { type: 'NodeConfig', config: sortObj(parseYaml(p.body)) } : { type: p.type.split(';')[0], body: p.body },
    );
  if (!own.type.startsWith('application/node.eks.aws'))
    return { ...empty, userParts, problem: `last part is ${own.type}, not nodefleet's / Karpenter's NodeConfig` };
  const doc = parseYaml(own.body) as { spec?: { cluster?: unknown; kubelet?: { config?: Json; flags?: string[] }; instance?: unknown } };
  const config: Json = { ...(doc.spec?.kubelet?.config ?? {}) };
  const taints: string[] = [];
  for (const t of (config.registerWithTaints as { key: string; value?: string; effect: string }[] | undefined) ?? [])
    taints.push(`${t.key}${t.value ? `=${t.value}` : ''}:${t.effect}`);
  delete config.registerWithTaints;
  // nodeadm's default cluster DNS is the .10 address of the service CIDR: absent = that.
  if (config.clusterDNS === undefined) config.clusterDNS = [Cluster.kubeDnsIp];
  // An empty map merges as nothing into the kubelet configuration: the same as leaving it out.
  for (const [k, v] of Object.entries(config)) if (v && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0) delete config[k];
  const labels: Record<string, string> = {};
  const otherFlags: string[] = [];
  for (const f of doc.spec?.kubelet?.flags ?? []) {
    const [name, ...rest] = f.split('=');
    const value = stripQuotes(rest.join('='));
    if (name === '--node-labels') for (const kv of value.split(',').filter(Boolean)) labels[kv.split('=')[0]] = kv.split('=').slice(1).join('=');
    else if (name === '--register-with-taints') taints.push(...value.split(',').filter(Boolean));
    else otherFlags.push(f);
  }
  const instance = sortObj(doc.spec?.instance ?? {}) as Json;
  const localStorage = (instance.localStorage ?? {}) as Json;
  return {
    userParts,
    cluster: sortObj(doc.spec?.cluster),
    kubeletConfig: sortObj(config) as Json,
    labels: sortObj(labels) as Record<string, string>,
    taints: taints.sort(),
    otherFlags: otherFlags.sort(),
    instance: Object.keys(localStorage).length ? { localStorage } : {},
  };
}

const tagMap = (tags: unknown): Record<string, string> =>
  Object.fromEntries(((tags as { Key: string; Value: string }[] | undefined) ?? []).map((t) => [t.Key, t.Value]).sort(([a], [b]) => a.localeCompare(b)));
const tagsByType = (specs: unknown): Record<string, Record<string, string>> =>
  Object.fromEntries(((specs as { ResourceType: string; Tags: unknown }[] | undefined) ?? []).map((s) => [s.ResourceType, tagMap(s.Tags)]));

function templateView(lt: { LaunchTemplateData: Json; TagSpecifications?: unknown }): TemplateView {
  const d = lt.LaunchTemplateData;
  const nis = (d.NetworkInterfaces as Json[] | undefined) ?? [];
  const meta = (compact(d.MetadataOptions) ?? {}) as Json;
  return {
    userData: userDataView(d.UserData),
    blockDevices: compact(d.BlockDeviceMappings ?? []),
    // EC2's defaults for what one side leaves out: instance metadata tags disabled.
    metadataOptions: { InstanceMetadataTags: 'disabled', ...meta },
    // Each interface the instance gets (none listed: the primary, with the template's security groups).
    network: (nis.length ? nis : [{ Groups: d.SecurityGroupIds }]).map((n) => ({
      card: n.NetworkCardIndex ?? 0,
      device: n.DeviceIndex ?? 0,
      type: n.InterfaceType ?? 'interface',
      groups: [...((n.Groups as string[] | undefined) ?? [])].sort(),
      ...(n.AssociatePublicIpAddress !== undefined && n.AssociatePublicIpAddress !== null ? { associatePublicIpAddress: n.AssociatePublicIpAddress } : {}),
    })),
    monitoring: !!(d.Monitoring as Json | undefined)?.Enabled,
    instanceProfile: compact(d.IamInstanceProfile),
    capacityReservation: String(((d.CapacityReservationSpecification as Json | undefined)?.CapacityReservationPreference as string | undefined) ?? 'open'),
    enclave: !!(d.EnclaveOptions as Json | undefined)?.Enabled,
    tenancy: String(((d.Placement as Json | undefined)?.Tenancy as string | undefined) ?? 'default'),
    tags: { ...tagsByType(d.TagSpecifications), 'launch-template': tagsByType(lt.TagSpecifications)['launch-template'] ?? {} },
  };
}

function launchView(fleet: Json, templates: { LaunchTemplateName: string; LaunchTemplateData: Json; TagSpecifications?: unknown }[]): LaunchView {
  const byName = new Map(templates.map((t) => [t.LaunchTemplateName, t]));
  const overrides: LaunchView['overrides'] = new Map();
  for (const cfg of (fleet.LaunchTemplateConfigs as Json[] | undefined) ?? []) {
    const lt = byName.get(String((cfg.LaunchTemplateSpecification as Json).LaunchTemplateName));
    const view = lt ? templateView(lt) : undefined;
    for (const o of (cfg.Overrides as Json[] | undefined) ?? []) {
      overrides.set(`${o.InstanceType}/${o.AvailabilityZone}`, {
        subnet: o.SubnetId as string | undefined,
        image: (o.ImageId ?? lt?.LaunchTemplateData.ImageId) as string | undefined,
        template: view,
      });
    }
  }
  const tcs = fleet.TargetCapacitySpecification as Json | undefined;
  const ct = tcs?.DefaultTargetCapacityType as string | undefined;
  const strategy =
    ct === 'spot' ? (fleet.SpotOptions as Json | undefined)?.AllocationStrategy : (fleet.OnDemandOptions as Json | undefined)?.AllocationStrategy;
  return {
    capacityType: ct,
    allocationStrategy: strategy as string | undefined,
    context: (fleet.Context ?? undefined) as string | undefined,
    overrides,
    fleetTags: tagsByType(fleet.TagSpecifications),
  };
}

const same = (a: unknown, b: unknown) => JSON.stringify(sortObj(a)) === JSON.stringify(sortObj(b));
const show = (x: unknown) => (x === undefined ? '-' : JSON.stringify(x));

/** Compares one scenario's answers field by field (each difference once per scenario). */
export function compareLaunch(nf: NodefleetLaunch, k: LaunchOracleOutput): LaunchDifference[] {
  const out: LaunchDifference[] = [];
  const seen = new Set<string>();
  const add = (field: string, nodefleet: unknown, karpenter: unknown, key = '') => {
    const id = `${field}|${key}|${show(nodefleet)}|${show(karpenter)}`;
    if (seen.has(id)) return;
    seen.add(id);
    out.push({ field, key, nodefleet, karpenter });
  };
  const kLaunched = !!k.createFleet && !k.error;
  if (!('requests' in nf)) {
    if (kLaunched) add('refused' in nf ? 'outcome.refused' : 'outcome.error', 'refused' in nf ? nf.refused : nf.error, 'launched');
    return out;
  }
  if (!kLaunched) {
    add('outcome.launched', 'launched', k.error ?? 'no CreateFleet');
    return out;
  }
  const a = launchView(nf.requests.createFleet as unknown as Json, nf.requests.launchTemplates as never);
  const b = launchView(k.createFleet!, k.launchTemplates);
  if (a.capacityType !== b.capacityType) add('fleet.capacityType', a.capacityType, b.capacityType);
  if (a.allocationStrategy !== b.allocationStrategy) add('fleet.allocationStrategy', a.allocationStrategy, b.allocationStrategy);
  if (a.context !== b.context) add('fleet.context', a.context, b.context);
  for (const rt of new Set([...Object.keys(a.fleetTags), ...Object.keys(b.fleetTags)]))
    tagDiffs(`fleet.tags.${rt}`, a.fleetTags[rt] ?? {}, b.fleetTags[rt] ?? {}, add);
  const onlyA = [...a.overrides.keys()].filter((x) => !b.overrides.has(x)).sort();
  const onlyB = [...b.overrides.keys()].filter((x) => !a.overrides.has(x)).sort();
  if (onlyA.length || onlyB.length) add('fleet.overrides', onlyA, onlyB);
  for (const [key, x] of a.overrides) {
    const y = b.overrides.get(key);
    if (!y) continue;
    if (x.subnet !== y.subnet) add('override.subnet', x.subnet, y.subnet, key);
    if (x.image !== y.image) add('override.image', x.image, y.image, key);
    if (!x.template || !y.template) continue;
    const t = x.template;
    const u = y.template;
    for (const f of ['blockDevices', 'metadataOptions', 'network', 'monitoring', 'instanceProfile', 'capacityReservation', 'enclave', 'tenancy'] as const)
      if (!same(t[f], u[f])) add(`template.${f}`, t[f], u[f]);
    for (const rt of new Set([...Object.keys(t.tags), ...Object.keys(u.tags)])) tagDiffs(`template.tags.${rt}`, t.tags[rt] ?? {}, u.tags[rt] ?? {}, add);
    const p = t.userData;
    const q = u.userData;
    if (p.problem || q.problem) add('userData.format', p.problem, q.problem);
    for (const f of ['userParts', 'cluster', 'taints', 'otherFlags', 'instance'] as const) if (!same(p[f], q[f])) add(`userData.${f}`, p[f], q[f]);
    for (const kk of new Set([...Object.keys(p.kubeletConfig), ...Object.keys(q.kubeletConfig)]))
      if (!same(p.kubeletConfig[kk], q.kubeletConfig[kk])) add(`userData.kubelet.${kk}`, p.kubeletConfig[kk], q.kubeletConfig[kk]);
    for (const kk of new Set([...Object.keys(p.labels), ...Object.keys(q.labels)]))
      if (p.labels[kk] !== q.labels[kk]) add('userData.nodeLabels', p.labels[kk], q.labels[kk], kk);
  }
  return out;
}

function tagDiffs(field: string, a: Record<string, string>, b: Record<string, string>, add: (field: string, n: unknown, k: unknown, key?: string) => void) {
  for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) if (a[key] !== b[key]) add(field, a[key], b[key], key);
}

/** Runs the launch parity (main.ts `--launch`). Returns the exit code. */
export async function runLaunchParity(
  opts: { seed: number; scenarios: number; json: boolean; only?: number; verbose?: boolean },
  log: (line: string) => void,
): Promise<number> {
  const started = Date.now();
  let bin: string;
  try {
    bin = buildLaunchOracle(log);
  } catch (e) {
    process.stderr.write(`parity: ${(e as Error).message}\n`);
    return 2;
  }
  const scenarios: LaunchScenario[] = [];
  fc.assert(
    fc.property(launchScenario, (s) => void scenarios.push(s)),
    { seed: opts.seed, numRuns: opts.scenarios },
  );
  const chosen = opts.only !== undefined ? [scenarios[opts.only]] : scenarios;
  let oracle: LaunchOracleOutput[];
  try {
    oracle = runLaunchOracle(bin, chosen.map(toOracleInput));
  } catch (e) {
    log(`oracle error: ${(e as Error).message}`);
    return 1;
  }
  const byField: Record<string, number> = {};
  let total = 0;
  let documented = 0;
  let bothLaunched = 0;
  const launchedByFamily: Record<string, number> = {};
  const failing: string[] = [];
  for (let i = 0; i < chosen.length; i++) {
    const s = chosen[i];
    const nf = await nodefleetLaunch(s);
    const diffs = compareLaunch(nf, oracle[i]);
    if ('requests' in nf && oracle[i].createFleet && !oracle[i].error) {
      bothLaunched++;
      const family = amiFamilyOfSpec(s.nodeClass.spec);
      launchedByFamily[family] = (launchedByFamily[family] ?? 0) + 1;
    }
    const index = opts.only ?? i;
    if (opts.only !== undefined) {
      log(`scenario: ${JSON.stringify(toOracleInput(s))}`);
      log(
        `nodefleet: ${JSON.stringify('requests' in nf ? { ...nf.requests, launchTemplates: nf.requests.launchTemplates.map((t) => ({ ...t, userData: Buffer.from(String(t.LaunchTemplateData?.UserData ?? ''), 'base64').toString() })) } : nf)}`,
      );
      log(
        `karpenter: ${JSON.stringify({ ...oracle[i], launchTemplates: oracle[i].launchTemplates.map((t) => ({ ...t, userData: Buffer.from(String(t.LaunchTemplateData.UserData ?? ''), 'base64').toString() })) })}`,
      );
    }
    for (const d of diffs) {
      total++;
      byField[d.field] = (byField[d.field] ?? 0) + 1;
      const reason = documentedLaunchDifference(d, s, nf);
      if (reason) {
        documented++;
        if (opts.only !== undefined) log(`documented ${d.field}${d.key ? ` [${d.key}]` : ''}: ${reason}`);
        continue;
      }
      failing.push(
        `difference ${d.field}${d.key ? ` [${d.key}]` : ''} (seed ${opts.seed}, scenario ${index}): nodefleet ${show(d.nodefleet)}, karpenter ${show(d.karpenter)}`,
      );
    }
  }
  for (const f of failing.slice(0, opts.verbose ? failing.length : 30)) log(f);
  if (!opts.verbose && failing.length > 30) log(`… ${failing.length - 30} more`);
  const summary = {
    scenarios: chosen.length,
    seed: opts.seed,
    bothLaunched,
    bothLaunchedByFamily: launchedByFamily,
    differences: {
      total,
      undocumented: failing.length,
      documented,
      byField: Object.fromEntries(Object.entries(byField).sort(([a], [b]) => a.localeCompare(b))),
    },
  };
  log(
    `${chosen.length} launch scenarios (seed ${opts.seed}, ${bothLaunched} launched by both and compared field by field: ${Object.entries(launchedByFamily)
      .map(([f, n]) => `${f} ${n}`)
      .join(', ')}): ${failing.length} undocumented difference(s), ${documented} documented; ${Math.round((Date.now() - started) / 100) / 10} s`,
  );
  if (opts.json) log(JSON.stringify(summary));
  return failing.length > 0 ? 3 : 0;
}
