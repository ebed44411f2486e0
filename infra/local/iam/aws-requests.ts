/**
 * Which IAM authorization requests an AWS API call makes, built from the call's input (the SDK's
 * input shape: `TagSpecifications[].Tags[]`; the EC2 query spelling `TagSpecification[].Tag[]` is
 * read too, so the local EC2 server can pass what it parsed). One mapping for the IAM simulation
 * test (test/unit/infra/iam-simulation.test.ts) and the local EC2 server's enforcement.
 *
 * The EC2 rules, from the EC2 API reference, the Service Authorization Reference ("Actions,
 * resources, and condition keys for Amazon EC2") and the EC2 Fleet user guide:
 * - A resource a call creates is authorized on `arn:…:<type>/*` with the tags the request applies to
 *   it as `aws:RequestTag/<key>` and `aws:TagKeys`; tags applied at creation also need
 *   `ec2:CreateTags` with `ec2:CreateAction` = the creating call.
 * - CreateFleet (type instant) launches through RunInstances on the caller's behalf (EC2 Fleet
 *   "permissions for EC2 Fleet users" lists ec2:RunInstances): every resource the launch touches
 *   is authorized for `ec2:RunInstances`, and those the CreateFleet action lists resource-level
 *   permissions for (fleet, instance, volume, image, subnet, launch template, capacity
 *   reservation, placement group) for `ec2:CreateFleet` as well.
 * - Tags reach a launched resource from the fleet's TagSpecifications and from the launch
 *   template's `LaunchTemplateData.TagSpecifications` (instance, volume, network-interface,
 *   spot-instances-request). A spot launch creates a spot-instances-request; an on-demand one does not.
 * - An existing resource is authorized on its own ARN with its tags as `aws:ResourceTag/<key>`;
 *   subnets and security groups shared from another account carry that account in their ARN.
 * - A reserved launch (launch template `CapacityReservationSpecification.CapacityReservationTarget`)
 *   uses the capacity reservation: `ec2:RunInstances` and `ec2:CreateFleet` on its ARN (its owner's
 *   account when shared through AWS RAM).
 * - The instance profile in the launch template passes its role: `iam:PassRole` on the role with
 *   `iam:PassedToService` = `ec2.amazonaws.com` (`ec2.amazonaws.com.cn` in the aws-cn partition).
 * - Describe* have no resource-level permissions: `*`, with `aws:RequestedRegion`.
 * - PutEvents: each entry on its bus, with `events:source` and `events:detail-type`.
 * - DynamoDB item calls and Query: `dynamodb:LeadingKeys`, the partition key value they name.
 */
import { tableCreateInput } from '../../../shared/api/contract.ts';
import type { IamRequest } from './evaluate.ts';

/** Where a call is made and what the caller can see of existing resources. */
export interface RequestContext {
  partition: string;
  region: string;
  /** The caller's account. */
  account: string;
  /** Tags of an existing EC2 resource by id (instance, launch template); undefined = unknown. */
  tagsOf?: (resourceId: string) => Record<string, string> | undefined;
  /** Owner account of a subnet or security group (shared VPC); default the caller's. */
  ownerOf?: (resourceId: string) => string | undefined;
  /**
   * The launch template a CreateFleet names, as EC2 stores it: id, tags, and its data's tag
   * specifications and instance profile. Undefined when it does not exist.
   */
  launchTemplate?: (nameOrId: string) => StoredLaunchTemplate | undefined;
  /** The role inside an instance profile (name → role ARN); default: a role of the same name. */
  roleOfInstanceProfile?: (profileName: string) => string | undefined;
}

/** A launch template as the launch sees it. */
export interface StoredLaunchTemplate {
  id: string;
  tags: Record<string, string>;
  /** `LaunchTemplateData` (SDK or query spelling). */
  data: Record<string, unknown>;
}

type Json = Record<string, any>;

/** Resource types ec2:CreateFleet has resource-level permissions for (Service Authorization Reference). */
const CreateFleetResourceTypes = new Set(['capacity-reservation', 'fleet', 'image', 'instance', 'launch-template', 'placement-group', 'subnet', 'volume']);

function asList(v: unknown): any[] {
  if (v === undefined || v === null) return [];
  return Array.isArray(v) ? v.filter((x) => x !== undefined) : [v];
}

