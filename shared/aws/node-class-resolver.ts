/**
 * Resolves an EC2NodeClass's selector terms to concrete ids: subnets (with zone and free IPs),
 * security groups and AMIs per architecture. A small interface so the embedded environment can
 * use the real {@link Ec2CloudProvider} with {@link StaticNodeClassResolver}, or the real
 * {@link Ec2NodeClassResolver} against its local EC2 (+ SSM) server.
 *
 * Calls (see the list in shared/aws/ec2.ts), through the {@link NodeClassLookups} port:
 * DescribeSubnets, DescribeSecurityGroups, DescribeImages (id/name/tag/ssmParameter AMI terms),
 * DescribeCapacityReservations (capacityReservationSelectorTerms) and SSM GetParameter (alias and
 * ssmParameter terms).
 * Results are cached for {@link ResolverCacheTtlMs} (Karpenter's default cache TTL for
 * subnets / security groups, KA pkg/cache/cache.go `DefaultTTL = 1m`).
 */
import {
  paginateDescribeCapacityReservations,
  DescribeImagesCommand,
  DescribeSecurityGroupsCommand,
  DescribeSubnetsCommand,
  type EC2Client,
  type Filter,
  type Image,
  type SecurityGroup,
  type Subnet,
} from '@aws-sdk/client-ec2';
import { GetParameterCommand, type SSMClient } from '@aws-sdk/client-ssm';
import type { EC2NodeClass } from '../api/nodepool.ts';
import { ValidationError } from '../api/errors.ts';
import { aliasFamily, aliasRefusal } from '../api/nodeclass-support.ts';
import type { SubnetInfo } from '../catalog/subnets.ts';
import {
  capacityReservationQueries,
  resolveCapacityReservations,
  type CapacityReservation,
  type CapacityReservationQuery,
  type Ec2CapacityReservation,
} from '../api/capacity-reservation.ts';
import { isNotFound } from './ec2-errors.ts';

/** Node architectures nodefleet launches (values of kubernetes.io/arch). */
export type Arch = 'amd64' | 'arm64';

/**
 * EKS-optimized AL2023 AMI variants (KA pkg/providers/amifamily/types.go `Variant`): `standard`,
 * `nvidia` (NVIDIA drivers, for types with GPUs) and `neuron` (Neuron driver, for Inferentia /
 * Trainium types).
 */
export type AmiVariant = 'standard' | 'nvidia' | 'neuron';

/** The variants EKS publishes per architecture (KA al2023.go: x86_64 all three, arm64 no neuron). */
export const Al2023Variants: Readonly<Record<Arch, readonly AmiVariant[]>> = { amd64: ['standard', 'nvidia', 'neuron'], arm64: ['standard', 'nvidia'] };

/** One subnet a node may use (shared/catalog/subnets.ts, where the zone and subnet-per-zone rules live). */
export type { SubnetInfo } from '../catalog/subnets.ts';

/** An EC2NodeClass resolved to ids. */
export interface ResolvedNodeClass {
  subnets: SubnetInfo[];
  securityGroupIds: string[];
  /** AMI id per architecture; an architecture without an AMI cannot be launched. */
  images: Partial<Record<Arch, string>>;
  /**
   * Set by alias resolution only (`images` is then the standard variant): the accelerated
   * variants' AMI per architecture. A type with GPUs launches the nvidia image, one with Neuron
   * accelerators the neuron image (KA `Variant.Requirements`); a type whose variant has no image is
   * not launched. Without it (AMIs by id, name, tags or ssmParameter) every type launches
   * `images` by architecture, as Karpenter does for such AMIs.
   */
  variants?: Partial<Record<Exclude<AmiVariant, 'standard'>, Partial<Record<Arch, string>>>>;
  /**
   * AMIs by id, name or tags: the chosen images (one per architecture) with their names, newest
   * first then by id (the order of KA's `EC2NodeClass.status.amis`); a Bottlerocket class reads
   * its release from them (shared/aws/bottlerocket.ts).
   */
  amis?: { id: string; name: string }[];
  /**
   * The reservations `capacityReservationSelectorTerms` select (active, not ended, by id; KA
   * `status.capacityReservations`) with EC2's remaining counts; absent when the class has no terms.
   * Read again on every resolution (not cached): the counts change with every launch.
   */
  capacityReservations?: CapacityReservation[];
  /** Reservations EC2 returned that cannot be used, one line each (an unknown match criteria or type). */
  capacityReservationProblems?: string[];
}

