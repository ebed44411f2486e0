/**
 * infra/k8s as it ships, applied to the real tier with server-side apply and strict field
 * validation: the kustomization's resources with its namespace and labels, its ConfigMap generated
 * from the env file (kubectl is not installed here, so this does the few kustomize steps the
 * kustomization uses; the generated name keeps no hash suffix), and the CRDs of infra/k8s/crds.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments, parse } from 'yaml';
import type { ControlPlane } from './cluster.ts';

const RepoRoot = join(import.meta.dirname, '..', '..', '..');
const K8sDir = join(RepoRoot, 'infra', 'k8s');

type Obj = Record<string, any>;

/** Kinds this applies that are namespaced. */
const Namespaced = new Set(['ServiceAccount', 'Deployment', 'ConfigMap', 'Role', 'RoleBinding', 'Secret', 'Service']);

function loadYaml(file: string): Obj[] {
  return parseAllDocuments(readFileSync(file, 'utf8'))
    .map((d) => d.toJS() as Obj)
    .filter((d) => d !== null && typeof d === 'object');
}

/** The objects `kubectl apply -k infra/k8s` would create. */
export function shippedManifests(): Obj[] {
  const k = parse(readFileSync(join(K8sDir, 'kustomization.yaml'), 'utf8')) as Obj;
  const labels: Record<string, string> = Object.assign({}, ...(k.labels ?? []).map((l: Obj) => l.pairs));
  const objects = (k.resources as string[]).flatMap((f) => loadYaml(join(K8sDir, f)));
  for (const g of k.configMapGenerator ?? []) {
    const data: Record<string, string> = {};
    for (const envFile of g.envs ?? []) {
      for (const line of readFileSync(join(K8sDir, envFile), 'utf8').split('\n')) {
        if (!line.trim() || line.trimStart().startsWith('#')) continue;
        const i = line.indexOf('=');
        data[line.slice(0, i)] = line.slice(i + 1);
      }
    }
    objects.push({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: g.name }, data });
  }
  for (const o of objects) {
    o.metadata.labels = { ...(o.metadata.labels ?? {}), ...labels };
    if (Namespaced.has(o.kind) && k.namespace) o.metadata.namespace = k.namespace;
  }
  return objects;
}

/** The CRDs of infra/k8s/crds (kustomization order). */
export function shippedCrds(): Obj[] {
  const dir = join(K8sDir, 'crds');
  const k = parse(readFileSync(join(dir, 'kustomization.yaml'), 'utf8')) as Obj;
  return (k.resources as string[]).flatMap((f) => loadYaml(join(dir, f)));
}

/** The REST path of an object (built-in kinds and CRDs; plural = lower-case kind + s / ies). */
export function pathOf(o: Obj, plural?: string): string {
  const [group, version] = o.apiVersion.includes('/') ? o.apiVersion.split('/') : ['', o.apiVersion];
  const base = group ? `/apis/${group}/${version}` : `/api/${version}`;
  const kind = (o.kind as string).toLowerCase();
  const res = plural ?? (kind.endsWith('y') ? `${kind.slice(0, -1)}ies` : `${kind}s`);
  const ns = Namespaced.has(o.kind) || o.metadata?.namespace ? `/namespaces/${o.metadata.namespace}` : '';
  return `${base}${ns}/${res}/${o.metadata.name}`;
}

/** Server-side apply of one object (strict field validation); throws with the server's message. */
export async function apply(cp: ControlPlane, o: Obj, opts: { dryRun?: boolean; plural?: string } = {}): Promise<void> {
  const q = `fieldManager=nodefleet-test&force=true&fieldValidation=Strict${opts.dryRun ? '&dryRun=All' : ''}`;
  const r = await cp.request('PATCH', `${pathOf(o, opts.plural)}?${q}`, JSON.stringify(o), { contentType: 'application/apply-patch+yaml' });
  if (r.status >= 300) throw new Error(`apply ${o.kind}/${o.metadata.name}: HTTP ${r.status}: ${r.body?.message ?? JSON.stringify(r.body)}`);
}

/** Applies CRDs and waits until each is Established. */
export async function applyCrds(cp: ControlPlane, crds: Obj[]): Promise<void> {
  for (const c of crds) await apply(cp, c);
  for (const c of crds) {
    for (let i = 0; ; i++) {
      const r = await cp.request('GET', pathOf(c));
      if ((r.body?.status?.conditions ?? []).some((x: Obj) => x.type === 'Established' && x.status === 'True')) break;
      if (i > 300) throw new Error(`CRD ${c.metadata.name} not Established after 60 s`);
      await new Promise((res) => setTimeout(res, 200));
    }
    // Established is not served yet: a list answers 429 while the resource's storage initializes.
    const v = c.spec.versions.find((x: Obj) => x.storage)?.name ?? c.spec.versions[0].name;
    for (let i = 0; ; i++) {
      const r = await cp.request('GET', `/apis/${c.spec.group}/${v}/${c.spec.names.plural}?limit=1`);
      if (r.status === 200) break;
      if (i > 300) throw new Error(`CRD ${c.metadata.name}: list still HTTP ${r.status} after 60 s`);
      await new Promise((res) => setTimeout(res, 200));
    }
  }
}

/**
 * Applies infra/k8s's CRDs, then its manifests (namespace first, as kubectl orders them). With
 * `crds` (a cluster that has Karpenter's own), those are applied instead of the shipped CRDs of the
 * same names, as docs/migration.md says (infra/k8s/crds is for clusters without Karpenter's).
 */
export async function applyShipped(cp: ControlPlane, opts: { crds?: Obj[] } = {}): Promise<Obj[]> {
  const own = new Set((opts.crds ?? []).map((c) => c.metadata.name as string));
  await applyCrds(cp, [...shippedCrds().filter((c) => !own.has(c.metadata.name)), ...(opts.crds ?? [])]);
  const objects = shippedManifests();
  const order = (o: Obj) => (o.kind === 'Namespace' ? 0 : o.kind === 'ServiceAccount' ? 1 : 2);
  for (const o of [...objects].sort((a, b) => order(a) - order(b))) await apply(cp, o);
  return objects;
}
