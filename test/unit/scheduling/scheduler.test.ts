import { describe, expect, it } from 'vitest';
import { solve } from '../../../shared/scheduling/index.ts';
import { input, itype, nodePool, pendingPod, pendingPods } from './builders.ts';

const GiB = 2 ** 30;
const std = itype({ name: 'std' });
const small = itype({ name: 'small', cpu: 2, memoryMiB: 8192, price: { 'on-demand': 0.1 } });
const big = itype({ name: 'big', cpu: 16, memoryMiB: 65536, price: { 'on-demand': 0.8 } });

describe('solve: bin packing', () => {
  it('packs pods onto one claim and launches the cheapest type that holds them all', () => {
    // Prepare: 6 × 500m = 3000m fit a 4-vCPU type (3920m allocatable) but not a 2-vCPU one.
    const r = solve(input(pendingPods('web', 6, { cpu: '500m' }), [small, std, big]));
    // Assess
    expect(r.newNodeClaims).toHaveLength(1);
    expect(r.newNodeClaims[0].launchInstanceTypes.map((t) => t.name)).toEqual(['std', 'big']);
    expect(r.newNodeClaims[0].requests).toEqual({ cpu: 3000, memory: 6 * 128 * 2 ** 20, pods: 6 });
    expect(r.newNodeClaims[0].priceUsdPerHour).toBe(0.2);
    expect(r.unschedulable).toEqual([]);
  });

  it('opens a second claim only when the largest type is full', () => {
    // 40 × 1 cpu: a 16-vCPU type takes 15 (15.86 cpu allocatable), so 3 claims.
    const r = solve(input(pendingPods('w', 40, { cpu: '1' }), [std, big]));
    expect(r.newNodeClaims.map((c) => c.pods.length)).toEqual([15, 15, 10]);
    expect(r.newNodeClaims.map((c) => c.launchInstanceTypes[0].name)).toEqual(['big', 'big', 'big']);
  });

  it('uses existing nodes with room before creating claims', () => {
    const r = solve(
      input(pendingPods('w', 2, { cpu: '500m' }), [std], [nodePool('default')], {
        existingNodes: [
          {
            name: 'n1',
            labels: { 'kubernetes.io/hostname': 'n1', 'topology.kubernetes.io/zone': 'us-east-1a' },
            allocatable: { cpu: 1500, memory: 4 * GiB, pods: 10 },
            pods: [pendingPod('running', { cpu: '600m', spec: { nodeName: 'n1', containers: [{ name: 'a', resources: { requests: { cpu: '600m' } } }] } })],
          },
        ],
      }),
    );
    // 1500 - 600 = 900m left: one 500m pod fits, the second needs a claim.
    expect(r.placements.map((p) => [p.pod.metadata.name, p.node])).toEqual([['w-0', 'n1']]);
    expect(r.newNodeClaims).toHaveLength(1);
    expect(r.newNodeClaims[0].pods.map((p) => p.metadata.name)).toEqual(['w-1']);
  });

  it('counts a running pod once, on the first node that lists it, and same-named pods of two namespaces both', () => {
    const node = (name: string, pods: ReturnType<typeof pendingPod>[]) => ({
      name,
      labels: { 'kubernetes.io/hostname': name, 'topology.kubernetes.io/zone': 'us-east-1a' },
      allocatable: { cpu: 1500, memory: 4 * GiB, pods: 10 },
      pods,
    });
    const running = (ns: string, nodeName: string) => pendingPod('running', { cpu: '600m', namespace: ns, spec: { nodeName } });
    // "running" in namespace a is listed on n1, again on n2, and again in boundPods: it takes room on n1 only.
    const once = solve(
      input(pendingPods('w', 3, { cpu: '500m' }), [std], [nodePool('default')], {
        existingNodes: [node('n1', [running('a', 'n1')]), node('n2', [running('a', 'n1')])],
        boundPods: [running('a', 'n1')],
      }),
    );
    // n1: 900m left (one 500m pod), n2: 1500m (two).
    expect(once.placements.map((p) => p.node)).toEqual(['n1', 'n2', 'n2']);
    // Same name in namespaces a (on n1) and b (on n2): two pods, each takes room on its node.
    const two = solve(
      input(pendingPods('w', 3, { cpu: '500m' }), [std], [nodePool('default')], {
        existingNodes: [node('n1', [running('a', 'n1')]), node('n2', [running('b', 'n2')])],
      }),
    );
    expect(two.placements.map((p) => p.node)).toEqual(['n1', 'n2']);
  });

  it('fills an in-flight claim before launching another', () => {
    const r = solve(
      input(pendingPods('w', 3, { cpu: '1' }), [std], [nodePool('default')], {
        existingNodes: [
          {
            name: 'claim-x',
            launching: true,
            nodePool: 'default',
            labels: { 'karpenter.sh/nodepool': 'default' },
            allocatable: { cpu: 3920, memory: 14 * GiB, pods: 110 },
          },
        ],
      }),
    );
    expect(r.placements).toHaveLength(3);
    expect(r.newNodeClaims).toHaveLength(0);
  });

  it('keeps pods with the same host port apart', () => {
    const spec = { containers: [{ name: 'a', ports: [{ containerPort: 80, hostPort: 8080 }], resources: { requests: { cpu: '100m' } } }] };
    const r = solve(input([pendingPod('a', { spec }), pendingPod('b', { spec })], [std]));
    expect(r.newNodeClaims).toHaveLength(2);
  });

  it('adds the overhead of daemonsets that tolerate the pool taints only', () => {
    const pools = [nodePool('tainted', { taints: [{ key: 'team', value: 'a', effect: 'NoSchedule' }] })];
    const pods = [pendingPod('p', { cpu: '1', spec: { tolerations: [{ key: 'team', operator: 'Equal', value: 'a', effect: 'NoSchedule' }] } })];
    const r = solve(
      input(pods, [std], pools, {
        daemonSets: [
          { metadata: { name: 'all' }, spec: { tolerations: [{ operator: 'Exists' }], containers: [{ name: 'c', resources: { requests: { cpu: '200m' } } }] } },
          { metadata: { name: 'plain' }, spec: { containers: [{ name: 'c', resources: { requests: { cpu: '2' } } }] } },
        ],
      }),
    );
    expect(r.newNodeClaims[0].requests.cpu).toBe(1200);
    expect(r.newNodeClaims[0].daemonSetRequests).toEqual({ cpu: 200, pods: 1 });
  });
});

