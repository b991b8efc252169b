import { jsonSchema } from 'ai';
import { describe, expect, it } from 'vitest';
import { defineTool } from '../../src/tools/tool-definition.js';
import { conversationOf } from '../helpers/fake-openai.js';
import { cardButtons, nextTs, threadReplies, useHarnesses, waitFor } from './harness.js';
import { grantFromCard } from './grant-form.js';

const harness = useHarnesses();

/**
 * A turn that fails (model error) after an approved call STARTED and then threw (a spawner killed
 * mid-call, an HTTP request whose reply was lost): the call may have had its effect, so its
 * failure is written into the history and its executing marker is dropped only once every started
 * call has a result there. Try again must then neither run it a second time (under the grant the
 * approver gave) nor tell the model it never ran.
 */
describe('a failed turn after an approved call started and threw', () => {
  function throwingDeploy() {
    const runs: unknown[] = [];
    const deploy = defineTool({
      name: 'deploy_service',
      description: 'Deploy a service',
      inputSchema: jsonSchema<{ service: string }>({ type: 'object', properties: { service: { type: 'string' } }, required: ['service'], additionalProperties: false }),
      approval: 'always',
      execute: async (input) => {
        runs.push(input);
        // The deploy went out; the connection dropped before its reply (it may have run).
        if (runs.length === 1) throw new Error('socket hang up after the request was sent');
        return { deployed: input.service };
      },
    });
    return { deploy, runs };
  }

  it('Try again does not run the approved call a second time', async () => {
    const { deploy, runs } = throwingDeploy();
    const h = await harness({ tools: [deploy] });
    // The card; then, after the tool error, the model fails (400: not retried); then Try again's answer.
    h.openai.enqueue({ toolCalls: [{ name: 'deploy_service', arguments: { service: 'api' } }] }, { error: { status: 400, message: 'model exploded' } }, { text: 'Retried.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'deploy api', ts: threadTs });
    const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'card' });
    await grantFromCard(h, { card, threadTs, scope: 'thread' });
    const notice = await waitFor(() => threadReplies(h, threadTs).find((message) => message.text.includes('could not finish')), { timeoutMs: 10_000, message: 'failure notice' });
    expect(runs).toHaveLength(1);

    const retry = cardButtons(notice.blocks).find((button) => button.actionId === 'countersign_retry')!;
    await h.click({ user: 'UALICE', cardTs: notice.ts, threadTs, ...retry });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Retried.'), { timeoutMs: 10_000, message: 'answer after retry' });
    await h.settled();
    const told = conversationOf(h.openai.requests.at(-1)!).filter((message) => message.role === 'tool').map((message) => message.text ?? '').join('\n');
    // At most once: the call started (and may have gone through), so it is reported as interrupted, never run again.
    expect(runs, `the model was told: ${told}`).toHaveLength(1);
    expect(told).toContain('may or may not have completed');
  }, 30_000);

  it('without a grant, the model is at least not told the call never ran', async () => {
    const { deploy, runs } = throwingDeploy();
    const h = await harness({ tools: [deploy] });
    h.openai.enqueue({ toolCalls: [{ name: 'deploy_service', arguments: { service: 'api' } }] }, { error: { status: 400, message: 'model exploded' } }, { text: 'Retried.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'deploy api', ts: threadTs });
    const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'card' });
    await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...cardButtons(card.blocks).find((button) => button.actionId === 'countersign_approve')! });
    const notice = await waitFor(() => threadReplies(h, threadTs).find((message) => message.text.includes('could not finish')), { timeoutMs: 10_000, message: 'failure notice' });
    const retry = cardButtons(notice.blocks).find((button) => button.actionId === 'countersign_retry')!;
    await h.click({ user: 'UALICE', cardTs: notice.ts, threadTs, ...retry });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Retried.'), { timeoutMs: 10_000, message: 'answer after retry' });
    await h.settled();
    const told = conversationOf(h.openai.requests.at(-1)!).filter((message) => message.role === 'tool').map((message) => message.text ?? '').join('\n');
    expect(runs).toHaveLength(1);
    expect(told).not.toContain('Not run');
    expect(told).toContain('may or may not have completed');
  }, 30_000);
});

/**
 * A new message closes every earlier call without a result before the model reads it. When the
 * turn that ran an approved call could not save its outcome (a store error at the last save, or a
 * crash of a message item that resumed a decided step), the call's executing marker is the only
 * record that it ran: the new message must read it and tell the model the call was interrupted,
 * never that it was not run (the model would ask again, and a grant would run it a second time).
 */
describe('a new message after an unsaved resumed turn', () => {
  it('does not tell the model that an approved call which ran was not run', async () => {
    const runs: unknown[] = [];
    const deploy = defineTool({
      name: 'deploy_service',
      description: 'Deploy a service',
      inputSchema: jsonSchema<{ service: string }>({ type: 'object', properties: { service: { type: 'string' } }, required: ['service'], additionalProperties: false }),
      approval: 'always',
      execute: async (input) => {
        runs.push(input);
        return { deployed: input.service };
      },
    });
    let failed = false;
    const h = await harness({
      tools: [deploy],
      // The store is unreachable for the one save that records the resumed turn's outcome (a failover).
      wrapStore: (store) => ({
        ...store,
        saveThread: async (thread, ttlMs, fence, options) => {
          if (!failed && runs.length > 0 && thread.outbox !== undefined) {
            failed = true;
            throw new Error('Connection is closed.');
          }
          return store.saveThread(thread, ttlMs, fence, options);
        },
      }),
    });
    h.openai.enqueue({ toolCalls: [{ name: 'deploy_service', arguments: { service: 'api' } }] }, { text: 'Deployed api.' }, { text: 'Anything else?' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'deploy api', ts: threadTs });
    const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'card' });
    await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...cardButtons(card.blocks).find((button) => button.actionId === 'countersign_approve')! });
    await waitFor(() => threadReplies(h, threadTs).find((message) => message.text.includes('went wrong')), { timeoutMs: 10_000, message: 'the error notice' });
    await h.settled();
    expect(failed).toBe(true);
    expect(runs).toHaveLength(1);

    await h.mention({ user: 'UALICE', text: 'did it work?', ts: nextTs(), threadTs });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Anything else?'), { timeoutMs: 10_000, message: 'the answer to the new message' });
    const told = conversationOf(h.openai.requests.at(-1)!).filter((message) => message.role === 'tool').map((message) => message.text ?? '').join('\n');
    // The call ran (its marker, with finishedAt, is in the store): the model must not read that it did not.
    expect(told).not.toContain('Not run');
  }, 30_000);
});
