/**
 * NodePool (karpenter.sh/v1) and EC2NodeClass (karpenter.k8s.aws/v1): zod schemas, inferred
 * types and Karpenter's defaults. A Karpenter user's YAML is read as it is; nodefleet's own
 * group (nodefleet.io/v1) with the same schema is accepted too.
 *
 * Schema source: kubernetes-sigs/karpenter pkg/apis/v1/nodepool.go, nodeclaim.go and the CRD
 * pkg/apis/crds/karpenter.sh_nodepools.yaml; aws/karpenter-provider-aws pkg/apis/v1/ec2nodeclass.go.
 * Objects are strict: an unknown field is an error, as the API server rejects it.
 */
import { z } from 'zod';

/** Karpenter's defaults, in one place (KC pkg/apis/v1/nodepool.go kubebuilder defaults). */
export const NodePoolDefaults = {
  consolidationPolicy: 'WhenEmptyOrUnderutilized' as const,
  consolidateAfter: '0s',
  budgets: [{ nodes: '10%' }],
  expireAfter: '720h',
  weight: 0,
  /** EC2NodeClass kubelet / root volume defaults used for allocatable (KA docs, AL2023). */
  rootVolumeGiB: 20,
};

export const DurationPattern = /^(([0-9]+(s|m|h))+)$/;
const duration = z.string().regex(DurationPattern, 'must be a duration such as 30s, 10m or 720h');
const durationOrNever = z.string().regex(/^(([0-9]+(s|m|h))+|Never)$/, 'must be a duration such as 30s, 10m, 720h, or Never');
const quantity = z.union([z.string(), z.number()]);

export const TaintSchema = z.strictObject({
  key: z.string().min(1),
  value: z.string().optional(),
  effect: z.enum(['NoSchedule', 'PreferNoSchedule', 'NoExecute']),
  timeAdded: z.string().optional(),
});

export const OperatorSchema = z.enum(['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt', 'Gte', 'Lte']);

export const RequirementSchema = z.strictObject({
  key: z.string().min(1),
  operator: OperatorSchema,
  values: z.array(z.string()).optional(),
  minValues: z.number().int().min(1).max(50).optional(),
});

export const NodeClassRefSchema = z.strictObject({
  group: z.string().min(1),
  kind: z.string().min(1),
  name: z.string().min(1),
});

export const BudgetSchema = z.strictObject({
  nodes: z.string().regex(/^((100|[0-9]{1,2})%|[0-9]+)$/, 'must be a node count such as 5 or a percentage such as 10%'),
  schedule: z.string().optional(),
  duration: z.string().regex(/^([0-9]+(m|h))+$/, 'must be a duration in h/m such as 8h or 30m').optional(),
  reasons: z.array(z.enum(['Underutilized', 'Empty', 'Drifted'])).optional(),
});

const MetadataSchema = z.looseObject({
  name: z.string().min(1),
  labels: z.record(z.string(), z.string()).optional(),
  annotations: z.record(z.string(), z.string()).optional(),
});

export const NodePoolSchema = z.strictObject({
  apiVersion: z.enum(['karpenter.sh/v1', 'nodefleet.io/v1']),
  kind: z.literal('NodePool'),
  metadata: MetadataSchema,
  spec: z.strictObject({
    template: z.strictObject({
      metadata: z
        .strictObject({
          labels: z.record(z.string(), z.string()).optional(),
          annotations: z.record(z.string(), z.string()).optional(),
        })
        .optional(),
      spec: z.strictObject({
        nodeClassRef: NodeClassRefSchema,
        taints: z.array(TaintSchema).optional(),
        startupTaints: z.array(TaintSchema).optional(),
        requirements: z.array(RequirementSchema).max(100),
        expireAfter: durationOrNever.default(NodePoolDefaults.expireAfter),
        terminationGracePeriod: duration.optional(),
      }),
    }),
    disruption: z
      .strictObject({
        consolidationPolicy: z.enum(['WhenEmpty', 'WhenEmptyOrUnderutilized', 'Balanced']).default(NodePoolDefaults.consolidationPolicy),
        consolidateAfter: durationOrNever.default(NodePoolDefaults.consolidateAfter),
        budgets: z.array(BudgetSchema).max(50).default(NodePoolDefaults.budgets),
      })
      .default({
        consolidationPolicy: NodePoolDefaults.consolidationPolicy,
        consolidateAfter: NodePoolDefaults.consolidateAfter,
        budgets: NodePoolDefaults.budgets,
      }),
    limits: z.record(z.string(), quantity).optional(),
    weight: z.number().int().min(1).max(100).optional(),
    replicas: z.number().int().min(0).optional(),
  }),
  status: z.any().optional(),
});

export type NodePool = z.infer<typeof NodePoolSchema>;
export type NodePoolInput = z.input<typeof NodePoolSchema>;
export type Budget = z.infer<typeof BudgetSchema>;

const SelectorTermSchema = z.strictObject({
  tags: z.record(z.string(), z.string()).optional(),
  id: z.string().optional(),
  name: z.string().optional(),
  alias: z.string().optional(),
  owner: z.string().optional(),
  ssmParameter: z.string().optional(),
  instanceMatchCriteria: z.string().optional(),
  ownerID: z.string().optional(),
});

