/**
 * `nodefleet validate` refuses every EC2NodeClass field and AMI family nodefleet does not honour
 * (shared/api/nodeclass-support.ts), with one line saying "not supported", and still accepts
 * the fields it honours.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { validateFiles } from '../../../functions/cli/commands/validate.ts';
import { runCli } from '../../../functions/cli/program.ts';
import { UnsupportedNodeClassFields } from '../../../shared/api/nodeclass-support.ts';

const base = {
  role: 'KarpenterNodeRole-demo',
  amiSelectorTerms: [{ alias: 'al2023@latest' }],
  subnetSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'demo' } }],
  securityGroupSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'demo' } }],
};
const yamlOf = (spec: Record<string, unknown>) =>
  stringify({ apiVersion: 'karpenter.k8s.aws/v1', kind: 'EC2NodeClass', metadata: { name: 'nc' }, spec: { ...base, ...spec } });
const validate = (spec: Record<string, unknown>) => validateFiles([{ file: 'nc.yaml', text: yamlOf(spec) }]);

/** A value Karpenter's CRD accepts for each field nodefleet refuses. */
const refusedValues: Record<string, unknown> = {
  ipPrefixCount: 1,
  networkInterfaces: [
    { networkCardIndex: 0, deviceIndex: 0, interfaceType: 'interface' },
    { networkCardIndex: 1, deviceIndex: 0, interfaceType: 'efa-only' },
  ],
  placementGroupSelector: { name: 'pg-training' },
  context: 'cr-fleet-context',
  connectionTracking: { tcpEstablishedTimeout: 120 },
  cpuOptions: { nestedVirtualization: 'enabled' },
};

afterEach(() => vi.restoreAllMocks());

