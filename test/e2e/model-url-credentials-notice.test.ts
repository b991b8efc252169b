import { afterEach, describe, expect, it } from 'vitest';
import { listenOnLoopback, readRequestBody, type LoopbackServer } from '../helpers/loopback-http.js';
import { nextTs, threadReplies, useHarnesses, waitFor } from './harness.js';

/**
 * OPENAI_BASE_URL may carry credentials (`https://user:password@llm-proxy.internal/v1`, as a
 * LiteLLM or nginx basic-auth proxy is often addressed). The lean fetch sends a request with a
 * string body over undici's `request`, but hands a redirect answer to Node's `fetch`, which refuses
 * a URL with credentials with `TypeError: Request cannot be constructed from a URL that includes
 * credentials: <the whole URL>`. The AI SDK passes that TypeError through unwrapped (it is not
 * "fetch failed"), and the failure notice quotes its first line: the proxy's password is posted
 * in the Slack thread for everyone in the channel. (The same with NODE_USE_ENV_PROXY set: every
 * model request then goes to `fetch`.) shortError only removed `sk-`/`xox*-`/`xapp-` tokens.
 * OPENAI_BASE_URL now refuses credentials (src/config/environment.test.ts); a `createBot` caller
 * may still build the environment by hand, which is how this test gets them past it, and the
 * notice removes any URL's user and password.
 */
const harness = useHarnesses();
let server: LoopbackServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('a model request to a base URL with credentials that fails', () => {
  it('does not quote the password in the thread', async () => {
    server = await listenOnLoopback({
      listener: async (request, response) => {
        await readRequestBody(request);
        // A proxy that moves its API (or sends http to https): a plain redirect.
        response.writeHead(308, { location: '/v2/chat/completions' });
        response.end();
      },
    });
    const baseUrl = `http://countersign:Pr0xyPassw0rd@127.0.0.1:${server.port}/v1`;
    const h = await harness({ editEnvironment: (environment) => ({ ...environment, openai: { ...environment.openai, baseUrl } }) });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'what runs in staging?', ts: threadTs });
    const notice = await waitFor(() => threadReplies(h, threadTs).find((message) => message.text.includes(':warning:')), { message: 'the failure notice' });
    await h.settled();
    expect(notice.text, notice.text).not.toContain('Pr0xyPassw0rd');
    // The cause still reads: only the user and password are gone.
    expect(notice.text).toContain('includes credentials: http://…@127.0.0.1');
  });
});
