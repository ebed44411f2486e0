/**
 * Scenario files for the embedded environment (infra/local/scenarios/*.yaml): the cluster to
 * start with, a timeline of changes and faults, and the expectations that decide the exit code.
 * Times are virtual (see clock.ts) and written as durations ("90s", "2m") or seconds.
 *
 * ```yaml
 * name: seed-inflate                 # = file name
 * about: one paragraph
 * origin: where the facts come from
 * region: ap-northeast-2
 * clusterName: karpenter-demo
 * start: "2026-03-06T15:56:30Z"      # virtual start instant (schedules, budgets)
 * speed: 10                          # default --speed
 * timeout: 15m                       # virtual; the run fails past it
 * ec2: { bootSeconds: 2, shutdownSeconds: 10, capacity: [{ instanceType, zone, capacityType, count }] }
 * kubelet: { registerSeconds: 19, readySeconds: 10, podStartupSeconds: 1 }
 * cluster:
 *   nodes: [{ instanceType: m5.large, zone: ap-northeast-2a, labels: {…} }]   # managed node group
 *   objects: [NodePool, EC2NodeClass, Deployment, PodDisruptionBudget, …]    # Kubernetes YAML
 * timeline:                          # run in order; each step may wait `at` (absolute) or `after` (relative)
 *   - { at: 1s, scale: { deployment: inflate, replicas: 5 } }
 *   - { waitFor: { pods: { selector: app=inflate, running: 5 } }, timeout: 3m }
 *   - { fault: { insufficientCapacity: { instanceTypes: [c5a.2xlarge], for: 3m } } }
 *   - { fault: { spotInterruption: { nodePool: web } } }
 *   - { mark: scaled-down }          # names the instant for expectations
 *   - { capacityReservation: { id: cr-0a1, instanceType: m5.xlarge, zone: ap-northeast-2a, count: 1 } }
 * expect: { … see ExpectSchema … }
 * ```
 */
import { checkSetting } from '../../shared/api/settings.ts';
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { z } from 'zod';
import { MaxYamlAliases } from '../../shared/api/yaml.ts';
import { parseDurationSeconds } from './clock.ts';

/** Folder holding the shipped scenarios. */
export const ScenarioDir = join(dirname(fileURLToPath(import.meta.url)), 'scenarios');

/** The scenario `npm start` runs. */
export const DefaultScenario = 'seed-inflate';

const Duration = z.union([z.number().nonnegative(), z.string()]).transform((v, ctx) => {
  try {
    return parseDurationSeconds(v);
  } catch (e) {
    ctx.addIssue({ code: 'custom', message: (e as Error).message });
    return z.NEVER;
  }
});

const CapacityType = z.enum(['on-demand', 'spot']);
const KubeObject = z.looseObject({ apiVersion: z.string(), kind: z.string(), metadata: z.looseObject({ name: z.string() }) });

const ManagedNode = z.strictObject({
  instanceType: z.string(),
  zone: z.string(),
  capacityType: CapacityType.default('on-demand'),
  /** Node name; default from the private IP, as EKS names nodes. */
  name: z.string().optional(),
  labels: z.record(z.string(), z.string()).default({}),
  taints: z.array(z.looseObject({ key: z.string(), effect: z.string() })).default([]),
  /** Extra instance tags (e.g. Karpenter's own, for a node Karpenter launched beside nodefleet). */
  tags: z.record(z.string(), z.string()).default({}),
});

const PodsCondition = z.strictObject({
  selector: z.string(),
  namespace: z.string().default('default'),
  /** Number of pods Running (and Ready). */
  running: z.number().int().nonnegative().optional(),
  /** Number of pods Pending. */
  pending: z.number().int().nonnegative().optional(),
  /** Running pods must not sit on the node(s) of this fault/mark (e.g. the interrupted node). */
  notOnInterruptedNode: z.boolean().optional(),
});

const NodeClaimsCondition = z.strictObject({
  count: z.number().int().nonnegative(),
  nodePool: z.string().optional(),
  /** Count only claims whose node is Initialized. */
  initialized: z.boolean().optional(),
});

const WaitFor = z.strictObject({
  pods: PodsCondition.optional(),
  nodeClaims: NodeClaimsCondition.optional(),
  /** Instances launched by nodefleet and not terminated. */
  instances: z.strictObject({ count: z.number().int().nonnegative(), nodePool: z.string().optional() }).optional(),
  /** All Kubernetes nodes (managed ones included). */
  nodes: z.strictObject({ count: z.number().int().nonnegative(), selector: z.string().optional() }).optional(),
  /** NodeClaim objects nodefleet mirrors into the cluster (annotation nodefleet.io/cluster); with `ready`, only those whose Ready condition is True. */
  nodeClaimObjects: z.strictObject({ count: z.number().int().nonnegative(), ready: z.boolean().optional() }).optional(),
  /** The interrupted instance is gone (shutting-down or terminated). */
  interruptedInstanceGone: z.boolean().optional(),
  /** Termination executions (reason from the input, status) reached a count. */
  terminations: z
    .strictObject({
      reason: z.string().optional(),
      status: z.enum(['SUCCEEDED', 'FAILED', 'RUNNING']).default('SUCCEEDED'),
      count: z.number().int().nonnegative(),
    })
    .optional(),
});

