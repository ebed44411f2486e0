/**
 * The cluster picture provisioning and disruption decide on: nodes and bound pods from the
 * agent's cluster view (shared/api/cluster-view.ts, through the ClusterViewStore port), pending
 * pods from the live API (one list of unbound pods), and — when there is no view, it cannot be
 * read, or it is older than {@link MaxViewAgeSeconds} — nodes and pods listed live instead.
 * A too-old view is never used (docs/cluster-state.md), nor one dated in the future, too large
 * or malformed: the view is a cache, never an authority (DESIGN.md "Trust"), and a bad one means
 * "read live", never a crash. A caller can also take the nodes from the live list and only their
 * bound pods from the view (`liveNodes`).
 *
 * The decoded view is cached per container with its ETag: a warm function whose view did not
 * change since its last invocation transfers and parses nothing (conditional GET → 304).
 */
import { gunzipSync } from 'node:zlib';
import { hasClaimVolumes, podsByNode, type Node, type Pod, type StorageObjects } from '../api/kube.ts';
import type { ClusterViewStore, KubeApi } from '../api/ports.ts';
import {
  ClusterViewTooLargeError,
  MaxViewGzipBytes,
  MaxViewJsonBytes,
  clusterOfView,
  inView,
  parseClusterView,
  viewAgeSeconds,
  type ClusterView,
} from '../api/cluster-view.ts';
import { ViewHeartbeatSeconds } from '../api/cluster-view.ts';

export { ViewHeartbeatSeconds };
import { type Log, type MetricsSink } from './observability.ts';
import { MetricNames } from '../api/metrics.ts';

/**
 * A view older than this (seconds since its `generatedAt`) is refused and the cluster is listed
 * live. The agent republishes at least every {@link ViewHeartbeatSeconds} and within a couple of
 * seconds of a change, so a healthy agent's view is never near the bound; an agent that is down
 * or cannot write leaves the functions on the live path, slower but exact.
 */
export const MaxViewAgeSeconds = 60;

/**
 * A view whose `generatedAt` is more than this many seconds after `now` is refused: clocks
 * (the agent's node, Lambda's) agree within well under a second on EC2's time sync; a time in the
 * future would otherwise pass the age bound for ever.
 */
export const MaxViewFutureSeconds = 5;

/**
 * With `liveNodes`, the most nodes whose pods are listed one node at a time (the view does not
 * show the node yet, or the caller asks for its live pods); beyond, one list of every pod is
 * cheaper than that many requests, and is made instead.
 */
export const MaxNodePodLists = 100;

/** Per-node pod lists in flight at once. */
const NodePodListConcurrency = 10;

/** Why a view was not used: the `reason` dimension of MetricNames.clusterViewRefused. */
export type ViewRefusal = 'absent' | 'unreachable' | 'too-large' | 'invalid' | 'stale' | 'future';

export interface ClusterPicture {
  nodes: Node[];
  /** Pods bound to a node and not terminal. */
  boundPods: Pod[];
  /** `boundPods` by `spec.nodeName` (shared/api/kube.ts podsByNode): grouped once per decoded view, not per invocation. */
  podsByNode: Map<string, Pod[]>;
  /** Pods bound to no node (live). */
  pendingPods: Pod[];
  /** Where nodes and bound pods came from (`liveNodes`: the nodes are live either way). */
  source: 'view' | 'live';
  /** view: seconds since the view's generatedAt. */
  ageSeconds?: number;
  /** live although a view store is configured: why the view was not used. */
  refused?: string;
  /** view with `liveNodes`: the nodes whose pods were listed live, not taken from the view. */
  livePodsOf?: string[];
}

type Decoded = { nodes: Node[]; pods: Pod[]; podsByNode: Map<string, Pod[]>; view: ClusterView };
/** The last object read per store, by ETag: its decoded picture, or why it was refused (not downloaded again until it changes). */
interface Cached {
  etag: string;
  decoded: Decoded | { refused: string; kind: ViewRefusal };
}
const cache = new WeakMap<ClusterViewStore, Cached>();

type Refused = { refused: string; kind: ViewRefusal };

