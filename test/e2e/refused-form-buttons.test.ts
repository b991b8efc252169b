import { describe, expect, it } from 'vitest';
import { blockActionsPayload, postSlackInteraction } from '../helpers/signed-request.js';
import { CHANNEL, SIGNING_SECRET, TEAM_ID, cardButtons, nextTs, threadReplies, useHarnesses, waitFor } from './harness.js';

const harness = useHarnesses();

const CHANNEL_RULE = `
policy:
  rules:
    - name: anyone here
      tools: [restart_service]
      approvers: [channel]
`;

/**
 * README "Nothing is authorised by what a card shows": every approve, deny, edit, grant … refused
 * "gets a private explanation and an action-refused audit record". A Slack Connect partner's Edit,
 * Deny with reason… and Approve & allow… are refused when the form would open, before any submit
 * reaches the server's judgement, so that refusal must be audited there, as a refused Approve is.
 */
describe('a refused Edit / Deny with reason / Approve & allow is audited', () => {
  it('records the partner’s refused form buttons as it records their refused Approve', async () => {
    const h = await harness({ extraYaml: CHANNEL_RULE });
    h.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'payments-api', namespace: 'prod' } }] }, { text: 'Restarted.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart payments-api in prod', ts: threadTs });
    const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'card' });
    const button = (actionId: string) => cardButtons(card.blocks).find((candidate) => candidate.actionId === actionId)!;
    const buttons = ['countersign_edit', 'countersign_deny_reason', 'countersign_grant'].map(button);
    expect(buttons.every(Boolean)).toBe(true);

    for (const pressed of buttons) {
      const payload = blockActionsPayload({ user: 'UPARTNER1', channel: CHANNEL, messageTs: card.ts, threadTs, ...pressed, teamId: TEAM_ID }) as { user: { team_id: string } };
      payload.user.team_id = 'T0PARTNER1';
      expect((await postSlackInteraction({ url: h.eventsUrl, signingSecret: SIGNING_SECRET, payload })).status).toBe(200);
    }
    await h.settled();
    // Each was refused privately, and no form opened.
    const told = h.slack.callsTo('chat.postEphemeral').filter((call) => call.args.user === 'UPARTNER1');
    expect(told).toHaveLength(3);
    expect(h.slack.callsTo('views.open')).toEqual([]);

    const refused = (await h.auditEvents()).filter((event) => event.type === 'action-refused');
    const described = refused.map((event) => {
      const { userId, action, code, toolName } = event as { userId: string; action: string; code: string; toolName: string };
      return [userId, action, code, toolName];
    });
    expect(described.sort()).toEqual([
      ['UPARTNER1', 'deny', 'external-user', 'restart_service'],
      ['UPARTNER1', 'edit', 'external-user', 'restart_service'],
      ['UPARTNER1', 'grant', 'external-user', 'restart_service'],
    ]);
  });
});
