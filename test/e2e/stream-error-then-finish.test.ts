import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ToolDefinition } from '../../src/tools/tool-definition.js';
import { listenOnLoopback, readRequestBody, type LoopbackServer } from '../helpers/loopback-http.js';
import { nextTs, threadReplies, useHarnesses, waitFor } from './harness.js';

/**
 * An OpenAI-compatible Chat Completions server whose stream carries one chunk the provider cannot
 * read (a proxy's keep-alive, a vendor field of another shape) between a tool call and the chunk
 * that ends the step with `finish_reason: tool_calls`. @ai-sdk/openai's chat model turns the bad
 * chunk into an `error` part and keeps reading; the later finish chunk resets the step's finish
 * reason to `tool-calls`, so the AI SDK runs the step's calls. runTurn throws on the `error` part
 * (the turn is recorded failed, the notice posted) without stopping the stream, which goes on in
 * the background: the call runs after the thread was told the turn failed, and nothing records it.
 */
const harness = useHarnesses();
let server: LoopbackServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function chunk(delta: object, finish: string | null = null): string {
  return `data: ${JSON.stringify({ id: 'chatcmpl-x', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
}

describe('a chat stream with an unreadable chunk between a tool call and its finish', () => {
  it('does not run the call behind the failed turn: every call that ran is in the history the model sees next', async () => {
    const ran: Array<{ toolCallId: string; input: unknown }> = [];
    const pageOnCall: ToolDefinition = {
      name: 'page_oncall',
      description: 'Page the on-call engineer of a team',
      inputSchema: z.object({ team: z.string() }),
      approval: 'never',
      execute: async (input, context) => {
        ran.push({ toolCallId: context.toolCallId, input });
        return { paged: true };
      },
    };
    const requests: any[] = [];
    server = await listenOnLoopback({
      listener: async (request, response) => {
        requests.push(JSON.parse(await readRequestBody(request)));
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        if (requests.length > 1) {
          response.end(chunk({ role: 'assistant', content: 'Nothing was paged.' }) + chunk({}, 'stop') + 'data: [DONE]\n\n');
          return;
        }
        // One short response, as it usually arrives: in one piece.
        response.end(
          chunk({ role: 'assistant', content: null }) +
            chunk({ tool_calls: [{ index: 0, id: 'call_page', type: 'function', function: { name: 'page_oncall', arguments: '{"team":"db"}' } }] }) +
            'data: {"object":"keep-alive"}\n\n' +
            chunk({}, 'tool_calls') +
            'data: [DONE]\n\n',
        );
      },
    });
    const h = await harness({ tools: [pageOnCall], environment: { OPENAI_BASE_URL: `http://127.0.0.1:${server.port}/v1` } });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'page the db on-call', ts: threadTs });
    await waitFor(() => threadReplies(h, threadTs).find((message) => message.text.includes('could not finish')), { message: 'the failure notice' });
    await h.settled();
    await h.threadMessage({ user: 'UALICE', text: 'did it page them?', threadTs });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Nothing was paged.'), { message: 'the next answer' });
    await h.settled();
    // Whatever ran is known to the thread: its result reaches the model (else Try again pages twice).
    const toldModel = JSON.stringify(requests.at(-1).messages);
    expect(ran.filter((call) => !toldModel.includes(call.toolCallId))).toEqual([]);
    // And nothing started after the turn was over: the audit trail has no call the thread never heard of.
    const started = (await h.auditEvents()).filter((event) => event.type === 'tool-started');
    expect(started.filter((event) => !toldModel.includes((event as { toolCallId?: string }).toolCallId ?? ''))).toEqual([]);
  });
});
