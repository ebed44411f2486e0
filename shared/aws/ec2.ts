/**
 * EC2 CloudProvider: launches one instance per NodeClaim with CreateFleet (type instant), as
 * Karpenter's AWS provider does (aws/karpenter-provider-aws pkg/providers/instance/instance.go,
 * pkg/providers/launchtemplate/launchtemplate.go).
 *
 * ## EC2 / SSM API operations this adapter (and node-class-resolver.ts) calls
 * The local EC2 server (infra/local) implements exactly these, EC2 query protocol (SSM: JSON 1.1,
 * `X-Amz-Target: AmazonSSM.GetParameter`), on the endpoint from `NODEFLEET_EC2_ENDPOINT`
 * (both the EC2 and the SSM client use that override).
 *
 * | Operation | Request fields used | Response fields read |
 * | --- | --- | --- |
 * | `CreateFleet` | `Type=instant`; `TargetCapacitySpecification.{TotalTargetCapacity=1, DefaultTargetCapacityType=spot\|on-demand}`; `OnDemandOptions.AllocationStrategy=lowest-price` / `SpotOptions.AllocationStrategy=price-capacity-optimized`; `LaunchTemplateConfigs[]` (≤ 50, one per launch template)`.LaunchTemplateSpecification.{LaunchTemplateName, Version=$Latest}`; `LaunchTemplateConfigs[].Overrides[].{InstanceType, SubnetId, AvailabilityZone, ImageId}`; `TagSpecifications[].{ResourceType=instance\|volume\|fleet, Tags[].{Key,Value}}`; `ClientToken` | `FleetId`; `Instances[].{InstanceIds[], InstanceType, Lifecycle, LaunchTemplateAndOverrides.Overrides.{InstanceType, AvailabilityZone, SubnetId, ImageId}}`; `Errors[].{ErrorCode, ErrorMessage, Lifecycle, LaunchTemplateAndOverrides.Overrides.{InstanceType, AvailabilityZone, SubnetId}}` |
 * | `DescribeLaunchTemplates` | `LaunchTemplateNames=[name]`, or (GC) `Filters=[{tag:nodefleet.io/cluster=<cluster>}]`, `NextToken` | `LaunchTemplates[].{LaunchTemplateId, LaunchTemplateName, CreateTime}`; `NextToken`; error `InvalidLaunchTemplateName.NotFoundException` |
 * | `DeleteLaunchTemplate` | `LaunchTemplateId` | — ; error `InvalidLaunchTemplateId.NotFound` (= success) |
 * | `CreateLaunchTemplate` | `LaunchTemplateName`; `LaunchTemplateData.{TagSpecifications[].{ResourceType=network-interface\|spot-instances-request (spot templates only), Tags}, UserData (base64: AL2023 MIME NodeConfig, Bottlerocket settings TOML or Windows PowerShell), IamInstanceProfile.Name, SecurityGroupIds[] or NetworkInterfaces[0].{DeviceIndex=0, AssociatePublicIpAddress, Groups[]} or (EFA) NetworkInterfaces[i].{NetworkCardIndex=i, DeviceIndex=0\|1, InterfaceType=efa, Groups[], AssociatePublicIpAddress}, BlockDeviceMappings[].{DeviceName, Ebs.{VolumeSize (GiB), VolumeType, Iops, Throughput, Encrypted, KmsKeyId, DeleteOnTermination, SnapshotId, VolumeInitializationRate (MiB/s)}}, MetadataOptions.{HttpEndpoint, HttpProtocolIpv6, HttpPutResponseHopLimit, HttpTokens}, Monitoring.Enabled}`; `TagSpecifications[].{ResourceType=launch-template, Tags}` | `LaunchTemplate.LaunchTemplateId`; error `InvalidLaunchTemplateName.AlreadyExistsException` (= success) |
 * | `DescribeInstances` | `InstanceIds[]` or `Filters=[{tag:nodefleet.io/cluster=<cluster>}, {instance-state-name=pending,running,shutting-down,stopping,stopped}]`; `NextToken` | `Reservations[].Instances[].{InstanceId, InstanceType, Placement.AvailabilityZone, InstanceLifecycle, State.Name, LaunchTime, Tags[] (incl. `aws:ec2launchtemplate:id`), ImageId}`; `NextToken`; error `InvalidInstanceID.NotFound` |
 * | `TerminateInstances` | `InstanceIds[]` | — ; error `InvalidInstanceID.NotFound` (= success) |
 * | `DescribeSubnets` | `Filters` (`subnet-id` for the id terms; `tag:<k>`, `tag-key`, `tag:Name`) | `Subnets[].{SubnetId, AvailabilityZone, AvailabilityZoneId, AvailableIpAddressCount}` |
 * | `DescribeSecurityGroups` | `Filters` (`group-id` for the id terms; `tag:<k>`, `tag-key`, `group-name`) | `SecurityGroups[].GroupId` |
 * | `DescribeImages` | `Filters` (`image-id`, `name`, `tag:<k>`), `Owners[]` (only for name/tag AMI terms) | `Images[].{ImageId, Architecture, CreationDate}` |
 * | SSM `GetParameter` | `Name=/aws/service/eks/optimized-ami/<k8s>/amazon-linux-2023/<x86_64\|arm64>/<standard\|nvidia\|neuron>/recommended/image_id` (alias `al2023@latest`, every variant EKS publishes for the arch; a pinned alias names the release); `Name=/aws/service/bottlerocket/aws-k8s-<k8s>[-nvidia]/<x86_64\|arm64>/<version\|latest>/image_id` (alias `bottlerocket@…`); `Name=/aws/service/ami-windows-latest/Windows_Server-<2019\|2022\|2025>-English-Core-EKS_Optimized-<k8s>/image_id` (alias `windows20xx@latest`) | `Parameter.Value` (AMI id); error `ParameterNotFound` |
 *
 * Errors: one mapping file, shared/aws/ec2-errors.ts. The same calls also run against moto
 * (`npm run test:moto`, docs/moto-conformance.md), each request checked against the AWS API model.
 */
