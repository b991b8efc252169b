import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ToolDefinition } from '../../src/tools/tool-definition.js';
import type { ScriptedReply } from '../helpers/fake-openai.js';
import { cardButtons, CHANNEL, nextTs, threadReplies, useHarnesses, waitFor } from './harness.js';

const harness = useHarnesses();

function clusterTools(ran: unknown[]): ToolDefinition[] {
  const schema = z.object({ service: z.string(), namespace: z.enum(['staging', 'prod']) });
  const recording = (name: string): ToolDefinition => ({
    name,
    description: name,
    inputSchema: schema,
    approval: 'always',
    execute: async (input) => {
      ran.push([name, input]);
      return { ok: true };
    },
  });
  return [recording('scale_down'), recording('delete_deployment')];
}

/** OpenAI Chat Completions refuses a `tool` message that does not answer the assistant tool_calls right before it. */
function orphanToolMessages(messages: Array<{ role: string; tool_calls?: Array<{ id: string }>; tool_call_id?: string }>): string[] {
  const problems: string[] = [];
  let open = new Set<string>();
  for (const message of messages) {
    if (message.role === 'assistant') open = new Set((message.tool_calls ?? []).map((call) => call.id));
    else if (message.role === 'tool') {
      if (!open.has(message.tool_call_id ?? '')) problems.push(`tool message for ${message.tool_call_id} does not follow its call`);
    } else open = new Set();
  }
  return problems;
}

describe.each(['responses', 'chat'] as const)('a model server that repeats a tool call id within one response (%s API)', (api) => {
  it('runs only the call the human approved, and never the one they denied', async () => {
    const ran: unknown[] = [];
    const h = await harness({ tools: clusterTools(ran), api });
    // An OpenAI-compatible server that numbers calls per response gives both the same id.
    h.openai.enqueue(
      {
        toolCalls: [
          { id: 'call_1', name: 'scale_down', arguments: { service: 'worker', namespace: 'staging' } },
          { id: 'call_1', name: 'delete_deployment', arguments: { service: 'payments', namespace: 'prod' } },
        ],
      },
      { text: 'Done.' },
    );
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'scale down worker and delete payments', ts: threadTs });
    const card = await waitFor(() => h.slack.messages(CHANNEL, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'the card' });
    const approves = cardButtons(card.blocks).filter((button) => button.actionId === 'countersign_approve');
    expect(approves).toHaveLength(2);
    // Approve the scale-down (the first call), deny the delete (the second).
    await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...approves[0]! });
    const denyLeft = await waitFor(
      () => {
        const now = h.slack.messages(CHANNEL, threadTs).find((message) => message.ts === card.ts);
        const left = now ? cardButtons(now.blocks).filter((button) => button.actionId === 'countersign_deny') : [];
        return left.length === 1 ? left[0] : undefined;
      },
      { message: 'the first decision on the card' },
    );
    await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...denyLeft });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Done.'), { message: 'the answer' });
    await h.settled();
    expect(ran).toEqual([['scale_down', { service: 'worker', namespace: 'staging' }]]);
    const started = (await h.auditEvents()).filter((event) => event.type === 'tool-started');
    expect(started).toEqual([expect.objectContaining({ toolName: 'scale_down', input: { service: 'worker', namespace: 'staging' } })]);
  });
});

describe('a tool call id the model already used in an earlier turn', () => {
  it('keeps the history valid for the provider after a turn that ran the call fails and is tried again', async () => {
    const h = await harness({ modelTimeoutMs: 300 });
    const script: ScriptedReply[] = [
      { toolCalls: [{ id: 'call_1', name: 'get_pods', arguments: { namespace: 'staging' } }] },
      { text: 'staging has pod-a.' },
      // The next turn: the server numbers calls per response again, then the model hangs.
      { toolCalls: [{ id: 'call_1', name: 'get_pods', arguments: { namespace: 'prod' } }] },
      { hang: true },
      { text: 'prod has pod-b.' },
    ];
    h.openai.setResponder(() => script.shift() ?? { text: 'unexpected' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'pods in staging?', ts: threadTs });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'staging has pod-a.'), { message: 'the first answer' });
    await h.settled();
    await h.threadMessage({ user: 'UALICE', text: 'and in prod?', threadTs });
    const notice = await waitFor(() => threadReplies(h, threadTs).find((message) => message.text.includes('could not finish')), { timeoutMs: 10_000, message: 'failure notice' });
    expect(h.invocations()).toEqual([['get', 'pods', '-n', 'staging'], ['get', 'pods', '-n', 'prod']]);
    const retry = cardButtons(notice.blocks).find((button) => button.actionId === 'countersign_retry')!;
    await h.click({ user: 'UALICE', cardTs: notice.ts, threadTs, ...retry });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'prod has pod-b.'), { message: 'the answer after Try again' });
    // Try again did not run the prod listing a second time, and the provider got a history it accepts.
    expect(h.invocations()).toHaveLength(2);
    const sent = (h.openai.requests.at(-1)!.body as { messages: Parameters<typeof orphanToolMessages>[0] }).messages;
    expect(orphanToolMessages(sent)).toEqual([]);
  });
});
