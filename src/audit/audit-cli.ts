import { runAuditCli } from './run-audit-cli.js';

// `npm run audit -- --json | head` closes the pipe early; that is the reader's choice, not a crash.
// Any other write error ends in one line, not a stack trace; the stream is then closed, and the
// writing stops (writeLines checks `destroyed`).
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') return;
  process.stderr.write(`countersign audit: could not write the output: ${error.message}\n`);
  process.exitCode = 1;
});

const code = await runAuditCli({ argv: process.argv.slice(2), env: process.env, stdout: process.stdout, stderr: process.stderr });
// A write error already set 1; keep it.
if (process.exitCode === undefined || process.exitCode === 0) process.exitCode = code;