/** Tag specifications of an input (`TagSpecifications` or the query's `TagSpecification`) → resource type → tags. */
export function tagSpecifications(input: Json | undefined): Map<string, Record<string, string>> {
  const out = new Map<string, Record<string, string>>();
  for (const spec of asList(input?.TagSpecifications ?? input?.TagSpecification)) {
    const type = String(spec?.ResourceType ?? '');
    const tags = out.get(type) ?? {};
    for (const t of asList(spec?.Tags ?? spec?.Tag)) if (t?.Key !== undefined) tags[String(t.Key)] = String(t.Value ?? '');
    out.set(type, tags);
  }
  return out;
}

function requestTagContext(tags: Record<string, string>): Record<string, string | string[]> {
  const ctx: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(tags)) ctx[`aws:RequestTag/${k}`] = v;
  if (Object.keys(tags).length > 0) ctx['aws:TagKeys'] = Object.keys(tags);
  return ctx;
}

function resourceTagContext(tags: Record<string, string> | undefined): Record<string, string> {
  const ctx: Record<string, string> = {};
  for (const [k, v] of Object.entries(tags ?? {})) ctx[`aws:ResourceTag/${k}`] = v;
  return ctx;
}

function ec2Arn(c: RequestContext, resource: string, account: string = c.account): string {
  return `arn:${c.partition}:ec2:${c.region}:${account}:${resource}`;
}

/** The EC2 service principal roles are passed to in this partition. */
export function ec2ServicePrincipal(partition: string): string {
  return partition === 'aws-cn' ? 'ec2.amazonaws.com.cn' : 'ec2.amazonaws.com';
}

/** A resource the call creates, with the tags the request applies to it. */
function creates(c: RequestContext, actions: string[], resourceType: string, tags: Record<string, string>, createAction: string): IamRequest[] {
  const resource = ec2Arn(c, `${resourceType}/*`);
  const out: IamRequest[] = actions.map((action) => ({ action, resource, context: { 'aws:RequestedRegion': c.region, ...requestTagContext(tags) } }));
  if (Object.keys(tags).length > 0) {
    out.push({
      action: 'ec2:CreateTags',
      resource,
      context: { 'aws:RequestedRegion': c.region, 'ec2:CreateAction': createAction, ...requestTagContext(tags) },
    });
  }
  return out;
}

function uses(c: RequestContext, actions: string[], arn: string, tags?: Record<string, string>): IamRequest[] {
  return actions.map((action) => ({ action, resource: arn, context: { 'aws:RequestedRegion': c.region, ...resourceTagContext(tags) } }));
}

/** The launch actions for a resource type: RunInstances, plus CreateFleet where it has resource-level permissions. */
function launchActions(resourceType: string): string[] {
  return CreateFleetResourceTypes.has(resourceType) ? ['ec2:CreateFleet', 'ec2:RunInstances'] : ['ec2:RunInstances'];
}

/**
 * The authorization requests of one EC2 (or SSM, EKS, …) call.
 * @param action `service:Operation`, e.g. `ec2:CreateFleet`.
 * @param input the call's input.
 * @throws Error for an EC2 operation this mapping does not model (so a new call cannot pass unchecked).
 */