import { createHash } from 'node:crypto';
import {
  CreateFleetCommand,
  CreateLaunchTemplateCommand,
  DeleteLaunchTemplateCommand,
  DescribeInstancesCommand,
  DescribeLaunchTemplatesCommand,
  TerminateInstancesCommand,
  type CreateFleetCommandInput,
  type CreateLaunchTemplateCommandInput,
  type EC2Client,
  type FleetLaunchTemplateOverridesRequest,
  type Instance,
  type RequestLaunchTemplateData,
  type Tag,
  type _InstanceType,
  type VolumeType,
} from '@aws-sdk/client-ec2';
import type { CloudInstance, CloudProvider, LaunchResult } from '../api/ports.ts';
import { ClusterTagValue, EksClusterNameTagKey, NodeClassTagKey, NodePoolTagKey, clusterTagKey } from '../api/iam-policy.ts';
import type { NodeClaim } from '../api/nodeclaim.ts';
import type { EC2NodeClass } from '../api/nodepool.ts';
import type { Taint } from '../api/kube.ts';
import { ValidationError } from '../api/errors.ts';
import { nodeRoleProblem } from '../api/contract.ts';
import { nodeClassNotReady } from '../api/nodeclass-support.ts';
import { reservationRefusal } from '../api/capacity-reservation.ts';
import { parseQuantity } from '../api/quantity.ts';
import { LabelCapacityType, LabelDoNotSync, LabelNodePool, ResourceEFA, TagNodeClaim, TagNodefleetCluster, TaintUnregistered } from '../api/labels.ts';
import { instanceTypeInfos, subnetPerZone } from '../catalog/index.ts';
import {
  AlreadyExistsErrorCodes,
  NotFoundErrorCodes,
  errorCode,
  isNotFound,
  launchFailure,
  launchFailuresFrom,
  mapSdkError,
  unavailableOfferingsFrom,
  type FleetError,
} from './ec2-errors.ts';
import { imageFor, type AmiVariant, type Arch, type NodeClassResolver, type ResolvedNodeClass } from './node-class-resolver.ts';
import { buildAl2023UserData, type ClusterInfo, type UserDataInput } from './user-data.ts';
import { bottlerocketVersion, buildBottlerocketUserData } from './bottlerocket.ts';
import { buildWindowsUserData } from './windows.ts';
import { amiFamilyOf } from '../catalog/capacity.ts';
import { defaultBlockDeviceMappings } from '../catalog/volume.ts';

import { MaxLaunchInstanceTypes } from '../api/ports.ts';

/** Tag keys nodefleet writes on instances, volumes and fleets (Karpenter's keys plus our own cluster tag). */
export const Tags = {
  /** nodefleet's ownership tag: gc and list() only consider instances with this tag = cluster name. */
  cluster: TagNodefleetCluster,
  nodePool: NodePoolTagKey,
  nodeClaim: TagNodeClaim,
  nodeClass: NodeClassTagKey,
  eksClusterName: EksClusterNameTagKey,
  /** `kubernetes.io/cluster/<name>` = owned (what the AWS cloud controller expects). */
  kubernetesCluster: clusterTagKey,
  /** Set by EC2 on an instance launched from a launch template (its id): what the launch-template GC reads. */
  launchTemplateId: 'aws:ec2launchtemplate:id',
} as const;

/**
 * A launch template no instance uses is deleted by the gc function once it is this old
 * ({@link Ec2CloudProvider.collectLaunchTemplates}): long after the CreateLaunchTemplate → CreateFleet
 * of one launch, short enough that a changed EC2NodeClass does not leave templates behind for long.
 */
export const LaunchTemplateMinAgeSeconds = 10 * 60;

/** Karpenter v1 default metadata options (KA ec2nodeclass.go defaults: IMDSv2 only, hop limit 1). */
export const DefaultMetadataOptions = {
  httpEndpoint: 'enabled',
  httpProtocolIPv6: 'disabled',
  httpPutResponseHopLimit: 1,
  httpTokens: 'required',
} as const;

/** What to launch: the claim's launch set, already filtered of unavailable offerings. */
export interface LaunchSpec {
  /** Cheapest first; truncated to {@link MaxLaunchInstanceTypes}. */
  instanceTypes: string[];
  zones: string[];
  /** Preference order: the first of spot / on-demand is launched (reserved is not modelled). */
  capacityTypes: string[];
  /**
   * When given, only these (type, zone) pairs become overrides. Without it the overrides are the
   * full product types × zones, which would re-offer a (type, zone) marked unavailable whenever
   * another type is still available in that zone.
   */
  offerings?: { instanceType: string; zone: string }[];
  /**
   * The pods each type's node is planned with (its catalog capacity): the kubelet's maxPods when the
   * EC2NodeClass sets none, one launch template per value (KA amifamily/resolver.go writes each
   * type's pod capacity into its template). A type not listed leaves maxPods to nodeadm.
   */
  maxPods?: Record<string, number>;
  /**
   * Each type's EFA devices (its `vpc.amazonaws.com/efa` capacity). When the claim requests that
   * resource, a type's launch template has one EFA interface per device, and the types are grouped
   * into launch templates by that count too (KA amifamily/resolver.go).
   */
  efaCount?: Record<string, number>;
  /**
   * Capacity type `reserved` (the first of `capacityTypes`): the one reservation launched into. Its
   * launch template targets it (`CapacityReservationSpecification` preference
   * `capacity-reservations-only`, target the id: one template per reservation, KA
   * launchtemplate/types.go) and the fleet is an on-demand one (KA instance/types.go
   * `defaultTargetCapacityType`: a default, non-interruptible reservation launches `on-demand`).
   */
  capacityReservation?: { id: string; type: 'default' | 'capacity-block'; interruptible: boolean };
}

