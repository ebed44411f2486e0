/**
 * The attribution test/real/beside-karpenter.test.ts decides on (test/real/beside.ts): audited
 * writes of each autoscaler to the other's Nodes, NodeClaims, pods and NodePools are trespasses;
 * writes to its own are counted; creates (but evictions), reads and other users are neither.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { besideVerdict, Owners, readAuditWrites, type AuditWrite } from '../../real/beside.ts';

const sides = {
  nodefleet: { users: new Set(['nodefleet-disruption', 'nodefleet-termination']), pools: new Set(['nf']) },
  karpenter: { users: new Set(['system:serviceaccount:karpenter:karpenter']), pools: new Set(['kwok']) },
};
const K = 'system:serviceaccount:karpenter:karpenter';

function owners(): Owners {
  const o = new Owners();
  o.see('Node', { metadata: { name: 'kwok-a', labels: { 'karpenter.sh/nodepool': 'kwok' } } });
  o.see('Node', { metadata: { name: 'ip-10-0-0-1', labels: { 'karpenter.sh/nodepool': 'nf' } } });
  o.see('Node', { metadata: { name: 'managed-1', labels: {} } });
  o.see('NodeClaim', { metadata: { name: 'kwok-x1', labels: { 'karpenter.sh/nodepool': 'kwok' } } });
  o.see('NodeClaim', { metadata: { name: 'nf-y1', labels: { 'karpenter.sh/nodepool': 'nf' } } });
  o.see('Pod', { metadata: { name: 'p1', namespace: 'default' }, spec: { nodeName: 'kwok-a' } });
  o.see('Pod', { metadata: { name: 'p2', namespace: 'default' }, spec: { nodeName: 'ip-10-0-0-1' } });
  return o;
}

const w = (user: string, verb: string, resource: string, name: string, extra: Partial<AuditWrite> = {}): AuditWrite => ({
  user,
  verb,
  resource,
  name,
  at: '',
  ...extra,
});

describe('beside Karpenter: who wrote to whose objects', () => {
  it.each([
    ['nodefleet cordons a Karpenter node', w('nodefleet-termination', 'patch', 'nodes', 'kwok-a'), 'nodefleet'],
    [
      'nodefleet evicts a pod of a Karpenter node',
      w('nodefleet-termination', 'create', 'pods', 'p1', { subresource: 'eviction', namespace: 'default' }),
      'nodefleet',
    ],
    ['nodefleet deletes a Karpenter NodeClaim', w('nodefleet-disruption', 'delete', 'nodeclaims', 'kwok-x1'), 'nodefleet'],
    ['nodefleet patches the Karpenter NodePool', w('nodefleet-disruption', 'patch', 'nodepools', 'kwok', { subresource: 'status' }), 'nodefleet'],
    ['Karpenter deletes a nodefleet node', w(K, 'delete', 'nodes', 'ip-10-0-0-1'), 'karpenter'],
    ['Karpenter updates a nodefleet NodeClaim', w(K, 'update', 'nodeclaims', 'nf-y1', { subresource: 'status' }), 'karpenter'],
    ['Karpenter deletes a pod of a nodefleet node', w(K, 'delete', 'pods', 'p2', { namespace: 'default' }), 'karpenter'],
  ])('%s is a trespass', (_what, write, by) => {
    const v = besideVerdict([write], owners(), sides);
    expect(v.trespasses).toEqual([{ by, write, pool: by === 'nodefleet' ? 'kwok' : 'nf' }]);
  });

  it('own writes are counted, not trespasses; creates, managed nodes and other users are neither', () => {
    const v = besideVerdict(
      [
        w('nodefleet-termination', 'patch', 'nodes', 'ip-10-0-0-1'),
        w('nodefleet-termination', 'create', 'pods', 'p2', { subresource: 'eviction', namespace: 'default' }),
        w(K, 'patch', 'nodes', 'kwok-a'),
        w(K, 'delete', 'nodeclaims', 'kwok-x1'),
        w(K, 'create', 'nodes', 'ip-10-0-0-1'),
        w(K, 'patch', 'nodes', 'managed-1'),
        w('nodefleet-test-admin', 'delete', 'nodes', 'kwok-a'),
        w('system:kube-controller-manager', 'delete', 'pods', 'p1', { namespace: 'default' }),
      ],
      owners(),
      sides,
    );
    expect(v.trespasses).toEqual([]);
    expect(v.own).toEqual({ nodefleet: { nodes: 1, 'pods/eviction': 1 }, karpenter: { nodes: 1, nodeclaims: 1 } });
  });

  it('reads the audit log: writes with sender, verb, target and answer; reads skipped', () => {
    const dir = mkdtempSync(join(tmpdir(), 'beside-audit-'));
    try {
      const file = join(dir, 'audit.jsonl');
      const line = (verb: string, ref: object, code = 200) =>
        JSON.stringify({ verb, user: { username: K }, objectRef: ref, responseStatus: { code }, stageTimestamp: '2026-12-06T22:00:00Z' });
      writeFileSync(
        file,
        [
          line('get', { resource: 'nodes', name: 'a' }),
          line('patch', { resource: 'nodes', name: 'a' }),
          line('create', { resource: 'pods', subresource: 'eviction', namespace: 'ns', name: 'p' }, 429),
        ].join('\n'),
      );
      expect(readAuditWrites(file)).toEqual([
        { user: K, verb: 'patch', resource: 'nodes', name: 'a', code: 200, at: '2026-12-06T22:00:00Z' },
        { user: K, verb: 'create', resource: 'pods', subresource: 'eviction', namespace: 'ns', name: 'p', code: 429, at: '2026-12-06T22:00:00Z' },
      ]);
      expect(readAuditWrites(join(dir, 'none.jsonl'))).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
