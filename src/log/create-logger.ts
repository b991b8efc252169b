import { pino, type Logger } from 'pino';

/**
 * Structured JSON logs. Paths that could carry credentials are redacted even though the code never
 * logs them on purpose: a stray error object can include request headers.
 */
export function createLogger(options: { level: string; destination?: NodeJS.WritableStream }): Logger {
  return pino(
    {
      level: options.level,
      base: { service: 'countersign' },
      redact: {
        paths: ['*.token', '*.botToken', '*.appToken', '*.signingSecret', '*.apiKey', '*.authorization', '*.headers.authorization', 'headers.authorization'],
        censor: '[redacted]',
      },
    },
    options.destination ?? process.stdout,
  );
}