describe('solve: daemonset overhead per instance type', () => {
  it('counts a daemonset only on the types its node affinity selects', () => {
    const arm = itype({ name: 'arm', arch: 'arm64', price: { 'on-demand': 0.1 } });
    const x86 = itype({ name: 'x86', price: { 'on-demand': 0.2 } });
    const armOnly = {
      metadata: { name: 'arm-agent' },
      spec: {
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/arch', operator: 'In' as const, values: ['arm64'] }] }],
            },
          },
        },
        containers: [{ name: 'c', resources: { requests: { cpu: '500m' } } }],
      },
    };
    const pod = pendingPod('x', {
      spec: { nodeSelector: { 'kubernetes.io/arch': 'amd64' }, containers: [{ name: 'a', resources: { requests: { cpu: '1' } } }] },
    });
    const r = solve(input([pod], [arm, x86], [nodePool('default')], { daemonSets: [armOnly] }));
    expect(r.newNodeClaims[0].launchInstanceTypes.map((t) => t.name)).toEqual(['x86']);
    expect(r.newNodeClaims[0].requests.cpu).toBe(1000);
  });
});

describe('solve: requirements and offerings', () => {
  it('lets a pod require a well-known label the NodePool does not mention (zone)', () => {
    const r = solve(input([pendingPod('z', { spec: { nodeSelector: { 'topology.kubernetes.io/zone': 'us-east-1b' } } })], [std]));
    expect(r.newNodeClaims[0].zones).toEqual(['us-east-1b']);
  });

  it('rejects a custom label the NodePool does not define, naming the key', () => {
    const r = solve(input([pendingPod('c', { spec: { nodeSelector: { 'example.com/team': 'a' } } })], [std]));
    expect(r.newNodeClaims).toHaveLength(0);
    expect(r.unschedulable[0].reasons.default).toContain('example.com/team');
  });

  it('puts a pod with a zonal volume in the volume zone', () => {
    const pod = pendingPod('db', { spec: { volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data-db' } }] } });
    const storage = {
      claims: [{ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'data-db', namespace: 'default' }, spec: { storageClassName: 'zonal' } }],
      volumes: [],
      classes: [
        {
          apiVersion: 'storage.k8s.io/v1',
          kind: 'StorageClass',
          metadata: { name: 'zonal' },
          volumeBindingMode: 'WaitForFirstConsumer',
          allowedTopologies: [{ matchLabelExpressions: [{ key: 'topology.kubernetes.io/zone', values: ['us-east-1c'] }] }],
        },
      ],
    };
    const r = solve(input([pod], [std], [nodePool('default')], { storage }));
    expect(r.newNodeClaims[0].zones).toEqual(['us-east-1c']);
  });

  it("names the claim and its volume when the volume's zone is one the NodePool does not allow, and only on that reason", () => {
    const pod = pendingPod('db', { cpu: '1', spec: { volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data-db' } }] } });
    const storage = {
      claims: [
        {
          apiVersion: 'v1',
          kind: 'PersistentVolumeClaim',
          metadata: { name: 'data-db', namespace: 'default', annotations: { 'pv.kubernetes.io/bind-completed': 'yes' } },
          spec: { storageClassName: 'gp3', volumeName: 'pv-1' },
        },
      ],
      volumes: [
        {
          apiVersion: 'v1',
          kind: 'PersistentVolume',
          metadata: { name: 'pv-1' },
          spec: {
            nodeAffinity: {
              required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'topology.ebs.csi.aws.com/zone', operator: 'In', values: ['us-east-1c'] }] }] },
            },
          },
        },
      ],
      classes: [],
    };
    const zonal = nodePool('zonal', { requirements: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['us-east-1a'] }] });
    const capped = nodePool('capped', { spec: { limits: { cpu: '0' } } });
    const r = solve(input([pod], [std], [zonal, capped], { storage }));
    expect(r.newNodeClaims).toHaveLength(0);
    expect(r.unschedulable[0].reasons.zonal).toMatch(
      /^incompatible requirements, key topology.kubernetes.io\/zone, .* \(its volumes: persistentvolumeclaim "default\/data-db": its persistentvolume "pv-1" allows topology.kubernetes.io\/zone In \[us-east-1c\]\)$/,
    );
    expect(r.unschedulable[0].reasons.capped).not.toContain('its volumes');
  });

  it('names the claim when its (non-local) volume is pinned to a hostname no new node can have', () => {
    const pod = pendingPod('db', { spec: { volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data-db' } }] } });
    const storage = {
      claims: [
        {
          apiVersion: 'v1',
          kind: 'PersistentVolumeClaim',
          metadata: { name: 'data-db', namespace: 'default', annotations: { 'pv.kubernetes.io/bind-completed': 'yes' } },
          spec: { volumeName: 'pv-1' },
        },
      ],
      volumes: [
        {
          apiVersion: 'v1',
          kind: 'PersistentVolume',
          metadata: { name: 'pv-1' },
          spec: {
            csi: { driver: 'ebs.csi.aws.com' },
            nodeAffinity: {
              required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['old-node'] }] }] },
            },
          },
        },
      ],
      classes: [],
    };
    const r = solve(input([pod], [std], [nodePool('default')], { storage }));
    expect(r.unschedulable[0].reasons.default).toContain(
      'label "kubernetes.io/hostname" does not have known values (its volumes: persistentvolumeclaim "default/data-db": its persistentvolume "pv-1" allows kubernetes.io/hostname In [old-node])',
    );
  });

  it('explains a pod larger than every type', () => {
    const r = solve(input([pendingPod('huge', { cpu: '64' })], [std, big]));
    expect(r.unschedulable[0].reasons.default).toMatch(/no instance type has enough cpu \(pod requests 64000m/);
  });

  it('reports exceeded limits', () => {
    const pool = nodePool('capped', { spec: { limits: { cpu: '4' } } });
    const r = solve(input(pendingPods('w', 2, { cpu: '3' }), [std], [pool]));
    // One 4-vCPU node uses the whole 4-cpu limit; the second pod cannot get another.
    expect(r.newNodeClaims).toHaveLength(1);
    expect(r.unschedulable).toHaveLength(1);
    expect(r.unschedulable[0].reasons.capped).toMatch(/exceeds limits/);
  });

  it('only launches types whose capacity fits the remaining limits', () => {
    const pool = nodePool('capped', { spec: { limits: { cpu: '8' } } });
    const r = solve(input(pendingPods('w', 20, { cpu: '1' }), [std, big], [pool]));
    expect(r.newNodeClaims.map((c) => c.launchInstanceTypes[0].name)).toEqual(['std', 'std']);
    expect(r.unschedulable.length).toBe(20 - 6);
  });

  it('prefers spot when cheaper but drops spot offerings dearer than the cheapest on-demand one', () => {
    const cheapSpot = itype({ name: 'cs', capacityTypes: ['on-demand', 'spot'], price: { 'on-demand': 0.2, spot: 0.07 } });
    const dearSpot = itype({ name: 'ds', capacityTypes: ['on-demand', 'spot'], price: { 'on-demand': 0.2, spot: 0.25 } });
    const pool = nodePool('default', { requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot', 'on-demand'] }] });
    expect(solve(input([pendingPod('a')], [cheapSpot], [pool])).newNodeClaims[0].capacityTypes[0]).toBe('spot');
    const r = solve(input([pendingPod('a')], [dearSpot], [pool]));
    expect(r.newNodeClaims[0].capacityTypes).toEqual(['on-demand']);
    expect(r.newNodeClaims[0].priceUsdPerHour).toBe(0.2);
  });

  it('avoids GPU types for pods that do not ask for them', () => {
    const gpu = itype({ name: 'gpu', price: { 'on-demand': 0.05 }, resources: { 'nvidia.com/gpu': 1 } });
    const r = solve(
      input([pendingPod('a'), pendingPod('g', { spec: { containers: [{ name: 'g', resources: { limits: { 'nvidia.com/gpu': 1 } } }] } })], [gpu, std]),
    );
    const byPod = Object.fromEntries(r.newNodeClaims.flatMap((c) => c.pods.map((p) => [p.metadata.name, c.launchInstanceTypes[0].name])));
    expect(byPod).toEqual({ a: 'std', g: 'gpu' });
  });

  it('enforces minValues (Strict) and relaxes it with BestEffort', () => {
    const pool = nodePool('default', {
      requirements: [
        { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
        { key: 'node.kubernetes.io/instance-type', operator: 'Exists', minValues: 3 },
      ],
    });
    const strict = solve(input([pendingPod('a', { cpu: '3' })], [small, std, big], [pool]));
    expect(strict.unschedulable[0].reasons.default).toMatch(/minValues/);
    const best = solve(input([pendingPod('a', { cpu: '3' })], [small, std, big], [pool], { settings: { minValuesPolicy: 'BestEffort' } }));
    expect(best.newNodeClaims[0].launchInstanceTypes.map((t) => t.name)).toEqual(['std', 'big']);
  });

  it('skips a NodePool whose types cannot meet its own minValues (Strict), also after a limit cut (parity seed 1 #786, #1855)', () => {
    // Prepare: "picky" wants 2 instance types; with all of small/std/big it has 3, under a 3-cpu limit only small.
    const picky = (limits?: Record<string, string>) =>
      nodePool('picky', {
        spec: { weight: 50, ...(limits ? { limits } : {}) },
        requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'Exists', minValues: 2 }],
      });
    const onlySmall = nodePool('picky', {
      spec: { weight: 50 },
      requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['small'], minValues: 2 }],
    });
    const pods = pendingPods('w', 2, { cpu: '500m' });
    // Act + Assess: the pod goes to the lighter pool rather than staying pending.
    expect(solve(input(pods, [small, std, big], [nodePool('light'), picky()])).newNodeClaims.map((c) => c.nodePool)).toEqual(['picky']);
    for (const pool of [onlySmall, picky({ cpu: '3' })]) {
      const r = solve(input(pods, [small, std, big], [nodePool('light'), pool]));
      expect(r.unschedulable).toEqual([]);
      expect(r.newNodeClaims.map((c) => c.nodePool)).toEqual(['light']);
    }
  });

  it('tries NodePools by weight and falls back when the heavier one cannot take the pod', () => {
    const heavy = nodePool('heavy', { spec: { weight: 50 }, taints: [{ key: 'dedicated', effect: 'NoSchedule' }] });
    const r = solve(input([pendingPod('a')], [std], [nodePool('light'), heavy]));
    expect(r.newNodeClaims[0].nodePool).toBe('light');
  });
});

