/**
 * `npm run validate-differential [-- --seed N --count N --strict --show N --out FILE]`: random NodePools and
 * EC2NodeClasses (test/real/differential/generate.ts) sent to the real API server with
 * Karpenter's own CRDs installed (sigs.k8s.io/karpenter and github.com/aws/karpenter-provider-aws
 * v1.15.0 from the Go module proxy; OpenAPI and CEL evaluated by the server) as server-side
 * dry-run creates with strict field validation, and to nodefleet's `validate` rules
 * (shared/api/validate.ts validateObject). Each manifest must get the same accept / reject; a
 * disagreement is either one of the documented differences (test/real/differential/differences.ts,
 * docs/validate-differential.md) or undocumented. With --strict an undocumented one exits 1; a
 * control plane that cannot be built or started exits 2.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { validateObject } from '../../shared/api/validate.ts';
import { startControlPlane, type ControlPlane } from './control-plane/cluster.ts';
import { applyCrds } from './control-plane/manifests.ts';
import { manifests } from './differential/generate.ts';
import { documentedDifference } from './differential/differences.ts';

type Obj = Record<string, any>;

/** Karpenter's CRDs: module, version, files. */
export const KarpenterCrds = [
  { module: 'sigs.k8s.io/karpenter', version: 'v1.15.0', files: ['pkg/apis/crds/karpenter.sh_nodepools.yaml'] },
  { module: 'github.com/aws/karpenter-provider-aws', version: 'v1.15.0', files: ['pkg/apis/crds/karpenter.k8s.aws_ec2nodeclasses.yaml'] },
];

/** Downloads (module proxy) and reads Karpenter's CRDs. */
export function karpenterCrds(): Obj[] {
  return KarpenterCrds.flatMap(({ module, version, files }) => {
    const r = spawnSync('go', ['mod', 'download', '-json', `${module}@${version}`], {
      cwd: tmpdir(),
      encoding: 'utf8',
      env: { ...process.env, GOFLAGS: '', GOTOOLCHAIN: process.env.GOTOOLCHAIN ?? 'auto' },
    });
    if (r.error || r.status !== 0) throw new Error(`go mod download ${module}@${version} failed: ${r.error?.message ?? r.stderr.trim()}`);
    const dir = (JSON.parse(r.stdout) as { Dir: string }).Dir;
    return files.flatMap((f) => parseAllDocuments(readFileSync(join(dir, f), 'utf8')).map((d) => d.toJS() as Obj));
  });
}

export interface Verdict {
  manifest: Obj;
  server: { accepted: boolean; message: string };
  nodefleet: { accepted: boolean; problems: string[] };
  /** Id of the documented difference, when they disagree and one explains it. */
  documented?: string;
}

/** The server's answer to a dry-run create (accepted: 201). */
export async function serverVerdict(cp: ControlPlane, o: Obj): Promise<{ accepted: boolean; message: string }> {
  const plural = o.kind === 'NodePool' ? 'nodepools' : 'ec2nodeclasses';
  const r = await cp.request('POST', `/apis/${o.apiVersion}/${plural}?dryRun=All&fieldValidation=Strict`, o);
  if (r.status === 201) return { accepted: true, message: '' };
  if (r.status === 422 || r.status === 400) return { accepted: false, message: String(r.body?.message ?? r.body) };
  throw new Error(`dry-run ${o.kind}: HTTP ${r.status}: ${JSON.stringify(r.body)}`);
}

/** Compares one manifest. */
export async function compare(cp: ControlPlane, manifest: Obj): Promise<Verdict> {
  const server = await serverVerdict(cp, manifest);
  const problems = validateObject(structuredClone(manifest));
  const v: Verdict = { manifest, server, nodefleet: { accepted: problems.length === 0, problems } };
  if (v.server.accepted !== v.nodefleet.accepted) v.documented = documentedDifference(v);
  return v;
}

export interface Summary {
  seed: number;
  count: number;
  serverAccepted: number;
  nodefleetAccepted: number;
  agreed: number;
  documented: Record<string, number>;
  undocumented: Verdict[];
}

