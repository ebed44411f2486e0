import { describe, expect, it } from 'vitest';
import { node as nodeBuilder, pod as podBuilder, nodeClaim } from '../../fakes/index.ts';
import { NodePoolSchema, type NodePool, type NodePoolInput } from '../../../shared/api/nodepool.ts';
import type { Node, Pod } from '../../../shared/api/kube.ts';
import { instanceTypeFromCase, type CaseInstanceType } from '../../../shared/catalog/index.ts';
import type { InstanceType } from '../../../shared/catalog/types.ts';
import { planDisruption, validateCommand, type DisruptionSnapshot } from '../../../shared/disruption/index.ts';
import { withStandInClaims } from '../../../functions/cli/cases/disruption.ts';
import { instanceIdOfClaim } from '../../../shared/api/provider-id.ts';

const Now = new Date('2026-03-02T10:00:00Z');

function itype(name: string, cpu: number, memoryMiB: number, price: Record<string, number>): InstanceType {
  const t: CaseInstanceType = {
    name,
    cpu,
    memoryMiB,
    pods: 110,
    zones: ['us-east-1a', 'us-east-1b'],
    capacityTypes: Object.keys(price),
    price,
    allocatable: { cpu: String(cpu), memory: `${memoryMiB}Mi`, pods: '110' },
  };
  return instanceTypeFromCase(t, { region: 'us-east-1' });
}

const Small = itype('small', 2, 8192, { 'on-demand': 0.1, spot: 0.03 });
const Medium = itype('medium', 4, 16384, { 'on-demand': 0.2, spot: 0.06 });
const Big = itype('big', 16, 65536, { 'on-demand': 0.8, spot: 0.24 });

function pool(
  over: { name?: string; disruption?: Record<string, unknown>; capacityTypes?: string[]; annotations?: Record<string, string>; expireAfter?: string } = {},
): NodePool {
  const input: NodePoolInput = {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: over.name ?? 'default', ...(over.annotations ? { annotations: over.annotations } : {}) },
    spec: {
      template: {
        spec: {
          nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
          requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: over.capacityTypes ?? ['on-demand'] }],
          ...(over.expireAfter ? { expireAfter: over.expireAfter } : {}),
        },
      },
      disruption: {
        consolidationPolicy: 'WhenEmptyOrUnderutilized',
        consolidateAfter: '0s',
        budgets: [{ nodes: '100%' }],
        ...(over.disruption ?? {}),
      } as never,
    },
  };
  return NodePoolSchema.parse(input);
}

/** The providerID {@link node} gives `name` (a claim must name it to own the node). */
const providerOf = (name: string, zone = 'us-east-1a') => `aws:///${zone}/i-${name.padEnd(17, '0').slice(0, 17)}`;

function node(
  name: string,
  it: InstanceType,
  o: { zone?: string; capacityType?: string; created?: string; annotations?: Record<string, string>; initialized?: boolean; pool?: string } = {},
): Node {
  const n = nodeBuilder({
    name,
    providerID: providerOf(name, o.zone),
    allocatable: { cpu: String(it.allocatable.cpu / 1000), memory: `${it.allocatable.memory / 2 ** 20}Mi`, pods: '110' },
    labels: {
      'karpenter.sh/nodepool': o.pool ?? 'default',
      ...(o.initialized === false ? {} : { 'karpenter.sh/initialized': 'true' }),
      'karpenter.sh/capacity-type': o.capacityType ?? 'on-demand',
      'node.kubernetes.io/instance-type': it.name,
      'topology.kubernetes.io/zone': o.zone ?? 'us-east-1a',
      'kubernetes.io/arch': 'amd64',
      'kubernetes.io/os': 'linux',
    },
  });
  n.metadata.creationTimestamp = o.created ?? '2026-03-01T10:00:00Z';
  if (o.annotations) n.metadata.annotations = o.annotations;
  return n;
}

function pod(name: string, nodeName: string, cpu = '100m', extra: Partial<Parameters<typeof podBuilder>[0]> = {}): Pod {
  const p = podBuilder({ name, nodeName, cpu, memory: '256Mi', ...extra });
  p.metadata.creationTimestamp = '2026-03-01T10:00:00Z';
  return p;
}

function snapshot(parts: Partial<DisruptionSnapshot> & { types?: InstanceType[] }): DisruptionSnapshot {
  const types = parts.types ?? [Small, Medium, Big];
  // Every managed node is a NodeClaim's (as in the store): listed claims, else a stand-in per node.
  const owned = withStandInClaims(parts.nodes ?? [], parts.nodeClaims ?? []);
  return { nodePools: [pool()], pods: [], instanceTypes: () => types, catalog: types, ...parts, ...owned };
}

