/**
 * In-memory object storage of the local API server: one monotonically increasing
 * resourceVersion for the whole cluster (as etcd's revision), a bounded event log that
 * watches replay from, and listeners for live events.
 */
import { localUuid } from '../ids.ts';
import type { KubeObject } from '../../../shared/api/kube.ts';
import { groupVersion, typeKey, type ResourceType } from './resources.ts';

/** A watch event as the API server streams it. */
export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** One change, in resourceVersion order. */
export interface StoreEvent {
  type: WatchEventType;
  /** {@link typeKey} of the object's type, e.g. "v1/pods". */
  typeKey: string;
  /** The object after the change (for DELETED: its last state, with a new resourceVersion). */
  object: KubeObject;
  rv: number;
}

/**
 * An API error with the fields of a Kubernetes `Status` body (`code`, `reason`, `message`,
 * `details`). The server answers it as `{kind: "Status", status: "Failure", ...}`.
 */
export class ApiError extends Error {
  override name = 'ApiError';
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }

  /** The Status body the real API server sends for this error. */
  toStatus(): object {
    return {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: this.message,
      reason: this.reason,
      ...(this.details ? { details: this.details } : {}),
      code: this.code,
    };
  }

  static notFound(t: ResourceType, name: string): ApiError {
    return new ApiError(404, 'NotFound', `${qualified(t)} "${name}" not found`, details(t, name));
  }

  static alreadyExists(t: ResourceType, name: string): ApiError {
    return new ApiError(409, 'AlreadyExists', `${qualified(t)} "${name}" already exists`, details(t, name));
  }

  static conflict(t: ResourceType, name: string): ApiError {
    return new ApiError(
      409,
      'Conflict',
      `Operation cannot be fulfilled on ${qualified(t)} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
      details(t, name),
    );
  }

  static invalid(t: ResourceType, name: string, problem: string): ApiError {
    return new ApiError(422, 'Invalid', `${t.kind} "${name}" is invalid: ${problem}`, { ...details(t, name), kind: t.kind });
  }

  static badRequest(message: string): ApiError {
    return new ApiError(400, 'BadRequest', message);
  }
}

function qualified(t: ResourceType): string {
  return t.group ? `${t.plural}.${t.group}` : t.plural;
}

function details(t: ResourceType, name: string): Record<string, unknown> {
  return { name, ...(t.group ? { group: t.group } : {}), kind: t.plural };
}

/** Deep copy of a JSON object (objects leave the store only as copies). */
export function clone<T>(o: T): T {
  return structuredClone(o);
}

/**
 * How many events the log keeps. A watch from an older resourceVersion gets 410 Expired, as
 * from the real API server once etcd compacted (the watch cache keeps a bounded window).
 */
export const EVENT_LOG_SIZE = 20_000;

/** The object store. Not thread-safe (Node is single-threaded); every method is synchronous. */
export class ObjectStore {
  private rv = 1000;
  private readonly byType = new Map<string, Map<string, KubeObject>>();
  private readonly log: StoreEvent[] = [];
  private readonly listeners = new Set<(e: StoreEvent) => void>();

  /** @param now the cluster clock (creationTimestamp, deletionTimestamp). */
  constructor(
    private readonly now: () => Date,
    private readonly logSize: number = EVENT_LOG_SIZE,
  ) {}

  /** The latest resourceVersion (as a number). */
  get resourceVersion(): number {
    return this.rv;
  }

  /** The oldest resourceVersion a watch can resume from without 410. */
  get oldestResumableVersion(): number {
    return this.log.length > 0 ? this.log[0].rv - 1 : this.rv;
  }

  private bucket(t: ResourceType): Map<string, KubeObject> {
    const k = typeKey(t);
    let m = this.byType.get(k);
    if (!m) this.byType.set(k, (m = new Map()));
    return m;
  }

  /** A copy of the object, or undefined. */
  get(t: ResourceType, namespace: string | undefined, name: string): KubeObject | undefined {
    const o = this.bucket(t).get(key(t, namespace, name));
    return o ? clone(o) : undefined;
  }

  /** Copies of every object of the type (in one namespace when given), sorted by namespace/name. */
  list(t: ResourceType, namespace?: string): KubeObject[] {
    const out: KubeObject[] = [];
    for (const o of this.bucket(t).values()) if (!namespace || !t.namespaced || o.metadata.namespace === namespace) out.push(clone(o));
    return out.sort((a, b) => (key(t, a.metadata.namespace, a.metadata.name) < key(t, b.metadata.namespace, b.metadata.name) ? -1 : 1));
  }

  /**
   * The stored objects themselves, in insertion order, without copying: for read-only use by the
   * simulated controllers (copy before changing one; a mutated stored object would defeat the
   * change detection of {@link update}).
   */
  listShared(t: ResourceType, namespace?: string): readonly KubeObject[] {
    const out: KubeObject[] = [];
    for (const o of this.bucket(t).values()) if (!namespace || !t.namespaced || o.metadata.namespace === namespace) out.push(o);
    return out;
  }

  /**
   * Stores a new object: sets uid, resourceVersion, creationTimestamp, generation 1, apiVersion and kind.
   * @throws ApiError 409 AlreadyExists.
   */
  create(t: ResourceType, obj: KubeObject): KubeObject {
    const k = key(t, obj.metadata.namespace, obj.metadata.name);
    const b = this.bucket(t);
    if (b.has(k)) throw ApiError.alreadyExists(t, obj.metadata.name);
    const o = clone(obj);
    o.apiVersion = groupVersion(t);
    o.kind = t.kind;
    if (!t.namespaced) delete o.metadata.namespace;
    o.metadata.uid = localUuid();
    o.metadata.creationTimestamp = rfc3339(this.now());
    if (hasSpec(o)) o.metadata.generation = 1;
    delete o.metadata.deletionTimestamp;
    o.metadata.resourceVersion = String(++this.rv);
    b.set(k, o);
    this.emit({ type: 'ADDED', typeKey: typeKey(t), object: o, rv: this.rv });
    return clone(o);
  }

  /**
   * Replaces an existing object. When `obj.metadata.resourceVersion` is set it must equal the
   * stored one (optimistic concurrency). uid and creationTimestamp are kept; generation grows
   * when spec changed. A no-op update keeps the resourceVersion and emits nothing.
   * @throws ApiError 404 NotFound, 409 Conflict.
   */
  update(t: ResourceType, obj: KubeObject): KubeObject {
    const k = key(t, obj.metadata.namespace, obj.metadata.name);
    const b = this.bucket(t);
    const prev = b.get(k);
    if (!prev) throw ApiError.notFound(t, obj.metadata.name);
    if (obj.metadata.resourceVersion && obj.metadata.resourceVersion !== prev.metadata.resourceVersion) throw ApiError.conflict(t, obj.metadata.name);
    const o = clone(obj);
    o.apiVersion = groupVersion(t);
    o.kind = t.kind;
    if (!t.namespaced) delete o.metadata.namespace;
    o.metadata.uid = prev.metadata.uid;
    o.metadata.creationTimestamp = prev.metadata.creationTimestamp;
    o.metadata.generation = prev.metadata.generation;
    o.metadata.resourceVersion = prev.metadata.resourceVersion;
    if (hasSpec(o) && JSON.stringify(o.spec) !== JSON.stringify(prev.spec)) o.metadata.generation = (prev.metadata.generation ?? 1) + 1;
    if (JSON.stringify(o) === JSON.stringify(prev)) return clone(prev);
    o.metadata.resourceVersion = String(++this.rv);
    b.set(k, o);
    this.emit({ type: 'MODIFIED', typeKey: typeKey(t), object: o, rv: this.rv });
    return clone(o);
  }

  /**
   * Removes an object for good; returns its last state.
   * @throws ApiError 404 NotFound.
   */
  remove(t: ResourceType, namespace: string | undefined, name: string): KubeObject {
    const k = key(t, namespace, name);
    const b = this.bucket(t);
    const prev = b.get(k);
    if (!prev) throw ApiError.notFound(t, name);
    b.delete(k);
    const o = clone(prev);
    o.metadata.resourceVersion = String(++this.rv);
    this.emit({ type: 'DELETED', typeKey: typeKey(t), object: o, rv: this.rv });
    return clone(o);
  }

  /**
   * Events of one type after resourceVersion `rv`, or 'expired' when the log no longer reaches back
   * that far (the caller answers 410 Expired).
   */
  eventsSince(tKey: string, rv: number): StoreEvent[] | 'expired' {
    if (rv < this.oldestResumableVersion) return 'expired';
    return this.log.filter((e) => e.rv > rv && e.typeKey === tKey).map((e) => ({ ...e, object: clone(e.object) }));
  }

  /** Calls `fn` on every change from now on; returns the unsubscribe function. */
  subscribe(fn: (e: StoreEvent) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  private emit(e: StoreEvent): void {
    this.log.push(e);
    if (this.log.length > this.logSize) this.log.splice(0, this.log.length - this.logSize);
    for (const l of [...this.listeners]) {
      try {
        l({ ...e, object: clone(e.object) });
      } catch {
        // a failing listener must not break the write that triggered it
      }
    }
  }
}

function key(t: ResourceType, namespace: string | undefined, name: string): string {
  return t.namespaced ? `${namespace ?? 'default'}/${name}` : name;
}

function hasSpec(o: KubeObject): boolean {
  return o.spec !== undefined;
}

/** RFC 3339 with second precision, as Kubernetes prints metav1.Time. */
export function rfc3339(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}