/** The AMI a type of `arch` / `variant` launches with, or undefined when there is none. */
export function imageFor(resolved: Pick<ResolvedNodeClass, 'images' | 'variants'>, arch: Arch, variant: AmiVariant): string | undefined {
  if (!resolved.variants || variant === 'standard') return resolved.images[arch];
  return resolved.variants[variant]?.[arch];
}

/** Every AMI id of a resolution (the images a node of the class may run: AMI drift compares against these). */
export function resolvedImageIds(resolved: Pick<ResolvedNodeClass, 'images' | 'variants'>): string[] {
  const ids = [...Object.values(resolved.images), ...Object.values(resolved.variants ?? {}).flatMap((v) => Object.values(v))];
  return [...new Set(ids.filter((x): x is string => !!x))];
}

/** The port: resolves selector terms (throws ValidationError when a term matches nothing). */
export interface NodeClassResolver {
  resolve(nodeClass: EC2NodeClass): Promise<ResolvedNodeClass>;
}

/** What {@link resolveNodeClasses} found per EC2NodeClass. */
export interface NodeClassResolutions {
  /** Class name → its resolution. */
  resolved: Map<string, ResolvedNodeClass>;
  /** Class name → why its terms resolve to nothing launchable (a ValidationError: no subnet, no security group, no image). */
  problems: Map<string, string>;
  /** Class name → the error of a resolution that failed otherwise (throttled, unreachable, denied). */
  failures: Map<string, Error>;
}

/**
 * Resolves each class once (the resolver caches for {@link ResolverCacheTtlMs}); never throws.
 * A problem's text drops the resolver's `ec2nodeclass NAME: ` prefix (the caller names the class).
 */
export async function resolveNodeClasses(resolver: NodeClassResolver, nodeClasses: Iterable<EC2NodeClass>): Promise<NodeClassResolutions> {
  const out: NodeClassResolutions = { resolved: new Map(), problems: new Map(), failures: new Map() };
  await Promise.all(
    [...nodeClasses].map(async (c) => {
      const name = c.metadata.name;
      try {
        out.resolved.set(name, await resolver.resolve(c));
      } catch (err) {
        if (err instanceof ValidationError) out.problems.set(name, err.message.replace(`ec2nodeclass ${name}: `, ''));
        else out.failures.set(name, err as Error);
      }
    }),
  );
  return out;
}

/** Owners a `name` AMI term is restricted to when it names none (KA `DescribeImageQueries`). */
export const DefaultAmiOwners = ['self', 'amazon'] as const;

/** Subnets / security groups / AMIs are re-resolved after this long (KA `DefaultTTL` 1 minute). */
export const ResolverCacheTtlMs = 60_000;

/** Fixed answers: the CLI's `plan --launch-requests`, tests and the embedded environment. */
export class StaticNodeClassResolver implements NodeClassResolver {
  constructor(private readonly resolved: ResolvedNodeClass | ((nodeClass: EC2NodeClass) => ResolvedNodeClass)) {}

  async resolve(nodeClass: EC2NodeClass): Promise<ResolvedNodeClass> {
    return typeof this.resolved === 'function' ? this.resolved(nodeClass) : this.resolved;
  }
}

/**
 * Placeholder resolution for offline output: one subnet per zone named `subnet-<zone>`, one
 * security group `sg-<nodeclass>`, AMIs `ami-<arch>` (the real ids are only known in the account).
 */
export function placeholderResolution(zones: readonly string[], nodeClassName: string): ResolvedNodeClass {
  return {
    subnets: zones.map((zone) => ({ subnetId: `subnet-${zone}`, zone, availableIpAddressCount: 4096 })),
    securityGroupIds: [`sg-${nodeClassName}`],
    images: { amd64: 'ami-resolved-at-launch-amd64', arm64: 'ami-resolved-at-launch-arm64' },
    variants: {
      nvidia: { amd64: 'ami-resolved-at-launch-amd64-nvidia', arm64: 'ami-resolved-at-launch-arm64-nvidia' },
      neuron: { amd64: 'ami-resolved-at-launch-amd64-neuron' },
    },
  };
}

