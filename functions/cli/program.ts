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

type Register = (program: Command) => void;
/**
 * Each command's module, loaded on demand: a call loads only the module of the command it names
 * (the AWS SDK and the embedded environment cost about a CPU second to load), help and an
 * unknown command load them all. Keys are command names; `history` lives with `status`.
 */
const CommandModules: Record<string, () => Promise<{ register: Register }>> = {
  validate: () => import('./commands/validate.ts'),
  'instance-types': () => import('./commands/instance-types.ts'),
  plan: () => import('./commands/plan.ts'),
  cases: () => import('./commands/cases.ts'),
  demo: () => import('./commands/demo.ts'),
  status: () => import('./commands/status.ts'),
  history: () => import('./commands/status.ts'),
};

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

/**
 * A fresh program (commander keeps parse state per instance) with the command `argv` names
 * registered, or every command when it names none (help, version, a misspelled command).
 */
export async function buildProgram(argv: readonly string[]): Promise<Command> {
  const program = new Command();
  program
    .name('nodefleet')
    .description('Serverless, event-driven node autoscaler for Amazon EKS (Karpenter v1 compatible)')
    .version(pkg.version, '-V, --version')
    .exitOverride();
  const named = argv.slice(2).find((a) => !a.startsWith('-'));
  const load = named !== undefined && Object.hasOwn(CommandModules, named) ? [CommandModules[named]] : [...new Set(Object.values(CommandModules))];
  const registered = new Set<Register>();
  for (const m of await Promise.all(load.map((l) => l()))) {
    if (registered.has(m.register)) continue;
    registered.add(m.register);
    m.register(program);
  }
  for (const c of program.commands) c.exitOverride();
  return program;
}

/**
 * Runs the CLI on `argv` (process.argv shape: node, script, args…) and returns the exit code.
 * Output goes to process.stdout / process.stderr.
 */
export async function runCli(argv: readonly string[], env: Record<string, string | undefined> = process.env): Promise<number> {
  const program = await buildProgram(argv);
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
