import { createServer, type Server } from 'node:http';
import { Watch } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ListPageSize, NotServedRetryDelayMs, Reflector, ReflectorRbac, RetryDelayMs } from '../../../shared/kube/reflector.ts';
import { kubeConfigFor } from '../../../shared/kube/kube-api.ts';
import type { KubeObject } from '../../../shared/api/kube.ts';
import { ObjectStore } from '../../../infra/local/kube/store.ts';
import { ApiCore, T } from '../../../infra/local/kube/api.ts';
import { startApiServer } from '../../../infra/local/kube/server.ts';
import { kubeconfigYaml } from '../../../infra/local/kube/kubeconfig.ts';

/**
 * A recorded API server for /api/v1/pods: lists return resourceVersion "10" then "20"; the first
 * watch sends one ADDED event and a bookmark (resourceVersion "15") and ends; the second answers
 * 410 Gone (resourceVersion too old); later watches send a MODIFIED event and stay open.
 */
function server(log: string[], timeouts: number[]): Server {
  let lists = 0;
  let watches = 0;
  return createServer((req, res) => {
    const url = new URL(req.url!, 'http://x');
    if (url.searchParams.get('watch') === 'true') {
      watches++;
      log.push(`watch rv=${url.searchParams.get('resourceVersion')}`);
      timeouts.push(Number(url.searchParams.get('timeoutSeconds')));
      res.writeHead(200, { 'content-type': 'application/json' });
      if (watches === 1) {
        res.write(`${JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'b', namespace: 'd', resourceVersion: '11' }, spec: {} } })}\n`);
        res.end(`${JSON.stringify({ type: 'BOOKMARK', object: { kind: 'Pod', metadata: { resourceVersion: '15' } } })}\n`);
      } else if (watches === 2) {
        res.end(`${JSON.stringify({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired' } })}\n`);
      } else {
        res.write(
          `${JSON.stringify({ type: 'MODIFIED', object: { metadata: { name: 'a', namespace: 'd', resourceVersion: '21' }, spec: { nodeName: 'n1' } } })}\n`,
        );
      }
      return;
    }
    lists++;
    log.push(`list ${lists}`);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        kind: 'PodList',
        apiVersion: 'v1',
        metadata: { resourceVersion: lists === 1 ? '10' : '20' },
        items: [{ metadata: { name: 'a', namespace: 'd' }, spec: {} }],
      }),
    );
  });
}

describe('Reflector (list + watch)', () => {
  const log: string[] = [];
  const timeouts: number[] = [];
  let srv: Server;
  let port = 0;
  beforeAll(async () => {
    srv = server(log, timeouts);
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    port = (srv.address() as { port: number }).port;
  });
  afterAll(() => {
    srv.closeAllConnections();
    return new Promise<void>((r) => srv.close(() => r()));
  });

  it('watches from the list resourceVersion, resumes an ended watch from the last bookmark, re-lists on 410 Gone', async () => {
    const yaml = `apiVersion: v1\nkind: Config\nclusters:\n- name: t\n  cluster:\n    server: http://127.0.0.1:${port}\n    insecure-skip-tls-verify: true\nusers:\n- name: u\n  user:\n    token: x\ncontexts:\n- name: t\n  context:\n    cluster: t\n    user: u\ncurrent-context: t\n`;
    const events: string[] = [];
    let syncs = 0;
    const r = new Reflector<{ node?: string }>(kubeConfigFor({ kind: 'kubeconfig-string', yaml }), {
      kind: 'pods',
      transform: (raw) => ({ node: raw.spec?.nodeName }),
      onSync: () => void syncs++,
      onEvent: (type, key, item) => events.push(`${type} ${key} ${item?.node ?? ''}`.trim()),
    });
    r.start();
    for (let i = 0; i < 100 && !events.includes('MODIFIED d/a n1'); i++) await new Promise((res) => setTimeout(res, 20));
    r.stop();
    expect(r.hasSynced()).toBe(true);
    expect(syncs).toBe(2);
    expect(log.slice(0, 5)).toEqual(['list 1', 'watch rv=10', 'watch rv=15', 'list 2', 'watch rv=20']);
    expect(events).toEqual(['ADDED d/b', 'MODIFIED d/a n1']);
    // Every watch asks the server to end it before client-node's Watch takes a quiet stream for
    // dead (kube-apiserver's bookmarks come about once a minute).
    const inactivityMs = (new Watch(kubeConfigFor({ kind: 'kubeconfig-string', yaml })) as unknown as { requestTimeoutMs: number }).requestTimeoutMs;
    expect(timeouts.length).toBeGreaterThan(0);
    for (const t of timeouts) {
      expect(t).toBeGreaterThan(0);
      expect(t * 1000).toBeLessThan(inactivityMs);
    }
  });
});

