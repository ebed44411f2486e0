/**
 * Bottlerocket user data: the settings TOML Karpenter's AWS provider writes for
 * `amiFamily: Bottlerocket` (KA pkg/providers/amifamily/bootstrap/bottlerocket.go), merged into the
 * class's own `spec.userData` TOML (shared/api/bottlerocket-settings.ts reads it) the provider's
 * way: its other `settings` tables stay; in `settings.kubernetes` the cluster name, API server and
 * CA, cluster DNS IP and max pods are Karpenter's, node labels are merged (Karpenter's win), node
 * taints are Karpenter's only, and each kubelet field the EC2NodeClass sets replaces the user's.
 */
import { stringify } from 'smol-toml';
import { ValidationError } from '../api/errors.ts';
import { formatGoDuration, parseGoDurationMs } from '../api/duration.ts';
import { parseBottlerocketUserData, type BootstrapCommand } from '../api/bottlerocket-settings.ts';
import { kubeletMaySetLabel, clusterDnsIp, type UserDataInput } from './user-data.ts';

/** The bootstrap command nodefleet adds for `instanceStorePolicy: RAID0` (KA's name for it). */
export const MountInstanceStorageCommand = '000-mount-instance-storage';

/**
 * Whether a Bottlerocket release binds the kubelet's, containerd's and the pod logs' directories
 * to the instance store by default (`apiclient ephemeral-storage bind` without `--dirs`): 1.46.0
 * and later, and `latest` (KA pkg/providers/version `SupportsDefaultBind`).
 */
export function supportsDefaultBind(version: string | undefined): boolean {
  if (!version) return false;
  if (version === 'latest') return true;
  const parts = version.replace(/^v+/, '').split('.');
  if (parts.length < 3) return false;
  const [major, minor] = parts.map((p) => (/^[0-9]+$/.test(p) ? Number(p) : NaN));
  if (Number.isNaN(major) || Number.isNaN(minor)) return false;
  return major > 1 || (major === 1 && minor >= 46);
}

/** `v1.46.0` from a Bottlerocket AMI name such as `bottlerocket-aws-k8s-1.33-x86_64-v1.46.0-431fe75a`. */
function versionInName(name: string): string | undefined {
  return name.split('-').find((p) => p.startsWith('v') && p.includes('.'));
}

/**
 * The Bottlerocket release a class launches, as KA amifamily/bottlerocket.go `resolveAMIVersion`
 * finds it: the alias version, else one in a `name` term, else in the name of an `id` term's
 * image, else in the name of a chosen image (`amis`, newest first) that is a Bottlerocket one.
 */
export function bottlerocketVersion(
  terms: readonly { alias?: string; name?: string; id?: string }[] | undefined,
  amis: readonly { id: string; name: string }[] = [],
): string | undefined {
  for (const t of terms ?? []) {
    const parts = t.alias?.split('@');
    if (parts?.length === 2) return parts[1];
  }
  for (const t of terms ?? []) {
    const v = t.name ? versionInName(t.name) : undefined;
    if (v) return v;
  }
  for (const t of terms ?? []) {
    const ami = t.id ? amis.find((a) => a.id === t.id && a.name.includes('bottlerocket')) : undefined;
    const v = ami ? versionInName(ami.name) : undefined;
    if (v) return v;
  }
  for (const a of amis) {
    const v = a.name.includes('bottlerocket') ? versionInName(a.name) : undefined;
    if (v) return v;
  }
  return undefined;
}

/** A kubelet duration ("1m", "90s") as Go writes it back ("1m0s", "1m30s"). */
function goDuration(text: string): string {
  const ms = parseGoDurationMs(text);
  if (ms === undefined) throw new ValidationError(`kubelet: ${JSON.stringify(text)} is not a duration`);
  return formatGoDuration(ms);
}

/**
 * Builds the Bottlerocket settings TOML (plain text; the launch template needs it base64-encoded).
 * Deterministic: the same input gives the same bytes.
 * @param amiVersion the release the class launches ({@link bottlerocketVersion}), for the RAID0 bind command.
 * @throws ValidationError a `spec.userData` that is not Bottlerocket TOML nodefleet passes on whole.
 */
export function buildBottlerocketUserData(input: UserDataInput, amiVersion?: string): string {
  const user = parseBottlerocketUserData(input.custom);
  if ('problem' in user) throw new ValidationError(`spec.userData: ${user.problem}`);
  const k8s: Record<string, unknown> = { ...user.kubernetes };
  const kubelet = input.kubelet ?? {};
  k8s['cluster-name'] = input.cluster.name;
  k8s['api-server'] = input.cluster.endpoint;
  k8s['cluster-certificate'] = input.cluster.certificateAuthority;
  const labels = Object.fromEntries(Object.entries(input.labels).filter(([k]) => kubeletMaySetLabel(k)));
  k8s['node-labels'] = { ...((k8s['node-labels'] as Record<string, string> | undefined) ?? {}), ...labels };
  const maxPods = kubelet.maxPods ?? input.maxPods;
  if (maxPods !== undefined) k8s['max-pods'] = maxPods;
  const dns = kubelet.clusterDNS?.[0] ?? clusterDnsIp(input.cluster.serviceCidr);
  if (dns) k8s['cluster-dns-ip'] = dns;
  const set = (key: string, value: unknown) => {
    if (value !== undefined) k8s[key] = value;
  };
  set('system-reserved', kubelet.systemReserved);
  set('kube-reserved', kubelet.kubeReserved);
  set('eviction-hard', kubelet.evictionHard);
  set('eviction-soft', kubelet.evictionSoft);
  set(
    'eviction-soft-grace-period',
    kubelet.evictionSoftGracePeriod && Object.fromEntries(Object.entries(kubelet.evictionSoftGracePeriod).map(([k, v]) => [k, goDuration(v)])),
  );
  set('eviction-max-pod-grace-period', kubelet.evictionMaxPodGracePeriod);
  set('image-gc-high-threshold-percent', kubelet.imageGCHighThresholdPercent?.toString());
  set('image-gc-low-threshold-percent', kubelet.imageGCLowThresholdPercent?.toString());
  set('cpu-cfs-quota-enforced', kubelet.cpuCFSQuota);
  // Karpenter's taints replace the user's node-taints: key → ["value:Effect", ...].
  const taints: Record<string, string[]> = {};
  for (const t of input.taints) (taints[t.key] ??= []).push(`${t.value ?? ''}:${t.effect}`);
  if (Object.keys(taints).length) k8s['node-taints'] = taints;
  else delete k8s['node-taints'];
  // As the provider's TOML encoder leaves out an empty table (omitempty) of settings.kubernetes.
  for (const [key, value] of Object.entries(k8s))
    if (value && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length === 0) delete k8s[key];
  const settings: Record<string, unknown> = { ...user.other, kubernetes: k8s };
  const commands: Record<string, BootstrapCommand> | undefined = user.bootstrapCommands
    ? { ...user.bootstrapCommands }
    : input.instanceStorePolicy === 'RAID0'
      ? {}
      : undefined;
  if (commands && input.instanceStorePolicy === 'RAID0') {
    const bind = supportsDefaultBind(amiVersion)
      ? ['apiclient', 'ephemeral-storage', 'bind']
      : ['apiclient', 'ephemeral-storage', 'bind', '--dirs', '/var/lib/containerd', '/var/lib/kubelet', '/var/log/pods'];
    commands[MountInstanceStorageCommand] = { commands: [['apiclient', 'ephemeral-storage', 'init'], bind], mode: 'always', essential: true };
  }
  if (commands) settings['bootstrap-commands'] = commands;
  return stringify({ settings });
}
