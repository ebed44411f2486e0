/**
 * Karpenter's consolidation "TTL" tests (sigs.k8s.io/karpenter v1.15.0
 * pkg/controllers/disruption/consolidation_test.go, contexts TTL and Multi-NodeClaim): a command is
 * decided, the cluster changes during the validation wait, and the command is re-checked after it.
 * Here: `planDisruption` at T, `validateCommand` at T+5 s (still waiting) and at T+31 s against
 * the changed cluster (test/cases/karpenter/COVERAGE.md names each test).
 *
 * Situations are written as scenario-case documents (test/cases/FORMAT.md) and turned into
 * snapshots by the case runner's `snapshotFromCase`.
 */
import { describe, expect, it } from 'vitest';
import type { KubeObject, Node, Pod } from '../../../shared/api/kube.ts';
import type { CaseInstanceType } from '../../../shared/catalog/index.ts';
import { planDisruption, validateCommand } from '../../../shared/disruption/index.ts';
import { snapshotFromCase, type DisruptionCaseDoc } from '../../../functions/cli/cases/disruption.ts';

const T = new Date('2026-03-02T10:00:00Z');
const During = new Date(T.getTime() + 5_000);
const After = new Date(T.getTime() + 31_000);

function itype(name: string, cpu: number, price: number, capacityType: 'on-demand' | 'spot' = 'on-demand'): CaseInstanceType {
  return {
    name,
    cpu,
    memoryMiB: cpu * 4096,
    pods: 100,
    arch: 'amd64',
    os: 'linux',
    overhead: { cpu: '100m', memory: '10Mi' },
    offerings: [{ zone: 'test-zone-1', capacityType, price }],
  };
}
const Types = [itype('small', 2, 0.2), itype('small-spot', 2, 0.2, 'spot'), itype('big', 32, 3.2), itype('big-spot', 32, 3.2, 'spot')];

function node(name: string, type: string, capacityType = 'on-demand'): Node {
  const labels = {
    'karpenter.sh/nodepool': 'default',
    'karpenter.sh/registered': 'true',
    'karpenter.sh/initialized': 'true',
    'node.kubernetes.io/instance-type': type,
    'karpenter.sh/capacity-type': capacityType,
    'topology.kubernetes.io/zone': 'test-zone-1',
    'kubernetes.io/arch': 'amd64',
    'kubernetes.io/os': 'linux',
    'kubernetes.io/hostname': name,
  };
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, creationTimestamp: '2026-03-02T08:00:00Z', labels },
    spec: { providerID: `aws:///test-zone-1/i-${name}` },
    status: {
      allocatable: { cpu: '32', memory: '64Gi', pods: '100' },
      capacity: { cpu: '32', memory: '64Gi', pods: '100' },
      conditions: [{ type: 'Ready', status: 'True' }],
    },
  } as Node;
}

function pod(name: string, nodeName: string, o: { cpu?: string; annotations?: Record<string, string>; labels?: Record<string, string> } = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: 'default',
      labels: o.labels ?? { app: 'test' },
      ...(o.annotations ? { annotations: o.annotations } : {}),
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'rs-1', controller: true }],
    },
    spec: { nodeName, containers: [{ name: 'c', ...(o.cpu ? { resources: { requests: { cpu: o.cpu } } } : {}) }] },
    status: { phase: 'Running', startTime: '2026-03-02T09:00:00Z' },
  } as Pod;
}

const BlockingPdb = {
  apiVersion: 'policy/v1',
  kind: 'PodDisruptionBudget',
  metadata: { name: 'pdb', namespace: 'default' },
  spec: { selector: { matchLabels: { blocked: 'yes' } }, maxUnavailable: 0 },
} as KubeObject;