describe('Reflector on the local API server', () => {
  it('lists 1 234 pods in pages of ListPageSize through continue tokens, every one kept once, then watches from the list', async () => {
    const store = new ObjectStore(() => new Date('2026-01-01T00:00:00Z'));
    const pod = (i: number) =>
      ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: `p-${i}`, namespace: `ns-${i % 5}` }, spec: { nodeName: `n-${i % 40}` } }) as KubeObject;
    for (let i = 0; i < 1_234; i++) store.create(T.pods, pod(i));
    const server = await startApiServer(new ApiCore(store, () => new Date()));
    const pages: number[] = [];
    let synced: Map<string, string> | undefined;
    const events: string[] = [];
    const r = new Reflector<string>(kubeConfigFor({ kind: 'kubeconfig-string', yaml: kubeconfigYaml(server.url) }), {
      kind: 'pods',
      transform: (raw) => raw.spec?.nodeName,
      onSync: (items) => (synced = items),
      onEvent: (type, key, node) => events.push(`${type} ${key} ${node}`),
      onListPage: (p) => pages.push(p.read),
    });
    try {
      r.start();
      for (let i = 0; i < 200 && !synced; i++) await new Promise((res) => setTimeout(res, 20));
      expect(pages).toEqual(Array.from({ length: Math.ceil(1_234 / ListPageSize) }, (_, i) => Math.min((i + 1) * ListPageSize, 1_234)));
      expect(pages.length).toBeGreaterThan(1);
      expect(synced!.size).toBe(1_234);
      expect(synced!.get('ns-3/p-1233')).toBe('n-33');
      store.create(T.pods, pod(5_000));
      for (let i = 0; i < 200 && events.length === 0; i++) await new Promise((res) => setTimeout(res, 20));
      expect(events).toEqual(['ADDED ns-0/p-5000 n-0']);
    } finally {
      r.stop();
      await server.close();
    }
  });
});

describe('Reflector of NodeClaims', () => {
  it('lists and watches karpenter.sh/v1 nodeclaims; a server without the CRD (404) is listed again only after NotServedRetryDelayMs', async () => {
    const paths: string[] = [];
    let served = false;
    const srv = createServer((req, res) => {
      const url = new URL(req.url!, 'http://x');
      paths.push(`${url.pathname}${url.searchParams.get('watch') ? ' watch' : ''}`);
      if (!served) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ kind: 'Status', code: 404, reason: 'NotFound' }));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      if (url.searchParams.get('watch')) return; // stays open
      res.end(JSON.stringify({ kind: 'NodeClaimList', metadata: { resourceVersion: '5' }, items: [{ metadata: { name: 'default-a' } }] }));
    });
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    const port = (srv.address() as { port: number }).port;
    const errors: number[] = [];
    let synced: string[] = [];
    const r = new Reflector<string>(kubeConfigFor({ kind: 'kubeconfig-string', yaml: kubeconfigYaml(`http://127.0.0.1:${port}`) }), {
      kind: 'nodeclaims',
      transform: (raw) => raw.metadata.name,
      onSync: (items) => (synced = [...items.keys()]),
      onEvent: () => {},
      onError: (err) => errors.push((err as { code?: number }).code ?? 0),
    });
    try {
      r.start();
      await new Promise((res) => setTimeout(res, RetryDelayMs + 500));
      // Not served: one list, one error, no retry at the ordinary 2 s.
      expect(paths).toEqual(['/apis/karpenter.sh/v1/nodeclaims']);
      expect(errors).toEqual([404]);
      expect(NotServedRetryDelayMs).toBeGreaterThan(RetryDelayMs);
      expect(ReflectorRbac('nodeclaims')).toEqual([
        { apiGroup: 'karpenter.sh', resource: 'nodeclaims', verb: 'list' },
        { apiGroup: 'karpenter.sh', resource: 'nodeclaims', verb: 'watch' },
      ]);
      served = true;
      (r as unknown as { relist(): Promise<void> }).relist(); // the retry, without waiting 30 s
      for (let i = 0; i < 100 && !paths.includes('/apis/karpenter.sh/v1/nodeclaims watch'); i++) await new Promise((res) => setTimeout(res, 20));
      expect(synced).toEqual(['default-a']);
      expect(paths).toContain('/apis/karpenter.sh/v1/nodeclaims watch');
    } finally {
      r.stop();
      srv.closeAllConnections();
      await new Promise<void>((res) => srv.close(() => res()));
    }
  });
});
