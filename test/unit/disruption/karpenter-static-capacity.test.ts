/**
 * Karpenter's static capacity tests (sigs.k8s.io/karpenter v1.15.0 pkg/controllers/static/
 * provisioning/suite_test.go, static/deprovisioning/suite_test.go, disruption/staticdrift_test.go,
 * and the "Static NodePool" contexts of the provisioning, drift, emptiness and consolidation
 * suites), ported to nodefleet's planner (shared/disruption/static-capacity.ts, static-drift.ts)
 * and to the disruption pass that carries it out (functions/disruption/handler.ts):
 * test/cases/karpenter/COVERAGE.md, "static capacity".
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { fakeWorld, node, nodeClaim, nodeClaimOf, pod, type FakeWorld } from '../../fakes/index.ts';
import type { Node, Pod } from '../../../shared/api/kube.ts';
import type { NodeClaim, NodeClaimInput } from '../../../shared/api/nodeclaim.ts';
import { NodePoolSchema, StaticCapacityGateOff, StaticNodePoolNotForPods, type NodePool } from '../../../shared/api/nodepool.ts';
import { parseSettings } from '../../../shared/api/settings.ts';
import { validateObject, validateYamlText } from '../../../shared/api/validate.ts';
import { parseYamlObjects } from '../../../shared/api/yaml.ts';
import type { Deps } from '../../../shared/runtime/deps.ts';
import { RecordingLog, RecordingMetrics } from '../../../shared/runtime/observability.ts';
import { loadCatalog } from '../../../shared/catalog/index.ts';
import { planStaticCapacity } from '../../../shared/disruption/static-capacity.ts';
import { solve } from '../../../shared/scheduling/index.ts';
import { run } from '../../../functions/disruption/handler.ts';

const Start = '2026-03-02T10:00:00Z';
const now = new Date(Start);
const catalog = loadCatalog({ region: 'us-east-1' });

function staticPool(name = 'static', replicas = 3, spec: Record<string, unknown> = {}, metadata: Record<string, unknown> = {}): NodePool {
  return NodePoolSchema.parse({
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name, ...metadata },
    spec: {
      replicas,
      template: {
        metadata: { labels: { team: 'infra' } },
        spec: {
          nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
          requirements: [
            { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
            { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] },
            { key: 'karpenter.k8s.aws/instance-family', operator: 'In', values: ['m5'] },
          ],
          taints: [{ key: 'dedicated', value: 'infra', effect: 'NoSchedule' }],
        },
      },
      disruption: { budgets: [{ nodes: '100%' }] },
      ...spec,
    },
  });
}

function dynamicPool(name = 'default'): NodePool {
  const p = staticPool(name, 0);
  delete (p.spec as { replicas?: number }).replicas;
  delete p.spec.template.spec.taints;
  return p;
}

/** A managed, initialized node of `pool` (m5.large) and its stored claim. */
function managed(name: string, pool = 'static', claim: Partial<NodeClaimInput> = {}): { node: Node; claim: NodeClaim } {
  const n = node({
    name,
    providerID: `aws:///us-east-1a/i-${name
      .replace(/[^0-9a-z]/g, '')
      .padEnd(17, '0')
      .slice(0, 17)}`,
    allocatable: { cpu: '1930m', memory: '7220Mi', pods: '29' },
    labels: {
      'karpenter.sh/nodepool': pool,
      'karpenter.sh/initialized': 'true',
      'karpenter.sh/registered': 'true',
      'karpenter.sh/capacity-type': 'on-demand',
      'node.kubernetes.io/instance-type': 'm5.large',
      'topology.kubernetes.io/zone': 'us-east-1a',
      'kubernetes.io/arch': 'amd64',
      'kubernetes.io/os': 'linux',
    },
  });
  n.metadata.creationTimestamp = '2026-03-01T10:00:00Z';
  return { node: n, claim: nodeClaimOf(n, { createdAt: '2026-03-01T10:00:00.000Z', ...claim }) };
}

