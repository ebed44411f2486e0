/**
 * Karpenter v1.15's settings and feature gates (its operator options, core and AWS provider),
 * under Karpenter's names and defaults: the one home for what nodefleet reads, honours or refuses.
 *
 * The CDK stack takes them as context under these names and passes the ones a function reads as
 * that function's environment variables (same names); the functions parse them with
 * {@link parseSettings} at cold start; scenario cases give them in camelCase under `settings`
 * ({@link settingsFromCase}). A value nodefleet cannot honour is refused with one line naming
 * the setting. docs/settings.md is the table.
 */
import { NodefleetError } from './errors.ts';
import { parseGoDurationMs } from './duration.ts';

/** A bad or unsupported setting; the message is one line naming it. */
export class SettingsError extends NodefleetError {
  constructor(
    readonly setting: string,
    reason: string,
  ) {
    super(`setting ${setting}: ${reason}`);
  }
}

/** Karpenter's feature gates (core `FEATURE_GATES`) with their v1.15 defaults. */
export const FeatureGateDefaults = {
  NodeRepair: false,
  ReservedCapacity: true,
  SpotToSpotConsolidation: false,
  NodeOverlay: false,
  StaticCapacity: false,
  CapacityBuffer: false,
  TerminateFirstDrift: false,
  TerminateFirstRepair: false,
  PodDeletionCostManagement: false,
} as const;
export type FeatureGateName = keyof typeof FeatureGateDefaults;
export type FeatureGates = Record<FeatureGateName, boolean>;

/** The AWS provider's feature gates (`AWS_FEATURE_GATES`) with their v1.15 defaults. */
export const AwsFeatureGateDefaults = { NodeClassCEL: false, DRANVIDIAGPU: false, DRAEFA: false, RebootForRepair: false } as const;
export type AwsFeatureGateName = keyof typeof AwsFeatureGateDefaults;

/** Gate values nodefleet does not implement: setting one is refused (docs/settings.md). */
const UnsupportedGateValues: Partial<Record<FeatureGateName | AwsFeatureGateName, boolean>> = {
  NodeOverlay: true,
  CapacityBuffer: true,
  TerminateFirstDrift: true,
  TerminateFirstRepair: true,
  PodDeletionCostManagement: true,
  NodeClassCEL: true,
  DRANVIDIAGPU: true,
  DRAEFA: true,
  RebootForRepair: true,
};

/** How nodefleet treats each gate (docs/settings.md). */
export const FeatureGateSupport: Readonly<Record<FeatureGateName | AwsFeatureGateName, string>> = {
  NodeRepair: "gc (node repair: shared/disruption/repair.ts, as Karpenter's node.health controller)",
  ReservedCapacity: 'provisioner, disruption (reserved offerings of capacityReservationSelectorTerms; false: none offered or launched into)',
  SpotToSpotConsolidation: 'disruption (single- and multi-node consolidation, command validation)',
  NodeOverlay: 'true refused: NodeOverlay is not applied',
  StaticCapacity:
    'disruption loop (static NodePools kept at spec.replicas: shared/disruption/static-capacity.ts); off: a NodePool with spec.replicas is refused (validate --feature-gates, and at runtime)',
  CapacityBuffer: 'true refused',
  TerminateFirstDrift: 'true refused: replacements always launch first',
  TerminateFirstRepair: 'true refused',
  PodDeletionCostManagement: 'true refused',
  NodeClassCEL: 'true refused',
  DRANVIDIAGPU: 'true refused',
  DRAEFA: 'true refused',
  RebootForRepair: 'true refused',
};

export type MinValuesPolicy = 'Strict' | 'BestEffort';
export type PreferencePolicy = 'Respect' | 'Ignore';

/** The settings nodefleet reads, parsed (Karpenter's option names in camelCase). */
export interface Settings {
  /** BATCH_MAX_DURATION in ms: the agent's longest pending-pod batch. */
  batchMaxDuration: number;
  /** BATCH_IDLE_DURATION in ms: the agent closes a batch after this long without a new pod. */
  batchIdleDuration: number;
  preferencePolicy: PreferencePolicy;
  minValuesPolicy: MinValuesPolicy;
  featureGates: FeatureGates;
  /** VM_MEMORY_OVERHEAD_PERCENT (a fraction, 0.075 = 7.5 %). */
  vmMemoryOverheadPercent: number;
  reservedENIs: number;
  /** CLUSTER_ENDPOINT: the API server URL new nodes join (default: EKS DescribeCluster's). */
  clusterEndpoint?: string;
  /** CLUSTER_CA_BUNDLE: the CA new nodes trust (default: EKS DescribeCluster's). */
  clusterCABundle?: string;
  /** ISOLATED_VPC: no Pricing API calls (on-demand prices stay the shipped ones). */
  isolatedVPC: boolean;
}

