/**
 * A small list + watch loop (client-go's Reflector, without its full object cache): lists with
 * pagination ({@link listPage}: each object parsed as its bytes arrive), hands each object to a
 * `transform` that keeps only what the caller needs (memory stays proportional to what is kept,
 * not to the cluster), then watches (client-node's Watch) from the list's
 * resourceVersion. The watch resumes from the last resourceVersion seen (bookmarks included, so
 * a quiet watch's resourceVersion keeps up with the cluster's); only a 410 Gone (or a failed
 * list) lists again. The API server's watch is reliable from a resourceVersion; a periodic
 * re-list would cost a full list of the cluster every period for nothing (it remains an option,
 * `relistIntervalMs`, off by default).
 *
 * {@link Reflector.currentAsOfMs} tells how current the kept state is: now while the watch is
 * open, else the moment it was last open (what the agent stamps on the cluster view).
 */
import { Watch, type KubeConfig } from '@kubernetes/client-node';
import { statusOf, type RbacPermission } from './kube-api.ts';
import { listPage } from './list-page.ts';

/** What a Reflector can list and watch: its API group and cluster-wide collection path. */
export const ReflectorKinds = {
  pods: { apiGroup: '', path: '/api/v1/pods' },
  nodes: { apiGroup: '', path: '/api/v1/nodes' },
  /** Karpenter's NodeClaim objects (infra/k8s/crds); a cluster without the CRD answers 404 until it is installed. */
  nodeclaims: { apiGroup: 'karpenter.sh', path: '/apis/karpenter.sh/v1/nodeclaims' },
} as const;
export type ReflectorKind = keyof typeof ReflectorKinds;

/** The RBAC permissions a Reflector of `kind` needs (cluster-wide list and watch; never get). */
export const ReflectorRbac = (kind: ReflectorKind): RbacPermission[] => [
  { apiGroup: ReflectorKinds[kind].apiGroup, resource: kind, verb: 'list' },
  { apiGroup: ReflectorKinds[kind].apiGroup, resource: kind, verb: 'watch' },
];

/** Page size of the initial list. */
export const ListPageSize = 500;
/** Delay before retrying after a failed list or watch. */
export const RetryDelayMs = 2_000;
/**
 * Delay before listing again when the resource is not served (404: a CRD not installed yet): the
 * CRD is applied with the agent (infra/k8s), so this is an install in progress, not worth a list
 * (and a warning) every 2 s.
 */
export const NotServedRetryDelayMs = 30_000;
/**
 * The server ends each watch after this long, a normal end that is resumed at once from the last
 * resourceVersion. It is below client-node's Watch inactivity timeout (30 s without a byte), which
 * otherwise cut every quiet watch of a real kube-apiserver short with an error (its bookmarks
 * come about once a minute; found on the real tier, docs/real-tier.md).
 */
export const WatchTimeoutSeconds = 25;

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface ReflectorOptions<K> {
  kind: ReflectorKind;
  /** Reduces a raw object (plain JSON) to what is kept; undefined = not interesting. Called on every list item and event. */
  transform: (raw: any) => K | undefined;
  /** Full state after a (re)list: every kept item. */
  onSync: (items: Map<string, K>) => void;
  /** One watch event (the raw object's key; `item` undefined when the transform dropped it). */
  onEvent: (type: WatchEventType, key: string, item: K | undefined) => void;
  onError?: (err: unknown, phase: 'list' | 'watch') => void;
  /** Re-list this often even without 410 (ms); default never. */
  relistIntervalMs?: number;
  /** Clock for {@link Reflector.currentAsOfMs} (epoch ms); default Date.now. */
  nowMs?: () => number;
  /** Progress of a (re)list, after each page: items read so far and kept so far (the agent logs it at debug). */
  onListPage?: (progress: { kind: ReflectorKind; read: number; kept: number }) => void;
}

function keyOf(o: { metadata?: { name?: string; namespace?: string } }): string {
  return o.metadata?.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : (o.metadata?.name ?? '');
}

export class Reflector<K> {
  private stopped = true;
  private abort?: AbortController;
  private resourceVersion = '';
  private relistTimer?: NodeJS.Timeout;
  private synced = false;
  private generation = 0;
  /** A watch stream is open (its events reach us as they happen). */
  private watching = false;
  /** When the state was last known current (list done, or the watch last open), epoch ms. */
  private currentMs?: number;

