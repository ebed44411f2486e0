/**
 * Karpenter's own controller beside nodefleet on the real tier: `sigs.k8s.io/karpenter/kwok` (the
 * core controllers with the kwok cloud provider, at the release test/oracle/karpenter pins), built
 * by build.sh from the Go module proxy as `karpenter-kwok`. It runs outside the cluster as its
 * chart's ServiceAccount (`karpenter/karpenter`, a TokenRequest token) with the chart's own RBAC,
 * against Karpenter's own CRDs (its kwok chart's crds/ and the KWOKNodeClass CRD), which build.sh
 * copies from the module next to the binaries. Its kwok provider creates a Node for each NodeClaim
 * (providerID kwok://, annotation kwok.x-k8s.io/node=fake), so the tier's kwok runs it and its pods.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { get as httpGet } from 'node:http';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { freePort, type ControlPlane } from './cluster.ts';
import { apply } from './manifests.ts';

type Obj = Record<string, any>;

/** Karpenter's namespace, ServiceAccount and the chart's release name (what its templates' names render to). */
export const KarpenterNamespace = 'karpenter';
export const KarpenterServiceAccount = 'karpenter';
/** The user the API server sees for Karpenter's controller. */
export const KarpenterUser = `system:serviceaccount:${KarpenterNamespace}:${KarpenterServiceAccount}`;

/** Where build.sh put the chart's CRDs and RBAC templates (next to the bin directory). */
function chartDir(bin: string): string {
  const d = join(bin, '..', 'karpenter');
  if (!existsSync(join(d, 'crds')) || !existsSync(join(d, 'rbac'))) throw new Error(`karpenter: ${d} has no crds/ or rbac/: run npm run real-build`);
  return d;
}

function yamlDocs(text: string): Obj[] {
  return parseAllDocuments(text)
    .map((d) => d.toJS() as Obj)
    .filter((d) => d !== null && typeof d === 'object');
}

/** Karpenter's CRDs at the built release: NodePool, NodeClaim, NodeOverlay, CapacityBuffer, KWOKNodeClass. */
export function karpenterCrds(bin: string): Obj[] {
  const dir = join(chartDir(bin), 'crds');
  return readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .flatMap((f) => yamlDocs(readFileSync(join(dir, f), 'utf8')));
}

/**
 * The chart's RBAC templates rendered with the default values: the release name and ServiceAccount
 * `karpenter`, its namespace; the optional blocks (labels, extra annotations, extra rules) left out.
 * @throws Error when a template uses an expression this does not render.
 */
export function karpenterRbac(bin: string): Obj[] {
  const dir = join(chartDir(bin), 'rbac');
  const out: Obj[] = [];
  for (const f of readdirSync(dir)
    .filter((x) => x.endsWith('.yaml'))
    .sort()) {
    const lines = readFileSync(join(dir, f), 'utf8')
      .split('\n')
      .filter((l) => !l.trim().startsWith('{{'))
      .map((l) =>
        l
          .replace(/\{\{\s*include "karpenter\.fullname" \.\s*\}\}/g, KarpenterServiceAccount)
          .replace(/\{\{\s*template "karpenter\.serviceAccountName" \.\s*\}\}/g, KarpenterServiceAccount)
          .replace(/\{\{\s*\.Release\.Namespace\s*\}\}/g, KarpenterNamespace),
      );
    const left = lines.find((l) => l.includes('{{'));
    if (left) throw new Error(`karpenter: ${f}: template expression not rendered: ${left.trim()}`);
    out.push(...yamlDocs(lines.join('\n')));
  }
  return out;
}