type Parsed = { value: unknown } | { problem: string };

/** How nodefleet treats one Karpenter setting. */
export interface SettingDef {
  /** Karpenter's name (environment variable; also the CDK context key). */
  name: string;
  /** Karpenter's default, as text. */
  default: string;
  /** nodefleet's name for it: the CDK context key, or a note when it differs from `name`. */
  nodefleet: string;
  /** Where nodefleet reads it, or why it has no effect. */
  readBy: string;
  /** The parsed field, for the settings nodefleet reads. */
  field?: keyof Settings;
  /** Parses and checks a value; absent: any explicit value is refused with `refuse`. */
  parse?: (raw: string) => Parsed;
  /** Why an explicit value is refused (settings nodefleet has no equivalent for). */
  refuse?: string;
}

const ok = (value: unknown): Parsed => ({ value });
const bad = (problem: string): Parsed => ({ problem });

function duration(raw: string): Parsed {
  const ms = parseGoDurationMs(raw);
  if (ms === undefined) return bad(`"${raw}" is not a duration such as 1s, 500ms or 10s`);
  if (ms <= 0) return bad('must be positive');
  return ok(ms);
}
function oneOf<T extends string>(values: readonly T[]) {
  return (raw: string): Parsed => ((values as readonly string[]).includes(raw) ? ok(raw) : bad(`must be one of ${values.join(', ')}, got "${raw}"`));
}
function boolValue(raw: string): boolean | undefined {
  return raw === 'true' ? true : raw === 'false' ? false : undefined;
}
/** A boolean setting of which only `honoured` has nodefleet's behaviour. */
/** A boolean; only `honoured` is accepted when given (undefined: either). */
function onlyBool(honoured: boolean | undefined, why: string) {
  return (raw: string): Parsed => {
    const b = boolValue(raw);
    if (b === undefined) return bad(`must be true or false, got "${raw}"`);
    return honoured === undefined || b === honoured ? ok(b) : bad(`${raw} is not supported: ${why}`);
  };
}
function gates<T extends Record<string, boolean>>(defaults: T) {
  return (raw: string): Parsed => {
    const out: Record<string, boolean> = { ...defaults };
    for (const part of raw
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)) {
      const eq = part.indexOf('=');
      const name = eq < 0 ? part : part.slice(0, eq);
      const value =
        eq < 0
          ? undefined
          : boolValue(
              part
                .slice(eq + 1)
                .trim()
                .toLowerCase(),
            );
      if (!(name in defaults)) return bad(`unknown feature gate "${name}" (known: ${Object.keys(defaults).join(', ')})`);
      if (value === undefined) return bad(`feature gate ${name} needs =true or =false`);
      if (UnsupportedGateValues[name as FeatureGateName] === value) return bad(`${name}=${value} is not supported`);
      out[name] = value;
    }
    return ok(out);
  };
}
function fraction(raw: string): Parsed {
  const n = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(n)) return bad(`"${raw}" is not a number`);
  if (n < 0) return bad('cannot be negative');
  if (n >= 1) return bad('must be below 1 (a fraction: 0.075 = 7.5 %)');
  return ok(n);
}
function count(raw: string): Parsed {
  if (!/^[0-9]+$/.test(raw)) return bad(`must be a whole number ≥ 0, got "${raw}"`);
  return ok(Number(raw));
}
function url(raw: string): Parsed {
  try {
    const u = new URL(raw);
    if (u.hostname) return ok(raw);
  } catch {
    // falls through
  }
  return bad(`"${raw}" is not an absolute URL with a host`);
}
function minute(raw: string): Parsed {
  const ms = parseGoDurationMs(raw);
  if (ms === undefined) return bad(`"${raw}" is not a duration`);
  return ms === 60_000 ? ok(ms) : bad(`${raw} is not supported: subnets, security groups and AMIs are re-resolved every 1m`);
}

const NoProcess = 'not supported: nodefleet runs no controller process (Lambda functions and an agent)';