const names = (p: ReturnType<typeof planDisruption>) => p.command?.candidates.map((c) => c.nodeName).sort() ?? [];

describe('planDisruption', () => {
  it('WhenEmpty deletes only empty nodes; WhenEmptyOrUnderutilized also consolidates', () => {
    const nodes = [node('a', Medium), node('b', Medium, { zone: 'us-east-1b' }), node('c', Medium)];
    // 1.5 CPU each: one medium holds both, a small holds neither pair (so no merge into a new node)
    const pods = [pod('p1', 'a', '1500m'), pod('p2', 'b', '1500m')];
    const whenEmpty = planDisruption(snapshot({ nodePools: [pool({ disruption: { consolidationPolicy: 'WhenEmpty' } })], nodes, pods }), Now);
    expect(whenEmpty.command?.method).toBe('emptiness');
    expect(names(whenEmpty)).toEqual(['c']);

    // with c gone, a WhenEmpty pool never merges a and b
    const noEmpty = planDisruption(snapshot({ nodePools: [pool({ disruption: { consolidationPolicy: 'WhenEmpty' } })], nodes: nodes.slice(0, 2), pods }), Now);
    expect(noEmpty.command).toBeUndefined();
    const underutilized = planDisruption(snapshot({ nodes: nodes.slice(0, 2), pods }), Now);
    expect(underutilized.command?.reason).toBe('Underutilized');
    expect(underutilized.command?.decision).toBe('delete');
    expect(underutilized.command?.candidates).toHaveLength(1);
  });

  it('reports each method run its candidates before budgets (karpenter_voluntary_disruption_eligible_nodes), until one gives a command', () => {
    const nodes = [node('a', Medium), node('b', Medium, { zone: 'us-east-1b' }), node('c', Medium), node('d', Medium)];
    const pods = [pod('p1', 'a', '1500m'), pod('p2', 'b', '1500m')];
    // Emptiness wins with c and d (a budget of one takes only one): later methods do not run.
    const empty = planDisruption(snapshot({ nodePools: [pool({ disruption: { budgets: [{ nodes: '1' }] } })], nodes, pods }), Now);
    expect(empty.command?.method).toBe('emptiness');
    expect(empty.eligibleNodes).toEqual([{ reason: 'Empty', count: 2 }]);
    // Without empty nodes every method runs; consolidation sees a and b (drift none).
    const busy = planDisruption(snapshot({ nodes: nodes.slice(0, 2), pods }), Now);
    expect(busy.eligibleNodes).toEqual([
      { reason: 'Empty', count: 0 },
      { reason: 'Drifted', count: 0 },
      { reason: 'Underutilized', count: 2 },
    ]);
  });

  it('multi-node consolidation deletes the largest prefix that fits (binary search), cheapest disruption first', () => {
    const nodes = ['n1', 'n2', 'n3', 'n4'].map((n) => node(n, Medium));
    // n4 has two pods (costlier to disrupt); each node runs 600m–1200m of 4 CPU
    const pods = [pod('p1', 'n1', '600m'), pod('p2', 'n2', '600m'), pod('p3', 'n3', '600m'), pod('p4a', 'n4', '600m'), pod('p4b', 'n4', '600m')];
    const plan = planDisruption(snapshot({ nodes, pods }), Now);
    expect(plan.command?.method).toBe('multi-node-consolidation');
    expect(plan.command?.decision).toBe('delete');
    expect(names(plan)).toEqual(['n1', 'n2', 'n3']);
    expect(plan.command?.savingsUsdPerHour).toBeCloseTo(0.6);
    expect(plan.simulations).toBeGreaterThanOrEqual(2);
  });

  it('replaces a node only with a strictly cheaper type', () => {
    const plan = planDisruption(snapshot({ nodes: [node('big', Big)], pods: [pod('p', 'big', '1500m')] }), Now);
    expect(plan.command?.decision).toBe('replace');
    expect(plan.command?.replacements[0].instanceTypes[0]).toBe('small');
    expect(plan.command?.replacements[0].instanceTypes).not.toContain('big');
    expect(plan.command?.savingsUsdPerHour).toBeCloseTo(0.7);

    // the pod needs 3 CPU: only medium (0.20) or big fit; a medium node stays as it is
    const keep = planDisruption(snapshot({ nodes: [node('m', Medium)], pods: [pod('p', 'm', '3')] }), Now);
    expect(keep.command).toBeUndefined();
    expect(keep.blocked.find((b) => b.nodeName === 'm' && b.method === 'single-node-consolidation')?.reason).toMatch(/fit on no other node|cheaper/);
  });

  it('spot-to-spot needs 15 cheaper types, and launches the 15 cheapest', () => {
    const spotPool = pool({ capacityTypes: ['spot'] });
    const on = { spotToSpotConsolidation: true };
    const few = planDisruption(
      snapshot({ nodePools: [spotPool], nodes: [node('s', Big, { capacityType: 'spot' })], pods: [pod('p', 's', '500m')], settings: on }),
      Now,
    );
    expect(few.command).toBeUndefined();
    expect(few.blocked.some((b) => /15 cheaper instance types, found 2/.test(b.reason))).toBe(true);

    const many = Array.from({ length: 20 }, (_, i) => itype(`t${String(i).padStart(2, '0')}`, 2, 8192, { spot: 0.01 + i * 0.001 }));
    const types = [...many, Big];
    const ok = planDisruption(
      snapshot({ nodePools: [spotPool], types, nodes: [node('s', Big, { capacityType: 'spot' })], pods: [pod('p', 's', '500m')], settings: on }),
      Now,
    );
    expect(ok.command?.decision).toBe('replace');
    expect(ok.command?.replacements[0].instanceTypes).toHaveLength(15);
    expect(ok.command?.replacements[0].instanceTypes[0]).toBe('t00');
    expect(ok.command?.replacements[0].capacityTypes).toEqual(['spot']);

    const off = planDisruption(
      snapshot({
        nodePools: [spotPool],
        types,
        nodes: [node('s', Big, { capacityType: 'spot' })],
        pods: [pod('p', 's', '500m')],
        settings: { spotToSpotConsolidation: false },
      }),
      Now,
    );
    expect(off.command).toBeUndefined();
    // Off by default, as Karpenter's SpotToSpotConsolidation gate.
    const byDefault = planDisruption(
      snapshot({ nodePools: [spotPool], types, nodes: [node('s', Big, { capacityType: 'spot' })], pods: [pod('p', 's', '500m')] }),
      Now,
    );
    expect(byDefault.command).toBeUndefined();
    expect(byDefault.blocked.some((b) => /spot-to-spot consolidation is disabled/.test(b.reason))).toBe(true);
  });

  it('on-demand → spot-or-on-demand replacement is pinned to spot', () => {
    const mixed = pool({ capacityTypes: ['spot', 'on-demand'] });
    const plan = planDisruption(snapshot({ nodePools: [mixed], nodes: [node('big', Big)], pods: [pod('p', 'big', '500m')] }), Now);
    expect(plan.command?.replacements[0].capacityTypes).toEqual(['spot']);
    expect(plan.command?.replacements[0].priceUsdPerHour).toBeCloseTo(0.03);
  });

  it('honours consolidateAfter from the last pod event', () => {
    const recent = pod('p', 'a', '1500m');
    recent.status = { phase: 'Running', startTime: '2026-03-02T09:55:00Z' };
    const s = snapshot({
      nodePools: [pool({ disruption: { consolidateAfter: '10m' } })],
      nodes: [node('a', Medium), node('b', Medium)],
      pods: [recent, pod('q', 'b', '1500m')],
    });
    const plan = planDisruption(s, Now);
    expect(plan.blocked.some((b) => b.nodeName === 'a' && /consolidateAfter \(10m\)/.test(b.reason))).toBe(true);
    expect(names(plan)).toEqual(['b']);
    expect(planDisruption(s, new Date('2026-03-02T10:06:00Z')).command?.candidates).toHaveLength(1);
  });

  it('blocks do-not-disrupt pods and uninitialized nodes with a reason', () => {
    const pinned = pod('pinned', 'a', '100m', { annotations: { 'karpenter.sh/do-not-disrupt': 'true' } });
    const plan = planDisruption(
      snapshot({ nodes: [node('a', Medium), node('b', Medium, { initialized: false }), node('c', Medium)], pods: [pinned, pod('q', 'c', '100m')] }),
      Now,
    );
    expect(plan.blocked).toContainEqual({ nodeName: 'b', nodePool: 'default', method: 'candidates', reason: 'node is not initialized' });
    expect(plan.blocked.some((b) => b.nodeName === 'a' && b.reason === 'pod default/pinned has "karpenter.sh/do-not-disrupt" annotation')).toBe(true);
    expect(names(plan)).toEqual(['c']);
  });

  it('drift: a claim whose NodePool hash changed is replaced, within the Drifted budget', () => {
    const nodes = [node('old', Medium)];
    const claims = [
      nodeClaim({ name: 'default-abc', nodeName: 'old', providerId: providerOf('old'), nodePoolHash: 'h-old', createdAt: '2026-03-01T10:00:00Z' }),
    ];
    const base = { nodes, nodeClaims: claims, pods: [pod('p', 'old', '1500m')], nodePoolHashes: { default: 'h-new' } };
    const plan = planDisruption(snapshot({ ...base, nodePools: [pool({ disruption: { consolidationPolicy: 'WhenEmpty' } })] }), Now);
    expect(plan.command?.method).toBe('drift');
    expect(plan.command?.candidates[0]).toMatchObject({ nodeName: 'old', nodeClaim: 'default-abc', driftReason: 'NodePoolDrifted' });
    expect(plan.command?.replacements).toHaveLength(1);

    const blocked = planDisruption(
      snapshot({ ...base, nodePools: [pool({ disruption: { consolidationPolicy: 'WhenEmpty', budgets: [{ nodes: '0', reasons: ['Drifted'] }] } })] }),
      Now,
    );
    expect(blocked.command).toBeUndefined();
    expect(blocked.blocked.some((b) => b.method === 'drift' && /budget for Drifted/.test(b.reason))).toBe(true);
  });

  it('ignores a NodePool hash written by another hash version (Karpenter re-hashes instead)', () => {
    const claims = [
      nodeClaim({
        name: 'c',
        nodeName: 'n',
        providerId: providerOf('n'),
        nodePoolHash: '1234567890',
        annotations: { 'karpenter.sh/nodepool-hash-version': 'v3' },
        createdAt: '2026-03-01T10:00:00Z',
      }),
    ];
    const plan = planDisruption(
      snapshot({
        nodePools: [pool({ disruption: { consolidationPolicy: 'WhenEmpty' } })],
        nodes: [node('n', Medium)],
        nodeClaims: claims,
        pods: [pod('p', 'n', '1500m')],
        nodePoolHashes: { default: 'ours' },
      }),
      Now,
    );
    expect(plan.command).toBeUndefined();
  });

  it('AMI drift: a claim launched from an image the node class no longer resolves to', () => {
    const claims = [nodeClaim({ name: 'default-ami', nodeName: 'n', providerId: providerOf('n'), imageId: 'ami-old', createdAt: '2026-03-01T10:00:00Z' })];
    const base = {
      nodePools: [pool({ disruption: { consolidationPolicy: 'WhenEmpty' } })],
      nodes: [node('n', Medium)],
      nodeClaims: claims,
      pods: [pod('p', 'n', '1500m')],
    };
    const drifted = planDisruption(snapshot({ ...base, resolvedImageIds: { default: ['ami-new-amd64', 'ami-new-arm64'] } }), Now);
    expect(drifted.command?.candidates[0]).toMatchObject({ nodeName: 'n', driftReason: 'AMIDrift' });
    expect(planDisruption(snapshot({ ...base, resolvedImageIds: { default: ['ami-old', 'ami-new-arm64'] } }), Now).command).toBeUndefined();
  });

  it('subnet and security-group drift: the instance as EC2 lists it against what the node class resolves to now', () => {
    const claims = [nodeClaim({ name: 'default-net', nodeName: 'n', providerId: providerOf('n'), createdAt: '2026-03-01T10:00:00Z' })];
    const instanceId = instanceIdOfClaim(claims[0])!;
    const base = {
      nodePools: [pool({ disruption: { consolidationPolicy: 'WhenEmpty' } })],
      nodes: [node('n', Medium)],
      nodeClaims: claims,
      pods: [pod('p', 'n', '1500m')],
    };
    const resolvedNetworks = { default: { subnetIds: ['subnet-a', 'subnet-b'], securityGroupIds: ['sg-1', 'sg-2'] } };
    const at = (subnetId: string, securityGroupIds: string[]) =>
      planDisruption(snapshot({ ...base, resolvedNetworks, instanceNetworks: { [instanceId]: { subnetId, securityGroupIds } } }), Now).command?.candidates[0]
        ?.driftReason;
    expect(at('subnet-b', ['sg-2', 'sg-1'])).toBeUndefined();
    expect(at('subnet-c', ['sg-1', 'sg-2'])).toBe('SubnetDrift');
    expect(at('subnet-a', ['sg-1'])).toBe('SecurityGroupDrift');
    expect(at('subnet-a', ['sg-1', 'sg-2', 'sg-3'])).toBe('SecurityGroupDrift');
    // security groups are compared first, as KA
    expect(at('subnet-c', ['sg-9'])).toBe('SecurityGroupDrift');
    // nothing resolved, or the instance not listed: no verdict
    expect(
      planDisruption(
        snapshot({
          ...base,
          resolvedNetworks: { default: { subnetIds: [], securityGroupIds: [] } },
          instanceNetworks: { [instanceId]: { subnetId: 'subnet-c', securityGroupIds: ['sg-9'] } },
        }),
        Now,
      ).command,
    ).toBeUndefined();
    expect(planDisruption(snapshot({ ...base, resolvedNetworks }), Now).command).toBeUndefined();
  });

  it('expiration is forceful by default; graceful expiration waits for the budget and pre-spins a replacement', () => {
    const old = node('old', Medium, { created: '2026-01-01T00:00:00Z' });
    const pods = [pod('p', 'old', '3', { annotations: { 'karpenter.sh/do-not-disrupt': 'true' } })];
    const forceful = planDisruption(snapshot({ nodePools: [pool({ disruption: { budgets: [{ nodes: '0' }] } })], nodes: [old], pods }), Now);
    expect(forceful.expirations.map((e) => e.nodeName)).toEqual(['old']);

    const gracefulPool = (nodes: string) =>
      pool({ annotations: { 'nodefleet.io/graceful-expiration': 'true' }, disruption: { consolidationPolicy: 'WhenEmpty', budgets: [{ nodes }] } });
    const waiting = planDisruption(snapshot({ nodePools: [gracefulPool('0')], nodes: [old], pods }), Now);
    expect(waiting.expirations).toEqual([]);
    expect(waiting.command).toBeUndefined();
    const graceful = planDisruption(snapshot({ nodePools: [gracefulPool('1')], nodes: [old], pods }), Now);
    expect(graceful.command?.method).toBe('graceful-expiration');
    expect(graceful.command?.reason).toBe('Expired');
    expect(graceful.command?.replacements).toHaveLength(1);
  });

  it('pending pods take free capacity first: a delete becomes a cheaper replace', () => {
    const nodes = [node('a', Medium), node('b', Medium, { zone: 'us-east-1b' })];
    const bound = [pod('pa', 'a', '1500m'), pod('pb', 'b', '1500m', { annotations: { 'controller.kubernetes.io/pod-deletion-cost': '1000000000' } })];
    expect(planDisruption(snapshot({ nodes, pods: bound }), Now).command).toMatchObject({ decision: 'delete', candidates: [{ nodeName: 'a' }] });
    const pending = pod('waiting', '', '2000m');
    delete pending.spec.nodeName;
    const plan = planDisruption(snapshot({ nodes, pods: [...bound, pending] }), Now);
    expect(plan.command).toMatchObject({ decision: 'replace', candidates: [{ nodeName: 'a' }] });
    expect(plan.command?.replacements[0].pods).toEqual(['default/pa']);
  });

  it('a pending pod an in-flight claim was made for is not put on a replacement (its claim is launching, or its launch failed and gc has not timed it out)', () => {
    // Prepare: node a's pod and the pending pod fit one new node together, cheaper than a.
    const nodes = [node('a', Big), node('b', Medium, { zone: 'us-east-1b' })];
    const bound = [pod('pa', 'a', '1500m'), pod('pb', 'b', '3500m')];
    const pending = pod('waiting', '', '1500m');
    delete pending.spec.nodeName;
    const forIt = nodeClaim({
      name: 'default-wait1',
      phase: 'Pending',
      pods: ['default/waiting'],
      requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['small'] }],
      createdAt: '2026-03-02T09:59:50Z',
    });
    const unclaimed = planDisruption(snapshot({ nodes, pods: [...bound, pending] }), Now);
    // Act
    const claimed = planDisruption(snapshot({ nodes, pods: [...bound, pending], nodeClaims: [forIt] }), Now);
    // Assess: without the claim the replacement is sized for the pending pod too; with it, only for a's pod.
    expect(unclaimed.command?.replacements.flatMap((r) => r.pods).sort()).toEqual(['default/pa', 'default/waiting']);
    expect(claimed.command).toMatchObject({ decision: 'replace', candidates: [{ nodeName: 'a' }] });
    expect(claimed.command?.replacements.flatMap((r) => r.pods)).toEqual(['default/pa']);
  });

  it('orders candidates by disruption cost: pod-deletion-cost makes a node dearer', () => {
    const nodes = [node('a', Medium), node('b', Medium)];
    const cheap = planDisruption(
      snapshot({
        nodes,
        pods: [pod('pa', 'a', '1500m'), pod('pb', 'b', '1500m', { annotations: { 'controller.kubernetes.io/pod-deletion-cost': '1000000000' } })],
      }),
      Now,
    );
    expect(names(cheap)).toEqual(['a']);
  });
});

