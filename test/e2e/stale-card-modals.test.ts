import { describe, expect, it } from 'vitest';
import { fillForm } from './fill-form.js';
import { CHANNEL, cardButtons, nextTs, threadReplies, useHarnesses, waitFor, type Harness } from './harness.js';

const harness = useHarnesses();

/** Prod restarts need the SRE lead; anything else anyone in the channel (one approval, grants allowed). */
const TIERED = `
policy:
  rules:
    - name: prod restarts
      tools: [restart_service]
      input: [{ field: namespace, equals: prod }]
      approvers: [U0SRELEAD]
    - name: other restarts
      tools: [restart_service]
`;

const ephemerals = (h: Harness) => h.slack.callsTo('chat.postEphemeral').map((call) => ({ user: call.args.user, text: String(call.args.text) }));
const toldLead = (h: Harness, text: string) => waitFor(() => ephemerals(h).find((message) => message.user === 'U0SRELEAD' && message.text.includes(text)), { message: `told the lead: ${text}` });
const option = (value: string) => ({ text: { type: 'plain_text', text: value }, value });
const grantChoice = {
  scope: { value: { type: 'radio_buttons', selected_option: option('channel') } },
  duration: { value: { type: 'static_select', selected_option: option('24') } },
  identical: { value: { type: 'checkboxes', selected_options: [] } },
};

/**
 * Alice asks for a staging restart; Bob edits it to prod (a new version only U0SRELEAD may approve).
 * Returns the buttons of the card as it was first posted, i.e. as a stale card (one whose update has
 * not reached the lead's client yet, or a copy Slack refused to update) still shows them: version 1.
 */
async function staleCardAfterEditToProd(h: Harness) {
  h.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'staging' } }] }, { text: 'Restarted.' });
  const threadTs = nextTs();
  await h.mention({ user: 'UALICE', text: 'restart the worker in staging', ts: threadTs });
  const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'card' });
  const staleButton = (actionId: string) => cardButtons(card.blocks).find((candidate) => candidate.actionId === actionId)!;
  expect(JSON.stringify(card.blocks)).toContain('staging');

  await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...staleButton('countersign_edit') });
  const view = (await waitFor(() => h.slack.callsTo('views.open')[0], { message: 'editor' })).args.view;
  expect((await h.submitView({ user: 'UBOB', view, values: fillForm(view, { Namespace: 'prod' }) })).status).toBe(200);
  await waitFor(() => ephemerals(h).find((message) => message.user === 'UBOB' && message.text.includes('only <@U0SRELEAD> can approve it')), { message: 'edit recorded' });
  await h.settled();
  const currentButton = (actionId: string) => cardButtons(h.slack.messages(CHANNEL, threadTs).find((message) => message.ts === card.ts)!.blocks).find((candidate) => candidate.actionId === actionId)!;
  return { threadTs, card, staleButton, currentButton };
}

describe('a card older than the input it asks about', () => {
  it('refuses its Approve as stale (the lead saw "staging", not "prod")', async () => {
    const h = await harness({ extraYaml: TIERED });
    const { threadTs, card, staleButton } = await staleCardAfterEditToProd(h);
    await h.click({ user: 'U0SRELEAD', cardTs: card.ts, threadTs, ...staleButton('countersign_approve') });
    await toldLead(h, 'changed since you looked');
    await h.settled();
    expect(h.invocations()).toEqual([]);
  });

  it('opens no "Approve & allow" form: the lead is told the input changed, and nothing is approved or granted', async () => {
    const h = await harness({ extraYaml: TIERED });
    const { threadTs, card, staleButton } = await staleCardAfterEditToProd(h);
    const grantButton = staleButton('countersign_grant');
    expect(grantButton.value.endsWith(':v0')).toBe(true);
    const opened = h.slack.callsTo('views.open').length;

    await h.click({ user: 'U0SRELEAD', cardTs: card.ts, threadTs, ...grantButton });
    const told = await toldLead(h, 'The input changed since you looked: it was edited by <@UBOB> and is now version 2');
    expect(told.text).toContain('nothing changed');
    await h.settled();
    expect(h.slack.callsTo('views.open')).toHaveLength(opened);
    const audit = await h.auditEvents();
    expect(audit.filter((event) => event.type === 'grant-created')).toEqual([]);
    expect(audit.filter((event) => event.type === 'decision' && (event as { outcome?: string }).outcome === 'approved')).toEqual([]);
    expect(h.invocations()).toEqual([]);
  });

  it('opens no editor either: an edit would start from an input the card does not show', async () => {
    const h = await harness({ extraYaml: TIERED });
    const { threadTs, card, staleButton } = await staleCardAfterEditToProd(h);
    const opened = h.slack.callsTo('views.open').length;
    await h.click({ user: 'U0SRELEAD', cardTs: card.ts, threadTs, ...staleButton('countersign_edit') });
    await toldLead(h, 'changed since you looked');
    expect(h.slack.callsTo('views.open')).toHaveLength(opened);
  });

  it('refuses a grant form opened before the edit when it is submitted after it', async () => {
    const h = await harness({ extraYaml: TIERED });
    h.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'staging' } }] }, { text: 'Restarted.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart the worker in staging', ts: threadTs });
    const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'card' });
    const button = (actionId: string) => cardButtons(card.blocks).find((candidate) => candidate.actionId === actionId)!;

    await h.click({ user: 'U0SRELEAD', cardTs: card.ts, threadTs, ...button('countersign_grant') });
    const grantForm = (await waitFor(() => h.slack.callsTo('views.open')[0], { message: 'grant form' })).args.view;
    expect(JSON.stringify(grantForm.blocks)).toContain('staging');
    await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...button('countersign_edit') });
    const editor = (await waitFor(() => h.slack.callsTo('views.open')[1], { message: 'editor' })).args.view;
    await h.submitView({ user: 'UBOB', view: editor, values: fillForm(editor, { Namespace: 'prod' }) });
    await waitFor(() => ephemerals(h).find((message) => message.user === 'UBOB' && message.text.includes('only <@U0SRELEAD> can approve it')), { message: 'edit recorded' });

    const response = await h.submitView({ user: 'U0SRELEAD', view: grantForm, values: grantChoice });
    const body = (await response.json()) as { response_action: string; errors: Record<string, string> };
    expect(body).toEqual({ response_action: 'errors', errors: { scope: expect.stringContaining('changed since you looked') } });
    await h.settled();
    expect((await h.auditEvents()).filter((event) => event.type === 'grant-created')).toEqual([]);
    expect(h.invocations()).toEqual([]);
  });

  it('lets the lead approve and allow from the updated card, whose form shows the prod input', async () => {
    const h = await harness({ extraYaml: TIERED });
    const { threadTs, card, currentButton } = await staleCardAfterEditToProd(h);
    const opened = h.slack.callsTo('views.open').length;
    await h.click({ user: 'U0SRELEAD', cardTs: card.ts, threadTs, ...currentButton('countersign_grant') });
    const view = (await waitFor(() => h.slack.callsTo('views.open')[opened], { message: 'grant form' })).args.view;
    expect(JSON.stringify(view.blocks)).toContain('prod');
    expect((await h.submitView({ user: 'U0SRELEAD', view, values: grantChoice })).status).toBe(200);
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Restarted.'), { message: 'answer' });
    expect((await h.auditEvents()).filter((event) => event.type === 'grant-created')).toHaveLength(1);
    expect(h.invocations()).toHaveLength(1);
  });
});
