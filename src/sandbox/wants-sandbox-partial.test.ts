import { describe, expect, it } from 'vitest';
import { wantsSandbox } from './wants-sandbox.js';

const installed = { sandboxInstalled: () => true };

/**
 * README: "any Slack variable set means Slack mode, with a clear error for whatever is missing".
 * SLACK_API_URL (GovSlack, a proxy), SLACK_BOT_USER_ID and SLACK_BOT_ID are Slack variables of the
 * Environment table: a deployment that set them but whose token did not arrive (a secret store that
 * failed, a key spelled differently) is setting up Slack, and should hear that SLACK_BOT_TOKEN is
 * missing, not get a sandbox on port 3000 that ignores its Slack settings.
 */
describe('a Slack setup whose token did not arrive', () => {
  it('is Slack mode when SLACK_API_URL is set', () => {
    expect(wantsSandbox({ SLACK_API_URL: 'https://slack-gov.com/api/' }, installed)).toBe(false);
  });
  it('is Slack mode when the bot ids are set', () => {
    expect(wantsSandbox({ SLACK_BOT_USER_ID: 'U0123BOT', SLACK_BOT_ID: 'B0123BOT' }, installed)).toBe(false);
  });
});
