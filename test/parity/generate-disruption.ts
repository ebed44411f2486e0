/**
 * fast-check arbitrary for disruption parity scenarios: small clusters of made-up types with
 * NodePools whose `spec.disruption` varies (policy, consolidateAfter, budgets, a capacity-type
 * requirement, a terminationGracePeriod), 1–6 nodes (a spot node in an on-demand-only pool is
 * drifted), some empty and some underutilized, whose bound pods (owned by a
 * ReplicaSet, some marked do-not-disrupt, some protected by a PDB) started long ago or just now.
 *
 * Every NodePool writes its whole `spec.disruption`: the oracle's fake client applies no CRD
 * defaults (an API server would), so a missing consolidateAfter would read as Never there.
 */
import fc from 'fast-check';
import type { Node, Pod, PodDisruptionBudget } from '../../shared/api/kube.ts';
import * as L from '../../shared/api/labels.ts';
import type { CaseInstanceType } from '../../shared/catalog/index.ts';
import type { DisruptionScenario } from './disruption-scenario.ts';
import { launchedNode, madeUpType } from './generate.ts';

/** The time every scenario runs at. */
export const DisruptionNow = '2026-03-02T10:00:00Z';
const at = (secondsBeforeNow: number) => new Date(Date.parse(DisruptionNow) - secondsBeforeNow * 1000).toISOString().replace('.000Z', 'Z');

const pool = (i: number) =>
  fc
    .record({
      policy: fc.constantFrom('WhenEmpty', 'WhenEmptyOrUnderutilized', 'WhenEmptyOrUnderutilized'),
      after: fc.constantFrom('0s', '0s', '30s', '10m', 'Never'),
      budget: fc.constantFrom('10%', '100%', '100%', '1', '2', '0', '50%'),
      onDemandOnly: fc.boolean(),
      // a terminationGracePeriod, which lets drift (eventual disruption) pass do-not-disrupt pods and blocking PDBs
      grace: fc.constantFrom(undefined, undefined, '300s'),
    })
    .map((r) => ({
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodePool',
      metadata: { name: `np-${i}` },
      spec: {
        disruption: { consolidationPolicy: r.policy, consolidateAfter: r.after, budgets: [{ nodes: r.budget }] },
        template: {
          spec: {
            nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
            requirements: r.onDemandOnly ? [{ key: L.LabelCapacityType, operator: 'In', values: ['on-demand'] }] : [],
            ...(r.grace ? { terminationGracePeriod: r.grace } : {}),
          },
        },
      },
    }));

const milli = (q: string) => (q.endsWith('m') ? Number(q.slice(0, -1)) : Number(q) * 1000);
const mebi = (q: string) => (q.endsWith('Mi') ? Number(q.slice(0, -2)) : Number(q.slice(0, -2)) * 1024);

/** A registered, initialized, Ready node of one of the types in one of the pools, created 2 h or 5 min ago, with the pods that fit on it. */
const node = (i: number, types: CaseInstanceType[], pools: number) =>
  fc
    .record({
      type: fc.constantFrom(...types),
      pool: fc.nat({ max: pools - 1 }),
      offering: fc.nat(),
      createdAgo: fc.constantFrom(7200, 7200, 300),
      pods: fc.array(
        fc.record({
          cpu: fc.constantFrom('100m', '250m', '500m', '1'),
          memory: fc.constantFrom('128Mi', '512Mi', '1Gi'),
          app: fc.nat({ max: 2 }),
          // seconds before now the pod started: long ago, or within the last 30 s consolidateAfter
          startedAgo: fc.constantFrom(3600, 3600, 3600, 10),
          // 1 in 20 pods is marked karpenter.sh/do-not-disrupt
          dnd: fc.nat({ max: 19 }),
        }),
        { maxLength: 4 },
      ),
    })
    .map((r): { node: Node; pods: Pod[] } => {
      const offerings = r.type.offerings!;
      const o = offerings[r.offering % offerings.length];
      const name = `node-${i}`;
      const alloc = r.type.allocatable!;
      const created = at(Math.max(r.createdAgo, 0));
      const node = launchedNode(i, r.type, o, `np-${r.pool}`, {
        created,
        labels: { [L.LabelRegistered]: 'true', [L.LabelInitialized]: 'true' },
        conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: created }],
      });
      // keep the pods that fit the node's allocatable, in order
      let cpu = milli(String(alloc.cpu));
      let mem = mebi(String(alloc.memory));
      let slots = Number(alloc.pods);
      const pods: Pod[] = [];
      r.pods.forEach((p, k) => {
        if (milli(p.cpu) > cpu || mebi(p.memory) > mem || slots < 1) return;
        cpu -= milli(p.cpu);
        mem -= mebi(p.memory);
        slots--;
        const started = at(Math.min(p.startedAgo, r.createdAgo - 60));
        pods.push({
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: {
            name: `pod-${i}-${k}`,
            namespace: 'default',
            creationTimestamp: started,
            labels: { app: `app-${p.app}` },
            ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: `app-${p.app}`, uid: `rs-${p.app}`, controller: true }],
            ...(p.dnd === 0 ? { annotations: { [L.AnnotationDoNotDisrupt]: 'true' } } : {}),
          },
          spec: {
            nodeName: name,
            containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.9', resources: { requests: { cpu: p.cpu, memory: p.memory } } }],
          },
          status: { phase: 'Running', startTime: started },
        } as Pod);
      });
      return { node, pods };
    });

/** A PDB over one app that allows no disruption (it blocks every node running one of its pods). */
const pdb = (app: number): PodDisruptionBudget =>
  ({
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name: `pdb-app-${app}`, namespace: 'default' },
    spec: { maxUnavailable: 0, selector: { matchLabels: { app: `app-${app}` } } },
  }) as PodDisruptionBudget;

/** A whole disruption scenario. */
export const disruptionScenario: fc.Arbitrary<DisruptionScenario> = fc
  .record({
    types: fc.integer({ min: 2, max: 5 }).chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => madeUpType(i)))),
    pools: fc.integer({ min: 1, max: 2 }).chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => pool(i)))),
    nodeCount: fc.integer({ min: 1, max: 6 }),
    pdbApp: fc.option(fc.nat({ max: 2 }), { freq: 5 }),
    spotToSpot: fc.boolean(),
  })
  .chain((s) =>
    fc.tuple(...Array.from({ length: s.nodeCount }, (_, i) => node(i, s.types, s.pools.length))).map((nodes): DisruptionScenario => ({
      now: DisruptionNow,
      instanceTypes: s.types,
      nodePools: s.pools,
      nodes: nodes.map((n) => n.node),
      pods: nodes.flatMap((n) => n.pods),
      daemonSets: [],
      pdbs: s.pdbApp === null ? [] : [pdb(s.pdbApp)],
      settings: {},
      spotToSpotConsolidation: s.spotToSpot,
    })),
  );