function doc(nodes: Node[], objects: (Pod | KubeObject)[]): DisruptionCaseDoc {
  return {
    instanceTypes: Types,
    nodePools: [
      {
        apiVersion: 'karpenter.sh/v1',
        kind: 'NodePool',
        metadata: { name: 'default' },
        spec: {
          disruption: { consolidationPolicy: 'WhenEmptyOrUnderutilized', consolidateAfter: '0s', budgets: [{ nodes: '100%' }] },
          template: { spec: { nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' }, requirements: [] } },
        },
      },
    ],
    nodes,
    objects: objects as KubeObject[],
    // consolidation_test.go's BeforeEach turns the gate on for the whole suite.
    settings: { featureGates: { SpotToSpotConsolidation: true } },
  };
}

/** Plans at T, checks the command waits at T+5 s, and returns its validation at T+31 s against `later`. */
function decideThenValidate(before: DisruptionCaseDoc, later: DisruptionCaseDoc) {
  const cmd = planDisruption(snapshotFromCase(before), T).command;
  expect(cmd).toBeDefined();
  expect(validateCommand(cmd!, snapshotFromCase(before), During).status).toBe('wait');
  return { cmd: cmd!, outcome: validateCommand(cmd!, snapshotFromCase(later), After) };
}

describe('Karpenter consolidation TTL: the command is re-checked after the validation wait', () => {
  const two = [node('n0', 'small'), node('n1', 'small')];
  const twoPods = [pod('p0', 'n0'), pod('p1', 'n0'), pod('p2', 'n1')];

  it('should wait for the node TTL for non-empty nodes before consolidating', () => {
    const { cmd, outcome } = decideThenValidate(doc(two, twoPods), doc(two, twoPods));
    expect(cmd.candidates.map((c) => c.nodeName)).toEqual(['n1']);
    expect(outcome.status).toBe('valid');
  });

  it('should not consolidate if the action picks different instance types after the node TTL wait', () => {
    // A big node with a 1-vCPU pod would be replaced by a small one; a second 1-vCPU pod arrives.
    const before = doc([node('n0', 'big')], [pod('p0', 'n0', { cpu: '1' })]);
    const later = doc([node('n0', 'big')], [pod('p0', 'n0', { cpu: '1' }), pod('p1', 'n0', { cpu: '1' })]);
    const { cmd, outcome } = decideThenValidate(before, later);
    expect(cmd.decision).toBe('replace');
    expect(outcome.status).toBe('invalid');
  });

  it('should not consolidate if the action becomes invalid during the node TTL wait', () => {
    const { outcome } = decideThenValidate(
      doc([node('n0', 'small')], []),
      doc([node('n0', 'small')], [pod('p0', 'n0', { annotations: { 'karpenter.sh/do-not-disrupt': 'true' } })]),
    );
    expect(outcome.status).toBe('invalid');
  });

  it('should not replace node if a pod schedules with karpenter.sh/do-not-disrupt set to true during the TTL wait', () => {
    const before = doc([node('n0', 'big')], [pod('p0', 'n0')]);
    const later = doc([node('n0', 'big')], [pod('p0', 'n0'), pod('p1', 'n0', { annotations: { 'karpenter.sh/do-not-disrupt': 'true' } })]);
    const { cmd, outcome } = decideThenValidate(before, later);
    expect(cmd.decision).toBe('replace');
    expect(outcome.status).toBe('invalid');
  });

  it('should not replace node if a pod schedules with a blocking PDB during the TTL wait', () => {
    const before = doc([node('n0', 'big')], [pod('p0', 'n0')]);
    const later = doc([node('n0', 'big')], [pod('p0', 'n0'), pod('p1', 'n0', { labels: { blocked: 'yes' } }), BlockingPdb]);
    const { cmd, outcome } = decideThenValidate(before, later);
    expect(cmd.decision).toBe('replace');
    expect(outcome.status).toBe('invalid');
  });

  it('should not delete node if pods schedule with karpenter.sh/do-not-disrupt set to true during the TTL wait', () => {
    const dnd = { annotations: { 'karpenter.sh/do-not-disrupt': 'true' } };
    const later = doc(two, [pod('p0', 'n0', dnd), pod('p1', 'n0', dnd), pod('p2', 'n1', dnd)]);
    const { cmd, outcome } = decideThenValidate(doc(two, twoPods), later);
    expect(cmd.decision).toBe('delete');
    expect(outcome.status).toBe('invalid');
  });

  it('should not delete node if pods schedule with a blocking PDB during the TTL wait', () => {
    const blocked = { labels: { blocked: 'yes' } };
    const later = doc(two, [pod('p0', 'n0', blocked), pod('p1', 'n0', blocked), pod('p2', 'n1', blocked), BlockingPdb]);
    const { cmd, outcome } = decideThenValidate(doc(two, twoPods), later);
    expect(cmd.decision).toBe('delete');
    expect(outcome.status).toBe('invalid');
  });
});

describe('Karpenter consolidation Multi-NodeClaim TTL', () => {
  it.each([['on-demand'], ['spot']])('should wait for the node TTL for non-empty nodes before consolidating (multi-node) [%s]', (ct) => {
    // Two big nodes (two pods on n0, one on n1) become one small replacement once the wait is over.
    const type = ct === 'spot' ? 'big-spot' : 'big';
    const two = [node('n0', type, ct), node('n1', type, ct)];
    const pods = [pod('p0', 'n0'), pod('p1', 'n0'), pod('p2', 'n1')];
    const { cmd, outcome } = decideThenValidate(doc(two, pods), doc(two, pods));
    expect(cmd.method).toBe('multi-node-consolidation');
    expect(cmd.candidates.map((c) => c.nodeName).sort()).toEqual(['n0', 'n1']);
    expect(cmd.decision).toBe('replace');
    expect(outcome.status).toBe('valid');
  });

  // Known difference (COVERAGE.md FAILS): Karpenter drops a multi-node command when pods land on
  // its candidates during the wait (pod churn); nodefleet re-simulates and keeps the command while
  // the same decision still holds, so this expectation fails — `it.fails` keeps that visible and
  // turns red the day nodefleet behaves like Karpenter here.
  it.fails.each([['on-demand'], ['spot']])(
    'should continue to single nodeclaim consolidation when multi-nodeclaim consolidation fails validation after the node ttl [%s]',
    (ct) => {
      // Three big nodes with a pod each; during the wait n0 and n1 get another pod each: the
      // multi-node command is dropped, and the next decision consolidates n2 alone.
      const type = ct === 'spot' ? 'big-spot' : 'big';
      const three = [node('n0', type, ct), node('n1', type, ct), node('n2', type, ct)];
      const pods = [pod('p0', 'n0'), pod('p1', 'n1'), pod('p2', 'n2')];
      const later = doc(three, [...pods, pod('x0', 'n0'), pod('x1', 'n1')]);
      const { cmd, outcome } = decideThenValidate(doc(three, pods), later);
      expect(cmd.method).toBe('multi-node-consolidation');
      expect(outcome.status).toBe('invalid');
      const next = planDisruption(snapshotFromCase(later), After).command;
      expect(next?.candidates.map((c) => c.nodeName)).toEqual(['n2']);
    },
  );
});

describe('Karpenter consolidation Delete: emptiness under pod churn', () => {
  // Known difference (COVERAGE.md FAILS): Karpenter's emptiness validation keeps the candidates
  // that are still empty and deletes those; nodefleet drops the whole command when one of its
  // nodes got a pod during the wait, and deletes the other on the next run.
  it.fails('does not delete nodes with pod churn, deletes nodes without pod churn', () => {
    const two = [node('n0', 'small'), node('n1', 'small')];
    const { cmd, outcome } = decideThenValidate(doc(two, []), doc(two, [pod('p0', 'n0')]));
    expect(cmd.candidates.map((c) => c.nodeName).sort()).toEqual(['n0', 'n1']);
    expect(outcome).toMatchObject({ status: 'valid', command: { candidates: [{ nodeName: 'n1' }] } });
  });
});