/**
 * CreateFleet's `LaunchTemplateConfigs`: at most 50 (EC2 API reference, CreateFleet; botocore's
 * model `FleetLaunchTemplateConfigListRequest` max 50). Overrides have no limit for `instant`
 * fleets (the 300 of the API reference applies to `request` and `maintain` fleets); nodefleet sends
 * at most {@link MaxLaunchInstanceTypes} types × one subnet per zone.
 */
export const MaxLaunchTemplateConfigs = 50;

/**
 * EC2's user data limit: 16 KB of raw user data, before base64 (EC2 User Guide, "user data";
 * Karpenter's provider uses 16384 and only warns at 90 %, leaving the refusal to EC2).
 */
export const MaxUserDataBytes = 16384;

/** The one line for user data over {@link MaxUserDataBytes} (`what` says which text was measured). */
export function userDataSizeProblem(bytes: number, what: string): string {
  return `spec.userData: ${what} is ${bytes} bytes, over EC2's user data limit of ${MaxUserDataBytes} bytes (16 KB before base64), so EC2 would refuse the launch template; shorten spec.userData`;
}

/** The family's user data: Bottlerocket settings TOML, Windows bootstrap PowerShell, else AL2023 nodeadm (the class is refused for any other family). */
function familyUserData(nodeClass: EC2NodeClass, input: UserDataInput, amis?: ResolvedNodeClass['amis']): string {
  const family = amiFamilyOf(nodeClass);
  if (family === 'Bottlerocket') return buildBottlerocketUserData(input, bottlerocketVersion(nodeClass.spec.amiSelectorTerms, amis));
  return family.startsWith('Windows') ? buildWindowsUserData(input) : buildAl2023UserData(input);
}

/**
 * `nodefleet validate`'s check of {@link MaxUserDataBytes}: the class's user data merged with the
 * least nodefleet adds (empty cluster name, endpoint and CA, no labels or taints, the shortest
 * service CIDR), a size every launch of the class reaches or exceeds; the launch checks the real one.
 * undefined when it fits, or when the user data cannot be read (refused for that instead).
 */
export function userDataFloorProblem(nodeClass: EC2NodeClass): string | undefined {
  if (typeof nodeClass.spec.userData !== 'string') return undefined;
  const input: UserDataInput = {
    cluster: { name: '', endpoint: '', certificateAuthority: '', serviceCidr: '1.0.0.0/16', kubernetesVersion: '' },
    labels: {},
    taints: [],
    kubelet: nodeClass.spec.kubelet,
    instanceStorePolicy: nodeClass.spec.instanceStorePolicy,
    custom: nodeClass.spec.userData,
    // Bottlerocket's max-pods replaces the user's: the shortest value (AL2023 and Windows add nothing without one).
    ...(amiFamilyOf(nodeClass) === 'Bottlerocket' ? { maxPods: 0 } : {}),
  };
  let text: string;
  try {
    text = familyUserData(nodeClass, input);
  } catch {
    return undefined;
  }
  const bytes = Buffer.byteLength(text, 'utf8');
  return bytes > MaxUserDataBytes ? userDataSizeProblem(bytes, 'the user data with the least nodefleet adds to it') : undefined;
}

/** Static inputs of request building. */
export interface LaunchContext {
  cluster: ClusterInfo;
  /** Instance profile for nodes when the EC2NodeClass names none (env NODEFLEET_INSTANCE_PROFILE_NAME). */
  instanceProfileName?: string;
  /**
   * The node role the stack deploys (env NODEFLEET_NODE_ROLE_NAME), which that instance profile
   * holds and the function may pass. An EC2NodeClass `spec.role` naming another role is refused.
   */
  nodeRoleName?: string;
  /** Architecture of an instance type (from the catalog's kubernetes.io/arch label). */
  architectureOf: (instanceType: string) => Arch;
  /** The AMI variant a type needs (GPUs → nvidia, Neuron → neuron); default {@link catalogVariant}. */
  variantOf?: (instanceType: string) => AmiVariant;
}

/** The requests one launch sends: its launch templates (one per maxPods value), then CreateFleet. */
export interface LaunchRequests {
  launchTemplates: (CreateLaunchTemplateCommandInput & { LaunchTemplateName: string })[];
  createFleet: CreateFleetCommandInput;
  /** spot | on-demand. */
  capacityType: 'reserved' | 'spot' | 'on-demand';
}

/**
 * Guesses the architecture from the type name (Graviton families carry a `g` after the
 * generation: m7g, c6gn, t4g, r8gd). Used only when no catalog is injected.
 */
export function guessArchitecture(instanceType: string): Arch {
  const family = instanceType.split('.')[0] ?? '';
  return /^[a-z]+[0-9]+[a-z]*g[a-z]*$/.test(family) && !/^(g[0-9]|p[0-9])/.test(family) ? 'arm64' : 'amd64';
}

const archByType = new Map<string, string>();
const variantByType = new Map<string, AmiVariant>();

/**
 * The AL2023 AMI variant an instance type needs, from the shipped catalog (KA `Variant.Requirements`):
 * a type with GPUs the nvidia one, with Neuron accelerators the neuron one, else standard (also
 * for a type the catalog does not know).
 */
