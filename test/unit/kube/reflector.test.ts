import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Reflector } from '../../../shared/kube/reflector.ts';
import { kubeConfigFor } from '../../../shared/kube/kube-api.ts';

/**
 * A recorded API server for /api/v1/pods: lists return resourceVersion "10" then "20"; the first
 * watch sends one ADDED event then a 410 Gone (resourceVersion too old); later watches send a
 * MODIFIED event and stay open.
 */
function server(log: string[]): Server {
  let lists = 0;
  let watches = 0;
  return createServer((req, res) => {
    const url = new URL(req.url!, 'http://x');
    if (url.searchParams.get('watch') === 'true') {
      watches++;
      log.push(`watch rv=${url.searchParams.get('resourceVersion')}`);
      res.writeHead(200, { 'content-type': 'application/json' });
      if (watches === 1) {
        res.write(`${JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'b', namespace: 'd', resourceVersion: '11' }, spec: {} } })}\n`);
        res.end(`${JSON.stringify({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired' } })}\n`);
      } else {
        res.write(`${JSON.stringify({ type: 'MODIFIED', object: { metadata: { name: 'a', namespace: 'd', resourceVersion: '21' }, spec: { nodeName: 'n1' } } })}\n`);
      }
      return;
    }
    lists++;
    log.push(`list ${lists}`);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion: lists === 1 ? '10' : '20' }, items: [{ metadata: { name: 'a', namespace: 'd' }, spec: {} }] }));
  });
}

describe('Reflector (list + watch)', () => {
  const log: string[] = [];
  let srv: Server;
  let port = 0;
  beforeAll(async () => {
    srv = server(log);
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    port = (srv.address() as { port: number }).port;
  });
  afterAll(() => {
    srv.closeAllConnections();
    return new Promise<void>((r) => srv.close(() => r()));
  });

  it('watches from the list resourceVersion, re-lists on 410 Gone, resumes from the new one', async () => {
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
    expect(log.slice(0, 4)).toEqual(['list 1', 'watch rv=10', 'list 2', 'watch rv=20']);
    expect(events).toEqual(['ADDED d/b', 'MODIFIED d/a n1']);
  });
});
