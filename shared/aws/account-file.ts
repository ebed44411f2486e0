/**
 * An AWS account as files: the JSON the AWS CLI prints for `aws ec2 describe-subnets`,
 * `describe-security-groups`, `describe-images` (and `aws ssm get-parameter(s)`), read into an
 * in-memory {@link NodeClassLookups} so the production node class resolver
 * (./node-class-resolver.ts) resolves selector terms against it exactly as against EC2:
 * `nodefleet plan --account FILE` and scenario cases with an `account`.
 *
 * A file holds one such object, several of them one after the other (the output of several
 * commands appended), a JSON array of them, or one object with several of the keys. EC2 filter
 * semantics, for the filters the resolver sends: values are ORed (with `*` and `?` wildcards),
 * filters ANDed; `tag:<key>`, `tag-key`, `subnet-id`, `group-id`, `group-name`, `image-id`, `name`.
 * DescribeImages `Owners`: an account id matches `OwnerId`, `amazon` / `aws-marketplace` match
 * `ImageOwnerAlias`, `self` matches the owners of the file's subnets and security groups.
 */
import { z } from 'zod';
import type { Filter, Image, SecurityGroup, Subnet } from '@aws-sdk/client-ec2';
import { ValidationError } from '../api/errors.ts';
import type { EC2NodeClass, NodePool } from '../api/nodepool.ts';
import { regionZones, shippedRegionData } from '../catalog/index.ts';
import { defaultNodeClass, placeholderCluster } from './launch-preview.ts';
import { Ec2NodeClassResolver, resolveNodeClasses, type NodeClassLookups, type NodeClassResolutions } from './node-class-resolver.ts';

const Tags = z
  .array(z.object({ Key: z.string({ error: 'expected text' }), Value: z.string({ error: 'expected text' }) }), { error: 'expected a list of {Key, Value}' })
  .optional();
/** `required: WHAT` when absent, `expected KIND, got …` when of another type. */
const problem = (what: string, kind: string) => (iss: { input: unknown }) =>
  iss.input === undefined ? `required: ${what}` : `expected ${kind}, got ${JSON.stringify(iss.input)}`;
const text = (what: string) => z.string({ error: problem(what, 'text') }).min(1, `required: ${what}`);

const SubnetSchema = z.looseObject({
  SubnetId: text('the subnet id (subnet-…)'),
  AvailabilityZone: text('the zone name, e.g. us-east-1a'),
  AvailabilityZoneId: z.string({ error: 'expected the zone id as text, e.g. use1-az4' }).optional(),
  AvailableIpAddressCount: z
    .number({ error: problem('the number of free IPv4 addresses', 'a number') })
    .int('expected a whole number')
    .min(0, 'expected a number ≥ 0'),
  OwnerId: z.string().optional(),
  Tags,
});
const SecurityGroupSchema = z.looseObject({
  GroupId: text('the security group id (sg-…)'),
  GroupName: z.string().optional(),
  OwnerId: z.string().optional(),
  Tags,
});
const ImageSchema = z.looseObject({
  ImageId: text('the image id (ami-…)'),
  Architecture: text('x86_64 or arm64'),
  CreationDate: z.string({ error: 'expected an RFC 3339 time as text' }).optional(),
  Name: z.string().optional(),
  OwnerId: z.string().optional(),
  ImageOwnerAlias: z.string().optional(),
  Tags,
});
const ParameterSchema = z.looseObject({ Name: text('the parameter name'), Value: z.string({ error: problem('the parameter value', 'text') }) });

const DocumentSchema = z.looseObject({
  Subnets: z.array(SubnetSchema, { error: 'expected a list (aws ec2 describe-subnets)' }).optional(),
  SecurityGroups: z.array(SecurityGroupSchema, { error: 'expected a list (aws ec2 describe-security-groups)' }).optional(),
  Images: z.array(ImageSchema, { error: 'expected a list (aws ec2 describe-images)' }).optional(),
  Parameter: ParameterSchema.optional(),
  Parameters: z.array(ParameterSchema, { error: 'expected a list (aws ssm get-parameters)' }).optional(),
});

const Keys = ['Subnets', 'SecurityGroups', 'Images', 'Parameter', 'Parameters'] as const;

