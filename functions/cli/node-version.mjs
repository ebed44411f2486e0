// The Node.js version check, run before anything else is loaded (bin.mjs and the first import of
// main.ts): the CLI and the embedded environment need the Node.js major version that
// package.json `engines.node` names (">=22"); older versions fail deep inside dependencies
// (undici, global File) instead of saying so. Plain JavaScript so that any Node.js can run it.
import { readFileSync } from 'node:fs';

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
const wanted = Number(/(\d+)/.exec(pkg.engines?.node ?? '')?.[1] ?? 0);
const major = Number(process.versions.node.split('.')[0]);
if (major < wanted) {
  process.stderr.write(`nodefleet: Node.js ${wanted} or newer is required, this is Node.js ${process.versions.node} (${process.execPath})\n`);
  process.exit(1);
}