describe('validateCommand', () => {
  it('waits for the 15 s delay, then drops a command whose node got busy', () => {
    const s = snapshot({ nodes: [node('a', Medium), node('b', Medium)], pods: [pod('p', 'a', '3')] });
    const cmd = planDisruption(s, Now).command!;
    expect(cmd.validateAfter).toBe('2026-03-02T10:00:15.000Z');
    expect(validateCommand(cmd, s, new Date('2026-03-02T10:00:05Z'))).toEqual({ status: 'wait', retryAfterSeconds: 10 });
    const later = new Date('2026-03-02T10:00:15Z');
    expect(validateCommand(cmd, s, later).status).toBe('valid');
    const busy = { ...s, pods: [...s.pods, pod('new', 'b', '100m')] };
    expect(validateCommand(cmd, busy, later)).toEqual({ status: 'invalid', reason: 'b: no longer empty' });
  });
});

describe('rebalance (nodefleet.io/rebalance-replace)', () => {
  const optIn = (budget = '100%') =>
    pool({ capacityTypes: ['spot', 'on-demand'], annotations: { 'nodefleet.io/rebalance-replace': 'true' }, disruption: { budgets: [{ nodes: budget }] } });
  const flagged = (at: string) => ({ 'nodefleet.io/rebalance-recommended-at': at });
  const nodes = [node('a', Medium, { capacityType: 'spot' }), node('b', Medium, { capacityType: 'spot', zone: 'us-east-1b' }), node('idle', Medium)];
  const pods = [pod('pa', 'a', '3'), pod('pb', 'b', '3')];
  const claims = (annotated: Record<string, string>) =>
    ['a', 'b', 'idle'].map((n) =>
      nodeClaim({
        name: `${n}-claim`,
        nodeName: n,
        providerId: providerOf(n, n === 'b' ? 'us-east-1b' : undefined),
        createdAt: '2026-03-01T10:00:00Z',
        ...(annotated[n] ? { annotations: flagged(annotated[n]) } : {}),
      }),
    );

  it('runs before emptiness, oldest recommendation first; replaced only when its pods need a new node', () => {
    const nodeClaims = claims({ a: '2026-03-02T09:58:00Z', b: '2026-03-02T09:50:00Z' });
    // b's 3 CPU fit on the idle medium node: no new node, the drain alone moves it
    const plan = planDisruption(snapshot({ nodePools: [optIn()], nodes, pods, nodeClaims }), Now);
    expect(plan.command).toMatchObject({
      method: 'rebalance',
      reason: 'Rebalance',
      decision: 'delete',
      candidates: [{ nodeName: 'b', nodeClaim: 'b-claim' }],
      replacements: [],
    });
    // without the idle node: one replacement, launched before the drain
    const busy = planDisruption(snapshot({ nodePools: [optIn()], nodes: nodes.slice(0, 2), pods, nodeClaims }), Now);
    expect(busy.command).toMatchObject({ method: 'rebalance', decision: 'replace', candidates: [{ nodeName: 'b' }] });
    expect(busy.command?.replacements).toHaveLength(1);
    expect(busy.command?.replacements[0].pods).toEqual(['default/pb']);
  });

  it('ignored in a pool that does not opt in; blocked with the reason when the budget is 0 (scheduled budgets by cron, UTC)', () => {
    const nodeClaims = claims({ a: '2026-03-02T09:58:00Z' });
    const plain = planDisruption(snapshot({ nodePools: [pool({ capacityTypes: ['spot', 'on-demand'] })], nodes, pods, nodeClaims }), Now);
    expect(plain.command?.method).toBe('emptiness');

    const zero = planDisruption(snapshot({ nodePools: [optIn('0')], nodes, pods, nodeClaims }), Now);
    expect(zero.command).toBeUndefined();
    expect(zero.blocked).toContainEqual({
      nodeName: 'a',
      nodePool: 'default',
      method: 'rebalance',
      reason: 'disruption budget for Rebalance in nodepool "default" is spent (allows 0 of 3 nodes, 0 already disrupting)',
    });
    expect(zero.budgets.find((b) => b.reason === 'Rebalance')).toEqual({
      nodePool: 'default',
      reason: 'Rebalance',
      nodes: 3,
      cap: 0,
      disrupting: 0,
      allowed: 0,
    });
    expect(plain.budgets.map((b) => b.reason)).toEqual(['Empty', 'Drifted', 'Underutilized']);

    // Monday 2026-03-02: "0 9 * * mon-fri" for 8h is active at 10:00 UTC, not at 18:00 UTC
    const scheduled = pool({
      capacityTypes: ['spot', 'on-demand'],
      annotations: { 'nodefleet.io/rebalance-replace': 'true' },
      disruption: { consolidationPolicy: 'WhenEmpty', budgets: [{ nodes: '0', schedule: '0 9 * * mon-fri', duration: '8h' }] },
    });
    expect(planDisruption(snapshot({ nodePools: [scheduled], nodes, pods, nodeClaims }), Now).command).toBeUndefined();
    expect(planDisruption(snapshot({ nodePools: [scheduled], nodes, pods, nodeClaims }), new Date('2026-03-02T18:00:00Z')).command?.method).toBe('rebalance');
  });

  it('validation drops the command when the pool stopped opting in', () => {
    const s = snapshot({ nodePools: [optIn()], nodes, pods, nodeClaims: claims({ a: '2026-03-02T09:58:00Z' }) });
    const cmd = planDisruption(s, Now).command!;
    const later = new Date('2026-03-02T10:00:15Z');
    expect(validateCommand(cmd, s, later)).toMatchObject({ status: 'valid', command: { method: 'rebalance', candidates: [{ nodeName: 'a' }] } });
    const optedOut = { ...s, nodePools: [pool({ capacityTypes: ['spot', 'on-demand'] })] };
    expect(validateCommand(cmd, optedOut, later)).toEqual({
      status: 'invalid',
      reason: 'a: no rebalance recommendation to act on (or its nodepool no longer opts in)',
    });
  });
});

