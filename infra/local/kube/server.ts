/**
 * The local Kubernetes API server: node:http on loopback speaking the REST subset that
 * @kubernetes/client-node (and kubectl's discovery) uses — version, discovery, list/get/create/
 * update/patch/delete on every type of resources.ts, `watch=true` streams, and the pods/eviction,
 * pods/binding, status and scale subresources. Error answers are `Status` bodies with the
 * real API server's codes and reasons.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parse as parseYaml } from 'yaml';
import type { KubeObject } from '../../../shared/api/kube.ts';
import { apiGroup, coreVersions, findType, groupList, groupVersion, resourceList, typeKey, type ResourceType } from './resources.ts';
import { ApiError, rfc3339 } from './store.ts';
import { T, type ApiCore, type DeleteOptions } from './api.ts';
import { parseFieldSelector, parseLabelSelector } from './selectors.ts';
import { KUBELET_VERSION } from './controllers.ts';

/** `/version` body (what `kubectl version` prints as the server version). */
export const SERVER_VERSION = {
  major: '1',
  minor: '31',
  gitVersion: KUBELET_VERSION,
  gitCommit: '0000000000000000000000000000000000000000',
  gitTreeState: 'clean',
  buildDate: '2026-01-01T00:00:00Z',
  goVersion: 'go1.23.4',
  compiler: 'gc',
  platform: 'linux/amd64',
};

/** Interval of BOOKMARK events on watches that asked for them (keeps idle watches alive). */
export const BOOKMARK_INTERVAL_MS = 10_000;

/** Largest request body accepted (the real API server's limit is 3 MiB). */
const MAX_BODY_BYTES = 3 * 1024 * 1024;

/** Logs one request line (method, path, status) when given. */
export type RequestLogger = (line: { method: string; path: string; status: number }) => void;

/** A started server. */
export interface RunningServer {
  /** http://127.0.0.1:PORT */
  url: string;
  port: number;
  /** Ends every open watch stream (clients reconnect from their last resourceVersion). Returns how many ended. */
  closeWatches(): number;
  close(): Promise<void>;
}

/** Open watch streams per server, so they can be ended on purpose (tests of re-list healing). */
const openWatches = new WeakMap<Server, Set<() => void>>();

interface Route {
  t: ResourceType;
  namespace?: string;
  name?: string;
  subresource?: string;
  watchPath: boolean;
}

function parseResourcePath(segments: string[]): Route | undefined {
  // segments start after /api or /apis: [group?] version ...
  let group = '';
  let rest: string[];
  if (segments[0] === 'api') rest = segments.slice(1);
  else {
    group = segments[1];
    rest = segments.slice(2);
  }
  const version = rest[0];
  rest = rest.slice(1);
  let watchPath = false;
  if (rest[0] === 'watch') {
    watchPath = true;
    rest = rest.slice(1);
  }
  let namespace: string | undefined;
  if (rest[0] === 'namespaces' && rest.length >= 3) {
    namespace = rest[1];
    rest = rest.slice(2);
  }
  const t = findType(group, version, rest[0]);
  if (!t) return undefined;
  if (!t.namespaced && namespace) return undefined;
  return { t, namespace, name: rest[1], subresource: rest[2], watchPath };
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req) {
    size += (c as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new ApiError(413, 'RequestEntityTooLarge', 'the request is too large');
    chunks.push(c as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (!text.trim()) return undefined;
  const ct = req.headers['content-type'] ?? '';
  try {
    return ct.includes('yaml') ? parseYaml(text) : JSON.parse(text);
  } catch (e) {
    throw ApiError.badRequest(`the server rejected our request due to an error in our request: ${(e as Error).message}`);
  }
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text), 'Cache-Control': 'no-cache, private' });
  res.end(text);
}

function listKind(t: ResourceType): string {
  return `${t.kind}List`;
}

function ageOf(o: KubeObject, now: Date): string {
  const s = Math.max(0, Math.floor((now.getTime() - Date.parse(o.metadata.creationTimestamp ?? rfc3339(now))) / 1000));
  if (s < 120) return `${s}s`;
  if (s < 7200) return `${Math.floor(s / 60)}m`;
  if (s < 172800) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}

