import { describe, expect, it } from 'vitest';
import { classifyPod, drainGroup, DrainGroups, drainWaitSeconds, pendingVolumeAttachments, planDrain } from '../../../shared/disruption/drain-plan.ts';
import { doNotDisruptUntilMs, isDoNotDisruptActive } from '../../../shared/disruption/pods.ts';
import { pod } from '../../fakes/index.ts';

const t0 = Date.parse('2026-01-01T00:00:00Z');
const names = (ps: { metadata: { name: string } }[]) => ps.map((p) => p.metadata.name);

describe('planDrain', () => {
  it('leaves mirror, terminal and disrupted-tolerating pods alone; DaemonSet pods are drained, after the others', () => {
    const pods = [
      pod({ name: 'ds', owner: 'DaemonSet' }),
      pod({ name: 'mirror', mirror: true }),
      pod({ name: 'done', phase: 'Succeeded' }),
      pod({ name: 'tolerant', tolerations: [{ key: 'karpenter.sh/disrupted', operator: 'Exists', effect: 'NoSchedule' }] }),
      pod({ name: 'web' }),
    ];
    expect(pods.map(classifyPod)).toEqual(['drainable', 'mirror', 'terminal', 'tolerates-disrupted', 'drainable']);
    const plan = planDrain(pods, t0, undefined);
    expect(names(plan.evict)).toEqual(['web']);
    expect(names(plan.blocking)).toEqual(['ds', 'web']);
    expect(names(planDrain([pods[0]], t0, undefined).evict)).toEqual(['ds']);
  });

  it("evicts in Karpenter's four groups, one at a time: non-critical, non-critical DaemonSet, critical, critical DaemonSet", () => {
    const web = pod({ name: 'web' });
    const ds = pod({ name: 'ds', owner: 'DaemonSet' });
    const dns = pod({ name: 'dns', priorityClassName: 'system-cluster-critical' });
    const cni = pod({ name: 'cni', owner: 'DaemonSet', priorityClassName: 'system-node-critical' });
    expect([web, ds, dns, cni].map(drainGroup)).toEqual([...DrainGroups]);
    const all = [cni, dns, ds, web];
    const order: string[] = [];
    for (let left = all; left.length;) {
      const evict = names(planDrain(left, t0, undefined).evict);
      order.push(...evict);
      left = left.filter((p) => !evict.includes(p.metadata.name));
    }
    expect(order).toEqual(['web', 'ds', 'dns', 'cni']);
  });

  it('VolumeAttachments keep the instance, except those of pods the drain does not move (and those without a PersistentVolume)', () => {
    const va = (name: string, pv?: string) => ({
      metadata: { name },
      spec: { attacher: 'ebs.csi.aws.com', nodeName: 'n', source: pv ? { persistentVolumeName: pv } : {} },
    });
    const vas = [va('a', 'pv-a'), va('b', 'pv-b'), va('c', 'pv-c'), va('inline')];
    const tolerant = pod({ name: 'tolerant', tolerations: [{ operator: 'Exists' }] });
    tolerant.spec.volumes = [{ name: 'data', persistentVolumeClaim: { claimName: 'data-b' } }];
    const stuck = pod({ name: 'stuck' });
    stuck.metadata.deletionTimestamp = new Date(t0 - 61_000).toISOString();
    stuck.spec.volumes = [{ name: 'scratch', ephemeral: {} }];
    const web = pod({ name: 'web' });
    web.spec.volumes = [{ name: 'data', persistentVolumeClaim: { claimName: 'data-a' } }];
    const pvs = new Map([
      ['default/data-a', 'pv-a'],
      ['default/data-b', 'pv-b'],
      ['default/stuck-scratch', 'pv-c'],
    ]);
    expect(pendingVolumeAttachments(vas, [tolerant, stuck, web], pvs, t0).map((v) => v.metadata.name)).toEqual(['a']);
    // Not yet stuck: its volume still waits.
    expect(pendingVolumeAttachments(vas, [tolerant, stuck, web], pvs, t0 - 2_000).map((v) => v.metadata.name)).toEqual(['a', 'c']);
  });

  it('evicts critical pods only once every non-critical pod is gone (terminating ones count)', () => {
    const critical = pod({ name: 'coredns', priorityClassName: 'system-cluster-critical' });
    const terminating = pod({ name: 'web' });
    terminating.metadata.deletionTimestamp = new Date(t0 + 20_000).toISOString();
    expect(names(planDrain([critical, terminating], t0, undefined).evict)).toEqual([]);
    expect(names(planDrain([critical], t0, undefined).evict)).toEqual(['coredns']);
  });

  it('holds do-not-disrupt pods; the duration form expires after pod start + duration', () => {
    const held = pod({ name: 'batch', annotations: { 'karpenter.sh/do-not-disrupt': 'true' } });
    const timed = pod({ name: 'timed', annotations: { 'karpenter.sh/do-not-disrupt': '10m' } });
    timed.status = { phase: 'Running', startTime: new Date(t0 - 9 * 60_000).toISOString() };
    expect(doNotDisruptUntilMs(timed)).toBe(t0 + 60_000);
    const plan = planDrain([held, timed], t0, undefined);
    expect(names(plan.held)).toEqual(['batch', 'timed']);
    expect(plan.evict).toEqual([]);
    expect(plan.nextEventMs).toBe(t0 + 60_000);
    expect(names(planDrain([held, timed], t0 + 60_001, undefined).evict)).toEqual(['timed']);
  });

  it('do-not-disrupt: one rule for the drain and for disruption, as Karpenter parses it (Go durations; other values do not hold)', () => {
    const started = (v: string, start?: number) => {
      const p = pod({ name: `p-${v}`, annotations: { 'karpenter.sh/do-not-disrupt': v } });
      p.status = { phase: 'Running', ...(start !== undefined ? { startTime: new Date(start).toISOString() } : {}) };
      return p;
    };
    const cases: [string, number | undefined, number | undefined][] = [
      ['true', t0, Infinity],
      ['yes', t0, undefined], // not a duration: Karpenter treats it as absent (and evicts)
      ['Never', t0, undefined],
      ['false', t0, undefined],
      ['0s', t0, undefined], // must be positive
      ['-5m', t0, undefined],
      ['1.5h', t0, t0 + 5_400_000],
      ['90s', t0, t0 + 90_000],
      ['500ms', t0, t0 + 500],
      ['10m', undefined, Infinity], // no start time: held (fail safe)
    ];
    for (const [v, start, until] of cases) {
      const p = started(v, start);
      expect(doNotDisruptUntilMs(p), v).toBe(until);
      expect(isDoNotDisruptActive(p, new Date(t0)), v).toBe(until !== undefined);
      expect(names(planDrain([p], t0, undefined).held), v).toEqual(until !== undefined ? [p.metadata.name] : []);
    }
  });

  it('deletes a pod early at deadline − its grace, with the remaining seconds as grace', () => {
    const p = pod({ name: 'web', terminationGracePeriodSeconds: 120 });
    const deadline = t0 + 600_000;
    expect(planDrain([p], deadline - 121_000, deadline)).toMatchObject({ deleteEarly: [], nextEventMs: deadline - 120_000 });
    const plan = planDrain([p], deadline - 100_000, deadline);
    expect(plan.deleteEarly.map((d) => d.graceSeconds)).toEqual([100]);
    expect(plan.evict).toEqual([]);
  });

  it('a pod stuck terminating for more than a minute past its deletion time stops blocking', () => {
    const p = pod({ name: 'stuck' });
    p.metadata.deletionTimestamp = new Date(t0).toISOString();
    expect(planDrain([p], t0 + 60_000, undefined).drained).toBe(false);
    expect(planDrain([p], t0 + 60_001, undefined).drained).toBe(true);
  });

  it('reports the deadline', () => {
    expect(planDrain([pod({ name: 'web' })], t0 + 1000, t0 + 1000).deadlineReached).toBe(true);
    expect(planDrain([], t0, t0 + 1000)).toMatchObject({ drained: true, deadlineReached: false });
  });
});

describe('drainWaitSeconds', () => {
  it('slows down as the drain drags on, never sleeping past the next event', () => {
    expect([1, 24, 25, 84, 85].map((a) => drainWaitSeconds(a, t0, undefined, true))).toEqual([5, 5, 15, 15, 60]);
    expect(drainWaitSeconds(201, t0, undefined, false)).toBe(300);
    expect(drainWaitSeconds(100, t0, t0 + 2_500, true)).toBe(3);
    expect(drainWaitSeconds(1, t0, t0 + 10, true)).toBe(1);
  });
});
