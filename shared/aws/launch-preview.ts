/**
 * What a launch would send, without AWS: the CLI's `plan --launch-requests` prints, per planned
 * NodeClaim, the exact CreateFleet input (and its launch template) {@link Ec2CloudProvider.create}
 * would send. Account-specific ids (subnets, security groups, AMIs) are placeholders unless a
 * {@link ResolvedNodeClass} is given; cluster endpoint and CA likewise.
 */
import { createHash } from 'node:crypto';
import type { Pod, Taint } from '../api/kube.ts';
import { objectKey } from '../api/kube.ts';
import { NodeClaimNameAlphabet, NodeClaimNameSuffixLength, NodeClaimSchema, type NodeClaim } from '../api/nodeclaim.ts';
import { EC2NodeClassSchema, type EC2NodeClass } from '../api/nodepool.ts';
import type { RequirementSpec } from '../api/requirements.ts';
import { nodeClassHash } from '../api/hash.ts';
import { LabelNodePool, ResourceEFA } from '../api/labels.ts';
import { formatResources } from '../api/quantity.ts';
import { buildLaunchRequests, catalogArchitecture, type LaunchRequests } from './ec2.ts';
import { placeholderResolution, type ResolvedNodeClass } from './node-class-resolver.ts';
import type { ClusterInfo } from './user-data.ts';

/**
 * A preview name for a planned claim (offline output only: `plan`, case reports), shaped like a
 * generated one but derived from the pods so the same plan prints the same names. Claims that are
 * created get a fresh random name (shared/api/nodeclaim.ts `randomNodeClaimName`).
 */
export function previewNodeClaimName(nodePool: string, podKeys: readonly string[]): string {
  const digest = createHash('sha256')
    .update(`${nodePool}\n${[...podKeys].sort().join('\n')}`)
    .digest();
  let suffix = '';
  for (let i = 0; i < NodeClaimNameSuffixLength; i++) suffix += NodeClaimNameAlphabet[digest[i] % NodeClaimNameAlphabet.length];
  return `${nodePool}-${suffix}`;
}

/** The scheduler's NewNodeClaim, structurally (shared/aws does not import shared/scheduling). */
export interface PlannedClaim {
  nodePool: string;
  pods: Pod[];
  labels: Record<string, string>;
  taints: Taint[];
  startupTaints: Taint[];
  requirements: { toSpecs(): RequirementSpec[] };
  /** With the pod capacity the scheduler planned each with (the launch's kubelet maxPods). */
  launchInstanceTypes: { name: string; capacity?: { pods?: number; [resource: string]: number | undefined } }[];
  /** The pods' requests (a `vpc.amazonaws.com/efa` request gives the launch EFA interfaces). */
  requests?: Record<string, number>;
  zones: string[];
  capacityTypes: string[];
}

/** EC2NodeClass assumed when the plan input has none (Karpenter's defaults: AL2023, discovery tags). */
export function defaultNodeClass(name: string, clusterName: string): EC2NodeClass {
  return EC2NodeClassSchema.parse({
    apiVersion: 'karpenter.k8s.aws/v1',
    kind: 'EC2NodeClass',
    metadata: { name },
    spec: {
      amiSelectorTerms: [{ alias: 'al2023@latest' }],
      subnetSelectorTerms: [{ tags: { 'karpenter.sh/discovery': clusterName } }],
      securityGroupSelectorTerms: [{ tags: { 'karpenter.sh/discovery': clusterName } }],
    },
  });
}

/** Placeholder cluster info for offline output. */
export function placeholderCluster(clusterName: string, region: string): ClusterInfo {
  return {
    name: clusterName,
    endpoint: `https://<cluster-endpoint>.${region}.eks.amazonaws.com`,
    certificateAuthority: '<cluster-certificate-authority-data>',
    serviceCidr: '10.100.0.0/16',
    kubernetesVersion: '1.31',
  };
}

/** The requests one planned claim would send (first launch attempt). */
export function previewLaunchRequests(
  c: PlannedClaim,
  opts: {
    clusterName: string;
    region: string;
    nodeClassName: string;
    nodeClass?: EC2NodeClass;
    resolved?: ResolvedNodeClass;
    cluster?: ClusterInfo;
    instanceProfileName?: string;
    now?: string;
  },
): LaunchRequests {
  const nodeClass = opts.nodeClass ?? defaultNodeClass(opts.nodeClassName, opts.clusterName);
  const pods = c.pods.map((p) => objectKey(p));
  const claim: NodeClaim = NodeClaimSchema.parse({
    name: previewNodeClaimName(c.nodePool, pods),
    cluster: opts.clusterName,
    nodePool: c.nodePool,
    nodeClass: nodeClass.metadata.name,
    requirements: c.requirements.toSpecs(),
    taints: c.taints,
    startupTaints: c.startupTaints,
    labels: { ...c.labels, [LabelNodePool]: c.nodePool },
    resources: { requests: c.requests ? formatResources(c.requests) : {} },
    nodeClassHash: nodeClassHash(nodeClass),
    createdAt: opts.now ?? '1970-01-01T00:00:00.000Z',
    pods,
  });
  const capacityType = c.capacityTypes.find((t) => t === 'spot' || t === 'on-demand') ?? 'on-demand';
  return buildLaunchRequests(
    claim,
    {
      instanceTypes: c.launchInstanceTypes.map((t) => t.name),
      zones: c.zones,
      capacityTypes: [capacityType],
      maxPods: Object.fromEntries(c.launchInstanceTypes.flatMap((t) => (t.capacity?.pods === undefined ? [] : [[t.name, t.capacity.pods]]))),
      efaCount: Object.fromEntries(c.launchInstanceTypes.flatMap((t) => (t.capacity?.[ResourceEFA] ? [[t.name, t.capacity[ResourceEFA]]] : []))),
    },
    nodeClass,
    opts.resolved ?? placeholderResolution(c.zones, nodeClass.metadata.name),
    {
      cluster: opts.cluster ?? placeholderCluster(opts.clusterName, opts.region),
      instanceProfileName:
        nodeClass.spec.instanceProfile ?? opts.instanceProfileName ?? (nodeClass.spec.role ? `<instance profile of role ${nodeClass.spec.role}>` : undefined),
      architectureOf: catalogArchitecture,
    },
  );
}

/**
 * Adds `launchRequest` (the CreateFleet input) and `launchTemplates` (the CreateLaunchTemplate
 * inputs) to each printed NodeClaim of a plan, index-aligned with the scheduler's new claims.
 * `resolved`: class name → what it resolved to (`plan --account`); else placeholders.
 */
export function addLaunchRequests<T extends object>(
  printed: T[],
  planned: readonly (PlannedClaim & { nodePool: string })[],
  opts: {
    nodeClasses: readonly EC2NodeClass[];
    nodeClassOf: (nodePool: string) => string;
    clusterName: string;
    region: string;
    resolved?: ReadonlyMap<string, ResolvedNodeClass>;
  },
): (T & { launchRequest: LaunchRequests['createFleet']; launchTemplates: LaunchRequests['launchTemplates'] })[] {
  return printed.map((p, i) => {
    const c = planned[i];
    const nodeClassName = opts.nodeClassOf(c.nodePool);
    const resolved = opts.resolved?.get(nodeClassName);
    const req = previewLaunchRequests(c, {
      clusterName: opts.clusterName,
      region: opts.region,
      nodeClassName,
      nodeClass: opts.nodeClasses.find((n) => n.metadata.name === nodeClassName),
      ...(resolved ? { resolved } : {}),
    });
    return { ...p, launchRequest: req.createFleet, launchTemplates: req.launchTemplates };
  });
}