function plan(
  pools: NodePool[],
  claims: NodeClaim[],
  o: { pods?: Pod[]; holders?: Record<string, string[]>; enabled?: boolean; expiring?: string[]; at?: Date } = {},
): ReturnType<typeof planStaticCapacity> {
  return planStaticCapacity(
    {
      nodePools: pools,
      nodeClaims: claims,
      pods: o.pods ?? [],
      budgetHolders: o.holders ?? {},
      instanceTypes: () => catalog,
      daemonSets: [],
      unavailableOfferings: [],
    },
    o.at ?? now,
    { enabled: o.enabled ?? true, expiring: new Set(o.expiring ?? []) },
  );
}
const provisioned = (p: ReturnType<typeof plan>) => Object.fromEntries(p.provision.map((x) => [x.nodePool, x.count]));
const deprovisioned = (p: ReturnType<typeof plan>) => p.deprovision.map((d) => d.nodeClaim).sort();
const claimsOf = (n: number, pool = 'static', o: Partial<NodeClaimInput> = {}) => Array.from({ length: n }, (_, i) => managed(`${pool}-${i}`, pool, o).claim);

describe('Static Provisioning Controller › Reconcile', () => {
  it('should return early if nodepool root condition is not true', () => {
    const pool = staticPool('static', 3, {}, {});
    (pool as { status?: unknown }).status = { conditions: [{ type: 'Ready', status: 'False' }] };
    const p = plan([pool], []);
    expect(p.provision).toEqual([]);
    expect(p.refused).toEqual([{ nodePool: 'static', reason: expect.stringContaining('not ready') }]);
  });
  it('should return early if nodepool is being deleted', () => {
    expect(plan([staticPool('static', 3, {}, { deletionTimestamp: '2026-03-02T09:00:00Z' })], []).provision).toEqual([]);
  });
  it('should return early if nodepool replicas is nil', () => {
    expect(plan([dynamicPool()], [])).toEqual({ provision: [], deprovision: [], limited: [], refused: [] });
  });
  it('should return early if current node count exceeds desired replicas', () => {
    expect(plan([staticPool('static', 2)], claimsOf(3)).provision).toEqual([]);
  });
  it('should create nodeclaims when current node count is less than desired replicas', () => {
    expect(provisioned(plan([staticPool('static', 3)], []))).toEqual({ static: 3 });
  });
  it('should create additional nodeclaims to reach desired replicas', () => {
    expect(provisioned(plan([staticPool('static', 5)], claimsOf(2)))).toEqual({ static: 3 });
  });
  it('should not create additional nodeclaims (a claim pending disruption counts until its replacement is up)', () => {
    const claims = claimsOf(3);
    expect(plan([staticPool('static', 3)], claims, { holders: { static: [claims[0].name] } }).provision).toEqual([]);
  });
  it('should not create additional nodeclaims when node limits are reached', () => {
    const pool = staticPool('static', 5, { limits: { nodes: '3' } });
    expect(provisioned(plan([pool], claimsOf(1)))).toEqual({ static: 2 });
    const full = plan([pool], claimsOf(3));
    expect(full.provision).toEqual([]);
    expect(full.limited).toEqual([{ nodePool: 'static', current: 3, desired: 5, limit: 3 }]);
  });
  it('should not create additional nodeclaims when node limits are reached (deleting claims count against the limit)', () => {
    const claims = [...claimsOf(2), managed('going', 'static', { phase: 'Terminating' }).claim];
    expect(plan([staticPool('static', 3, { limits: { nodes: '3' } })], claims).limited).toHaveLength(1);
    expect(provisioned(plan([staticPool('static', 3)], claims))).toEqual({ static: 1 });
  });
  it('should handle zero replicas', () => {
    expect(plan([staticPool('static', 0)], [])).toEqual({ provision: [], deprovision: [], limited: [], refused: [] });
  });
  it('should respect nodepool template specifications', () => {
    const [p] = plan([staticPool('static', 1)], []).provision;
    expect(p.claim.labels).toMatchObject({ team: 'infra', 'karpenter.sh/nodepool': 'static' });
    expect(p.claim.taints).toEqual([{ key: 'dedicated', value: 'infra', effect: 'NoSchedule' }]);
    expect(p.claim.capacityTypes).toEqual(['on-demand']);
    expect(p.claim.pods).toEqual([]);
    expect(p.claim.requests).toEqual({});
    expect(p.claim.instanceTypes.length).toBeGreaterThan(0);
    expect(p.claim.instanceTypes.length).toBeLessThanOrEqual(60);
    expect(p.claim.instanceTypes.every((t) => t.startsWith('m5.'))).toBe(true);
    expect(p.claim.requirements).toContainEqual(expect.objectContaining({ key: 'node.kubernetes.io/instance-type', operator: 'In' }));
  });
  it('should handle large replica counts', () => {
    expect(provisioned(plan([staticPool('static', 1000)], []))).toEqual({ static: 1000 });
  });
});

