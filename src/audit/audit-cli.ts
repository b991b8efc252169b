import { runAuditCli } from './run-audit-cli.js';

// `npm run audit -- --json | head` closes the pipe early; that is the reader's choice, not a crash.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
});

process.exitCode = await runAuditCli({ argv: process.argv.slice(2), env: process.env, stdout: process.stdout, stderr: process.stderr });