/** A meta.k8s.io/v1 Table (server-side printing, what `kubectl get` asks for). */
function toTable(t: ResourceType, items: KubeObject[], rv: string, now: Date, includeObject: string | null): object {
  type Col = { name: string; type: string; format?: string; priority?: number; description: string; cell: (o: KubeObject) => unknown };
  const name: Col = { name: 'Name', type: 'string', format: 'name', description: 'Name', cell: (o) => o.metadata.name };
  const age: Col = { name: 'Age', type: 'string', description: 'Age', cell: (o) => ageOf(o, now) };
  let cols: Col[] = [name, age];
  if (t === T.nodes) {
    cols = [
      name,
      {
        name: 'Status',
        type: 'string',
        description: 'Ready',
        cell: (o) => {
          const ready = o.status?.conditions?.find((c: { type: string }) => c.type === 'Ready')?.status === 'True' ? 'Ready' : 'NotReady';
          return o.spec?.unschedulable ? `${ready},SchedulingDisabled` : ready;
        },
      },
      { name: 'Roles', type: 'string', description: 'Roles', cell: () => '<none>' },
      age,
      { name: 'Version', type: 'string', description: 'Kubelet version', cell: (o) => o.status?.nodeInfo?.kubeletVersion ?? '' },
      {
        name: 'Instance-Type',
        type: 'string',
        priority: 1,
        description: 'Instance type',
        cell: (o) => o.metadata.labels?.['node.kubernetes.io/instance-type'] ?? '',
      },
    ];
  } else if (t === T.pods) {
    cols = [
      name,
      {
        name: 'Ready',
        type: 'string',
        description: 'Ready containers',
        cell: (o) => `${(o.status?.containerStatuses ?? []).filter((c: { ready: boolean }) => c.ready).length}/${(o.spec?.containers ?? []).length}`,
      },
      { name: 'Status', type: 'string', description: 'Phase', cell: (o) => (o.metadata.deletionTimestamp ? 'Terminating' : (o.status?.phase ?? 'Pending')) },
      { name: 'Restarts', type: 'string', description: 'Restarts', cell: () => '0' },
      age,
      { name: 'Node', type: 'string', priority: 1, description: 'Node', cell: (o) => o.spec?.nodeName ?? '<none>' },
    ];
  } else if (t.group === 'karpenter.sh' && t.plural === 'nodeclaims') {
    // The printer columns of the NodeClaim CRD (infra/k8s/crds/karpenter.sh_nodeclaims.yaml), as a real API server prints them.
    const label = (k: string) => (o: KubeObject) => o.metadata.labels?.[k] ?? '';
    const cond = (type: string) => (o: KubeObject) =>
      (o as KubeObject & { status?: { conditions?: { type: string; status: string }[] } }).status?.conditions?.find(
        (c: { type: string; status: string }) => c.type === type,
      )?.status ?? '';
    const status = (k: string) => (o: KubeObject) => ((o as KubeObject & { status?: Record<string, unknown> }).status?.[k] as string | undefined) ?? '';
    cols = [
      name,
      { name: 'Type', type: 'string', description: 'Instance type', cell: label('node.kubernetes.io/instance-type') },
      { name: 'Capacity', type: 'string', description: 'Capacity type', cell: label('karpenter.sh/capacity-type') },
      { name: 'Zone', type: 'string', description: 'Zone', cell: label('topology.kubernetes.io/zone') },
      { name: 'Node', type: 'string', description: 'Node', cell: status('nodeName') },
      { name: 'Ready', type: 'string', description: 'Ready', cell: cond('Ready') },
      age,
      { name: 'ImageID', type: 'string', priority: 1, description: 'Image', cell: status('imageID') },
      { name: 'ID', type: 'string', priority: 1, description: 'Provider ID', cell: status('providerID') },
      { name: 'NodePool', type: 'string', priority: 1, description: 'NodePool', cell: label('karpenter.sh/nodepool') },
      {
        name: 'NodeClass',
        type: 'string',
        priority: 1,
        description: 'Node class',
        cell: (o) => (o as KubeObject & { spec?: { nodeClassRef?: { name?: string } } }).spec?.nodeClassRef?.name ?? '',
      },
      { name: 'Drifted', type: 'string', priority: 1, description: 'Drifted', cell: cond('Drifted') },
    ];
  }
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: { resourceVersion: rv },
    columnDefinitions: cols.map(({ cell: _c, ...d }) => ({ priority: 0, format: '', ...d })),
    rows: items.map((o) => ({
      cells: cols.map((c) => c.cell(o)),
      object:
        includeObject === 'None'
          ? undefined
          : includeObject === 'Object'
            ? o
            : { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: o.metadata },
    })),
  };
}

/**
 * Creates the HTTP server over an {@link ApiCore}. Call `listen()` on the result of
 * {@link startApiServer} rather than this, unless you manage the socket yourself.
 */