describe('Static Deprovisioning Controller › Reconcile', () => {
  it('should return early if current node count is less than or equal to desired replicas', () => {
    expect(plan([staticPool('static', 3)], claimsOf(3)).deprovision).toEqual([]);
  });
  it('should only consider running nodeclaims and not deleting nodeclaims', () => {
    const claims = [...claimsOf(2), managed('going', 'static', { phase: 'Terminating' }).claim];
    expect(plan([staticPool('static', 2)], claims).deprovision).toEqual([]);
    // nor a claim whose forceful expiration this pass starts
    expect(plan([staticPool('static', 2)], claimsOf(3), { expiring: ['static-0'] }).deprovision).toEqual([]);
  });
  it('should terminate excess nodeclaims when current count exceeds desired replicas', () => {
    expect(plan([staticPool('static', 2)], claimsOf(4)).deprovision).toHaveLength(2);
  });
  it('should handle zero replicas by terminating all nodeclaims', () => {
    expect(deprovisioned(plan([staticPool('static', 0)], claimsOf(3)))).toEqual(['static-0', 'static-1', 'static-2']);
  });
  it('should handle no active nodeclaims gracefully', () => {
    expect(plan([staticPool('static', 0)], [])).toEqual({ provision: [], deprovision: [], limited: [], refused: [] });
  });
  it('Deprovision Candidate Selection › should prioritize nodeclaims that have unresolved providerID', () => {
    const unresolved = nodeClaim({ name: 'static-pending', nodePool: 'static', phase: 'Pending', createdAt: Start });
    expect(deprovisioned(plan([staticPool('static', 3)], [...claimsOf(3), unresolved]))).toEqual(['static-pending']);
  });
  it('Deprovision Candidate Selection › should prioritize empty nodes (with only daemonset pods) for termination', () => {
    const pods = [
      pod({ name: 'web-0', nodeName: 'static-0', cpu: '100m' }),
      pod({ name: 'agent-1', nodeName: 'static-1', cpu: '100m', owner: 'DaemonSet' }),
      pod({ name: 'web-2', nodeName: 'static-2', cpu: '100m' }),
    ];
    expect(deprovisioned(plan([staticPool('static', 2)], claimsOf(3), { pods }))).toEqual(['static-1']);
  });
  it('Deprovision Candidate Selection › should terminate non-empty nodes when empty nodes are insufficient', () => {
    const pods = [pod({ name: 'web-0', nodeName: 'static-0', cpu: '100m' }), pod({ name: 'web-2', nodeName: 'static-2', cpu: '100m' })];
    const out = deprovisioned(plan([staticPool('static', 1)], claimsOf(3), { pods }));
    expect(out).toHaveLength(2);
    expect(out).toContain('static-1');
  });

  describe('Deprovision Candidate Selection › disruption cost ordering', () => {
    // two of each, in this order: low (one pod), high (two pods), dnd (a do-not-disrupt pod), ds (a DaemonSet pod)
    const kinds = ['low', 'high', 'dnd', 'ds'] as const;
    const names = [0, 1].flatMap((i) => kinds.map((k) => `${k}-${i}`));
    const claims = names.map((n) => managed(n).claim);
    const pods = [0, 1].flatMap((i) => [
      pod({ name: `system-pod-low-${i}`, namespace: 'kube-system', nodeName: `low-${i}` }),
      pod({ name: `system-pod-high-${i}`, namespace: 'kube-system', nodeName: `high-${i}` }),
      pod({ name: `app-pod-high-${i}`, nodeName: `high-${i}` }),
      pod({ name: `app-pod-dnd-${i}`, nodeName: `dnd-${i}`, annotations: { 'karpenter.sh/do-not-disrupt': 'true' } }),
      pod({ name: `dmn-pod-${i}`, namespace: 'kube-system', nodeName: `ds-${i}`, owner: 'DaemonSet' }),
    ]);
    it.each([
      ['to 6 (drops DS-only first)', 6, [0, 1, 2, 4, 5, 6]],
      ['to 4 (drops low next)', 4, [1, 2, 5, 6]],
      ['to 2 (drops high next)', 2, [2, 6]],
      ['to 0 (drops do-not-disrupt last)', 0, []],
    ])('scales down in disruption cost order %s', (_label, replicas, keep) => {
      const gone = new Set(deprovisioned(plan([staticPool('static', replicas as number)], claims, { pods })));
      expect(names.filter((n) => !gone.has(n))).toEqual((keep as number[]).map((i) => names[i]));
    });
  });
});

