/**
 * The lean list (shared/kube/list-page.ts): pages through the local API server's continue tokens
 * with every object arriving intact; the item splitter under every cut of its input; gzip
 * answers, auth headers, error statuses and bodies cut short.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../shared/api/kube.ts';
import { kubeConfigFor, statusOf } from '../../../shared/kube/kube-api.ts';
import { ListItemSplitter, listPage } from '../../../shared/kube/list-page.ts';
import { ObjectStore } from '../../../infra/local/kube/store.ts';
import { ApiCore, T } from '../../../infra/local/kube/api.ts';
import { startApiServer, type RunningServer } from '../../../infra/local/kube/server.ts';
import { kubeconfigYaml } from '../../../infra/local/kube/kubeconfig.ts';

/** Splits `text` at `cuts` (byte offsets) and feeds the splitter; returns the items and the rest. */
function split(text: string, cuts: number[]): { items: unknown[]; rest: unknown } {
  const bytes = Buffer.from(text);
  const items: unknown[] = [];
  const s = new ListItemSplitter((t) => items.push(JSON.parse(t)));
  let from = 0;
  for (const cut of [...new Set(cuts.map((c) => Math.min(c, bytes.length)))].sort((a, b) => a - b)) {
    s.write(bytes.subarray(from, cut));
    from = cut;
  }
  s.write(bytes.subarray(from));
  return { items, rest: s.end() };
}

describe('ListItemSplitter', () => {
  it('hands over every item and keeps the rest, however the bytes are cut (escapes, brackets in strings, UTF-8, nested "items")', () => {
    const item = fc.dictionary(fc.string({ unit: 'binary', maxLength: 6 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 5 });
    fc.assert(
      fc.property(
        fc.array(item, { maxLength: 6 }),
        fc.record({ resourceVersion: fc.string({ maxLength: 8 }), continue: fc.string({ unit: 'binary', maxLength: 12 }) }),
        fc.constantFrom(undefined, 1, '\t'),
        fc.array(fc.nat({ max: 4000 }), { maxLength: 12 }),
        (items, metadata, indent, cuts) => {
          const list = { kind: 'PodList', apiVersion: 'v1', metadata, items };
          const got = split(JSON.stringify(list, null, indent), cuts);
          expect(got.items).toEqual(JSON.parse(JSON.stringify(items)));
          expect(got.rest).toEqual({ ...list, items: [] });
        },
      ),
      { numRuns: 400 },
    );
  });

  it('cut after every byte: the awkward cases one by one', () => {
    const list = {
      kind: 'PodList',
      warnings: [{ m: '[' }, []],
      metadata: { continue: 'a"b\\', resourceVersion: '7' },
      items: [{ a: 'x"y\\', b: [1, { c: '}]{[' }], items: ['q'], u: 'ü€😀\u0001' }, [], {}, { '"items":[': [] }],
      after: { items: [1] },
    };
    const text = JSON.stringify(list);
    for (let i = 0; i <= Buffer.byteLength(text); i++) {
      const every = Array.from({ length: Buffer.byteLength(text) }, (_, k) => k);
      const got = i === 0 ? split(text, every) : split(text, [i]);
      expect(got.items).toEqual(list.items);
      expect(got.rest).toEqual({ ...list, items: [] });
    }
  });

  it('a body cut short is an error, not a shorter list', () => {
    const text = JSON.stringify({ kind: 'PodList', metadata: {}, items: [{ a: 1 }, { b: 2 }] });
    const s = new ListItemSplitter(() => {});
    s.write(Buffer.from(text.slice(0, text.indexOf('{"b"') + 3)));
    expect(() => s.end()).toThrow(/ended early/);
  });
});

describe('listPage against the local API server', () => {
  let server: RunningServer;
  let store: ObjectStore;
  const Pods = 1_234;

  beforeAll(async () => {
    store = new ObjectStore(() => new Date('2026-01-01T00:00:00Z'));
    for (let i = 0; i < Pods; i++) {
      store.create(T.pods, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: `p-${i}`, namespace: `ns-${i % 7}`, labels: { app: `a"\\${i % 3}`, note: 'ü€😀' } },
        spec: { nodeName: `n-${i % 50}`, containers: [{ name: 'c', image: 'x', resources: { requests: { cpu: '100m' } } }] },
        status: { phase: 'Running' },
      } as KubeObject);
    }
    server = await startApiServer(new ApiCore(store, () => new Date()));
  });
  afterAll(() => server.close());

  it('pages with limit and continue until the last page; every object arrives once, intact, with the list resourceVersion', async () => {
    const kc = kubeConfigFor({ kind: 'kubeconfig-string', yaml: kubeconfigYaml(server.url) });
    const got: KubeObject[] = [];
    const resourceVersions = new Set<string | undefined>();
    let pages = 0;
    let cont: string | undefined;
    do {
      const meta = await listPage(kc, '/api/v1/pods', { limit: 500, continue: cont }, (o) => got.push(o));
      pages++;
      resourceVersions.add(meta.resourceVersion);
      cont = meta.continue;
    } while (cont);
    expect(pages).toBe(3);
    expect(got).toHaveLength(Pods);
    expect(resourceVersions.size).toBe(1);
    expect([...resourceVersions][0]).toMatch(/^\d+$/);
    const stored = new Map(store.listShared(T.pods).map((p) => [`${p.metadata.namespace}/${p.metadata.name}`, p]));
    expect(new Set(got.map((p) => `${p.metadata.namespace}/${p.metadata.name}`)).size).toBe(Pods);
    for (const p of got) expect(p).toEqual(JSON.parse(JSON.stringify(stored.get(`${p.metadata.namespace}/${p.metadata.name}`))));
  });

  it('an error status is an ApiException with its code and Status body (what the reflector retries on)', async () => {
    const kc = kubeConfigFor({ kind: 'kubeconfig-string', yaml: kubeconfigYaml(server.url) });
    const err = await listPage(kc, '/api/v1/pods', { limit: 500, continue: 'not-a-token' }, () => {}).catch((e: unknown) => e);
    expect(statusOf(err)).toBe(400);
    expect((err as { body?: { reason?: string } }).body?.reason).toBe('BadRequest');
  });
});

