import { describe, expect, it } from 'vitest';
import { pod } from '../../fakes/index.ts';
import { UnschedulableBackoff, podShapeKey, schedulingConfigKey } from '../../../shared/scheduling/unschedulable-backoff.ts';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const big = (name: string) => pod({ name, cpu: '900', memory: '1Gi', labels: { app: 'big' } });
const small = (name: string) => pod({ name, cpu: '1', memory: '1Gi', labels: { app: 'small' } });

describe('UnschedulableBackoff', () => {
  it('a shape waits 30 s, 60 s, 120 s, ... capped at 5 minutes between attempts', () => {
    const b = new UnschedulableBackoff();
    expect([1, 2, 3, 4, 5, 9].map((n) => b.delaySeconds(n))).toEqual([30, 60, 120, 240, 300, 300]);
  });

  it('pods of a failed shape wait; other shapes are solved; the wait doubles per failure', () => {
    // Prepare
    const b = new UnschedulableBackoff();
    b.record({ unschedulable: [big('a')], scheduled: [small('s')] }, 'cfg', T0);
    // Act: a sibling of the failed pod (same shape, other name) and a new small pod, 10 s later
    const early = b.partition([big('b'), small('t')], 'cfg', T0 + 10_000);
    // Assess
    expect(early.solve.map((p) => p.metadata.name)).toEqual(['t']);
    expect(early.waiting).toEqual([{ pod: expect.objectContaining({ metadata: expect.objectContaining({ name: 'b' }) }), retryAtMs: T0 + 30_000 }]);
    expect(b.partition([big('b')], 'cfg', T0 + 30_000).solve).toHaveLength(1);
    // second failure at 30 s: next attempt 60 s later
    b.record({ unschedulable: [big('b')], scheduled: [] }, 'cfg', T0 + 30_000);
    expect(b.partition([big('b')], 'cfg', T0 + 89_000).waiting).toHaveLength(1);
    expect(b.partition([big('b')], 'cfg', T0 + 90_000).solve).toHaveLength(1);
  });

  it('a NodePool / EC2NodeClass change forgets every shape; a placed pod forgets its shape', () => {
    const b = new UnschedulableBackoff();
    b.record({ unschedulable: [big('a')], scheduled: [] }, 'cfg-1', T0);
    expect(b.partition([big('a')], 'cfg-1', T0 + 1_000).solve).toHaveLength(0);
    expect(b.partition([big('a')], 'cfg-2', T0 + 1_000).solve).toHaveLength(1);
    b.record({ unschedulable: [big('a')], scheduled: [] }, 'cfg-2', T0 + 2_000);
    b.record({ unschedulable: [], scheduled: [big('c')] }, 'cfg-2', T0 + 3_000);
    expect(b.partition([big('a')], 'cfg-2', T0 + 4_000).solve).toHaveLength(1);
    expect(b.size).toBe(0);
  });

  it('a shape with some pods placed in the pass does not back off (room ran out mid-pass)', () => {
    const b = new UnschedulableBackoff();
    b.record({ unschedulable: [big('a')], scheduled: [big('b')] }, 'cfg', T0);
    expect(b.partition([big('a')], 'cfg', T0 + 1_000).solve).toHaveLength(1);
  });

  it('remembers at most maxShapes shapes, the least recently failed forgotten first', () => {
    const b = new UnschedulableBackoff({ maxShapes: 2 });
    const shaped = (app: string) => pod({ name: app, cpu: '900', labels: { app } });
    for (const [i, app] of ['x', 'y', 'z'].entries()) b.record({ unschedulable: [shaped(app)], scheduled: [] }, 'cfg', T0 + i);
    expect(b.size).toBe(2);
    expect(b.partition([shaped('x'), shaped('y'), shaped('z')], 'cfg', T0 + 10).solve.map((p) => p.metadata.name)).toEqual(['x']);
  });

  it('shape: node binding and name do not matter; labels and requests do', () => {
    expect(podShapeKey(big('a'))).toBe(podShapeKey({ ...big('b'), spec: { ...big('b').spec, nodeName: 'n1' } }));
    expect(podShapeKey(big('a'))).not.toBe(podShapeKey(small('a')));
  });

  it('config key: NodePool order does not matter, a spec change does', () => {
    const np = (name: string, cpu: number) => ({ metadata: { name }, spec: { limits: { cpu } } });
    const k = (pools: ReturnType<typeof np>[]) => schedulingConfigKey({ nodePools: pools, nodeClasses: [] });
    expect(k([np('a', 1), np('b', 2)])).toBe(k([np('b', 2), np('a', 1)]));
    expect(k([np('a', 1), np('b', 2)])).not.toBe(k([np('a', 1), np('b', 3)]));
  });
});