describe('StaticCapacity feature gate', () => {
  it('is off by default, as in Karpenter, and a static NodePool is then refused with one line', () => {
    expect(parseSettings({}).featureGates.StaticCapacity).toBe(false);
    expect(parseSettings({ FEATURE_GATES: 'StaticCapacity=true' }).featureGates.StaticCapacity).toBe(true);
    const off = plan([staticPool('static', 3)], [], { enabled: false });
    expect(off.provision).toEqual([]);
    expect(off.refused).toEqual([{ nodePool: 'static', reason: StaticCapacityGateOff }]);
    expect(validateObject(staticPool('static', 3))).toEqual([`spec.replicas: ${StaticCapacityGateOff}`]);
    expect(validateObject(staticPool('static', 3), { staticCapacity: true })).toEqual([]);
  });
});

describe('NodePool validation (CEL) › static NodePools', () => {
  it("only 'limits.nodes' is supported on static NodePools", () => {
    expect(validateObject(staticPool('static', 3, { limits: { nodes: '5' } }), { staticCapacity: true })).toEqual([]);
    expect(validateObject(staticPool('static', 3, { limits: { nodes: '5', cpu: '100' } }), { staticCapacity: true })).toEqual([
      "spec.limits.cpu: only 'limits.nodes' is supported on static NodePools (spec.replicas is set)",
    ]);
  });
  it("'weight' is not supported on static NodePools", () => {
    expect(validateObject(staticPool('static', 3, { weight: 10 }), { staticCapacity: true })).toEqual([
      "spec.weight: 'weight' is not supported on static NodePools (spec.replicas is set)",
    ]);
  });
  it('replicas must be a whole number ≥ 0', () => {
    expect(validateObject({ ...staticPool(), spec: { ...staticPool().spec, replicas: -1 } }, { staticCapacity: true })[0]).toMatch(/^spec\.replicas: /);
  });
});