describe('listPage over HTTP', () => {
  const seen: IncomingMessage[] = [];
  let srv: Server;
  let yaml = '';
  const list = { kind: 'NodeList', apiVersion: 'v1', metadata: { resourceVersion: '42' }, items: [{ metadata: { name: 'a' } }, { metadata: { name: 'b' } }] };
  beforeAll(async () => {
    srv = createServer((req, res) => {
      seen.push(req);
      const url = new URL(req.url!, 'http://x');
      if (url.searchParams.get('limit') === '410') {
        res.writeHead(410, { 'content-type': 'application/json' });
        return void res.end(JSON.stringify({ kind: 'Status', code: 410, reason: 'Expired', message: 'too old' }));
      }
      if (url.searchParams.get('limit') === 'cut') {
        res.writeHead(200, { 'content-type': 'application/json' });
        return void res.end(JSON.stringify(list).slice(0, 60));
      }
      const gzip = String(req.headers['accept-encoding']).includes('gzip');
      res.writeHead(200, { 'content-type': 'application/json', ...(gzip ? { 'content-encoding': 'gzip' } : {}) });
      res.end(gzip ? gzipSync(JSON.stringify(list)) : JSON.stringify(list));
    });
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    const port = (srv.address() as { port: number }).port;
    yaml = `apiVersion: v1\nkind: Config\nclusters:\n- name: t\n  cluster:\n    server: http://127.0.0.1:${port}\n    insecure-skip-tls-verify: true\nusers:\n- name: u\n  user:\n    token: secret-token\ncontexts:\n- name: t\n  context:\n    cluster: t\n    user: u\ncurrent-context: t\n`;
  });
  afterAll(() => {
    srv.closeAllConnections();
    return new Promise<void>((r) => srv.close(() => r()));
  });

  it("asks for gzip, reads a gzip answer, and sends the kubeconfig user's bearer token", async () => {
    const names: string[] = [];
    const meta = await listPage(kubeConfigFor({ kind: 'kubeconfig-string', yaml }), '/api/v1/nodes', { limit: 2 }, (o) => names.push(o.metadata.name));
    expect(names).toEqual(['a', 'b']);
    expect(meta).toEqual({ resourceVersion: '42' });
    const req = seen.at(-1)!;
    expect(req.headers.authorization).toBe('Bearer secret-token');
    expect(req.headers['accept-encoding']).toBe('gzip');
    expect(req.url).toBe('/api/v1/nodes?limit=2');
  });

  it('410 Gone is an ApiException with code 410; a body cut short rejects', async () => {
    const kc = kubeConfigFor({ kind: 'kubeconfig-string', yaml });
    const gone = await listPage(kc, '/api/v1/pods', { limit: '410' }, () => {}).catch((e: unknown) => e);
    expect(statusOf(gone)).toBe(410);
    await expect(listPage(kc, '/api/v1/pods', { limit: 'cut' }, () => {})).rejects.toThrow(/ended early/);
  });
});
