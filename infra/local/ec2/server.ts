/**
 * Local HTTP endpoint behind the real AWS SDK v3 clients for EC2 (query protocol, XML) and,
 * on the same port, the two JSON-protocol calls the launch path needs from SSM (AMI alias
 * resolution through the public `/aws/service/eks/optimized-ami/…` parameters) and, for
 * publishers that use @aws-sdk/client-eventbridge, EventBridge PutEvents.
 *
 * Point `NODEFLEET_EC2_ENDPOINT` (and the SSM / EventBridge endpoint overrides) at `url`.
 * Unsupported actions answer `InvalidAction` (HTTP 400) and are listed in `unsupported`, so a
 * missing operation shows up in the summary instead of being faked.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { localUuid } from '../ids.ts';
import { Ec2ApiError, InstanceStateCodes, type LocalEc2, type LocalInstance, type Ec2CapacityType, type FleetOverride } from './local-ec2.ts';
import { filtersOf, list, obj, parseQueryBody, str, tagsOf, xmlError, xmlResponse, type QueryValue, type XmlValue } from './query-protocol.ts';
import { accessKeyIdOf, type LocalAuthorizer } from '../iam/authorizer.ts';
import type { RequestContext } from '../iam/aws-requests.ts';

/** One PutEvents entry as the JSON protocol carries it. */
export interface PutEventsEntry {
  Source?: string;
  DetailType?: string;
  Detail?: string;
  Resources?: string[];
  EventBusName?: string;
  Time?: number | string;
}

export interface AwsServerOptions {
  ec2: LocalEc2;
  /** Kubernetes minor version for SSM AMI parameters (default "1.32"). */
  kubernetesVersion?: string;
  /** Receives PutEvents entries; returns event ids (or an error code per entry). */
  putEvents?: (entries: PutEventsEntry[]) => { eventId?: string; errorCode?: string; errorMessage?: string }[];
  /** Cluster name for the discovery tag on subnets and security groups. */
  clusterName: string;
  /** Fault injection (infra/local/faults.ts): may throw an Ec2ApiError before an EC2 action runs. */
  fault?: (action: string) => void;
  /**
   * When set, every call is authorized against the calling function's IAM policy first (the
   * caller = the access key id of its SigV4 signature); a denied call fails as EC2 / SSM fail it.
   */
  authorizer?: LocalAuthorizer;
  /** The role an instance profile holds (PassRole of a launch); default: a role named like the profile. */
  roleOfInstanceProfile?: (profileName: string) => string | undefined;
}

/** The IAM action of a JSON-protocol target (`AmazonSSM.GetParameter` → `ssm:GetParameter`). */
const JsonTargetActions: Record<string, string> = {
  'AmazonSSM.GetParameter': 'ssm:GetParameter',
  'AmazonSSM.GetParameters': 'ssm:GetParameters',
  'AWSEvents.PutEvents': 'events:PutEvents',
};

/** EC2's answer when a launch template tags spot requests and the launch creates none (seen in aws/karpenter-provider-aws#5850). */
export const SpotRequestTagsOnOnDemandMessage =
  'You cannot specify tags for Spot instances requests if there are no Spot instances requests being created by the request.';

interface LaunchTemplate {
  id: string;
  name: string;
  createdMs: number;
  version: number;
  data: Record<string, QueryValue>;
  tags: Record<string, string>;
}

/** AMI ids the local region serves, per architecture (EC2 `Architecture` names). */
const LocalAmis: Record<string, { id: string; name: string }> = {
  x86_64: { id: 'ami-0a1b2c3d4e5f60718', name: 'amazon-eks-node-al2023-x86_64-standard-1.32-v20250228' },
  arm64: { id: 'ami-0b1c2d3e4f5a60719', name: 'amazon-eks-node-al2023-arm64-standard-1.32-v20250228' },
};

/** The local AWS endpoint (EC2 + SSM + EventBridge PutEvents). */
export class LocalAwsServer {
  readonly unsupported = new Set<string>();
  private server?: Server;
  private readonly templates = new Map<string, LaunchTemplate>();
  private readonly ec2: LocalEc2;
  private readonly opts: AwsServerOptions;
  private readonly securityGroupId = 'sg-0123456789abcdef0';

  constructor(opts: AwsServerOptions) {
    this.opts = opts;
    this.ec2 = opts.ec2;
  }

