import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { buildIsolatedBot, freePort, startChildBot, stopChildBot } from './child-bot.js';

/**
 * What the Docker image holds (Dockerfile: /app/dist, /app/node_modules, package.json and
 * countersign.example.yml; no src/), started as `docker run --env-file .env countersign` does, by
 * an operator whose .env did not reach the container (a wrong --env-file path, a Kubernetes Secret
 * whose keys are spelled differently). README "Environment": SLACK_BOT_TOKEN is required, and every
 * problem is listed, naming the variable, with exit status 1.
 */
describe('the Docker image started without the Slack variables', () => {
  let mainJs: string;
  beforeAll(() => {
    mainJs = buildIsolatedBot();
    // The image's layout: the build and package.json, no sources.
    expect(existsSync(join(dirname(mainJs), '..', 'src'))).toBe(false);
  }, 180_000);

  it('says which variable is missing, not that the sandbox page is missing', async () => {
    const port = await freePort();
    const bot = startChildBot(
      {
        NODE_ENV: 'production',
        PORT: String(port),
        METRICS_PORT: String(await freePort()),
        OPENAI_API_KEY: 'sk-production',
        REDIS_URL: inject('redisUrl'),
      },
      { mainJs },
    );
    try {
      const code = await bot.exited;
      expect(code).toBe(1);
      expect(bot.output()).toContain('SLACK_BOT_TOKEN');
    } finally {
      await stopChildBot(bot);
    }
  }, 60_000);
});