/** Every Karpenter v1.15 setting (core, then AWS provider), in the order its options declare them. */
export const SettingDefs: readonly SettingDef[] = [
  { name: 'KARPENTER_SERVICE', default: '', nodefleet: '—', readBy: 'no webhook', refuse: NoProcess },
  { name: 'METRICS_PORT', default: '8080', nodefleet: '—', readBy: 'metrics go to CloudWatch', refuse: NoProcess },
  { name: 'HEALTH_PROBE_PORT', default: '8081', nodefleet: '—', readBy: "the agent's is NODEFLEET_AGENT_HEALTH_PORT", refuse: NoProcess },
  { name: 'KUBE_CLIENT_QPS', default: '200', nodefleet: '—', readBy: '—', refuse: NoProcess },
  { name: 'KUBE_CLIENT_BURST', default: '300', nodefleet: '—', readBy: '—', refuse: NoProcess },
  { name: 'ENABLE_PROFILING', default: 'false', nodefleet: '—', readBy: '—', refuse: NoProcess },
  { name: 'DISABLE_CONTROLLER_WARMUP', default: 'true', nodefleet: '—', readBy: '—', refuse: NoProcess },
  { name: 'DISABLE_LEADER_ELECTION', default: 'false', nodefleet: '—', readBy: 'serialised by reserved concurrency 1', refuse: NoProcess },
  { name: 'DISABLE_CLUSTER_STATE_OBSERVABILITY', default: 'false', nodefleet: '—', readBy: '—', refuse: NoProcess },
  { name: 'LEADER_ELECTION_NAME', default: 'karpenter-leader-election', nodefleet: '—', readBy: '—', refuse: NoProcess },
  { name: 'LEADER_ELECTION_NAMESPACE', default: '', nodefleet: '—', readBy: '—', refuse: NoProcess },
  { name: 'MEMORY_LIMIT', default: '-1', nodefleet: '—', readBy: 'Lambda memory is set by the stack', refuse: NoProcess },
  { name: 'CPU_REQUESTS', default: '1000', nodefleet: '—', readBy: '—', refuse: NoProcess },
  {
    name: 'LOG_LEVEL',
    default: 'info',
    nodefleet: 'context logLevel (POWERTOOLS_LOG_LEVEL)',
    readBy: 'every function',
    refuse: 'not supported under this name: set context logLevel',
  },
  { name: 'LOG_OUTPUT_PATHS', default: 'stdout', nodefleet: '—', readBy: 'CloudWatch Logs', refuse: NoProcess },
  { name: 'LOG_ERROR_OUTPUT_PATHS', default: 'stderr', nodefleet: '—', readBy: 'CloudWatch Logs', refuse: NoProcess },
  {
    name: 'BATCH_MAX_DURATION',
    default: '10s',
    nodefleet: 'same',
    readBy: 'agent (stack output AgentSettings → infra/k8s/agent.env)',
    field: 'batchMaxDuration',
    parse: duration,
  },
  {
    name: 'BATCH_IDLE_DURATION',
    default: '1s',
    nodefleet: 'same',
    readBy: 'agent (stack output AgentSettings → infra/k8s/agent.env)',
    field: 'batchIdleDuration',
    parse: duration,
  },
  {
    name: 'PREFERENCE_POLICY',
    default: 'Respect',
    nodefleet: 'same',
    readBy: 'provisioner, disruption (scheduling simulation)',
    field: 'preferencePolicy',
    parse: oneOf(['Respect', 'Ignore'] as const),
  },
  {
    name: 'MIN_VALUES_POLICY',
    default: 'Strict',
    nodefleet: 'same',
    readBy: 'provisioner, disruption (scheduling simulation)',
    field: 'minValuesPolicy',
    parse: oneOf(['Strict', 'BestEffort'] as const),
  },
  {
    name: 'IGNORE_DRA_REQUESTS',
    default: 'true',
    nodefleet: 'same',
    readBy: 'provisioner, disruption (DRA claims are not simulated)',
    parse: onlyBool(true, 'nodefleet does not simulate DRA requests'),
  },
  {
    name: 'LEGACY_NODE_REPAIR',
    default: 'false',
    nodefleet: 'same',
    readBy: 'accepted either way: node repair is always the node.health controller (the one this selects)',
    parse: onlyBool(undefined, ''),
  },
  {
    name: 'FEATURE_GATES',
    default: Object.entries(FeatureGateDefaults)
      .map(([k, v]) => `${k}=${v}`)
      .join(','),
    nodefleet: 'same',
    readBy: 'provisioner, disruption (SpotToSpotConsolidation, StaticCapacity), gc (NodeRepair)',
    field: 'featureGates',
    parse: gates(FeatureGateDefaults),
  },
  { name: 'SCHEDULER_CONFIG', default: '', nodefleet: '—', readBy: '—', refuse: 'not supported: nodefleet applies no default topology spread constraints' },
  {
    name: 'CLUSTER_CA_BUNDLE',
    default: '',
    nodefleet: 'same',
    readBy: 'provisioner, disruption (node user data)',
    field: 'clusterCABundle',
    parse: (raw) => (raw.trim() ? ok(raw.trim()) : bad('is empty')),
  },
  {
    name: 'CLUSTER_NAME',
    default: '',
    nodefleet: 'context clusterName (NODEFLEET_CLUSTER_NAME)',
    readBy: 'every function',
    refuse: 'not supported under this name: set context clusterName',
  },
  { name: 'CLUSTER_ENDPOINT', default: '', nodefleet: 'same', readBy: 'provisioner, disruption (node user data)', field: 'clusterEndpoint', parse: url },
  {
    name: 'ISOLATED_VPC',
    default: 'false',
    nodefleet: 'same',
    readBy: 'provisioner, disruption (no Pricing API calls)',
    field: 'isolatedVPC',
    parse: (raw) => (boolValue(raw) === undefined ? bad(`must be true or false, got "${raw}"`) : ok(boolValue(raw))),
  },
  {
    name: 'EKS_CONTROL_PLANE',
    default: 'false',
    nodefleet: 'same',
    readBy: 'cluster details always come from EKS DescribeCluster',
    parse: onlyBool(true, 'nodefleet always reads the cluster from EKS DescribeCluster'),
  },
  {
    name: 'VM_MEMORY_OVERHEAD_PERCENT',
    default: '0.075',
    nodefleet: 'same',
    readBy: 'provisioner, disruption (catalog allocatable)',
    field: 'vmMemoryOverheadPercent',
    parse: fraction,
  },
  {
    name: 'INTERRUPTION_QUEUE',
    default: '',
    nodefleet: 'context interruption (true: the stack creates the queue)',
    readBy: 'interruption',
    refuse: 'not supported: the stack creates its own queue (context interruption=true|false)',
  },
  {
    name: 'RESERVED_ENIS',
    default: '0',
    nodefleet: 'same',
    readBy: 'provisioner, disruption (catalog max pods, kube-reserved)',
    field: 'reservedENIs',
    parse: count,
  },
  {
    name: 'DISABLE_DRY_RUN',
    default: 'false',
    nodefleet: 'same',
    readBy: 'nodefleet makes no dry-run calls',
    parse: onlyBool(true, 'nodefleet makes no dry-run EC2NodeClass validation'),
  },
  { name: 'ENABLE_ZONAL_SHIFT', default: 'false', nodefleet: 'same', readBy: '—', parse: onlyBool(false, 'nodefleet has no zonal shift') },
  { name: 'AMI_REFRESH_INTERVAL', default: '1m', nodefleet: 'same', readBy: 'resolver cache (1m)', parse: minute },
  { name: 'SUBNET_REFRESH_INTERVAL', default: '1m', nodefleet: 'same', readBy: 'resolver cache (1m)', parse: minute },
  { name: 'SECURITY_GROUP_REFRESH_INTERVAL', default: '1m', nodefleet: 'same', readBy: 'resolver cache (1m)', parse: minute },
  {
    name: 'AWS_FEATURE_GATES',
    default: Object.entries(AwsFeatureGateDefaults)
      .map(([k, v]) => `${k}=${v}`)
      .join(','),
    nodefleet: 'same',
    readBy: '— (every gate off)',
    parse: gates(AwsFeatureGateDefaults),
  },
];