/** What the files hold, merged (a later file's object with the same id replaces an earlier one). */
export interface AccountData {
  subnets: Subnet[];
  securityGroups: SecurityGroup[];
  images: Image[];
  /** SSM parameter name → value. */
  parameters: Map<string, string>;
  /** Account ids owning the file's subnets and security groups (DescribeImages `Owners=self`). */
  self: Set<string>;
}

/** Offsets of each top-level JSON value in `text`, or the offset and reason of the first thing that is not one. */
function splitJson(text: string): { values: { start: number; end: number }[] } | { at: number; reason: string } {
  const values: { start: number; end: number }[] = [];
  let i = 0;
  const n = text.length;
  while (i < n) {
    while (i < n && /\s/.test(text[i])) i++;
    if (i >= n) break;
    if (text[i] !== '{' && text[i] !== '[')
      return { at: i, reason: 'expected a JSON object (the output of aws ec2 describe-subnets, describe-security-groups or describe-images)' };
    const start = i;
    let depth = 0;
    let inString = false;
    for (; i < n; i++) {
      const c = text[i];
      if (inString) {
        if (c === '\\') i++;
        else if (c === '"') inString = false;
      } else if (c === '"') inString = true;
      else if (c === '{' || c === '[') depth++;
      else if (c === '}' || c === ']') {
        depth--;
        if (depth === 0) {
          i++;
          break;
        }
      }
    }
    if (depth !== 0) return { at: start, reason: 'a JSON value is not closed (the file is cut short)' };
    values.push({ start, end: i });
  }
  return { values };
}

function lineColumn(text: string, offset: number): string {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  return `line ${line}, column ${offset - before.lastIndexOf('\n')}`;
}

function pathOf(path: readonly PropertyKey[]): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : `${i === 0 ? '' : '.'}${String(p)}`)).join('') || '(root)';
}

/**
 * Reads account files into one {@link AccountData}.
 * @param region when given, every subnet must be in one of its zones.
 * @throws ValidationError with one line `FILE: [document N: ]FIELD: reason` for the first problem:
 *   text that is not JSON, an object with none of the known keys, a field missing or of the wrong
 *   type, a subnet outside `region`.
 */
export function readAccountFiles(files: readonly { file: string; text: string }[], region?: string): AccountData {
  const subnets = new Map<string, Subnet>();
  const groups = new Map<string, SecurityGroup>();
  const images = new Map<string, Image>();
  const parameters = new Map<string, string>();
  const self = new Set<string>();
  for (const { file, text } of files) {
    const split = splitJson(text);
    if ('reason' in split) throw new ValidationError(`${file}: ${lineColumn(text, split.at)}: ${split.reason}`);
    if (split.values.length === 0)
      throw new ValidationError(`${file}: no JSON object found (expected the output of aws ec2 describe-subnets, describe-security-groups or describe-images)`);
    const docs: { where: string; value: unknown }[] = [];
    split.values.forEach(({ start, end }, d) => {
      let value: unknown;
      try {
        value = JSON.parse(text.slice(start, end));
      } catch (err) {
        const pos = /position (\d+)/.exec((err as Error).message);
        // V8 names the position in some messages only; the quoted text it may add is left out.
        const reason = (err as Error).message.replace(/ in JSON at position \d+.*$/, '').replace(/, (\.\.\.)?".*" is not valid JSON$/s, '');
        throw new ValidationError(
          pos
            ? `${file}: ${lineColumn(text, start + Number(pos[1]))}: not JSON: ${reason}`
            : `${file}: the JSON value from ${lineColumn(text, start)} is not valid JSON: ${reason}`,
        );
      }
      const many = split.values.length > 1;
      if (Array.isArray(value)) value.forEach((v, k) => docs.push({ where: `${many ? `document ${d + 1} ` : ''}item ${k + 1}: `, value: v }));
      else docs.push({ where: many ? `document ${d + 1}: ` : '', value });
    });
    for (const { where, value } of docs) {
      if (!value || typeof value !== 'object' || Array.isArray(value) || !Keys.some((k) => k in value)) {
        throw new ValidationError(
          `${file}: ${where}none of ${Keys.join(', ')} (expected the output of aws ec2 describe-subnets, describe-security-groups or describe-images)`,
        );
      }
      const r = DocumentSchema.safeParse(value);
      if (!r.success) {
        const issue = r.error.issues[0];
        throw new ValidationError(`${file}: ${where}${pathOf(issue.path)}: ${issue.message}`);
      }
      const doc = r.data;
      const elsewhere = region === undefined ? -1 : (doc.Subnets ?? []).findIndex((x) => !x.AvailabilityZone.startsWith(region));
      if (elsewhere >= 0)
        throw new ValidationError(
          `${file}: ${where}Subnets[${elsewhere}].AvailabilityZone: "${doc.Subnets![elsewhere].AvailabilityZone}" is not a zone of ${region} (the region of the plan: --region)`,
        );
      for (const s of doc.Subnets ?? []) {
        subnets.set(s.SubnetId, s as Subnet);
        if (s.OwnerId) self.add(s.OwnerId);
      }
      for (const g of doc.SecurityGroups ?? []) {
        groups.set(g.GroupId, g as SecurityGroup);
        if (g.OwnerId) self.add(g.OwnerId);
      }
      for (const i of doc.Images ?? []) images.set(i.ImageId, i as Image);
      for (const p of [...(doc.Parameter ? [doc.Parameter] : []), ...(doc.Parameters ?? [])]) parameters.set(p.Name, p.Value);
    }
  }
  return { subnets: [...subnets.values()], securityGroups: [...groups.values()], images: [...images.values()], parameters, self };
}

