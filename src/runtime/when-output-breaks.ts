import type { Shutdown } from './stop-on-signals.js';

/** What a broken output stream is known by: a Node error code such as `EPIPE`, else its message. */
export type OutputFailure = string;

/**
 * Resolves once `output` (the logs' stdout) fails, and from then on swallows its errors. Without
 * this, a write to a stdout whose reader has gone (EPIPE: a log shipper that died, a parent that
 * exited) emits an error nobody listens to; the last-resort `uncaughtException` handler logs that
 * error to the same stdout, which fails again: a loop at full CPU that never ends, seen in an
 * orphaned worker. `report`, if given, says so once on another stream; the caller then stops the
 * process (`stopWhenBroken`), so a supervisor starts one whose logs are read.
 */
export function whenOutputBreaks(options: { output: NodeJS.EventEmitter; report?: (line: string) => void }): Promise<OutputFailure> {
  return new Promise((resolve) => {
    let broken = false;
    options.output.on('error', (error: unknown) => {
      // Every later write fails the same way; one report is enough.
      if (broken) return;
      broken = true;
      const failure = describeFailure(error);
      try {
        options.report?.(brokenOutputLine(failure));
      } catch {
        // The other stream may be gone too; stopping does not depend on being heard.
      }
      resolve(failure);
    });
  });
}

/** What the process says, on another stream, when its log output failed. */
export function brokenOutputLine(failure: OutputFailure): string {
  return `countersign: writing its log output failed (${failure}); stopping\n`;
}

function describeFailure(error: unknown): OutputFailure {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (typeof code === 'string') return code;
  return error instanceof Error ? error.message : String(error);
}

/**
 * The process's log output, watched: its stdout, and any other writer of the same output (the bot's
 * thread writes its logs to fd 1 itself) that reports a failure with `otherWriterFailed`. `broken`
 * resolves with the first failure; the line on `stderr` is written once, whoever saw it first.
 */
export function watchLogOutput(options: { stdout: NodeJS.EventEmitter; stderr: { write(line: string): unknown } }): {
  broken: Promise<OutputFailure>;
  otherWriterFailed: (failure: OutputFailure) => void;
} {
  let reported = false;
  const reportOnce = (line: string) => {
    if (reported) return;
    reported = true;
    options.stderr.write(line);
  };
  let otherWriterFailed: (failure: OutputFailure) => void = () => {};
  const fromOtherWriter = new Promise<OutputFailure>((resolve) => (otherWriterFailed = resolve)).then((failure) => {
    reportOnce(brokenOutputLine(failure));
    return failure;
  });
  return { broken: Promise.race([whenOutputBreaks({ output: options.stdout, report: reportOnce }), fromOtherWriter]), otherWriterFailed };
}

/** Once the log output is broken, stops the process as on SIGTERM, with exit code 1. */
export function stopWhenBroken(broken: Promise<OutputFailure>, shutdown: Shutdown): void {
  void broken.then((failure) => shutdown({ cause: `log output ${failure}`, exitCode: 1 }));
}
