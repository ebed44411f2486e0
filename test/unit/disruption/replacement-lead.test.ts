/**
 * Capacity for a pod only the terminationGracePeriod cutoff will move (a fully blocking PDB,
 * do-not-disrupt) is launched ReplacementLeadSeconds before the cutoff deletes it: the rule
 * (shared/disruption/pods.ts), the drain plan's wake-up, the Drain task's request to the
 * provisioner, and the provisioner's pass reading the deadline from the claim's record.
 */
import { describe, expect, it } from 'vitest';
import {
  cutoffDeletionMs,
  deletingNodePods,
  DefaultPodGraceSeconds,
  isCurrentlyReschedulable,
  PdbLimits,
  podGraceSeconds,
  ReplacementLeadSeconds,
  replacementDueMs,
} from '../../../shared/disruption/pods.ts';
import { planDrain } from '../../../shared/disruption/drain-plan.ts';
import { AnnotationDoNotDisrupt } from '../../../shared/api/labels.ts';
import { DetailTypeUnschedulablePods, TerminationSource } from '../../../shared/api/contract.ts';
import { UnschedulablePodsDetailSchema } from '../../../shared/api/agent-events.ts';
import type { PodDisruptionBudget } from '../../../shared/api/kube.ts';
import { node, nodeClaimOf, pdb, pod } from '../../fakes/index.ts';
import { harness, NodeName } from '../termination/helpers.ts';
import { parseInput, run as provisionerRun } from '../../../functions/provisioner/handler.ts';
import { provisionerWorld, unschedulableEvent } from '../provisioner/world.ts';
import { ValidationError } from '../../../shared/api/errors.ts';

const t0 = Date.parse('2026-03-11T02:00:00Z');
const Lead = ReplacementLeadSeconds * 1000;
const blockingPdb = (app: string): PodDisruptionBudget => ({
  apiVersion: 'policy/v1',
  kind: 'PodDisruptionBudget',
  metadata: { name: app, namespace: 'default' },
  spec: { selector: { matchLabels: { app } }, maxUnavailable: 0 },
});

