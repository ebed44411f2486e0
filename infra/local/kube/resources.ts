/**
 * The resource types the local API server serves: one table drives routing, discovery
 * (`/api`, `/apis`, `/apis/<group>/<version>`) and the generic REST verbs.
 *
 * Shapes follow the Kubernetes discovery documents (APIVersions, APIGroupList, APIResourceList)
 * as `kubectl api-resources` reads them; the subset is what nodefleet, its agent and the
 * Karpenter v1 objects need.
 */

/** One served resource type. */
export interface ResourceType {
  /** API group; '' for the core group (served under /api/v1). */
  group: string;
  version: string;
  /** URL segment, e.g. "pods". */
  plural: string;
  singular: string;
  kind: string;
  namespaced: boolean;
  shortNames?: string[];
  categories?: string[];
  /** Subresources served (`status`, `scale`, `eviction`, `binding`). */
  subresources?: string[];
}

const ALL_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

/** Every resource type served, in discovery order. */
export const RESOURCE_TYPES: readonly ResourceType[] = [
  { group: '', version: 'v1', plural: 'namespaces', singular: 'namespace', kind: 'Namespace', namespaced: false, shortNames: ['ns'], subresources: ['status'] },
  { group: '', version: 'v1', plural: 'nodes', singular: 'node', kind: 'Node', namespaced: false, shortNames: ['no'], subresources: ['status'] },
  {
    group: '',
    version: 'v1',
    plural: 'pods',
    singular: 'pod',
    kind: 'Pod',
    namespaced: true,
    shortNames: ['po'],
    categories: ['all'],
    subresources: ['status', 'eviction', 'binding'],
  },
  { group: '', version: 'v1', plural: 'events', singular: 'event', kind: 'Event', namespaced: true, shortNames: ['ev'] },
  { group: '', version: 'v1', plural: 'configmaps', singular: 'configmap', kind: 'ConfigMap', namespaced: true, shortNames: ['cm'] },
  {
    group: '',
    version: 'v1',
    plural: 'services',
    singular: 'service',
    kind: 'Service',
    namespaced: true,
    shortNames: ['svc'],
    categories: ['all'],
    subresources: ['status'],
  },
  {
    group: '',
    version: 'v1',
    plural: 'persistentvolumeclaims',
    singular: 'persistentvolumeclaim',
    kind: 'PersistentVolumeClaim',
    namespaced: true,
    shortNames: ['pvc'],
    subresources: ['status'],
  },
  {
    group: '',
    version: 'v1',
    plural: 'persistentvolumes',
    singular: 'persistentvolume',
    kind: 'PersistentVolume',
    namespaced: false,
    shortNames: ['pv'],
    subresources: ['status'],
  },
  { group: '', version: 'v1', plural: 'limitranges', singular: 'limitrange', kind: 'LimitRange', namespaced: true, shortNames: ['limits'] },
  {
    group: 'apps',
    version: 'v1',
    plural: 'deployments',
    singular: 'deployment',
    kind: 'Deployment',
    namespaced: true,
    shortNames: ['deploy'],
    categories: ['all'],
    subresources: ['status', 'scale'],
  },
  {
    group: 'apps',
    version: 'v1',
    plural: 'replicasets',
    singular: 'replicaset',
    kind: 'ReplicaSet',
    namespaced: true,
    shortNames: ['rs'],
    categories: ['all'],
    subresources: ['status', 'scale'],
  },
  {
    group: 'apps',
    version: 'v1',
    plural: 'daemonsets',
    singular: 'daemonset',
    kind: 'DaemonSet',
    namespaced: true,
    shortNames: ['ds'],
    categories: ['all'],
    subresources: ['status'],
  },
  {
    group: 'apps',
    version: 'v1',
    plural: 'statefulsets',
    singular: 'statefulset',
    kind: 'StatefulSet',
    namespaced: true,
    shortNames: ['sts'],
    categories: ['all'],
    subresources: ['status', 'scale'],
  },
  { group: 'batch', version: 'v1', plural: 'jobs', singular: 'job', kind: 'Job', namespaced: true, categories: ['all'], subresources: ['status'] },
  {
    group: 'policy',
    version: 'v1',
    plural: 'poddisruptionbudgets',
    singular: 'poddisruptionbudget',
    kind: 'PodDisruptionBudget',
    namespaced: true,
    shortNames: ['pdb'],
    subresources: ['status'],
  },
  { group: 'events.k8s.io', version: 'v1', plural: 'events', singular: 'event', kind: 'Event', namespaced: true, shortNames: ['ev'] },
  { group: 'coordination.k8s.io', version: 'v1', plural: 'leases', singular: 'lease', kind: 'Lease', namespaced: true },
  {
    group: 'scheduling.k8s.io',
    version: 'v1',
    plural: 'priorityclasses',
    singular: 'priorityclass',
    kind: 'PriorityClass',
    namespaced: false,
    shortNames: ['pc'],
  },
  { group: 'storage.k8s.io', version: 'v1', plural: 'storageclasses', singular: 'storageclass', kind: 'StorageClass', namespaced: false, shortNames: ['sc'] },
  { group: 'storage.k8s.io', version: 'v1', plural: 'csinodes', singular: 'csinode', kind: 'CSINode', namespaced: false },
  {
    group: 'storage.k8s.io',
    version: 'v1',
    plural: 'volumeattachments',
    singular: 'volumeattachment',
    kind: 'VolumeAttachment',
    namespaced: false,
    subresources: ['status'],
  },
  {
    group: 'karpenter.sh',
    version: 'v1',
    plural: 'nodepools',
    singular: 'nodepool',
    kind: 'NodePool',
    namespaced: false,
    categories: ['karpenter'],
    subresources: ['status'],
  },
  {
    group: 'karpenter.sh',
    version: 'v1',
    plural: 'nodeclaims',
    singular: 'nodeclaim',
    kind: 'NodeClaim',
    namespaced: false,
    categories: ['karpenter'],
    subresources: ['status'],
  },
  {
    group: 'karpenter.k8s.aws',
    version: 'v1',
    plural: 'ec2nodeclasses',
    singular: 'ec2nodeclass',
    kind: 'EC2NodeClass',
    namespaced: false,
    shortNames: ['ec2nc', 'ec2ncs'],
    categories: ['karpenter'],
    subresources: ['status'],
  },
  {
    group: 'nodefleet.io',
    version: 'v1',
    plural: 'ec2nodeclasses',
    singular: 'ec2nodeclass',
    kind: 'EC2NodeClass',
    namespaced: false,
    subresources: ['status'],
  },
];