describe('Provisioning › StaticNodePool', () => {
  const pending = (n: number) => Array.from({ length: n }, (_, i) => pod({ name: `web-${i}`, cpu: '500m' }));
  it('should not create NodeClaims for StaticNodePool', () => {
    const r = solve({ pods: pending(2), nodePools: [staticPool('static', 3)], instanceTypes: () => catalog, existingNodes: [] } as never);
    expect(r.newNodeClaims).toEqual([]);
    expect(r.unschedulable[0].reasons.static).toBe(StaticNodePoolNotForPods);
  });
  it('should still provision dynamic NodeClaims when there are both Static and Dynamic NodePools', () => {
    const r = solve({
      pods: pending(2),
      nodePools: [staticPool('static', 3), dynamicPool('default')],
      instanceTypes: () => catalog,
      existingNodes: [],
    } as never);
    expect(r.newNodeClaims.map((c) => c.nodePool)).toEqual(['default']);
  });
});

/** The disruption pass on fakes, with the StaticCapacity gate on. */
describe('the disruption pass keeps static pools at their count', () => {
  let w: FakeWorld;
  const depsOf = (gates = 'StaticCapacity=true'): Deps => ({
    env: { clusterName: 'test', tableName: 'nodefleet', region: 'us-east-1', logLevel: 'INFO', settings: parseSettings({ FEATURE_GATES: gates }) },
    clock: w.clock,
    log: new RecordingLog(),
    metrics: new RecordingMetrics(),
    store: w.store,
    unavailable: w.unavailable,
    cloud: w.cloud,
    kube: w.kube,
    termination: w.starter,
    budgets: w.budgets,
    clusterInfo: async () => ({}) as never,
  });
  const add = async (...ms: { node: Node; claim: NodeClaim }[]) => {
    for (const m of ms) {
      w.kube.addNode(m.node);
      await w.store.create(m.claim);
    }
  };
  const live = async (pool = 'static') =>
    (await w.store.list()).filter((c) => c.nodePool === pool && !['Terminating', 'Terminated', 'Failed'].includes(c.phase));
  beforeEach(() => {
    w = fakeWorld({ start: Start });
  });

  it('creates the missing claims through the launch path, with the pool template, and a second pass creates none', async () => {
    w.kube.setNodePools([staticPool('static', 3)]);
    await add(managed('static-a'));
    const deps = depsOf();
    const out = await run({}, deps);
    expect(out.staticCapacity?.launched).toHaveLength(2);
    const claims = await live();
    expect(claims).toHaveLength(3);
    for (const c of claims.filter((x) => x.name !== 'static-a')) {
      expect(c.phase).toBe('Launched');
      expect(c.labels).toMatchObject({ team: 'infra', 'karpenter.sh/nodepool': 'static' });
      expect(c.pods).toEqual([]);
    }
    expect(w.cloud.callsOf('create')).toHaveLength(2);
    expect((deps.log as RecordingLog).lines.map((l) => l.message)).toContain('provisioning nodeclaims to satisfy replica count');
    await run({}, deps);
    expect(await live()).toHaveLength(3);
    expect(w.cloud.callsOf('create')).toHaveLength(2);
  });

  it('with the gate off launches nothing and says why in one line', async () => {
    w.kube.setNodePools([staticPool('static', 3)]);
    const deps = depsOf('StaticCapacity=false');
    await run({}, deps);
    expect(await live()).toHaveLength(0);
    expect((deps.log as RecordingLog).lines).toContainEqual(
      expect.objectContaining({ message: 'nodepool not ready', fields: expect.objectContaining({ error: StaticCapacityGateOff }) }),
    );
  });

  it('an interrupted node is replaced: its terminating claim no longer counts', async () => {
    w.kube.setNodePools([staticPool('static', 2)]);
    await add(managed('static-a'), managed('static-b', 'static', { phase: 'Terminating' }));
    const out = await run({}, depsOf());
    expect(out.staticCapacity?.launched).toHaveLength(1);
    expect(await live()).toHaveLength(2);
  });

  it('scales down through the termination state machine (reason overprovisioned), empty nodes first', async () => {
    w.kube.setNodePools([staticPool('static', 1)]);
    await add(managed('static-a'), managed('static-b'), managed('static-c'));
    w.kube.addPod(pod({ name: 'web-0', nodeName: 'static-b', cpu: '100m' }));
    const out = await run({}, depsOf());
    expect(out.terminationsStarted.sort()).toEqual(['static-a', 'static-c']);
    expect(w.starter.started.map((s) => s.reason)).toEqual(['overprovisioned', 'overprovisioned']);
  });

  it('should return error when nodeclaim deletion fails: the pass goes on and the next one retries', async () => {
    w.kube.setNodePools([staticPool('static', 0)]);
    await add(managed('static-a'));
    w.starter.failNext('start', new Error('throttled'));
    const deps = depsOf();
    const out = await run({}, deps);
    expect(out.terminationsStarted).toEqual([]);
    expect((deps.log as RecordingLog).lines).toContainEqual(expect.objectContaining({ message: 'could not terminate static nodeclaim' }));
    expect((await run({}, deps)).terminationsStarted).toEqual(['static-a']);
  });

  it('should handle CreateNodeClaims errors gracefully', async () => {
    w.kube.setNodePools([staticPool('static', 1)]);
    w.cloud.failNext('create', new Error('UnauthorizedOperation'));
    const deps = depsOf();
    const out = await run({}, deps);
    expect(out.status).toBe('idle');
    expect((deps.log as RecordingLog).lines).toContainEqual(expect.objectContaining({ message: 'could not launch static nodeclaim' }));
  });

  it('Static NodePool › should not consolidate static NodePool nodes (emptiness and consolidation)', async () => {
    w.kube.setNodePools([staticPool('static', 2)]);
    await add(managed('static-a'), managed('static-b'));
    const out = await run({}, depsOf());
    expect(out.command).toBeUndefined();
    expect(out.terminationsStarted).toEqual([]);
  });

  describe('Static Drift', () => {
    const drifted = (name: string) => managed(name, 'static', { nodePoolHash: 'made-from-an-older-template' });

    it('Static NodePool › should not consider static nodepool for drift (drift replaces it one for one instead)', async () => {
      w.kube.setNodePools([staticPool('static', 2)]);
      await add(drifted('static-a'), managed('static-b'));
      const out = await run({}, depsOf());
      expect(out.command).toMatchObject({ method: 'static-drift', reason: 'Drifted', decision: 'replace' });
      expect(out.command?.candidates.map((c) => c.nodeName)).toEqual(['static-a']);
      expect(out.command?.replacements).toHaveLength(1);
      expect(out.command?.replacements[0]).toMatchObject({ nodePool: 'static', pods: [], labels: expect.objectContaining({ team: 'infra' }) });
    });
    it('the replacement launches, and the pool is not made up meanwhile (its candidate is pending disruption)', async () => {
      w.kube.setNodePools([staticPool('static', 2)]);
      await add(drifted('static-a'), managed('static-b'));
      const deps = depsOf();
      const planned = await run({}, deps);
      w.clock.advanceSeconds(15);
      const acted = await run({ command: planned.command }, deps);
      expect(acted.status).toBe('waiting-for-replacements');
      expect(await live()).toHaveLength(3);
      const again = await run({}, deps);
      expect(again.staticCapacity).toBeUndefined();
      expect(await live()).toHaveLength(3);
    });
    it('should respect disruption budgets (Nodes Count) for static drift', async () => {
      w.kube.setNodePools([staticPool('static', 2, { disruption: { budgets: [{ nodes: '0', reasons: ['Drifted'] }] } })]);
      await add(drifted('static-a'), drifted('static-b'));
      const deps = depsOf();
      const out = await run({}, deps);
      expect(out.command).toBeUndefined();
    });
    it('should not drift nodes when we cannot acquire limits', async () => {
      w.kube.setNodePools([staticPool('static', 2, { limits: { nodes: '2' } })]);
      await add(drifted('static-a'), managed('static-b'));
      expect((await run({}, depsOf())).command).toBeUndefined();
    });
    it('should drift nodes when we can acquire limits', async () => {
      w.kube.setNodePools([staticPool('static', 2, { limits: { nodes: '3' } })]);
      await add(drifted('static-a'), managed('static-b'));
      expect((await run({}, depsOf())).command?.method).toBe('static-drift');
    });
    it('should handle missing node limits gracefully', async () => {
      w.kube.setNodePools([staticPool('static', 1)]);
      await add(drifted('static-a'));
      expect((await run({}, depsOf())).command?.method).toBe('static-drift');
    });
    it('should wait until nodes are deprovisioned when we are overscaled', async () => {
      w.kube.setNodePools([staticPool('static', 1)]);
      await add(drifted('static-a'), drifted('static-b'));
      const out = await run({}, depsOf());
      expect(out.command).toBeUndefined();
      expect(out.terminationsStarted).toHaveLength(1);
    });
    it('should ignore nodes without the drifted status condition', async () => {
      w.kube.setNodePools([staticPool('static', 1)]);
      await add(managed('static-a'));
      expect((await run({}, depsOf())).command).toBeUndefined();
    });
    it('should ignore nodes with the karpenter.sh/do-not-disrupt annotation', async () => {
      w.kube.setNodePools([staticPool('static', 1)]);
      const m = drifted('static-a');
      m.node.metadata.annotations = { 'karpenter.sh/do-not-disrupt': 'true' };
      await add(m);
      expect((await run({}, depsOf())).command).toBeUndefined();
    });
  });
});

