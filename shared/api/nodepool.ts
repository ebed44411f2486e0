/**
 * NodePool (karpenter.sh/v1) and EC2NodeClass (karpenter.k8s.aws/v1): zod schemas, inferred
 * types and Karpenter's defaults. A Karpenter user's YAML is read as it is; nodefleet's own
 * EC2NodeClass group (nodefleet.io/v1, same schema, CRD infra/k8s/nodefleet.io_ec2nodeclasses.yaml)
 * is for running beside Karpenter (docs/migration.md). NodePools are always karpenter.sh/v1.
 *
 * Schema source: kubernetes-sigs/karpenter pkg/apis/v1/nodepool.go, nodeclaim.go and the CRD
 * pkg/apis/crds/karpenter.sh_nodepools.yaml; aws/karpenter-provider-aws pkg/apis/v1/ec2nodeclass.go.
 * Objects are strict: an unknown field is an error, as the API server rejects it.
 */
import { z } from 'zod';
import { DurationOrNeverPattern, DurationPattern } from './duration.ts';

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

const duration = z.string().regex(DurationPattern, 'must be a duration such as 30s, 10m or 720h');
const durationOrNever = z.string().regex(DurationOrNeverPattern, 'must be a duration such as 30s, 10m, 720h, or Never');
const quantity = z.union([z.string(), z.number()]);

