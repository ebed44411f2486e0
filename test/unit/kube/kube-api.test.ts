import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClientNodeKubeApi } from '../../../shared/kube/kube-api.ts';
import { NotFoundError } from '../../../shared/api/errors.ts';
import { managedNodeClassGroup } from '../../../shared/api/nodepool.ts';

const eviction429 = readFileSync(new URL('../../fixtures/events/eviction-429.json', import.meta.url), 'utf8');

interface Seen {
  method: string;
  url: string;
  contentType?: string;
  body: string;
}

/** A recorded-response API server: path → [status, body]. */
function apiServer(routes: Record<string, [number, unknown]>, seen: Seen[]): Server {
  return createServer((req: IncomingMessage, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, contentType: req.headers['content-type'], body });
      const key = `${req.method} ${req.url!.split('?')[0]}`;
      const [status, payload] = routes[key] ?? [404, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404 }];
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(typeof payload === 'string' ? payload : JSON.stringify(payload));
    });
  });
}

const nodePool = {
  apiVersion: 'karpenter.sh/v1',
  kind: 'NodePool',
  metadata: { name: 'default', uid: 'u', resourceVersion: '1', generation: 1, creationTimestamp: '2026-01-01T00:00:00Z' },
  spec: { template: { spec: { nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' }, requirements: [] } } },
  status: { conditions: [] },
};

describe('ClientNodeKubeApi against recorded API responses', () => {
  const seen: Seen[] = [];
  let server: Server;
  let api: ClientNodeKubeApi;
  const invalid: string[] = [];

  beforeAll(async () => {
    server = apiServer(
      {
        'GET /apis/karpenter.sh/v1/nodepools': [
          200,
          {
            apiVersion: 'karpenter.sh/v1',
            kind: 'NodePoolList',
            items: [nodePool, { ...nodePool, metadata: { name: 'broken' }, spec: { template: { spec: {} } } }],
          },
        ],
        'GET /api/v1/nodes/n1': [
          200,
          { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1', creationTimestamp: '2026-01-01T00:00:00Z' }, spec: { providerID: 'aws:///z/i-1' } },
        ],
        'PATCH /api/v1/nodes/n1': [200, { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1', labels: { a: 'b' } } }],
        'POST /api/v1/namespaces/default/pods/web-1/eviction': [429, eviction429],
        'POST /api/v1/namespaces/default/pods/web-2/eviction': [201, { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'web-2' } }],
        'DELETE /api/v1/nodes/gone': [404, { kind: 'Status', code: 404 }],
      },
      seen,
    );
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    const yaml = `apiVersion: v1\nkind: Config\nclusters:\n- name: t\n  cluster:\n    server: http://127.0.0.1:${port}\n    insecure-skip-tls-verify: true\nusers:\n- name: u\n  user:\n    token: abc\ncontexts:\n- name: t\n  context:\n    cluster: t\n    user: u\ncurrent-context: t\n`;
    api = new ClientNodeKubeApi(
      async () => ({ kind: 'kubeconfig-string', yaml }),
      (kind, name) => invalid.push(`${kind}/${name}`),
    );
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('reads NodePools from karpenter.sh/v1, skipping invalid ones', async () => {
    const pools = await api.listNodePools();
    expect(pools.map((p) => p.metadata.name)).toEqual(['default']);
    expect(pools[0].spec.disruption.consolidationPolicy).toBe('WhenEmptyOrUnderutilized');
    expect(invalid).toEqual(['NodePool/broken']);
  });

  it('returns plain JSON nodes; undefined for a missing node', async () => {
    const n = await api.getNode('n1');
    expect(n?.metadata.creationTimestamp).toBe('2026-01-01T00:00:00.000Z');
    expect(n?.spec?.providerID).toBe('aws:///z/i-1');
    expect(await api.getNode('nope')).toBeUndefined();
  });

  it('patches nodes with a JSON merge patch (null deletes a label)', async () => {
    await api.patchNode('n1', { labels: { a: 'b', old: null }, taints: [] });
    const patch = seen.find((s) => s.method === 'PATCH')!;
    expect(patch.contentType).toBe('application/merge-patch+json');
    expect(JSON.parse(patch.body)).toEqual({ metadata: { labels: { a: 'b', old: null } }, spec: { taints: [] } });
  });

  it('eviction: 429 from a PDB is "blocked", 201 "evicted", 404 "gone"', async () => {
    expect(await api.evictPod('default', 'web-1')).toBe('blocked');
    expect(await api.evictPod('default', 'web-2')).toBe('evicted');
    expect(await api.evictPod('default', 'web-3')).toBe('gone');
  });

  it('deleting an absent node succeeds; patching one is NotFoundError', async () => {
    await expect(api.deleteNode('gone')).resolves.toBeUndefined();
    await expect(api.patchNode('gone', { unschedulable: true })).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe('ClientNodeKubeApi beside Karpenter (docs/migration.md): only the NodePools and EC2NodeClasses of its node class group', () => {
  const seen: Seen[] = [];
  let server: Server;
  let yaml = '';
  const pool = (name: string, group: string) => ({
    ...nodePool,
    metadata: { ...nodePool.metadata, name },
    spec: { template: { spec: { nodeClassRef: { group, kind: 'EC2NodeClass', name: 'default' }, requirements: [] } } },
  });
  const nodeClass = (apiVersion: string, role: string) => ({
    apiVersion,
    kind: 'EC2NodeClass',
    metadata: { name: 'default' },
    spec: {
      role,
      amiSelectorTerms: [{ alias: 'al2023@latest' }],
      subnetSelectorTerms: [{ tags: { a: 'b' } }],
      securityGroupSelectorTerms: [{ tags: { a: 'b' } }],
    },
  });

  beforeAll(async () => {
    server = apiServer(
      {
        'GET /apis/karpenter.sh/v1/nodepools': [
          200,
          { kind: 'NodePoolList', items: [pool('karpenters', 'karpenter.k8s.aws'), pool('ours', 'nodefleet.io'), pool('kwok', 'karpenter.kwok.sh')] },
        ],
        'GET /apis/karpenter.k8s.aws/v1/ec2nodeclasses': [200, { kind: 'EC2NodeClassList', items: [nodeClass('karpenter.k8s.aws/v1', 'KarpenterNodeRole')] }],
        'GET /apis/nodefleet.io/v1/ec2nodeclasses': [200, { kind: 'EC2NodeClassList', items: [nodeClass('nodefleet.io/v1', 'NodefleetNodeRole')] }],
      },
      seen,
    );
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    yaml = `apiVersion: v1\nkind: Config\nclusters:\n- name: t\n  cluster:\n    server: http://127.0.0.1:${port}\n    insecure-skip-tls-verify: true\nusers:\n- name: u\n  user:\n    token: abc\ncontexts:\n- name: t\n  context:\n    cluster: t\n    user: u\ncurrent-context: t\n`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it.each([
    [true, 'nodefleet.io', ['ours'], 'NodefleetNodeRole'],
    [false, 'karpenter.k8s.aws', ['karpenters'], 'KarpenterNodeRole'],
  ] as const)(
    "besideKarpenter=%s: NodePools of %s EC2NodeClasses only, and that group's classes (same names in both groups)",
    async (beside, _group, pools, role) => {
      const api = new ClientNodeKubeApi(
        async () => ({ kind: 'kubeconfig-string', yaml }),
        () => {},
        managedNodeClassGroup(beside),
      );
      expect((await api.listNodePools()).map((p) => p.metadata.name)).toEqual(pools);
      expect((await api.listNodeClasses()).map((c) => c.spec.role)).toEqual([role]);
    },
  );
});
