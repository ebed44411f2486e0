/**
 * Bottlerocket user data as Karpenter's AWS provider reads an EC2NodeClass `spec.userData` for
 * `amiFamily: Bottlerocket` (KA bootstrap/bottlerocketsettings.go): a TOML document whose
 * `[settings]` table is kept, with `settings.kubernetes` and `settings.bootstrap-commands` read
 * into the provider's typed settings (a key it does not know there is dropped, a value of another
 * type fails the launch). nodefleet refuses what the provider would drop or fail on, so what a
 * class says is what the node gets.
 */
import { parse, TomlError } from 'smol-toml';

type Kind = 'string' | 'int' | 'bool' | 'strings' | 'stringMap' | 'table';

/** The `settings.kubernetes` keys the provider passes on, with the TOML type each must have. */
export const BottlerocketKubernetesKeys: Readonly<Record<string, Kind>> = {
  'api-server': 'string',
  'cloud-provider': 'string',
  'cluster-certificate': 'string',
  'cluster-name': 'string',
  'cluster-dns-ip': 'string',
  'credential-providers': 'table',
  'node-labels': 'stringMap',
  'node-taints': 'table',
  'max-pods': 'int',
  'static-pods': 'table',
  'eviction-hard': 'stringMap',
  'eviction-soft': 'stringMap',
  'eviction-soft-grace-period': 'stringMap',
  'eviction-max-pod-grace-period': 'int',
  'kube-reserved': 'stringMap',
  'system-reserved': 'stringMap',
  'allowed-unsafe-sysctls': 'strings',
  'server-tls-bootstrap': 'bool',
  'registry-qps': 'int',
  'registry-burst': 'int',
  'event-qps': 'int',
  'event-burst': 'int',
  'kube-api-qps': 'int',
  'kube-api-burst': 'int',
  'container-log-max-size': 'string',
  'container-log-max-files': 'int',
  'cpu-manager-policy': 'string',
  'cpu-manager-policy-options': 'strings',
  'cpu-manager-reconcile-period': 'string',
  'memory-manager-policy': 'string',
  'memory-manager-reserved-memory': 'table',
  'topology-manager-scope': 'string',
  'topology-manager-policy': 'string',
  'topology-manager-policy-options': 'table',
  'image-gc-high-threshold-percent': 'string',
  'image-gc-low-threshold-percent': 'string',
  'ids-per-pod': 'int',
  'cpu-cfs-quota-enforced': 'bool',
  'shutdown-grace-period': 'string',
  'shutdown-grace-period-for-critical-pods': 'string',
  'cluster-domain': 'string',
  'seccomp-default': 'bool',
  'pod-pids-limit': 'int',
  'device-ownership-from-security-context': 'bool',
  'single-process-oom-kill': 'bool',
  'container-log-max-workers': 'int',
  'container-log-monitor-interval': 'string',
  'hostname-override-source': 'string',
  'log-level': 'int',
};

/** Modes of a Bottlerocket bootstrap command (KA `BootstrapCommandMode`). */
export const BootstrapCommandModes = ['always', 'once', 'off'] as const;

/** One `settings.bootstrap-commands` entry, as the provider writes it back (all three keys). */
export interface BootstrapCommand {
  commands: string[][];
  mode: string;
  essential: boolean;
}

/** A class's Bottlerocket user data, read: every `settings` table, kubernetes and bootstrap commands apart. */
export interface BottlerocketUserSettings {
  /** `settings` tables other than kubernetes and bootstrap-commands, kept as they are. */
  other: Record<string, unknown>;
  kubernetes: Record<string, unknown>;
  bootstrapCommands?: Record<string, BootstrapCommand>;
}

const isTable = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date);
const isStrings = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');

