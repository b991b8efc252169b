import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { parseConfigFile } from '../../src/config/config-file.js';
import { parseEnvironment } from '../../src/config/environment.js';
import { createBot } from '../../src/create-bot.js';
import { freePort } from './child-bot.js';

/**
 * A COUNTERSIGN_* variable far from every known name is not refused (a Kubernetes Service named
 * countersign sets COUNTERSIGN_SERVICE_HOST in every pod of its namespace), but the bot says at
 * start-up that it does not read it, so a misspelling that is no near miss is not silent either.
 */
describe('COUNTERSIGN_* variables the bot does not read', () => {
  it('are named in a warning when the bot starts', async () => {
    const lines: string[] = [];
    const logger = pino(
      { level: 'warn' },
      new Writable({
        write(chunk: Buffer, _encoding, callback) {
          lines.push(chunk.toString('utf8'));
          callback();
        },
      }),
    );
    // Nothing listens there: createBot fails at auth.test, after the warnings of its start.
    const closed = await freePort();
    const environment = parseEnvironment(
      { SLACK_BOT_TOKEN: 'xoxb-start', SLACK_SIGNING_SECRET: 'secret', OPENAI_API_KEY: 'sk-start', SLACK_API_URL: `http://127.0.0.1:${closed}/api/`, COUNTERSIGN_REPLICA_WAIT: '1' },
      { fileExists: () => false },
    );
    await createBot({ environment, config: parseConfigFile('', 'empty.yml'), logger }).catch(() => {});
    const warning = lines.map((line) => JSON.parse(line) as { event?: string; variables?: string[]; msg: string }).find((line) => line.event === 'environment-variables-ignored');
    expect(warning?.variables).toEqual(['COUNTERSIGN_REPLICA_WAIT']);
    expect(warning?.msg).toMatch(/^countersign does not read COUNTERSIGN_REPLICA_WAIT: check the spelling/);
  }, 60_000);
});