describe('solve: topology', () => {
  it('spreads zonal anti-affinity pods over distinct zones and leaves the fourth pending', () => {
    const spec = {
      affinity: {
        podAntiAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { app: 'db' } }, topologyKey: 'topology.kubernetes.io/zone' }],
        },
      },
    };
    const r = solve(input(pendingPods('db', 4, { labels: { app: 'db' }, spec }), [std]));
    expect(r.newNodeClaims.map((c) => c.zones).sort()).toEqual([['us-east-1a'], ['us-east-1b'], ['us-east-1c']]);
    expect(r.unschedulable).toHaveLength(1);
    expect(r.unschedulable[0].reasons.default).toMatch(/anti-affinity/);
  });

  it('relaxes preferred anti-affinity when it cannot be met', () => {
    const spec = {
      affinity: {
        podAntiAffinity: {
          preferredDuringSchedulingIgnoredDuringExecution: [
            { weight: 10, podAffinityTerm: { labelSelector: { matchLabels: { app: 'w' } }, topologyKey: 'topology.kubernetes.io/zone' } },
          ],
        },
      },
    };
    const r = solve(input(pendingPods('w', 5, { labels: { app: 'w' }, spec }), [std]));
    expect(r.unschedulable).toEqual([]);
    expect(r.newNodeClaims.reduce((s, c) => s + c.pods.length, 0)).toBe(5);
  });

  it('says which preference it relaxed for which pod and why: a one-per-node anti-affinity dropped under a NodePool limit', () => {
    const spec = {
      affinity: {
        podAntiAffinity: {
          preferredDuringSchedulingIgnoredDuringExecution: [
            { weight: 100, podAffinityTerm: { labelSelector: { matchLabels: { app: 'w' } }, topologyKey: 'kubernetes.io/hostname' } },
          ],
        },
      },
    };
    const pods = pendingPods('w', 2, { labels: { app: 'w' }, spec });
    const tight = solve(input(pods, [std], [nodePool('capped', { spec: { limits: { cpu: '4' } } })]));
    expect(tight.newNodeClaims.map((c) => c.pods.length)).toEqual([2]);
    expect(tight.relaxed?.map((r) => [r.pod.metadata.name, r.relaxed.map((x) => x.preference)])).toEqual([
      ['w-1', ['preferred pod anti-affinity (topologyKey kubernetes.io/hostname, app=w)']],
    ]);
    expect(tight.relaxed?.[0].relaxed[0].reasons).toEqual({ capped: 'exceeds limits: nodepool capped has no room left under its cpu limit (4000m)' });
    // Room for a second node: nothing relaxed, nothing said.
    const roomy = solve(input(pods, [std], [nodePool('capped', { spec: { limits: { cpu: '8' } } })]));
    expect(roomy.newNodeClaims.map((c) => c.pods.length)).toEqual([1, 1]);
    expect(roomy.relaxed).toBeUndefined();
  });

  it('follows zonal pod affinity to the zone of the selected pod', () => {
    const leader = pendingPod('leader', { labels: { role: 'leader' }, spec: { nodeSelector: { 'topology.kubernetes.io/zone': 'us-east-1b' } } });
    const follower = pendingPod('follower', {
      cpu: '3500m',
      spec: {
        affinity: {
          podAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: [
              { labelSelector: { matchLabels: { role: 'leader' } }, topologyKey: 'topology.kubernetes.io/zone' },
            ],
          },
        },
      },
    });
    const r = solve(input([leader, follower], [std]));
    expect(r.unschedulable).toEqual([]);
    for (const c of r.newNodeClaims) expect(c.zones).toEqual(['us-east-1b']);
  });

  it('counts running pods for zonal spread (minDomains and existing skew)', () => {
    const running = pendingPod('old', { labels: { app: 's' }, spec: { nodeName: 'n1', containers: [{ name: 'a' }] } });
    const tsc = [
      { maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'DoNotSchedule' as const, labelSelector: { matchLabels: { app: 's' } } },
    ];
    const r = solve(
      input(pendingPods('s', 2, { labels: { app: 's' }, spec: { topologySpreadConstraints: tsc } }), [std], [nodePool('default')], {
        existingNodes: [
          {
            name: 'n1',
            labels: { 'kubernetes.io/hostname': 'n1', 'topology.kubernetes.io/zone': 'us-east-1a' },
            allocatable: { cpu: 100, memory: GiB, pods: 10 },
            pods: [running],
          },
        ],
      }),
    );
    expect(r.newNodeClaims.map((c) => c.zones[0]).sort()).toEqual(['us-east-1b', 'us-east-1c']);
  });
});

describe('static NodePools', () => {
  it('launches nothing for pending pods from a pool with spec.replicas, and says why', () => {
    const r = solve(input(pendingPods('web', 2), [itype({ name: 'std' })], [nodePool('static', { spec: { replicas: 3 } })]));
    expect(r.newNodeClaims).toEqual([]);
    expect(r.unschedulable.map((u) => u.reasons.static)).toEqual([
      expect.stringContaining('static NodePool (spec.replicas): its node count is kept at replicas, never launched for pending pods'),
      expect.stringContaining('never launched for pending pods'),
    ]);
  });
});
