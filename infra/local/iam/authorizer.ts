/**
 * The embedded environment's IAM: every call to the local EC2/SSM endpoint is authorized against
 * the IAM policy of the function that makes it, as AWS would. The caller is known by the access
 * key id its SDK clients sign with (one per function, environment.ts); its policy is the one the
 * CDK stack deploys for that function, built from the same source (shared/api/iam-policy.ts) with
 * the environment's account, region and ARNs. A denied call fails the way EC2 fails it
 * (`UnauthorizedOperation`, HTTP 403; SSM `AccessDeniedException`), naming action and resource.
 */
import { IamSimulatorPackage, type Decision, type Evaluate, type IamRequest, type PolicyDocument } from './evaluate.ts';
import { authorizationRequests, type RequestContext } from './aws-requests.ts';

/** The one line an environment without the IAM simulator says (its calls are not checked). */
export const IamNotEnforced = `IAM not enforced: ${IamSimulatorPackage} (a devDependency) is not installed, so EC2/SSM calls are not checked against the functions' policies`;

/** A caller: the role its calls are made as, and that role's identity policies. */
export interface LocalPrincipal {
  /** Function name (for messages). */
  name: string;
  roleArn: string;
  policies: PolicyDocument[];
}

/** Why a call was refused. */
export interface Denial {
  /** EC2 error code: `AuthFailure` (unknown caller) or `UnauthorizedOperation`. */
  code: 'AuthFailure' | 'UnauthorizedOperation';
  message: string;
  /** The request that was denied (undefined for AuthFailure). */
  request?: IamRequest;
}

/** The access key id of a SigV4 `Authorization` header (`… Credential=<id>/<date>/<region>/<service>/aws4_request, …`). */
export function accessKeyIdOf(authorization: string | undefined): string | undefined {
  return authorization ? /Credential=([^/,\s]+)\//.exec(authorization)?.[1] : undefined;
}

/** Authorizes calls by access key id. */
export class LocalAuthorizer {
  /** Every denial, in order (the summary and tests read them). */
  readonly denials: (Denial & { principal?: string; action: string })[] = [];
  /** Calls allowed, by `function action` (e.g. `provisioner ec2:CreateFleet`). */
  readonly allowed = new Map<string, number>();

  /**
   * Decisions already made, by principal and request: the policies of a principal never change
   * during a run, so the same request gets the same decision (gc's DescribeInstances every minute,
   * a launch's subnets and images). Evaluation is CPU work on the event loop every function shares.
   */
  private readonly decided = new Map<string, Decision>();

  /** @param evaluator policy evaluation (evaluate.ts `evaluate` / `loadEvaluator`); undefined: not enforced, every call of a known caller is let through (IamNotEnforced). */
  constructor(
    private readonly principals: ReadonlyMap<string, LocalPrincipal>,
    private readonly evaluator: Evaluate | undefined,
  ) {}

  /** Whether calls are checked against the callers' policies. */
  get enforced(): boolean {
    return this.evaluator !== undefined;
  }

  /**
   * Undefined when every authorization request of the call is allowed, else the first denial.
   * @throws Error when the call has no authorization mapping (aws-requests.ts): a new call is never let through unchecked.
   */
  async authorize(accessKeyId: string | undefined, action: string, input: Record<string, unknown>, ctx: RequestContext): Promise<Denial | undefined> {
    const principal = accessKeyId ? this.principals.get(accessKeyId) : undefined;
    if (!principal) {
      const denial: Denial = {
        code: 'AuthFailure',
        message: `AWS was not able to validate the provided access credentials (access key ${accessKeyId ?? 'none'} belongs to no function of this environment)`,
      };
      this.denials.push({ ...denial, action });
      return denial;
    }
    const requests = authorizationRequests(action, input, ctx);
    const evaluator = this.evaluator;
    for (const request of requests) {
      if (!evaluator) break; // not enforced (IamNotEnforced)
      const key = `${accessKeyId} ${JSON.stringify(request)}`;
      let decision = this.decided.get(key);
      if (decision === undefined) {
        decision = await evaluator(principal.roleArn, principal.policies, request);
        this.decided.set(key, decision);
      }
      if (decision === 'Allowed') continue;
      const denial: Denial = {
        code: 'UnauthorizedOperation',
        message: `You are not authorized to perform this operation. User: ${principal.roleArn} (${principal.name}) is not authorized to perform: ${request.action} on resource: ${request.resource} because ${decision === 'ExplicitlyDenied' ? 'an explicit deny' : 'no identity-based policy allows'} the ${request.action} action (context ${JSON.stringify(request.context)})`,
        request,
      };
      this.denials.push({ ...denial, principal: principal.name, action });
      return denial;
    }
    const key = `${principal.name} ${action}`;
    this.allowed.set(key, (this.allowed.get(key) ?? 0) + 1);
    return undefined;
  }
}
