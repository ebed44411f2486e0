/**
 * AL2023 user data: a MIME multi-part document with a nodeadm `NodeConfig`
 * (https://awslabs.github.io/amazon-eks-ami/nodeadm/), as Karpenter's AWS provider builds it for
 * `amiFamily: AL2023` (aws/karpenter-provider-aws pkg/providers/amifamily/bootstrap/nodeadm.go).
 * The user's own `spec.userData` parts, if any, come first (a MIME multi-part document is merged
 * part by part, shared/api/nodeclass-support.ts `al2023UserDataParts`); nodefleet's NodeConfig is
 * the last part, so nodeadm merges it over the user's.
 */
import { stringify } from 'yaml';
import { ValidationError } from '../api/errors.ts';
import { serializeMultipart } from '../api/mime.ts';
import { al2023UserDataParts, NodeConfigContentType } from '../api/nodeclass-support.ts';
import type { Taint } from '../api/kube.ts';
import { labelKeyProblem, labelValueProblem, taintValueProblem, type KubeletConfiguration } from '../api/nodepool.ts';

/** What the node needs to join the cluster (EKS DescribeCluster, or the local environment). */
export interface ClusterInfo {
  name: string;
  /** https URL of the API server. */
  endpoint: string;
  /** Base64 PEM bundle of the cluster CA. */
  certificateAuthority: string;
  /** Service CIDR, e.g. "10.100.0.0/16" (nodeadm derives the cluster DNS IP from it). */
  serviceCidr: string;
  /** "1.31" etc.: picks the EKS-optimized AMI. */
  kubernetesVersion: string;
}

export interface UserDataInput {
  cluster: ClusterInfo;
  /** Labels the kubelet registers with (`--node-labels`). */
  labels: Record<string, string>;
  /** Taints the kubelet registers with (`--register-with-taints`), startup taints included. */
  taints: Taint[];
  kubelet?: KubeletConfiguration;
  /**
   * `RAID0`: nodeadm assembles the instance store volumes into one RAID0 array and puts the
   * kubelet's and containerd's storage on it (NodeConfig `spec.instance.localStorage.strategy`,
   * as KA bootstrap/nodeadm.go sets it); the catalog counts that array as ephemeral storage.
   */
  instanceStorePolicy?: 'RAID0';
  /** Max pods when the EC2NodeClass sets none; omitted = nodeadm's ENI-based default. */
  maxPods?: number;
  /** The EC2NodeClass `spec.userData`: its parts (a MIME document's, kept as they are) come before nodefleet's. */
  custom?: string;
}

/**
 * The cluster DNS IP of an IPv4 service CIDR: its `.10` address, the kube-dns service IP EKS
 * assigns (what nodeadm derives, and Karpenter discovers from the kube-dns service); undefined for
 * an IPv6 or unreadable CIDR (the node derives it itself).
 */
export function clusterDnsIp(serviceCidr: string): string | undefined {
  const m = /^(\d+)\.(\d+)\.(\d+)\.(\d+)\/(\d+)$/.exec(serviceCidr.trim());
  if (!m) return undefined;
  const n = m.slice(1, 5).reduce((a, o) => a * 256 + Number(o), 0);
  const bits = Number(m[5]);
  const base = bits === 0 ? 0 : n - (n % 2 ** (32 - bits));
  const ip = base + 10;
  return [24, 16, 8, 0].map((s) => Math.floor(ip / 2 ** s) % 256).join('.');
}

/**
 * The `spec.kubelet.config` of the NodeConfig: a KubeletConfiguration fragment nodeadm merges over
 * its defaults. The EC2NodeClass kubelet fields carry the KubeletConfiguration names, so each is
 * copied under its own name (as KA bootstrap/nodeadm.go marshals the block); unset fields are left
 * to nodeadm (maxPods from the ENI limits).
 */
function kubeletConfig(k: KubeletConfiguration | undefined, maxPods: number | undefined): Record<string, unknown> {
  const config: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(k ?? {})) {
    if (value === undefined) continue;
    if (Array.isArray(value) && value.length === 0) continue;
    if (typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length === 0) continue;
    config[key] = value;
  }
  if (config.maxPods === undefined && maxPods !== undefined) config.maxPods = maxPods;
  return config;
}

