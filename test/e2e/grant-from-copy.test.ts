import { describe, expect, it } from 'vitest';
import { directMessageChannel } from '../../src/sandbox/emulator/web-api/workspace-methods.js';
import { blockActionsPayload, postSlackInteraction } from '../helpers/signed-request.js';
import { CHANNEL, SIGNING_SECRET, TEAM_ID, cardButtons, nextTs, threadReplies, useHarnesses, waitFor } from './harness.js';

const harness = useHarnesses();

const POLICY = `
policy:
  rules:
    - name: prod restarts
      tools: [restart_service]
      approvers: [U0OPS1]
      notify: { dmApprovers: true }
`;

const text = (message: { blocks?: unknown[] } | undefined) => JSON.stringify(message?.blocks ?? []);

describe('Approve & allow opened from a DM copy', () => {
  it('says the grant covers the request\'s channel or thread, not "this channel" of the DM', async () => {
    const h = await harness({ extraYaml: POLICY });
    h.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'prod' } }] }, { text: 'Restarted.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart the worker in prod', ts: threadTs });
    // The copy is in Slack before the bot records it, and a click on an unrecorded copy is refused as
    // from another channel: the thread's card, drawn from the step read after the record, names it.
    await waitFor(() => threadReplies(h, threadTs).some((message) => text(message).includes('a DM to <@U0OPS1>')), { message: 'thread card naming the DM copy' });
    const dm = directMessageChannel('U0OPS1');
    const copy = await waitFor(() => h.slack.messages(dm).find((message) => text(message).includes('Requested in')), { message: 'DM copy' });
    const grant = cardButtons(copy.blocks).find((button) => button.actionId === 'countersign_grant')!;
    await postSlackInteraction({ url: h.eventsUrl, signingSecret: SIGNING_SECRET, payload: blockActionsPayload({ user: 'U0OPS1', channel: dm, messageTs: copy.ts, ...grant, teamId: TEAM_ID }) });
    const view = (await waitFor(() => h.slack.callsTo('views.open')[0], { message: 'views.open' })).args.view as { blocks: unknown[] };
    // The grant is recorded for <#CHANNEL> (and its thread), which the options name; "This channel" would read as the DM.
    const form = JSON.stringify(view.blocks);
    expect(form).toContain(`The thread in <#${CHANNEL}>`);
    expect(form).toContain(`All of <#${CHANNEL}>`);
    expect(form).not.toContain('This channel');
  });
});
