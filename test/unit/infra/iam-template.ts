/**
 * Reads the IAM policies out of a synthesized CloudFormation template and resolves them to the
 * concrete documents IAM would hold after deployment in one account and region: `Ref` and
 * `Fn::GetAtt … Arn` of the stack's own resources become the ARNs CloudFormation would give them
 * (physical name = the explicit name property, else the logical id), pseudo parameters their values.
 */
import type { PolicyDocument } from '../../../infra/local/iam/evaluate.ts';

/** Where the template is deployed. */
export interface Deployment {
  partition: string;
  region: string;
  account: string;
}

type Resources = Record<string, { Type: string; Properties?: any }>;

/** Physical name of a resource (what `Ref` returns for named resources). */
function physicalName(resources: Resources, id: string): string {
  const r = resources[id];
  const p = r?.Properties ?? {};
  return String(
    p.RoleName ?? p.TableName ?? p.Name ?? p.QueueName ?? p.FunctionName ?? p.StateMachineName ?? p.LogGroupName ?? p.InstanceProfileName ?? p.BucketName ?? id,
  );
}

/** The ARN CloudFormation's `Fn::GetAtt [id, Arn]` returns for the resource types nodefleet uses. */
export function arnOf(resources: Resources, id: string, d: Deployment): string {
  const r = resources[id];
  if (!r) throw new Error(`no resource ${id} in the template`);
  const name = physicalName(resources, id);
  const { partition: p, region, account } = d;
  switch (r.Type) {
    case 'AWS::IAM::Role':
      return `arn:${p}:iam::${account}:role/${name}`;
    case 'AWS::IAM::InstanceProfile':
      return `arn:${p}:iam::${account}:instance-profile/${name}`;
    case 'AWS::DynamoDB::Table':
      return `arn:${p}:dynamodb:${region}:${account}:table/${name}`;
    case 'AWS::Events::EventBus':
      return `arn:${p}:events:${region}:${account}:event-bus/${name}`;
    case 'AWS::StepFunctions::StateMachine':
      return `arn:${p}:states:${region}:${account}:stateMachine:${name}`;
    case 'AWS::SQS::Queue':
      return `arn:${p}:sqs:${region}:${account}:${name}`;
    case 'AWS::Lambda::Function':
      return `arn:${p}:lambda:${region}:${account}:function:${name}`;
    case 'AWS::Logs::LogGroup':
      return `arn:${p}:logs:${region}:${account}:log-group:${name}:*`;
    case 'AWS::SNS::Topic':
      return `arn:${p}:sns:${region}:${account}:${name}`;
    case 'AWS::S3::Bucket':
      return `arn:${p}:s3:::${name}`;
    case 'AWS::Events::Rule': {
      // A rule on a custom bus has the bus name in its ARN.
      const bus = r.Properties?.EventBusName ? `${resolve(r.Properties.EventBusName, resources, d)}/` : '';
      return `arn:${p}:events:${region}:${account}:rule/${bus}${name}`;
    }
    default:
      throw new Error(`no ARN rule for ${r.Type} (${id})`);
  }
}

/** Resolves the intrinsic functions CDK emits in policies. */
export function resolve(value: unknown, resources: Resources, d: Deployment): any {
  if (Array.isArray(value)) return value.map((v) => resolve(v, resources, d));
  if (!value || typeof value !== 'object') return value;
  const o = value as Record<string, any>;
  if ('Ref' in o) {
    switch (o.Ref) {
      case 'AWS::Partition':
        return d.partition;
      case 'AWS::Region':
        return d.region;
      case 'AWS::AccountId':
        return d.account;
      case 'AWS::URLSuffix':
        return d.partition === 'aws-cn' ? 'amazonaws.com.cn' : 'amazonaws.com';
      default:
        // Ref of a state machine or topic is its ARN, of a queue its URL, of the rest its name.
        if (['AWS::StepFunctions::StateMachine', 'AWS::SNS::Topic'].includes(resources[o.Ref]?.Type)) return arnOf(resources, o.Ref, d);
        return resources[o.Ref]?.Type === 'AWS::SQS::Queue'
          ? `https://sqs.${d.region}.amazonaws.com/${d.account}/${physicalName(resources, o.Ref)}`
          : physicalName(resources, o.Ref);
    }
  }
  if ('Fn::GetAtt' in o) {
    const [id, attr] = o['Fn::GetAtt'] as [string, string];
    if (attr === 'Arn') return arnOf(resources, id, d);
    throw new Error(`Fn::GetAtt ${id}.${attr} is not resolved by this reader`);
  }
  if ('Fn::Join' in o) {
    const [sep, parts] = o['Fn::Join'] as [string, unknown[]];
    return parts.map((x) => resolve(x, resources, d)).join(sep);
  }
  return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, resolve(v, resources, d)]));
}

/** The resolved inline policy documents attached to each role, by the role's logical id. */
export function rolePolicies(template: { Resources: Resources }, d: Deployment): Map<string, PolicyDocument[]> {
  const resources = template.Resources;
  const out = new Map<string, PolicyDocument[]>();
  for (const [id, r] of Object.entries(resources)) {
    if (r.Type !== 'AWS::IAM::Role') continue;
    const docs: PolicyDocument[] = (r.Properties?.Policies ?? []).map((p: any) => resolve(p.PolicyDocument, resources, d));
    out.set(id, docs);
  }
  for (const r of Object.values(resources)) {
    if (r.Type !== 'AWS::IAM::Policy') continue;
    for (const role of r.Properties.Roles as { Ref: string }[]) out.get(role.Ref)?.push(resolve(r.Properties.PolicyDocument, resources, d));
  }
  return out;
}

/**
 * The resolved resource policy of a bucket, queue or event bus (by the resource's logical id):
 * its AWS::S3::BucketPolicy, its AWS::SQS::QueuePolicy, or the bus's inline `Policy`.
 * @throws Error when the resource has none.
 */
export function resourcePolicyOf(resources: Resources, id: string, d: Deployment): PolicyDocument {
  const r = resources[id];
  const refersTo = (x: any) => x?.Ref === id;
  let doc: unknown;
  if (r?.Type === 'AWS::Events::EventBus') doc = r.Properties?.Policy;
  else {
    const policy = Object.values(resources).find(
      (x) =>
        (x.Type === 'AWS::S3::BucketPolicy' && refersTo(x.Properties.Bucket)) ||
        (x.Type === 'AWS::SQS::QueuePolicy' && (x.Properties.Queues as unknown[]).some(refersTo)),
    );
    doc = policy?.Properties.PolicyDocument;
  }
  if (!doc) throw new Error(`no resource policy for ${id}`);
  return resolve(doc, resources, d);
}

/** The logical id of the one resource of `type` whose id is `prefix` + CDK's 8-hex suffix. */
export function logicalIdOf(resources: Resources, type: string, prefix: string): string {
  const ids = Object.keys(resources).filter((id) => resources[id].Type === type && new RegExp(`^${prefix}[A-F0-9]{8}$`).test(id));
  if (ids.length !== 1) throw new Error(`expected one ${type} ${prefix}*, found ${ids.join(', ') || 'none'}`);
  return ids[0];
}
