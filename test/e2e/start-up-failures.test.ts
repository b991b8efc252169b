import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { parseConfigFile } from '../../src/config/config-file.js';
import { parseEnvironment } from '../../src/config/environment.js';
import { createBot } from '../../src/create-bot.js';
import { ErrorCode, errorCodeOf } from '../../src/errors/countersign-error.js';
import { freePort } from './child-bot.js';

describe('start-up failures', () => {
  it('names the Slack call that failed, not just "fetch failed"', async () => {
    // Nothing listens on this port: the connection is refused.
    const closed = await freePort();
    const environment = parseEnvironment(
      { SLACK_BOT_TOKEN: 'xoxb-start', SLACK_SIGNING_SECRET: 'secret', OPENAI_API_KEY: 'sk-start', SLACK_API_URL: `http://127.0.0.1:${closed}/api/` },
      { fileExists: () => false },
    );
    const failure = await createBot({ environment, config: parseConfigFile('', 'empty.yml'), logger: pino({ level: 'silent' }) }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(errorCodeOf(failure)).toBe(ErrorCode.SlackCallFailed);
    expect((failure as Error).message).toMatch(/^Slack auth\.test failed: /);
  }, 60_000);
});
