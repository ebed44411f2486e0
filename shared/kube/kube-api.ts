/**
 * KubeApi (shared/api/ports.ts) over @kubernetes/client-node v2: nodes, pods, PDBs, evictions
 * (policy/v1; 429 → 'blocked'), NodePools (karpenter.sh/v1) / EC2NodeClasses through the custom
 * objects API: only the NodePools whose nodeClassRef names the deployment's node class group
 * (karpenter.k8s.aws as a Karpenter user has them, or nodefleet.io beside Karpenter), and only that
 * group's EC2NodeClasses (shared/api/nodepool.ts `managedNodeClassGroup`, docs/migration.md).
 *
 * Connection: a {@link KubeConnection} provider — a kubeconfig file (embedded environment,
 * `NODEFLEET_KUBECONFIG`) or an API server URL + CA + bearer token (Lambda: EKS DescribeCluster
 * and the presigned-STS token from shared/aws/eks.ts). The clients are rebuilt when the provider
 * hands out a new token (it refreshes before the 15-minute expiry).
 */
import { ApiException, AppsV1Api, CoreV1Api, CustomObjectsApi, KubeConfig, PatchStrategy, PolicyV1Api, setHeaderOptions } from '@kubernetes/client-node';
import type { KubeApi } from '../api/ports.ts';
import type { KubeObject, Node, Pod, PodDisruptionBudget, Taint } from '../api/kube.ts';
import {
  EC2NodeClassSchema,
  KarpenterNodeClassGroup,
  NodePoolSchema,
  NodefleetNodeClassGroup,
  isManagedNodeClassRef,
  type EC2NodeClass,
  type NodeClassGroup,
  type NodePool,
} from '../api/nodepool.ts';
import { NotFoundError, TransientError, NodefleetError } from '../api/errors.ts';
import type { KubeNodeClaim } from '../api/nodeclaim.ts';
import { FinalizerTermination } from '../api/labels.ts';

/** How to reach the API server. */
export type KubeConnection =
  | { kind: 'kubeconfig'; path: string; context?: string }
  | { kind: 'kubeconfig-string'; yaml: string }
  /** The pod's service account (the agent's Deployment). */
  | { kind: 'in-cluster' }
  | { kind: 'token'; server: string; caData: string; token: string; clusterName: string };

/** Returns the current connection; called before each request (cheap when cached). */
export type KubeConnectionProvider = () => Promise<KubeConnection>;

/** Builds a KubeConfig from a connection (also used by the agent's informers). */
export function kubeConfigFor(c: KubeConnection): KubeConfig {
  const kc = new KubeConfig();
  if (c.kind === 'kubeconfig') {
    kc.loadFromFile(c.path);
    if (c.context) kc.setCurrentContext(c.context);
  } else if (c.kind === 'kubeconfig-string') {
    kc.loadFromString(c.yaml);
  } else if (c.kind === 'in-cluster') {
    kc.loadFromCluster();
  } else {
    kc.loadFromOptions({
      clusters: [{ name: c.clusterName, server: c.server, caData: c.caData, skipTLSVerify: false }],
      users: [{ name: 'nodefleet', token: c.token }],
      contexts: [{ name: 'nodefleet', cluster: c.clusterName, user: 'nodefleet' }],
      currentContext: 'nodefleet',
    });
  }
  return kc;
}

/** Page size of pod lists. */
export const ListPageLimit = 500;

/** API group of NodePools; the EC2NodeClass groups one of which a deployment reads. */
export const NodePoolGroups = ['karpenter.sh'] as const;
export const NodeClassGroups = [KarpenterNodeClassGroup, NodefleetNodeClassGroup] as const;

/** Plural resource names for listObjects (default: lower-case kind + "s"). */
const Plurals: Record<string, string> = {
  DaemonSet: 'daemonsets',
  ReplicaSet: 'replicasets',
  StatefulSet: 'statefulsets',
  Deployment: 'deployments',
  Job: 'jobs',
  StorageClass: 'storageclasses',
  PersistentVolume: 'persistentvolumes',
  PersistentVolumeClaim: 'persistentvolumeclaims',
  CSINode: 'csinodes',
  VolumeAttachment: 'volumeattachments',
  NodePool: 'nodepools',
  EC2NodeClass: 'ec2nodeclasses',
};

/** One Kubernetes RBAC permission: `verb` on `resource` (with subresource, `pods/eviction`) in `apiGroup` (`''` = core). */
export interface RbacPermission {
  apiGroup: string;
  resource: string;
  verb: string;
}

const rbac = (apiGroup: string, resource: string, verb: string): RbacPermission => ({ apiGroup, resource, verb });

