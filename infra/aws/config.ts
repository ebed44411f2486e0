/**
 * The stack's parameters, read once from CDK context (`-c key=value` or cdk.json) and validated:
 * a bad value fails synth with the context key's name, before any resource is built.
 */
import type { Node } from 'constructs';
import { clusterNameProblem, PackingModes, type PackingMode } from '../../shared/api/contract.ts';
import { checkSetting, SettingNames, SettingsError } from '../../shared/api/settings.ts';

/** Log levels Powertools Logger accepts (POWERTOOLS_LOG_LEVEL; shared/runtime/env.ts parses the same set). */
export const LogLevels = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR', 'CRITICAL', 'SILENT'] as const;
export type LogLevel = (typeof LogLevels)[number];

/** How the in-cluster agent gets AWS credentials. */
export type AgentIdentity = 'pod-identity' | 'irsa';

/** Parsed stack parameters. */
export interface NodefleetConfig {
  /** EKS cluster name (context `clusterName`, required). Scopes IAM, tags and resource names. */
  clusterName: string;
  /** POWERTOOLS_LOG_LEVEL for every function (context `logLevel`, default INFO). */
  logLevel: LogLevel;
  /** Whether the five EC2/Health interruption rules, their queue and function exist (context `interruption`, default true). */
  interruption: boolean;
  /**
   * Optional VPC for the functions, for clusters whose API endpoint is private (context `vpcId`).
   * Without it the functions run outside any VPC and reach the public EKS endpoint.
   */
  vpc?: {
    vpcId: string;
    /** Subnet ids (context `subnetIds`, comma-separated): resolved offline. */
    subnetIds?: string[];
    /**
     * Subnet discovery tag `key=value` (context `subnetTag`, e.g. `karpenter.sh/discovery=my-cluster`):
     * resolved with a VPC lookup, which needs AWS credentials at synth (or a cdk.context.json).
     */
    subnetTag?: { key: string; value: string };
  };
  /** Agent credentials: EKS Pod Identity (default) or IRSA (context `agentIdentity`). */
  agentIdentity: AgentIdentity;
  /** IRSA only: the cluster's IAM OIDC provider ARN (context `oidcProviderArn`). */
  oidcProviderArn?: string;
  /** Namespace and ServiceAccount of the agent (must match infra/k8s). */
  agentNamespace: string;
  agentServiceAccount: string;
  /**
   * Packing mode of the provisioner and of disruption's simulations (context `packing`, `cost` or
   * `karpenter`; unset: the default, cost), passed to both as NODEFLEET_PACKING. A NodePool's nodefleet.io/packing annotation wins.
   */
  packing?: PackingMode;
  /**
   * Karpenter's settings and feature gates set as context under Karpenter's names
   * (`-c FEATURE_GATES=SpotToSpotConsolidation=true`), each checked (shared/api/settings.ts):
   * name → value, only those set. Passed to the functions (and the agent's) under the same names.
   */
  settings: Record<string, string>;
  /**
   * Beside Karpenter (context `besideKarpenter`, default false): every function reads only the
   * NodePools whose nodeClassRef is an EC2NodeClass of nodefleet.io (NODEFLEET_BESIDE_KARPENTER;
   * docs/migration.md); otherwise those of karpenter.k8s.aws, as a replacement for Karpenter.
   */
  besideKarpenter: boolean;
}

/** Names shared with infra/k8s (the manifests use the same literals; a test checks they agree). */
export const AgentNamespace = 'nodefleet';
export const AgentServiceAccount = 'nodefleet-agent';
/**
 * Kubernetes group a function's role is mapped to by its EKS access entry: one per function
 * (`provisioner` → `nodefleet-provisioner`, `terminationDeleteNode` → `nodefleet-termination-delete-node`),
 * bound in infra/k8s/rbac-controllers.yaml to only the verbs that function uses.
 */
