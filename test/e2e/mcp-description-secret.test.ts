import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { cardButtons, nextTs, threadReplies, useHarnesses, waitFor } from './harness.js';

/**
 * The config passes a stdio MCP server its database URL with `${DB_URL}`. The README and
 * `createMcpServer` promise the value of every `${VAR}` is redacted from all the server says
 * ("a server can learn another source's secret some other way and print it"); its results are.
 * But the tool's description and schema, which the server writes too, go unredacted to the model
 * and onto every approval card in Slack: the card of a call shows the tool's description.
 */
const harness = useHarnesses();
const SERVER = join(import.meta.dirname, '../fixtures/dsn-mcp-server.mjs');
const PASSWORD = 'S3cretDbPassw0rd-7f1c';
const DB_URL = `postgres://app:${PASSWORD}@db.internal:5432/prod`;

afterEach(() => vi.unstubAllEnvs());

describe('an MCP server that names its secret in its tool description', () => {
  it('the approval card and the model see the description with the secret redacted', { timeout: 30_000 }, async () => {
    vi.stubEnv('REVIEW_DB_URL', DB_URL);
    const h = await harness({
        configYaml: `
instructions: You are a test ops bot.
mcpServers:
  db:
    command: ${JSON.stringify(process.execPath)}
    args: [${JSON.stringify(SERVER)}]
    env: { DB_URL: "\${REVIEW_DB_URL}" }
`,
    });
    h.openai.enqueue({ toolCalls: [{ name: 'db__query', arguments: { sql: 'select 1' } }] });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'how many orders?', ts: threadTs });
    const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'card', timeoutMs: 15_000 });

    const modelSaw = JSON.stringify(h.openai.requests[0]!.body.tools);
    const cardText = JSON.stringify(card.blocks);
    expect({ cardHasSecret: cardText.includes(PASSWORD), modelHasSecret: modelSaw.includes(PASSWORD) }).toEqual({ cardHasSecret: false, modelHasSecret: false });
  });
});