/**
 * The RBAC permissions each {@link KubeApi} method of this adapter needs (the requests it sends).
 * Each function's ClusterRole in infra/k8s/rbac-controllers.yaml holds exactly the union for the
 * methods that function calls (test/unit/infra/k8s.test.ts derives the calls from the source).
 * `listObjects` is keyed by `<apiVersion> <kind>`.
 */
export const KubeApiRbac = {
  listNodePools: NodePoolGroups.map((g) => rbac(g, 'nodepools', 'list')),
  listNodePoolNames: NodePoolGroups.map((g) => rbac(g, 'nodepools', 'list')),
  listNodeClasses: NodeClassGroups.map((g) => rbac(g, 'ec2nodeclasses', 'list')),
  listNodes: [rbac('', 'nodes', 'list')],
  getNode: [rbac('', 'nodes', 'get')],
  listPods: [rbac('', 'pods', 'list')],
  listPodDisruptionBudgets: [rbac('policy', 'poddisruptionbudgets', 'list')],
  patchNode: [rbac('', 'nodes', 'patch')],
  deleteNode: [rbac('', 'nodes', 'delete')],
  setNodeFinalizer: [rbac('', 'nodes', 'get'), rbac('', 'nodes', 'patch')],
  evictPod: [rbac('', 'pods/eviction', 'create')],
  deletePod: [rbac('', 'pods', 'delete')],
  listNodeClaimObjects: [rbac('karpenter.sh', 'nodeclaims', 'list')],
  getNodeClaimObject: [rbac('karpenter.sh', 'nodeclaims', 'get')],
  putNodeClaimObject: [
    rbac('karpenter.sh', 'nodeclaims', 'create'),
    rbac('karpenter.sh', 'nodeclaims', 'patch'),
    rbac('karpenter.sh', 'nodeclaims/status', 'patch'),
  ],
  deleteNodeClaimObject: [rbac('karpenter.sh', 'nodeclaims', 'patch'), rbac('karpenter.sh', 'nodeclaims', 'delete')],
  listObjects: {
    'apps/v1 DaemonSet': [rbac('apps', 'daemonsets', 'list')],
    'v1 Pod': [rbac('', 'pods', 'list')],
    'v1 Node': [rbac('', 'nodes', 'list')],
    'v1 PersistentVolume': [rbac('', 'persistentvolumes', 'list')],
    'v1 PersistentVolumeClaim': [rbac('', 'persistentvolumeclaims', 'list')],
    'storage.k8s.io/v1 StorageClass': [rbac('storage.k8s.io', 'storageclasses', 'list')],
    'storage.k8s.io/v1 VolumeAttachment': [rbac('storage.k8s.io', 'volumeattachments', 'list')],
  } as Record<string, RbacPermission[]>,
} satisfies Record<keyof KubeApi, RbacPermission[] | Record<string, RbacPermission[]>>;

/** HTTP status of a client-node error, if any. */
export function statusOf(err: unknown): number | undefined {
  if (err instanceof ApiException) return err.code;
  const c = (err as { code?: unknown; statusCode?: unknown } | undefined)?.code ?? (err as { statusCode?: unknown } | undefined)?.statusCode;
  return typeof c === 'number' ? c : undefined;
}

function mapError(err: unknown, what: string): Error {
  const status = statusOf(err);
  if (status === 404) return new NotFoundError(`${what}: not found`, { cause: err });
  if (status === 429 || (status !== undefined && status >= 500)) return new TransientError(`${what}: HTTP ${status}`, { cause: err });
  return new NodefleetError(`${what}: ${status ? `HTTP ${status}` : ((err as Error)?.message ?? String(err))}`, { cause: err });
}

interface Clients {
  key: string;
  core: CoreV1Api;
  policy: PolicyV1Api;
  apps: AppsV1Api;
  custom: CustomObjectsApi;
}

/** Problems met while reading NodePools / EC2NodeClasses (invalid objects are skipped, not fatal). */
export type InvalidObjectReporter = (kind: string, name: string, problems: string[]) => void;

/** KubeApi over client-node. */
export class ClientNodeKubeApi implements KubeApi {
  private clients?: Clients;

  /** @param nodeClassGroup the deployment's node class group: NodePools of another are not listed. */
  constructor(
    private readonly connection: KubeConnectionProvider,
    private readonly onInvalid: InvalidObjectReporter = () => {},
    private readonly nodeClassGroup: NodeClassGroup = KarpenterNodeClassGroup,
  ) {}