const Fault = z.strictObject({
  insufficientCapacity: z
    .strictObject({
      instanceTypes: z.array(z.string()).optional(),
      zones: z.array(z.string()).optional(),
      capacityType: CapacityType.optional(),
      /** How long the fault lasts (virtual); absent = until the end. */
      for: Duration.optional(),
      errorCode: z.string().optional(),
    })
    .optional(),
  /**
   * The kubelet of the oldest running node of `nodePool` (nodefleet's, not a managed one) stops
   * posting status: Ready turns Unknown and stays so, the instance keeps running (node repair's case).
   */
  kubeletStopped: z.strictObject({ nodePool: z.string().optional() }).optional(),
  /**
   * An instance tagged as nodefleet's launch for `nodePool` (the tags of a running nodefleet instance
   * of the pool, NodeClaim `nodeClaim`) that no NodeClaim record owns and whose node never joins
   * (its record lost before it registered).
   */
  strayInstance: z.strictObject({ nodePool: z.string(), nodeClaim: z.string(), instanceType: z.string(), zone: z.string() }).optional(),
  spotInterruption: z
    .strictObject({
      /** Interrupt the oldest running spot instance of this NodePool. */
      nodePool: z.string().optional(),
      instanceId: z.string().optional(),
      notice: Duration.default(120),
    })
    .optional(),
  /**
   * The functions' table is replaced by an empty one, as a deploy that adds a local secondary index
   * does (README, Deploy step 5): every item of the local table (claims, claims epoch, budgets, ICE
   * entries) is deleted; nodes and instances stay.
   */
  tableReplaced: z.literal(true).optional(),
});

const Step = z
  .strictObject({
    at: Duration.optional(),
    after: Duration.optional(),
    /** Shown in the log and the timeline. */
    note: z.string().optional(),
    scale: z.strictObject({ deployment: z.string(), namespace: z.string().default('default'), replicas: z.number().int().nonnegative() }).optional(),
    apply: z.array(KubeObject).optional(),
    /** `kubectl delete`: by name, or (`selector`, a label selector) every object of the kind it matches. */
    delete: z
      .array(
        z
          .strictObject({
            apiVersion: z.string(),
            kind: z.string(),
            name: z.string().optional(),
            selector: z.string().optional(),
            namespace: z.string().optional(),
          })
          .refine((d) => (d.name === undefined) !== (d.selector === undefined), {
            message: 'a delete names one object (name) or selects some (selector), not both',
          }),
      )
      .optional(),
    fault: Fault.optional(),
    waitFor: WaitFor.optional(),
    /** Virtual time the waitFor may take (default 10m). */
    timeout: Duration.optional(),
    mark: z.string().optional(),
    /** The account gets an on-demand capacity reservation (as CreateCapacityReservation). */
    capacityReservation: z
      .strictObject({
        id: z.string().regex(/^cr-[0-9a-z]+$/),
        instanceType: z.string(),
        zone: z.string(),
        count: z.number().int().positive(),
        instanceMatchCriteria: z.enum(['open', 'targeted']).default('targeted'),
        tags: z.record(z.string(), z.string()).default({}),
      })
      .optional(),
  })
  .refine((s) => [s.scale, s.apply, s.delete, s.fault, s.waitFor, s.mark, s.capacityReservation].filter((x) => x !== undefined).length <= 1, {
    message: 'a timeline step does one thing: scale, apply, delete, fault, waitFor, mark or capacityReservation',
  });

const Range = z.strictObject({ min: z.number().optional(), max: z.number().optional() });
const CountOrRange = z.union([z.number().int().nonnegative(), Range]);

const LaunchedExpect = z.strictObject({
  /** Only instances of this NodePool (tag karpenter.sh/nodepool). */
  nodePool: z.string().optional(),
  count: CountOrRange.optional(),
  instanceTypes: z.array(z.string()).optional(),
  /** None of the launched instances is of these types (e.g. the one under an ICE fault). */
  excludeInstanceTypes: z.array(z.string()).optional(),
  capacityTypes: z.array(CapacityType).optional(),
  /** How many of them were launched into a capacity reservation (karpenter.sh/capacity-type reserved). */
  reserved: CountOrRange.optional(),
  archs: z.array(z.enum(['amd64', 'arm64'])).optional(),
});