describe('consolidation time budgets (Karpenter: 1 min multi-node, 3 min single-node)', () => {
  /** A fake monotonic clock: every read advances it by `stepMs`. */
  const ticking = (stepMs: number) => {
    let t = 0;
    return () => (t += stepMs) - stepMs;
  };
  const eight = ['n1', 'n2', 'n3', 'n4', 'n5', 'n6', 'n7', 'n8'].map((n) => node(n, Medium));
  const eightPods = eight.map((n, i) => pod(`p${i}`, n.metadata.name, '600m'));

  it('multi-node keeps the best prefix found before its 1-minute budget ran out', () => {
    const full = planDisruption(snapshot({ nodes: eight, pods: eightPods }), Now);
    const cut = planDisruption(snapshot({ nodes: eight, pods: eightPods }), Now, { elapsedMs: ticking(25_000) });
    // Prepare: unbounded, the binary search reaches all eight in three simulations
    expect(names(full)).toHaveLength(8);
    expect(full.timedOut).toEqual([]);
    // Act / Assess: 25 s a simulation, the third would start past 60 s: the best of two is kept
    expect(cut.timedOut).toEqual(['multi-node-consolidation']);
    expect(cut.simulations).toBe(2);
    expect(cut.command?.method).toBe('multi-node-consolidation');
    expect(names(cut)).toEqual(['n1', 'n2', 'n3', 'n4', 'n5', 'n6', 'n7']);
  });

  it('multi-node stops before any simulation when the budget is spent; single-node gives up after 3 minutes', () => {
    const nodes = ['n1', 'n2', 'n3', 'n4'].map((n) => node(n, Medium));
    const pods = [pod('p1', 'n1', '600m'), pod('p2', 'n2', '600m'), pod('p3', 'n3', '600m'), pod('p4a', 'n4', '600m'), pod('p4b', 'n4', '600m')];
    const late = planDisruption(snapshot({ nodes, pods }), Now, { elapsedMs: ticking(61_000) });
    expect(late.timedOut).toContain('multi-node-consolidation');
    expect(late.command?.method).toBe('single-node-consolidation');
    const one = snapshot({ nodes: [node('big', Big)], pods: [pod('p', 'big', '1500m')] });
    const a = planDisruption(one, Now, { elapsedMs: ticking(181_000) });
    const b = planDisruption(one, Now, { elapsedMs: ticking(1_000) });
    expect(b.command?.method).toBe('single-node-consolidation');
    expect(a.timedOut).toEqual(['single-node-consolidation']);
    expect(a.simulations).toBe(0);
    expect(a.command).toBeUndefined();
  });
});

