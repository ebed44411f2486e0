/**
 * Windows user data: a PowerShell script that runs the EKS-optimized AMI's
 * `Start-EKSBootstrap.ps1` with the cluster and the kubelet's flags, as Karpenter's AWS provider
 * writes it for the Windows AMI families (KA pkg/providers/amifamily/bootstrap/windows.go,
 * bootstrap.go `kubeletExtraArgs`). The class's `spec.userData` (PowerShell) runs first, inside
 * the same `<powershell>` block.
 */
import { formatGoDuration, parseGoDurationMs } from '../api/duration.ts';
import { ValidationError } from '../api/errors.ts';
import { clusterDnsIp, formatNodeLabels, formatTaints, type UserDataInput } from './user-data.ts';

/** Where the EKS-optimized Windows AMI keeps its bootstrap script. */
export const EksBootstrapScript = '"$env:ProgramFiles\\Amazon\\EKS\\Start-EKSBootstrap.ps1"';

/** `--name="k1<sep>v1,k2<sep>v2"` (keys sorted), or nothing for an empty map. */
function mapFlag(name: string, m: Record<string, string> | undefined, sep: string): string[] {
  const entries = Object.entries(m ?? {}).sort(([a], [b]) => a.localeCompare(b));
  return entries.length ? [`${name}=${JSON.stringify(entries.map(([k, v]) => `${k}${sep}${v}`).join(','))}`] : [];
}

/** The kubelet flags (`-KubeletExtraArgs`): labels, taints, max pods, then each kubelet field the class sets. */
export function windowsKubeletArgs(input: UserDataInput): string[] {
  const k = input.kubelet ?? {};
  const labels = formatNodeLabels(input.labels);
  const args = [...(labels ? [`--node-labels=${JSON.stringify(labels)}`] : []), `--register-with-taints=${JSON.stringify(formatTaints(input.taints))}`];
  const maxPods = k.maxPods ?? input.maxPods;
  if (maxPods !== undefined) args.push(`--max-pods=${maxPods}`);
  if (k.podsPerCore !== undefined) args.push(`--pods-per-core=${k.podsPerCore}`);
  args.push(...mapFlag('--system-reserved', k.systemReserved, '='), ...mapFlag('--kube-reserved', k.kubeReserved, '='));
  args.push(...mapFlag('--eviction-hard', k.evictionHard, '<'), ...mapFlag('--eviction-soft', k.evictionSoft, '<'));
  const grace =
    k.evictionSoftGracePeriod &&
    Object.fromEntries(
      Object.entries(k.evictionSoftGracePeriod).map(([s, v]) => {
        const ms = parseGoDurationMs(v);
        if (ms === undefined) throw new ValidationError(`kubelet.evictionSoftGracePeriod: ${JSON.stringify(v)} is not a duration`);
        return [s, formatGoDuration(ms)];
      }),
    );
  args.push(...mapFlag('--eviction-soft-grace-period', grace, '='));
  if (k.evictionMaxPodGracePeriod !== undefined) args.push(`--eviction-max-pod-grace-period=${k.evictionMaxPodGracePeriod}`);
  if (k.imageGCHighThresholdPercent !== undefined) args.push(`--image-gc-high-threshold=${k.imageGCHighThresholdPercent}`);
  if (k.imageGCLowThresholdPercent !== undefined) args.push(`--image-gc-low-threshold=${k.imageGCLowThresholdPercent}`);
  if (k.cpuCFSQuota !== undefined) args.push(`--cpu-cfs-quota=${k.cpuCFSQuota}`);
  return args;
}

/**
 * Builds the Windows user data (plain text; the launch template needs it base64-encoded).
 * @throws ValidationError a label or taint the kubelet flags cannot carry.
 */
export function buildWindowsUserData(input: UserDataInput): string {
  const dns = input.kubelet?.clusterDNS?.[0] ?? clusterDnsIp(input.cluster.serviceCidr);
  const call = [
    `& $EKSBootstrapScriptFile -EKSClusterName '${input.cluster.name}' -APIServerEndpoint '${input.cluster.endpoint}'`,
    input.cluster.certificateAuthority ? ` -Base64ClusterCA '${input.cluster.certificateAuthority}'` : '',
    ` -KubeletExtraArgs '${windowsKubeletArgs(input).join(' ')}'`,
    dns ? ` -DNSClusterIP '${dns}'` : '',
  ].join('');
  const custom = input.custom ? `${input.custom}\n` : '';
  return `<powershell>\n${custom}[string]$EKSBootstrapScriptFile = ${EksBootstrapScript}\n${call}\n</powershell>`;
}
