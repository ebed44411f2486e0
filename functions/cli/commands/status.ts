import type { Command } from 'commander';

/** Placeholder until its issue lands: registers the command so the CLI contract is visible. */
export function register(program: Command): void {
  program
    .command('status')
    .description('(not built yet)')
    .allowUnknownOption()
    .action(() => {
      process.stderr.write('nodefleet status: not built yet\n');
      process.exit(2);
    });
}
