/**
 * Refreshes the instance catalog from AWS, as Karpenter's AWS provider does with its instance-type
 * and pricing providers (aws/karpenter-provider-aws pkg/providers/instancetype/instancetype.go,
 * pkg/providers/pricing/pricing.go), falling back to the shipped data (shared/catalog/data) for
 * every part that was never fetched or failed.
 *
 * | Part ({@link CatalogRefresh}) | Call | Request |
 * | --- | --- | --- |
 * | `zoneIds` | EC2 `DescribeAvailabilityZones` | `Filters=[zone-type=availability-zone]` |
 * | `zonesByType` | EC2 `DescribeInstanceTypeOfferings` | `LocationType=availability-zone`, `MaxResults=1000`, `NextToken` |
 * | `onDemandUsdPerHour` | Pricing `GetProducts` (client in us-east-1, see {@link pricingApiRegion}) | `ServiceCode=AmazonEC2`, TERM_MATCH `regionCode`, `operatingSystem=Linux`, `tenancy=Shared`, `preInstalledSw=NA`, `capacitystatus=Used`, `marketoption=OnDemand`; `MaxResults=100`, `NextToken` |
 * | `spotUsdPerHour` | EC2 `DescribeSpotPriceHistory` | `ProductDescriptions=[Linux/UNIX, Linux/UNIX (Amazon VPC)]`, `StartTime=now` (the price in effect now per type and zone), `MaxResults=1000`, `NextToken` |
 * | `instanceTypes` | EC2 `DescribeInstanceTypes` | `Filters=[supported-virtualization-type=hvm, processor-info.supported-architecture=x86_64,arm64]`, `MaxResults=100`, `NextToken` |
 *
 * IAM: `ec2:DescribeAvailabilityZones`, `ec2:DescribeInstanceTypeOfferings`,
 * `ec2:DescribeSpotPriceHistory`, `ec2:DescribeInstanceTypes`, `pricing:GetProducts`.
 *
 * Differences from Karpenter, on purpose: bare-metal on-demand prices come from the same
 * shared-tenancy query (Karpenter asks for `tenancy=Dedicated` bare-metal products, about 6–10 %
 * higher; see shared/catalog/data/SOURCES.md), so refreshed and shipped prices agree.
 */
import {
  DescribeAvailabilityZonesCommand,
  DescribeInstanceTypeOfferingsCommand,
  DescribeInstanceTypesCommand,
  DescribeSpotPriceHistoryCommand,
  type DescribeAvailabilityZonesCommandOutput,
  type DescribeInstanceTypeOfferingsCommandOutput,
  type DescribeInstanceTypesCommandOutput,
  type DescribeSpotPriceHistoryCommandOutput,
} from '@aws-sdk/client-ec2';
import { GetProductsCommand, PricingClient, type Filter as PricingFilter, type GetProductsCommandOutput } from '@aws-sdk/client-pricing';
import type { CatalogRefresh, CatalogRefreshPart, InstanceTypeInfo } from '../catalog/index.ts';
import { mapSdkError } from './ec2-errors.ts';
import { instanceTypeInfoFromEc2 } from './catalog-instance-types.ts';

/** The EC2 calls this adapter makes (an `EC2Client` satisfies it; tests use aws-sdk-client-mock). */
export interface CatalogEc2Api {
  send(command: DescribeAvailabilityZonesCommand): Promise<DescribeAvailabilityZonesCommandOutput>;
  send(command: DescribeInstanceTypeOfferingsCommand): Promise<DescribeInstanceTypeOfferingsCommandOutput>;
  send(command: DescribeSpotPriceHistoryCommand): Promise<DescribeSpotPriceHistoryCommandOutput>;
  send(command: DescribeInstanceTypesCommand): Promise<DescribeInstanceTypesCommandOutput>;
}

