/**
 * The real control-plane tier: etcd, kube-apiserver and (on request) kube-scheduler,
 * kube-controller-manager and kwok, built by build.sh from the Go module proxy and started here on
 * 127.0.0.1 with free ports and a temporary directory. RBAC and the Node authorizer are on; each
 * identity has its own static token (the EKS access entries' Kubernetes groups, infra/aws/config.ts
 * kubernetesGroupOf) and the agent a real ServiceAccount token from the TokenRequest API, signed with
 * a key made here. The server's serving certificate is the one kube-apiserver generates in its
 * --cert-dir (self-signed, for 127.0.0.1 and localhost); clients trust exactly that file.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const Here = import.meta.dirname;
/** kwok stops posting the status of a Node with this annotation set to "true" (its kubelet stopped). */
export const KubeletStoppedAnnotation = 'nodefleet.io/kubelet-stopped';

/** One identity the API server knows by its static token. */
export interface TokenIdentity {
  user: string;
  groups: string[];
}

export interface ControlPlaneOptions {
  /** Identities to create tokens for, by name (an admin in system:masters is always added). */
  identities?: Record<string, TokenIdentity>;
  /** Also start kube-scheduler and kube-controller-manager. */
  controllers?: boolean;
  /** Also start kwok (fake kubelets for Nodes annotated kwok.x-k8s.io/node=fake). */
  kwok?: boolean;
  /** Progress lines. */
  log?: (line: string) => void;
  /**
   * Audit the Eviction API: every `pods/eviction` request with its answer (RequestResponse
   * level), and every pod deletion (Metadata level: who, which pod, when), one JSON line each in
   * {@link ControlPlane.auditLog}.
   */
  auditEvictions?: boolean;
  /**
   * Also audit, at Metadata level (who, verb, object, answer), every write to Nodes, pods (delete,
   * eviction), NodeClaims and NodePools (and their status): which controller touched which node (test/real/beside-karpenter.test.ts).
   */
  auditWrites?: boolean;
}

/** An HTTP answer: status and parsed JSON body (or the raw text when it is not JSON). */
export interface ApiResponse {
  status: number;
  body: any;
}

export interface ControlPlane {
  /** https://127.0.0.1:<port> */
  server: string;
  /** PEM of the serving certificate chain (trust it as the CA). */
  caData: string;
  adminToken: string;
  /** Token of each identity given in the options. */
  tokens: Record<string, string>;
  /** A request to the API server with `token` (default: the admin's). */
  request(method: string, path: string, body?: unknown, opts?: { token?: string; contentType?: string }): Promise<ApiResponse>;
  /** Stops every process (SIGTERM, then SIGKILL after 10 s) and removes the temporary directory. */
  stop(): Promise<void>;
  /**
   * Stops kube-apiserver (SIGTERM, as a rolling upgrade of a control-plane instance does) and starts it
   * again with the same flags, port and certificates; resolves when it is ready. Every watch ends,
   * requests in between are refused, and its watch cache starts over from etcd.
   */
  restartApiServer(): Promise<void>;
  /** Compacts etcd's history up to its current revision (what kube-apiserver does every 5 minutes); returns that revision. */
  compactEtcd(): Promise<number>;
  /** The temporary directory (logs in <dir>/logs). */
  dir: string;
  /** The audit log (JSON lines) when `auditEvictions` or `auditWrites` was asked for. */
  auditLog?: string;
  /** The directory of the built binaries. */
  bin: string;
}