describe('eventual disruption (drift with a terminationGracePeriod, KC types.go NewCandidate)', () => {
  const drifted = (name: string, grace?: number) =>
    nodeClaim({
      name: `${name}-claim`,
      nodeName: name,
      providerId: providerOf(name),
      createdAt: '2026-03-01T10:00:00Z',
      ...(grace !== undefined ? { terminationGracePeriodSeconds: grace } : {}),
      conditions: [
        { type: 'Initialized', status: 'True', lastTransitionTime: '2026-03-01T10:05:00Z' },
        { type: 'Drifted', status: 'True', reason: 'RequirementsDrifted', lastTransitionTime: '2026-03-02T09:00:00Z' },
      ],
    });
  const held = pod('held', 'n', '1', { annotations: { 'karpenter.sh/do-not-disrupt': 'true' } });
  const free = pod('free', 'n', '1');
  const base = (grace: number | undefined, pods: Pod[], extra: Partial<DisruptionSnapshot> = {}) =>
    snapshot({
      nodePools: [pool({ disruption: { consolidationPolicy: 'WhenEmpty', consolidateAfter: 'Never' } })],
      nodes: [node('n', Medium)],
      nodeClaims: [drifted('n', grace)],
      pods,
      ...extra,
    });

  it('drift passes a do-not-disrupt pod only when the NodeClaim bounds its drain, and places only the pods the drain moves', () => {
    const unbounded = planDisruption(base(undefined, [held, free]), Now);
    expect(unbounded.command).toBeUndefined();
    expect(unbounded.blocked.some((b) => b.method === 'drift' && /do-not-disrupt/.test(b.reason))).toBe(true);

    const bounded = planDisruption(base(300, [held, free]), Now);
    expect(bounded.command).toMatchObject({ method: 'drift', reason: 'Drifted', decision: 'replace' });
    expect(bounded.command?.replacements.flatMap((r) => r.pods)).toEqual(['default/free']);
    // a grace period of 0s is a bound too (pods deleted at once)
    expect(planDisruption(base(0, [held]), Now).command).toMatchObject({ method: 'drift', decision: 'delete', replacements: [] });
  });

  it('a fully blocking PDB: no capacity for its pod; a PDB allowing none now: a replacement for it', () => {
    const labelled = pod('web', 'n', '1', { labels: { app: 'web' } });
    const pdb = (spec: Record<string, unknown>) =>
      ({
        apiVersion: 'policy/v1',
        kind: 'PodDisruptionBudget',
        metadata: { name: 'web', namespace: 'default' },
        spec: { selector: { matchLabels: { app: 'web' } }, ...spec },
      }) as never;
    expect(planDisruption(base(undefined, [labelled], { pdbs: [pdb({ maxUnavailable: 0 })] }), Now).command).toBeUndefined();
    expect(planDisruption(base(300, [labelled], { pdbs: [pdb({ maxUnavailable: 0 })] }), Now).command).toMatchObject({ decision: 'delete', replacements: [] });
    expect(planDisruption(base(300, [labelled], { pdbs: [pdb({ minAvailable: 1 })] }), Now).command?.replacements).toHaveLength(1);
  });

  it('the node\u2019s own do-not-disrupt and consolidation stay graceful', () => {
    const annotated = snapshot({
      nodePools: [pool({ disruption: { consolidationPolicy: 'WhenEmpty', consolidateAfter: 'Never' } })],
      nodes: [node('n', Medium, { annotations: { 'karpenter.sh/do-not-disrupt': 'true' } })],
      nodeClaims: [drifted('n', 300)],
      pods: [free],
    });
    expect(planDisruption(annotated, Now).command).toBeUndefined();
    // not drifted, underused but for a held pod, in a pool that consolidates: kept with a grace period
    const claim = nodeClaim({
      name: 'm-claim',
      nodeName: 'm',
      providerId: providerOf('m'),
      createdAt: '2026-03-01T10:00:00Z',
      terminationGracePeriodSeconds: 300,
      conditions: [{ type: 'Initialized', status: 'True', lastTransitionTime: '2026-03-01T10:05:00Z' }],
    });
    const consolidating = snapshot({
      nodes: [node('m', Medium), node('other', Medium)],
      nodeClaims: [claim],
      pods: [pod('held', 'm', '100m', { annotations: { 'karpenter.sh/do-not-disrupt': 'true' } }), pod('busy', 'other', '100m')],
    });
    const plan = planDisruption(consolidating, Now);
    expect(names(plan)).not.toContain('m');
  });

  it('validation holds a drift command to the same rule', () => {
    const cmd = planDisruption(base(300, [held]), Now).command!;
    const later = new Date('2026-03-02T10:00:31Z');
    expect(validateCommand(cmd, base(300, [held]), later).status).toBe('valid');
    expect(validateCommand(cmd, base(undefined, [held]), later)).toMatchObject({ status: 'invalid', reason: expect.stringMatching(/do-not-disrupt/) });
  });

  it('a held pod of a node being deleted gets no capacity in later simulations (KC deleting nodes\u2019 currently reschedulable pods)', () => {
    const leaving = { ...node('n', Medium), metadata: { ...node('n', Medium).metadata, deletionTimestamp: '2026-03-02T09:59:00Z' } };
    const s = snapshot({
      nodePools: [pool({ disruption: { consolidationPolicy: 'WhenEmpty', consolidateAfter: 'Never' } })],
      nodes: [leaving, node('d', Small)],
      nodeClaims: [drifted('n', 300), drifted('d', 300)],
      pods: [held, pod('big', 'd', '1500m')],
    });
    // d's pod fits on a new small node only if n's held pod (1 CPU) is not also asking for room there
    const plan = planDisruption(s, Now);
    expect(plan.command).toMatchObject({ method: 'drift', candidates: [{ nodeName: 'd' }] });
    expect(plan.command?.replacements.flatMap((r) => r.pods)).toEqual(['default/big']);
  });
});