/** The Pricing call this adapter makes (a `PricingClient` in {@link pricingApiRegion} satisfies it). */
export interface CatalogPricingApi {
  send(command: GetProductsCommand): Promise<GetProductsCommandOutput>;
}

const Hour = 3_600_000;

/**
 * How long each refreshed part is used before it is fetched again, milliseconds. Karpenter
 * refreshes on-demand and spot prices every 12 h (KA pkg/controllers/providers/pricing/controller.go,
 * `RequeueAfter: 12 * time.Hour`, both `UpdateSpotPricing` and `UpdateOnDemandPricing`) and
 * instance types and their zone offerings every 12 h (KA
 * pkg/controllers/providers/instancetype/controller.go); see shared/ANCHORS.md §2.2 "Other cache
 * TTLs". Zone ids never change for an account, so 12 h is only a safety net.
 */
export const CatalogRefreshIntervalMs: Readonly<Record<CatalogRefreshPart, number>> = {
  zoneIds: 12 * Hour,
  zonesByType: 12 * Hour,
  onDemandUsdPerHour: 12 * Hour,
  spotUsdPerHour: 12 * Hour,
  instanceTypes: 12 * Hour,
};

/**
 * After a failed fetch, how long to wait before trying that part again (milliseconds). Without it a
 * throttled or unreachable Pricing API would be called on every invocation of a warm Lambda;
 * one minute keeps retries cheap while the shipped / previous data is used.
 */
export const CatalogRefreshRetryAfterFailureMs = 60_000;

/** Stops a pagination loop whose NextToken never ends (a broken endpoint), pages. */
const MaxPages = 1_000;

/**
 * Region of the Pricing API endpoint for a workload region. The Pricing API is served from
 * us-east-1 (and ap-south-1, eu-central-1; Karpenter picks those for ap-/eu- regions, KA
 * pkg/providers/pricing/pricing.go `NewAPI`); nodefleet uses us-east-1 everywhere except China.
 * Returns undefined where there is no Pricing API for the partition's prices (GovCloud).
 */
export function pricingApiRegion(region: string): string | undefined {
  if (region.startsWith('us-gov-')) return undefined;
  if (region.startsWith('cn-')) return 'cn-northwest-1';
  return 'us-east-1';
}

async function paginate<T>(what: string, fetchPage: (token: string | undefined) => Promise<{ items: T[]; next?: string }>): Promise<T[]> {
  const out: T[] = [];
  let token: string | undefined;
  for (let page = 0; page < MaxPages; page++) {
    let result: { items: T[]; next?: string };
    try {
      result = await fetchPage(token);
    } catch (err) {
      throw mapSdkError(err, what);
    }
    out.push(...result.items);
    token = result.next;
    if (!token) return out;
  }
  throw mapSdkError(new Error(`more than ${MaxPages} pages`), what);
}

/** Zone name → zone id of the account's availability zones (local / wavelength zones left out). */
export async function fetchZoneIds(ec2: CatalogEc2Api): Promise<Record<string, string>> {
  let out: DescribeAvailabilityZonesCommandOutput;
  try {
    out = await ec2.send(new DescribeAvailabilityZonesCommand({ Filters: [{ Name: 'zone-type', Values: ['availability-zone'] }] }));
  } catch (err) {
    throw mapSdkError(err, 'DescribeAvailabilityZones');
  }
  const ids: Record<string, string> = {};
  for (const z of out.AvailabilityZones ?? []) if (z.ZoneName && z.ZoneId) ids[z.ZoneName] = z.ZoneId;
  // An empty answer would leave the region without zones: treat it as a failure (shipped zones used).
  if (Object.keys(ids).length === 0) throw mapSdkError(new Error('no availability zones'), 'DescribeAvailabilityZones');
  return ids;
}

