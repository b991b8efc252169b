import type { Logger } from 'pino';

/** Stops the process once, however many causes ask: `stop` finishes what is running, then it exits. */
export type Shutdown = (options: { cause: string; exitCode: number }) => void;

/**
 * SIGTERM and SIGINT stop the process cleanly: `stop` finishes what is running, then the process
 * exits 0 (1 if stopping failed). A second signal while stopping changes nothing. Returns the
 * shutdown, for other causes to stop the same way (with their own exit code).
 */
export function stopOnSignals({ logger, stop, message }: { logger: Logger; stop: () => Promise<void>; message: string }): Shutdown {
  let stopping = false;
  const shutdown: Shutdown = ({ cause, exitCode }) => {
    if (stopping) return;
    stopping = true;
    logger.info({ event: 'stopping', cause }, message);
    stop().then(
      () => process.exit(exitCode),
      (error: unknown) => {
        logger.error({ event: 'stop-failed', err: error }, 'could not stop cleanly');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown({ cause: 'SIGTERM', exitCode: 0 }));
  process.on('SIGINT', () => shutdown({ cause: 'SIGINT', exitCode: 0 }));
  return shutdown;
}