/** EC2 filter value matching: `*` any run, `?` one character, otherwise exact. */
function wildcard(pattern: string, value: string | undefined): boolean {
  if (value === undefined) return false;
  const re = new RegExp(
    `^${pattern
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\?/g, '.')}$`,
    's',
  );
  return re.test(value);
}

/** Whether a resource with these fields (filter name → value) and tags passes every filter. */
function passes(
  filters: readonly Filter[] | undefined,
  fields: Record<string, string | undefined>,
  tags: readonly { Key?: string; Value?: string }[] | undefined,
): boolean {
  const tagMap = new Map((tags ?? []).map((t) => [t.Key ?? '', t.Value ?? '']));
  return (filters ?? []).every((f) => {
    const name = f.Name ?? '';
    const values = f.Values ?? [];
    if (name === 'tag-key') return values.some((v) => [...tagMap.keys()].some((k) => wildcard(v, k)));
    if (name.startsWith('tag:')) return values.some((v) => wildcard(v, tagMap.get(name.slice(4))));
    if (!(name in fields))
      throw new ValidationError(
        `account file: the filter "${name}" is not answered from files (filters: tag:<key>, tag-key, ${Object.keys(fields).join(', ')})`,
      );
    return values.some((v) => wildcard(v, fields[name]));
  });
}

/** {@link NodeClassLookups} that also say which answers were placeholders. */
export interface AccountLookups extends NodeClassLookups {
  /** The parts answered with placeholders so far, e.g. "security groups (the files hold no SecurityGroups)". */
  placeholders(): string[];
}

/**
 * {@link NodeClassLookups} answered from {@link AccountData}, with EC2's filter semantics (module
 * doc). A part the files hold nothing of is answered with placeholders, and said so by
 * `placeholders()`: no Subnets → one subnet per zone of `placeholderZones`; no SecurityGroups →
 * `sg-placeholder`; no Images → `ami-placeholder-amd64` / `-arm64`; a public parameter
 * (`/aws/service/…`, the EKS AMI of an alias) the files do not hold → `ami-placeholder-<arch>-<variant>`.
 */