/** Runs the differential on a started control plane with Karpenter's CRDs. */
export async function runDifferential(cp: ControlPlane, seed: number, count: number): Promise<Summary> {
  const s: Summary = { seed, count, serverAccepted: 0, nodefleetAccepted: 0, agreed: 0, documented: {}, undocumented: [] };
  const all = manifests(seed, count);
  for (let i = 0; i < all.length; i += 8) {
    const verdicts = await Promise.all(all.slice(i, i + 8).map((m) => compare(cp, m)));
    for (const v of verdicts) {
      if (v.server.accepted) s.serverAccepted++;
      if (v.nodefleet.accepted) s.nodefleetAccepted++;
      if (v.server.accepted === v.nodefleet.accepted) s.agreed++;
      else if (v.documented) s.documented[v.documented] = (s.documented[v.documented] ?? 0) + 1;
      else s.undocumented.push(v);
    }
  }
  return s;
}

/** Starts a control plane with Karpenter's CRDs, runs, stops. */
export async function differential(seed: number, count: number, log: (l: string) => void): Promise<Summary> {
  const crds = karpenterCrds();
  const cp = await startControlPlane({ log });
  try {
    await applyCrds(cp, crds);
    return await runDifferential(cp, seed, count);
  } finally {
    await cp.stop();
  }
}

function parseArgs(argv: string[]): { seed: number; count: number; strict: boolean; show: number; out?: string } {
  const o: { seed: number; count: number; strict: boolean; show: number; out?: string } = { seed: 1, count: 2000, strict: false, show: 5 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const num = () => {
      const n = Number(argv[++i]);
      if (!Number.isInteger(n) || n < 0) throw new Error(`${a}: expected a whole number, got ${argv[i]}`);
      return n;
    };
    if (a === '--seed') o.seed = num();
    else if (a === '--count') o.count = num();
    else if (a === '--show') o.show = num();
    else if (a === '--strict') o.strict = true;
    else if (a === '--out') o.out = argv[++i];
    else throw new Error(`unknown argument ${a}`);
  }
  return o;
}

if (import.meta.main) {
  let opts: ReturnType<typeof parseArgs>;
  try {
    opts = parseArgs(process.argv.slice(2));
  } catch (err) {
    console.error(
      `validate-differential: ${(err as Error).message}\nusage: npm run validate-differential -- [--seed N] [--count N] [--strict] [--show N] [--out FILE]`,
    );
    process.exit(2);
  }
  const t0 = Date.now();
  let s: Summary;
  try {
    s = await differential(opts.seed, opts.count, (l) => console.error(l));
  } catch (err) {
    console.error(`validate-differential: ${(err as Error).message}`);
    process.exit(2);
  }
  if (opts.out) writeFileSync(opts.out, `${JSON.stringify(s.undocumented, null, 1)}\n`);
  for (const v of s.undocumented.slice(0, opts.show)) {
    console.log('---- undocumented disagreement');
    console.log(stringify(v.manifest).trimEnd());
    console.log(`server: ${v.server.accepted ? 'accepted' : `rejected: ${v.server.message}`}`);
    console.log(`nodefleet: ${v.nodefleet.accepted ? 'accepted' : `rejected: ${v.nodefleet.problems.join(' | ')}`}`);
  }
  const doc = Object.entries(s.documented)
    .map(([k, n]) => `${k}=${n}`)
    .join(', ');
  console.log(
    `validate-differential: seed ${s.seed}, ${s.count} manifests: server accepted ${s.serverAccepted}, nodefleet accepted ${s.nodefleetAccepted}, ` +
      `agreed ${s.agreed}, documented differences ${s.count - s.agreed - s.undocumented.length}${doc ? ` (${doc})` : ''}, undocumented ${s.undocumented.length} (${((Date.now() - t0) / 1000).toFixed(1)} s)`,
  );
  process.exit(opts.strict && s.undocumented.length > 0 ? 1 : 0);
}
