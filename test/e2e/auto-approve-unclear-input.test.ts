import { jsonSchema } from 'ai';
import { describe, expect, it } from 'vitest';
import type { ToolDefinition } from '../../src/tools/tool-definition.js';
import { createManualScheduleClock } from '../helpers/manual-schedule-clock.js';
import { CHANNEL, cardButtons, nextTs, threadReplies, useHarnesses, waitFor, type Harness } from './harness.js';

const harness = useHarnesses();
const START = Date.UTC(2026, 10, 25, 12, 7);
const FIRST_FIRING = Date.UTC(2026, 10, 25, 12, 15);

/**
 * Deleting pods is never automatic, except that the dev lead's rule for dev-only deletes lets the
 * heartbeat (or auto-approve mode) skip the card. A list with dev AND prod may fall under either rule;
 * the README: it "must meet every one of them: ... auto-approve or grants forbidden by any". The SRE
 * lead is an approver under both, so such a call can be approved at all (for rules that name nobody
 * in common see unclear-input-approvers.test.ts).
 */
const POLICY = `
policy:
  rules:
    - name: deleting pods is SRE's and never automatic
      tools: [delete_pods]
      approvers: [U0SRE, U0SRELEAD]
      autoApprove: forbidden
    - name: dev-only deletes go to the dev lead
      tools: [delete_pods]
      input:
        - { field: namespaces, oneOf: [dev] }
      approvers: [U0DEVLEAD, U0SRELEAD]
`;

function deletePods(ran: unknown[]): ToolDefinition {
  return {
    name: 'delete_pods',
    description: 'Delete pods matching a selector in the given namespaces',
    inputSchema: jsonSchema<{ namespaces: string[]; selector: string }>({
      type: 'object',
      properties: { namespaces: { type: 'array', items: { type: 'string' } }, selector: { type: 'string' } },
      required: ['namespaces', 'selector'],
      additionalProperties: false,
    }),
    approval: 'always',
    execute: async (input) => {
      ran.push(input);
      return 'deleted';
    },
  };
}

const scheduledPosts = (h: Harness) => h.slack.messages(CHANNEL).filter((message) => message.thread_ts === undefined || message.thread_ts === message.ts).filter((message) => message.text.includes('Scheduled: *heartbeat*'));
const deleteDevAndProd = { toolCalls: [{ name: 'delete_pods', arguments: { namespaces: ['dev', 'prod'], selector: 'app=api' } }] };

