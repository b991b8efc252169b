import { describe, expect, it } from 'vitest';
import { wantsSandbox } from './wants-sandbox.js';

describe('which mode `npm start` runs in', () => {
  it('runs the sandbox when no Slack variable is set (blank counts as unset, as in .env files)', () => {
    expect(wantsSandbox({})).toBe(true);
    expect(wantsSandbox({ SLACK_BOT_TOKEN: '  ', OPENAI_API_KEY: 'sk-real', REDIS_URL: 'redis://localhost' })).toBe(true);
  });

  it('runs against Slack, with its own errors for what is missing, once any Slack variable is set', () => {
    expect(wantsSandbox({ SLACK_BOT_TOKEN: 'xoxb-1' })).toBe(false);
    expect(wantsSandbox({ SLACK_APP_TOKEN: 'xapp-1' })).toBe(false);
    expect(wantsSandbox({ SLACK_SIGNING_SECRET: 'secret' })).toBe(false);
  });
});