export function authorizationRequests(action: string, input: Json, c: RequestContext): IamRequest[] {
  const region = { 'aws:RequestedRegion': c.region };
  if (/^ec2:Describe/.test(action)) return [{ action, resource: '*', context: region }];
  switch (action) {
    case 'ec2:CreateLaunchTemplate': {
      const tags = tagSpecifications(input).get('launch-template') ?? {};
      return creates(c, ['ec2:CreateLaunchTemplate'], 'launch-template', tags, 'CreateLaunchTemplate');
    }
    case 'ec2:DeleteLaunchTemplate': {
      const id = String(input.LaunchTemplateId ?? input.LaunchTemplateName ?? '');
      const lt = c.launchTemplate?.(id);
      return uses(c, [action], ec2Arn(c, `launch-template/${lt?.id ?? id}`), lt?.tags);
    }
    case 'ec2:TerminateInstances':
      return asList(input.InstanceIds ?? input.InstanceId).flatMap((id: string) => uses(c, [action], ec2Arn(c, `instance/${id}`), c.tagsOf?.(id)));
    case 'ec2:CreateFleet':
      return createFleetRequests(input, c);
    case 'ssm:GetParameter':
    case 'ssm:GetParameters': {
      const names: string[] = action === 'ssm:GetParameter' ? [String(input.Name ?? '')] : asList(input.Names).map(String);
      // Public parameters (`/aws/service/…`) are owned by AWS: no account in their ARN.
      return names.map((n) => ({
        action,
        resource: `arn:${c.partition}:ssm:${c.region}:${n.startsWith('/aws/service/') ? '' : c.account}:parameter/${n.replace(/^\//, '')}`,
        context: region,
      }));
    }
    case 'eks:DescribeCluster':
      return [{ action, resource: `arn:${c.partition}:eks:${c.region}:${c.account}:cluster/${String(input.name ?? '')}`, context: region }];
    case 'states:StartExecution':
      return [{ action, resource: String(input.stateMachineArn ?? ''), context: region }];
    case 's3:GetObject':
    case 's3:PutObject':
      return [{ action, resource: `arn:${c.partition}:s3:::${String(input.Bucket ?? '')}/${String(input.Key ?? '')}`, context: region }];
    case 'pricing:GetProducts':
      return [{ action, resource: '*', context: {} }];
    case 'events:PutEvents': {
      // Each entry is authorized on its bus with its own source and detail-type (a denied entry fails alone).
      const out = new Map<string, IamRequest>();
      for (const e of asList(input.Entries) as Json[]) {
        const bus = String(e?.EventBusName ?? 'default');
        const resource = bus.startsWith('arn:') ? bus : `arn:${c.partition}:events:${c.region}:${c.account}:event-bus/${bus}`;
        const context = { ...region, 'events:source': String(e?.Source ?? ''), 'events:detail-type': String(e?.DetailType ?? '') };
        out.set(JSON.stringify([resource, context]), { action, resource, context });
      }
      return [...out.values()];
    }
    default:
      if (/^dynamodb:(GetItem|PutItem|UpdateItem|DeleteItem|Query|Scan)$/.test(action)) {
        const table = `arn:${c.partition}:dynamodb:${c.region}:${c.account}:table/${String(input.TableName ?? '')}`;
        const leading = leadingKey(input);
        return [
          {
            action,
            resource: input.IndexName ? `${table}/index/${String(input.IndexName)}` : table,
            context: { ...region, ...(leading === undefined ? {} : { 'dynamodb:LeadingKeys': [leading] }) },
          },
        ];
      }
      if (/^sqs:/.test(action)) {
        const url = String(input.QueueUrl ?? '');
        const [, , , account, name] = url.split('/');
        return [{ action, resource: String(input.QueueArn ?? `arn:${c.partition}:sqs:${c.region}:${account}:${name}`), context: region }];
      }
      throw new Error(`no authorization mapping for ${action}: add it to infra/local/iam/aws-requests.ts`);
  }
}

/** A key attribute's value, from the document client's plain value or the base client's `{ S }`. */
function keyValue(v: unknown): string | undefined {
  if (v === undefined || v === null) return undefined;
  return typeof v === 'object' && 'S' in (v as Json) ? String((v as Json).S) : String(v);
}

/**
 * `dynamodb:LeadingKeys`: the partition key value a DynamoDB item call or Query names (of the
 * queried index: a GSI's own hash key; the table's for an LSI), from `Key` / `Item`, or from the
 * equality on that key in `KeyConditionExpression`. Undefined for a Scan.
 */