export function createApiServer(api: ApiCore, log?: RequestLogger, fault?: RequestFault): Server {
  const server: Server = createServer((req, res) => {
    const injected = fault?.((req.method ?? 'GET').toUpperCase(), req.url ?? '/');
    if (injected) {
      send(res, injected.status, new ApiError(injected.status, injected.code, injected.message).toStatus());
      log?.({ method: req.method ?? 'GET', path: req.url ?? '/', status: injected.status });
      return;
    }
    handle(api, req, res, server)
      .catch((e: unknown) => {
        const err = e instanceof ApiError ? e : new ApiError(500, 'InternalError', `Internal error occurred: ${(e as Error)?.message ?? String(e)}`);
        if (!res.headersSent) send(res, err.code, err.toStatus());
        else res.end();
      })
      .finally(() => log?.({ method: req.method ?? 'GET', path: req.url ?? '/', status: res.statusCode }));
  });
  openWatches.set(server, new Set());
  return server;
}

async function handle(api: ApiCore, req: IncomingMessage, res: ServerResponse, server: Server): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const q = url.searchParams;
  const method = (req.method ?? 'GET').toUpperCase();
  const segments = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
  const address = `${req.socket.localAddress}:${req.socket.localPort}`;

  if (method === 'GET') {
    const p = url.pathname.replace(/\/$/, '');
    if (p === '/version') return send(res, 200, SERVER_VERSION);
    if (p === '/healthz' || p === '/readyz' || p === '/livez') {
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      return void res.end('ok');
    }
    if (p === '/api') return send(res, 200, coreVersions(address));
    if (p === '/apis') return send(res, 200, groupList());
    if (segments[0] === 'api' && segments.length === 2) {
      const l = resourceList('', segments[1]);
      if (l) return send(res, 200, l);
    }
    if (segments[0] === 'apis' && segments.length === 2) {
      const g = apiGroup(segments[1]);
      if (g) return send(res, 200, g);
    }
    if (segments[0] === 'apis' && segments.length === 3) {
      const l = resourceList(segments[1], segments[2]);
      if (l) return send(res, 200, l);
    }
  }

  const route = segments[0] === 'api' || segments[0] === 'apis' ? parseResourcePath(segments) : undefined;
  if (!route)
    throw new ApiError(404, 'NotFound', 'the server could not find the requested resource', {
      causes: [{ reason: 'UnexpectedServerResponse', message: '404 page not found' }],
    });
  const { t, namespace, name, subresource } = route;

  if (method === 'GET' && (route.watchPath || q.get('watch') === 'true' || q.get('watch') === '1')) {
    if (name) q.set('fieldSelector', [q.get('fieldSelector'), `metadata.name=${name}`].filter(Boolean).join(','));
    return serveWatch(api, req, res, t, namespace, q, openWatches.get(server));
  }

  if (!name) {
    if (method === 'GET') {
      const all = api.listShared(t, namespace, { labelSelector: q.get('labelSelector') ?? undefined, fieldSelector: q.get('fieldSelector') ?? undefined });
      const page = paginate(all.items, all.resourceVersion, q.get('limit'), q.get('continue'));
      // Serialised straight from the stored objects (JSON.stringify reads, never writes them).
      const { items, metadata } = page;
      if ((req.headers.accept ?? '').includes('as=Table'))
        return send(res, 200, toTable(t, items, metadata.resourceVersion, api.now(), q.get('includeObject')));
      return send(res, 200, { kind: listKind(t), apiVersion: groupVersion(t), metadata, items });
    }
    if (method === 'POST') {
      const body = (await readBody(req)) as KubeObject;
      if (!body || typeof body !== 'object') throw ApiError.badRequest('the body of the request was empty');
      return send(res, 201, api.create(t, namespace, body));
    }
    if (method === 'DELETE') {
      const { items } = api.list(t, namespace, { labelSelector: q.get('labelSelector') ?? undefined, fieldSelector: q.get('fieldSelector') ?? undefined });
      const opts = deleteOptions(q, (await readBody(req)) as DeleteOptions | undefined);
      const out = items.map((o) => api.delete(t, o.metadata.namespace, o.metadata.name, opts));
      return send(res, 200, { kind: listKind(t), apiVersion: groupVersion(t), metadata: { resourceVersion: String(api.store.resourceVersion) }, items: out });
    }
    throw methodNotAllowed(method);
  }

  if (subresource === 'eviction') {
    if (t !== T.pods || method !== 'POST') throw methodNotAllowed(method);
    const body = ((await readBody(req)) ?? {}) as { deleteOptions?: DeleteOptions; metadata?: { name?: string } };
    if (body.metadata?.name && body.metadata.name !== name) throw ApiError.badRequest(`name in URL does not match name in Eviction object`);
    return send(res, 201, api.evict(namespace ?? 'default', name, body));
  }
  if (subresource === 'binding') {
    if (t !== T.pods || method !== 'POST') throw methodNotAllowed(method);
    const body = ((await readBody(req)) ?? {}) as { target?: { name?: string } };
    if (!body.target?.name) throw new ApiError(422, 'Invalid', 'Binding "" is invalid: target.name: Required value');
    return send(res, 201, api.bind(namespace ?? 'default', name, body.target.name));
  }
  if (subresource === 'scale') {
    if (!(t.subresources ?? []).includes('scale')) throw notFoundPath();
    if (method === 'GET') return send(res, 200, api.getScale(t, namespace ?? 'default', name));
    if (method === 'PUT') return send(res, 200, api.setScale(t, namespace ?? 'default', name, { body: await readBody(req) }));
    if (method === 'PATCH')
      return send(res, 200, api.setScale(t, namespace ?? 'default', name, { contentType: req.headers['content-type'] ?? '', body: await readBody(req) }));
    throw methodNotAllowed(method);
  }
  if (subresource && subresource !== 'status') throw notFoundPath();
  if (subresource === 'status' && !(t.subresources ?? []).includes('status')) throw notFoundPath();

  switch (method) {
    case 'GET':
      return send(res, 200, api.get(t, namespace, name));
    case 'PUT': {
      const body = (await readBody(req)) as KubeObject;
      if (!body || typeof body !== 'object') throw ApiError.badRequest('the body of the request was empty');
      return send(res, 200, api.replace(t, namespace, name, body, subresource));
    }
    case 'PATCH': {
      const body = await readBody(req);
      return send(res, 200, api.patch(t, namespace, name, req.headers['content-type'] ?? '', body, subresource));
    }
    case 'DELETE': {
      const opts = deleteOptions(q, (await readBody(req)) as DeleteOptions | undefined);
      return send(res, 200, api.delete(t, namespace, name, opts));
    }
    default:
      throw methodNotAllowed(method);
  }
}