/** Gunzips and checks an object: refused when it is too large, or decompresses past MaxViewJsonBytes, or fails parseClusterView. */
function decode(body: Uint8Array, cluster: string): Decoded | Refused {
  if (body.byteLength > MaxViewGzipBytes) return { refused: `cluster view object is ${body.byteLength} bytes (cap ${MaxViewGzipBytes})`, kind: 'too-large' };
  let text: string;
  try {
    text = gunzipSync(body, { maxOutputLength: MaxViewJsonBytes }).toString('utf8');
  } catch (err) {
    if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE')
      return { refused: `cluster view decompresses past ${MaxViewJsonBytes} bytes`, kind: 'too-large' };
    return { refused: `cluster view unreadable: ${(err as Error).message}`, kind: 'invalid' };
  }
  try {
    const view = parseClusterView(JSON.parse(text), cluster);
    const picture = clusterOfView(view);
    return { ...picture, podsByNode: podsByNode(picture.pods), view };
  } catch (err) {
    return { refused: `cluster view unreadable: ${(err as Error).message}`, kind: 'invalid' };
  }
}

/**
 * Reads the view (cached by ETag). @returns the decoded view and its age, or why it is not used:
 * absent, unreachable, too large, malformed, older than `maxAgeSeconds` or dated in the future.
 */
async function fromView(views: ClusterViewStore, cluster: string, now: Date, maxAgeSeconds: number): Promise<(Decoded & { ageSeconds: number }) | Refused> {
  let entry = cache.get(views);
  let got: Awaited<ReturnType<ClusterViewStore['get']>>;
  try {
    got = await views.get(entry?.etag);
  } catch (err) {
    if (err instanceof ClusterViewTooLargeError) return { refused: err.message, kind: 'too-large' };
    return { refused: `cannot read the cluster view: ${(err as Error).message}`, kind: 'unreachable' };
  }
  if (got === undefined) return { refused: 'no cluster view published yet', kind: 'absent' };
  if (got !== 'unchanged') {
    entry = { etag: got.etag, decoded: decode(got.body, cluster) };
    cache.set(views, entry);
  }
  if (!entry) return { refused: 'cluster view unchanged but not cached', kind: 'unreachable' };
  if ('refused' in entry.decoded) return entry.decoded;
  const ageSeconds = viewAgeSeconds(entry.decoded.view, now);
  if (ageSeconds > maxAgeSeconds) return { refused: `cluster view is ${Math.round(ageSeconds)} s old (bound ${maxAgeSeconds} s)`, kind: 'stale' };
  if (ageSeconds < -MaxViewFutureSeconds)
    return { refused: `cluster view is dated ${Math.round(-ageSeconds)} s in the future (bound ${MaxViewFutureSeconds} s)`, kind: 'future' };
  return { ...entry.decoded, ageSeconds };
}

/** What {@link readClusterPicture} reads through. */
export interface PictureDeps {
  kube: KubeApi;
  views?: ClusterViewStore;
  env: { clusterName: string };
  log: Log;
  /** Counts refused views (MetricNames.clusterViewRefused) when given. */
  metrics?: MetricsSink;
}

/**
 * The picture at `now`. `pending`: the live unbound pods when the caller listed them already.
 * `liveNodes`: the nodes are the live Node list (one list per call) even when the view is used,
 * and the view gives only their bound pods — a view node absent from the live list is dropped
 * with its pods, so a forged or stale view cannot add capacity; the pods of live nodes the view
 * does not show, and of those `livePodsFor` selects, are listed live per node
 * ({@link MaxNodePodLists}; beyond, every pod is listed once).
 * A refused view: one warning line naming the reason, one count of MetricNames.clusterViewRefused,
 * and the cluster read live.
 * @throws what the Kubernetes port throws (TransientError when throttled).
 */
