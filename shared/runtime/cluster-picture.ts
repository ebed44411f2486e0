/**
 * The cluster picture provisioning and disruption decide on: nodes and bound pods from the
 * agent's cluster view (shared/api/cluster-view.ts, through the ClusterViewStore port), pending
 * pods from the live API (one list of unbound pods), and — when there is no view, it cannot be
 * read, or it is older than {@link MaxViewAgeSeconds} — nodes and pods listed live instead.
 * A too-old view is never used (docs/cluster-state.md).
 *
 * The decoded view is cached per container with its ETag: a warm function whose view did not
 * change since its last invocation transfers and parses nothing (conditional GET → 304).
 */
import { gunzipSync } from 'node:zlib';
import { hasClaimVolumes, podsByNode, type Node, type Pod, type StorageObjects } from '../api/kube.ts';
import type { ClusterViewStore, KubeApi } from '../api/ports.ts';
import { clusterOfView, inView, parseClusterView, viewAgeSeconds, type ClusterView } from '../api/cluster-view.ts';
import { ViewHeartbeatSeconds } from '../api/cluster-view.ts';

export { ViewHeartbeatSeconds };
import type { Log } from './observability.ts';

/**
 * A view older than this (seconds since its `generatedAt`) is refused and the cluster is listed
 * live. The agent republishes at least every {@link ViewHeartbeatSeconds} and within a couple of
 * seconds of a change, so a healthy agent's view is never near the bound; an agent that is down
 * or cannot write leaves the functions on the live path, slower but exact.
 */
export const MaxViewAgeSeconds = 60;

export interface ClusterPicture {
  nodes: Node[];
  /** Pods bound to a node and not terminal. */
  boundPods: Pod[];
  /** `boundPods` by `spec.nodeName` (shared/api/kube.ts podsByNode): grouped once per decoded view, not per invocation. */
  podsByNode: Map<string, Pod[]>;
  /** Pods bound to no node (live). */
  pendingPods: Pod[];
  /** Where nodes and bound pods came from. */
  source: 'view' | 'live';
  /** view: seconds since the view's generatedAt. */
  ageSeconds?: number;
  /** live although a view store is configured: why the view was not used. */
  refused?: string;
}

interface Cached {
  etag: string;
  view: ClusterView;
  picture: { nodes: Node[]; pods: Pod[]; podsByNode: Map<string, Pod[]> };
}
const cache = new WeakMap<ClusterViewStore, Cached>();

/**
 * Reads the view (cached by ETag). @returns undefined with the reason when it is absent,
 * unreadable, or too old at `now`.
 */
async function fromView(views: ClusterViewStore, cluster: string, now: Date, maxAgeSeconds: number): Promise<(Cached['picture'] & { ageSeconds: number }) | { refused: string }> {
  let entry = cache.get(views);
  let got: Awaited<ReturnType<ClusterViewStore['get']>>;
  try {
    got = await views.get(entry?.etag);
  } catch (err) {
    return { refused: `cannot read the cluster view: ${(err as Error).message}` };
  }
  if (got === undefined) return { refused: 'no cluster view published yet' };
  if (got !== 'unchanged') {
    try {
      const view = parseClusterView(JSON.parse(gunzipSync(got.body).toString('utf8')), cluster);
      const picture = clusterOfView(view);
      entry = { etag: got.etag, view, picture: { ...picture, podsByNode: podsByNode(picture.pods) } };
      cache.set(views, entry);
    } catch (err) {
      return { refused: `cluster view unreadable: ${(err as Error).message}` };
    }
  }
  if (!entry) return { refused: 'cluster view unchanged but not cached' };
  const ageSeconds = viewAgeSeconds(entry.view, now);
  if (ageSeconds > maxAgeSeconds) return { refused: `cluster view is ${Math.round(ageSeconds)} s old (bound ${maxAgeSeconds} s)` };
  return { ...entry.picture, ageSeconds };
}

/**
 * The picture at `now`. `pending`: the live unbound pods when the caller listed them already.
 * @throws what the Kubernetes port throws (TransientError when throttled).
 */
export async function readClusterPicture(
  deps: { kube: KubeApi; views?: ClusterViewStore; env: { clusterName: string }; log: Log },
  now: Date,
  opts: { pending?: Pod[]; maxAgeSeconds?: number } = {},
): Promise<ClusterPicture> {
  if (deps.views) {
    const [v, pending] = await Promise.all([fromView(deps.views, deps.env.clusterName, now, opts.maxAgeSeconds ?? MaxViewAgeSeconds), opts.pending ?? deps.kube.listPods({ unbound: true })]);
    if (!('refused' in v)) return { nodes: v.nodes, boundPods: v.pods, podsByNode: v.podsByNode, pendingPods: pending, source: 'view', ageSeconds: v.ageSeconds };
    deps.log.warn('not using the cluster view, listing the cluster', { reason: v.refused });
    return { ...(await live(deps.kube)), refused: v.refused };
  }
  return live(deps.kube);
}

async function live(kube: KubeApi): Promise<ClusterPicture> {
  const [nodes, pods] = await Promise.all([kube.listNodes(), kube.listPods()]);
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