export function catalogVariant(instanceType: string): AmiVariant {
  if (variantByType.size === 0)
    for (const i of instanceTypeInfos) variantByType.set(i.name, i.gpu?.count ? 'nvidia' : i.accelerator?.count ? 'neuron' : 'standard');
  return variantByType.get(instanceType) ?? 'standard';
}

/** Architecture from the shipped catalog (kubernetes.io/arch), falling back to {@link guessArchitecture}. */
export function catalogArchitecture(instanceType: string): Arch {
  if (archByType.size === 0) for (const i of instanceTypeInfos) archByType.set(i.name, i.arch);
  const a = archByType.get(instanceType);
  return a === 'arm64' ? 'arm64' : a === 'amd64' || a === 'x86_64' ? 'amd64' : guessArchitecture(instanceType);
}

function sha(s: string, n = 16): string {
  return createHash('sha256').update(s).digest('hex').slice(0, n);
}

function toGiB(q: string | number | undefined): number | undefined {
  if (q === undefined) return undefined;
  return Math.ceil(parseQuantity(q) / 2 ** 30);
}

function taintsOf(claim: NodeClaim): Taint[] {
  // Karpenter registers nodes with its unregistered taint; registration removes it once labels are synced.
  const all = [...claim.taints, ...claim.startupTaints, { ...TaintUnregistered }] as Taint[];
  const seen = new Set<string>();
  return all.filter((t) => {
    const k = `${t.key}:${t.effect}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

/** Tags on the instance, its volumes and the fleet: the EC2NodeClass's first, ours win. */
export function launchTags(claim: NodeClaim, nodeClass: EC2NodeClass, clusterName: string): Tag[] {
  const tags: Record<string, string> = {
    ...(nodeClass.spec.tags ?? {}),
    [Tags.cluster]: clusterName,
    [Tags.kubernetesCluster(clusterName)]: ClusterTagValue,
    [Tags.eksClusterName]: clusterName,
    [Tags.nodePool]: claim.nodePool,
    [Tags.nodeClaim]: claim.name,
    [Tags.nodeClass]: nodeClass.metadata.name,
  };
  return Object.entries(tags)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([Key, Value]) => ({ Key, Value }));
}

/**
 * Launch template data for the claim (no ImageId: the AMI is set per override). One template per
 * capacity type, as Karpenter keeps them (aws/karpenter-provider-aws#5850): a spot template also
 * tags the spot-instances-request the launch creates (IAM requires the cluster tags on it), and EC2
 * refuses spot-request tag specifications on an on-demand launch, so on-demand templates have none.
 * @throws ValidationError when the EC2NodeClass is not ready (a field nodefleet does not honour,
 *   shared/api/nodeclass-support.ts) or names a role other than the deployed node role.
 */
export function launchTemplateData(
  claim: NodeClaim,
  nodeClass: EC2NodeClass,
  resolved: ResolvedNodeClass,
  ctx: LaunchContext,
  capacityType: 'reserved' | 'spot' | 'on-demand' = 'on-demand',
  maxPods?: number,
  efaCount = 0,
  capacityReservationId?: string,
): RequestLaunchTemplateData {
  const spec = nodeClass.spec;
  const notReady = nodeClassNotReady(nodeClass);
  if (notReady) throw new ValidationError(notReady);
  // The capacity type launched, and do-not-sync-taints: the kubelet registers the taints itself
  // (KA launchtemplate.go EnsureAll / InjectDoNotSyncTaintsLabel for AL2023), so registration does not sync them.
  const labels = { ...claim.labels, [LabelNodePool]: claim.nodePool, [LabelCapacityType]: capacityType, [LabelDoNotSync]: 'true' };
  const family = amiFamilyOf(nodeClass);
  const input: UserDataInput = {
    cluster: ctx.cluster,
    labels,
    taints: taintsOf(claim),
    kubelet: spec.kubelet,
    instanceStorePolicy: spec.instanceStorePolicy,
    custom: spec.userData,
    maxPods,
  };
  const userData = familyUserData(nodeClass, input, resolved.amis);
  const userDataBytes = Buffer.byteLength(userData, 'utf8');
  if (userDataBytes > MaxUserDataBytes)
    throw new ValidationError(
      `ec2nodeclass ${nodeClass.metadata.name}: ${userDataSizeProblem(userDataBytes, "the user data nodefleet would send (the class's merged with its bootstrap)")}`,
    );
  const metadata = { ...DefaultMetadataOptions, ...(spec.metadataOptions ?? {}) };
  const mappings = spec.blockDeviceMappings?.length ? spec.blockDeviceMappings : defaultBlockDeviceMappings(family);
  const roleProblem = ctx.nodeRoleName ? nodeRoleProblem(spec, ctx.nodeRoleName) : undefined;
  if (roleProblem) throw new ValidationError(`ec2nodeclass ${nodeClass.metadata.name}: ${roleProblem}`);
  const profile = spec.instanceProfile ?? ctx.instanceProfileName;
  const tags = templateTags(claim, nodeClass, ctx.cluster.name);
  return {
    UserData: Buffer.from(userData, 'utf8').toString('base64'),
    ...(profile ? { IamInstanceProfile: { Name: profile } } : {}),
    ...(efaCount > 0
      ? // One EFA interface per network card, the first the primary (device 0), the others device 1 (KA launchtemplate.go generateNetworkInterfaces).
        {
          NetworkInterfaces: Array.from({ length: efaCount }, (_, i) => ({
            NetworkCardIndex: i,
            DeviceIndex: i === 0 ? 0 : 1,
            InterfaceType: 'efa',
            Groups: resolved.securityGroupIds,
            ...(spec.associatePublicIPAddress !== undefined ? { AssociatePublicIpAddress: spec.associatePublicIPAddress } : {}),
          })),
        }
      : spec.associatePublicIPAddress !== undefined
        ? { NetworkInterfaces: [{ DeviceIndex: 0, AssociatePublicIpAddress: spec.associatePublicIPAddress, Groups: resolved.securityGroupIds }] }
        : { SecurityGroupIds: resolved.securityGroupIds }),
    BlockDeviceMappings: mappings.map((m) => ({
      DeviceName: m.deviceName ?? '/dev/xvda',
      Ebs: m.ebs && {
        VolumeSize: toGiB(m.ebs.volumeSize),
        VolumeType: m.ebs.volumeType as VolumeType | undefined,
        Iops: m.ebs.iops,
        Throughput: m.ebs.throughput,
        Encrypted: m.ebs.encrypted,
        KmsKeyId: m.ebs.kmsKeyID,
        DeleteOnTermination: m.ebs.deleteOnTermination,
        SnapshotId: m.ebs.snapshotID,
        VolumeInitializationRate: m.ebs.volumeInitializationRate,
      },
    })),
    MetadataOptions: {
      HttpEndpoint: metadata.httpEndpoint,
      HttpProtocolIpv6: metadata.httpProtocolIPv6,
      HttpPutResponseHopLimit: metadata.httpPutResponseHopLimit,
      HttpTokens: metadata.httpTokens,
    },
    Monitoring: { Enabled: spec.detailedMonitoring ?? false },
    // A reserved launch goes into its reservation only; spot and on-demand launches not into open
    // reservations (KA launchtemplate/types.go with ReservedCapacity on: `none`), which are launched as `reserved`.
    CapacityReservationSpecification:
      capacityType === 'reserved' && capacityReservationId
        ? { CapacityReservationPreference: 'capacity-reservations-only', CapacityReservationTarget: { CapacityReservationId: capacityReservationId } }
        : { CapacityReservationPreference: 'none' },
    // What the launch creates besides the instance and its volumes carries the cluster and NodePool
    // tags too (IAM conditions on aws:RequestTag; Karpenter does the same): ENIs, and spot requests of a spot launch.
    TagSpecifications: [
      { ResourceType: 'network-interface', Tags: tags },
      ...(capacityType === 'spot' ? [{ ResourceType: 'spot-instances-request' as const, Tags: tags }] : []),
    ],
  };
}

/** Tags of a launch template, its ENIs and spot requests: the cluster's and the NodePool's (no NodeClaim: a template serves many claims). */
export function templateTags(claim: Pick<NodeClaim, 'nodePool'>, nodeClass: EC2NodeClass, clusterName: string): Tag[] {
  const tags: Record<string, string> = {
    ...(nodeClass.spec.tags ?? {}),
    [Tags.cluster]: clusterName,
    [Tags.kubernetesCluster(clusterName)]: ClusterTagValue,
    [Tags.eksClusterName]: clusterName,
    [Tags.nodePool]: claim.nodePool,
    [Tags.nodeClass]: nodeClass.metadata.name,
  };
  return Object.entries(tags)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([Key, Value]) => ({ Key, Value }));
}

/** EC2's limit on a launch template name (CreateLaunchTemplate `LaunchTemplateName`, 3–128 characters). */
export const MaxLaunchTemplateNameLength = 128;

/**
 * `nodefleet/<cluster>/<EC2NodeClass>/<hash of the template>`. A Kubernetes name may have 253
 * characters and a cluster name 100, so when that is longer than EC2 allows the EC2NodeClass name is
 * cut to fit (dropped when nothing of it fits) and, since two classes may then share the cut, its
 * full name goes into the hash.
 */
export function launchTemplateName(cluster: string, nodeClass: string, template: string): string {
  const full = `nodefleet/${cluster}/${nodeClass}/${sha(template)}`;
  if (full.length <= MaxLaunchTemplateNameLength) return full;
  const hash = sha(JSON.stringify([nodeClass, template]));
  const room = MaxLaunchTemplateNameLength - `nodefleet/${cluster}//${hash}`.length;
  return room > 0 ? `nodefleet/${cluster}/${nodeClass.slice(0, room)}/${hash}` : `nodefleet/${cluster}/${hash}`;
}

/**
 * Builds the CreateLaunchTemplate and CreateFleet inputs for one claim. Pure (no I/O): the CLI's
 * `plan --launch-requests` prints exactly what {@link Ec2CloudProvider.create} would send.
 * Overrides = launch types (≤ 60, in the given order) × one subnet per admitted zone (the one with
 * the most free IPs, shared/catalog/subnets.ts {@link subnetPerZone}), `ImageId` per override by architecture and, for an alias, AMI variant
 * (node-class-resolver.ts {@link imageFor}: GPU types get the nvidia image, Neuron types the neuron one);
 * one launch template per maxPods value of the types ({@link LaunchSpec.maxPods}) and, when the claim
 * requests `vpc.amazonaws.com/efa`, per EFA count ({@link LaunchSpec.efaCount}), each its own
 * LaunchTemplateConfig; at most {@link MaxLaunchTemplateConfigs} of them (a type that would need
 * another one is left out; the types are cheapest first).
 * @throws ValidationError when no (type, zone) pair can be launched (no subnet in the zones, no AMI).
 */
export function buildLaunchRequests(
  claim: NodeClaim,
  launch: LaunchSpec,
  nodeClass: EC2NodeClass,
  resolved: ResolvedNodeClass,
  ctx: LaunchContext,
): LaunchRequests {
  // The first of reserved / spot / on-demand in the caller's preference order (the provisioner passes the one it chose).
  const first = launch.capacityTypes.find((c) => c === 'reserved' || c === 'spot' || c === 'on-demand');
  const reservation = first === 'reserved' ? launch.capacityReservation : undefined;
  if (first === 'reserved' && !reservation) throw new ValidationError(`nodeclaim ${claim.name}: a reserved launch names no capacity reservation`);
  const refused = reservation && reservationRefusal({ reservationType: reservation.type, interruptible: reservation.interruptible });
  if (refused) throw new ValidationError(`nodeclaim ${claim.name}: capacity reservation ${reservation!.id}: ${refused}`);
  const capacityType: 'reserved' | 'spot' | 'on-demand' = reservation ? 'reserved' : first === 'spot' ? 'spot' : 'on-demand';
  const subnetByZone = subnetPerZone(resolved.subnets, launch.zones);
  const zones = [...subnetByZone.keys()].sort();
  const allowed = launch.offerings ? new Set(launch.offerings.map((o) => `${o.instanceType}/${o.zone}`)) : undefined;
  const variantOf = ctx.variantOf ?? catalogVariant;
  // EFA interfaces only for a claim whose pods request EFA (KA: the NodeClaim's resource requests name it).
  const efaRequested = claim.resources.requests[ResourceEFA] !== undefined;
  // Overrides grouped by the template they need: its maxPods (none when the class sets kubelet.maxPods) and EFA count.
  const groups = new Map<string, { maxPods?: number; efaCount: number; overrides: FleetLaunchTemplateOverridesRequest[] }>();
  for (const type of launch.instanceTypes.slice(0, MaxLaunchInstanceTypes)) {
    const imageId = imageFor(resolved, ctx.architectureOf(type), variantOf(type));
    if (!imageId) continue;
    const maxPods = nodeClass.spec.kubelet?.maxPods === undefined ? launch.maxPods?.[type] : undefined;
    const efaCount = efaRequested ? (launch.efaCount?.[type] ?? 0) : 0;
    const key = `${maxPods ?? ''}/${efaCount}`;
    const overrides = zones
      .filter((zone) => !allowed || allowed.has(`${type}/${zone}`))
      .map((zone) => ({ InstanceType: type as _InstanceType, SubnetId: subnetByZone.get(zone)!.subnetId, AvailabilityZone: zone, ImageId: imageId }));
    if (overrides.length === 0) continue;
    if (!groups.has(key)) {
      // CreateFleet takes at most 50 LaunchTemplateConfigs: a type needing one more is left out.
      if (groups.size === MaxLaunchTemplateConfigs) continue;
      groups.set(key, { maxPods, efaCount, overrides: [] });
    }
    groups.get(key)!.overrides.push(...overrides);
  }
  if (groups.size === 0) {
    throw new ValidationError(
      `nodeclaim ${claim.name}: no launchable (instance type, zone): zones [${launch.zones.join(', ')}] have no subnet or the types have no AMI`,
    );
  }
  const templateTagSpecs = [{ ResourceType: 'launch-template' as const, Tags: templateTags(claim, nodeClass, ctx.cluster.name) }];
  const configs = [...groups.values()].map(({ maxPods, efaCount, overrides }) => {
    const data = launchTemplateData(claim, nodeClass, resolved, ctx, capacityType, maxPods, efaCount, reservation?.id);
    const name = launchTemplateName(ctx.cluster.name, nodeClass.metadata.name, JSON.stringify({ nodeClassHash: claim.nodeClassHash ?? '', data }));
    return { template: { LaunchTemplateName: name, LaunchTemplateData: data, TagSpecifications: templateTagSpecs }, overrides };
  });
  const tags = launchTags(claim, nodeClass, ctx.cluster.name);
  const allOverrides = configs.flatMap((c) => c.overrides);
  const createFleet: CreateFleetCommandInput = {
    Type: 'instant',
    TargetCapacitySpecification: { TotalTargetCapacity: 1, DefaultTargetCapacityType: capacityType === 'spot' ? 'spot' : 'on-demand' },
    ...(capacityType === 'spot'
      ? { SpotOptions: { AllocationStrategy: 'price-capacity-optimized' } }
      : { OnDemandOptions: { AllocationStrategy: 'lowest-price' } }),
    LaunchTemplateConfigs: configs.map((c) => ({
      LaunchTemplateSpecification: { LaunchTemplateName: c.template.LaunchTemplateName, Version: '$Latest' },
      Overrides: c.overrides,
    })),
    TagSpecifications: (['instance', 'volume', 'fleet'] as const).map((ResourceType) => ({ ResourceType, Tags: tags })),
    // Same claim + same launch set = same token: a retried invocation gets the first fleet's answer, not a second instance.
    ClientToken: `${claim.name}-${sha(JSON.stringify([capacityType, allOverrides]), 24)}`.slice(0, 64),
  };
  return { launchTemplates: configs.map((c) => c.template), createFleet, capacityType };
}

function capacityTypeOf(i: Instance): CloudInstance['capacityType'] {
  if (i.InstanceLifecycle === 'spot') return 'spot';
  if (i.CapacityReservationId) return 'reserved';
  return 'on-demand';
}

/** EC2 Instance → CloudInstance. */
export function toCloudInstance(i: Instance): CloudInstance {
  return {
    instanceId: i.InstanceId ?? '',
    instanceType: i.InstanceType ?? '',
    zone: i.Placement?.AvailabilityZone ?? '',
    capacityType: capacityTypeOf(i),
    state: (i.State?.Name ?? 'pending') as CloudInstance['state'],
    launchTime: i.LaunchTime ? new Date(i.LaunchTime).toISOString() : '',
    tags: Object.fromEntries((i.Tags ?? []).map((t) => [t.Key ?? '', t.Value ?? ''])),
    ...(i.PrivateDnsName ? { privateDnsName: i.PrivateDnsName } : {}),
    ...(i.SubnetId ? { subnetId: i.SubnetId } : {}),
    ...(i.SecurityGroups ? { securityGroupIds: i.SecurityGroups.flatMap((g) => (g.GroupId ? [g.GroupId] : [])) } : {}),
  };
}

/** Options of {@link Ec2CloudProvider}. */
export interface Ec2CloudProviderOptions {
  ec2: EC2Client;
  resolver: NodeClassResolver;
  /** Cluster endpoint/CA/CIDR/version: a value, or a function called once (EKS DescribeCluster). */
  cluster: ClusterInfo | (() => Promise<ClusterInfo>);
  instanceProfileName?: string;
  /** The deployed node role ({@link LaunchContext.nodeRoleName}). */
  nodeRoleName?: string;
  /** Architecture of a type; defaults to {@link guessArchitecture}. */
  architectureOf?: (instanceType: string) => Arch;
}

/**
 * CloudProvider on EC2. One launch template per (EC2NodeClass hash, launch template data) is
 * created on first use and remembered for the process lifetime.
 */
export class Ec2CloudProvider implements CloudProvider {
  private readonly ensured = new Set<string>();
  private clusterInfo?: Promise<ClusterInfo>;

  constructor(private readonly opts: Ec2CloudProviderOptions) {}

  private async context(): Promise<LaunchContext> {
    const c = this.opts.cluster;
    this.clusterInfo ??= typeof c === 'function' ? c() : Promise.resolve(c);
    return {
      cluster: await this.clusterInfo,
      instanceProfileName: this.opts.instanceProfileName,
      nodeRoleName: this.opts.nodeRoleName,
      architectureOf: this.opts.architectureOf ?? guessArchitecture,
    };
  }

  /** The requests {@link create} would send, without sending them. */
  async launchRequests(claim: NodeClaim, launch: LaunchSpec, nodeClass: EC2NodeClass): Promise<LaunchRequests> {
    const resolved = await this.opts.resolver.resolve(nodeClass);
    return buildLaunchRequests(claim, launch, nodeClass, resolved, await this.context());
  }

  /**
   * @throws InsufficientCapacityError every pool failed for capacity (`offerings` = pools to mark).
   * @throws TransientError throttled.
   * @throws ValidationError no EC2NodeClass, or nothing launchable.
   * @throws CreateFleetError the request was refused for another reason.
   */
  async create(claim: NodeClaim, launch: LaunchSpec, nodeClass?: EC2NodeClass): Promise<LaunchResult> {
    if (!nodeClass) throw new ValidationError(`nodeclaim ${claim.name}: ec2nodeclass ${claim.nodeClass} not found`);
    const resolved = await this.opts.resolver.resolve(nodeClass);
    const req = buildLaunchRequests(claim, launch, nodeClass, resolved, await this.context());
    let out;
    // A template remembered as created may have been deleted since (launch-template GC): recreate it once.
    for (let attempt = 0; ; attempt++) {
      for (const lt of req.launchTemplates) await this.ensureLaunchTemplate(lt);
      try {
        out = await this.opts.ec2.send(new CreateFleetCommand(req.createFleet));
      } catch (err) {
        if (attempt === 0 && isNotFound(err)) {
          for (const lt of req.launchTemplates) this.ensured.delete(lt.LaunchTemplateName);
          continue;
        }
        throw mapSdkError(err, 'CreateFleet');
      }
      const missingTemplate =
        (out.Errors ?? []).length > 0 &&
        (out.Instances ?? []).length === 0 &&
        (out.Errors ?? []).every((e) => e.ErrorCode !== undefined && NotFoundErrorCodes.has(e.ErrorCode));
      if (attempt === 0 && missingTemplate) {
        for (const lt of req.launchTemplates) this.ensured.delete(lt.LaunchTemplateName);
        continue;
      }
      break;
    }
    const errors: FleetError[] = (out.Errors ?? []).map((e) => ({
      errorCode: e.ErrorCode,
      errorMessage: e.ErrorMessage,
      lifecycle: e.Lifecycle,
      instanceType: e.LaunchTemplateAndOverrides?.Overrides?.InstanceType,
      zone: e.LaunchTemplateAndOverrides?.Overrides?.AvailabilityZone,
      subnetId: e.LaunchTemplateAndOverrides?.Overrides?.SubnetId,
    }));
    const zoneIdOf = (z: string) => resolved.subnets.find((s) => s.zone === z)?.zoneId;
    const launched = (out.Instances ?? []).find((i) => (i.InstanceIds ?? []).length > 0);
    if (!launched) throw launchFailure(errors, req.capacityType, zoneIdOf);
    const o = launched.LaunchTemplateAndOverrides?.Overrides;
    const instanceType = launched.InstanceType ?? o?.InstanceType ?? '';
    const zone = o?.AvailabilityZone ?? req.createFleet.LaunchTemplateConfigs?.[0]?.Overrides?.find((x) => x.SubnetId === o?.SubnetId)?.AvailabilityZone ?? '';
    const zoneId = resolved.subnets.find((s) => s.subnetId === o?.SubnetId)?.zoneId ?? resolved.subnets.find((s) => s.zone === zone)?.zoneId;
    const imageId = o?.ImageId ?? req.createFleet.LaunchTemplateConfigs?.[0]?.Overrides?.find((x) => x.InstanceType === instanceType)?.ImageId;
    return {
      instanceId: launched.InstanceIds![0],
      instanceType,
      zone,
      ...(zoneId ? { zoneId } : {}),
      capacityType: launched.Lifecycle === 'spot' ? 'spot' : req.capacityType,
      ...(req.capacityType === 'reserved' && launch.capacityReservation ? { capacityReservation: launch.capacityReservation } : {}),
      imageId,
      // Pools that failed while another one launched: Karpenter marks these unavailable too.
      ...(errors.length
        ? { unavailableOfferings: unavailableOfferingsFrom(errors, req.capacityType), launchFailures: launchFailuresFrom(errors, req.capacityType, zoneIdOf) }
        : {}),
    };
  }

  private async ensureLaunchTemplate(lt: LaunchRequests['launchTemplates'][number]): Promise<void> {
    if (this.ensured.has(lt.LaunchTemplateName)) return;
    try {
      const found = await this.opts.ec2.send(new DescribeLaunchTemplatesCommand({ LaunchTemplateNames: [lt.LaunchTemplateName] }));
      if ((found.LaunchTemplates ?? []).length > 0) {
        this.ensured.add(lt.LaunchTemplateName);
        return;
      }
    } catch (err) {
      if (!isNotFound(err)) throw mapSdkError(err, 'DescribeLaunchTemplates');
    }
    try {
      await this.opts.ec2.send(new CreateLaunchTemplateCommand(lt));
    } catch (err) {
      const code = errorCode(err);
      if (!code || !AlreadyExistsErrorCodes.has(code)) throw mapSdkError(err, 'CreateLaunchTemplate');
    }
    this.ensured.add(lt.LaunchTemplateName);
  }

  /** Terminates; an instance already gone counts as success. @throws TransientError throttled. */
  async terminate(instanceId: string): Promise<void> {
    try {
      await this.opts.ec2.send(new TerminateInstancesCommand({ InstanceIds: [instanceId] }));
    } catch (err) {
      if (isNotFound(err)) return;
      throw mapSdkError(err, 'TerminateInstances');
    }
  }

  /** undefined when EC2 does not know the instance. */
  async get(instanceId: string): Promise<CloudInstance | undefined> {
    try {
      const out = await this.opts.ec2.send(new DescribeInstancesCommand({ InstanceIds: [instanceId] }));
      const i = out.Reservations?.flatMap((r) => r.Instances ?? []).find((x) => x.InstanceId === instanceId);
      return i && toCloudInstance(i);
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw mapSdkError(err, 'DescribeInstances');
    }
  }

  /** Instances tagged `nodefleet.io/cluster=<cluster>`, any state but terminated. */
  async list(): Promise<CloudInstance[]> {
    const { cluster } = await this.context();
    const out: CloudInstance[] = [];
    let NextToken: string | undefined;
    do {
      let page;
      try {
        page = await this.opts.ec2.send(
          new DescribeInstancesCommand({
            Filters: [
              { Name: `tag:${Tags.cluster}`, Values: [cluster.name] },
              { Name: 'instance-state-name', Values: ['pending', 'running', 'shutting-down', 'stopping', 'stopped'] },
            ],
            NextToken,
          }),
        );
      } catch (err) {
        throw mapSdkError(err, 'DescribeInstances');
      }
      for (const r of page.Reservations ?? []) for (const i of r.Instances ?? []) out.push(toCloudInstance(i));
      NextToken = page.NextToken;
    } while (NextToken);
    return out;
  }
  /**
   * Launch-template GC: deletes this cluster's launch templates (tag `nodefleet.io/cluster`) that
   * are older than `minAgeSeconds` and used by none of `instances` (EC2 tags an instance with the
   * id of the template it launched from, {@link Tags.launchTemplateId}). A template deleted under a
   * warm provisioner is recreated on its next launch ({@link create}). IAM: DescribeLaunchTemplates,
   * DeleteLaunchTemplate (allowed only on templates with the cluster and NodePool tags).
   * @param instances this cluster's instances (from {@link list}), so in-use templates are kept.
   * @returns the names of the deleted templates.
   * @throws TransientError throttled.
   */
  async collectLaunchTemplates(instances: readonly CloudInstance[], nowMs: number, minAgeSeconds = LaunchTemplateMinAgeSeconds): Promise<string[]> {
    const { cluster } = await this.context();
    const inUse = new Set(
      instances
        .filter((i) => i.state !== 'terminated')
        .map((i) => i.tags[Tags.launchTemplateId])
        .filter(Boolean),
    );
    const deleted: string[] = [];
    let NextToken: string | undefined;
    do {
      let page;
      try {
        page = await this.opts.ec2.send(new DescribeLaunchTemplatesCommand({ Filters: [{ Name: `tag:${Tags.cluster}`, Values: [cluster.name] }], NextToken }));
      } catch (err) {
        throw mapSdkError(err, 'DescribeLaunchTemplates');
      }
      for (const lt of page.LaunchTemplates ?? []) {
        if (!lt.LaunchTemplateId || inUse.has(lt.LaunchTemplateId)) continue;
        const created = lt.CreateTime ? new Date(lt.CreateTime).getTime() : nowMs;
        if ((nowMs - created) / 1000 < minAgeSeconds) continue;
        try {
          await this.opts.ec2.send(new DeleteLaunchTemplateCommand({ LaunchTemplateId: lt.LaunchTemplateId }));
        } catch (err) {
          if (isNotFound(err)) continue;
          throw mapSdkError(err, 'DeleteLaunchTemplate');
        }
        if (lt.LaunchTemplateName) this.ensured.delete(lt.LaunchTemplateName);
        deleted.push(lt.LaunchTemplateName ?? lt.LaunchTemplateId);
      }
      NextToken = page.NextToken;
    } while (NextToken);
    return deleted;
  }
}