export async function readClusterPicture(
  deps: PictureDeps,
  now: Date,
  opts: { pending?: Pod[]; maxAgeSeconds?: number; liveNodes?: boolean; livePodsFor?: (n: Node) => boolean } = {},
): Promise<ClusterPicture> {
  if (deps.views) {
    const [v, pending, liveNodes] = await Promise.all([
      fromView(deps.views, deps.env.clusterName, now, opts.maxAgeSeconds ?? MaxViewAgeSeconds),
      opts.pending ?? deps.kube.listPods({ unbound: true }),
      opts.liveNodes ? deps.kube.listNodes() : undefined,
    ]);
    if (!('refused' in v)) {
      if (!liveNodes) return { nodes: v.nodes, boundPods: v.pods, podsByNode: v.podsByNode, pendingPods: pending, source: 'view', ageSeconds: v.ageSeconds };
      return withLiveNodes(deps.kube, v, liveNodes, pending, opts.livePodsFor);
    }
    deps.log.warn('not using the cluster view, listing the cluster', { reason: v.refused });
    deps.metrics?.count(MetricNames.clusterViewRefused, { reason: v.kind });
    return { ...(await live(deps.kube, liveNodes)), refused: v.refused };
  }
  return live(deps.kube);
}

/** The view's bound pods on the live nodes (see readClusterPicture `liveNodes`). */
async function withLiveNodes(
  kube: KubeApi,
  v: Decoded & { ageSeconds: number },
  nodes: Node[],
  pendingPods: Pod[],
  livePodsFor?: (n: Node) => boolean,
): Promise<ClusterPicture> {
  const viewNames = new Set(v.nodes.map((n) => n.metadata.name));
  const relist = nodes.filter((n) => !viewNames.has(n.metadata.name) || livePodsFor?.(n));
  const liveNames = new Set(nodes.map((n) => n.metadata.name));
  const base = { nodes, pendingPods, source: 'view' as const, ageSeconds: v.ageSeconds };
  if (relist.length === 0 && v.nodes.every((n) => liveNames.has(n.metadata.name))) return { ...base, boundPods: v.pods, podsByNode: v.podsByNode };
  if (relist.length > MaxNodePodLists) return { ...(await live(kube, nodes)), pendingPods };
  const listed = await mapLimit(
    relist,
    NodePodListConcurrency,
    async (n) =>
      [n.metadata.name, (await kube.listPods({ nodeName: n.metadata.name })).filter((p) => p.spec.nodeName === n.metadata.name && inView(p))] as const,
  );
  const byNode = new Map<string, Pod[]>(listed);
  for (const n of nodes) if (!byNode.has(n.metadata.name)) byNode.set(n.metadata.name, v.podsByNode.get(n.metadata.name) ?? []);
  return { ...base, boundPods: [...byNode.values()].flat(), podsByNode: byNode, livePodsOf: relist.map((n) => n.metadata.name) };
}

/** `f` over `items`, at most `limit` at once, results in order. */
async function mapLimit<T, R>(items: readonly T[], limit: number, f: (x: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await f(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

async function live(kube: KubeApi, listed?: Node[]): Promise<ClusterPicture> {
  const [nodes, pods] = await Promise.all([listed ?? kube.listNodes(), kube.listPods()]);
  const boundPods = pods.filter(inView);
  return { nodes, boundPods, podsByNode: podsByNode(boundPods), pendingPods: pods.filter((p) => !p.spec.nodeName), source: 'live' };
}

/**
 * The cluster's PersistentVolumeClaims, PersistentVolumes and StorageClasses when one of `pods`
 * mounts a claim (three lists, read only then), for solve() to check those pods' volumes
 * (shared/scheduling/volumes.ts); undefined when none does. Used by the provisioner (pending pods)
 * and disruption (the pods consolidation would move).
 * @throws what the Kubernetes port throws.
 */
export async function readStorage(kube: KubeApi, pods: readonly Pod[]): Promise<StorageObjects | undefined> {
  if (!pods.some(hasClaimVolumes)) return undefined;
  const [claims, volumes, classes] = await Promise.all([
    kube.listObjects('v1', 'PersistentVolumeClaim'),
    kube.listObjects('v1', 'PersistentVolume'),
    kube.listObjects('storage.k8s.io/v1', 'StorageClass'),
  ]);
  return { claims, volumes, classes };
}

/** Forgets the cached views (tests). */
export function clearClusterViewCache(views: ClusterViewStore): void {
  cache.delete(views);
}
