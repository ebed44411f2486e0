/**
 * `nodefleet cases DIR...`: runs the scenario cases under the folders (test/cases/FORMAT.md),
 * prints one line per failing case (expected vs got) and `N passed, M failed`; exit 1 on any failure.
 */
import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { loadCases } from '../cases/load.ts';
import { CliError } from '../io.ts';
import { formatReport, runCases } from '../cases/runner.ts';

export function register(program: Command): void {
  program
    .command('cases')
    .description('run scenario cases (test/cases/FORMAT.md); prints failing cases and "N passed, M failed"')
    .argument('<dir...>', 'folders (or files) holding *.yaml cases')
    .option('--verbose', 'also list passing cases')
    .action(async (dirs: string[], opts: { verbose?: boolean }) => {
      const missing = dirs.filter((d) => !existsSync(d));
      if (missing.length) {
        throw new CliError(`no such file or folder: ${missing.join(', ')}`, 2);
      }
      const cases = loadCases(dirs);
      if (cases.length === 0) {
        throw new CliError(`${dirs.join(', ')}: no *.yaml cases found`);
      }
      const results = await runCases(cases);
      if (opts.verbose) for (const r of results) if (r.status === 'passed') process.stdout.write(`ok   ${r.name}\n`);
      process.stdout.write(`${formatReport(results)}\n`);
      process.exit(results.some((r) => r.status === 'failed') ? 1 : 0);
    });
}
