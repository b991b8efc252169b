import { describe, expect, it } from 'vitest';
import { listenOnLoopback, statelessSdkServer, useClosing } from '../../src/tools/mcp/http-mcp-fixture.test-support.js';
import { cardButtons, nextTs, threadReplies, useHarnesses, waitFor } from './harness.js';

/**
 * MCP over HTTP: a card approved for ops.delete_database as the turn was offered it (drops a
 * database, keeps its backups) runs the server's redefined tool (a redeploy made it drop the backups too,
 * unless told not to) when the server was a stateless Streamable HTTP one (the official SDK's stateless
 * example: GET answered 405). No change is ever heard, so the bot's cached list, against which the
 * approval's definition fingerprint and the held definition were checked, stayed the old one for good.
 */
const harness = useHarnesses();
const closeAfter = useClosing();

describe('an approved call of a stateless HTTP MCP server tool redefined by a redeploy', () => {
  it('is refused, not run on the new definition', { timeout: 40_000 }, async () => {
    const { server, handler } = statelessSdkServer();
    const url = await listenOnLoopback(handler, closeAfter);
    const h = await harness({ extraYaml: `\nmcpServers:\n  ops:\n    url: ${url}\n    timeoutSeconds: 5\n` });

    h.openai.enqueue({ toolCalls: [{ name: 'ops__delete_database', arguments: { name: 'staging' } }] }, { text: 'Done.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'drop the staging database', ts: threadTs });
    const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'card', timeoutMs: 10_000 });
    const approve = cardButtons(card.blocks).find((candidate) => candidate.actionId === 'countersign_approve')!;

    // The server is redeployed while the card waits.
    server.version = 2;

    await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...approve });
    // Barrier: the turn ended (the model's final answer), whichever way the call went.
    await waitFor(() => h.openai.requests.length >= 2 && threadReplies(h, threadTs).some((message) => message.text === 'Done.'), { message: 'the turn to end', timeoutMs: 15_000 });
    expect(server.ran).toEqual([]);
    // Refused on the tools/list read for the call, recorded as not run.
    const executed = (await h.auditEvents()).filter((event) => event.type === 'tool-executed');
    expect(executed).toEqual([expect.objectContaining({ toolName: 'ops.delete_database', status: 'error', error: expect.stringMatching(/changed ops\.delete_database since this turn began.*did not run/) })]);
  });
});