const ExpectSchema = z.strictObject({
  /** Instances nodefleet launched (CreateFleet), over the whole run; one entry or a list (each may filter by NodePool). */
  launched: z.union([LaunchedExpect, z.array(LaunchedExpect)]).optional(),
  /** Most NodeClaims alive at once. */
  maxConcurrentNodeClaims: CountOrRange.optional(),
  /** State when the timeline has finished. */
  final: z
    .strictObject({
      nodeClaims: z.number().int().nonnegative().optional(),
      instances: z.number().int().nonnegative().optional(),
      nodes: z.number().int().nonnegative().optional(),
      pods: PodsCondition.optional(),
    })
    .optional(),
  /** Termination state machine executions. */
  terminations: z
    .array(
      z.strictObject({
        reason: z.string().optional(),
        status: z.enum(['SUCCEEDED', 'FAILED', 'RUNNING']).default('SUCCEEDED'),
        count: CountOrRange.optional(),
        /** Seconds from the execution's start to TerminateInstances for its instance. */
        terminatedAfterSeconds: Range.optional(),
        /** No matching execution starts before this instant (RFC 3339), e.g. the end of a budget window. */
        notBefore: z.string().optional(),
        /** No matching execution starts before `seconds` after the named mark (e.g. a toleration). */
        notBeforeMark: z.strictObject({ mark: z.string(), seconds: z.number().nonnegative() }).optional(),
      }),
    )
    .optional(),
  /** The spot-interrupted instance. */
  interruption: z
    .strictObject({
      /** nodefleet (TerminateInstances) removed it before EC2 reclaimed it. */
      terminatedByNodefleetBeforeNoticeEnds: z.boolean().optional(),
      /** A replacement instance was launched after the notice. */
      replacementLaunched: z.boolean().optional(),
    })
    .optional(),
  /**
   * Nodes nodefleet must never touch (Karpenter's, beside nodefleet): at the end each is still there,
   * not cordoned, without the disrupted taint, its instance running, and no termination ever named it.
   */
  untouchedNodes: z.array(z.string()).optional(),
  /** Each `strayInstance` was terminated (TerminateInstances) by nodefleet, within `withinSeconds` of its start. */
  straysTerminated: z.strictObject({ withinSeconds: z.number().positive() }).optional(),
  /** Karpenter-style log messages that must appear (exact `message` values). */
  logs: z.array(z.string()).optional(),
  /** Named marks that must have been reached before an instant (RFC 3339), e.g. before a budget window ends. */
  marksBefore: z.record(z.string(), z.string()).optional(),
  /** CreateFleet answered insufficient-capacity errors at least this many times (an ICE fault was hit). */
  capacityErrors: z.strictObject({ min: z.number().int().nonnegative() }).optional(),
  /** Every event-bus delivery succeeded (no handler errors, nothing dead-lettered). */
  noFailedDeliveries: z.boolean().optional(),
  /** No ERROR log line over the run (`true`), or none but these exact messages (`{ except: [...] }`). */
  noErrorLogs: z.union([z.literal(true), z.strictObject({ except: z.array(z.string()) })]).optional(),
  /**
   * Every NodeClaim object nodefleet mirrors (annotation nodefleet.io/cluster) that went during the
   * run went only once its instance was no longer running, and at least one went: the termination
   * finalizer held it until the instance was terminated.
   */
  nodeClaimObjectsOutliveInstances: z.literal(true).optional(),
  /** Evictions the Eviction API refused because a PodDisruptionBudget allowed none (429), over the run. */
  evictionsRefusedByPdb: CountOrRange.optional(),
  /**
   * Seconds from the first deletion of a pod matching `selector` (in the scenario only the
   * termination's cutoff deletes one) to a matching pod, not terminating, being Running again.
   */
  runningAgainAfterDeletion: z.strictObject({ selector: z.string(), namespace: z.string().default('default'), seconds: Range }).optional(),
  /**
   * At every change of a Node, the NodePool's nodes being disrupted (karpenter.sh/disrupted taint,
   * or deleting) stay within the disruption budget in force at that moment (the NodePool's budgets,
   * schedules in UTC, for `reason`), counted from the cluster — not from nodefleet's counters.
   */
  budgetsHonoured: z.array(z.strictObject({ nodePool: z.string(), reason: z.enum(['Empty', 'Drifted', 'Underutilized']).default('Empty') })).optional(),
});