describe('autoApprove: forbidden for an input that may fall under several rules', () => {
  it("control: a prod-only delete in the schedule's turn waits for SRE", async () => {
    const ran: unknown[] = [];
    const clock = createManualScheduleClock(START);
    const h = await harness({
      tools: [deletePods(ran)],
      scheduleClock: clock,
      extraYaml: `${POLICY}schedules:\n  - name: heartbeat\n    cron: '*/15 * * * *'\n    channel: ${CHANNEL}\n    prompt: Clean up crashing pods.\n    autoApprove: [delete_pods]\n`,
    });
    h.openai.enqueue({ toolCalls: [{ name: 'delete_pods', arguments: { namespaces: ['prod'], selector: 'app=api' } }] }, { text: 'Done.' });
    await clock.advanceTo(FIRST_FIRING);
    const [post] = await waitFor(() => (scheduledPosts(h).length > 0 ? scheduledPosts(h) : undefined), { message: 'the scheduled post' });
    await waitFor(() => threadReplies(h, post!.ts).find((message) => cardButtons(message.blocks).length > 0), { message: 'a card' });
    await h.settled();
    expect(ran).toEqual([]);
  });

  it("a schedule's autoApprove does not run a delete that may be prod's without a card", async () => {
    const ran: unknown[] = [];
    const clock = createManualScheduleClock(START);
    const h = await harness({
      tools: [deletePods(ran)],
      scheduleClock: clock,
      extraYaml: `${POLICY}schedules:\n  - name: heartbeat\n    cron: '*/15 * * * *'\n    channel: ${CHANNEL}\n    prompt: Clean up crashing pods.\n    autoApprove: [delete_pods]\n`,
    });
    h.openai.enqueue(deleteDevAndProd, { text: 'Deleted the crashing pods.' });
    await clock.advanceTo(FIRST_FIRING);
    const [post] = await waitFor(() => (scheduledPosts(h).length > 0 ? scheduledPosts(h) : undefined), { message: 'the scheduled post' });
    const threadTs = post!.ts;
    await waitFor(
      () => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0 || message.text === 'Deleted the crashing pods.'),
      { message: 'a card or the answer' },
    );
    await h.settled();
    // The prod rule forbids automatic approval: prod pods must not be deleted without SRE.
    expect(ran).toEqual([]);
    expect((await h.auditEvents()).filter((event) => event.type === 'auto-approved')).toEqual([]);
  });

  it('auto-approve mode does not run a delete that may be prod\'s without a card', async () => {
    const ran: unknown[] = [];
    const h = await harness({ tools: [deletePods(ran)], extraYaml: `${POLICY}  autoApprove:\n    channels: [${CHANNEL}]\n` });
    h.openai.enqueue(deleteDevAndProd, { text: 'Deleted the crashing pods.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'delete the crashing api pods', ts: threadTs });
    await waitFor(
      () => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0 || message.text === 'Deleted the crashing pods.'),
      { message: 'a card or the answer' },
    );
    await h.settled();
    expect(ran).toEqual([]);
  });

  it('the onApprovalRequest hook cannot approve a delete that may be prod\'s', async () => {
    const ran: unknown[] = [];
    const h = await harness({ tools: [deletePods(ran)], extraYaml: POLICY, onApprovalRequest: { name: 'approve-everything', decide: () => ({ decision: 'approve' }) } });
    h.openai.enqueue(deleteDevAndProd, { text: 'Deleted the crashing pods.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'delete the crashing api pods', ts: threadTs });
    await waitFor(
      () => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0 || message.text === 'Deleted the crashing pods.'),
      { message: 'a card or the answer' },
    );
    await h.settled();
    expect(ran).toEqual([]);
  });
});

describe('grants: forbidden for an input that may fall under several rules', () => {
  const GRANTS_POLICY = `
policy:
  rules:
    - name: deleting pods is SRE's, one call at a time
      tools: [delete_pods]
      approvers: [U0SRE, U0SRELEAD]
      grants: forbidden
    - name: dev-only deletes go to the dev lead
      tools: [delete_pods]
      input:
        - { field: namespaces, oneOf: [dev] }
      approvers: [U0DEVLEAD, U0SRELEAD]
`;

  async function ask(h: Harness, { namespaces, answer, threadTs }: { namespaces: string[]; answer: string; threadTs: string }) {
    h.openai.enqueue({ toolCalls: [{ name: 'delete_pods', arguments: { namespaces, selector: 'app=api' } }] }, { text: answer });
    const ts = nextTs();
    const seen = new Set(threadReplies(h, threadTs).map((message) => message.ts));
    await h.mention({ user: 'UALICE', text: 'delete the crashing api pods', ts, threadTs });
    const fresh = () => threadReplies(h, threadTs).filter((message) => !seen.has(message.ts));
    return waitFor(() => fresh().find((message) => message.text === answer) ?? fresh().find((message) => cardButtons(message.blocks).length > 0), { message: 'a card or the answer' });
  }

  it("a dev lead's grant for dev deletes does not cover one that may be prod's, and its card offers none", async () => {
    const ran: unknown[] = [];
    const h = await harness({ tools: [deletePods(ran)], extraYaml: GRANTS_POLICY });
    const threadTs = nextTs();
    h.openai.enqueue({ toolCalls: [{ name: 'delete_pods', arguments: { namespaces: ['dev'], selector: 'app=api' } }] }, { text: 'Deleted the dev pods.' });
    await h.mention({ user: 'UALICE', text: 'delete the crashing dev pods', ts: threadTs });
    const devCard = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'the dev card' });
    const grantButton = cardButtons(devCard.blocks).find((button) => button.actionId === 'countersign_grant');
    expect(grantButton).toBeDefined();
    const opened = h.slack.callsTo('views.open').length;
    await h.click({ user: 'U0DEVLEAD', cardTs: devCard.ts, threadTs, ...grantButton! });
    const view = (await waitFor(() => h.slack.callsTo('views.open')[opened], { message: 'the grant form' })).args.view;
    const option = (value: string) => ({ text: { type: 'plain_text', text: value }, value });
    await h.submitView({
      user: 'U0DEVLEAD',
      view,
      values: {
        scope: { value: { type: 'radio_buttons', selected_option: option('thread') } },
        duration: { value: { type: 'static_select', selected_option: option('1') } },
        identical: { value: { type: 'checkboxes', selected_options: [] } },
      },
    });
    await waitFor(() => threadReplies(h, threadTs).find((message) => message.text === 'Deleted the dev pods.'), { message: 'the dev answer' });
    // The grant is the dev lead's for dev deletes: another dev-only delete in the thread runs on it.
    expect((await ask(h, { namespaces: ['dev'], answer: 'Deleted them again.', threadTs })).text).toBe('Deleted them again.');

    const unclear = await ask(h, { namespaces: ['dev', 'prod'], answer: 'Deleted the crashing pods.', threadTs });
    await h.settled();
    expect(cardButtons(unclear.blocks).length).toBeGreaterThan(0);
    expect(cardButtons(unclear.blocks).map((button) => button.actionId)).not.toContain('countersign_grant');
    expect(ran).toEqual([
      { namespaces: ['dev'], selector: 'app=api' },
      { namespaces: ['dev'], selector: 'app=api' },
    ]);
  });
});