/**
 * `limit` / `continue` paging. The continue token carries the list's resourceVersion and the
 * next offset (the real server pins pages to one etcd revision; here later pages see the
 * current objects, which is enough for list-then-watch clients).
 * @throws ApiError 400 for a malformed continue token.
 */
function paginate(
  items: readonly KubeObject[],
  resourceVersion: string,
  limitParam: string | null,
  cont: string | null,
): { items: KubeObject[]; metadata: { resourceVersion: string; continue?: string; remainingItemCount?: number } } {
  let offset = 0;
  let rv = resourceVersion;
  if (cont) {
    try {
      const token = JSON.parse(Buffer.from(cont, 'base64url').toString('utf8')) as { rv: string; offset: number };
      offset = token.offset;
      rv = token.rv;
    } catch {
      throw ApiError.badRequest('continue key is not valid: illegal base64 data');
    }
  }
  const limit = Number(limitParam ?? 0);
  if (!(limit > 0) || offset + limit >= items.length) return { items: items.slice(offset), metadata: { resourceVersion: rv } };
  const next = Buffer.from(JSON.stringify({ rv, offset: offset + limit })).toString('base64url');
  return { items: items.slice(offset, offset + limit), metadata: { resourceVersion: rv, continue: next, remainingItemCount: items.length - offset - limit } };
}

function deleteOptions(q: URLSearchParams, body: DeleteOptions | undefined): DeleteOptions {
  const opts: DeleteOptions = { ...(body ?? {}) };
  const g = q.get('gracePeriodSeconds');
  if (g !== null && g !== '') opts.gracePeriodSeconds = Number(g);
  const p = q.get('propagationPolicy');
  if (p) opts.propagationPolicy = p as DeleteOptions['propagationPolicy'];
  return opts;
}

function methodNotAllowed(method: string): ApiError {
  return new ApiError(405, 'MethodNotAllowed', `the server does not allow this method on the requested resource (${method})`);
}

function notFoundPath(): ApiError {
  return new ApiError(404, 'NotFound', 'the server could not find the requested resource');
}