describe('the rule: when the cutoff deletes a pod, and when its replacement is due', () => {
  it('the cutoff deletes a pod its grace period before the node deadline; capacity is due the lead time before that', () => {
    const ledger = pod({ name: 'ledger', terminationGracePeriodSeconds: 60 });
    const plain = pod({ name: 'plain' });
    const deadline = t0 + 300_000;
    expect(podGraceSeconds(plain)).toBe(DefaultPodGraceSeconds);
    expect(cutoffDeletionMs(ledger, deadline)).toBe(deadline - 60_000);
    expect(cutoffDeletionMs(plain, deadline)).toBe(deadline - DefaultPodGraceSeconds * 1000);
    expect(replacementDueMs(ledger, deadline)).toBe(deadline - 60_000 - Lead);
  });

  it('a pod a fully blocking PDB holds counts as reschedulable only once its cutoff is within the lead time', () => {
    const ledger = pod({ name: 'ledger', nodeName: 'n1', labels: { app: 'ledger' }, terminationGracePeriodSeconds: 60 });
    const limits = new PdbLimits([blockingPdb('ledger')], []);
    const deadline = t0 + 300_000;
    const due = replacementDueMs(ledger, deadline);
    // Karpenter's rule without a deadline: never.
    expect(isCurrentlyReschedulable(ledger, limits, new Date(due))).toBe(false);
    expect(isCurrentlyReschedulable(ledger, limits, new Date(due - 1), deadline)).toBe(false);
    expect(isCurrentlyReschedulable(ledger, limits, new Date(due), deadline)).toBe(true);
    expect(isCurrentlyReschedulable(ledger, limits, new Date(deadline + 1), deadline)).toBe(true);
  });

  it('so does a pod do-not-disrupt holds; a DaemonSet or terminating pod never does', () => {
    const held = pod({ name: 'batch', nodeName: 'n1', annotations: { [AnnotationDoNotDisrupt]: 'true' } });
    const ds = pod({ name: 'agent', nodeName: 'n1', owner: 'DaemonSet' });
    const terminating = {
      ...pod({ name: 'old', nodeName: 'n1' }),
      metadata: { ...pod({ name: 'old' }).metadata, deletionTimestamp: new Date(t0).toISOString() },
    };
    const limits = new PdbLimits([], []);
    const deadline = t0 + 200_000;
    const at = new Date(deadline - 30_000);
    expect(isCurrentlyReschedulable(held, limits, at)).toBe(false);
    expect(isCurrentlyReschedulable(held, limits, at, deadline)).toBe(true);
    expect(isCurrentlyReschedulable(ds, limits, at, deadline)).toBe(false);
    expect(isCurrentlyReschedulable(terminating, limits, at, deadline)).toBe(false);
  });

  it("deletingNodePods takes a deleting node's held pod from the due time on, with that node's deadline only", () => {
    const tainted = (name: string) => node({ name, taints: [{ key: 'karpenter.sh/disrupted', effect: 'NoSchedule' }] });
    const nodes = [tainted('n1'), tainted('n2')];
    const ledger = (n: string) => pod({ name: `ledger-${n}`, nodeName: n, labels: { app: 'ledger' }, terminationGracePeriodSeconds: 60 });
    const byNode = new Map([
      ['n1', [ledger('n1')]],
      ['n2', [ledger('n2')]],
    ]);
    const deadline = t0 + 300_000;
    const due = deadline - 60_000 - Lead;
    const names = (at: number) =>
      deletingNodePods(nodes, byNode, [blockingPdb('ledger')], new Date(at), { deadlines: new Map([['n1', deadline]]) }).map((p) => p.metadata.name);
    expect(names(due - 1)).toEqual([]);
    expect(names(due)).toEqual(['ledger-n1']);
    expect(deletingNodePods(nodes, byNode, [blockingPdb('ledger')], new Date(due))[0]).toBeUndefined();
    expect(
      deletingNodePods(nodes, byNode, [blockingPdb('ledger')], new Date(due), { deadlines: new Map([['n1', deadline]]) })[0].spec.nodeName,
    ).toBeUndefined();
  });
});

describe('the drain plan wakes up when a replacement is due', () => {
  it('replacementDue is the earliest due time of the pods still there (not DaemonSet, not terminating), and the loop wakes then', () => {
    const deadline = t0 + 300_000;
    const ledger = pod({ name: 'ledger', terminationGracePeriodSeconds: 60 });
    const quick = pod({ name: 'quick', terminationGracePeriodSeconds: 10 });
    const ds = pod({ name: 'ds', owner: 'DaemonSet', terminationGracePeriodSeconds: 120 });
    const plan = planDrain([ledger, quick, ds], t0, deadline);
    expect(plan.replacementDue).toBe(deadline - 60_000 - Lead);
    expect(plan.nextEventMs).toBe(deadline - 60_000 - Lead);
    expect(planDrain([ds], t0, deadline).replacementDue).toBeUndefined();
    expect(planDrain([ledger], t0, undefined).replacementDue).toBeUndefined();
  });
});

