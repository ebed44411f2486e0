/**
 * Builds and runs the Karpenter oracle (test/oracle/karpenter): `go build` into a gitignored
 * bin/ next to it (GOTOOLCHAIN=auto, so a machine with an older Go fetches the toolchain go.mod
 * asks for from the module proxy), then one long-lived `oracle --lines` process answers one
 * scenario per line.
 */
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, statSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

export const OracleDir = join(import.meta.dirname, '..', 'oracle', 'karpenter');
export const OracleBin = join(OracleDir, 'bin', 'oracle');

/** What the oracle prints: `plan --output json`'s shape plus the solve time. */
export interface OracleOutput {
  nodeClaims: { nodePool: string; requests: Record<string, string>; instanceTypes: string[] | null; instanceTypeOptions: number; price: number; capacityTypes: string[] | null; zones: string[] | null; pods: string[] | null }[];
  placements: { pod: string; node: string }[];
  unschedulable: { pod: string; reasons: Record<string, string> }[];
  solveSeconds: number;
  solveCpuSeconds: number;
}

/**
 * Builds the oracle unless the binary is newer than its sources.
 * @throws Error naming the go command's output when the build fails (e.g. no Go, no module proxy).
 */
export function buildOracle(log: (line: string) => void = () => {}): string {
  const sources = readdirSync(OracleDir).filter((f) => f.endsWith('.go') || f === 'go.mod' || f === 'go.sum');
  const newest = Math.max(...sources.map((f) => statSync(join(OracleDir, f)).mtimeMs));
  if (existsSync(OracleBin) && statSync(OracleBin).mtimeMs >= newest) return OracleBin;
  log('building the Karpenter oracle (go build, first time takes minutes)…');
  const r = spawnSync('go', ['build', '-o', OracleBin, '.'], { cwd: OracleDir, env: { ...process.env, GOTOOLCHAIN: process.env.GOTOOLCHAIN ?? 'auto', GOFLAGS: '-mod=readonly' }, encoding: 'utf8' });
  if (r.error) throw new Error(`oracle: cannot run go: ${r.error.message}`);
  if (r.status !== 0) throw new Error(`oracle: go build failed:\n${r.stderr.trim()}`);
  return OracleBin;
}

/** A running `oracle --lines`: send a scenario, get its result, in order. */
export class Oracle {
  private proc: ChildProcessWithoutNullStreams;
  private waiting: ((line: string) => void)[] = [];
  private stderr = '';

  constructor(bin = OracleBin, args: string[] = []) {
    this.proc = spawn(bin, ['--lines', ...args]);
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
export function solveSync(scenario: unknown, bin = OracleBin): OracleOutput {
  const r = spawnSync(bin, [], { input: JSON.stringify(scenario), encoding: 'utf8', maxBuffer: 1 << 28 });
  if (r.status !== 0) throw new Error(`oracle: ${r.stderr.trim()}`);
  return JSON.parse(r.stdout) as OracleOutput;
}