export const ScenarioSchema = z.strictObject({
  name: z.string().regex(/^[a-z0-9][a-z0-9-]*$/),
  about: z.string(),
  origin: z.string().optional(),
  region: z.string().default('us-east-1'),
  clusterName: z.string().default('nodefleet-local'),
  start: z.string().default('2026-03-02T10:00:00Z'),
  speed: z.number().positive().default(10),
  timeout: Duration.default(1200),
  /**
   * nodefleet deployed beside Karpenter (CDK context `besideKarpenter`, docs/migration.md): every
   * function reads only NodePools of nodefleet.io EC2NodeClasses (NODEFLEET_BESIDE_KARPENTER).
   */
  besideKarpenter: z.boolean().default(false),
  /** Karpenter's settings under its names (`FEATURE_GATES: SpotToSpotConsolidation=true`), checked as the functions check them (shared/api/settings.ts). */
  settings: z
    .record(z.string(), z.union([z.string(), z.number(), z.boolean()]).transform(String))
    .default({})
    .superRefine((settings, ctx) => {
      for (const [name, raw] of Object.entries(settings)) {
        try {
          checkSetting(name, raw);
        } catch (e) {
          ctx.addIssue({ code: 'custom', path: [name], message: (e as Error).message });
        }
      }
    }),
  ec2: z
    .strictObject({
      bootSeconds: z.number().nonnegative().default(2),
      shutdownSeconds: z.number().nonnegative().default(10),
      capacity: z
        .array(z.strictObject({ instanceType: z.string(), zone: z.string(), capacityType: CapacityType, count: z.number().int().nonnegative() }))
        .default([]),
    })
    .default({ bootSeconds: 2, shutdownSeconds: 10, capacity: [] }),
  kubelet: z
    .strictObject({
      registerSeconds: z.number().nonnegative().default(19),
      readySeconds: z.number().nonnegative().default(10),
      podStartupSeconds: z.number().nonnegative().default(1),
    })
    .default({ registerSeconds: 19, readySeconds: 10, podStartupSeconds: 1 }),
  cluster: z.strictObject({
    nodes: z.array(ManagedNode).default([]),
    objects: z.array(KubeObject).default([]),
  }),
  timeline: z.array(Step).min(1),
  expect: ExpectSchema.default({}),
});

export type Scenario = z.infer<typeof ScenarioSchema>;
export type ScenarioStep = Scenario['timeline'][number];
export type ScenarioExpect = Scenario['expect'];
export type WaitForCondition = NonNullable<ScenarioStep['waitFor']>;
export type PodsConditionT = z.infer<typeof PodsCondition>;
export type CountOrRangeT = z.infer<typeof CountOrRange>;

/** A scenario file that does not parse or validate. */
export class ScenarioError extends Error {
  override name = 'ScenarioError';
}

/** Path of a scenario given by name (a shipped one) or by file path. */
export function resolveScenarioPath(nameOrFile: string): string {
  if (/^[a-z0-9][a-z0-9-]*$/.test(nameOrFile)) {
    const p = join(ScenarioDir, `${nameOrFile}.yaml`);
    if (existsSync(p)) return p;
  }
  const p = resolve(nameOrFile);
  if (existsSync(p)) return p;
  throw new ScenarioError(`no scenario "${nameOrFile}": not a shipped name (${listScenarioNames().join(', ')}) nor an existing file`);
}

/** Names of the shipped scenarios: every `*.yaml` in the scenarios folder (a new file is run by `npm test` without being listed anywhere), sorted. */
export function listScenarioNames(): string[] {
  if (!existsSync(ScenarioDir)) return [];
  return readdirSync(ScenarioDir)
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => f.slice(0, -'.yaml'.length))
    .sort();
}

/**
 * Parses scenario YAML text.
 * @throws ScenarioError with `file: path: reason` lines.
 */
export function parseScenario(text: string, file = '<scenario>'): Scenario {
  const docs = parseAllDocuments(text);
  if (docs.length !== 1) throw new ScenarioError(`${file}: a scenario file holds exactly one YAML document`);
  const doc = docs[0];
  if (doc.errors.length) throw new ScenarioError(`${file}: ${doc.errors.map((e) => e.message).join('; ')}`);
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: MaxYamlAliases });
  } catch {
    throw new ScenarioError(`${file}: more than ${MaxYamlAliases} aliases (*name): refused as a possible YAML bomb (billion laughs)`);
  }
  const parsed = ScenarioSchema.safeParse(value);
  if (!parsed.success) {
    throw new ScenarioError(parsed.error.issues.map((i) => `${file}: ${i.path.join('.') || '(root)'}: ${i.message}`).join('\n'));
  }
  return parsed.data;
}

/** Loads a shipped scenario by name, or a scenario file. */
export function loadScenario(nameOrFile: string): Scenario {
  const p = resolveScenarioPath(nameOrFile);
  return parseScenario(readFileSync(p, 'utf8'), p);
}
