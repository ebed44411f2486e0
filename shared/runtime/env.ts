/**
 * Environment: parsed once per cold start with zod, failing loudly with the variable's name
 * (the model: Powertools commons envUtils.ts). Variable names come from shared/api/contract.ts
 * `Env`, which the CDK construct (infra/aws) uses too.
 *
 * Each function names what it needs: `parseRuntimeEnv(process.env, ['stateMachineArn'])`.
 */
import { z } from 'zod';
import { Env } from '../api/contract.ts';
import { NodefleetError } from '../api/errors.ts';
import { PackingModes, type PackingMode } from '../api/packing.ts';
import { parseSettings, SettingsError, type Settings } from '../api/settings.ts';

/** A missing or malformed environment variable; `variable` is its name. */
export class EnvError extends NodefleetError {
  constructor(
    readonly variable: string,
    reason: string,
  ) {
    super(`environment variable ${variable}: ${reason}`);
  }
}

const optionalUrl = z.string().url().optional();

/** The schema, keyed by variable name (so zod's error path is the variable). */
export const RuntimeEnvSchema = z.object({
  [Env.clusterName]: z.string().min(1),
  [Env.tableName]: z.string().min(1),
  [Env.region]: z.string().min(1),
  [Env.stateMachineArn]: z.string().min(1).optional(),
  [Env.eventBusName]: z.string().min(1).optional(),
  [Env.nodeRoleName]: z.string().min(1).optional(),
  [Env.instanceProfileName]: z.string().min(1).optional(),
  [Env.kubeconfig]: z.string().min(1).optional(),
  [Env.dynamodbEndpoint]: optionalUrl,
  [Env.ec2Endpoint]: optionalUrl,
  [Env.viewBucket]: z.string().min(1).optional(),
  [Env.s3Endpoint]: optionalUrl,
  [Env.packing]: z.enum(PackingModes).optional(),
  [Env.besideKarpenter]: z.enum(['true', 'false']).optional(),
  [Env.logLevel]: z.enum(['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR', 'SILENT', 'CRITICAL']).default('INFO'),
});

/** Parsed environment, camelCase keys as in contract.ts `Env`. */
export interface RuntimeEnv {
  clusterName: string;
  tableName: string;
  region: string;
  stateMachineArn?: string;
  eventBusName?: string;
  nodeRoleName?: string;
  instanceProfileName?: string;
  /** Set only in the embedded environment: kubeconfig path instead of EKS token auth. */
  kubeconfig?: string;
  dynamodbEndpoint?: string;
  ec2Endpoint?: string;
  /** S3 bucket of the cluster view (docs/cluster-state.md); unset = list the cluster live. */
  viewBucket?: string;
  s3Endpoint?: string;
  /** The operator's packing mode (CDK context `packing`; provisioner and disruption); NodePool annotations win (shared/api/packing.ts). */
  packing?: PackingMode;
  /** Beside Karpenter (CDK context `besideKarpenter`): only NodePools of nodefleet.io EC2NodeClasses are read (shared/api/nodepool.ts `managedNodeClassGroup`). */
  besideKarpenter?: boolean;
  logLevel: string;
  /**
   * Karpenter's settings and feature gates, from the variables of the same names
   * (shared/api/settings.ts); parseRuntimeEnv always sets it, absent = Karpenter's defaults.
   */
  settings?: Settings;
}

/** Keys that are optional in the schema but a function may require. */
export type OptionalEnvKey =
  'stateMachineArn' | 'eventBusName' | 'nodeRoleName' | 'instanceProfileName' | 'kubeconfig' | 'dynamodbEndpoint' | 'ec2Endpoint' | 'viewBucket' | 's3Endpoint';

/**
 * Parses and checks the environment.
 * @param required optional keys this function needs (e.g. `['stateMachineArn']`).
 * @throws EnvError naming the first bad or missing variable.
 */
export function parseRuntimeEnv(source: Record<string, string | undefined>, required: readonly OptionalEnvKey[] = []): RuntimeEnv {
  const r = RuntimeEnvSchema.safeParse(source);
  if (!r.success) {
    const issue = r.error.issues[0];
    const variable = String(issue?.path[0] ?? 'environment');
    throw new EnvError(variable, source[variable] === undefined ? 'is required' : (issue?.message ?? 'is invalid'));
  }
  const v = r.data as Record<string, string | undefined>;
  let settings: Settings;
  try {
    settings = parseSettings(source);
  } catch (e) {
    if (e instanceof SettingsError) throw new EnvError(e.setting, e.message.slice(`setting ${e.setting}: `.length));
    throw e;
  }
  const env: RuntimeEnv = {
    clusterName: v[Env.clusterName]!,
    tableName: v[Env.tableName]!,
    region: v[Env.region]!,
    stateMachineArn: v[Env.stateMachineArn],
    eventBusName: v[Env.eventBusName],
    nodeRoleName: v[Env.nodeRoleName],
    instanceProfileName: v[Env.instanceProfileName],
    kubeconfig: v[Env.kubeconfig],
    dynamodbEndpoint: v[Env.dynamodbEndpoint],
    ec2Endpoint: v[Env.ec2Endpoint],
    viewBucket: v[Env.viewBucket],
    s3Endpoint: v[Env.s3Endpoint],
    packing: v[Env.packing] as PackingMode | undefined,
    ...(v[Env.besideKarpenter] === 'true' ? { besideKarpenter: true } : {}),
    logLevel: v[Env.logLevel] ?? 'INFO',
    settings,
  };
  for (const key of required) if (!env[key]) throw new EnvError(Env[key], 'is required');
  return env;
}

/** Environment variables each function needs (infra/aws sets these; the report lists them). */
export const FunctionEnv = {
  provisioner: {
    required: [Env.clusterName, Env.tableName, Env.region],
    optional: [Env.instanceProfileName, Env.kubeconfig, Env.dynamodbEndpoint, Env.ec2Endpoint, Env.viewBucket, Env.s3Endpoint, Env.packing, Env.logLevel],
  },
  registration: { required: [Env.clusterName, Env.tableName, Env.region], optional: [Env.kubeconfig, Env.dynamodbEndpoint, Env.logLevel] },
  gc: { required: [Env.clusterName, Env.tableName, Env.region], optional: [Env.kubeconfig, Env.dynamodbEndpoint, Env.ec2Endpoint, Env.logLevel] },
  agent: { required: [Env.clusterName, Env.eventBusName, Env.region], optional: [Env.kubeconfig, Env.viewBucket, Env.s3Endpoint] },
} as const;