  /** Listens on 127.0.0.1 (port 0 = any free port); returns the base URL. */
  async start(port = 0): Promise<string> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve));
    return this.url;
  }

  get url(): string {
    const a = this.server?.address() as AddressInfo | null;
    if (!a) throw new Error('LocalAwsServer is not started');
    return `http://127.0.0.1:${a.port}`;
  }

  async stop(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections?.();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
    this.server = undefined;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const requestId = localUuid();
    const target = req.headers['x-amz-target'];
    try {
      if (typeof target === 'string') {
        const input = body ? JSON.parse(body) : {};
        await this.authorize(req, JsonTargetActions[target] ?? target, input, true);
        const out = this.json(target, input);
        res.writeHead(200, { 'content-type': 'application/x-amz-json-1.1', 'x-amzn-requestid': requestId });
        res.end(JSON.stringify(out));
        return;
      }
      const q = parseQueryBody(body);
      const action = str(q.Action) ?? '';
      // EC2 resolves the launch templates a launch names before it can authorize the resources the
      // templates create: a missing one is InvalidLaunchTemplateName.NotFoundException, not a denial
      // (nodefleet drops its launch-template cache on NotFound and creates it again; a denial left a
      // template gc had collected unusable for good: chaos seed 1). Every config's template, not only
      // the first's: with one template per maxPods a fleet names several, and a collected second one
      // was a denial for every later launch of the warm provisioner (chaos seeds 1090, 1136).
      if (action === 'CreateFleet') this.fleetTemplates(q);
      await this.authorize(req, `ec2:${action}`, q, false);
      this.opts.fault?.(action);
      const out = this.query(action, q);
      res.writeHead(200, { 'content-type': 'text/xml;charset=UTF-8', 'x-amzn-requestid': requestId });
      res.end(xmlResponse(action, requestId, out));
    } catch (err) {
      const e = err instanceof Ec2ApiError ? err : new Ec2ApiError('InternalError', (err as Error).message, 500);
      if (typeof target === 'string') {
        res.writeHead(e.httpStatus, { 'content-type': 'application/x-amz-json-1.1', 'x-amzn-requestid': requestId });
        res.end(JSON.stringify({ __type: e.code, message: e.message }));
      } else {
        res.writeHead(e.httpStatus, { 'content-type': 'text/xml;charset=UTF-8', 'x-amzn-requestid': requestId });
        res.end(xmlError(e.code, e.message, requestId));
      }
    }
  }

  /** What the caller's IAM policy says about this call (nothing when no authorizer is set). @throws Ec2ApiError when denied. */
  private async authorize(req: IncomingMessage, action: string, input: Record<string, unknown>, json: boolean): Promise<void> {
    const authorizer = this.opts.authorizer;
    if (!authorizer) return;
    const ctx: RequestContext = {
      partition: 'aws',
      region: this.ec2.region,
      account: this.ec2.accountId,
      tagsOf: (id) => this.ec2.instances.get(id)?.tags,
      launchTemplate: (key) => {
        const t = [...this.templates.values()].find((x) => x.name === key || x.id === key);
        return t && { id: t.id, tags: t.tags, data: t.data };
      },
      roleOfInstanceProfile: this.opts.roleOfInstanceProfile,
    };
    const denial = await authorizer.authorize(accessKeyIdOf(req.headers.authorization), action, input, ctx);
    if (!denial) return;
    if (json) throw new Ec2ApiError(denial.code === 'AuthFailure' ? 'UnrecognizedClientException' : 'AccessDeniedException', denial.message, 400);
    throw new Ec2ApiError(denial.code, denial.message, denial.code === 'AuthFailure' ? 401 : 403);
  }

  /** JSON-protocol operations (SSM, EventBridge). */
  private json(target: string, input: any): unknown {
    switch (target) {
      case 'AmazonSSM.GetParameter': {
        const p = this.ssmParameter(String(input.Name ?? ''));
        if (!p) throw new Ec2ApiError('ParameterNotFound', `Parameter ${input.Name} not found`);
        return { Parameter: p };
      }
      case 'AmazonSSM.GetParameters': {
        const names: string[] = input.Names ?? [];
        const found = names.map((n) => this.ssmParameter(n)).filter((p) => p !== undefined);
        return { Parameters: found, InvalidParameters: names.filter((n) => !this.ssmParameter(n)) };
      }
      case 'AWSEvents.PutEvents': {
        const entries: PutEventsEntry[] = input.Entries ?? [];
        if (!this.opts.putEvents) throw new Ec2ApiError('InternalException', 'no local event bus attached', 500);
        const results = this.opts.putEvents(entries);
        return {
          FailedEntryCount: results.filter((r) => r.errorCode).length,
          Entries: results.map((r) => (r.errorCode ? { ErrorCode: r.errorCode, ErrorMessage: r.errorMessage } : { EventId: r.eventId })),
        };
      }
      default:
        this.unsupported.add(target);
        throw new Ec2ApiError('UnknownOperationException', `${target} is not supported by the local endpoint`);
    }
  }

  /** `/aws/service/eks/optimized-ami/<k8s>/amazon-linux-2023/<arch>/standard/recommended/image_id` and friends. */
  private ssmParameter(name: string): { Name: string; Type: string; Value: string; Version: number; DataType: string } | undefined {
    if (!name.startsWith('/aws/service/')) return undefined;
    const arch = /arm64/.test(name) ? 'arm64' : 'x86_64';
    return { Name: name, Type: 'String', Value: LocalAmis[arch].id, Version: 1, DataType: name.endsWith('image_id') ? 'aws:ec2:image' : 'text' };
  }

  /** Query-protocol (EC2) operations. */
  private query(action: string, q: Record<string, QueryValue>): Record<string, XmlValue> {
    switch (action) {
      case 'CreateFleet':
        return this.createFleet(q);
      case 'TerminateInstances': {
        const ids = list(q.InstanceId).map((x) => str(x) ?? '');
        const out = this.ec2.terminate(ids);
        return {
          instancesSet: out.map((o) => ({
            instanceId: o.instanceId,
            currentState: { code: InstanceStateCodes[o.current], name: o.current },
            previousState: { code: InstanceStateCodes[o.previous], name: o.previous },
          })),
        };
      }
      case 'DescribeInstances': {
        const ids = list(q.InstanceId).map((x) => str(x) ?? '');
        const found = this.ec2.describe(ids, filtersOf(q));
        return {
          reservationSet: found.map((i) => ({
            reservationId: `r-0${i.instanceId.slice(3)}`,
            ownerId: this.ec2.accountId,
            groupSet: [],
            instancesSet: [instanceXml(i, this.securityGroupId)],
          })),
        };
      }
      case 'CreateTags': {
        this.ec2.createTags(
          list(q.ResourceId).map((x) => str(x) ?? ''),
          tagsOf(q.Tag),
        );
        return { return: true };
      }
      case 'DeleteTags':
        return { return: true };
      case 'CreateLaunchTemplate': {
        const name = str(q.LaunchTemplateName) ?? '';
        if ([...this.templates.values()].some((t) => t.name === name)) {
          throw new Ec2ApiError('InvalidLaunchTemplateName.AlreadyExistsException', `Launch template name already in use.`);
        }
        const lt: LaunchTemplate = {
          id: `lt-0${localUuid().replaceAll('-', '').slice(0, 16)}`,
          name,
          createdMs: this.ec2.nowMs(),
          version: 1,
          data: obj(q.LaunchTemplateData),
          tags: tagsFromSpecs(q.TagSpecification, 'launch-template'),
        };
        this.templates.set(lt.id, lt);
        return { launchTemplate: templateXml(lt) };
      }
      case 'DescribeLaunchTemplates': {
        const names = list(q.LaunchTemplateName).map((x) => str(x));
        const ids = list(q.LaunchTemplateId).map((x) => str(x));
        const filters = filtersOf(q);
        let found = [...this.templates.values()];
        if (names.length) {
          found = found.filter((t) => names.includes(t.name));
          // EC2 fails the whole call when a named template does not exist.
          if (found.length < names.length)
            throw new Ec2ApiError(
              'InvalidLaunchTemplateName.NotFoundException',
              'At least one of the launch templates specified in the request does not exist.',
            );
        }
        if (ids.length) found = found.filter((t) => ids.includes(t.id));
        for (const f of filters) {
          if (f.name.startsWith('tag:')) found = found.filter((t) => f.values.includes(t.tags[f.name.slice(4)] ?? ''));
          else if (f.name === 'launch-template-name') found = found.filter((t) => f.values.includes(t.name));
        }
        return { launchTemplates: found.map(templateXml) };
      }
      case 'DeleteLaunchTemplate': {
        const name = str(q.LaunchTemplateName);
        const id = str(q.LaunchTemplateId);
        const t = [...this.templates.values()].find((x) => x.name === name || x.id === id);
        if (!t) throw new Ec2ApiError('InvalidLaunchTemplateName.NotFoundException', 'The specified launch template does not exist.');
        this.templates.delete(t.id);
        return { launchTemplate: templateXml(t) };
      }
      case 'DescribeSubnets': {
        const ids = list(q.SubnetId).map((x) => str(x));
        const subnets = this.ec2.zones.filter((z) =>
          resourceMatches(
            { 'subnet-id': z.subnetId, 'availability-zone': z.zone },
            { 'karpenter.sh/discovery': this.opts.clusterName, Name: `${this.opts.clusterName}/private-${z.zone}` },
            ids,
            z.subnetId,
            filtersOf(q),
          ),
        );
        return {
          subnetSet: subnets.map((z) => ({
            subnetId: z.subnetId,
            availabilityZone: z.zone,
            availabilityZoneId: z.zoneId,
            availableIpAddressCount: 8000,
            cidrBlock: `192.168.${z.octet}.0/19`,
            state: 'available',
            vpcId: 'vpc-0123456789abcdef0',
            defaultForAz: false,
            mapPublicIpOnLaunch: false,
            tagSet: tagSet({ 'karpenter.sh/discovery': this.opts.clusterName, Name: `${this.opts.clusterName}/private-${z.zone}` }),
          })),
        };
      }
      case 'DescribeSecurityGroups': {
        const ok = resourceMatches(
          { 'group-id': this.securityGroupId, 'group-name': `${this.opts.clusterName}-node` },
          { 'karpenter.sh/discovery': this.opts.clusterName },
          list(q.GroupId).map((x) => str(x)),
          this.securityGroupId,
          filtersOf(q),
        );
        return {
          securityGroupInfo: !ok
            ? []
            : [
                {
                  ownerId: this.ec2.accountId,
                  groupId: this.securityGroupId,
                  groupName: `${this.opts.clusterName}-node`,
                  groupDescription: 'EKS node security group',
                  vpcId: 'vpc-0123456789abcdef0',
                  tagSet: tagSet({ 'karpenter.sh/discovery': this.opts.clusterName }),
                },
              ],
        };
      }
      case 'DescribeImages': {
        const ids = list(q.ImageId).map((x) => str(x));
        const filters = filtersOf(q);
        const images = Object.entries(LocalAmis)
          .filter(([arch, a]) => resourceMatches({ name: a.name, 'image-id': a.id, architecture: arch }, {}, ids, a.id, filters))
          .map(([arch, a]) => ({
            imageId: a.id,
            name: a.name,
            architecture: arch,
            imageState: 'available',
            creationDate: '2025-02-28T00:00:00.000Z',
            ownerId: '602401143452',
            rootDeviceName: '/dev/xvda',
            rootDeviceType: 'ebs',
            virtualizationType: 'hvm',
            tagSet: [],
          }));
        return { imagesSet: images };
      }
      case 'DescribeCapacityReservations': {
        const ids = list(q.CapacityReservationId).map((x) => str(x) ?? '');
        const found = this.ec2.describeCapacityReservations(ids, filtersOf(q));
        return {
          capacityReservationSet: found.map((cr) => ({
            capacityReservationId: cr.id,
            ownerId: cr.ownerId,
            capacityReservationArn: `arn:aws:ec2:${this.ec2.region}:${cr.ownerId}:capacity-reservation/${cr.id}`,
            instanceType: cr.instanceType,
            instancePlatform: 'Linux/UNIX',
            availabilityZone: cr.zone,
            availabilityZoneId: this.ec2.zone(cr.zone)?.zoneId,
            tenancy: 'default',
            totalInstanceCount: cr.total,
            availableInstanceCount: cr.available,
            state: cr.state,
            instanceMatchCriteria: cr.instanceMatchCriteria,
            reservationType: cr.reservationType,
            endDateType: cr.endMs === undefined ? 'unlimited' : 'limited',
            endDate: cr.endMs === undefined ? undefined : new Date(cr.endMs).toISOString(),
            tagSet: tagSet(cr.tags),
          })),
        };
      }
      case 'DescribeAvailabilityZones':
        return {
          availabilityZoneInfo: this.ec2.zones.map((z) => ({
            zoneName: z.zone,
            zoneId: z.zoneId,
            zoneState: 'available',
            regionName: this.ec2.region,
            zoneType: 'availability-zone',
          })),
        };
      default:
        this.unsupported.add(action || '(no Action)');
        throw new Ec2ApiError('InvalidAction', `The action ${action} is not valid for this web service (local EC2 endpoint).`);
    }
  }

  /**
   * The launch template of each of a CreateFleet request's LaunchTemplateConfigs (in order; undefined
   * for a config that names none). @throws Ec2ApiError InvalidLaunchTemplateName.NotFoundException
   * when one of them does not exist.
   */
  private fleetTemplates(q: Record<string, QueryValue>): (LaunchTemplate | undefined)[] {
    return list(q.LaunchTemplateConfigs).map((c) => {
      const spec = obj(obj(c).LaunchTemplateSpecification);
      const name = str(spec.LaunchTemplateName);
      const id = str(spec.LaunchTemplateId);
      if (!name && !id) return undefined;
      const template = [...this.templates.values()].find((t) => (name !== undefined && t.name === name) || (id !== undefined && t.id === id));
      if (!template)
        throw new Ec2ApiError(
          'InvalidLaunchTemplateName.NotFoundException',
          `The specified launch template, with template name ${name ?? id}, does not exist.`,
        );
      return template;
    });
  }

  private createFleet(q: Record<string, QueryValue>): Record<string, XmlValue> {
    const target = obj(q.TargetCapacitySpecification);
    const capacityType = (str(target.DefaultTargetCapacityType) ?? 'on-demand') as Ec2CapacityType;
    const configs = list(q.LaunchTemplateConfigs).map(obj);
    const templates = this.fleetTemplates(q);
    const overrides: (FleetOverride & { spec: Record<string, QueryValue> })[] = [];
    for (const [i, c] of configs.entries()) {
      const spec = obj(c.LaunchTemplateSpecification);
      const t = templates[i];
      const launchTemplate = t && { id: t.id, name: t.name, version: t.version, userData: str(t.data.UserData) };
      const crSpec = obj(t?.data.CapacityReservationSpecification);
      const capacityReservationId =
        str(crSpec.CapacityReservationPreference) === 'capacity-reservations-only'
          ? str(obj(crSpec.CapacityReservationTarget).CapacityReservationId)
          : undefined;
      for (const o of list(c.Overrides).map(obj)) {
        overrides.push({
          instanceType: str(o.InstanceType) ?? '',
          zone: str(o.AvailabilityZone),
          subnetId: str(o.SubnetId),
          imageId: str(o.ImageId),
          priority: str(o.Priority) !== undefined ? Number(str(o.Priority)) : undefined,
          ...(launchTemplate ? { launchTemplate } : {}),
          ...(capacityReservationId ? { capacityReservationId } : {}),
          spec,
        });
      }
    }
    if (overrides.length === 0) throw new Ec2ApiError('InvalidParameterValue', 'CreateFleet needs at least one LaunchTemplateConfigs override');
    const strategy = capacityType === 'spot' ? str(obj(q.SpotOptions).AllocationStrategy) : str(obj(q.OnDemandOptions).AllocationStrategy);
    // EC2 refuses spot-request tags when the launch creates no spot request: every override fails.
    const tagsSpotRequests = templates.some((lt) => list(obj(lt?.data).TagSpecification).some((t) => str(obj(t).ResourceType) === 'spot-instances-request'));
    if (capacityType === 'on-demand' && tagsSpotRequests) {
      return {
        fleetId: `fleet-${localUuid()}`,
        errorSet: overrides.map((o) => ({
          launchTemplateAndOverrides: {
            launchTemplateSpecification: { launchTemplateId: o.launchTemplate?.id, version: String(o.launchTemplate?.version ?? 1) },
            overrides: { instanceType: o.instanceType, availabilityZone: o.zone, subnetId: o.subnetId, imageId: o.imageId },
          },
          lifecycle: 'on-demand',
          errorCode: 'InvalidParameterValue',
          errorMessage: SpotRequestTagsOnOnDemandMessage,
        })),
        fleetInstanceSet: [],
      };
    }
    const outcome = this.ec2.createFleet({
      capacityType,
      // Each override carries its own config's template (user data, template tags: local-ec2.ts launch).
      overrides,
      allocationStrategy: strategy,
      targetCapacity: Number(str(target.TotalTargetCapacity) ?? '1'),
      tags: tagsFromSpecs(q.TagSpecification, 'instance'),
    });
    const specOf = (o: FleetOverride | undefined): Record<string, XmlValue> => {
      const found = overrides.find((x) => o && x.instanceType === o.instanceType && (x.subnetId ?? x.zone) === (o.subnetId ?? o.zone)) ?? overrides[0];
      return {
        launchTemplateId: str(found.spec.LaunchTemplateId),
        launchTemplateName: str(found.spec.LaunchTemplateName),
        version: str(found.spec.Version) ?? '$Latest',
      };
    };
    return {
      fleetId: outcome.fleetId,
      errorSet: outcome.errors.map((e) => ({
        launchTemplateAndOverrides: e.override
          ? {
              launchTemplateSpecification: specOf(e.override),
              overrides: { instanceType: e.override.instanceType, availabilityZone: e.override.zone, subnetId: e.override.subnetId },
            }
          : undefined,
        lifecycle: e.lifecycle,
        errorCode: e.errorCode,
        errorMessage: e.errorMessage,
      })),
      fleetInstanceSet: outcome.instances.map((i) => ({
        launchTemplateAndOverrides: {
          launchTemplateSpecification: specOf(i),
          overrides: { instanceType: i.instanceType, availabilityZone: i.zone, subnetId: i.subnetId, imageId: i.imageId },
        },
        lifecycle: i.capacityType,
        instanceIds: [i.instanceId],
        instanceType: i.instanceType,
        platform: 'linux',
      })),
    };
  }
}

