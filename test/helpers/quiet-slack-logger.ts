import { LogLevel, type Logger } from '@slack/web-api';

/** For WebClients in tests that provoke Slack errors on purpose: WebClient would log each `[ERROR]`. */
export const quietSlackLogger: Logger = {
  debug: () => {},
  info: () => {},
  warn: () => {},
  error: () => {},
  setLevel: () => {},
  getLevel: () => LogLevel.ERROR,
  setName: () => {},
};
