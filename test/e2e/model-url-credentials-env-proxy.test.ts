import { afterAll, describe, expect, it, vi } from 'vitest';

/**
 * As model-url-credentials-notice.test.ts, with NODE_USE_ENV_PROXY set (a bot behind a corporate
 * proxy): the lean fetch hands every request to Node's `fetch`, which refuses the credentialed
 * OPENAI_BASE_URL with a TypeError quoting it whole, so the very first message posts the password.
 * Set before the harness creates the process's shared lean fetch (sharedLeanFetch reads it then).
 */
process.env.NODE_USE_ENV_PROXY = '1';
// The suite shares one module graph per worker (isolate: false): a fresh one, so this file's bot
// gets a lean fetch created with the variable set, whichever file ran before it.
vi.resetModules();
const { nextTs, threadReplies, useHarnesses, waitFor } = await import('./harness.js');
const harness = useHarnesses();
// Other files in this worker must not inherit it.
afterAll(() => {
  delete process.env.NODE_USE_ENV_PROXY;
});

describe('NODE_USE_ENV_PROXY and a base URL with credentials', () => {
  it('does not quote the password in the thread', async () => {
    // Node's fetch refuses the URL before it connects: no server is needed behind it.
    // Past the OPENAI_BASE_URL check, as a `createBot` caller who builds the environment by hand.
    const baseUrl = 'http://countersign:Pr0xyPassw0rd@127.0.0.1:9/v1';
    const h2 = await harness({ editEnvironment: (environment) => ({ ...environment, openai: { ...environment.openai, baseUrl } }) });
    const threadTs = nextTs();
    await h2.mention({ user: 'UALICE', text: 'what runs in staging?', ts: threadTs });
    const reply = await waitFor(() => threadReplies(h2, threadTs)[0], { message: 'a reply' });
    await h2.settled();
    expect(reply.text, reply.text).not.toContain('Pr0xyPassw0rd');
    expect(reply.text).toContain('includes credentials: http://…@127.0.0.1');
  });
});
