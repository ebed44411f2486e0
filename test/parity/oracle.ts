/**
 * Builds and runs the Karpenter oracle (test/oracle/karpenter): `go build` into a gitignored
 * bin/ next to it (GOTOOLCHAIN=auto, so a machine with an older Go fetches the toolchain go.mod
 * asks for from the module proxy), then one long-lived `oracle --lines` process answers one
 * scenario per line.
 *
 * Two builds: `stock` (Karpenter as released; the side-by-side benchmark times it) and `ties`
 * (the parity harness). Karpenter breaks ties between topology domains by Go map iteration
 * order, which the Go runtime randomises on every run: a zonal or capacity-type spread whose
 * domains have equal counts, or the first pod of a self-affinity group, lands in a random domain
 * (topologygroup.go: `nextDomainTopologySpread` keeps the first minimum it meets, and
 * `nextDomainAffinity` bootstraps "a random viable domain"). That made the same parity seed give
 * 22–26 divergences per 100 scenarios from run to run. Every such choice is one Karpenter can
 * make; the `ties` build makes it reproducible by visiting domains in name order, ascending by
 * default, descending with NODEFLEET_TIE_ORDER=desc, or descending with the first name moved
 * last with NODEFLEET_TIE_ORDER=mid (us-east-1b, us-east-1a, us-east-1c: of three tied zones,
 * each is taken first by one order; the two extreme orders never take the middle one), and the
 * parity harness compares nodefleet with the closest of the decisions (test/parity/main.ts
 * `closest`). It is built from a copy of the module's own source in bin/ with the loops
 * rewritten (TieBreakPatches) plus one added file, and a `replace` in a bin/ go.mod; nothing of
 * Karpenter is stored in this repository.
 */
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

export const OracleDir = join(import.meta.dirname, '..', 'oracle', 'karpenter');
export const OracleBin = join(OracleDir, 'bin', 'oracle');
/** The parity build: topology ties broken by domain name (see the file comment). */
export const OracleTiesBin = join(OracleDir, 'bin', 'oracle-ties');

/**
 * The rewrites of Karpenter's pkg/controllers/provisioning/scheduling/topologygroup.go for the
 * `ties` build: each loop over a domain map or set becomes a loop over its sorted values. `count`
 * is how often the text must occur in v1.15.0; another count fails the build (a new Karpenter
 * version must be looked at, not silently half-patched).
 */
export const TieBreakPatches: { from: string; to: string; count: number }[] = [
  { from: 'for domain := range t.domains {', to: 'for _, domain := range nodefleetTieOrder(sets.KeySet(t.domains)) {', count: 5 },
  { from: 'for _, domain := range nodeDomains.Values() {', to: 'for _, domain := range nodefleetTieOrder(sets.New(nodeDomains.Values()...)) {', count: 3 },
];
const PatchedFile = join('pkg', 'controllers', 'provisioning', 'scheduling', 'topologygroup.go');

/**
 * Added to the copied package: the order the patched loops visit domains in, by name ascending,
 * descending when the environment has TieOrderEnv=desc, descending with the first moved last with
 * TieOrderEnv=mid. Karpenter keeps the first domain of least count, so of three tied domains each
 * is chosen by one of the orders.
 */
const TieOrderFile = `package scheduling

import (
	"os"
	"slices"

	"k8s.io/apimachinery/pkg/util/sets"
)

var nodefleetTieOrderName = os.Getenv("NODEFLEET_TIE_ORDER")

func nodefleetTieOrder(s sets.Set[string]) []string {
	out := sets.List(s)
	if nodefleetTieOrderName == "desc" || nodefleetTieOrderName == "mid" {
		slices.Reverse(out)
	}
	if nodefleetTieOrderName == "mid" && len(out) > 1 {
		out = append(out[1:], out[0])
	}
	return out
}
`;
/** Environment variable choosing the `ties` build's order: unset = ascending, `desc` = descending, `mid` = descending with the first moved last. */
export const TieOrderEnv = 'NODEFLEET_TIE_ORDER';

export type OracleBuild = 'stock' | 'ties';

function goEnv(): NodeJS.ProcessEnv {
  return { ...process.env, GOTOOLCHAIN: process.env.GOTOOLCHAIN ?? 'auto', GOFLAGS: '-mod=readonly' };
}

/**
 * Prepares the `ties` build in bin/: a copy of the Karpenter module with TieBreakPatches applied
 * (the go command refuses overlays of the module cache) and a go.mod that replaces the module by
 * it. Returns the `-modfile` to build with.
 */
