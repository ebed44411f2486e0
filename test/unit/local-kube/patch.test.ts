import { describe, expect, it } from 'vitest';
import { applyPatch, jsonPatch, mergePatch, strategicMergePatch } from '../../../infra/local/kube/patch.ts';
import { ApiError } from '../../../infra/local/kube/store.ts';

const node = () => ({
  metadata: { name: 'n1', labels: { a: '1', b: '2' }, finalizers: ['x'] },
  spec: { taints: [{ key: 't1', effect: 'NoSchedule' }] },
  status: {
    conditions: [
      { type: 'Ready', status: 'True' },
      { type: 'DiskPressure', status: 'False' },
    ],
  },
});

describe('merge patch (RFC 7386)', () => {
  it('merges objects, deletes on null and replaces lists', () => {
    const out = mergePatch(node(), {
      metadata: { labels: { a: null, c: '3' } },
      spec: { taints: [{ key: 't2', effect: 'NoExecute' }], unschedulable: true },
    }) as ReturnType<typeof node> & { spec: { unschedulable: boolean } };
    expect(out.metadata.labels).toEqual({ b: '2', c: '3' });
    expect(out.spec).toEqual({ taints: [{ key: 't2', effect: 'NoExecute' }], unschedulable: true });
  });
});

describe('strategic merge patch', () => {
  it('merges conditions by type, unions finalizers, replaces taints', () => {
    const out = strategicMergePatch(node(), {
      metadata: { finalizers: ['y'] },
      spec: { taints: [] },
      status: { conditions: [{ type: 'Ready', status: 'False', reason: 'KubeletNotReady' }] },
    }) as ReturnType<typeof node>;
    expect(out.metadata.finalizers).toEqual(['x', 'y']);
    expect(out.spec.taints).toEqual([]);
    expect(out.status.conditions).toEqual([
      { type: 'Ready', status: 'False', reason: 'KubeletNotReady' },
      { type: 'DiskPressure', status: 'False' },
    ]);
  });

  it('honours $patch: delete in merged lists and $deleteFromPrimitiveList', () => {
    const out = strategicMergePatch(node(), {
      metadata: { '$deleteFromPrimitiveList/finalizers': ['x'] },
      status: { conditions: [{ type: 'DiskPressure', $patch: 'delete' }] },
    }) as ReturnType<typeof node>;
    expect(out.metadata.finalizers).toEqual([]);
    expect(out.status.conditions.map((c) => c.type)).toEqual(['Ready']);
  });
});

describe('json patch (RFC 6902)', () => {
  it('adds, removes, replaces, tests', () => {
    const out = jsonPatch(node(), [
      { op: 'test', path: '/spec/taints/0/key', value: 't1' },
      { op: 'add', path: '/spec/taints/-', value: { key: 't2', effect: 'NoSchedule' } },
      { op: 'remove', path: '/spec/taints/0' },
      { op: 'replace', path: '/metadata/labels/a', value: '9' },
      { op: 'add', path: '/metadata/annotations', value: { 'k~/x': 'y' } },
      { op: 'copy', from: '/metadata/labels/b', path: '/metadata/labels/c' },
    ]) as ReturnType<typeof node> & { metadata: { annotations: Record<string, string> } };
    expect(out.spec.taints).toEqual([{ key: 't2', effect: 'NoSchedule' }]);
    expect(out.metadata.labels).toEqual({ a: '9', b: '2', c: '2' });
  });

  it('fails with 422 when a test fails or a path is missing', () => {
    expect(() => jsonPatch(node(), [{ op: 'test', path: '/metadata/name', value: 'n2' }])).toThrow(ApiError);
    try {
      jsonPatch(node(), [{ op: 'remove', path: '/spec/unschedulable' }]);
    } catch (e) {
      expect((e as ApiError).code).toBe(422);
    }
  });

  it('rejects unknown content types with 415', () => {
    try {
      applyPatch('application/xml', {}, {});
      expect.unreachable();
    } catch (e) {
      expect((e as ApiError).code).toBe(415);
    }
  });
});