export interface KarpenterController {
  /** Its log (JSON lines, stdout and stderr). */
  logFile: string;
  /** Lines of its log at ERROR level. */
  errors(): string[];
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Installs Karpenter's namespace, ServiceAccount and RBAC, and starts its controller with a
 * kubeconfig holding that ServiceAccount's token; resolves once its health probe answers.
 * Karpenter's CRDs must be applied first ({@link karpenterCrds}).
 */
export async function startKarpenter(
  cp: ControlPlane,
  bin: string,
  opts: { log?: (line: string) => void; env?: Record<string, string> } = {},
): Promise<KarpenterController> {
  const log = opts.log ?? (() => {});
  const ns = await cp.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: KarpenterNamespace } });
  if (ns.status >= 300 && ns.status !== 409) throw new Error(`karpenter: namespace: HTTP ${ns.status}`);
  await apply(cp, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: KarpenterServiceAccount, namespace: KarpenterNamespace } });
  for (const o of karpenterRbac(bin)) await apply(cp, o);
  const tr = await cp.request('POST', `/api/v1/namespaces/${KarpenterNamespace}/serviceaccounts/${KarpenterServiceAccount}/token`, {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenRequest',
    spec: { expirationSeconds: 7200 },
  });
  if (tr.status !== 201) throw new Error(`karpenter: TokenRequest: HTTP ${tr.status}: ${JSON.stringify(tr.body)}`);
  const kubeconfig = join(cp.dir, 'karpenter.kubeconfig');
  writeFileSync(
    kubeconfig,
    [
      'apiVersion: v1',
      'kind: Config',
      `clusters: [{name: real, cluster: {server: "${cp.server}", certificate-authority-data: "${Buffer.from(cp.caData).toString('base64')}"}}]`,
      `users: [{name: karpenter, user: {token: "${tr.body.status.token}"}}]`,
      'contexts: [{name: karpenter, context: {cluster: real, user: karpenter}}]',
      'current-context: karpenter',
      '',
    ].join('\n'),
  );
  // Its metrics and health servers bind every interface (":port", not configurable); free ports.
  const [metrics, health] = [await freePort(), await freePort()];
  const logFile = join(cp.dir, 'logs', 'karpenter.log');
  const out = openSync(logFile, 'a');
  const child: ChildProcess = spawn(join(bin, 'karpenter-kwok'), [], {
    stdio: ['ignore', out, out],
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      KUBECONFIG: kubeconfig,
      SYSTEM_NAMESPACE: KarpenterNamespace,
      // Outside a pod the namespace cannot be read from the mounted ServiceAccount.
      LEADER_ELECTION_NAMESPACE: KarpenterNamespace,
      METRICS_PORT: String(metrics),
      HEALTH_PROBE_PORT: String(health),
      LOG_LEVEL: 'info',
      ...opts.env,
    },
  });
  closeSync(out);
  let stopped = false;
  child.on('exit', (code, signal) => {
    if (!stopped) log(`karpenter: exited (${signal ?? code}); log: ${logFile}`);
  });
  const tail = () => (existsSync(logFile) ? readFileSync(logFile, 'utf8').split('\n').slice(-30).join('\n') : '(no log)');
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    child.kill('SIGTERM');
    if (!(await Promise.race([exited.then(() => true), sleep(10_000).then(() => false)]))) {
      child.kill('SIGKILL');
      await exited;
    }
  };
  try {
    for (let i = 0; ; i++) {
      if (child.exitCode !== null) throw new Error(`karpenter: exited with ${child.exitCode}:\n${tail()}`);
      const status = await new Promise<number>((res) => {
        httpGet(`http://127.0.0.1:${health}/readyz`, (x) => {
          x.resume();
          res(x.statusCode ?? 0);
        }).on('error', () => res(0));
      });
      if (status === 200) break;
      if (i > 600) throw new Error(`karpenter: not ready after 120 s:\n${tail()}`);
      await sleep(200);
    }
  } catch (err) {
    await stop();
    throw err;
  }
  log(`karpenter: controller ready (${KarpenterUser})`);
  const errors = () =>
    (existsSync(logFile) ? readFileSync(logFile, 'utf8').split('\n') : []).filter((l) => {
      try {
        return (JSON.parse(l) as { level?: string }).level === 'ERROR';
      } catch {
        return false;
      }
    });
  return { logFile, errors, stop };
}