const DefByName = new Map(SettingDefs.map((d) => [d.name, d]));

/** The settings a function reads at runtime (the stack passes these; others are checked at synth). */
export const RuntimeSettingNames: readonly string[] = SettingDefs.filter((d) => d.field).map((d) => d.name);
/** The settings the agent reads. */
export const AgentSettingNames: readonly string[] = ['BATCH_MAX_DURATION', 'BATCH_IDLE_DURATION'];

/** The defaults, as Karpenter's. */
export function defaultSettings(): Settings {
  const out = {} as Record<string, unknown>;
  for (const d of SettingDefs) {
    if (!d.field || !d.parse || d.default === '') continue;
    const r = d.parse(d.default);
    if ('value' in r) out[d.field] = r.value;
  }
  return out as unknown as Settings;
}

/**
 * Checks one setting's value.
 * @throws SettingsError (one line) when it is malformed or not supported.
 */
export function checkSetting(name: string, raw: string): unknown {
  const d = DefByName.get(name);
  if (!d) throw new SettingsError(name, 'not a Karpenter v1.15 setting');
  if (!d.parse) throw new SettingsError(name, d.refuse ?? 'not supported');
  const r = d.parse(raw);
  if ('problem' in r) throw new SettingsError(name, r.problem);
  return r.value;
}

