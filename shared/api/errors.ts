/**
 * Typed errors: one base class; ASL Retry/Catch match on `name`, so a rename is a breaking change.
 */
export class NodefleetError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** Bad user input (NodePool YAML, events): `problems` are `<path>: <reason>` lines. */
export class ValidationError extends NodefleetError {
  constructor(
    message: string,
    readonly problems: string[] = [message],
  ) {
    super(message);
  }
}

/**
 * One CreateFleet error entry as Karpenter counts it (`karpenter_cloudprovider_instance_launch_failures_total`):
 * the override's zone, the request's capacity type, and the reason its AWS provider derives from the error code.
 */
export interface LaunchFailure {
  zone: string;
  zoneId?: string;
  capacityType: string;
  reason: string;
}

/** The CreateFleet error entries a launch error carries (none when it carries none). */
export function launchFailuresOf(err: unknown): readonly LaunchFailure[] {
  const f = (err as { launchFailures?: unknown } | undefined)?.launchFailures;
  return Array.isArray(f) ? (f as LaunchFailure[]) : [];
}

/** EC2 had no capacity for these offerings (InsufficientInstanceCapacity and friends). */
export class InsufficientCapacityError extends NodefleetError {
  readonly launchFailures: readonly LaunchFailure[];
  constructor(
    message: string,
    readonly offerings: { instanceType: string; zone: string; capacityType: string }[] = [],
    options?: { cause?: unknown; launchFailures?: readonly LaunchFailure[] },
  ) {
    super(message, options);
    this.launchFailures = options?.launchFailures ?? [];
  }
}

/** A conditional write lost a race (another writer changed the item first). */
export class ConflictError extends NodefleetError {}

/** The object (instance, node, claim) does not exist; callers treating "gone" as success catch this. */
export class NotFoundError extends NodefleetError {}

/** Throttled / transient: safe to retry (ASL Retry matches this name). */
export class TransientError extends NodefleetError {}

/** A disruption budget has no free slot. */
export class BudgetExhaustedError extends NodefleetError {}

/**
 * A termination refused: its input names a target the stored NodeClaim does not, there is no
 * claim, or the live Node / the instance's tags disagree with the claim. Permanent (no Retry); the
 * termination state machine ends in its Refused state with this name (statemachines/termination.asl.json).
 */
export class TargetRefusedError extends NodefleetError {}
