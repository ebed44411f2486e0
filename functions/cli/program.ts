/**
 * The nodefleet command line as a function: {@link runCli} parses argv, runs the command and
 * returns the exit code (0 ok, 1 invalid input or failure, 2 usage, 70 a nodefleet bug). Each
 * command lives in functions/cli/commands/<name>.ts and exports `register(program)`.
 *
 * Bad input never ends in a stack trace: a command throws {@link CliError} (or one of the
 * domain's input errors) and this prints `nodefleet <command>: <message>` on stderr.
 */
import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { reportFailure } from './io.ts';
import { register as validate } from './commands/validate.ts';
import { register as instanceTypes } from './commands/instance-types.ts';
import { register as plan } from './commands/plan.ts';
import { register as cases } from './commands/cases.ts';
import { register as demo } from './commands/demo.ts';
import { register as status } from './commands/status.ts';

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

/** A fresh program with every command registered (commander keeps parse state per instance). */
export function buildProgram(): Command {
  const program = new Command();
  program
    .name('nodefleet')
    .description('Serverless, event-driven node autoscaler for Amazon EKS (Karpenter v1 compatible)')
    .version(pkg.version, '-V, --version')
    .exitOverride();
  for (const r of [validate, instanceTypes, plan, cases, demo, status]) r(program);
  for (const c of program.commands) c.exitOverride();
  return program;
}

/**
 * Runs the CLI on `argv` (process.argv shape: node, script, args…) and returns the exit code.
 * Output goes to process.stdout / process.stderr.
 */
export async function runCli(argv: readonly string[], env: Record<string, string | undefined> = process.env): Promise<number> {
  const program = buildProgram();
  const known = new Set(program.commands.map((c) => c.name()));
  const command = argv.slice(2).find((a) => known.has(a)) ?? '';
  process.exitCode = undefined;
  try {
    await program.parseAsync([...argv]);
    return Number(process.exitCode ?? 0);
  } catch (err) {
    // commander has already printed its usage error (or the help / version text).
    if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : 2;
    const { text, exitCode } = reportFailure(err, command, env);
    process.stderr.write(text);
    return exitCode;
  }
}