describe("Karpenter's docs' reference NodePool (static reading)", () => {
  const fixture = readFileSync(join(import.meta.dirname, '../../fixtures/nodepools/docs-reference-static.yaml'), 'utf8');
  const pool = () => NodePoolSchema.parse(parseYamlObjects(fixture).objects[0].object);

  it('validates with the StaticCapacity gate on, and is refused in one line with it off', () => {
    expect(validateYamlText(fixture, 'docs-reference-static.yaml', { staticCapacity: true }).problems).toEqual([]);
    expect(validateYamlText(fixture, 'docs-reference-static.yaml').problems).toEqual([
      `docs-reference-static.yaml: NodePool/default: spec.replicas: ${StaticCapacityGateOff}`,
    ]);
  });

  const depsFor = (w: FakeWorld, settings: Record<string, string>): Deps => ({
    env: {
      clusterName: 'test',
      tableName: 'nodefleet',
      region: 'us-west-2',
      logLevel: 'INFO',
      settings: parseSettings({ FEATURE_GATES: 'StaticCapacity=true', ...settings }),
    },
    clock: w.clock,
    log: new RecordingLog(),
    metrics: new RecordingMetrics(),
    store: w.store,
    unavailable: w.unavailable,
    cloud: w.cloud,
    kube: w.kube,
    termination: w.starter,
    budgets: w.budgets,
    clusterInfo: async () => ({}) as never,
  });

  it('is honoured as Karpenter honours it under MIN_VALUES_POLICY=Strict: its nitro families are 4 (c4 and r4 are Xen), below minValues 5, so nothing launches and the pass says why', async () => {
    const w = fakeWorld({ start: Start });
    w.kube.setNodePools([pool()]);
    const deps = depsFor(w, {});
    await run({}, deps);
    expect(await w.store.list()).toEqual([]);
    expect((deps.log as RecordingLog).lines).toContainEqual(
      expect.objectContaining({
        message: 'nodepool not ready',
        fields: expect.objectContaining({ error: expect.stringContaining('minValues requirement is not met') }),
      }),
    );
  });

  it('is honoured under MIN_VALUES_POLICY=BestEffort: the disruption pass keeps it at 5 nodes, within limits.nodes, with its template', async () => {
    const w = fakeWorld({ start: Start });
    w.kube.setNodePools([pool()]);
    const deps = depsFor(w, { MIN_VALUES_POLICY: 'BestEffort' });
    const out = await run({}, deps);
    expect(out.staticCapacity?.launched).toHaveLength(5);
    const claims = await w.store.list();
    expect(claims).toHaveLength(5);
    for (const c of claims) {
      expect(c.labels).toMatchObject({ 'billing-team': 'my-team', 'karpenter.sh/nodepool': 'default' });
      expect(c.annotations).toMatchObject({ 'example.com/owner': 'my-team' });
      expect(c.taints).toEqual([{ key: 'example.com/special-taint', effect: 'NoSchedule' }]);
      expect(c.startupTaints).toEqual([{ key: 'example.com/another-taint', effect: 'NoSchedule' }]);
      expect(c.terminationGracePeriodSeconds).toBe(48 * 3600);
      expect(Date.parse(c.expireAt!) - Date.parse(Start)).toBe(720 * 3600_000);
      expect(['us-west-2a', 'us-west-2b']).toContain(c.zone);
      const families = c.requirements.find((r) => r.key === 'karpenter.k8s.aws/instance-family');
      expect(families).toMatchObject({ minValues: 5 });
      const types = c.requirements.find((r) => r.key === 'node.kubernetes.io/instance-type')!.values!;
      expect(new Set(types.map((t) => t.split('.')[0]))).toEqual(new Set(['c5', 'c5d', 'm5', 'm5d']));
    }
    // a second pass, and a third after the pool's count was met, launch nothing more
    await run({}, deps);
    expect(await w.store.list()).toHaveLength(5);
  });
});