/** Qualified name `[prefix/]name` (the CRD pattern of requirement and taint keys, and of taint values). */
export const QualifiedNamePattern = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*(\/))?([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
/** The name part of a qualified name (≤ 63 characters). */
const QualifiedNamePart = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
/** Lowercase DNS subdomain (≤ 253 characters): a key's prefix, an object's name. */
export const DNSSubdomainPattern = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
/** Label value (≤ 63 characters; empty allowed): the CRD pattern of template label values and requirement values. */
export const LabelValuePattern = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/** Longest value (characters) quoted in full in a problem line; longer ones are cut, with their length. */
export const MaxShown = 80;

/** `v` as a problem line quotes it: JSON, a long string cut to {@link MaxShown} with its length. */
export function show(v: unknown): string {
  if (typeof v === 'string' && v.length > MaxShown) return `${JSON.stringify(v.slice(0, MaxShown))}… (${v.length} characters)`;
  return typeof v === 'string' ? JSON.stringify(v) : (JSON.stringify(v) ?? String(v));
}

/*
 * The syntax of label and taint keys and values: one home for the NodePool schema below (the
 * runtime path: every handler reads NodePools and NodeClaims through it), `cli validate`
 * (shared/api/validate.ts) and the kubelet flags of the user data (shared/aws/user-data.ts, which
 * has no escape for `,` `=` `:`). None of these patterns admits `,` `=` `:` or whitespace.
 * Source: the Karpenter CRDs' patterns (KC pkg/apis/crds/karpenter.sh_nodepools.yaml: taint key and
 * value = qualified name, label value ≤ 63 of the label-value pattern) and the Kubernetes label key
 * syntax (`[prefix/]name`, prefix a DNS subdomain ≤ 253, name ≤ 63).
 */

/** Why `key` is not a valid label (or taint) key, or undefined. */
export function labelKeyProblem(key: string, what: 'label key' | 'taint key' = 'label key'): string | undefined {
  const parts = key.split('/');
  if (parts.length > 2) return `${show(key)} is not a valid ${what} (at most one "/")`;
  const name = parts[parts.length - 1];
  if (name.length === 0 || name.length > 63 || !QualifiedNamePart.test(name)) {
    return `${show(key)} is not a valid ${what}: the name part must be 1–63 characters of [A-Za-z0-9-_.], starting and ending alphanumeric`;
  }
  if (parts.length === 2 && (parts[0].length > 253 || !DNSSubdomainPattern.test(parts[0]))) {
    return `${show(key)} is not a valid ${what}: the prefix must be a lowercase DNS subdomain`;
  }
  return undefined;
}

/** Why `v` is not a valid label value (template label, requirement value), or undefined. */
export function labelValueProblem(v: string): string | undefined {
  if (v.length > 63 || !LabelValuePattern.test(v))
    return `${show(v)} is not a valid label value (at most 63 characters of [A-Za-z0-9-_.], starting and ending alphanumeric)`;
  return undefined;
}

/** Why `v` is not a valid taint value, or undefined. */
export function taintValueProblem(v: string): string | undefined {
  if (!QualifiedNamePattern.test(v))
    return `${show(v)} is not a valid taint value ([prefix/]name: 1–63 characters of [A-Za-z0-9-_.], starting and ending alphanumeric)`;
  return undefined;
}

/** A zod check reporting `problem`'s line (an empty string is left to the schema's min). */
function syntax(problem: (s: string) => string | undefined) {
  return (s: string, ctx: z.RefinementCtx) => {
    const p = s === '' ? undefined : problem(s);
    if (p) ctx.addIssue({ code: 'custom', message: p });
  };
}

/** Gt / Lt / Gte / Lte take an integer, not a label value. */
const NumericOperators: ReadonlySet<string> = new Set(['Gt', 'Lt', 'Gte', 'Lte']);

export const TaintSchema = z.strictObject({
  key: z
    .string()
    .min(1)
    .superRefine(syntax((k) => labelKeyProblem(k, 'taint key'))),
  value: z.string().superRefine(syntax(taintValueProblem)).optional(),
  effect: z.enum(['NoSchedule', 'PreferNoSchedule', 'NoExecute']),
  timeAdded: z.iso.datetime({ offset: true, message: 'must be an RFC 3339 time such as 2024-01-01T00:00:00Z' }).optional(),
});

export const OperatorSchema = z.enum(['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt', 'Gte', 'Lte']);

export const RequirementSchema = z
  .strictObject({
    key: z
      .string()
      .min(1)
      .superRefine(syntax((k) => labelKeyProblem(k))),
    operator: OperatorSchema,
    values: z.array(z.string()).optional(),
    minValues: z.number().int().min(1).max(50).optional(),
  })
  .superRefine((r, ctx) => {
    if (NumericOperators.has(r.operator)) return;
    (r.values ?? []).forEach((v, i) => {
      const p = labelValueProblem(v);
      if (p) ctx.addIssue({ code: 'custom', message: p, path: ['values', i] });
    });
  });

/** Template labels: ≤ 100, each key and value of the label syntax above. */
const TemplateLabelsSchema = z
  .record(z.string(), z.string())
  .refine((l) => Object.keys(l).length <= 100, 'must have at most 100 labels')
  .superRefine((labels, ctx) => {
    for (const [k, v] of Object.entries(labels)) {
      for (const p of [labelKeyProblem(k), labelValueProblem(v)]) if (p) ctx.addIssue({ code: 'custom', message: p, path: [k] });
    }
  });

export const NodeClassRefSchema = z.strictObject({
  group: z
    .string()
    .min(1)
    .regex(/^[^/]*$/, 'must be an API group without a version, e.g. karpenter.k8s.aws'),
  kind: z.string().min(1),
  name: z.string().min(1),
});

/** The EC2NodeClass group Karpenter's AWS provider launches with, and nodefleet's own (for running beside Karpenter). */
export const KarpenterNodeClassGroup = 'karpenter.k8s.aws';
export const NodefleetNodeClassGroup = 'nodefleet.io';
export type NodeClassGroup = typeof KarpenterNodeClassGroup | typeof NodefleetNodeClassGroup;

/**
 * The node class group whose NodePools a deployment manages: nodefleet's own beside Karpenter
 * (CDK context `besideKarpenter`, NODEFLEET_BESIDE_KARPENTER), else Karpenter's, as a replacement.
 */
export function managedNodeClassGroup(besideKarpenter: boolean | undefined): NodeClassGroup {
  return besideKarpenter ? NodefleetNodeClassGroup : KarpenterNodeClassGroup;
}

/**
 * Whether a NodePool is this deployment's: its nodeClassRef names an EC2NodeClass of `group` (the
 * deployment's {@link managedNodeClassGroup}). Applied where NodePools are read (the KubeApi
 * adapter): a NodePool of the other group is Karpenter's (beside nodefleet) or nodefleet's (beside
 * Karpenter) and is never seen by provisioning, disruption or termination.
 */
export function isManagedNodeClassRef(ref: { group: string; kind: string }, group: NodeClassGroup): boolean {
  return ref.kind === 'EC2NodeClass' && ref.group === group;
}

/**
 * Whether a NodePool's nodeClassRef names a node class nodefleet can launch with (an EC2NodeClass
 * of either group). A NodePool referring to another provider's class belongs to another controller:
 * its nodes are neither provisioned nor disrupted here (Karpenter's `nodepoolutils.IsManaged` over
 * the provider's supported node classes).
 */
export function isLaunchableNodeClassRef(ref: { group: string; kind: string }): boolean {
  return isManagedNodeClassRef(ref, KarpenterNodeClassGroup) || isManagedNodeClassRef(ref, NodefleetNodeClassGroup);
}

export const BudgetSchema = z.strictObject({
  nodes: z.string().regex(/^((100|[0-9]{1,2})%|[0-9]+)$/, 'must be a node count such as 5 or a percentage such as 10%'),
  schedule: z.string().optional(),
  duration: z
    .string()
    .regex(/^((([0-9]+(h|m))|([0-9]+h[0-9]+m))(0s)?)$/, 'must be a duration in h/m such as 8h, 30m or 1h30m')
    .optional(),
  reasons: z
    .array(z.enum(['Underutilized', 'Empty', 'Drifted']))
    .max(50)
    .optional(),
});

const MetadataSchema = z.looseObject({
  name: z.string().min(1),
  labels: z.record(z.string(), z.string()).optional(),
  annotations: z.record(z.string(), z.string()).optional(),
});

export const NodePoolSchema = z.strictObject({
  apiVersion: z.literal('karpenter.sh/v1'),
  kind: z.literal('NodePool'),
  metadata: MetadataSchema,
  spec: z.strictObject({
    template: z.strictObject({
      metadata: z
        .strictObject({
          labels: TemplateLabelsSchema.optional(),
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

/** Tags of a selector term: at most 20 (KA CRD maxProperties). */
const termTags = z
  .record(z.string(), z.string())
  .refine((t) => Object.keys(t).length <= 20, 'must have at most 20 tags')
  .optional();

/** Each selector term has exactly the fields its CRD lists (KA v1.14.1), with their patterns. */
export const AmiSelectorTermSchema = z.strictObject({
  alias: z.string().max(30).optional(),
  id: z
    .string()
    .regex(/ami-[0-9a-z]+/, 'must be an AMI id such as ami-0123456789abcdef0')
    .optional(),
  name: z.string().optional(),
  owner: z.string().optional(),
  ssmParameter: z.string().optional(),
  tags: termTags,
});
export const SubnetSelectorTermSchema = z.strictObject({
  id: z
    .string()
    .regex(/subnet-[0-9a-z]+/, 'must be a subnet id such as subnet-0123456789abcdef0')
    .optional(),
  tags: termTags,
});
export const SecurityGroupSelectorTermSchema = z.strictObject({
  id: z
    .string()
    .regex(/sg-[0-9a-z]+/, 'must be a security group id such as sg-0123456789abcdef0')
    .optional(),
  name: z.string().optional(),
  tags: termTags,
});
export const CapacityReservationSelectorTermSchema = z.strictObject({
  id: z
    .string()
    .regex(/^cr-[0-9a-z]+$/, 'must be a capacity reservation id such as cr-0123456789abcdef0')
    .optional(),
  instanceMatchCriteria: z.enum(['open', 'targeted']).optional(),
  ownerID: z
    .string()
    .regex(/^[0-9]{12}$/, 'must be a 12-digit AWS account id')
    .optional(),
  tags: termTags,
});

/** Kubernetes quantity syntax (OpenAPI pattern of ResourceList values). */
export const QuantityPattern = /^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$/;
const reservedQuantity = z.string().regex(QuantityPattern, 'must be a quantity such as 100m, 1Gi or 1000');
/** Eviction threshold: a percentage (0–100 %, up to two decimals) or a quantity (KA CRD pattern; "" allowed as in the CRD). */
const evictionThreshold = z
  .string()
  .regex(
    /^((\d{1,2}(\.\d{1,2})?|100(\.0{1,2})?)%||(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?)$/,
    'must be a percentage (10%) or a quantity (100Mi)',
  );

const int32 = z
  .number()
  .int()
  .min(-(2 ** 31))
  .max(2 ** 31 - 1);

export const KubeletSchema = z.strictObject({
  clusterDNS: z.array(z.string()).optional(),
  maxPods: int32.min(0).optional(),
  podsPerCore: int32.min(0).optional(),
  systemReserved: z.record(z.string(), reservedQuantity).optional(),
  kubeReserved: z.record(z.string(), reservedQuantity).optional(),
  evictionHard: z.record(z.string(), evictionThreshold).optional(),
  evictionSoft: z.record(z.string(), evictionThreshold).optional(),
  evictionSoftGracePeriod: z.record(z.string(), z.string()).optional(),
  evictionMaxPodGracePeriod: int32.optional(),
  imageGCHighThresholdPercent: int32.min(0).max(100).optional(),
  imageGCLowThresholdPercent: int32.min(0).max(100).optional(),
  cpuCFSQuota: z.boolean().optional(),
});

/** EBS volume size: 1–59000Gi, 1–64000G, 1–58Ti or 1–64T (KA CRD pattern). */
export const VolumeSizePattern =
  /^((?:[1-9][0-9]{0,3}|[1-4][0-9]{4}|[5][0-8][0-9]{3}|59000)Gi|(?:[1-9][0-9]{0,3}|[1-5][0-9]{4}|[6][0-3][0-9]{3}|64000)G|([1-9]||[1-5][0-7]|58)Ti|([1-9]||[1-5][0-9]|6[0-3]|64)T)$/;

export const BlockDeviceMappingSchema = z.strictObject({
  deviceName: z.string().optional(),
  rootVolume: z.boolean().optional(),
  ebs: z
    .strictObject({
      volumeSize: z.string().regex(VolumeSizePattern, 'must be a size such as 20Gi or 100G (1–59000Gi, 1–64000G, 1–58Ti, 1–64T)').optional(),
      volumeType: z.enum(['standard', 'io1', 'io2', 'gp2', 'sc1', 'st1', 'gp3']).optional(),
      iops: z.number().int().optional(),
      throughput: z.number().int().optional(),
      encrypted: z.boolean().optional(),
      kmsKeyID: z.string().optional(),
      deleteOnTermination: z.boolean().optional(),
      snapshotID: z.string().optional(),
      volumeInitializationRate: z.number().int().min(100).max(300).optional(),
    })
    .optional(),
});

export const EC2NodeClassSchema = z.strictObject({
  apiVersion: z.enum(['karpenter.k8s.aws/v1', 'nodefleet.io/v1']),
  kind: z.literal('EC2NodeClass'),
  metadata: MetadataSchema,
  spec: z.strictObject({
    amiFamily: z.enum(['AL2', 'AL2023', 'Bottlerocket', 'Windows2019', 'Windows2022', 'Windows2025', 'Custom']).optional(),
    amiSelectorTerms: z.array(AmiSelectorTermSchema).min(1).max(30),
    subnetSelectorTerms: z.array(SubnetSelectorTermSchema).max(30),
    securityGroupSelectorTerms: z.array(SecurityGroupSelectorTermSchema).max(30),
    capacityReservationSelectorTerms: z.array(CapacityReservationSelectorTermSchema).max(30).optional(),
    associatePublicIPAddress: z.boolean().optional(),
    role: z.string().optional(),
    instanceProfile: z.string().optional(),
    kubelet: KubeletSchema.optional(),
    blockDeviceMappings: z.array(BlockDeviceMappingSchema).max(50).optional(),
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
    ipPrefixCount: int32.min(0).optional(),
    networkInterfaces: z
      .array(z.strictObject({ networkCardIndex: int32.min(0), deviceIndex: int32.min(0), interfaceType: z.enum(['interface', 'efa-only']) }))
      .max(150)
      .optional(),
    placementGroupSelector: z
      .strictObject({
        name: z.string().min(1).optional(),
        id: z
          .string()
          .regex(/^pg-[0-9a-z]+$/, 'must be a placement group id such as pg-0123456789abcdef0')
          .optional(),
      })
      .optional(),
    connectionTracking: z
      .strictObject({
        tcpEstablishedTimeout: int32.min(60).max(432000).optional(),
        udpStreamTimeout: int32.min(60).max(180).optional(),
        udpTimeout: int32.min(30).max(60).optional(),
      })
      .optional(),
    cpuOptions: z.strictObject({ nestedVirtualization: z.enum(['enabled', 'disabled']).optional() }).optional(),
  }),
  status: z.any().optional(),
});

export type EC2NodeClass = z.infer<typeof EC2NodeClassSchema>;
/** One `capacityReservationSelectorTerms` entry. */
export type CapacityReservationSelectorTerm = z.infer<typeof CapacityReservationSelectorTermSchema>;
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
 * Why a static NodePool (`spec.replicas`, Karpenter v1.6+) is refused while the StaticCapacity
 * feature gate is off (its default, as in Karpenter, whose API server then accepts the pool and
 * never launches for it: nodefleet says so instead). validate and the disruption loop give it.
 */
export const StaticCapacityGateOff =
  'static NodePools (spec.replicas) need the StaticCapacity feature gate, off by default as in Karpenter (FEATURE_GATES=StaticCapacity=true; validate --feature-gates StaticCapacity=true)';

/**
 * Why the provisioner's scheduler never launches a static NodePool for pending pods: its node
 * count is spec.replicas, kept by the disruption loop (KC provisioner.go skips static NodePools).
 */
export const StaticNodePoolNotForPods = 'static NodePool (spec.replicas): its node count is kept at replicas, never launched for pending pods';

/** Whether a NodePool is static (spec.replicas set; KC utils/nodepool `IsStatic`). */
export function isStaticNodePool(nodePool: { spec: { replicas?: number } }): boolean {
  return nodePool.spec.replicas !== undefined;
}

export type KubeletConfiguration = z.infer<typeof KubeletSchema>;
