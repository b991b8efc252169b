import { LogLevel, type Logger as BoltLogger } from '@slack/bolt';
import type { Logger } from 'pino';

/** Bolt logs through its own interface; this sends those lines into the same structured log. */
export function createBoltLogger(logger: Logger): BoltLogger {
  const child = logger.child({ component: 'bolt' });
  const text = (messages: unknown[]) => messages.map((message) => (typeof message === 'string' ? message : JSON.stringify(message))).join(' ');
  return {
    debug: (...messages) => child.debug(text(messages)),
    info: (...messages) => child.info(text(messages)),
    warn: (...messages) => child.warn(text(messages)),
    error: (...messages) => child.error(text(messages)),
    setLevel: () => {},
    getLevel: () => (child.isLevelEnabled('debug') ? LogLevel.DEBUG : LogLevel.INFO),
    setName: () => {},
  };
}