const SsmArch: Record<Arch, string> = { amd64: 'x86_64', arm64: 'arm64' };

/**
 * The public SSM parameter holding the EKS-optimized AL2023 AMI id for an alias and variant
 * (KA pkg/providers/amifamily/al2023.go `DescribeImageQuery`): `al2023@latest` →
 * `.../<arch>/<variant>/recommended/image_id`, `al2023@v20240807` → the pinned release
 * `.../<arch>/<variant>/amazon-eks-node-al2023-<arch>-<variant>-<k8s>-<version>/image_id`.
 */
export function al2023AmiParameter(kubernetesVersion: string, arch: Arch, aliasVersion: string, variant: AmiVariant = 'standard'): string {
  const a = SsmArch[arch];
  const base = `/aws/service/eks/optimized-ami/${kubernetesVersion}/amazon-linux-2023/${a}/${variant}`;
  return aliasVersion === 'latest'
    ? `${base}/recommended/image_id`
    : `${base}/amazon-eks-node-al2023-${a}-${variant}-${kubernetesVersion}-${aliasVersion}/image_id`;
}

/**
 * The public SSM parameters of the Bottlerocket AMIs for an alias version, each with the variants
 * its image serves (KA amifamily/bottlerocket.go `DescribeImageQuery`):
 * `/aws/service/bottlerocket/aws-k8s-<k8s>[-nvidia]/<x86_64|arm64>/<version>/image_id`, the
 * version without its leading `v` (`bottlerocket@v1.46.0` → `1.46.0`, `latest` as it is). The
 * standard x86_64 image also serves Neuron types (Bottlerocket has no neuron variant of its own).
 */
export function bottlerocketAmiParameters(kubernetesVersion: string, aliasVersion: string): { name: string; arch: Arch; variants: AmiVariant[] }[] {
  const version = aliasVersion.replace(/^v+/, '');
  const at = (flavour: string, arch: Arch) => `/aws/service/bottlerocket/aws-k8s-${kubernetesVersion}${flavour}/${SsmArch[arch]}/${version}/image_id`;
  return [
    { name: at('', 'amd64'), arch: 'amd64', variants: ['standard', 'neuron'] },
    { name: at('', 'arm64'), arch: 'arm64', variants: ['standard'] },
    { name: at('-nvidia', 'amd64'), arch: 'amd64', variants: ['nvidia'] },
    { name: at('-nvidia', 'arm64'), arch: 'arm64', variants: ['nvidia'] },
  ];
}

/**
 * The public SSM parameter of the EKS-optimized Windows Server Core AMI (x86_64 only; every type,
 * GPU or not, launches it): `/aws/service/ami-windows-latest/Windows_Server-<2019|2022|2025>-English-Core-EKS_Optimized-<k8s>/image_id`
 * (KA amifamily/windows.go). Windows Server 2025 needs Kubernetes 1.35 or later (KA ami.go): none before.
 */
export function windowsAmiParameters(
  family: 'Windows2019' | 'Windows2022' | 'Windows2025',
  kubernetesVersion: string,
): { name: string; arch: Arch; variants: AmiVariant[] }[] {
  const year = family.slice('Windows'.length);
  if (year === '2025' && Number(kubernetesVersion.split('.')[1]) < 35) return [];
  return [
    {
      name: `/aws/service/ami-windows-latest/Windows_Server-${year}-English-Core-EKS_Optimized-${kubernetesVersion}/image_id`,
      arch: 'amd64',
      variants: ['standard', 'nvidia', 'neuron'],
    },
  ];
}

