import { describe, expect, it } from 'vitest';
import { directMessageChannel } from '../../src/sandbox/emulator/web-api/workspace-methods.js';
import { fillForm } from './fill-form.js';
import { CHANNEL, cardButtons, nextTs, threadReplies, useHarnesses, waitFor } from './harness.js';

const harness = useHarnesses();
const APPROVALS = 'C0APPROVALS';

/**
 * Staging restarts go to the staging approver by DM (and keep the thread's buttons); prod restarts
 * are decided in #approvals only (thread: false), by the lead.
 */
const POLICY = `
policy:
  rules:
    - name: staging restarts
      tools: [restart_service]
      approvers: [U0STG]
      notify: { dmApprovers: true }
    - name: prod restarts
      tools: [restart_service]
      input:
        - { field: namespace, equals: prod }
      approvers: [U0LEAD]
      notify: { thread: false, channels: [${APPROVALS}] }
`;

const text = (message: { blocks?: unknown[] } | undefined) => JSON.stringify(message?.blocks ?? []);

describe('an edit that moves a call under a rule routed elsewhere', () => {
  it('posts the card where the new rule routes it, so its approver has somewhere to decide', async () => {
    const h = await harness({ extraYaml: POLICY });
    h.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'staging' } }] }, { text: 'Restarted.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart the worker', ts: threadTs });
    const card = await waitFor(() => threadReplies(h, threadTs).find((message) => /waiting for approval in/i.test(text(message))), { message: 'thread card naming the DM copy' });
    const dm = directMessageChannel('U0STG');
    await waitFor(() => h.slack.messages(dm).find((message) => text(message).includes('Requested in')), { message: 'DM copy' });
    expect(cardButtons(card.blocks).length).toBeGreaterThan(0);

    // The staging approver edits the call to prod from the thread's card: now only the lead may approve it.
    const edit = cardButtons(card.blocks).find((button) => button.actionId === 'countersign_edit')!;
    await h.click({ user: 'U0STG', cardTs: card.ts, threadTs, ...edit });
    const view = (await waitFor(() => h.slack.callsTo('views.open')[0], { message: 'views.open' })).args.view;
    const response = await h.submitView({ user: 'U0STG', view, values: fillForm(view, { Namespace: 'prod' }) });
    expect(response.status).toBe(200);
    await h.settled();

    const threadCard = h.slack.messages(CHANNEL, threadTs).find((message) => message.ts === card.ts)!;
    expect(text(threadCard)).toContain('Version 2');
    const inApprovals = h.slack.messages(APPROVALS).find((message) => text(message).includes('Requested in'));
    const placesWithButtons = [threadCard, inApprovals].filter((message) => message !== undefined && cardButtons(message.blocks).length > 0);
    // The lead decides in #approvals; the thread's card says so, not "in a DM to <@U0STG>", whose owner may no longer approve.
    expect(text(threadCard)).toContain(`Waiting for approval in <#${APPROVALS}>`);
    expect(inApprovals, 'a copy in #approvals, where the prod rule sends the decision').toBeDefined();
    expect(text(threadCard)).not.toContain('a DM to <@U0STG>');
    expect(placesWithButtons.length).toBeGreaterThan(0);
  });
});
