import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ToolDefinition } from '../../src/tools/tool-definition.js';
import { nextTs, threadReplies, useHarnesses, waitFor } from './harness.js';

/**
 * `withUniqueToolCallIds` promises every call "an id no other call of the thread has", since the
 * idempotency key (README: "pass it on" to a deploy) is thread + call id. It only looks at the
 * ids in the prompt, though, and the stored history is trimmed (`history.maxMessages`/`maxBytes`):
 * once the exchange with a server's `call_1` is trimmed away, the server's next `call_1` keeps its
 * id, and a tool deduping on the key takes the new deploy for a retry of the old one.
 */
const harness = useHarnesses();

describe('a call id the server repeats after the exchange that used it was trimmed from the history', () => {
  it('still gets an idempotency key no earlier call of the thread had', async () => {
    const deploys: Array<{ replicas: number; idempotencyKey: string }> = [];
    const deploy: ToolDefinition = {
      name: 'deploy',
      description: 'Scale the deployment',
      inputSchema: z.object({ replicas: z.number().int() }),
      approval: 'never',
      execute: async (input, context) => {
        deploys.push({ replicas: input.replicas, idempotencyKey: context.idempotencyKey });
        return { ok: true };
      },
    };
    const h = await harness({ tools: [deploy], extraYaml: 'history:\n  maxMessages: 4\n' });
    // A server that numbers calls per response: every first call is call_1.
    h.openai.enqueue(
      { toolCalls: [{ id: 'call_1', name: 'deploy', arguments: { replicas: 1 } }] },
      { text: 'Scaled to 1.' },
      { text: 'You are welcome.' },
      { toolCalls: [{ id: 'call_1', name: 'deploy', arguments: { replicas: 3 } }] },
      { text: 'Scaled to 3.' },
    );
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'scale to 1', ts: threadTs });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Scaled to 1.'), { message: 'first answer' });
    await h.settled();
    await h.threadMessage({ user: 'UALICE', text: 'thanks', threadTs });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'You are welcome.'), { message: 'second answer' });
    await h.settled();
    await h.threadMessage({ user: 'UALICE', text: 'now scale to 3', threadTs });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Scaled to 3.'), { message: 'third answer' });
    await h.settled();
    expect(deploys.map((each) => each.replicas)).toEqual([1, 3]);
    // Two different deploys of one thread: a deploy service deduping on the key would drop the second.
    expect(deploys[1]!.idempotencyKey).not.toBe(deploys[0]!.idempotencyKey);
  });
});