/** EC2 filter semantics over one resource: every filter must match one of its values (`*`/`?` wildcards). */
function resourceMatches(
  fields: Record<string, string>,
  tags: Record<string, string>,
  ids: (string | undefined)[],
  id: string,
  filters: { name: string; values: string[] }[],
): boolean {
  if (ids.length && !ids.includes(id)) return false;
  const glob = (p: string, v: string): boolean =>
    new RegExp(
      `^${p
        .replace(/[.+^${}()|[\]\\]/g, '\\$&')
        .replace(/\*/g, '.*')
        .replace(/\?/g, '.')}$`,
    ).test(v);
  return filters.every((f) => {
    if (f.name.startsWith('tag:')) {
      const v = tags[f.name.slice(4)];
      return v !== undefined && f.values.some((p) => glob(p, v));
    }
    if (f.name === 'tag-key') return Object.keys(tags).some((k) => f.values.some((p) => glob(p, k)));
    const v = fields[f.name];
    // Filters this local region does not model (owner-id, state, …) do not narrow the result.
    return v === undefined || f.values.some((p) => glob(p, v));
  });
}

function tagSet(tags: Record<string, string>): XmlValue[] {
  return Object.entries(tags).map(([key, value]) => ({ key, value }));
}

function tagsFromSpecs(specs: QueryValue | undefined, resourceType: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const s of list(specs).map(obj)) {
    const rt = str(s.ResourceType);
    if (rt === undefined || rt === resourceType) Object.assign(out, tagsOf(s.Tag));
  }
  return out;
}