/** Instance type → zone names it is offered in (sorted), from DescribeInstanceTypeOfferings. */
export async function fetchZonesByType(ec2: CatalogEc2Api): Promise<Record<string, string[]>> {
  const offerings = await paginate('DescribeInstanceTypeOfferings', async (NextToken) => {
    const out = await ec2.send(new DescribeInstanceTypeOfferingsCommand({ LocationType: 'availability-zone', MaxResults: 1000, NextToken }));
    return { items: out.InstanceTypeOfferings ?? [], next: out.NextToken };
  });
  const zones: Record<string, string[]> = {};
  for (const o of offerings) {
    if (!o.InstanceType || !o.Location) continue;
    (zones[o.InstanceType] ??= []).push(o.Location);
  }
  for (const list of Object.values(zones)) list.sort();
  if (Object.keys(zones).length === 0) throw mapSdkError(new Error('no instance type offerings'), 'DescribeInstanceTypeOfferings');
  return zones;
}

/** The Pricing filters for Linux, shared-tenancy, on-demand EC2 instances in `region`. */
export function onDemandPriceFilters(region: string): PricingFilter[] {
  const term = (Field: string, Value: string): PricingFilter => ({ Type: 'TERM_MATCH', Field, Value });
  return [
    term('regionCode', region),
    term('serviceCode', 'AmazonEC2'),
    term('operatingSystem', 'Linux'),
    term('tenancy', 'Shared'),
    term('preInstalledSw', 'NA'),
    term('capacitystatus', 'Used'),
    term('marketoption', 'OnDemand'),
  ];
}

/** The parts of a Pricing `PriceList` entry this adapter reads. */
interface PriceListItem {
  product?: { attributes?: { instanceType?: string } };
  terms?: { OnDemand?: Record<string, { priceDimensions?: Record<string, { pricePerUnit?: Record<string, string> }> }> };
}

/**
 * Instance type → USD/hour from one `PriceList` (JSON strings, as the Pricing API returns them).
 * Entries without an instance type, unparseable ones and zero prices are skipped.
 */
export function parsePriceList(priceList: readonly unknown[]): Record<string, number> {
  const prices: Record<string, number> = {};
  for (const raw of priceList) {
    let item: PriceListItem;
    try {
      item = (typeof raw === 'string' ? JSON.parse(raw) : raw) as PriceListItem;
    } catch {
      continue; // one bad entry does not spoil the page
    }
    const type = item?.product?.attributes?.instanceType;
    if (!type) continue;
    for (const term of Object.values(item.terms?.OnDemand ?? {})) {
      for (const dim of Object.values(term.priceDimensions ?? {})) {
        const price = Number.parseFloat(dim.pricePerUnit?.USD ?? '');
        if (Number.isFinite(price) && price > 0) prices[type] = price;
      }
    }
  }
  return prices;
}

/**
 * Instance type → on-demand USD/hour in `region` from the Pricing API (`pricing` must be a client
 * for {@link pricingApiRegion}). @throws NodefleetError / TransientError when a page fails or when
 * no price comes back (an empty answer is treated as a failure, as Karpenter does).
 */
export async function fetchOnDemandPrices(pricing: CatalogPricingApi, region: string): Promise<Record<string, number>> {
  const Filters = onDemandPriceFilters(region);
  const lists = await paginate('GetProducts', async (NextToken) => {
    const out = await pricing.send(new GetProductsCommand({ ServiceCode: 'AmazonEC2', Filters, MaxResults: 100, NextToken }));
    return { items: [(out.PriceList ?? []) as unknown[]], next: out.NextToken };
  });
  const prices: Record<string, number> = {};
  for (const list of lists) Object.assign(prices, parsePriceList(list));
  if (Object.keys(prices).length === 0) throw mapSdkError(new Error(`no on-demand prices for ${region}`), 'GetProducts');
  return prices;
}

/**
 * Instance type → zone → current spot USD/hour (Linux/UNIX), the latest record per type and zone.
 * @throws NodefleetError / TransientError when a page fails or no price comes back.
 */
