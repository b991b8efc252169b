import { jsonSchema } from 'ai';
import { describe, expect, it } from 'vitest';
import type { ToolDefinition } from '../../src/tools/tool-definition.js';
import { cardButtons, nextTs, threadReplies, useHarnesses, waitFor } from './harness.js';

const harness = useHarnesses();

/**
 * A model that keeps asking for the same call countersign closes at once (an input that may fall
 * under two rules with nobody in common: `unapprovableInput`). Each such step is `complete` when it
 * is built, so run-and-publish resumes it straight away (`resumeDecided`), and the model asks again.
 * The hook-round counter only stopped asking the approval hook after `agent.maxSteps` rounds; it did
 * not stop the resumes, so nothing bounded the loop: no human was asked, no notice was posted, the
 * thread burned model requests for as long as the model repeated itself. The rounds of one work item
 * are now one turn, held to `agent.maxSteps` model steps in all.
 */
const policy = `
agent:
  maxSteps: 3
policy:
  rules:
    - name: deleting pods is SRE's
      tools: [delete_pods]
      approvers: [U0SRE]
    - name: dev-only deletes go to the dev lead
      tools: [delete_pods]
      input:
        - { field: namespaces, oneOf: [dev] }
      approvers: [U0DEVLEAD]
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

describe('a model that keeps asking for a call countersign closes at once', () => {
  it('is stopped after a bounded number of rounds, with a notice in the thread', async () => {
    const ran: unknown[] = [];
    const h = await harness({ tools: [deletePods(ran)], extraYaml: policy });
    // The model repeats the same unapprovable call whatever it is told.
    h.openai.setResponder(() => ({ toolCalls: [{ name: 'delete_pods', arguments: { namespaces: ['dev', 'prod'], selector: 'app=api' } }] }));
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'delete the crashing api pods', ts: threadTs });
    // Far more model requests than agent.maxSteps (3) rounds could ever need: the loop has no end.
    // A bounded loop settles first (the barrier below resolves once nothing is queued or running).
    const outcome = await Promise.race([
      h.openai.waitForRequests(60, { timeoutMs: 60_000 }).then(() => 'still asking the model after 60 requests'),
      h.settled({ timeoutMs: 60_000 }).then(() => 'settled'),
    ]);
    const repliesSoFar = threadReplies(h, threadTs).length;
    const requestsSoFar = h.openai.requests.length;
    // Let the loop end (the model finally answers) so the bot can stop.
    h.openai.setResponder(() => ({ text: 'I give up.' }));
    await h.settled({ timeoutMs: 60_000 });
    expect({ outcome, ran }, `${requestsSoFar} model requests, ${repliesSoFar} posts in the thread`).toEqual({ outcome: 'settled', ran: [] });
  }, 90_000);

  it('takes agent.maxSteps model steps in all, says it stopped there, and Try again asks the model again without running anything', async () => {
    const ran: unknown[] = [];
    const h = await harness({ tools: [deletePods(ran)], extraYaml: policy });
    h.openai.setResponder(() => ({ toolCalls: [{ name: 'delete_pods', arguments: { namespaces: ['dev', 'prod'], selector: 'app=api' } }] }));
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'delete the crashing api pods', ts: threadTs });
    const notice = await waitFor(() => threadReplies(h, threadTs).find((message) => message.text.includes('I stopped after 3 steps without finishing')), { message: 'the step-limit notice' });
    await h.settled();
    // One model step per round, three rounds: the rounds resumed at once share the turn's limit.
    expect(h.openai.requests).toHaveLength(3);
    expect(threadReplies(h, threadTs).filter((message) => JSON.stringify(message.blocks ?? []).includes('delete_pods'))).toHaveLength(3);

    const retry = cardButtons(notice.blocks).find((button) => button.actionId === 'countersign_retry');
    expect(retry).toBeDefined();
    h.openai.setResponder(() => ({ text: 'Split the request per namespace, please.' }));
    await h.click({ user: 'UALICE', cardTs: notice.ts, threadTs, ...retry! });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Split the request per namespace, please.'), { message: 'the answer after Try again' });
    await h.settled();
    expect(h.openai.requests).toHaveLength(4);
    // The model is told of the third call's closing, once: nothing ran and nothing was replayed.
    expect(JSON.stringify(h.openai.requests.at(-1)!.body).match(/"role":"tool"/g)).toHaveLength(3);
    expect(ran).toEqual([]);
  });

  it('counts the steps of rounds the approval hook decided: past agent.maxSteps in all, people decide', async () => {
    const h = await harness({ extraYaml: 'agent:\n  maxSteps: 3\n', onApprovalRequest: { name: 'always', decide: () => ({ decision: 'approve' }) } });
    const restart = { name: 'restart_service', arguments: { service: 'worker', namespace: 'staging' } };
    // A read first (a step of its own), then the same restart again and again.
    let asked = 0;
    h.openai.setResponder(() => ((asked += 1) === 1 ? { toolCalls: [{ name: 'get_pods', arguments: { namespace: 'staging' } }] } : { toolCalls: [restart] }));
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart the worker until it is healthy', ts: threadTs });
    await h.settled();
    // Three model steps: the read, a restart the hook approved (it ran), a restart that waits for people.
    expect(h.openai.requests).toHaveLength(3);
    expect(h.invocations().map((argv) => argv[0])).toEqual(['get', 'rollout']);
    const cards = threadReplies(h, threadTs).filter((message) => JSON.stringify(message.blocks ?? []).includes('restart_service'));
    expect(cards).toHaveLength(2);
    expect(cardButtons(cards[1]!.blocks).map((button) => button.actionId)).toContain('countersign_approve');
  });
});