describe('the Drain task asks the provisioner for the capacity, once, when it is due', () => {
  it('PDB at zero until the deadline: one Unschedulable Pods event of the termination source, without pods, between the due time and the cutoff', async () => {
    const h = harness();
    const published: number[] = [];
    const publish = h.w.publisher.publish.bind(h.w.publisher);
    h.w.publisher.publish = async (entries) => {
      published.push(h.w.clock.nowMs());
      return publish(entries);
    };
    h.w.kube.addPdb(pdb({ name: 'ledger', matchLabels: { app: 'ledger' }, disruptionsAllowed: 0 }));
    h.w.kube.addPod(pod({ name: 'ledger-1', nodeName: NodeName, labels: { app: 'ledger' }, terminationGracePeriodSeconds: 60 }));
    const deadline = h.t0 + 300_000;

    const rec = await h.run({ deadlineEpochMs: deadline });

    expect(rec.status).toBe('SUCCEEDED');
    expect(h.w.publisher.published).toHaveLength(1);
    const [entry] = h.w.publisher.published;
    expect(entry).toMatchObject({ source: TerminationSource, detailType: DetailTypeUnschedulablePods });
    expect(UnschedulablePodsDetailSchema.parse(entry.detail).pods).toEqual([]);
    expect(published[0]).toBeGreaterThanOrEqual(deadline - 60_000 - Lead);
    expect(published[0]).toBeLessThan(deadline - 60_000);
  });

  it('a pod the drain evicts gets no request: its replacement is pending at once', async () => {
    const h = harness();
    h.w.kube.addPod(pod({ name: 'web-1', nodeName: NodeName, terminationGracePeriodSeconds: 60 }));
    const rec = await h.run({ deadlineEpochMs: h.t0 + 300_000 });
    expect(rec.status).toBe('SUCCEEDED');
    expect(h.w.publisher.published).toEqual([]);
  });
});

describe('the provisioner launches the capacity from the deadline the claim records', () => {
  /** A node being drained (karpenter.sh/disrupted) with `ledger` under a fully blocking PDB, its claim Terminating with a deadline. */
  function world() {
    const world = provisionerWorld();
    const { w } = world;
    const providerID = 'aws:///ap-northeast-2a/i-0ledger00000000001';
    const n = node({
      name: 'ip-10-0-9-9',
      providerID,
      labels: { 'karpenter.sh/nodepool': 'default', 'karpenter.sh/initialized': 'true' },
      taints: [{ key: 'karpenter.sh/disrupted', effect: 'NoSchedule' }],
      unschedulable: true,
      allocatable: { cpu: '3', memory: '6Gi', pods: '20' },
    });
    w.kube.addNode(n);
    w.kube.addPod(pod({ name: 'ledger', cpu: '1', memory: '1Gi', nodeName: n.metadata.name, labels: { app: 'ledger' }, terminationGracePeriodSeconds: 60 }));
    w.kube.addPdb(blockingPdb('ledger'));
    const deadline = w.clock.nowMs() + 300_000;
    w.store.put(
      nodeClaimOf(n, {
        phase: 'Terminating',
        termination: { attempt: 1, reason: 'expiration', deadlineEpochMs: deadline, startedAt: w.clock.now().toISOString() },
      }),
    );
    return { ...world, deadline };
  }

  it('a full pass before the due time launches nothing; one at it launches a claim for the held pod', async () => {
    const { w, deps, deadline } = world();
    const early = await provisionerRun(parseInput(unschedulableEvent([], 'e1')), deps);
    expect(early.created).toEqual([]);
    w.clock.advanceSeconds((deadline - 60_000 - Lead - w.clock.nowMs()) / 1000);
    const due = await provisionerRun(parseInput({ ...unschedulableEvent([], 'e2'), source: TerminationSource }), deps);
    expect(due.launched).toHaveLength(1);
    expect((await w.store.list()).find((c) => c.name === due.created[0])?.pods).toEqual(['default/ledger']);
  });

  it('without a Terminating claim recording a deadline, the held pod gets nothing (the event says nothing about it)', async () => {
    const { w, deps, deadline } = world();
    const claim = (await w.store.list())[0];
    w.store.put({ ...claim, phase: 'Initialized', termination: undefined });
    w.clock.advanceSeconds((deadline - 60_000 - w.clock.nowMs()) / 1000);
    const summary = await provisionerRun(parseInput({ ...unschedulableEvent([], 'e1'), source: TerminationSource }), deps);
    expect(summary.created).toEqual([]);
  });

  it('an event of the termination source that carries pods is refused', () => {
    const withPods = { ...unschedulableEvent([pod({ name: 'forged', phase: 'Pending' })]), source: TerminationSource };
    expect(() => parseInput(withPods)).toThrow(ValidationError);
    expect(() => parseInput(withPods)).toThrow(/carries no pods/);
  });
});