export async function fetchSpotPrices(ec2: CatalogEc2Api, nowMs: number): Promise<Record<string, Record<string, number>>> {
  const StartTime = new Date(nowMs);
  const records = await paginate('DescribeSpotPriceHistory', async (NextToken) => {
    const out = await ec2.send(
      new DescribeSpotPriceHistoryCommand({ ProductDescriptions: ['Linux/UNIX', 'Linux/UNIX (Amazon VPC)'], StartTime, MaxResults: 1000, NextToken }),
    );
    return { items: out.SpotPriceHistory ?? [], next: out.NextToken };
  });
  const prices: Record<string, Record<string, number>> = {};
  const seenAt: Record<string, number> = {};
  for (const r of records) {
    const price = Number.parseFloat(r.SpotPrice ?? '');
    if (!r.InstanceType || !r.AvailabilityZone || !r.Timestamp || !Number.isFinite(price) || price <= 0) continue;
    const key = `${r.InstanceType}/${r.AvailabilityZone}`;
    const at = r.Timestamp.getTime();
    if (seenAt[key] !== undefined && seenAt[key] > at) continue; // keep the latest record
    seenAt[key] = at;
    (prices[r.InstanceType] ??= {})[r.AvailabilityZone] = price;
  }
  if (Object.keys(prices).length === 0) throw mapSdkError(new Error('no spot prices'), 'DescribeSpotPriceHistory');
  return prices;
}

