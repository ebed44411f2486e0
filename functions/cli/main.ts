/**
 * nodefleet command line. Each command lives in functions/cli/commands/<name>.ts and exports
 * `register(program)`. Exit codes: 0 ok, 1 failure/invalid input, 2 usage error.
 */
import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { register as validate } from './commands/validate.ts';
import { register as instanceTypes } from './commands/instance-types.ts';
import { register as plan } from './commands/plan.ts';
import { register as cases } from './commands/cases.ts';
import { register as demo } from './commands/demo.ts';
import { register as status } from './commands/status.ts';

const program = new Command();
const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
program
  .name('nodefleet')
  .description('Serverless, event-driven node autoscaler for Amazon EKS (Karpenter v1 compatible)')
  .version(pkg.version, '-V, --version');
program.exitOverride((err) => {
  process.exit(err.exitCode === 0 ? 0 : 2);
});
for (const r of [validate, instanceTypes, plan, cases, demo, status]) r(program);
await program.parseAsync(process.argv);