  private async api(): Promise<Clients> {
    const c = await this.connection();
    const key =
      c.kind === 'token'
        ? `${c.server}|${c.token}`
        : c.kind === 'kubeconfig'
          ? `${c.path}|${c.context ?? ''}`
          : c.kind === 'in-cluster'
            ? 'in-cluster'
            : c.yaml;
    if (this.clients?.key === key) return this.clients;
    const kc = kubeConfigFor(c);
    this.clients = {
      key,
      core: kc.makeApiClient(CoreV1Api),
      policy: kc.makeApiClient(PolicyV1Api),
      apps: kc.makeApiClient(AppsV1Api),
      custom: kc.makeApiClient(CustomObjectsApi),
    };
    return this.clients;
  }

  private async listCustom(group: string, plural: string): Promise<unknown[]> {
    const { custom } = await this.api();
    try {
      const out = (await custom.listClusterCustomObject({ group, version: 'v1', plural })) as { items?: unknown[] };
      return out.items ?? [];
    } catch (err) {
      if (statusOf(err) === 404) return []; // CRD not installed in this group
      throw mapError(err, `list ${plural}.${group}`);
    }
  }

  async listNodePools(): Promise<NodePool[]> {
    const out: NodePool[] = [];
    const seen = new Set<string>();
    for (const g of NodePoolGroups) {
      for (const raw of await this.listCustom(g, 'nodepools')) {
        const r = NodePoolSchema.safeParse(stripServerFields(raw));
        const name = (raw as KubeObject).metadata?.name ?? '?';
        if (!r.success) {
          this.onInvalid(
            'NodePool',
            name,
            r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`),
          );
          continue;
        }
        if (seen.has(name)) continue;
        seen.add(name);
        // Another controller's NodePool (Karpenter's beside nodefleet, or another provider's): not ours to read.
        if (!isManagedNodeClassRef(r.data.spec.template.spec.nodeClassRef, this.nodeClassGroup)) continue;
        out.push(r.data);
      }
    }
    return out;
  }

  async listNodePoolNames(): Promise<{ name: string; deleting: boolean }[] | undefined> {
    const { custom } = await this.api();
    const out = new Map<string, boolean>();
    let installed = false;
    for (const group of NodePoolGroups) {
      let items: KubeObject[];
      try {
        items = ((await custom.listClusterCustomObject({ group, version: 'v1', plural: 'nodepools' })) as { items?: KubeObject[] }).items ?? [];
      } catch (err) {
        if (statusOf(err) === 404) continue; // CRD not installed in this group
        throw mapError(err, `list nodepools.${group}`);
      }
      installed = true;
      for (const o of items) if (o.metadata?.name) out.set(o.metadata.name, (out.get(o.metadata.name) ?? false) || !!o.metadata.deletionTimestamp);
    }
    return installed ? [...out].map(([name, deleting]) => ({ name, deleting })) : undefined;
  }

  async listNodeClasses(): Promise<EC2NodeClass[]> {
    const out: EC2NodeClass[] = [];
    const seen = new Set<string>();
    for (const g of [this.nodeClassGroup]) {
      for (const raw of await this.listCustom(g, 'ec2nodeclasses')) {
        const r = EC2NodeClassSchema.safeParse(stripServerFields(raw));
        const name = (raw as KubeObject).metadata?.name ?? '?';
        if (!r.success) {
          this.onInvalid(
            'EC2NodeClass',
            name,
            r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`),
          );
          continue;
        }
        if (seen.has(name)) continue;
        seen.add(name);
        out.push(r.data);
      }
    }
    return out;
  }

  async listNodes(): Promise<Node[]> {
    const { core } = await this.api();
    try {
      return plain<Node[]>((await core.listNode()).items);
    } catch (err) {
      throw mapError(err, 'list nodes');
    }
  }

  async getNode(name: string): Promise<Node | undefined> {
    const { core } = await this.api();
    try {
      return plain<Node>(await core.readNode({ name }));
    } catch (err) {
      if (statusOf(err) === 404) return undefined;
      throw mapError(err, `get node ${name}`);
    }
  }

  /** Pages of {@link ListPageLimit} (the API server's continue token), so a large cluster is not one response. */
  async listPods(opts: { nodeName?: string; unbound?: boolean } = {}): Promise<Pod[]> {
    const { core } = await this.api();
    const out: Pod[] = [];
    let cont: string | undefined;
    const fieldSelector = opts.nodeName ? `spec.nodeName=${opts.nodeName}` : opts.unbound ? 'spec.nodeName=' : undefined;
    try {
      do {
        const page = await core.listPodForAllNamespaces({ ...(fieldSelector ? { fieldSelector } : {}), limit: ListPageLimit, _continue: cont });
        out.push(...plain<Pod[]>(page.items));
        cont = page.metadata?._continue || undefined;
      } while (cont);
      return out;
    } catch (err) {
      throw mapError(err, 'list pods');
    }
  }

  async listPodDisruptionBudgets(): Promise<PodDisruptionBudget[]> {
    const { policy } = await this.api();
    try {
      return plain<PodDisruptionBudget[]>((await policy.listPodDisruptionBudgetForAllNamespaces()).items);
    } catch (err) {
      throw mapError(err, 'list poddisruptionbudgets');
    }
  }

  async listObjects(apiVersion: string, kind: string): Promise<KubeObject[]> {
    const plural = Plurals[kind] ?? `${kind.toLowerCase()}s`;
    if (!apiVersion.includes('/')) {
      const { core } = await this.api();
      try {
        // Core group ("v1"): only the kinds nodefleet reads.
        if (kind === 'PersistentVolume') return withKind(plain<KubeObject[]>((await core.listPersistentVolume()).items), apiVersion, kind);
        if (kind === 'PersistentVolumeClaim')
          return withKind(plain<KubeObject[]>((await core.listPersistentVolumeClaimForAllNamespaces()).items), apiVersion, kind);
        if (kind === 'Pod') return withKind(plain<KubeObject[]>((await core.listPodForAllNamespaces()).items), apiVersion, kind);
        if (kind === 'Node') return withKind(plain<KubeObject[]>((await core.listNode()).items), apiVersion, kind);
      } catch (err) {
        throw mapError(err, `list ${plural}`);
      }
      throw new NodefleetError(`listObjects: core kind ${kind} is not supported`);
    }
    const [group, version] = apiVersion.split('/');
    const { custom } = await this.api();
    try {
      const out = (await custom.listClusterCustomObject({ group, version, plural })) as { items?: KubeObject[] };
      return withKind(out.items ?? [], apiVersion, kind);
    } catch (err) {
      if (statusOf(err) === 404) return [];
      throw mapError(err, `list ${plural}.${group}`);
    }
  }

  /** Merge patch (RFC 7386): `null` label values delete; `taints` replaces the whole list. */
  async patchNode(
    name: string,
    patch: { labels?: Record<string, string | null>; annotations?: Record<string, string | null>; taints?: Taint[]; unschedulable?: boolean },
  ): Promise<Node> {
    const { core } = await this.api();
    const body: Record<string, unknown> = {};
    if (patch.labels || patch.annotations)
      body.metadata = { ...(patch.labels ? { labels: patch.labels } : {}), ...(patch.annotations ? { annotations: patch.annotations } : {}) };
    if (patch.taints !== undefined || patch.unschedulable !== undefined) {
      body.spec = {
        ...(patch.taints !== undefined ? { taints: patch.taints } : {}),
        ...(patch.unschedulable !== undefined ? { unschedulable: patch.unschedulable } : {}),
      };
    }
    try {
      return plain<Node>(await core.patchNode({ name, body }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch)));
    } catch (err) {
      throw mapError(err, `patch node ${name}`);
    }
  }

  async deleteNode(name: string): Promise<void> {
    const { core } = await this.api();
    try {
      await core.deleteNode({ name });
    } catch (err) {
      if (statusOf(err) === 404) return;
      throw mapError(err, `delete node ${name}`);
    }
  }

  /** Merge patch of the finalizer list with the resourceVersion read (409 = someone wrote first: read again). */
  async setNodeFinalizer(name: string, finalizer: string, present: boolean): Promise<Node | undefined> {
    const { core } = await this.api();
    for (let attempt = 1; ; attempt++) {
      const node = await this.getNode(name);
      if (!node) return undefined;
      const current = node.metadata.finalizers ?? [];
      if (current.includes(finalizer) === present) return node;
      const finalizers = present ? [...current, finalizer] : current.filter((f) => f !== finalizer);
      try {
        const body = { metadata: { finalizers, resourceVersion: node.metadata.resourceVersion } };
        return plain<Node>(await core.patchNode({ name, body }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch)));
      } catch (err) {
        const status = statusOf(err);
        if (status === 404) return undefined;
        if (status === 409 && attempt < 3) continue;
        throw mapError(err, `${present ? 'add' : 'remove'} finalizer ${finalizer} on node ${name}`);
      }
    }
  }

  /** 429 (a PDB forbids it now) and 500 (several PDBs match) → 'blocked'; 404 → 'gone'. */
  async evictPod(namespace: string, name: string): Promise<'evicted' | 'blocked' | 'gone'> {
    const { core } = await this.api();
    try {
      await core.createNamespacedPodEviction({
        name,
        namespace,
        body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace } },
      });
      return 'evicted';
    } catch (err) {
      const status = statusOf(err);
      if (status === 404) return 'gone';
      if (status === 429 || status === 500) return 'blocked';
      throw mapError(err, `evict pod ${namespace}/${name}`);
    }
  }

  async listNodeClaimObjects(): Promise<KubeNodeClaim[]> {
    const { custom } = await this.api();
    try {
      const out = (await custom.listClusterCustomObject(NodeClaims)) as { items?: KubeNodeClaim[] };
      return plain<KubeNodeClaim[]>(out.items ?? []);
    } catch (err) {
      if (statusOf(err) === 404) return []; // no NodeClaim CRD
      throw mapError(err, 'list nodeclaims.karpenter.sh');
    }
  }

  async getNodeClaimObject(name: string): Promise<KubeNodeClaim | undefined> {
    const { custom } = await this.api();
    try {
      return plain<KubeNodeClaim>(await custom.getClusterCustomObject({ ...NodeClaims, name }));
    } catch (err) {
      if (statusOf(err) === 404) return undefined; // no such object, or no NodeClaim CRD
      throw mapError(err, `get nodeclaim ${name}`);
    }
  }

  /** Create (409: it exists) or merge-patch metadata + spec, then merge-patch the status subresource. */
  async putNodeClaimObject(o: KubeNodeClaim): Promise<void> {
    const { custom } = await this.api();
    const { status, ...rest } = o;
    const name = o.metadata.name;
    const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
    try {
      try {
        await custom.createClusterCustomObject({ ...NodeClaims, body: rest });
      } catch (err) {
        if (statusOf(err) !== 409) throw err;
        const { creationTimestamp: _c, finalizers: _f, ...metadata } = rest.metadata;
        await custom.patchClusterCustomObject({ ...NodeClaims, name, body: { metadata, spec: rest.spec } }, merge);
      }
      if (status) await custom.patchClusterCustomObjectStatus({ ...NodeClaims, name, body: { status } }, merge);
    } catch (err) {
      throw mapError(err, `put nodeclaim ${name}`);
    }
  }

  async deleteNodeClaimObject(o: KubeNodeClaim): Promise<void> {
    const { custom } = await this.api();
    const name = o.metadata.name;
    try {
      const finalizers = o.metadata.finalizers ?? [];
      if (finalizers.includes(FinalizerTermination)) {
        const body = {
          metadata: {
            finalizers: finalizers.filter((f) => f !== FinalizerTermination),
            resourceVersion: (o.metadata as { resourceVersion?: string }).resourceVersion,
          },
        };
        await custom.patchClusterCustomObject({ ...NodeClaims, name, body }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
      }
      await custom.deleteClusterCustomObject({ ...NodeClaims, name });
    } catch (err) {
      if (statusOf(err) === 404) return;
      throw mapError(err, `delete nodeclaim ${name}`);
    }
  }

  async deletePod(namespace: string, name: string, gracePeriodSeconds?: number): Promise<void> {
    const { core } = await this.api();
    try {
      await core.deleteNamespacedPod({ name, namespace, ...(gracePeriodSeconds !== undefined ? { gracePeriodSeconds } : {}) });
    } catch (err) {
      if (statusOf(err) === 404) return;
      throw mapError(err, `delete pod ${namespace}/${name}`);
    }
  }
}