/**
 * Whether `key` goes into --node-labels: not of a kubernetes.io or k8s.io domain (or a subdomain,
 * node-restriction.kubernetes.io included), as KA amifamily/resolver.go `RejectForbiddenLabels`
 * leaves out what node admission could refuse; the kubelet sets its own well-known labels, and
 * registration applies the claim's others.
 */
export function kubeletMaySetLabel(key: string): boolean {
  const slash = key.indexOf('/');
  if (slash < 0) return true;
  const domain = key.slice(0, slash);
  return !['kubernetes.io', 'k8s.io'].some((d) => domain === d || domain.endsWith(`.${d}`));
}

/** Throws when `problem` is given: a flag value that could carry a second label or taint. */
function refuse(flag: string, what: string, problem: string | undefined): void {
  if (problem) throw new ValidationError(`user data ${flag}: ${what}: ${problem}`);
}

/**
 * `key=value,...` sorted, as kubelet's --node-labels takes it (labels the kubelet may not set are left out).
 * The flag has no escape for `,` and `=`: a key or value outside the label syntax (shared/api/nodepool.ts
 * labelKeyProblem / labelValueProblem, which admit neither) is refused, never passed on.
 * @throws ValidationError naming the label and the reason
 */
export function formatNodeLabels(labels: Record<string, string>): string {
  const kept = Object.entries(labels).filter(([k]) => kubeletMaySetLabel(k));
  for (const [k, v] of kept) refuse('--node-labels', `label ${JSON.stringify(k)}`, labelKeyProblem(k) ?? labelValueProblem(v));
  return kept
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
}

/**
 * `key=value:Effect,...` as kubelet's --register-with-taints takes it; as {@link formatNodeLabels},
 * a key or value outside the taint syntax (no `,` `=` `:`) is refused.
 * @throws ValidationError naming the taint and the reason
 */
export function formatTaints(taints: readonly Taint[]): string {
  for (const t of taints)
    refuse(
      '--register-with-taints',
      `taint ${JSON.stringify(t.key)}`,
      labelKeyProblem(t.key, 'taint key') ?? (t.value ? taintValueProblem(t.value) : undefined),
    );
  return taints.map((t) => `${t.key}${t.value ? `=${t.value}` : ''}:${t.effect}`).join(',');
}

/**
 * Builds the MIME multi-part user data (plain text; the launch template needs it base64-encoded).
 * Deterministic: the same input gives the same bytes (the launch template name hashes it).
 * @throws ValidationError a label or taint the kubelet flags cannot carry, or a `spec.userData`
 *   MIME document that cannot be read.
 */
export function buildAl2023UserData(input: UserDataInput): string {
  const flags: string[] = [];
  const nodeLabels = formatNodeLabels(input.labels);
  if (nodeLabels) flags.push(`--node-labels=${nodeLabels}`);
  if (input.taints.length) flags.push(`--register-with-taints=${formatTaints(input.taints)}`);
  const config = kubeletConfig(input.kubelet, input.maxPods);
  const nodeConfig = stringify(
    {
      apiVersion: 'node.eks.aws/v1alpha1',
      kind: 'NodeConfig',
      spec: {
        cluster: {
          name: input.cluster.name,
          apiServerEndpoint: input.cluster.endpoint,
          certificateAuthority: input.cluster.certificateAuthority,
          cidr: input.cluster.serviceCidr,
        },
        ...(input.instanceStorePolicy === 'RAID0' ? { instance: { localStorage: { strategy: 'RAID0' } } } : {}),
        kubelet: {
          ...(Object.keys(config).length ? { config } : {}),
          ...(flags.length ? { flags } : {}),
        },
      },
    },
    // No line folding (the CA bundle is one long string); keys in insertion order.
    { lineWidth: 0 },
  ).trimEnd();
  const custom = al2023UserDataParts(input.custom);
  if ('problem' in custom) throw new ValidationError(`spec.userData: ${custom.problem}`);
  return serializeMultipart([...custom.parts, { headers: [['Content-Type', NodeConfigContentType]], body: nodeConfig }]);
}
