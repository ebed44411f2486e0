/**
 * moto's server (PyPI `moto[server]`, the venv of .ci/moto/install) on 127.0.0.1, a free port, for
 * the conformance tier (test/moto). The executable is `NODEFLEET_MOTO_SERVER`, else the one the
 * install script prints (it installs on first use, cached under ~/.cache). A moto other than the
 * version pinned in .ci/moto/requirements.txt is refused, so what the tier proves is tied to one moto.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The moto version of .ci/moto/requirements.txt. */
export function pinnedMotoVersion(): string {
  const m = /^moto==(\S+)$/m.exec(readFileSync(join(root, '.ci', 'moto', 'requirements.txt'), 'utf8'));
  if (!m) throw new Error('.ci/moto/requirements.txt pins no moto version');
  return m[1];
}

function motoServerPath(): string {
  const fromEnv = process.env.NODEFLEET_MOTO_SERVER;
  if (fromEnv) return fromEnv;
  const out = execFileSync('bash', [join(root, '.ci', 'moto', 'install')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  return out.trim().split('\n').pop()!;
}

/** A running moto server. */
export interface MotoServer {
  /** `http://127.0.0.1:<port>`: the endpoint override of the EC2 and SSM clients. */
  url: string;
  version: string;
  /** The venv's python (with botocore, for test/moto/validate-requests.py). */
  python: string;
  stop(): Promise<void>;
}

/**
 * Starts moto_server on a free port and waits until it answers. `env`: moto's settings (e.g.
 * `MOTO_AMIS_PATH`, the validations), for the server process only.
 * @throws when it cannot start or is not the pinned version.
 */
export async function startMoto(opts: { env?: Record<string, string> } = {}): Promise<MotoServer> {
  const exe = motoServerPath();
  const python = join(dirname(exe), 'python');
  const version = execFileSync(python, ['-c', 'import moto; print(moto.__version__)'], { encoding: 'utf8' }).trim();
  const pinned = pinnedMotoVersion();
  if (version !== pinned) throw new Error(`${exe} is moto ${version}, the tier is pinned to ${pinned} (.ci/moto/requirements.txt): run bash .ci/moto/install`);
  const child: ChildProcess = spawn(exe, ['-H', '127.0.0.1', '-p', '0'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...opts.env, PYTHONUNBUFFERED: '1' },
  });
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`moto_server did not start within 60 s:\n${output}`)), 60_000);
    const onData = (b: Buffer) => {
      output += b.toString();
      const m = /Running on (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (m) {
        clearTimeout(timer);
        child.stdout!.off('data', onData);
        child.stderr!.off('data', onData);
        resolve(m[1]);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`moto_server exited (${code}):\n${output}`));
    });
  });
  // Keep draining its request log so the pipe never fills.
  child.stdout!.resume();
  child.stderr!.resume();
  // Never outlive the test process (a run that fails before afterAll).
  const kill = () => child.kill('SIGTERM');
  process.once('exit', kill);
  return {
    url,
    version,
    python,
    stop: () =>
      new Promise<void>((resolve) => {
        process.off('exit', kill);
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