/** Runs build.sh (skips what is built) and returns the bin directory. */
export function buildControlPlane(log: (line: string) => void = () => {}): string {
  const r = spawnSync('bash', [join(Here, 'build.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  for (const line of (r.stderr ?? '').trim().split('\n')) if (line) log(line);
  if (r.error) throw new Error(`control plane: cannot run build.sh: ${r.error.message}`);
  if (r.status !== 0) throw new Error(`control plane: build.sh failed (exit ${r.status}):\n${r.stderr.trim()}`);
  return r.stdout.trim().split('\n').at(-1)!;
}

/** A free TCP port on 127.0.0.1 (closed again; the child binds it). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.unref();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** HTTPS request trusting `ca` (or nothing, for a component's self-signed health endpoint); plain HTTP for an http: URL (etcd). */
function send(url: string, method: string, opts: { ca?: string; token?: string; body?: unknown; contentType?: string }): Promise<ApiResponse> {
  const payload = opts.body === undefined ? undefined : typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
  return new Promise((resolve, reject) => {
    const req = (url.startsWith('http:') ? httpRequest : httpsRequest)(
      url,
      {
        method,
        ca: opts.ca,
        rejectUnauthorized: opts.ca !== undefined,
        headers: {
          accept: 'application/json',
          ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}),
          ...(payload !== undefined ? { 'content-type': opts.contentType ?? 'application/json', 'content-length': Buffer.byteLength(payload) } : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: unknown = text;
          try {
            body = JSON.parse(text);
          } catch {
            // plain text (readyz, healthz)
          }
          resolve({ status: res.statusCode ?? 0, body });
        });
      },
    );
    req.on('error', reject);
    req.setTimeout(30_000, () => req.destroy(new Error(`${method} ${url}: timed out`)));
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}

function kubeconfig(server: string, caFile: string, token: string): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters: [{name: real, cluster: {server: "' + server + '", certificate-authority: "' + caFile + '"}}]',
    'users: [{name: u, user: {token: "' + token + '"}}]',
    'contexts: [{name: c, context: {cluster: real, user: u}}]',
    'current-context: c',
    '',
  ].join('\n');
}

/** Starts the control plane and waits until every component is ready. */
export async function startControlPlane(opts: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const log = opts.log ?? (() => {});
  const bin = buildControlPlane(log);
  const dir = mkdtempSync(join(tmpdir(), 'nodefleet-real-'));
  const logs = join(dir, 'logs');
  spawnSync('mkdir', ['-p', logs, join(dir, 'etcd'), join(dir, 'certs')]);
  const children: { name: string; child: ChildProcess }[] = [];
  let stopped = false;

  const run = (name: string, args: string[]) => {
    const out = openSync(join(logs, `${name}.log`), 'a');
    const child = spawn(join(bin, name), args, { stdio: ['ignore', out, out] });
    closeSync(out);
    child.on('exit', (code, signal) => {
      if (!stopped) log(`control plane: ${name} exited (${signal ?? code}); log: ${join(logs, `${name}.log`)}`);
    });
    children.push({ name, child });
    return child;
  };
  const logTail = (name: string) => {
    const f = join(logs, `${name}.log`);
    return existsSync(f) ? readFileSync(f, 'utf8').split('\n').slice(-30).join('\n') : '(no log)';
  };
  const alive = (name: string) => {
    const c = children.find((x) => x.name === name)?.child;
    if (c && c.exitCode !== null) throw new Error(`control plane: ${name} exited with ${c.exitCode}:\n${logTail(name)}`);
  };

  const end = async (child: ChildProcess) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    child.kill('SIGTERM');
    const killed = await Promise.race([exited.then(() => true), sleep(10_000).then(() => false)]);
    if (!killed) {
      child.kill('SIGKILL');
      await exited;
    }
  };
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    for (const { child } of [...children].reverse()) await end(child);
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    // etcd
    const [etcdClient, etcdPeer] = [await freePort(), await freePort()];
    run('etcd', ['-data-dir', join(dir, 'etcd'), '-listen-client', `http://127.0.0.1:${etcdClient}`, '-listen-peer', `http://127.0.0.1:${etcdPeer}`]);

    // credentials
    const sa = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const saKey = join(dir, 'certs', 'sa.key');
    const saPub = join(dir, 'certs', 'sa.pub');
    writeFileSync(saKey, sa.privateKey.export({ type: 'pkcs1', format: 'pem' }));
    writeFileSync(saPub, sa.publicKey.export({ type: 'spki', format: 'pem' }));
    const token = () => randomBytes(24).toString('hex');
    const adminToken = token();
    const all: Record<string, TokenIdentity & { token: string }> = {
      admin: { user: 'nodefleet-test-admin', groups: ['system:masters'], token: adminToken },
      'kube-scheduler': { user: 'system:kube-scheduler', groups: [], token: token() },
      'kube-controller-manager': { user: 'system:kube-controller-manager', groups: [], token: token() },
      kwok: { user: 'kwok', groups: ['system:masters'], token: token() },
    };
    for (const [name, id] of Object.entries(opts.identities ?? {})) all[name] = { ...id, token: token() };
    const csv = Object.values(all)
      .map((i, n) => `${i.token},${i.user},uid-${n},"${i.groups.join(',')}"`)
      .join('\n');
    const tokenFile = join(dir, 'certs', 'tokens.csv');
    writeFileSync(tokenFile, `${csv}\n`);

    // kube-apiserver
    const port = await freePort();
    const auditLog = opts.auditEvictions || opts.auditWrites ? join(logs, 'audit.jsonl') : undefined;
    const auditPolicy = join(dir, 'certs', 'audit-policy.yaml');
    if (auditLog) {
      writeFileSync(
        auditPolicy,
        [
          'apiVersion: audit.k8s.io/v1',
          'kind: Policy',
          'omitStages: [RequestReceived]',
          'rules:',
          ...(opts.auditEvictions
            ? [
                '  - level: RequestResponse',
                '    resources: [{ group: "", resources: ["pods/eviction"] }]',
                // Pod deletions (who deleted which pod, when): the chaos harness's force-delete invariant.
                '  - level: Metadata',
                '    verbs: ["delete"]',
                '    resources: [{ group: "", resources: ["pods"] }]',
              ]
            : []),
          ...(opts.auditWrites
            ? [
                '  - level: Metadata',
                '    verbs: [create, update, patch, delete, deletecollection]',
                '    resources: [{ group: "", resources: ["nodes", "pods", "pods/eviction"] }, { group: karpenter.sh, resources: ["nodeclaims", "nodeclaims/status", "nodepools", "nodepools/status"] }]',
              ]
            : []),
          '  - level: None',
          '',
        ].join('\n'),
      );
    }
    const certDir = join(dir, 'certs', 'apiserver');
    const apiserverArgs = [
      `--etcd-servers=http://127.0.0.1:${etcdClient}`,
      `--secure-port=${port}`,
      '--bind-address=127.0.0.1',
      '--advertise-address=127.0.0.1',
      // A loopback address cannot be published in the kubernetes Service's endpoints.
      '--endpoint-reconciler-type=none',
      `--cert-dir=${certDir}`,
      `--token-auth-file=${tokenFile}`,
      '--authorization-mode=Node,RBAC',
      '--service-account-issuer=https://kubernetes.default.svc',
      `--service-account-key-file=${saPub}`,
      `--service-account-signing-key-file=${saKey}`,
      '--service-cluster-ip-range=10.96.0.0/16',
      '--anonymous-auth=false',
      '--enable-priority-and-fairness=false',
      '--profiling=false',
      ...(auditLog ? [`--audit-policy-file=${auditPolicy}`, `--audit-log-path=${auditLog}`, '--audit-log-format=json', '--audit-log-mode=blocking'] : []),
    ];
    run('kube-apiserver', apiserverArgs);
    const server = `https://127.0.0.1:${port}`;
    // The serving certificate appears once the server has generated it.
    let caData = '';
    const caFile = join(certDir, 'apiserver.crt');
    const apiserverReady = async () => {
      for (let i = 0; ; i++) {
        alive('etcd');
        alive('kube-apiserver');
        if (existsSync(caFile)) {
          caData = readFileSync(caFile, 'utf8');
          const r = await send(`${server}/readyz`, 'GET', { ca: caData, token: adminToken }).catch(() => undefined);
          if (r?.status === 200) return;
        }
        if (i > 600) throw new Error(`control plane: kube-apiserver not ready after 120 s:\n${logTail('kube-apiserver')}`);
        await sleep(200);
      }
    };
    await apiserverReady();
    log(`control plane: kube-apiserver ready at ${server}`);
    const restartApiServer = async () => {
      const i = children.findIndex((c) => c.name === 'kube-apiserver');
      if (i >= 0) {
        const [{ child }] = children.splice(i, 1);
        await end(child);
      }
      run('kube-apiserver', apiserverArgs);
      await apiserverReady();
    };
    const etcd = `http://127.0.0.1:${etcdClient}`;
    const compactEtcd = async () => {
      // etcd's JSON gateway: a range on the key "\0" answers with the store's current revision.
      const range = await send(`${etcd}/v3/kv/range`, 'POST', { body: { key: 'AA==' } });
      const revision = Number(range.body?.header?.revision);
      if (!(revision > 0)) throw new Error(`etcd: no revision in ${JSON.stringify(range.body).slice(0, 200)}`);
      const c = await send(`${etcd}/v3/kv/compaction`, 'POST', { body: { revision, physical: true } });
      if (c.status !== 200) throw new Error(`etcd compaction at ${revision}: HTTP ${c.status}: ${JSON.stringify(c.body).slice(0, 200)}`);
      return revision;
    };
    const request: ControlPlane['request'] = (method, path, body, o = {}) =>
      send(`${server}${path}`, method, { ca: caData, token: o.token ?? adminToken, body, contentType: o.contentType });

    const kubeconfigOf = (name: string) => {
      const f = join(dir, 'certs', `${name}.kubeconfig`);
      writeFileSync(f, kubeconfig(server, caFile, all[name].token));
      return f;
    };
    const healthy = async (name: string, healthPort: number) => {
      for (let i = 0; ; i++) {
        alive(name);
        const r = await send(`https://127.0.0.1:${healthPort}/healthz`, 'GET', {}).catch(() => undefined);
        if (r?.status === 200) return;
        if (i > 600) throw new Error(`control plane: ${name} not healthy after 120 s:\n${logTail(name)}`);
        await sleep(200);
      }
    };
    if (opts.controllers) {
      const [sched, kcm] = [await freePort(), await freePort()];
      const schedConfig = kubeconfigOf('kube-scheduler');
      run('kube-scheduler', [
        `--kubeconfig=${schedConfig}`,
        `--authentication-kubeconfig=${schedConfig}`,
        `--authorization-kubeconfig=${schedConfig}`,
        '--leader-elect=false',
        `--secure-port=${sched}`,
        '--bind-address=127.0.0.1',
      ]);
      const kcmConfig = kubeconfigOf('kube-controller-manager');
      run('kube-controller-manager', [
        `--kubeconfig=${kcmConfig}`,
        `--authentication-kubeconfig=${kcmConfig}`,
        `--authorization-kubeconfig=${kcmConfig}`,
        '--leader-elect=false',
        `--secure-port=${kcm}`,
        '--bind-address=127.0.0.1',
        `--service-account-private-key-file=${saKey}`,
        `--root-ca-file=${caFile}`,
        '--use-service-account-credentials=true',
        '--controllers=*,-node-ipam-controller',
      ]);
      await healthy('kube-scheduler', sched);
      await healthy('kube-controller-manager', kcm);
      log('control plane: kube-scheduler and kube-controller-manager healthy');
    }
    if (opts.kwok) {
      const stages = join(bin, '..', 'kwok-stages');
      const configs = readdirSync(stages)
        .filter((f) => f.endsWith('.yaml'))
        .map((f) => `--config=${join(stages, f)}`);
      const health = await freePort();
      run('kwok', [
        `--kubeconfig=${kubeconfigOf('kwok')}`,
        '--manage-all-nodes=false',
        '--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake',
        // A Node (or pod) annotated so is left alone: its kubelet stopped posting status.
        `--disregard-status-with-annotation-selector=${KubeletStoppedAnnotation}=true`,
        `--server-address=127.0.0.1:${health}`,
        ...configs,
      ]);
      for (let i = 0; ; i++) {
        alive('kwok');
        const r = await new Promise<number>((res) => {
          import('node:http').then(({ get }) => get(`http://127.0.0.1:${health}/healthz`, (x) => res(x.statusCode ?? 0)).on('error', () => res(0)));
        });
        if (r === 200) break;
        if (i > 600) throw new Error(`control plane: kwok not healthy after 120 s:\n${logTail('kwok')}`);
        await sleep(200);
      }
      log('control plane: kwok healthy');
    }
    const tokens = Object.fromEntries(Object.keys(opts.identities ?? {}).map((n) => [n, all[n].token]));
    return { server, caData, adminToken, tokens, request, stop, restartApiServer, compactEtcd, dir, bin, ...(auditLog ? { auditLog } : {}) };
  } catch (err) {
    await stop();
    throw err;
  }
}
