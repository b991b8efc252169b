import type { Logger } from 'pino';

/**
 * SIGTERM and SIGINT stop the process cleanly: `stop` finishes what is running, then the process
 * exits 0 (1 if stopping failed). A second signal while stopping changes nothing.
 */
export function stopOnSignals({ logger, stop, message }: { logger: Logger; stop: () => Promise<void>; message: string }): void {
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ event: 'stopping', signal }, message);
    stop().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ event: 'stop-failed', err: error }, 'could not stop cleanly');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}
