import type { Logger } from 'pino';

/**
 * Last resort: an exception thrown in some event callback (a tool source, a library) is logged and
 * the bot keeps serving instead of exiting with every running turn. Every effect of a turn is
 * fenced and every transition atomic in the store, so going on is safe; tool sources guard their
 * own callbacks, and landing here is a bug to fix there. Socket Mode's client also rejects pending
 * reconnects with nothing attached when it is stopped during an outage.
 */
export function logProcessFailures(logger: Logger): void {
  process.on('uncaughtException', (error, origin) => {
    logger.error({ event: 'uncaught-exception', err: error, origin }, 'uncaught exception; still running');
  });
  process.on('unhandledRejection', (reason) => {
    logger.error({ event: 'unhandled-rejection', err: reason }, 'unhandled promise rejection');
  });
}