  constructor(
    private readonly kc: KubeConfig,
    private readonly opts: ReflectorOptions<K>,
  ) {}

  /** True after the first successful list. */
  hasSynced(): boolean {
    return this.synced;
  }

  /**
   * Until when the kept state is known to match the API server (epoch ms): now while the watch
   * stream is open; the time it closed or failed while reconnecting; undefined before the first list.
   */
  currentAsOfMs(): number | undefined {
    return this.watching ? this.now() : this.currentMs;
  }

  private endWatching(): void {
    if (this.watching) this.currentMs = this.now();
    this.watching = false;
  }

  private now(): number {
    return this.opts.nowMs?.() ?? Date.now();
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    void this.relist();
  }

  stop(): void {
    this.stopped = true;
    this.endWatching();
    this.generation++;
    clearTimeout(this.relistTimer);
    this.abort?.abort();
  }

  private async list(): Promise<Map<string, K>> {
    const path = ReflectorKinds[this.opts.kind].path;
    const items = new Map<string, K>();
    let cont: string | undefined;
    let read = 0;
    do {
      const meta = await listPage(this.kc, path, { limit: ListPageSize, continue: cont }, (o) => {
        read++;
        const k = this.opts.transform(o);
        if (k !== undefined) items.set(keyOf(o), k);
      });
      this.resourceVersion = meta.resourceVersion ?? this.resourceVersion;
      cont = meta.continue || undefined;
      this.opts.onListPage?.({ kind: this.opts.kind, read, kept: items.size });
    } while (cont);
    return items;
  }

  private async relist(): Promise<void> {
    if (this.stopped) return;
    const gen = ++this.generation;
    this.endWatching();
    this.abort?.abort();
    clearTimeout(this.relistTimer);
    try {
      const items = await this.list();
      if (gen !== this.generation) return;
      this.synced = true;
      this.currentMs = this.now();
      this.opts.onSync(items);
      if (this.opts.relistIntervalMs) {
        this.relistTimer = setTimeout(() => void this.relist(), this.opts.relistIntervalMs);
        this.relistTimer.unref?.();
      }
      await this.watch(gen);
    } catch (err) {
      this.opts.onError?.(err, 'list');
      if (gen === this.generation) this.relistTimer = setTimeout(() => void this.relist(), statusOf(err) === 404 ? NotServedRetryDelayMs : RetryDelayMs);
    }
  }

  private async watch(gen: number): Promise<void> {
    if (this.stopped || gen !== this.generation) return;
    const path = ReflectorKinds[this.opts.kind].path;
    let gone = false;
    let ended = false;
    const abort = await new Watch(this.kc).watch(
      path,
      { resourceVersion: this.resourceVersion, allowWatchBookmarks: true, timeoutSeconds: WatchTimeoutSeconds },
      (phase, obj) => {
        if (gen !== this.generation) return;
        if (phase === 'ERROR') {
          if (obj?.code === 410) gone = true;
          return;
        }
        const rv = obj?.metadata?.resourceVersion;
        if (rv) this.resourceVersion = rv;
        if (phase === 'BOOKMARK') return;
        // Watch hands over the event's object as parsed from its JSON line: already plain JSON.
        this.opts.onEvent(phase as WatchEventType, keyOf(obj), phase === 'DELETED' ? undefined : this.opts.transform(obj));
      },
      (err) => {
        ended = true;
        if (gen !== this.generation) return;
        if (this.watching) this.currentMs = this.now();
        this.watching = false;
        if (this.stopped) return;
        if (gone || statusOf(err) === 410) {
          void this.relist(); // resourceVersion too old: start over
          return;
        }
        if (err) this.opts.onError?.(err, 'watch');
        // Watch ended (server timeout or error): resume from the last resourceVersion.
        setTimeout(() => void this.watch(gen).catch((e) => this.opts.onError?.(e, 'watch')), err ? RetryDelayMs : 0).unref?.();
      },
    );
    this.abort = abort;
    if (!ended && gen === this.generation && !this.stopped) this.watching = true;
  }
}
