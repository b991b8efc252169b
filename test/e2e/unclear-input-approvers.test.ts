import { jsonSchema } from 'ai';
import { describe, expect, it } from 'vitest';
import type { ToolDefinition } from '../../src/tools/tool-definition.js';
import { conversationOf } from '../helpers/fake-openai.js';
import { CHANNEL, cardButtons, nextTs, threadReplies, useHarnesses, waitFor, type Harness } from './harness.js';

const harness = useHarnesses();

/**
 * Deleting pods is SRE's; dev-only deletes are the dev lead's. A list with dev AND prod may fall
 * under either rule, so it needs a countersignature both would accept: the dev lead alone must not
 * be able to approve a prod delete because the model (or a prompt injection) added 'dev' to it.
 */
const policyNaming = ({ sre, devLead }: { sre: string; devLead: string }) => `
policy:
  rules:
    - name: deleting pods is SRE's
      tools: [delete_pods]
      approvers: [${sre}]
    - name: dev-only deletes go to the dev lead
      tools: [delete_pods]
      input:
        - { field: namespaces, oneOf: [dev] }
      approvers: [${devLead}]
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

const ephemerals = (h: Harness) => h.slack.callsTo('chat.postEphemeral').map((call) => ({ user: String(call.args.user), text: String(call.args.text) }));

async function askToDelete(h: Harness, namespaces: string[], answer: string) {
  h.openai.enqueue({ toolCalls: [{ name: 'delete_pods', arguments: { namespaces, selector: 'app=api' } }] }, { text: answer });
  const threadTs = nextTs();
  await h.mention({ user: 'UALICE', text: 'delete the crashing api pods', ts: threadTs });
  const card = await waitFor(() => threadReplies(h, threadTs).find((message) => (message.blocks?.length ?? 0) > 0), { message: 'the card' });
  const currentCard = () => h.slack.messages(CHANNEL, threadTs).find((message) => message.ts === card.ts)!;
  const click = (user: string, actionId: string) => h.click({ user, cardTs: card.ts, threadTs, ...cardButtons(card.blocks).find((button) => button.actionId === actionId)! });
  return { threadTs, card, currentCard, click };
}

describe('an input that may fall under several rules needs an approver under every one of them', () => {
  it('control: the dev lead approves a dev-only delete alone', async () => {
    const ran: unknown[] = [];
    const h = await harness({ tools: [deletePods(ran)], extraYaml: policyNaming({ sre: 'U0SRE, U0BOTH', devLead: 'U0DEVLEAD, U0BOTH' }) });
    const { threadTs, click } = await askToDelete(h, ['dev'], 'Deleted the dev pods.');
    await click('U0DEVLEAD', 'countersign_approve');
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Deleted the dev pods.'), { message: 'the answer' });
    expect(ran).toEqual([{ namespaces: ['dev'], selector: 'app=api' }]);
  });

  it('neither the dev lead nor SRE alone approves a delete that may be dev or prod; someone named by both does', async () => {
    const ran: unknown[] = [];
    const h = await harness({ tools: [deletePods(ran)], extraYaml: policyNaming({ sre: 'U0SRE, U0BOTH', devLead: 'U0DEVLEAD, U0BOTH' }) });
    const { threadTs, card, currentCard, click } = await askToDelete(h, ['dev', 'prod'], 'Deleted the crashing pods.');

    await click('U0DEVLEAD', 'countersign_approve');
    await h.settled();
    // Not the dev lead's to approve alone: it may be a prod delete.
    expect(ran).toEqual([]);
    await click('U0SRE', 'countersign_approve');
    await waitFor(() => ephemerals(h).length === 2, { message: 'two refusals' });
    for (const refusal of ephemerals(h)) expect(refusal.text).toContain('Only someone who is <@U0DEVLEAD> or <@U0BOTH> and also <@U0BOTH> or <@U0SRE> can approve this');
    await h.settled();
    expect(ran).toEqual([]);
    expect(JSON.stringify(currentCard().blocks)).not.toContain('Approved');
    expect(JSON.stringify(card.blocks)).toContain('who must also be <@U0BOTH> or <@U0SRE>');

    await click('U0BOTH', 'countersign_approve');
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Deleted the crashing pods.'), { message: 'the answer' });
    expect(ran).toEqual([{ namespaces: ['dev', 'prod'], selector: 'app=api' }]);
  });

  it('where the rules name nobody in common, the card says at once that nobody can approve it as it is, and the model is told to split it', async () => {
    const ran: unknown[] = [];
    const h = await harness({ tools: [deletePods(ran)], extraYaml: policyNaming({ sre: 'U0SRE', devLead: 'U0DEVLEAD' }) });
    const { threadTs, card } = await askToDelete(h, ['dev', 'prod'], 'I will ask for dev and prod separately.');
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'I will ask for dev and prod separately.'), { message: 'the answer' });
    const shown = JSON.stringify(h.slack.messages(CHANNEL, threadTs).find((message) => message.ts === card.ts)!.blocks);
    expect(shown).toContain('Not run: nobody can approve this input as it is');
    expect(shown).toContain('separate calls');
    const told = conversationOf(h.openai.requests.at(-1)!)
      .filter((message) => message.role === 'tool')
      .map((message) => message.text ?? '');
    expect(told.some((text) => text.includes('nobody can approve this input as it is') && text.includes('separate calls'))).toBe(true);
    // Not SRE's to approve alone either: nothing is left to click.
    expect(cardButtons(card.blocks)).toEqual([]);
    await h.settled();
    expect(ran).toEqual([]);
  });

  it('a group in common is read at the click: with nobody in both groups, the first click closes the call saying why', async () => {
    const ran: unknown[] = [];
    const h = await harness({ tools: [deletePods(ran)], extraYaml: policyNaming({ sre: '"group:S0SRE"', devLead: '"group:S0DEVLEADS"' }) });
    h.slack.setUsergroupUsers('S0SRE', ['U0SRE']);
    h.slack.setUsergroupUsers('S0DEVLEADS', ['U0DEVLEAD']);
    const { threadTs, currentCard, click } = await askToDelete(h, ['dev', 'prod'], 'I will ask for dev and prod separately.');
    await click('U0DEVLEAD', 'countersign_approve');
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'I will ask for dev and prod separately.'), { message: 'the answer' });
    expect(JSON.stringify(currentCard().blocks)).toContain('Not run: nobody can approve this input as it is');
    expect(ran).toEqual([]);
  });
});