export function accountLookups(a: AccountData, opts: { placeholderZones: readonly { zone: string; zoneId?: string }[] }): AccountLookups {
  const used = new Set<string>();
  const placeholder = <T>(part: string, value: T): T => (used.add(part), value);
  return {
    describeSubnets: async ({ Filters }) =>
      a.subnets.length === 0
        ? placeholder(
            'subnets (the files hold no Subnets: every zone of the region assumed)',
            opts.placeholderZones.map((z) => ({
              SubnetId: `subnet-placeholder-${z.zone}`,
              AvailabilityZone: z.zone,
              ...(z.zoneId ? { AvailabilityZoneId: z.zoneId } : {}),
              AvailableIpAddressCount: 4096,
            })),
          )
        : a.subnets.filter((s) => passes(Filters, { 'subnet-id': s.SubnetId }, s.Tags)),
    describeSecurityGroups: async ({ Filters }) =>
      a.securityGroups.length === 0
        ? placeholder('security groups (the files hold no SecurityGroups)', [{ GroupId: 'sg-placeholder' }])
        : a.securityGroups.filter((g) => passes(Filters, { 'group-id': g.GroupId, 'group-name': g.GroupName }, g.Tags)),
    describeImages: async ({ Owners, Filters }) =>
      a.images.length === 0
        ? placeholder('AMIs (the files hold no Images)', [
            { ImageId: 'ami-placeholder-amd64', Architecture: 'x86_64' },
            { ImageId: 'ami-placeholder-arm64', Architecture: 'arm64' },
          ])
        : a.images.filter((i) => {
            const owned =
              !Owners?.length ||
              Owners.some((o) =>
                o === 'self' ? a.self.has(i.OwnerId ?? '') : o === 'amazon' || o === 'aws-marketplace' ? i.ImageOwnerAlias === o : i.OwnerId === o,
              );
            return owned && passes(Filters, { 'image-id': i.ImageId, name: i.Name }, i.Tags);
          }),
    // `plan --account` reads no reservations: a class with capacityReservationSelectorTerms plans without reserved offerings, and says so.
    describeCapacityReservations: async () => placeholder('capacity reservations (the files are not read for CapacityReservations: none assumed)', []),
    getParameter: async (name) => {
      const value = a.parameters.get(name);
      if (value !== undefined || !name.startsWith('/aws/service/')) return value;
      const m = /\/(x86_64|arm64)\/(standard|nvidia|neuron)\//.exec(name);
      return placeholder(
        'AMIs of aliases (the files hold no such public SSM parameter: aws ssm get-parameters --names …)',
        `ami-placeholder-${m ? `${m[1] === 'x86_64' ? 'amd64' : 'arm64'}-${m[2]}` : 'ssm'}`,
      );
    },
    placeholders: () => [...used].sort(),
  };
}

/** The Kubernetes version the files' EKS AMI parameters name (`/aws/service/eks/optimized-ami/<v>/…`), else `fallback`. */
function kubernetesVersionOf(account: AccountData, fallback: string): string {
  for (const name of account.parameters.keys()) {
    const m = /^\/aws\/service\/eks\/optimized-ami\/([0-9.]+)\//.exec(name);
    if (m) return m[1];
  }
  return fallback;
}

/**
 * Resolves the EC2NodeClasses the NodePools use (a NodePool naming a class the file lacks gets
 * Karpenter's default terms, as `--launch-requests` assumes) with the production resolver
 * (./node-class-resolver.ts) over the account files: `plan --account` and scenario cases.
 * @returns the resolutions and the parts the files left to placeholders.
 * @throws what a lookup throws other than a ValidationError (none does: a filter it cannot answer).
 */
export async function resolveAgainstAccount(
  account: AccountData,
  nodePools: readonly NodePool[],
  nodeClasses: readonly EC2NodeClass[],
  opts: { region: string; clusterName: string },
): Promise<{ resolutions: NodeClassResolutions; placeholders: string[] }> {
  const shipped = shippedRegionData(opts.region);
  const lookups = accountLookups(account, {
    placeholderZones: regionZones(opts.region).map((zone) => ({ zone, ...(shipped.exampleNameToId?.[zone] ? { zoneId: shipped.exampleNameToId[zone] } : {}) })),
  });
  const resolver = new Ec2NodeClassResolver(lookups, kubernetesVersionOf(account, placeholderCluster(opts.clusterName, opts.region).kubernetesVersion));
  const names = [...new Set(nodePools.map((np) => np.spec.template.spec.nodeClassRef.name))];
  const classes = names.map((n) => nodeClasses.find((c) => c.metadata.name === n) ?? defaultNodeClass(n, opts.clusterName));
  const resolutions = await resolveNodeClasses(resolver, classes);
  const failure = resolutions.failures.values().next().value;
  if (failure) throw failure;
  return { resolutions, placeholders: lookups.placeholders() };
}