export function kubernetesGroupOf(functionName: string): string {
  return `nodefleet-${functionName.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
}

/** Thrown when a context value is missing or invalid; the message names the context key. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

function str(node: Node, key: string): string | undefined {
  const v: unknown = node.tryGetContext(key);
  if (v === undefined || v === null || v === '') return undefined;
  return String(v);
}

function bool(node: Node, key: string, fallback: boolean): boolean {
  const v = str(node, key);
  if (v === undefined) return fallback;
  if (['true', '1', 'on', 'yes'].includes(v.toLowerCase())) return true;
  if (['false', '0', 'off', 'no'].includes(v.toLowerCase())) return false;
  throw new ConfigError(`context '${key}' must be true or false, got '${v}'`);
}

/**
 * Reads and validates the stack's context.
 * @throws ConfigError naming the context key when a value is missing or invalid.
 */
export function readConfig(node: Node): NodefleetConfig {
  const clusterName = str(node, 'clusterName');
  if (!clusterName) throw new ConfigError("context 'clusterName' is required: npx cdk deploy -c clusterName=MY_CLUSTER");
  const nameProblem = clusterNameProblem(clusterName);
  if (nameProblem) throw new ConfigError(`context 'clusterName' ${nameProblem}`);
  const logLevel = (str(node, 'logLevel') ?? 'INFO').toUpperCase();
  if (!(LogLevels as readonly string[]).includes(logLevel)) {
    throw new ConfigError(`context 'logLevel' must be one of ${LogLevels.join(', ')}, got '${logLevel}'`);
  }
  const agentIdentity = str(node, 'agentIdentity') ?? 'pod-identity';
  if (agentIdentity !== 'pod-identity' && agentIdentity !== 'irsa') {
    throw new ConfigError(`context 'agentIdentity' must be pod-identity or irsa, got '${agentIdentity}'`);
  }
  const oidcProviderArn = str(node, 'oidcProviderArn');
  if (agentIdentity === 'irsa' && !oidcProviderArn) {
    throw new ConfigError("context 'oidcProviderArn' is required when agentIdentity=irsa");
  }

  let vpc: NodefleetConfig['vpc'];
  const vpcId = str(node, 'vpcId');
  const subnetIds = str(node, 'subnetIds');
  const subnetTag = str(node, 'subnetTag');
  if (vpcId) {
    if (!subnetIds && !subnetTag) throw new ConfigError("context 'vpcId' needs 'subnetIds' (comma-separated) or 'subnetTag' (key=value)");
    let tag: { key: string; value: string } | undefined;
    if (subnetTag) {
      const eq = subnetTag.indexOf('=');
      if (eq <= 0) throw new ConfigError(`context 'subnetTag' must be key=value, got '${subnetTag}'`);
      tag = { key: subnetTag.slice(0, eq), value: subnetTag.slice(eq + 1) };
    }
    vpc = {
      vpcId,
      subnetIds: subnetIds
        ?.split(',')
        .map((s) => s.trim())
        .filter(Boolean),
      subnetTag: tag,
    };
  } else if (subnetIds || subnetTag) {
    throw new ConfigError("context 'subnetIds' / 'subnetTag' need 'vpcId'");
  }

  const packing = str(node, 'packing');
  if (packing !== undefined && !(PackingModes as readonly string[]).includes(packing)) {
    throw new ConfigError(`context 'packing' must be one of ${PackingModes.join(', ')}, got '${packing}'`);
  }

  const settings: Record<string, string> = {};
  for (const name of SettingNames) {
    const raw = str(node, name);
    if (raw === undefined) continue;
    try {
      checkSetting(name, raw);
    } catch (e) {
      if (e instanceof SettingsError) throw new ConfigError(`context '${name}': ${e.message.slice(`setting ${name}: `.length)}`);
      throw e;
    }
    settings[name] = raw;
  }

  return {
    clusterName,
    logLevel: logLevel as LogLevel,
    settings,
    ...(packing ? { packing: packing as PackingMode } : {}),
    interruption: bool(node, 'interruption', true),
    besideKarpenter: bool(node, 'besideKarpenter', false),
    vpc,
    agentIdentity,
    oidcProviderArn,
    agentNamespace: AgentNamespace,
    agentServiceAccount: AgentServiceAccount,
  };
}
