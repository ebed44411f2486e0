/**
 * `plan` says what the catalog cannot tell: Windows nodes have no price in it (never Linux rates
 * shown as theirs), and instance types or families asked for by name that it does not hold.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it, vi } from 'vitest';
import { runCli } from '../../../functions/cli/program.ts';
import { planInput } from '../../../functions/cli/commands/plan.ts';

async function capture(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const o = vi.spyOn(process.stdout, 'write').mockImplementation((s: string | Uint8Array) => ((out += String(s)), true));
  const e = vi.spyOn(process.stderr, 'write').mockImplementation((s: string | Uint8Array) => ((err += String(s)), true));
  try {
    return { code: await runCli(['node', 'nodefleet', ...args], {}), out, err };
  } finally {
    o.mockRestore();
    e.mockRestore();
  }
}

const nodeClass = (name: string, alias: string) => `---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: ${name}}
spec:
  role: KarpenterNodeRole
  amiSelectorTerms: [{alias: "${alias}"}]
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: c}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: c}}]
`;

const pool = (name: string, nodeClassName: string, requirements: string) => `---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: ${name}}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: ${nodeClassName}}
      requirements:
${requirements}
`;

const pod = (name: string, nodeSelector: string) => `---
apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: default}
spec:
  nodeSelector: {${nodeSelector}}
  containers: [{name: c, image: i, resources: {requests: {cpu: "1", memory: 2Gi}}}]
`;

describe('plan and Windows NodePools', () => {
  const dir = mkdtempSync(join(tmpdir(), 'nodefleet-plan-'));
  writeFileSync(
    join(dir, 'np.yaml'),
    pool('windows', 'windows', '        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}') +
      pool('linux', 'linux', '        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}') +
      nodeClass('windows', 'windows2022@latest') +
      nodeClass('linux', 'al2023@latest'),
  );
  writeFileSync(join(dir, 'pods.yaml'), pod('iis', 'kubernetes.io/os: windows') + pod('nginx', 'kubernetes.io/os: linux'));

  it('prints no price for a Windows NodeClaim, one line saying why, and Linux prices for the others', async () => {
    // Act
    const { code, out } = await capture(['plan', '--nodepools', join(dir, 'np.yaml'), '--pods', join(dir, 'pods.yaml')]);

    // Assess
    expect(code).toBe(0);
    const rows = out.split('\n');
    expect(rows.find((l) => l.startsWith('windows '))).toMatch(/^windows\s+\S+\s+unknown\s+on-demand/);
    expect(rows.find((l) => l.startsWith('linux '))).toMatch(/^linux\s+\S+\s+\$0\.\d{4}\/h\s+on-demand/);
    expect(rows).toContain('nodepool windows: no Windows prices in the catalog: price unknown; types ordered by Linux rates');
    expect(rows.find((l) => /NodeClaim\(s\)/.test(l))).toMatch(/^2 NodeClaim\(s\), \$0\.\d{4}\/h \+ 1 unpriced$/);
  });

  it('-o yaml carries the reason instead of a price, and the Windows claim is amd64', async () => {
    const { out } = await capture(['plan', '--nodepools', join(dir, 'np.yaml'), '--pods', join(dir, 'pods.yaml'), '-o', 'yaml']);
    const claims = parse(out).items.filter((i: { kind: string }) => i.kind === 'NodeClaim');
    const win = claims.find((c: { metadata: { labels: Record<string, string> } }) => c.metadata.labels['karpenter.sh/nodepool'] === 'windows');
    const lin = claims.find((c: { metadata: { labels: Record<string, string> } }) => c.metadata.labels['karpenter.sh/nodepool'] === 'linux');
    expect(win.metadata.annotations).toEqual(expect.objectContaining({ 'nodefleet.io/planned-price-unknown': 'no Windows prices in the catalog' }));
    expect(win.metadata.annotations['nodefleet.io/planned-price-usd-per-hour']).toBeUndefined();
    expect(Number(lin.metadata.annotations['nodefleet.io/planned-price-usd-per-hour'])).toBeGreaterThan(0);
    const types = win.spec.requirements.find((r: { key: string }) => r.key === 'node.kubernetes.io/instance-type').values as string[];
    expect(types.some((t) => /^(t4g|c[67]g|m[67]g|r[67]g)\./.test(t))).toBe(false);
  });
});

describe('plan and instance types the catalog does not hold', () => {
  const dir = mkdtempSync(join(tmpdir(), 'nodefleet-plan-'));
  writeFileSync(
    join(dir, 'np.yaml'),
    pool(
      'gpu',
      'default',
      [
        '        - {key: karpenter.k8s.aws/instance-family, operator: In, values: [p3, g4dn]}',
        '        - {key: node.kubernetes.io/instance-type, operator: In, values: [x.fake, g4dn.xlarge, c9g.large]}',
      ].join('\n'),
    ) + nodeClass('default', 'al2023@latest'),
  );
  writeFileSync(
    join(dir, 'pods.yaml'),
    pod('train-0', 'node.kubernetes.io/instance-type: p3.2xlarge') + pod('train-1', 'node.kubernetes.io/instance-type: p3.2xlarge'),
  );

  it('names each unknown type or family with its file, object and field, once per value for pods', async () => {
    // Act
    const { code, err } = await capture(['plan', '--nodepools', join(dir, 'np.yaml'), '--pods', join(dir, 'pods.yaml'), '--region', 'eu-west-1']);

    // Assess
    expect(code).toBe(0);
    const np = join(dir, 'np.yaml');
    expect(err.trimEnd().split('\n')).toEqual([
      `${np}: NodePool/gpu: spec.template.spec.requirements[0].values[0]: instance family "p3" is not in the catalog (1363 types, those Karpenter's reference lists)`,
      `${np}: NodePool/gpu: spec.template.spec.requirements[1].values[0]: instance type "x.fake" is not in the catalog (1363 types, those Karpenter's reference lists)`,
      `${np}: NodePool/gpu: spec.template.spec.requirements[1].values[2]: instance type "c9g.large" has no price in eu-west-1 in the catalog (not offered there)`,
      `${join(dir, 'pods.yaml')}: Pod default/train-0: spec.nodeSelector["node.kubernetes.io/instance-type"]: instance type "p3.2xlarge" is not in the catalog (1363 types, those Karpenter's reference lists) (and 1 more pod(s))`,
      'no --account: subnets, security groups and AMIs are placeholders (every zone of eu-west-1 assumed, zone ids as in the shipped catalog)',
    ]);
  });
});

describe('plan and the packing mode', () => {
  it('a NodePool annotation wins over --packing; --packing applies when no NodePool says', () => {
    const texts = (annotation: string) => ({
      nodePools: {
        file: 'np.yaml',
        text:
          pool('a', 'default', '        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}').replace(
            'metadata: {name: a}',
            `metadata: {name: a${annotation}}`,
          ) + nodeClass('default', 'al2023@latest'),
      },
      pods: { file: 'pods.yaml', text: pod('p', 'kubernetes.io/os: linux') },
      region: 'us-east-1',
    });
    expect(planInput({ ...texts(', annotations: {nodefleet.io/packing: karpenter}'), packing: 'cost' }).settings?.packing).toBe('karpenter');
    expect(planInput({ ...texts(''), packing: 'karpenter' }).settings?.packing).toBe('karpenter');
    expect(planInput(texts('')).settings?.packing).toBeUndefined();
  });
});

describe('plan and persistent volumes', () => {
  const dir = mkdtempSync(join(tmpdir(), 'nodefleet-plan-vol-'));
  const np = join(dir, 'np.yaml');
  writeFileSync(
    np,
    pool('default', 'default', '        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}') + nodeClass('default', 'al2023@latest'),
  );
  const withClaim = `${pod('db', 'kubernetes.io/os: linux')}  volumes: [{name: data, persistentVolumeClaim: {claimName: data-db}}]\n`;

  it('with storage objects in the input, a pod whose claim does not exist gets no node, naming the claim', async () => {
    const pods = join(dir, 'with-storage.yaml');
    writeFileSync(pods, `${withClaim}---\napiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: gp3}\nprovisioner: ebs.csi.aws.com\n`);
    const r = await capture(['plan', '--nodepools', np, '--pods', pods, '-o', 'json']);
    expect(r.code).toBe(0);
    expect(r.out).toContain('persistentvolumeclaim \\"default/data-db\\" does not exist');
    expect(r.err).not.toContain('not checked');
  });

  it('a StatefulSet listed without pods: the replica whose bound volume is in a zone no NodePool allows gets no node, the others do', async () => {
    const npZonal = join(dir, 'np-zonal.yaml');
    writeFileSync(
      npZonal,
      pool(
        'default',
        'default',
        '        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}\n        - {key: topology.kubernetes.io/zone, operator: In, values: [us-east-1a, us-east-1b]}',
      ) + nodeClass('default', 'al2023@latest'),
    );
    const pods = join(dir, 'sts.yaml');
    writeFileSync(
      pods,
      `apiVersion: v1
kind: List
items:
- {apiVersion: storage.k8s.io/v1, kind: StorageClass, metadata: {name: gp3, annotations: {storageclass.kubernetes.io/is-default-class: "true"}}, provisioner: ebs.csi.aws.com, volumeBindingMode: WaitForFirstConsumer}
- apiVersion: apps/v1
  kind: StatefulSet
  metadata: {name: pg, namespace: db}
  spec:
    replicas: 2
    selector: {matchLabels: {app: pg}}
    template:
      metadata: {labels: {app: pg}}
      spec: {containers: [{name: pg, image: postgres, resources: {requests: {cpu: "1", memory: 2Gi}}}]}
    volumeClaimTemplates: [{metadata: {name: data}, spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 20Gi}}}}]
- {apiVersion: v1, kind: PersistentVolumeClaim, metadata: {name: data-pg-0, namespace: db, annotations: {pv.kubernetes.io/bind-completed: "yes"}}, spec: {storageClassName: gp3, volumeName: pv-0}, status: {phase: Bound}}
- {apiVersion: v1, kind: PersistentVolume, metadata: {name: pv-0}, spec: {csi: {driver: ebs.csi.aws.com, volumeHandle: vol-1}, nodeAffinity: {required: {nodeSelectorTerms: [{matchExpressions: [{key: topology.ebs.csi.aws.com/zone, operator: In, values: [us-east-1c]}]}]}}}}
`,
    );
    const r = await capture(['plan', '--nodepools', npZonal, '--pods', pods, '--region', 'us-east-1', '-o', 'json']);
    expect(r.code).toBe(0);
    const events = (JSON.parse(r.out) as { items: { kind: string; reason: string; involvedObject: { name: string } }[] }).items.filter(
      (i) => i.kind === 'Event',
    );
    expect(events.map((e) => [e.involvedObject.name, e.reason])).toEqual([
      ['pg-1', 'Nominated'],
      ['pg-0', 'FailedScheduling'],
    ]);
  });

  it('without storage objects, the volumes are not checked and stderr says so', async () => {
    const pods = join(dir, 'pods-only.yaml');
    writeFileSync(pods, withClaim);
    const r = await capture(['plan', '--nodepools', np, '--pods', pods]);
    expect(r.code).toBe(0);
    expect(r.err).toContain(
      `${pods}: 1 pod(s) mount PersistentVolumeClaims but the input holds no PersistentVolumeClaim, PersistentVolume or StorageClass: their volumes are not checked`,
    );
    expect(r.out).not.toContain('does not exist');
  });
});

describe("plan picks pending pods with the provisioner's rule", () => {
  const dir = mkdtempSync(join(tmpdir(), 'nodefleet-plan-pending-'));
  const np = join(dir, 'np.yaml');
  writeFileSync(np, pool('default', 'default', '        - {key: kubernetes.io/arch, operator: In, values: [amd64]}') + nodeClass('default', 'al2023@latest'));
  const pods = join(dir, 'pods.json');
  const p = (name: string, status: unknown) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default' },
    spec: { containers: [{ name: 'c', image: 'i', resources: { requests: { cpu: '1' } } }] },
    status,
  });
  writeFileSync(
    pods,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'List',
      items: [
        p('waiting', { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }] }),
        p('preempting', { phase: 'Pending', nominatedNodeName: 'n1', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }] }),
        p('gated', { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'SchedulingGated' }] }),
      ],
    }),
  );

  it('plans for the Unschedulable pod only and names the others with why, in one line', async () => {
    const r = await capture(['plan', '--nodepools', np, '--pods', pods, '-o', 'json']);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.out) as { items: { kind: string; spec?: { resources: { requests: Record<string, string> } } }[] };
    const claims = out.items.filter((i) => i.kind === 'NodeClaim');
    expect(claims).toHaveLength(1);
    expect(claims[0].spec!.resources.requests.pods).toBe('1');
    expect(r.err).toContain(
      `${pods}: 2 unbound pod(s) not planned for, as the provisioner skips them: default/preempting (nominated to n1 (preempting)), default/gated (PodScheduled=False (SchedulingGated), not Unschedulable)`,
    );
  });
});

describe('plan and the DaemonSets of plain kubectl get pods -A', () => {
  const dir = mkdtempSync(join(tmpdir(), 'nodefleet-plan-ds-'));
  const np = join(dir, 'np.yaml');
  writeFileSync(
    np,
    pool('default', 'default', '        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}') + nodeClass('default', 'al2023@latest'),
  );
  const dsPod = (ds: string, node: string, requests: Record<string, string>) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `${ds}-${node}`, namespace: 'kube-system', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name: ds, controller: true }] },
    spec: {
      nodeName: node,
      tolerations: [{ operator: 'Exists' }],
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [node] }] }] },
        },
      },
      containers: [{ name: 'c', image: 'i', resources: { requests } }],
    },
    status: { phase: 'Running' },
  });
  const pending = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web', namespace: 'default' },
    spec: { containers: [{ name: 'c', image: 'i', resources: { requests: { cpu: '1', memory: '2Gi' } } }] },
    status: { phase: 'Pending' },
  };
  // What `kubectl get pods -A -o json` prints: a List of pods only, the DaemonSets' among them.
  const list = (items: unknown[]) => JSON.stringify({ apiVersion: 'v1', kind: 'List', items });
  const podsOnly = join(dir, 'pods.json');
  writeFileSync(
    podsOnly,
    list([
      dsPod('aws-node', 'ip-10-0-0-1', { cpu: '25m' }),
      dsPod('aws-node', 'ip-10-0-0-2', { cpu: '25m' }),
      dsPod('kube-proxy', 'ip-10-0-0-1', { cpu: '100m', memory: '128Mi' }),
      pending,
    ]),
  );

  it('counts the DaemonSets whose pods are listed in each new claim, and says so in one line', async () => {
    const r = await capture(['plan', '--nodepools', np, '--pods', podsOnly, '--launch-requests']);
    expect(r.code).toBe(0);
    const claims = (JSON.parse(r.out) as { nodeClaims: { requests: Record<string, string | number>; pods: string[] }[] }).nodeClaims;
    expect(claims).toHaveLength(1);
    expect(claims[0].pods).toEqual(['default/web']);
    expect(claims[0].requests).toEqual(expect.objectContaining({ cpu: '1125m', memory: '2176Mi' }));
    expect(r.err.split('\n').filter((l) => l.includes('DaemonSet'))).toEqual([
      `${podsOnly}: 2 DaemonSet(s) counted from their pods (the input holds no DaemonSet object for them), up to 125m cpu and 128Mi memory per node: kube-system/aws-node, kube-system/kube-proxy; a DaemonSet with no pod in the input is not counted (add \`kubectl get daemonsets -A -o yaml\` to count every one)`,
    ]);
  });

  it('says nothing when the DaemonSet objects are in the input', async () => {
    const withObjects = join(dir, 'with-ds.json');
    const ds = (name: string, requests: Record<string, string>) => ({
      apiVersion: 'apps/v1',
      kind: 'DaemonSet',
      metadata: { name, namespace: 'kube-system' },
      spec: { selector: {}, template: { spec: { tolerations: [{ operator: 'Exists' }], containers: [{ name: 'c', image: 'i', resources: { requests } }] } } },
    });
    writeFileSync(
      withObjects,
      list([ds('aws-node', { cpu: '25m' }), ds('kube-proxy', { cpu: '100m', memory: '128Mi' }), dsPod('aws-node', 'ip-10-0-0-1', { cpu: '25m' }), pending]),
    );
    const r = await capture(['plan', '--nodepools', np, '--pods', withObjects, '--launch-requests']);
    expect(r.code).toBe(0);
    expect((JSON.parse(r.out) as { nodeClaims: { requests: Record<string, string | number> }[] }).nodeClaims[0].requests).toEqual(
      expect.objectContaining({ cpu: '1125m', memory: '2176Mi' }),
    );
    expect(r.err).not.toContain('DaemonSet');
  });
});

describe('plan and relaxed preferences', () => {
  const dir = mkdtempSync(join(tmpdir(), 'nodefleet-plan-relax-'));
  const np = join(dir, 'np.yaml');
  writeFileSync(
    np,
    pool('default', 'default', '        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}') +
      '  limits: {cpu: "8"}\n' +
      nodeClass('default', 'al2023@latest'),
  );
  const web = (i: number) => `---
apiVersion: v1
kind: Pod
metadata: {name: web-${i}, namespace: default, labels: {app: web}}
spec:
  affinity:
    podAntiAffinity:
      preferredDuringSchedulingIgnoredDuringExecution:
        - weight: 100
          podAffinityTerm: {topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: web}}}
  containers: [{name: c, image: i, resources: {requests: {cpu: "1", memory: 1Gi}}}]
`;
  writeFileSync(join(dir, 'pods.yaml'), web(0) + web(1) + web(2));

  it('names the preference given up, the pods and why, one line per preference and reason', async () => {
    const r = await capture(['plan', '--nodepools', np, '--pods', join(dir, 'pods.yaml')]);
    expect(r.code).toBe(0);
    expect(r.out.split('\n').filter((l) => l.startsWith('relaxed '))).toEqual([
      'relaxed preferred pod anti-affinity (topologyKey kubernetes.io/hostname, app=web) for 2 pod(s) (default/web-1, default/web-2): with it the pod(s) fit nowhere: nodepool default: exceeds limits: nodepool default has no room left under its cpu limit (8000m)',
    ]);
    const json = await capture(['plan', '--nodepools', np, '--pods', join(dir, 'pods.yaml'), '--launch-requests']);
    expect((JSON.parse(json.out) as { relaxed: { pod: string }[] }).relaxed.map((x) => x.pod)).toEqual(['default/web-1', 'default/web-2']);
  });
});
