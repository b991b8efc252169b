import { describe, expect, it } from 'vitest';
import { wantsSandbox } from './wants-sandbox.js';

const installed = { sandboxInstalled: () => true };

describe('which mode `npm start` runs in', () => {
  it('runs the sandbox when no Slack variable is set (blank counts as unset, as in .env files)', () => {
    expect(wantsSandbox({}, installed)).toBe(true);
    expect(wantsSandbox({ SLACK_BOT_TOKEN: '  ', OPENAI_API_KEY: 'sk-real', REDIS_URL: 'redis://localhost' }, installed)).toBe(true);
  });

  it('runs against Slack, with its own errors for what is missing, once any Slack variable is set', () => {
    expect(wantsSandbox({ SLACK_BOT_TOKEN: 'xoxb-1' }, installed)).toBe(false);
    expect(wantsSandbox({ SLACK_APP_TOKEN: 'xapp-1' }, installed)).toBe(false);
    expect(wantsSandbox({ SLACK_SIGNING_SECRET: 'secret' }, installed)).toBe(false);
  });

  it('runs the sandbox with SLACK_STREAMING set: a sandbox setting too, not a Slack setup', () => {
    expect(wantsSandbox({ SLACK_STREAMING: 'update' }, installed)).toBe(true);
  });

  it('reports the missing Slack variables where the sandbox cannot run: in production (the Docker image) or without its page', () => {
    expect(wantsSandbox({ NODE_ENV: 'production' }, installed)).toBe(false);
    expect(wantsSandbox({}, { sandboxInstalled: () => false })).toBe(false);
    expect(wantsSandbox({ NODE_ENV: 'development' }, installed)).toBe(true);
  });

  it('finds the page in this checkout', () => {
    expect(wantsSandbox({})).toBe(true);
  });
});