/** The SSM parameters an alias reads (AL2023, Bottlerocket or Windows), each with its architecture and the variants its image serves. */
export function aliasAmiParameters(alias: string, kubernetesVersion: string): { name: string; arch: Arch; variants: AmiVariant[] }[] {
  const [, version = 'latest'] = alias.split('@');
  const family = aliasFamily(alias);
  if (family === 'Bottlerocket') return bottlerocketAmiParameters(kubernetesVersion, version);
  if (family?.startsWith('Windows')) return windowsAmiParameters(family as 'Windows2019', kubernetesVersion);
  return (['amd64', 'arm64'] as const).flatMap((arch) =>
    Al2023Variants[arch].map((variant) => ({ name: al2023AmiParameter(kubernetesVersion, arch, version, variant), arch, variants: [variant] })),
  );
}

type Term = { tags?: Record<string, string>; name?: string };

/**
 * The filter sets of selector terms, one query each: a term with tags (and a name) is its own set,
 * every id term goes into one `idFilter` set (KA `getFilterSets` of the subnet and security group
 * providers).
 */
export function filterSets(terms: readonly (Term & { id?: string })[], idFilter: string, nameFilter?: string): Filter[][] {
  const ids = terms.filter((t) => t.id).map((t) => t.id!);
  const sets = terms.filter((t) => !t.id).map((t) => termFilters(t, nameFilter));
  return ids.length > 0 ? [...sets, [{ Name: idFilter, Values: ids }]] : sets;
}

/** EC2 filters for one selector term (`tags` values of "*" mean "key exists"). */
export function termFilters(term: Term, nameFilter = 'tag:Name'): Filter[] {
  const filters: Filter[] = [];
  for (const [k, v] of Object.entries(term.tags ?? {})) {
    filters.push(v === '*' ? { Name: 'tag-key', Values: [k] } : { Name: `tag:${k}`, Values: [v] });
  }
  if (term.name) filters.push({ Name: nameFilter, Values: [term.name] });
  return filters;
}

/**
 * The EC2 and SSM reads node class resolution makes (a narrow interface listing only the calls
 * used, as KA pkg/aws/sdk.go): {@link sdkLookups} sends them to AWS, shared/aws/account-file.ts
 * answers them from `aws ec2 describe-*` output (`nodefleet plan --account`). Each returns every
 * match (pages read); an SSM parameter that does not exist is undefined.
 */
export interface NodeClassLookups {
  describeSubnets(input: { Filters: Filter[] }): Promise<Subnet[]>;
  describeSecurityGroups(input: { Filters: Filter[] }): Promise<SecurityGroup[]>;
  describeImages(input: { Owners?: string[]; Filters?: Filter[] }): Promise<Image[]>;
  /** Every page of one query; a reservation id that does not exist answers no reservation (KA provider.go treats NotFound as none). */
  describeCapacityReservations(input: CapacityReservationQuery): Promise<Ec2CapacityReservation[]>;
  getParameter(name: string): Promise<string | undefined>;
}