export const KubeletSchema = z.strictObject({
  clusterDNS: z.array(z.string()).optional(),
  maxPods: z.number().int().min(0).optional(),
  podsPerCore: z.number().int().min(0).optional(),
  systemReserved: z.record(z.string(), z.string()).optional(),
  kubeReserved: z.record(z.string(), z.string()).optional(),
  evictionHard: z.record(z.string(), z.string()).optional(),
  evictionSoft: z.record(z.string(), z.string()).optional(),
  evictionSoftGracePeriod: z.record(z.string(), z.string()).optional(),
  evictionMaxPodGracePeriod: z.number().int().optional(),
  imageGCHighThresholdPercent: z.number().int().min(0).max(100).optional(),
  imageGCLowThresholdPercent: z.number().int().min(0).max(100).optional(),
  cpuCFSQuota: z.boolean().optional(),
});

export const BlockDeviceMappingSchema = z.strictObject({
  deviceName: z.string().optional(),
  rootVolume: z.boolean().optional(),
  ebs: z
    .strictObject({
      volumeSize: quantity.optional(),
      volumeType: z.enum(['standard', 'io1', 'io2', 'gp2', 'sc1', 'st1', 'gp3']).optional(),
      iops: z.number().int().optional(),
      throughput: z.number().int().optional(),
      encrypted: z.boolean().optional(),
      kmsKeyID: z.string().optional(),
      deleteOnTermination: z.boolean().optional(),
      snapshotID: z.string().optional(),
      volumeInitializationRate: z.number().int().optional(),
    })
    .optional(),
});

export const EC2NodeClassSchema = z.strictObject({
  apiVersion: z.enum(['karpenter.k8s.aws/v1', 'nodefleet.io/v1']),
  kind: z.literal('EC2NodeClass'),
  metadata: MetadataSchema,
  spec: z.strictObject({
    amiFamily: z.enum(['AL2', 'AL2023', 'Bottlerocket', 'Windows2019', 'Windows2022', 'Windows2025', 'Custom']).optional(),
    amiSelectorTerms: z.array(SelectorTermSchema).min(1).optional(),
    subnetSelectorTerms: z.array(SelectorTermSchema).min(1),
    securityGroupSelectorTerms: z.array(SelectorTermSchema).min(1),
    capacityReservationSelectorTerms: z.array(SelectorTermSchema).optional(),
    associatePublicIPAddress: z.boolean().optional(),
    role: z.string().optional(),
    instanceProfile: z.string().optional(),
    kubelet: KubeletSchema.optional(),
    blockDeviceMappings: z.array(BlockDeviceMappingSchema).optional(),
    instanceStorePolicy: z.enum(['RAID0']).optional(),
    userData: z.string().optional(),
    tags: z.record(z.string(), z.string()).optional(),
    metadataOptions: z
      .strictObject({
        httpEndpoint: z.enum(['enabled', 'disabled']).optional(),
        httpProtocolIPv6: z.enum(['enabled', 'disabled']).optional(),
        httpPutResponseHopLimit: z.number().int().min(1).max(64).optional(),
        httpTokens: z.enum(['required', 'optional']).optional(),
      })
      .optional(),
    detailedMonitoring: z.boolean().optional(),
    context: z.string().optional(),
    ipPrefixes: z.any().optional(),
    // Newer v1 fields (KA pkg/apis/v1/ec2nodeclass.go main): accepted and passed through.
    ipPrefixCount: z.number().int().min(0).optional(),
    networkInterfaces: z.array(z.looseObject({})).max(150).optional(),
    placementGroupSelector: z.strictObject({ name: z.string().optional(), id: z.string().optional() }).optional(),
    connectionTracking: z
      .strictObject({
        tcpEstablished: z.number().int().min(60).max(432000).optional(),
        udpStream: z.number().int().min(60).max(180).optional(),
        udp: z.number().int().min(30).max(60).optional(),
      })
      .optional(),
    cpuOptions: z.looseObject({}).optional(),
  }),
  status: z.any().optional(),
});

export type EC2NodeClass = z.infer<typeof EC2NodeClassSchema>;
export type EC2NodeClassInput = z.input<typeof EC2NodeClassSchema>;

/**
 * EC2NodeClass defaults Karpenter applies (KA pkg/apis/v1/ec2nodeclass.go kubebuilder defaults and
 * pkg/providers/amifamily/resolver.go `DefaultEBS`). Used by the catalog and the launch template builder.
 */
export const EC2NodeClassDefaults = {
  metadataOptions: { httpEndpoint: 'enabled', httpProtocolIPv6: 'disabled', httpPutResponseHopLimit: 1, httpTokens: 'required' } as const,
  /** Root volume when no blockDeviceMappings are given: 20 GiB gp3, encrypted. */
  rootVolume: { volumeSize: '20Gi', volumeType: 'gp3', encrypted: true } as const,
  amiFamily: 'AL2023' as const,
};
/**
 * Why a static NodePool (`spec.replicas`, Karpenter v1.6+) is refused: nodefleet provisions for
 * pending pods only and keeps no fixed node count, so such a pool launches nothing (validation
 * reports it; the scheduler gives this reason for the pool).
 */
export const StaticNodePoolUnsupported = 'static NodePools (spec.replicas) are not supported by nodefleet: it launches nodes for pending pods only and keeps no fixed node count; remove spec.replicas to use this NodePool for pending pods';

export type KubeletConfiguration = z.infer<typeof KubeletSchema>;