describe('overlapping disruption passes', () => {
  it('two passes that read the same claims create the missing ones once (same names, conditional creates)', async () => {
    const w = fakeWorld({ start: Start });
    w.kube.setNodePools([staticPool('static', 3)]);
    const deps = (): Deps => ({
      env: {
        clusterName: 'test',
        tableName: 'nodefleet',
        region: 'us-east-1',
        logLevel: 'INFO',
        settings: parseSettings({ FEATURE_GATES: 'StaticCapacity=true' }),
      },
      clock: w.clock,
      log: new RecordingLog(),
      metrics: new RecordingMetrics(),
      store: w.store,
      unavailable: w.unavailable,
      cloud: w.cloud,
      kube: w.kube,
      termination: w.starter,
      budgets: w.budgets,
      clusterInfo: async () => ({}) as never,
    });
    await Promise.all([run({}, deps()), run({}, deps())]);
    expect(await w.store.list()).toHaveLength(3);
    expect(w.cloud.callsOf('create')).toHaveLength(3);
  });
});

describe('names of static claims', () => {
  it('a terminated record still stored does not block its replacement (the name is drawn from every record)', async () => {
    const w = fakeWorld({ start: Start });
    w.kube.setNodePools([staticPool('static', 1)]);
    const deps: Deps = {
      env: {
        clusterName: 'test',
        tableName: 'nodefleet',
        region: 'us-east-1',
        logLevel: 'INFO',
        settings: parseSettings({ FEATURE_GATES: 'StaticCapacity=true' }),
      },
      clock: w.clock,
      log: new RecordingLog(),
      metrics: new RecordingMetrics(),
      store: w.store,
      unavailable: w.unavailable,
      cloud: w.cloud,
      kube: w.kube,
      termination: w.starter,
      budgets: w.budgets,
      clusterInfo: async () => ({}) as never,
    };
    await run({}, deps);
    const [first] = await w.store.list();
    await w.store.update({ ...first, phase: 'Terminated' });
    w.clock.advanceSeconds(60);
    const out = await run({}, deps);
    expect(out.staticCapacity?.launched).toHaveLength(1);
    expect(out.staticCapacity?.launched[0]).not.toBe(first.name);
  });
});