function serveWatch(
  api: ApiCore,
  req: IncomingMessage,
  res: ServerResponse,
  t: ResourceType,
  namespace: string | undefined,
  q: URLSearchParams,
  registry?: Set<() => void>,
): void {
  const label = parseLabelSelector(q.get('labelSelector') ?? undefined);
  const field = parseFieldSelector(q.get('fieldSelector') ?? undefined);
  const matches = (o: KubeObject) => (!namespace || !t.namespaced || o.metadata.namespace === namespace) && label(o.metadata.labels ?? {}) && field(o);
  const keyOf = (o: KubeObject) => `${o.metadata.namespace ?? ''}/${o.metadata.name}`;
  const rvParam = q.get('resourceVersion');
  const tKey = typeKey(t);

  res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked', 'Cache-Control': 'no-cache, private' });
  res.flushHeaders(); // clients resolve the watch request on the headers; an idle watch must not hold them back
  const write = (type: string, object: unknown) => res.write(`${JSON.stringify({ type, object })}\n`);

  const matched = new Set<string>();
  const deliver = (type: 'ADDED' | 'MODIFIED' | 'DELETED', o: KubeObject) => {
    const k = keyOf(o);
    const was = matched.has(k);
    if (type === 'DELETED') {
      if (was || matches(o)) write('DELETED', o);
      matched.delete(k);
      return;
    }
    const now = matches(o);
    if (now) matched.add(k);
    else matched.delete(k);
    if (now && was) write(type === 'ADDED' ? 'ADDED' : 'MODIFIED', o);
    else if (now) write('ADDED', o);
    else if (was) write('DELETED', o);
  };

  if (q.get('sendInitialEvents') === 'true') {
    // streaming list (WatchList): the current state as ADDED, then a bookmark marking its end
    for (const o of api.store.list(t, namespace)) if (matches(o)) deliver('ADDED', o);
    write('BOOKMARK', {
      kind: t.kind,
      apiVersion: groupVersion(t),
      metadata: { resourceVersion: String(api.store.resourceVersion), annotations: { 'k8s.io/initial-events-end': 'true' } },
    });
  } else if (!rvParam || rvParam === '0') {
    for (const o of api.store.list(t, namespace)) if (matches(o)) deliver('ADDED', o);
  } else {
    const rv = Number(rvParam);
    const events = Number.isFinite(rv) ? api.store.eventsSince(tKey, rv) : 'expired';
    if (events === 'expired') {
      write('ERROR', new ApiError(410, 'Expired', `too old resource version: ${rvParam} (${api.store.oldestResumableVersion})`).toStatus());
      res.end();
      return;
    }
    // objects that existed at `rv` and matched are what the client holds; approximate with the current matches
    // (read in place: a copy of every object per watch request blocked the server for seconds at 100 000 pods)
    for (const o of api.store.listShared(t, namespace)) if (matches(o) && Number(o.metadata.resourceVersion) <= rv) matched.add(keyOf(o));
    const seen = new Set<string>();
    for (const e of events) {
      const k = keyOf(e.object);
      if (!seen.has(k)) {
        seen.add(k);
        // the first change after `rv` tells whether the object existed then
        if (e.type === 'ADDED') matched.delete(k);
        else if (matches(e.object)) matched.add(k);
      }
      deliver(e.type, e.object);
    }
  }

  const unsubscribe = api.store.subscribe((e) => {
    if (e.typeKey === tKey) deliver(e.type, e.object);
  });
  const timers: NodeJS.Timeout[] = [];
  const finish = () => {
    registry?.delete(finish);
    unsubscribe();
    for (const tm of timers) clearTimeout(tm);
    if (!res.writableEnded) res.end();
  };
  if (q.get('allowWatchBookmarks') === 'true') {
    const iv = setInterval(
      () => write('BOOKMARK', { kind: t.kind, apiVersion: groupVersion(t), metadata: { resourceVersion: String(api.store.resourceVersion) } }),
      BOOKMARK_INTERVAL_MS,
    );
    iv.unref();
    timers.push(iv);
  }
  const timeoutSeconds = Number(q.get('timeoutSeconds') ?? 0);
  if (timeoutSeconds > 0) {
    const tm = setTimeout(finish, timeoutSeconds * 1000);
    tm.unref();
    timers.push(tm);
  }
  registry?.add(finish);
  req.on('close', finish);
  res.on('close', finish);
}

/**
 * Starts the server on `host:port` (default 127.0.0.1, port 0 = an ephemeral port).
 * `close()` ends open watches and waits for the socket to close.
 */
/** Fault injection (infra/local/faults.ts): an error status to answer instead of serving the request. */
export type RequestFault = (method: string, path: string) => { status: number; code: string; message: string } | undefined;

export async function startApiServer(
  api: ApiCore,
  opts: { host?: string; port?: number; log?: RequestLogger; fault?: RequestFault } = {},
): Promise<RunningServer> {
  const server = createApiServer(api, opts.log, opts.fault);
  const host = opts.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${host}:${port}`,
    port,
    closeWatches: () => {
      const all = [...(openWatches.get(server) ?? [])];
      for (const f of all) f();
      return all.length;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