function kindProblem(kind: Kind, v: unknown): string | undefined {
  switch (kind) {
    case 'string':
      return typeof v === 'string' ? undefined : 'a string';
    case 'int':
      return typeof v === 'bigint' || (typeof v === 'number' && Number.isInteger(v)) ? undefined : 'an integer';
    case 'bool':
      return typeof v === 'boolean' ? undefined : 'true or false';
    case 'strings':
      return isStrings(v) ? undefined : 'an array of strings';
    case 'stringMap':
      return isTable(v) && Object.values(v).every((x) => typeof x === 'string') ? undefined : 'a table of strings';
    case 'table':
      return isTable(v) ? undefined : 'a table';
  }
}

/**
 * Reads `spec.userData` of a Bottlerocket class.
 * @returns the settings, or `problem` (one sentence) for a document the provider would not launch
 *   with or would pass on only in part.
 */
export function parseBottlerocketUserData(userData: string | undefined): BottlerocketUserSettings | { problem: string } {
  const empty: BottlerocketUserSettings = { other: {}, kubernetes: {} };
  if (!userData?.trim()) return empty;
  let doc: Record<string, unknown>;
  try {
    doc = parse(userData) as Record<string, unknown>;
  } catch (err) {
    const line = err instanceof TomlError ? ` (line ${err.line})` : '';
    return { problem: `not a Bottlerocket TOML document${line}: ${(err as Error).message.split('\n')[0]}` };
  }
  const extra = Object.keys(doc).filter((k) => k !== 'settings');
  if (extra.length)
    return {
      problem: `${extra.map((k) => JSON.stringify(k)).join(', ')}: only the [settings] table of Bottlerocket user data is passed to the node; move it under settings`,
    };
  const settings = doc.settings ?? {};
  if (!isTable(settings)) return { problem: 'settings must be a TOML table' };
  const { kubernetes = {}, 'bootstrap-commands': commands, ...other } = settings;
  if (!isTable(kubernetes)) return { problem: 'settings.kubernetes must be a TOML table' };
  for (const [key, value] of Object.entries(kubernetes)) {
    const kind = BottlerocketKubernetesKeys[key];
    if (!kind)
      return {
        problem: `settings.kubernetes.${key} is not supported by nodefleet: not a Kubernetes setting Karpenter passes to Bottlerocket (it would be dropped); remove it`,
      };
    const want = kindProblem(kind, value);
    if (want) return { problem: `settings.kubernetes.${key} must be ${want}` };
  }
  const out: BottlerocketUserSettings = {
    other,
    kubernetes: Object.fromEntries(Object.entries(kubernetes).map(([k, v]) => [k, typeof v === 'bigint' ? Number(v) : v])),
  };
  if (commands !== undefined) {
    if (!isTable(commands)) return { problem: 'settings.bootstrap-commands must be a TOML table' };
    out.bootstrapCommands = {};
    for (const [name, c] of Object.entries(commands)) {
      const at = `settings.bootstrap-commands.${name}`;
      if (!isTable(c)) return { problem: `${at} must be a TOML table` };
      const unknown = Object.keys(c).filter((k) => !['commands', 'mode', 'essential'].includes(k));
      if (unknown.length)
        return {
          problem: `${at}.${unknown[0]} is not supported by nodefleet: a bootstrap command has commands, mode and essential only (it would be dropped); remove it`,
        };
      if (!Array.isArray(c.commands) || !c.commands.every(isStrings)) return { problem: `${at}.commands must be an array of arrays of strings` };
      if (!BootstrapCommandModes.includes(c.mode as never)) return { problem: `${at}.mode must be one of ${BootstrapCommandModes.join(', ')}` };
      if (c.essential !== undefined && typeof c.essential !== 'boolean') return { problem: `${at}.essential must be true or false` };
      out.bootstrapCommands[name] = { commands: c.commands, mode: c.mode as string, essential: c.essential ?? false };
    }
  }
  return out;
}

/** Why a Bottlerocket `spec.userData` is refused, or undefined. */
export function bottlerocketUserDataProblem(userData: string | undefined): string | undefined {
  const r = parseBottlerocketUserData(userData);
  return 'problem' in r ? r.problem : undefined;
}
