import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { directMessageChannel } from '../../src/sandbox/emulator/web-api/workspace-methods.js';
import { CHANNEL, nextTs, threadReplies, useHarnesses, waitFor } from './harness.js';

/**
 * The app an operator creates from manifest.yml (README "Create the Slack app") has exactly the bot
 * scopes the manifest lists. Slack answers a Web API call made without a scope the method requires
 * with `missing_scope`. The scopes below are the ones Slack's method reference lists for the
 * methods the bot calls that need more than `chat:write` (any one of them suffices).
 */
const SCOPES_SLACK_REQUIRES: Record<string, string[]> = {
  // https://api.slack.com/methods/conversations.open: bot tokens need one of these.
  'conversations.open': ['channels:manage', 'groups:write', 'im:write', 'mpim:write'],
  'usergroups.users.list': ['usergroups:read'],
  'users.info': ['users:read'],
  'users.conversations': ['channels:read', 'groups:read', 'im:read', 'mpim:read'],
  'conversations.replies': ['channels:history', 'groups:history', 'im:history', 'mpim:history'],
};

const manifest = parse(readFileSync(join(import.meta.dirname, '../../manifest.yml'), 'utf8')) as { oauth_config: { scopes: { bot: string[] } } };
const grantedScopes = new Set(manifest.oauth_config.scopes.bot);

const harness = useHarnesses();

describe('an app created from manifest.yml', () => {
  it('can send the DM copy that notify.dmApprovers promises (conversations.open needs im:write)', async () => {
    const h = await harness({
      extraYaml: `
policy:
  rules:
    - name: prod restarts
      tools: [restart_service]
      approvers: [U0OPS1]
      notify: { dmApprovers: true }
`,
    });
    // Slack's own answer to a method whose scope the installed app lacks.
    for (const [method, scopes] of Object.entries(SCOPES_SLACK_REQUIRES)) {
      if (scopes.some((scope) => grantedScopes.has(scope))) continue;
      h.slack.setMethodHandler(method, () => ({ ok: false, error: 'missing_scope', needed: scopes.join(','), provided: [...grantedScopes].join(',') }) as never);
    }
    h.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'prod' } }] }, { text: 'Restarted.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart the worker in prod', ts: threadTs });
    await waitFor(() => threadReplies(h, threadTs, CHANNEL).find((message) => JSON.stringify(message.blocks ?? []).includes('countersign_approve')), { message: 'thread card' });
    await waitFor(() => h.slack.callsTo('conversations.open')[0], { message: 'the DM copy is attempted' });
    await h.settled();

    // The README and countersign.example.yml promise a copy in U0OPS1's DMs.
    expect(h.slack.messages(directMessageChannel('U0OPS1')).length, `bot scopes in manifest.yml: ${[...grantedScopes].join(', ')}`).toBe(1);
  });

  it('grants a scope for every Web API method the bot calls that needs one', () => {
    const missing = Object.entries(SCOPES_SLACK_REQUIRES)
      .filter(([, scopes]) => !scopes.some((scope) => grantedScopes.has(scope)))
      .map(([method, scopes]) => `${method} needs one of ${scopes.join(', ')}`);
    expect(missing).toEqual([]);
  });
});
