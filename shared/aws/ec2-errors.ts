/**
 * The one place that maps EC2 error codes to nodefleet's typed errors (as Karpenter's AWS provider
 * does in aws/karpenter-provider-aws pkg/errors/errors.go).
 *
 * - Capacity codes (per launch pool, in CreateFleet `Errors[]`): the offering (type, zone, capacity
 *   type) is marked unavailable for 3 minutes and the launch retried with what is left.
 * - Throttling codes: {@link TransientError}, retried by the caller (Lambda retry / ASL Retry).
 * - "Not found" codes: the object is already gone, which callers treat as success.
 */
import { InsufficientCapacityError, NodefleetError, TransientError, type LaunchFailure } from '../api/errors.ts';

/**
 * CreateFleet error codes meaning "no capacity for this pool right now" (KA pkg/errors/errors.go
 * `unfulfillableCapacityErrorCodes`). `InsufficientFreeAddressesInSubnet` marks the zone's pool
 * too: nodefleet picks one subnet per zone, so a full subnet makes the zone unusable for the claim.
 */
export const CapacityErrorCodes: ReadonlySet<string> = new Set([
  'InsufficientInstanceCapacity',
  'MaxSpotInstanceCountExceeded',
  'VcpuLimitExceeded',
  'UnfulfillableCapacity',
  'Unsupported',
  'InsufficientFreeAddressesInSubnet',
  'ReservationCapacityExceeded',
  'InsufficientCapacityOnOutpost',
  'SpotMaxPriceTooLow',
]);

/** Throttling / server-side codes: safe to retry (EC2 API reference "Common errors"). */
export const ThrottlingErrorCodes: ReadonlySet<string> = new Set([
  'RequestLimitExceeded',
  'Throttling',
  'ThrottlingException',
  'TooManyRequestsException',
  'InternalError',
  'ServiceUnavailable',
  'Unavailable',
]);

/** Codes meaning the instance / launch template does not exist. */
export const NotFoundErrorCodes: ReadonlySet<string> = new Set([
  'InvalidInstanceID.NotFound',
  'InvalidInstanceID.Malformed',
  'InvalidLaunchTemplateName.NotFoundException',
  'InvalidLaunchTemplateId.NotFound',
  'InvalidLaunchTemplateId.VersionNotFound',
]);

/** Launch template already exists (a concurrent create won the race): success. */
export const AlreadyExistsErrorCodes: ReadonlySet<string> = new Set(['InvalidLaunchTemplateName.AlreadyExistsException']);

/** One CreateFleet `Errors[]` entry, reduced to what nodefleet reads. */
export interface FleetError {
  errorCode?: string;
  errorMessage?: string;
  /** `spot` | `on-demand` (EC2's Lifecycle). */
  lifecycle?: string;
  instanceType?: string;
  zone?: string;
  subnetId?: string;
}

/** An offering to mark unavailable. */
export interface OfferingKey {
  instanceType: string;
  zone: string;
  capacityType: string;
}

/** The code of an SDK v3 error (`name` for query-protocol services, `Code` in older shapes). */
export function errorCode(err: unknown): string | undefined {
  if (!err || typeof err !== 'object') return undefined;
  const e = err as { name?: string; Code?: string; code?: string };
  return e.Code ?? e.code ?? e.name;
}

/** True for an SDK error meaning the object is gone. */
export function isNotFound(err: unknown): boolean {
  const code = errorCode(err);
  return code !== undefined && (NotFoundErrorCodes.has(code) || code.endsWith('.NotFound'));
}

/** True for an SDK error that is safe to retry. */
export function isThrottling(err: unknown): boolean {
  const code = errorCode(err);
  const status = (err as { $metadata?: { httpStatusCode?: number } } | undefined)?.$metadata?.httpStatusCode;
  return (code !== undefined && ThrottlingErrorCodes.has(code)) || status === 429 || (status !== undefined && status >= 500);
}

/** True when a CreateFleet error entry means "no capacity in this pool". */
export function isCapacityError(e: FleetError): boolean {
  return e.errorCode !== undefined && CapacityErrorCodes.has(e.errorCode);
}

/**
 * Offerings to mark unavailable from CreateFleet errors: entries with a capacity code and an
 * override (type + zone). Entries without overrides (the fleet-level summary error) mark nothing.
 * @param defaultCapacityType used when an entry carries no Lifecycle.
 */