/** "apps/v1" or "v1" for the core group. */
export function groupVersion(t: Pick<ResourceType, 'group' | 'version'>): string {
  return t.group ? `${t.group}/${t.version}` : t.version;
}

/** Stable key of a type: "apps/v1/deployments", "v1/pods". */
export function typeKey(t: ResourceType): string {
  return `${groupVersion(t)}/${t.plural}`;
}

/** Finds a type by group, version and plural; undefined when not served. */
export function findType(group: string, version: string, plural: string): ResourceType | undefined {
  return RESOURCE_TYPES.find((t) => t.group === group && t.version === version && t.plural === plural);
}

/**
 * Finds a type by apiVersion and kind (as written in YAML); undefined when not served.
 * When two groups serve the same kind (karpenter.k8s.aws and nodefleet.io EC2NodeClasses) the apiVersion decides.
 */
export function findTypeByKind(apiVersion: string, kind: string): ResourceType | undefined {
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
  return RESOURCE_TYPES.find((t) => t.group === group && t.version === version && t.kind === kind);
}

/** `/api` (APIVersions). */
export function coreVersions(serverAddress: string): object {
  return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }] };
}

/** `/apis` (APIGroupList): every non-core group with its one version. */
export function groupList(): object {
  const groups = [...new Set(RESOURCE_TYPES.filter((t) => t.group).map((t) => t.group))];
  return {
    kind: 'APIGroupList',
    apiVersion: 'v1',
    groups: groups.map((g) => {
      const versions = [...new Set(RESOURCE_TYPES.filter((t) => t.group === g).map((t) => t.version))].map((v) => ({ groupVersion: `${g}/${v}`, version: v }));
      return { name: g, versions, preferredVersion: versions[0] };
    }),
  };
}

/** `/apis/<group>` (APIGroup); undefined when the group is not served. */
export function apiGroup(group: string): object | undefined {
  const versions = [...new Set(RESOURCE_TYPES.filter((t) => t.group === group).map((t) => t.version))].map((v) => ({
    groupVersion: `${group}/${v}`,
    version: v,
  }));
  if (versions.length === 0) return undefined;
  return { kind: 'APIGroup', apiVersion: 'v1', name: group, versions, preferredVersion: versions[0] };
}

/** `/api/v1` or `/apis/<group>/<version>` (APIResourceList); undefined when not served. */
export function resourceList(group: string, version: string): object | undefined {
  const types = RESOURCE_TYPES.filter((t) => t.group === group && t.version === version);
  if (types.length === 0) return undefined;
  const resources: object[] = [];
  for (const t of types) {
    resources.push({
      name: t.plural,
      singularName: t.singular,
      namespaced: t.namespaced,
      kind: t.kind,
      verbs: ALL_VERBS,
      ...(t.shortNames ? { shortNames: t.shortNames } : {}),
      ...(t.categories ? { categories: t.categories } : {}),
      storageVersionHash: storageHash(typeKey(t)),
    });
    for (const sub of t.subresources ?? []) {
      const kind = sub === 'scale' ? 'Scale' : sub === 'eviction' ? 'Eviction' : sub === 'binding' ? 'Binding' : t.kind;
      const subGroup = sub === 'scale' ? { group: 'autoscaling', version: 'v1' } : sub === 'eviction' ? { group: 'policy', version: 'v1' } : {};
      const verbs = sub === 'eviction' || sub === 'binding' ? ['create'] : ['get', 'patch', 'update'];
      resources.push({ name: `${t.plural}/${sub}`, singularName: '', namespaced: t.namespaced, kind, verbs, ...subGroup });
    }
  }
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: groupVersion({ group, version }), resources };
}

function storageHash(s: string): string {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return Buffer.from(Uint32Array.of(h >>> 0, Math.imul(h, 31) >>> 0).buffer)
    .toString('base64')
    .slice(0, 11);
}