/** {@link NodeClassLookups} on the SDK clients (created once in buildDeps). */
export function sdkLookups(ec2: EC2Client, ssm: SSMClient): NodeClassLookups {
  return {
    describeSubnets: async (input) => (await ec2.send(new DescribeSubnetsCommand(input))).Subnets ?? [],
    describeSecurityGroups: async (input) => (await ec2.send(new DescribeSecurityGroupsCommand(input))).SecurityGroups ?? [],
    describeImages: async (input) => (await ec2.send(new DescribeImagesCommand(input))).Images ?? [],
    describeCapacityReservations: async (input) => {
      const out: Ec2CapacityReservation[] = [];
      try {
        for await (const page of paginateDescribeCapacityReservations({ client: ec2 }, input)) out.push(...(page.CapacityReservations ?? []));
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
      return out;
    },
    getParameter: async (name) => {
      try {
        return (await ssm.send(new GetParameterCommand({ Name: name }))).Parameter?.Value;
      } catch (err) {
        if ((err as Error).name === 'ParameterNotFound') return undefined;
        throw err;
      }
    },
  };
}

/**
 * Resolution of the selector terms through {@link NodeClassLookups}: in production EC2 and SSM
 * ({@link sdkLookups}), offline an account file; the same code either way.
 */
export class Ec2NodeClassResolver implements NodeClassResolver {
  private readonly cache = new Map<string, { atMs: number; value: ResolvedNodeClass }>();

  /**
   * @param kubernetesVersion cluster version ("1.31"), for the AMI alias; a function is called lazily.
   * @param nowMs clock (epoch ms), injected for tests.
   */
  constructor(
    private readonly lookups: NodeClassLookups,
    private readonly kubernetesVersion: string | (() => Promise<string>),
    private readonly nowMs: () => number = () => Date.now(),
  ) {}

  async resolve(nodeClass: EC2NodeClass): Promise<ResolvedNodeClass> {
    const key = JSON.stringify(nodeClass.spec);
    const hit = this.cache.get(key);
    if (hit && this.nowMs() - hit.atMs < ResolverCacheTtlMs) return this.withReservations(nodeClass, hit.value);
    const [subnets, securityGroupIds, amis] = await Promise.all([this.subnets(nodeClass), this.securityGroups(nodeClass), this.images(nodeClass)]);
    const name = nodeClass.metadata.name;
    if (subnets.length === 0) throw new ValidationError(`ec2nodeclass ${name}: subnetSelectorTerms match no subnet`);
    if (securityGroupIds.length === 0) throw new ValidationError(`ec2nodeclass ${name}: securityGroupSelectorTerms match no security group`);
    if (resolvedImageIds(amis).length === 0) throw new ValidationError(`ec2nodeclass ${name}: amiSelectorTerms match no image`);
    const value = { subnets, securityGroupIds, ...amis };
    this.cache.set(key, { atMs: this.nowMs(), value });
    return this.withReservations(nodeClass, value);
  }

  /**
   * The class's capacity reservations added to `value`: one DescribeCapacityReservations per query of
   * its terms (KA capacityreservation/provider.go `List`), none without terms. Not cached, unlike
   * Karpenter's one-minute cache that it corrects with each launch and termination: the resolver
   * lives in short Lambda invocations, so EC2's count is the one that is right.
   */
  private async withReservations(nc: EC2NodeClass, value: ResolvedNodeClass): Promise<ResolvedNodeClass> {
    const terms = nc.spec.capacityReservationSelectorTerms ?? [];
    if (terms.length === 0) return value;
    const found = (await Promise.all(capacityReservationQueries(terms).map((q) => this.lookups.describeCapacityReservations(q)))).flat();
    const { reservations, problems } = resolveCapacityReservations(found, this.nowMs());
    return { ...value, capacityReservations: reservations, ...(problems.length ? { capacityReservationProblems: problems } : {}) };
  }

  /**
   * One DescribeSubnets per tag term, and one `subnet-id` filter for every id term (KA
   * pkg/providers/subnet `getFilterSets`): an id that does not exist matches nothing rather than
   * failing the call.
   */
  private async subnets(nc: EC2NodeClass): Promise<SubnetInfo[]> {
    const byId = new Map<string, SubnetInfo>();
    for (const filters of filterSets(nc.spec.subnetSelectorTerms, 'subnet-id')) {
      for (const s of await this.lookups.describeSubnets({ Filters: filters })) {
        if (!s.SubnetId || !s.AvailabilityZone) continue;
        byId.set(s.SubnetId, {
          subnetId: s.SubnetId,
          zone: s.AvailabilityZone,
          ...(s.AvailabilityZoneId ? { zoneId: s.AvailabilityZoneId } : {}),
          availableIpAddressCount: s.AvailableIpAddressCount ?? 0,
        });
      }
    }
    return [...byId.values()].sort((a, b) => a.subnetId.localeCompare(b.subnetId));
  }

  /** As {@link subnets}: one query per name / tag term, one `group-id` filter for the id terms. */
  private async securityGroups(nc: EC2NodeClass): Promise<string[]> {
    const ids = new Set<string>();
    for (const filters of filterSets(nc.spec.securityGroupSelectorTerms, 'group-id', 'group-name')) {
      for (const g of await this.lookups.describeSecurityGroups({ Filters: filters })) if (g.GroupId) ids.add(g.GroupId);
    }
    return [...ids].sort();
  }

  /**
   * One DescribeImages query per non-alias term (terms are ORed), as the AWS provider builds them
   * (KA pkg/providers/amifamily/ami.go `DescribeImageQueries`): `id` and `ssmParameter` terms become
   * image ids (the parameter read with GetParameter; a missing parameter or a value that is not an
   * AMI id matches nothing); a `name` term without `owner` is restricted to `self` and `amazon`, so a
   * public image of another account with the same name is never picked.
   */
  private async imageQueries(nc: EC2NodeClass): Promise<{ Owners?: string[]; Filters?: Filter[] }[]> {
    const ids: string[] = [];
    const queries: { Owners?: string[]; Filters?: Filter[] }[] = [];
    for (const term of nc.spec.amiSelectorTerms ?? []) {
      if (term.id) ids.push(term.id);
      else if (term.ssmParameter) {
        const id = await this.parameter(term.ssmParameter);
        if (id?.startsWith('ami-')) ids.push(id);
      } else {
        const owners = term.owner ? [term.owner] : term.name ? [...DefaultAmiOwners] : [];
        queries.push({ Filters: termFilters(term, 'name'), ...(owners.length > 0 ? { Owners: owners } : {}) });
      }
    }
    if (ids.length > 0) queries.push({ Filters: [{ Name: 'image-id', Values: ids }] });
    return queries;
  }

  /** An SSM parameter's value; undefined when it does not exist. */
  private parameter(name: string): Promise<string | undefined> {
    return this.lookups.getParameter(name);
  }

  /**
   * An alias reads one SSM parameter per (architecture, variant) published ({@link aliasAmiParameters});
   * a missing parameter leaves that variant without an image. Other terms: DescribeImages, newest per architecture.
   */
  private async images(nc: EC2NodeClass): Promise<Pick<ResolvedNodeClass, 'images' | 'variants' | 'amis'>> {
    const terms = nc.spec.amiSelectorTerms ?? [{ alias: 'al2023@latest' }];
    const images: Partial<Record<Arch, string>> = {};
    const alias = terms.find((t) => t.alias)?.alias;
    if (alias) {
      const refused = aliasRefusal(alias);
      if (refused) throw new ValidationError(`ec2nodeclass ${nc.metadata.name}: spec.amiSelectorTerms alias: ${refused}`);
      const k8s = typeof this.kubernetesVersion === 'string' ? this.kubernetesVersion : await this.kubernetesVersion();
      const variants: NonNullable<ResolvedNodeClass['variants']> = {};
      for (const p of aliasAmiParameters(alias, k8s)) {
        const id = await this.parameter(p.name);
        if (!id) continue;
        for (const variant of p.variants) {
          if (variant === 'standard') images[p.arch] = id;
          else (variants[variant] ??= {})[p.arch] = id;
        }
      }
      return { images, variants };
    }
    const found: { id: string; arch: Arch; created: number; name: string; deprecated: boolean }[] = [];
    const now = this.nowMs();
    for (const query of await this.imageQueries(nc)) {
      for (const img of await this.lookups.describeImages(query)) {
        if (!img.ImageId) continue;
        const arch: Arch | undefined = img.Architecture === 'x86_64' ? 'amd64' : img.Architecture === 'arm64' ? 'arm64' : undefined;
        const time = (t: string | undefined, absent: number) => (t ? Date.parse(t) : absent);
        if (arch)
          found.push({
            id: img.ImageId,
            arch,
            created: time(img.CreationDate, 0),
            name: img.Name ?? '',
            deprecated: time(img.DeprecationTime, Infinity) <= now,
          });
      }
    }
    // One image per architecture, as KA amifamily/ami.go `compareAMI` keeps it: not deprecated first,
    // then the newest creation date (to the second), then the greater name.
    const second = (ms: number) => Math.floor(ms / 1000);
    found.sort(
      (a, b) =>
        Number(a.deprecated) - Number(b.deprecated) ||
        second(b.created) - second(a.created) ||
        (a.name === b.name ? 0 : a.name > b.name ? -1 : 1) ||
        a.id.localeCompare(b.id),
    );
    const chosen = new Map<Arch, (typeof found)[number]>();
    for (const f of found) if (!chosen.has(f.arch)) chosen.set(f.arch, f);
    for (const [arch, f] of chosen) images[arch] = f.id;
    const amis = [...chosen.values()]
      .sort((a, b) => second(b.created) - second(a.created) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
      .map((f) => ({ id: f.id, name: f.name }));
    return { images, amis };
  }
}
