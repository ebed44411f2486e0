/**
 * Windows as Karpenter's AWS provider launches it (KA amifamily/windows.go, bootstrap/windows.go):
 * the alias's SSM parameter, the bootstrap PowerShell read back (the call's parameters and the
 * kubelet flags parsed), and the 50 GiB default volume.
 */
import { describe, expect, it } from 'vitest';
import { windowsAmiParameters, type ResolvedNodeClass } from '../../../shared/aws/node-class-resolver.ts';
import { buildLaunchRequests, catalogArchitecture } from '../../../shared/aws/ec2.ts';
import { buildWindowsUserData } from '../../../shared/aws/windows.ts';
import type { EC2NodeClass } from '../../../shared/api/nodepool.ts';
import { nodeClaim } from '../../fakes/index.ts';
import { nodeClass } from '../provisioner/world.ts';

const cluster = { name: 'demo', endpoint: 'https://x.example', certificateAuthority: 'Q0E=', serviceCidr: '10.100.0.0/16', kubernetesVersion: '1.33' };

/** The script's parts: lines before the bootstrap, the call's -Name 'value' parameters, the kubelet flags. */
function readScript(text: string) {
  const lines = text.split('\n');
  const at = lines.findIndex((l) => l.startsWith('[string]$EKSBootstrapScriptFile'));
  const params = Object.fromEntries([...lines[at + 1].matchAll(/ -(\w+) '([^']*)'/g)].map((m) => [m[1], m[2]]));
  const flags = Object.fromEntries(params.KubeletExtraArgs.split(/ (?=--)/).map((f: string) => [f.split('=')[0], f.split('=').slice(1).join('=')]));
  return { first: lines[0], last: lines[lines.length - 1], before: lines.slice(1, at), params, flags };
}

describe('Windows', () => {
  it('reads the Windows Server Core EKS-optimized parameter; 2025 only from Kubernetes 1.35', () => {
    expect(windowsAmiParameters('Windows2022', '1.33')).toEqual([
      {
        name: '/aws/service/ami-windows-latest/Windows_Server-2022-English-Core-EKS_Optimized-1.33/image_id',
        arch: 'amd64',
        variants: ['standard', 'nvidia', 'neuron'],
      },
    ]);
    expect(windowsAmiParameters('Windows2025', '1.34')).toEqual([]);
    expect(windowsAmiParameters('Windows2025', '1.35')[0].name).toBe(
      '/aws/service/ami-windows-latest/Windows_Server-2025-English-Core-EKS_Optimized-1.35/image_id',
    );
  });

  it("user data: the class's PowerShell, then Start-EKSBootstrap.ps1 with the cluster, DNS IP and kubelet flags", () => {
    const s = readScript(
      buildWindowsUserData({
        cluster,
        labels: { 'karpenter.sh/nodepool': 'win', 'kubernetes.io/os': 'windows' },
        taints: [
          { key: 'os', value: 'windows', effect: 'NoSchedule' },
          { key: 'karpenter.sh/unregistered', effect: 'NoExecute' },
        ],
        kubelet: {
          podsPerCore: 2,
          systemReserved: { memory: '1Gi', cpu: '100m' },
          evictionHard: { 'memory.available': '5%' },
          evictionSoftGracePeriod: { 'memory.available': '90s' },
          imageGCHighThresholdPercent: 80,
          cpuCFSQuota: true,
        },
        maxPods: 110,
        custom: 'Write-Host "hi"',
      }),
    );
    expect([s.first, s.last, s.before]).toEqual(['<powershell>', '</powershell>', ['Write-Host "hi"']]);
    expect(s.params).toMatchObject({ EKSClusterName: 'demo', APIServerEndpoint: 'https://x.example', Base64ClusterCA: 'Q0E=', DNSClusterIP: '10.100.0.10' });
    expect(s.flags).toEqual({
      '--node-labels': '"karpenter.sh/nodepool=win"',
      '--register-with-taints': '"os=windows:NoSchedule,karpenter.sh/unregistered:NoExecute"',
      '--max-pods': '110',
      '--pods-per-core': '2',
      '--system-reserved': '"cpu=100m,memory=1Gi"',
      '--eviction-hard': '"memory.available<5%"',
      '--eviction-soft-grace-period': '"memory.available=1m30s"',
      '--image-gc-high-threshold': '80',
      '--cpu-cfs-quota': 'true',
    });
  });

  it('the launch template: the PowerShell user data and one 50 GiB gp3 /dev/sda1', () => {
    const resolved: ResolvedNodeClass = {
      subnets: [{ subnetId: 'subnet-a', zone: 'us-west-2a', availableIpAddressCount: 10 }],
      securityGroupIds: ['sg-1'],
      images: { amd64: 'ami-win' },
    };
    const nc = nodeClass();
    nc.spec = { ...nc.spec, amiSelectorTerms: [{ alias: 'windows2022@latest' }] } as EC2NodeClass['spec'];
    const lt = buildLaunchRequests(
      nodeClaim({ name: 'default-abc', phase: 'Pending' }),
      { instanceTypes: ['m5.large'], zones: ['us-west-2a'], capacityTypes: ['on-demand'], maxPods: { 'm5.large': 110 } },
      nc,
      resolved,
      { cluster, architectureOf: catalogArchitecture },
    ).launchTemplates[0].LaunchTemplateData!;
    expect(readScript(Buffer.from(lt.UserData!, 'base64').toString()).flags['--max-pods']).toBe('110');
    expect(lt.BlockDeviceMappings).toEqual([{ DeviceName: '/dev/sda1', Ebs: { VolumeSize: 50, VolumeType: 'gp3', Encrypted: true } }]);
  });
});