/**
 * Settings from an environment (or CDK context) keyed by Karpenter's names; unset ones take
 * Karpenter's defaults. `names`: which to read (default: those a function reads at runtime;
 * synth passes every name).
 * @throws SettingsError (one line) on the first bad or unsupported one.
 */
export function parseSettings(source: Record<string, string | undefined>, names: readonly string[] = RuntimeSettingNames): Settings {
  const out = defaultSettings() as unknown as Record<string, unknown>;
  for (const name of names) {
    const raw = source[name];
    if (raw === undefined || raw === '') continue;
    const value = checkSetting(name, raw);
    const field = DefByName.get(name)?.field;
    if (field) out[field] = value;
  }
  return out as unknown as Settings;
}

/** Every setting name, in {@link SettingDefs} order. */
export const SettingNames: readonly string[] = SettingDefs.map((d) => d.name);

/** The camelCase key of a setting in scenario cases (`MIN_VALUES_POLICY` → `minValuesPolicy`, `RESERVED_ENIS` → `reservedENIs`). */
export function caseKeyOf(name: string): string {
  const d = DefByName.get(name);
  if (d?.field) return d.field;
  return name.toLowerCase().replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
}

/** Case `settings` keys that are Karpenter settings (the runner's own knobs are listed in its loader). */
export const CaseSettingKeys: readonly string[] = SettingDefs.filter((d) => d.field).map((d) => d.field as string);

/**
 * Settings from a scenario case's `settings` (camelCase keys, `featureGates` as a map of gate →
 * boolean), checked as the environment is. Keys that are not Karpenter settings are ignored.
 * @throws SettingsError on a bad or unsupported one.
 */
export function settingsFromCase(settings: Record<string, unknown>): Settings {
  const env: Record<string, string> = {};
  for (const d of SettingDefs) {
    if (!d.field) continue;
    const v = settings[d.field];
    if (v === undefined || v === null) continue;
    if (d.field === 'featureGates') {
      if (typeof v !== 'object') throw new SettingsError('featureGates', 'must be a map of gate name to true or false');
      env[d.name] = Object.entries(v as Record<string, unknown>)
        .map(([k, b]) => `${k}=${String(b)}`)
        .join(',');
    } else env[d.name] = String(v);
  }
  return parseSettings(env);
}

/** Karpenter's defaults, parsed once. */
export const DefaultSettings: Readonly<Settings> = Object.freeze(defaultSettings());

/** The settings that change the instance catalog (shared/catalog `CatalogSettings`). */
export function catalogSettingsOf(s: Settings = DefaultSettings): { vmMemoryOverheadPercent: number; reservedENIs: number } {
  return { vmMemoryOverheadPercent: s.vmMemoryOverheadPercent, reservedENIs: s.reservedENIs };
}

/**
 * The ReservedCapacity feature gate (Karpenter's default: on): when off, capacity reservations are
 * neither offered nor launched into, as Karpenter skips its reserved offerings and reservation
 * targeting (KA reserved_capacity_resolver.go, launchtemplate/types.go).
 */
export function reservedCapacityOf(s: Settings = DefaultSettings): boolean {
  return s.featureGates.ReservedCapacity;
}

/** The settings that change the scheduling simulation (shared/scheduling `SchedulingSettings`). */
export function schedulingSettingsOf(s: Settings = DefaultSettings): { minValuesPolicy: MinValuesPolicy; preferencePolicy: PreferencePolicy } {
  return { minValuesPolicy: s.minValuesPolicy, preferencePolicy: s.preferencePolicy };
}
