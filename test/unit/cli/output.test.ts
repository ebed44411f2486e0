/**
 * kubectl conventions: `-o yaml|json` print karpenter.sh/v1 NodeClaim objects in a v1 List,
 * `-o wide` adds columns, `status --all` has a PHASE column; the entry point checks the Node.js
 * version first and ends quietly when stdout closes early.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it, vi } from 'vitest';
import { runCli } from '../../../functions/cli/program.ts';
import { formatStatus } from '../../../functions/cli/commands/status.ts';
import { planInput } from '../../../functions/cli/commands/plan.ts';
import { NodeClaimSchema, toKubeNodeClaim } from '../../../shared/api/nodeclaim.ts';

const repo = join(import.meta.dirname, '../../..');
const nodePools = `apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: general}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      expireAfter: 168h
      requirements:
        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
        - {key: karpenter.k8s.aws/instance-family, operator: In, values: [m7i]}
`;
const pods = `apiVersion: v1
kind: List
items:
  - apiVersion: v1
    kind: Pod
    metadata: {name: web, namespace: shop}
    spec: {containers: [{name: a, image: b, resources: {requests: {cpu: 1500m, memory: 3Gi}}}]}
  - apiVersion: v1
    kind: Pod
    metadata: {name: huge, namespace: shop}
    spec: {containers: [{name: a, image: b, resources: {requests: {cpu: "900"}}}]}
`;

async function capture(args: string[]): Promise<{ code: number; out: string }> {
  let out = '';
  const o = vi.spyOn(process.stdout, 'write').mockImplementation((s: string | Uint8Array) => ((out += String(s)), true));
  try {
    return { code: await runCli(['node', 'nodefleet', ...args], {}), out };
  } finally {
    o.mockRestore();
  }
}

describe('plan -o yaml|json', () => {
  const dir = mkdtempSync(join(tmpdir(), 'nodefleet-output-'));
  writeFileSync(join(dir, 'np.yaml'), nodePools);
  writeFileSync(join(dir, 'pods.yaml'), pods);

  it('prints a List of karpenter.sh/v1 NodeClaims and one Event per pod; json is the same object', async () => {
    const y = await capture(['plan', '--nodepools', join(dir, 'np.yaml'), '--pods', join(dir, 'pods.yaml'), '-o', 'yaml']);
    expect(y.code).toBe(0);
    const list = parse(y.out);
    expect(list).toMatchObject({ apiVersion: 'v1', kind: 'List' });
    const [claim, ...events] = list.items;
    expect(claim).toMatchObject({
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodeClaim',
      metadata: { labels: { 'karpenter.sh/nodepool': 'general' }, finalizers: ['karpenter.sh/termination'] },
      spec: {
        nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
        expireAfter: '168h',
        resources: { requests: { cpu: '1500m', memory: '3Gi' } },
      },
    });
    expect(claim.metadata.name).toMatch(/^general-[a-z0-9]{5}$/);
    expect(claim.spec.requirements.find((r: { key: string }) => r.key === 'node.kubernetes.io/instance-type').values).toContain('m7i.large');
    expect(Number(claim.metadata.annotations['nodefleet.io/planned-price-usd-per-hour'])).toBeGreaterThan(0.05);
    expect(events.map((e: { reason: string; involvedObject: { name: string } }) => `${e.reason} ${e.involvedObject.name}`)).toEqual([
      'Nominated web',
      'FailedScheduling huge',
    ]);
    expect(events[0].message).toBe(`Pod should schedule on: nodeclaim/${claim.metadata.name}`);
    const j = await capture(['plan', '--nodepools', join(dir, 'np.yaml'), '--pods', join(dir, 'pods.yaml'), '--output', 'json']);
    // Names carry a random suffix (as the provisioner's) and the time differs: align both.
    const fromJson = JSON.parse(j.out.replaceAll(JSON.parse(j.out).items[0].metadata.name, claim.metadata.name));
    fromJson.items[0].metadata.creationTimestamp = claim.metadata.creationTimestamp;
    expect(fromJson).toEqual(list);
  });

  it("--packing reaches the scheduler settings (default: the scheduler's own)", () => {
    const texts = { nodePools: { file: 'np.yaml', text: nodePools }, pods: { file: 'pods.yaml', text: pods }, region: 'us-east-1' };
    expect(planInput({ ...texts, packing: 'karpenter' }).settings?.packing).toBe('karpenter');
    expect(planInput(texts).settings?.packing).toBeUndefined();
  });

  it('-o wide adds the first launch types', async () => {
    const w = await capture(['plan', '--nodepools', join(dir, 'np.yaml'), '--pods', join(dir, 'pods.yaml'), '-o', 'wide']);
    const lines = w.out.split('\n');
    expect(lines[1]).toMatch(/INSTANCE-TYPES\s+EXTENDED$/);
    expect(lines[2]).toMatch(/m7i\.large,m7i\.xlarge,m7i\.2xlarge/);
  });
});

describe('status', () => {
  const launched = NodeClaimSchema.parse({
    name: 'general-abcde',
    cluster: 'c',
    nodePool: 'general',
    nodeClass: 'default',
    requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] }],
    resources: { requests: { cpu: '1500m', memory: '3Gi' } },
    instanceType: 'm7i.large',
    zone: 'us-east-1a',
    capacityType: 'on-demand',
    priceUsdPerHour: 0.1008,
    providerId: 'aws:///us-east-1a/i-0123',
    nodeName: 'ip-10-0-0-1.ec2.internal',
    capacity: { cpu: '2', memory: '7864Mi' },
    conditions: [
      { type: 'Ready', status: 'True', lastTransitionTime: '2026-01-01T00:01:00.000Z' },
      { type: 'Launched', status: 'True', lastTransitionTime: '2026-01-01T00:00:10.123Z' },
    ],
    phase: 'Initialized',
    createdAt: '2026-01-01T00:00:00.000Z',
    expireAt: '2026-01-31T00:00:00.000Z',
    terminationGracePeriodSeconds: 5400,
  });

  it('a record becomes the NodeClaim kubectl shows: labels, spec durations, status, conditions with reasons', () => {
    const k = toKubeNodeClaim(launched);
    expect(k.metadata).toMatchObject({
      name: 'general-abcde',
      creationTimestamp: '2026-01-01T00:00:00Z',
      labels: {
        'karpenter.sh/nodepool': 'general',
        'node.kubernetes.io/instance-type': 'm7i.large',
        'topology.kubernetes.io/zone': 'us-east-1a',
        'karpenter.sh/capacity-type': 'on-demand',
      },
    });
    expect(k.spec).toMatchObject({ expireAfter: '720h', terminationGracePeriod: '1h30m', resources: { requests: { cpu: '1500m', memory: '3Gi' } } });
    expect(k.status).toEqual({
      providerID: 'aws:///us-east-1a/i-0123',
      nodeName: 'ip-10-0-0-1.ec2.internal',
      capacity: { cpu: '2', memory: '7864Mi' },
      conditions: [
        { type: 'Launched', status: 'True', reason: 'Launched', message: '', lastTransitionTime: '2026-01-01T00:00:10Z' },
        { type: 'Ready', status: 'True', reason: 'Ready', message: '', lastTransitionTime: '2026-01-01T00:01:00Z' },
      ],
    });
    expect(toKubeNodeClaim({ ...launched, expireAt: undefined }).spec.expireAfter).toBe('Never');
  });

  it('--all adds PHASE, -o wide the kubectl wide columns and the price', () => {
    const terminated = { ...launched, name: 'general-zzzzz', phase: 'Terminated' as const, createdAt: '2026-01-01T00:00:30.000Z', conditions: [] };
    const now = Date.parse('2026-01-01T00:10:00Z');
    expect(formatStatus([launched, terminated], now, { phase: true }).split('\n')[0]).toMatch(/^NAME\s+TYPE\s+CAPACITY\s+ZONE\s+NODE\s+READY\s+PHASE\s+AGE$/);
    expect(formatStatus([launched, terminated], now, { phase: true }).split('\n')[2]).toMatch(/^general-zzzzz\s+m7i\.large .*False\s+Terminated\s+9m30s$/);
    const wide = formatStatus([launched], now, { wide: true }).split('\n');
    expect(wide[0]).toMatch(/AGE\s+IMAGEID\s+ID\s+NODEPOOL\s+NODECLASS\s+DRIFTED\s+PRICE$/);
    expect(wide[1]).toMatch(/10m\s+aws:\/\/\/us-east-1a\/i-0123\s+general\s+default\s+\$0\.1008\/h$/);
  });
});

describe('entry point (bin.mjs)', () => {
  const bin = join(repo, 'functions/cli/bin.mjs');
  const node20 = ['/usr/bin/node', '/usr/local/bin/node'].find(
    (p) => existsSync(p) && Number(spawnSync(p, ['-p', 'process.versions.node.split(".")[0]']).stdout?.toString().trim()) < 22,
  );

  it.skipIf(!node20)('under an older Node.js says Node.js 22 is needed, before loading anything', () => {
    const r = spawnSync(node20!, [bin, 'demo'], { cwd: tmpdir(), encoding: 'utf8' });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^nodefleet: Node\.js 22 or newer is required, this is Node\.js 20\.\d+\.\d+ /);
  });

  it('runs from any folder and ends quietly with 0 when stdout closes early (| head -1)', async () => {
    const child = spawn(process.execPath, [bin, 'instance-types', '--region', 'us-east-1'], { cwd: tmpdir(), stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    const first = await new Promise<string>((resolve) => child.stdout.once('data', (d) => resolve(String(d))));
    child.stdout.destroy();
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(first).toMatch(/^NAME\s+CPU/);
    expect(err).toBe('');
    expect(code).toBe(0);
  });
});