const NodeClaims = { group: 'karpenter.sh', version: 'v1', plural: 'nodeclaims' } as const;

/** client-node returns class instances with Date fields; nodefleet's types are plain JSON (RFC 3339 strings). */
export function plain<T>(v: unknown): T {
  return JSON.parse(JSON.stringify(v ?? null)) as T;
}

function withKind(items: KubeObject[], apiVersion: string, kind: string): KubeObject[] {
  return items.map((i) => ({ ...i, apiVersion, kind }));
}

/** Drops server-populated metadata the strict schemas do not model (status stays). */
function stripServerFields(raw: unknown): unknown {
  if (!raw || typeof raw !== 'object') return raw;
  const o = raw as Record<string, unknown>;
  return { apiVersion: o.apiVersion, kind: o.kind, metadata: o.metadata, spec: o.spec, status: o.status };
}

/** Server URL and CA (base64) of the current context of a kubeconfig (embedded environment). */
export function clusterOfKubeconfig(c: KubeConnection): { server: string; caData: string } {
  if (c.kind === 'token') return { server: c.server, caData: c.caData };
  const cluster = kubeConfigFor(c).getCurrentCluster();
  return { server: cluster?.server ?? 'https://127.0.0.1:6443', caData: cluster?.caData ?? '' };
}