describe('validate: EC2NodeClass fields nodefleet does not honour', () => {
  it('the table covers every refused field', () => {
    expect(Object.keys(refusedValues).sort()).toEqual(Object.keys(UnsupportedNodeClassFields).sort());
  });

  it.each(Object.entries(refusedValues))('spec.%s: one "not supported" line, exit 1', (field, value) => {
    expect(validate({ [field]: value })).toEqual({
      exitCode: 1,
      lines: [`nc.yaml: EC2NodeClass/nc: spec.${field}: not supported by nodefleet: ${UnsupportedNodeClassFields[field]}; remove spec.${field}`],
    });
  });

  it('capacityReservationSelectorTerms are honoured (reserved offerings), so accepted', () => {
    expect(validate({ capacityReservationSelectorTerms: [{ id: 'cr-0123456789abcdef0' }, { tags: { team: 'ml' }, ownerID: '123456789012' }] })).toEqual({
      exitCode: 0,
      lines: ['nc.yaml: EC2NodeClass/nc: valid (AMI al2023@latest, role KarpenterNodeRole-demo)'],
    });
  });

  it.each(['al2@v20240807', 'al2@latest'])('alias %s is refused', (alias) => {
    const r = validate({ amiSelectorTerms: [{ alias }] });
    expect(r.exitCode).toBe(1);
    expect(r.lines).toEqual([
      `nc.yaml: EC2NodeClass/nc: spec.amiSelectorTerms[0].alias: ${JSON.stringify(alias)} is not supported by nodefleet: nodefleet launches AL2023, Bottlerocket and Windows nodes only (nodeadm, Bottlerocket TOML or EKS bootstrap PowerShell user data), so such a node could not join; use al2023@latest, bottlerocket@latest (or a pinned version of either) or windows2022@latest`,
    ]);
  });

  it.each(['AL2', 'Custom'])('amiFamily %s is refused', (amiFamily) => {
    const r = validate({ amiFamily, amiSelectorTerms: [{ id: 'ami-0123456789abcdef0' }] });
    expect(r.exitCode).toBe(1);
    expect(r.lines).toEqual([
      `nc.yaml: EC2NodeClass/nc: spec.amiFamily: ${JSON.stringify(amiFamily)} is not supported by nodefleet: nodefleet launches AL2023, Bottlerocket and Windows nodes only (nodeadm, Bottlerocket TOML or EKS bootstrap PowerShell user data), so such a node could not join; set amiFamily: AL2023, Bottlerocket or Windows2019/2022/2025, or use an al2023@, bottlerocket@ or windows20xx@ alias`,
    ]);
  });

  it.each([
    [{ amiSelectorTerms: [{ alias: 'windows2022@latest' }], userData: 'Write-Host "hi"' }],
    [{ amiFamily: 'Windows2019', amiSelectorTerms: [{ id: 'ami-0123456789abcdef0' }] }],
  ])('Windows passes: %j', (spec) => {
    expect(validate(spec).exitCode).toBe(0);
  });

  it('RAID0 on Windows is refused (the Windows bootstrap does not assemble the instance store)', () => {
    const r = validate({ amiSelectorTerms: [{ alias: 'windows2025@latest' }], instanceStorePolicy: 'RAID0' });
    expect(r.exitCode).toBe(1);
    expect(r.lines).toEqual([
      'nc.yaml: EC2NodeClass/nc: spec.instanceStorePolicy: RAID0 is not supported by nodefleet for Windows: the Windows bootstrap does not assemble the instance store, so the node would not have the storage the catalog counts; remove spec.instanceStorePolicy',
    ]);
  });

  it.each([
    [{ amiSelectorTerms: [{ alias: 'bottlerocket@latest' }] }],
    [
      {
        amiSelectorTerms: [{ alias: 'bottlerocket@v1.46.0' }],
        userData: '[settings.kubernetes]\nshutdown-grace-period = "30s"\n[settings.host-containers.admin]\nenabled = true\n',
      },
    ],
    [{ amiFamily: 'Bottlerocket', amiSelectorTerms: [{ id: 'ami-0123456789abcdef0' }], instanceStorePolicy: 'RAID0' }],
  ])('Bottlerocket passes: %j', (spec) => {
    const r = validate(spec);
    expect(r.exitCode).toBe(0);
    expect(r.lines[0]).toMatch(/^nc\.yaml: EC2NodeClass\/nc: valid /);
  });

  it.each([
    ['#!/bin/bash\necho hi\n', /^spec\.userData: not a Bottlerocket TOML document \(line 2\): /],
    [
      '[settings.kubernetes]\nnot-a-setting = 1\n',
      /^spec\.userData: settings\.kubernetes\.not-a-setting is not supported by nodefleet: not a Kubernetes setting Karpenter passes to Bottlerocket/,
    ],
    ['[settings.kubernetes]\nmax-pods = "110"\n', /^spec\.userData: settings\.kubernetes\.max-pods must be an integer$/],
    ['[other]\nx = 1\n', /^spec\.userData: "other": only the \[settings\] table of Bottlerocket user data is passed to the node/],
    ['[settings.bootstrap-commands.a]\ncommands = [["echo"]]\n', /^spec\.userData: settings\.bootstrap-commands\.a\.mode must be one of always, once, off$/],
  ])('a Bottlerocket userData the provider would drop or fail on is refused: %j', (userData, line) => {
    const r = validate({ amiSelectorTerms: [{ alias: 'bottlerocket@latest' }], userData });
    expect(r.exitCode).toBe(1);
    expect(r.lines).toHaveLength(1);
    expect(r.lines[0].replace('nc.yaml: EC2NodeClass/nc: ', '')).toMatch(line);
  });

  it('an AL2023 userData MIME document that cannot be read is refused', () => {
    const r = validate({ userData: 'MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="B"\n\n--B\nContent-Type: text/x-shellscript\n\necho hi\n' });
    expect(r).toEqual({ exitCode: 1, lines: ['nc.yaml: EC2NodeClass/nc: spec.userData: MIME document is not closed: no "--B--" line'] });
  });

  it('the fields nodefleet honours pass', () => {
    const honoured = {
      amiFamily: 'AL2023',
      amiSelectorTerms: [{ id: 'ami-0123456789abcdef0' }],
      instanceStorePolicy: 'RAID0',
      blockDeviceMappings: [
        {
          deviceName: '/dev/xvda',
          rootVolume: true,
          ebs: { volumeSize: '40Gi', volumeType: 'gp3', snapshotID: 'snap-0123456789abcdef0', volumeInitializationRate: 200 },
        },
      ],
      kubelet: { maxPods: 110, systemReserved: { cpu: '100m' } },
      userData: 'MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="B"\n\n--B\nContent-Type: text/x-shellscript\n\necho hi\n--B--\n',
      metadataOptions: { httpPutResponseHopLimit: 2 },
      detailedMonitoring: true,
      associatePublicIPAddress: false,
      tags: { team: 'a' },
    };
    const r = validate(honoured);
    expect(r.exitCode).toBe(0);
    expect(r.lines).toHaveLength(1);
    expect(r.lines[0]).toMatch(/^nc\.yaml: EC2NodeClass\/nc: valid /);
  });

  it('the CLI prints the line on stdout and exits 1', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'nodefleet-validate-nc-'));
    writeFileSync(join(dir, 'nc.yaml'), yamlOf({ ipPrefixCount: 2 }));
    let out = '';
    vi.spyOn(process.stdout, 'write').mockImplementation((s: string | Uint8Array) => ((out += String(s)), true));
    const code = await runCli(['node', 'nodefleet', 'validate', join(dir, 'nc.yaml')], {});
    const exit = process.exitCode;
    process.exitCode = undefined;
    expect([code, exit]).toContain(1);
    expect(out).toBe(
      `${join(dir, 'nc.yaml')}: EC2NodeClass/nc: spec.ipPrefixCount: not supported by nodefleet: ${UnsupportedNodeClassFields.ipPrefixCount}; remove spec.ipPrefixCount\n`,
    );
  });
});

describe('validate --feature-gates (static NodePools)', () => {
  const text = [
    'apiVersion: karpenter.sh/v1',
    'kind: NodePool',
    'metadata: { name: static }',
    'spec:',
    '  replicas: 3',
    '  limits: { nodes: 4 }',
    '  template: { spec: { nodeClassRef: { group: karpenter.k8s.aws, kind: EC2NodeClass, name: default }, requirements: [] } }',
  ].join('\n');
  it('refuses spec.replicas in one line without StaticCapacity=true', () => {
    const r = validateFiles([{ file: 'np.yaml', text }]);
    expect(r.exitCode).toBe(1);
    expect(r.lines).toEqual([
      expect.stringMatching(/^np\.yaml: NodePool\/static: spec\.replicas: static NodePools \(spec\.replicas\) need the StaticCapacity feature gate/),
    ]);
  });
  it('validates it with StaticCapacity=true and says it is static', () => {
    const r = validateFiles([{ file: 'np.yaml', text }], { staticCapacity: true });
    expect(r.exitCode).toBe(0);
    expect(r.lines).toEqual([expect.stringContaining('static: replicas 3')]);
  });
});