function templateXml(t: LaunchTemplate): Record<string, XmlValue> {
  return {
    launchTemplateId: t.id,
    launchTemplateName: t.name,
    createTime: new Date(t.createdMs).toISOString(),
    createdBy: 'arn:aws:iam::123456789012:role/nodefleet-local',
    defaultVersionNumber: t.version,
    latestVersionNumber: t.version,
    tagSet: tagSet(t.tags),
  };
}

function instanceXml(i: LocalInstance, securityGroupId: string): Record<string, XmlValue> {
  return {
    instanceId: i.instanceId,
    imageId: i.imageId,
    instanceState: { code: InstanceStateCodes[i.state], name: i.state },
    privateDnsName: i.privateDnsName,
    dnsName: '',
    instanceType: i.instanceType,
    launchTime: new Date(i.launchTimeMs).toISOString(),
    placement: { availabilityZone: i.zone, availabilityZoneId: i.zoneId, tenancy: 'default' },
    subnetId: i.subnetId,
    vpcId: 'vpc-0123456789abcdef0',
    privateIpAddress: i.privateIp,
    architecture: 'x86_64',
    rootDeviceType: 'ebs',
    rootDeviceName: '/dev/xvda',
    groupSet: [{ groupId: securityGroupId, groupName: 'node' }],
    instanceLifecycle: i.capacityType === 'spot' ? 'spot' : undefined,
    capacityReservationId: i.capacityReservationId,
    capacityReservationSpecification: { capacityReservationPreference: i.capacityReservationId ? 'capacity-reservations-only' : 'none' },
    spotInstanceRequestId: i.capacityType === 'spot' ? `sir-${i.instanceId.slice(2, 10)}` : undefined,
    stateTransitionReason: i.terminatedBy === 'spot-reclaim' ? 'Service initiated' : i.terminatedBy === 'api' ? 'User initiated' : '',
    tagSet: tagSet(i.tags),
  };
}