function leadingKey(input: Json): string | undefined {
  const schema = tableCreateInput('');
  const gsi = schema.GlobalSecondaryIndexes.find((i) => i.IndexName === input.IndexName);
  const hash = (gsi?.KeySchema ?? schema.KeySchema).find((k) => k.KeyType === 'HASH')!.AttributeName;
  const item = (input.Key ?? input.Item) as Json | undefined;
  if (item) return keyValue(item[hash]);
  const names = (input.ExpressionAttributeNames ?? {}) as Record<string, string>;
  for (const m of String(input.KeyConditionExpression ?? '').matchAll(/(#?[A-Za-z0-9_]+)\s*=\s*(:[A-Za-z0-9_]+)/g)) {
    if ((names[m[1]] ?? m[1]) === hash) return keyValue((input.ExpressionAttributeValues as Json | undefined)?.[m[2]]);
  }
  return undefined;
}

/** CreateFleet: the fleet, what the launch creates (per capacity type) and what it uses. */
function createFleetRequests(input: Json, c: RequestContext): IamRequest[] {
  const out: IamRequest[] = [];
  const fleetTags = tagSpecifications(input);
  const capacityType = String(input.TargetCapacitySpecification?.DefaultTargetCapacityType ?? 'on-demand');
  out.push(...creates(c, ['ec2:CreateFleet'], 'fleet', fleetTags.get('fleet') ?? {}, 'CreateFleet'));

  const configs = asList(input.LaunchTemplateConfigs);
  const templates = new Map<string, StoredLaunchTemplate | undefined>();
  for (const cfg of configs) {
    const spec = cfg?.LaunchTemplateSpecification ?? {};
    const key = String(spec.LaunchTemplateId ?? spec.LaunchTemplateName ?? '');
    if (!templates.has(key)) templates.set(key, c.launchTemplate?.(key));
  }
  const seen = new Set<string>();
  const once = (reqs: IamRequest[]) => {
    for (const r of reqs) {
      const k = `${r.action} ${r.resource} ${JSON.stringify(r.context)}`;
      if (!seen.has(k)) {
        seen.add(k);
        out.push(r);
      }
    }
  };
  for (const [key, lt] of templates) {
    once(uses(c, launchActions('launch-template'), ec2Arn(c, `launch-template/${lt?.id ?? key}`), lt?.tags));
    const ltTags = tagSpecifications(lt?.data);
    const created: [string, Record<string, string>][] = [
      ['instance', { ...(ltTags.get('instance') ?? {}), ...(fleetTags.get('instance') ?? {}) }],
      ['volume', { ...(ltTags.get('volume') ?? {}), ...(fleetTags.get('volume') ?? {}) }],
      ['network-interface', { ...(ltTags.get('network-interface') ?? {}), ...(fleetTags.get('network-interface') ?? {}) }],
    ];
    if (capacityType === 'spot') created.push(['spot-instances-request', ltTags.get('spot-instances-request') ?? {}]);
    for (const [type, tags] of created) once(creates(c, launchActions(type), type, tags, 'CreateFleet'));

    const data: Json = lt?.data ?? {};
    const groups = [
      ...asList(data.SecurityGroupIds ?? data.SecurityGroupId),
      ...asList(data.NetworkInterfaces ?? data.NetworkInterface).flatMap((n: Json) => asList(n?.Groups ?? n?.SecurityGroupId)),
    ];
    for (const g of groups) once(uses(c, launchActions('security-group'), ec2Arn(c, `security-group/${g}`, c.ownerOf?.(String(g)) ?? c.account)));
    // A reserved launch targets a capacity reservation (Karpenter's reserved launch templates set
    // CapacityReservationSpecification.CapacityReservationTarget); an ODCR may be shared from another account.
    const target = data.CapacityReservationSpecification?.CapacityReservationTarget ?? {};
    if (target.CapacityReservationId) {
      const id = String(target.CapacityReservationId);
      once(uses(c, launchActions('capacity-reservation'), ec2Arn(c, `capacity-reservation/${id}`, c.ownerOf?.(id) ?? c.account)));
    }
    if (target.CapacityReservationResourceGroupArn) {
      throw new Error('no authorization mapping for a capacity reservation resource group target: add it to infra/local/iam/aws-requests.ts');
    }
    const profile = data.IamInstanceProfile?.Name ?? data.IamInstanceProfile?.Arn?.split('/').pop();
    if (profile) {
      const role = c.roleOfInstanceProfile?.(String(profile)) ?? `arn:${c.partition}:iam::${c.account}:role/${profile}`;
      once([{ action: 'iam:PassRole', resource: role, context: { 'iam:PassedToService': ec2ServicePrincipal(c.partition) } }]);
    }
  }
  for (const cfg of configs) {
    for (const o of asList(cfg?.Overrides ?? cfg?.Override)) {
      if (o?.ImageId) once(uses(c, launchActions('image'), `arn:${c.partition}:ec2:${c.region}::image/${o.ImageId}`));
      if (o?.SubnetId) once(uses(c, launchActions('subnet'), ec2Arn(c, `subnet/${o.SubnetId}`, c.ownerOf?.(String(o.SubnetId)) ?? c.account)));
    }
  }
  return out;
}
