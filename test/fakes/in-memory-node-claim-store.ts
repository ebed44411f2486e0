import type { NodeClaimStore } from '../../shared/api/ports.ts';
import { inFlightSince, type NodeClaim } from '../../shared/api/nodeclaim.ts';
import { ConflictError } from '../../shared/api/errors.ts';
import { FakeBase, clone } from './fake-base.ts';

type Method = 'create' | 'get' | 'list' | 'listInFlight' | 'getByInstanceId' | 'update' | 'delete' | 'claimsEpochMs';

/**
 * NodeClaimStore in memory, with DynamoDB's semantics: create fails if the name exists, update is
 * conditional on `version` and returns the claim with version + 1, delete of an absent claim is fine;
 * the claims epoch is recorded once, by the first create (its claim's `createdAt`) or `claimsEpochMs`.
 * Values are deep-copied in and out.
 */
export class InMemoryNodeClaimStore extends FakeBase<Method> implements NodeClaimStore {
  private readonly claims = new Map<string, NodeClaim>();
  private epochMs: number | undefined;

  constructor(initial: NodeClaim[] = []) {
    super();
    for (const c of initial) this.claims.set(c.name, clone(c));
  }

  async create(claim: NodeClaim): Promise<NodeClaim> {
    this.record('create', claim);
    const createdMs = Date.parse(claim.createdAt);
    if (this.epochMs === undefined && !Number.isNaN(createdMs)) this.epochMs = createdMs;
    if (this.claims.has(claim.name)) throw new ConflictError(`nodeclaim ${claim.name} already exists`);
    this.claims.set(claim.name, clone(claim));
    return clone(claim);
  }

  async claimsEpochMs(nowMs: number): Promise<number> {
    this.record('claimsEpochMs', nowMs);
    this.epochMs ??= nowMs;
    return this.epochMs;
  }

  async get(name: string): Promise<NodeClaim | undefined> {
    this.record('get', name);
    const c = this.claims.get(name);
    return c && clone(c);
  }

  async list(): Promise<NodeClaim[]> {
    this.record('list');
    return [...this.claims.values()].map(clone);
  }

  async listInFlight(initializedSinceMs: number): Promise<NodeClaim[]> {
    this.record('listInFlight', initializedSinceMs);
    return [...this.claims.values()].filter((c) => inFlightSince(c, initializedSinceMs)).map(clone);
  }

  async getByInstanceId(instanceId: string): Promise<NodeClaim | undefined> {
    this.record('getByInstanceId', instanceId);
    const c = [...this.claims.values()].find((x) => x.instanceId === instanceId);
    return c && clone(c);
  }

  /** @throws ConflictError when absent or when the stored version differs from `claim.version`. */
  async update(claim: NodeClaim): Promise<NodeClaim> {
    this.record('update', claim);
    const stored = this.claims.get(claim.name);
    if (!stored) throw new ConflictError(`nodeclaim ${claim.name} does not exist`);
    if (stored.version !== claim.version) {
      throw new ConflictError(`nodeclaim ${claim.name}: version ${claim.version} is stale (stored ${stored.version})`);
    }
    const next = { ...clone(claim), version: claim.version + 1 };
    this.claims.set(claim.name, next);
    return clone(next);
  }

  async delete(name: string): Promise<void> {
    this.record('delete', name);
    this.claims.delete(name);
  }

  /** Test helper: puts a claim as-is (no version check, no call recorded). */
  put(claim: NodeClaim): void {
    this.claims.set(claim.name, clone(claim));
  }

  /** Test helper: sets (or with undefined, removes: an emptied or replaced table) the claims epoch. */
  setEpoch(epochMs: number | undefined): void {
    this.epochMs = epochMs;
  }

  /** Test helper: the recorded claims epoch (epoch ms) without recording a call. */
  peekEpoch(): number | undefined {
    return this.epochMs;
  }

  /** Test helper: the stored claim without recording a call. */
  peek(name: string): NodeClaim | undefined {
    const c = this.claims.get(name);
    return c && clone(c);
  }

  /** Test helper: all stored claims without recording a call. */
  all(): NodeClaim[] {
    return [...this.claims.values()].map(clone);
  }

  override reset(): void {
    super.reset();
    this.claims.clear();
    this.epochMs = undefined;
  }
}
