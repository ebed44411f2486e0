/**
 * nodefleet command line entry (see program.ts for the commands and exit codes). The Node.js
 * version check is the first import, so that it runs before any dependency loads. A closed
 * stdout (`nodefleet instance-types | head -1`) ends the process quietly; a failed command exits
 * at once with its code.
 */
import './node-version.mjs';
import { runCli } from './program.ts';
import { reportFailure } from './io.ts';

for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(Number(process.exitCode ?? 0));
    throw err;
  });
}
process.on('unhandledRejection', (err) => {
  const { text, exitCode } = reportFailure(err, '', process.env);
  process.stderr.write(text);
  process.exit(exitCode);
});
process.exitCode = await runCli(process.argv);
// A failed command ends here even when something it started still holds the event loop (the
// embedded DynamoDB of `status` on a damaged .nodefleet/ keeps listening after its error).
if (process.exitCode !== 0) process.exit(process.exitCode);