function tiesModule(): string {
  // On a new machine the module is not in the cache yet, and `go list -m` then prints an empty Dir.
  const d = spawnSync('go', ['mod', 'download', 'sigs.k8s.io/karpenter'], { cwd: OracleDir, env: goEnv(), encoding: 'utf8' });
  if (d.error) throw new Error(`oracle: cannot run go: ${d.error.message}`);
  if (d.status !== 0) throw new Error(`oracle: go mod download sigs.k8s.io/karpenter failed:\n${d.stderr.trim()}`);
  const r = spawnSync('go', ['list', '-m', '-f', '{{.Dir}}', 'sigs.k8s.io/karpenter'], { cwd: OracleDir, env: goEnv(), encoding: 'utf8' });
  if (r.error) throw new Error(`oracle: cannot run go: ${r.error.message}`);
  if (r.status !== 0 || r.stdout.trim() === '') throw new Error(`oracle: go list sigs.k8s.io/karpenter failed:\n${r.stderr.trim()}`);
  const copy = join(OracleDir, 'bin', 'karpenter-ties');
  if (existsSync(copy)) {
    spawnSync('chmod', ['-R', 'u+w', copy]);
    rmSync(copy, { recursive: true, force: true });
  }
  cpSync(r.stdout.trim(), copy, { recursive: true });
  spawnSync('chmod', ['-R', 'u+w', copy]);
  const file = join(copy, PatchedFile);
  let src = readFileSync(file, 'utf8');
  for (const p of TieBreakPatches) {
    const n = src.split(p.from).length - 1;
    if (n !== p.count)
      throw new Error(`oracle: ${PatchedFile}: expected "${p.from}" ${p.count} times, found ${n} (another Karpenter version? review TieBreakPatches)`);
    src = src.split(p.from).join(p.to);
  }
  writeFileSync(file, src);
  writeFileSync(join(copy, 'pkg', 'controllers', 'provisioning', 'scheduling', 'zz_nodefleet_ties.go'), TieOrderFile);
  const modfile = join(OracleDir, 'bin', 'go.ties.mod');
  writeFileSync(modfile, `${readFileSync(join(OracleDir, 'go.mod'), 'utf8')}\nreplace sigs.k8s.io/karpenter => ./bin/karpenter-ties\n`);
  copyFileSync(join(OracleDir, 'go.sum'), join(OracleDir, 'bin', 'go.ties.sum'));
  return modfile;
}

/**
 * Builds the oracle unless the binary is newer than its sources (and this file, which holds the
 * patches of the `ties` build).
 * @throws Error naming the go command's output when the build fails (e.g. no Go, no module proxy).
 */
export function buildOracle(log: (line: string) => void = () => {}, build: OracleBuild = 'stock'): string {
  const bin = build === 'ties' ? OracleTiesBin : OracleBin;
  const sources = [
    ...readdirSync(OracleDir)
      .filter((f) => f.endsWith('.go') || f === 'go.mod' || f === 'go.sum')
      .map((f) => join(OracleDir, f)),
    import.meta.filename,
  ];
  const newest = Math.max(...sources.map((f) => statSync(f).mtimeMs));
  if (existsSync(bin) && statSync(bin).mtimeMs >= newest) return bin;
  log(`building the Karpenter oracle (${build}; go build, first time takes minutes)…`);
  const args = ['build', '-o', bin, ...(build === 'ties' ? ['-modfile', tiesModule()] : []), '.'];
  const r = spawnSync('go', args, { cwd: OracleDir, env: goEnv(), encoding: 'utf8' });
  if (r.error) throw new Error(`oracle: cannot run go: ${r.error.message}`);
  if (r.status !== 0) throw new Error(`oracle: go build failed:\n${r.stderr.trim()}`);
  return bin;
}

/** What the oracle prints: `plan --output json`'s shape plus the solve time. */
export interface OracleOutput {
  nodeClaims: {
    nodePool: string;
    requests: Record<string, string>;
    instanceTypes: string[] | null;
    instanceTypeOptions: number;
    price: number;
    capacityTypes: string[] | null;
    zones: string[] | null;
    pods: string[] | null;
  }[];
  placements: { pod: string; node: string }[];
  unschedulable: { pod: string; reasons: Record<string, string> }[];
  solveSeconds: number;
  solveCpuSeconds: number;
}

/** A running `oracle --lines`: send a scenario, get its result, in order. */
export class Oracle {
  private proc: ChildProcessWithoutNullStreams;
  private waiting: ((line: string) => void)[] = [];
  private stderr = '';

  constructor(bin = OracleBin, args: string[] = [], env: NodeJS.ProcessEnv = {}) {
    this.proc = spawn(bin, ['--lines', ...args], { env: { ...process.env, ...env } });
    this.proc.stderr.on('data', (d: Buffer) => (this.stderr += d.toString()));
    createInterface({ input: this.proc.stdout }).on('line', (line) => this.waiting.shift()?.(line));
    this.proc.on('exit', (code) => {
      for (const w of this.waiting.splice(0)) w(JSON.stringify({ error: `oracle exited (${code}): ${this.stderr.trim()}` }));
    });
  }

  /** Karpenter's decision for one scenario. @throws Error with the oracle's message for a scenario it rejects. */
  solve(scenario: unknown): Promise<OracleOutput> {
    return new Promise((resolve, reject) => {
      this.waiting.push((line) => {
        const out = JSON.parse(line) as OracleOutput & { error?: string };
        if (out.error) reject(new Error(out.error));
        else resolve(out);
      });
      this.proc.stdin.write(`${JSON.stringify(scenario)}\n`);
    });
  }

  close(): void {
    this.proc.stdin.end();
  }
}

/** One scenario, one process (used while shrinking, where each try is synchronous). */
export function solveSync(scenario: unknown, bin = OracleBin, env: NodeJS.ProcessEnv = {}): OracleOutput {
  const r = spawnSync(bin, [], { input: JSON.stringify(scenario), encoding: 'utf8', maxBuffer: 1 << 28, env: { ...process.env, ...env } });
  if (r.status !== 0) throw new Error(`oracle: ${r.stderr.trim()}`);
  return JSON.parse(r.stdout) as OracleOutput;
}