/** Catalog rows for every HVM x86_64 / arm64 instance type EC2 describes in the client's region. */
export async function fetchInstanceTypeInfos(ec2: CatalogEc2Api): Promise<InstanceTypeInfo[]> {
  const Filters = [
    { Name: 'supported-virtualization-type', Values: ['hvm'] },
    { Name: 'processor-info.supported-architecture', Values: ['x86_64', 'arm64'] },
  ];
  const types = await paginate('DescribeInstanceTypes', async (NextToken) => {
    const out = await ec2.send(new DescribeInstanceTypesCommand({ Filters, MaxResults: 100, NextToken }));
    return { items: out.InstanceTypes ?? [], next: out.NextToken };
  });
  return types
    .map(instanceTypeInfoFromEc2)
    .filter((t): t is InstanceTypeInfo => t !== undefined)
    .sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * A Pricing client for the endpoint serving `region`'s prices ({@link pricingApiRegion}), or
 * undefined where there is none (GovCloud). For the composition root, next to its EC2 client.
 */
export function createPricingClient(region: string): PricingClient | undefined {
  const endpointRegion = pricingApiRegion(region);
  return endpointRegion ? new PricingClient({ region: endpointRegion }) : undefined;
}

/** Clients and settings of a {@link CatalogRefresher}. */
export interface CatalogRefresherOptions {
  /** EC2 client for `region`. */
  ec2: CatalogEc2Api;
  /** Pricing client for {@link pricingApiRegion}(region); without one, on-demand prices stay shipped. */
  pricing?: CatalogPricingApi;
  /** Workload region, e.g. "eu-west-1". */
  region: string;
  /** Parts to refresh (default: all). Leave out `instanceTypes` to save ~10 DescribeInstanceTypes pages. */
  parts?: readonly CatalogRefreshPart[];
  /** Overrides of {@link CatalogRefreshIntervalMs}. */
  intervalMs?: Partial<Record<CatalogRefreshPart, number>>;
  /** Called once per failed fetch (the part keeps its previous or shipped data). */
  onError?: (part: CatalogRefreshPart, error: Error) => void;
}

interface PartState {
  data?: unknown;
  fetchedAtMs?: number;
  failedAtMs?: number;
  inFlight?: Promise<void>;
}

const AllParts: readonly CatalogRefreshPart[] = ['zoneIds', 'zonesByType', 'onDemandUsdPerHour', 'spotUsdPerHour', 'instanceTypes'];

/**
 * Per-cold-start cache of refreshed catalog data: create one per Lambda container (in the
 * composition root) and call {@link CatalogRefresher.get} with the invocation's `now`; pass the
 * result to `loadCatalog({ refreshed })`. Each part is fetched when it is older than its interval,
 * all due parts in parallel; concurrent callers share one fetch. A failed fetch keeps the previous
 * data (or none, so the shipped data is used) and is retried after
 * {@link CatalogRefreshRetryAfterFailureMs}, as Karpenter keeps its last prices when an update fails.
 *
 * Latency: a cold refresh of a large region (≈ 800 types × 6 zones) is about 5
 * DescribeInstanceTypeOfferings pages (1 000 offerings each), ≈ 10 Pricing pages (100 products),
 * ≈ 10 DescribeSpotPriceHistory pages (1 000 records; two product descriptions per type and zone)
 * and ≈ 10 DescribeInstanceTypes pages (100 types), fetched in parallel per part: a few seconds,
 * paid by the first invocation of a container and then every 12 h.
 */
export class CatalogRefresher {
  private readonly parts: readonly CatalogRefreshPart[];
  private readonly state = new Map<CatalogRefreshPart, PartState>();

  constructor(private readonly opts: CatalogRefresherOptions) {
    this.parts = (opts.parts ?? AllParts).filter((p) => p !== 'onDemandUsdPerHour' || (opts.pricing && pricingApiRegion(opts.region)));
    for (const p of this.parts) this.state.set(p, {});
  }

  /** Refreshed data as of `nowMs` (epoch ms): due parts fetched first; failed parts left out. Never throws. */
  async get(nowMs: number): Promise<CatalogRefresh> {
    await Promise.all(this.parts.filter((p) => this.isDue(p, nowMs)).map((p) => this.refreshPart(p, nowMs)));
    return this.snapshot();
  }

  /** The data held now, without fetching. */
  snapshot(): CatalogRefresh {
    const out: CatalogRefresh = { region: this.opts.region, fetchedAtMs: {} };
    for (const [part, s] of this.state) {
      if (s.data === undefined) continue;
      (out as unknown as Record<string, unknown>)[part] = s.data;
      out.fetchedAtMs![part] = s.fetchedAtMs;
    }
    return out;
  }

  private isDue(part: CatalogRefreshPart, nowMs: number): boolean {
    const s = this.state.get(part)!;
    if (s.inFlight) return true;
    if (s.failedAtMs !== undefined && nowMs - s.failedAtMs < CatalogRefreshRetryAfterFailureMs) return false;
    if (s.fetchedAtMs === undefined) return true;
    return nowMs - s.fetchedAtMs >= (this.opts.intervalMs?.[part] ?? CatalogRefreshIntervalMs[part]);
  }

  private refreshPart(part: CatalogRefreshPart, nowMs: number): Promise<void> {
    const s = this.state.get(part)!;
    s.inFlight ??= this.fetch(part, nowMs)
      .then(
        (data) => {
          s.data = data;
          s.fetchedAtMs = nowMs;
          s.failedAtMs = undefined;
        },
        (err: unknown) => {
          s.failedAtMs = nowMs;
          try {
            this.opts.onError?.(part, err instanceof Error ? err : new Error(String(err)));
          } catch {
            // a failing logger must not break the catalog
          }
        },
      )
      .finally(() => {
        s.inFlight = undefined;
      });
    return s.inFlight;
  }

  private fetch(part: CatalogRefreshPart, nowMs: number): Promise<unknown> {
    const { ec2, pricing, region } = this.opts;
    switch (part) {
      case 'zoneIds':
        return fetchZoneIds(ec2);
      case 'zonesByType':
        return fetchZonesByType(ec2);
      case 'onDemandUsdPerHour':
        return fetchOnDemandPrices(pricing!, region);
      case 'spotUsdPerHour':
        return fetchSpotPrices(ec2, nowMs);
      case 'instanceTypes':
        return fetchInstanceTypeInfos(ec2);
    }
  }
}
