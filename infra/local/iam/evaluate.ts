/**
 * IAM policy evaluation for the embedded environment and the IAM simulation test, by an
 * independent implementation of AWS policy semantics: `@cloud-copilot/iam-simulate`.
 *
 * Licence: iam-simulate is AGPL-3.0 and a devDependency. It is loaded at run time through a
 * dynamic import of a computed specifier (loadEvaluator), so no bundle of an entry point contains
 * it (test/unit/licences.test.ts) and an install without devDependencies runs the embedded
 * environment without IAM enforcement, saying so (authorizer.ts IamNotEnforced).
 */
import type * as IamSimulate from '@cloud-copilot/iam-simulate';
import type { Simulation } from '@cloud-copilot/iam-simulate';

/** The simulator's package (a devDependency, AGPL-3.0: never imported statically). */
export const IamSimulatorPackage = '@cloud-copilot/iam-simulate';

/** An IAM policy document (`Version` 2012-10-17). */
export interface PolicyDocument {
  Version: string;
  Statement: PolicyStatementJson[];
}

/** One statement as IAM JSON. */
export interface PolicyStatementJson {
  Sid?: string;
  Effect: 'Allow' | 'Deny';
  /** Resource policies only. */
  Principal?: string | Record<string, string | string[]>;
  Action: string | string[];
  Resource: string | string[];
  Condition?: Record<string, Record<string, string | string[]>>;
}

/**
 * One authorization request: what AWS evaluates for one (action, resource) of an API call.
 * `context` holds the condition keys the request carries (`aws:RequestTag/<k>`, `aws:TagKeys`,
 * `aws:ResourceTag/<k>`, `ec2:CreateAction`, `iam:PassedToService`, `aws:RequestedRegion`, …).
 */
export interface IamRequest {
  action: string;
  /** Full resource ARN, or `*` for actions without resource-level permissions. */
  resource: string;
  context: Record<string, string | string[]>;
  /**
   * The resource's own policy: for a resource of another account (cross-account requests need
   * the owner's grant too; e.g. a subnet shared through AWS RAM, whose share is that grant), or a
   * bucket, queue or bus policy in the same account (its Deny statements apply to every caller).
   */
  resourcePolicy?: PolicyDocument;
}

/** Allowed, or denied (implicitly: no statement allows; explicitly: a Deny matched). */
export type Decision = 'Allowed' | 'ImplicitlyDenied' | 'ExplicitlyDenied';

/** The outcome of one request. */
export interface Verdict {
  request: IamRequest;
  decision: Decision;
}

/** The simulator refused the request itself (unknown action, resource type not valid for the action, invalid policy). */
export class IamSimulationError extends Error {
  override name = 'IamSimulationError';
}

const PublicSsmParameter = /^arn:[^:]+:ssm:[^:]+::parameter\/aws\/service\//;

/** Account id of an ARN (`''` for account-less ARNs such as AMIs and public SSM parameters). */
function accountOf(arn: string, fallback: string): string {
  const parts = arn.split(':');
  return parts.length > 4 && /^[0-9]{12}$/.test(parts[4]) ? parts[4] : fallback;
}

/** Evaluates one request for a principal (a role ARN) holding identity policies: `evaluate`'s shape. */
export type Evaluate = (principal: string, policies: PolicyDocument[], request: IamRequest) => Promise<Decision>;

const simulators = new Map<string, Promise<typeof IamSimulate | undefined>>();

/** The simulator module, or undefined when `specifier` is not installed (any other load error is thrown). */
function loadSimulator(specifier: string): Promise<typeof IamSimulate | undefined> {
  let loaded = simulators.get(specifier);
  if (!loaded) {
    // A computed specifier: bundlers (esbuild) leave the import to run time instead of inlining the package.
    loaded = (import(specifier) as Promise<typeof IamSimulate>).catch((err: unknown) => {
      const e = err as { code?: string; message?: string };
      if ((e.code === 'ERR_MODULE_NOT_FOUND' || e.code === 'MODULE_NOT_FOUND') && e.message?.includes(`'${specifier}'`)) return undefined;
      throw err;
    });
    simulators.set(specifier, loaded);
  }
  return loaded;
}

/**
 * `evaluate` when the simulator package is installed (a checkout with devDependencies), else
 * undefined. `specifier` is for tests only.
 */
export async function loadEvaluator(specifier: string = IamSimulatorPackage): Promise<Evaluate | undefined> {
  return (await loadSimulator(specifier)) ? evaluate : undefined;
}

/**
 * Evaluates `request` for `principal` (a role ARN) holding the identity policies `policies`.
 * @throws IamSimulationError when the simulator cannot evaluate the request (the message names
 * action and resource), or is not installed.
 */
export async function evaluate(principal: string, policies: PolicyDocument[], request: IamRequest): Promise<Decision> {
  const simulator = await loadSimulator(IamSimulatorPackage);
  if (!simulator) throw new IamSimulationError(`${request.action} on ${request.resource}: ${IamSimulatorPackage} (a devDependency) is not installed`);
  const { runSimulation, runUnsafeSimulation } = simulator;
  // A service principal (`events.amazonaws.com`) has no ARN and no account: its request is judged
  // by the resource policy alone, in the resource's account.
  const service = !principal.startsWith('arn:');
  const account = service ? accountOf(request.resource, '000000000000') : accountOf(principal, '000000000000');
  const simulation: Simulation = {
    identityPolicies: policies.map((policy, i) => ({ name: `policy${i}`, policy })),
    serviceControlPolicies: [],
    resourceControlPolicies: [],
    ...(request.resourcePolicy ? { resourcePolicy: request.resourcePolicy } : {}),
    request: {
      principal,
      action: request.action,
      resource: { resource: request.resource, accountId: accountOf(request.resource, account) },
      contextVariables: { ...(service ? {} : { 'aws:PrincipalArn': principal, 'aws:PrincipalAccount': account }), ...request.context },
    },
  };
  // AWS-owned public SSM parameters have no account in their ARN (arn:aws:ssm:<region>::parameter/aws/service/…),
  // which the simulator's resource-type table (account required) does not recognise: evaluate the
  // policies without that input validation for them only.
  if (PublicSsmParameter.test(request.resource)) {
    const decision = runUnsafeSimulation(simulation, { simulationMode: 'Strict' });
    if (decision === 'Allowed' || decision === 'ImplicitlyDenied' || decision === 'ExplicitlyDenied') return decision;
    throw new IamSimulationError(`${request.action} on ${request.resource}: unexpected result ${String(decision)}`);
  }
  const result = await runSimulation(simulation, { simulationMode: 'Strict' });
  if (result.resultType === 'error') {
    throw new IamSimulationError(`${request.action} on ${request.resource}: ${result.errors.message}${detail(result.errors)}`);
  }
  const overall = result.overallResult;
  if (overall === 'Allowed' || overall === 'ImplicitlyDenied' || overall === 'ExplicitlyDenied') return overall;
  throw new IamSimulationError(`${request.action} on ${request.resource}: unexpected result ${String(overall)}`);
}

function detail(errors: object): string {
  const rest = Object.entries(errors).filter(([k]) => k !== 'message');
  return rest.length ? ` (${JSON.stringify(Object.fromEntries(rest))})` : '';
}

/** Evaluates every request; the verdicts in the same order. */
export async function evaluateAll(principal: string, policies: PolicyDocument[], requests: IamRequest[]): Promise<Verdict[]> {
  const out: Verdict[] = [];
  for (const request of requests) out.push({ request, decision: await evaluate(principal, policies, request) });
  return out;
}