export function unavailableOfferingsFrom(errors: readonly FleetError[], defaultCapacityType: string): OfferingKey[] {
  const seen = new Set<string>();
  const out: OfferingKey[] = [];
  for (const e of errors) {
    if (!isCapacityError(e) || !e.instanceType || !e.zone) continue;
    const capacityType = e.lifecycle === 'spot' ? 'spot' : e.lifecycle === 'on-demand' ? 'on-demand' : defaultCapacityType;
    const key = `${e.instanceType}/${e.zone}/${capacityType}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ instanceType: e.instanceType, zone: e.zone, capacityType });
  }
  return out;
}

/**
 * The reason Karpenter's AWS provider gives a CreateFleet error (KA pkg/errors ToReasonMessage,
 * the `reason` of its launch failure metric), from the code and message: the first rule whose
 * text occurs in `code: message`; capacity codes other than the quota ones fall through to
 * `LaunchFailed`, as there.
 */
export function launchFailureReason(code: string | undefined, message: string | undefined): string {
  const text = `${code ?? ''}: ${message ?? ''}`;
  const has = (s: string) => text.includes(s);
  if (has('AuthFailure.ServiceLinkedRoleCreationNotPermitted')) return 'SpotSLRCreationFailed';
  if (has('UnauthorizedOperation') || has('AccessDenied') || has('AuthFailure')) {
    const explicitDeny = has('with an explicit deny in a permissions boundary') || has('with an explicit deny in a service control policy');
    return !explicitDeny && has('Not authorized for images') ? 'AMIAuthorizationFailure' : 'Unauthorized';
  }
  if (has('InvalidParameter') && has('belong to different networks')) return 'SecurityGroupSubnetVPCMismatch';
  const rules: [string, string][] = [
    ['iamInstanceProfile.name is invalid', 'InstanceProfileNameInvalid'],
    ['InvalidLaunchTemplateId.NotFound', 'LaunchTemplateNotFound'],
    ['User data is limited to', 'UserDataSizeLimitExceeded'],
    ['InvalidAMIID.Malformed', 'InvalidAMIID'],
    ['InvalidAMIID.NotFound', 'AMINotFound'],
    ['RequestLimitExceeded', 'RequestLimitExceeded'],
    ['InternalError', 'InternalError'],
    ['not eligible for Free Tier', 'FreeTierIneligible'],
    ['MaxFleetCountExceeded', 'FleetQuotaExceeded'],
    ['PendingVerification', 'AccountPendingVerification'],
    ['MaxSpotInstanceCountExceeded', 'SpotQuotaExceeded'],
    ['VcpuLimitExceeded', 'VCPULimitExceeded'],
    ['InsufficientFreeAddressesInSubnet', 'InsufficientFreeAddressesInSubnet'],
  ];
  return rules.find(([s]) => has(s))?.[1] ?? 'LaunchFailed';
}

/**
 * Each CreateFleet error entry as a launch failure (Karpenter counts one per entry, the
 * fleet-level ones without an override included, zone then empty).
 * @param capacityType the request's; @param zoneIdOf the zone id of a zone (from the subnets launched into).
 */
export function launchFailuresFrom(
  errors: readonly FleetError[],
  capacityType: string,
  zoneIdOf: (zone: string) => string | undefined = () => undefined,
): LaunchFailure[] {
  return errors.map((e) => {
    const zone = e.zone ?? '';
    const zoneId = zone ? zoneIdOf(zone) : undefined;
    return { zone, ...(zoneId ? { zoneId } : {}), capacityType, reason: launchFailureReason(e.errorCode, e.errorMessage) };
  });
}

/** A CreateFleet that launched nothing for a reason other than capacity (bad request, IAM, quota on LT). */
export class CreateFleetError extends NodefleetError {
  constructor(
    message: string,
    readonly errors: FleetError[] = [],
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * The typed error for a CreateFleet that launched nothing.
 * - every entry a capacity code → {@link InsufficientCapacityError} carrying the offerings;
 * - any throttling code → {@link TransientError};
 * - otherwise {@link CreateFleetError} (not retried with other offerings: the request itself is wrong).
 */
export function launchFailure(errors: readonly FleetError[], defaultCapacityType: string, zoneIdOf?: (zone: string) => string | undefined): Error {
  const launchFailures = launchFailuresFrom(errors, defaultCapacityType, zoneIdOf);
  const summary = errors
    .map((e) =>
      `${e.errorCode ?? 'Unknown'}${e.instanceType ? ` (${e.instanceType}/${e.zone}/${e.lifecycle ?? defaultCapacityType})` : ''}: ${e.errorMessage ?? ''}`.trim(),
    )
    .join('; ');
  if (errors.some((e) => e.errorCode && ThrottlingErrorCodes.has(e.errorCode))) {
    return Object.assign(new TransientError(`CreateFleet throttled: ${summary}`), { launchFailures });
  }
  const meaningful = errors.filter((e) => e.instanceType);
  const all = meaningful.length > 0 ? meaningful : errors;
  if (all.length === 0 || all.every(isCapacityError)) {
    return new InsufficientCapacityError(
      `insufficient capacity: ${summary || 'CreateFleet returned no instance'}`,
      unavailableOfferingsFrom(errors, defaultCapacityType),
      { launchFailures },
    );
  }
  return Object.assign(new CreateFleetError(`CreateFleet failed: ${summary}`, [...errors]), { launchFailures });
}

/** Maps an SDK exception thrown by a call (not a fleet error entry) to a typed error. */
export function mapSdkError(err: unknown, what: string): Error {
  if (isThrottling(err)) return new TransientError(`${what}: ${errorCode(err) ?? 'throttled'}`, { cause: err });
  if (err instanceof NodefleetError) return err;
  return new NodefleetError(`${what}: ${errorCode(err) ?? ''} ${(err as Error)?.message ?? String(err)}`.trim(), { cause: err });
}
