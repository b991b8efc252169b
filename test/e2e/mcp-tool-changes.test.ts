import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { conversationOf } from '../helpers/fake-openai.js';
import { cardButtons, nextTs, startHarness, threadReplies, useHarnesses, waitFor, type Harness } from './harness.js';

/**
 * An approved call of an MCP tool that the bot process no longer has when the approval comes: the
 * server stopped offering it, or the process (a restart, another replica) started while the server
 * could not be started, so it has none of its tools. Before the fix the AI SDK skipped the call, it
 * had no result, and the turn failed with "the model request failed (Tool result is missing for
 * tool call call_1.)" while nothing said whether ops.deploy ran.
 */
const harness = useHarnesses();
const SERVER = join(import.meta.dirname, '../fixtures/mutable-mcp-server.mjs');

const DEPLOY = { name: 'deploy', description: 'Deploy a service', inputSchema: { type: 'object', properties: { service: { type: 'string' } }, required: ['service'] } };
const STATUS = { name: 'status', description: 'Status', inputSchema: { type: 'object', properties: {} }, annotations: { readOnlyHint: true } };

function mutableServer(tools: object[]) {
  const dir = mkdtempSync(join(tmpdir(), 'countersign-mcp-'));
  const toolsFile = join(dir, 'tools.json');
  const callsFile = join(dir, 'calls.jsonl');
  writeFileSync(toolsFile, JSON.stringify(tools));
  const lines = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).map((line) => JSON.parse(line)) : []);
  return {
    yaml: `
mcpServers:
  ops:
    command: ${JSON.stringify(process.execPath)}
    args: [${JSON.stringify(SERVER)}, ${JSON.stringify(toolsFile)}, ${JSON.stringify(callsFile)}]
    timeoutSeconds: 3
`,
    /** From now on the server fails to start. */
    down: () => writeFileSync(`${toolsFile}.down`, ''),
    setTools: (next: object[]) => writeFileSync(toolsFile, JSON.stringify(next)),
    /** The tool names of every tools/list the server answered. */
    listed: (): string[][] => lines(`${toolsFile}.listed`),
    calls: () => lines(callsFile),
  };
}

async function cardFor(h: Harness, call: { name: string; arguments: Record<string, unknown> }, answer: string) {
  h.openai.enqueue({ toolCalls: [call] }, { text: answer });
  const threadTs = nextTs();
  await h.mention({ user: 'UALICE', text: 'please deploy api', ts: threadTs });
  const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'card', timeoutMs: 10_000 });
  const approve = cardButtons(card.blocks).find((candidate) => candidate.actionId === 'countersign_approve')!;
  return { threadTs, card, approve };
}

/** What the model was told in the tool results of its second request. */
function toldInSecondRequest(h: Harness): string {
  return conversationOf(h.openai.requests[1]!)
    .filter((message) => message.role === 'tool')
    .map((message) => message.text)
    .join('\n');
}

async function expectNotRunRecorded(h: Harness, { threadTs, cardTs }: { threadTs: string; cardTs: string }): Promise<void> {
  const audit = (await h.auditEvents()).filter((event) => ['tool-started', 'tool-executed', 'action-refused'].includes(event.type));
  // Nothing started, so no tool-started; closed by countersign when the resume was claimed.
  expect(audit).toEqual([expect.objectContaining({ type: 'action-refused', toolName: 'ops.deploy', userId: 'countersign', action: 'resume', code: 'tool-unavailable' })]);
  // The card no longer says "Approved by" a call that never ran.
  const shown = JSON.stringify(threadReplies(h, threadTs).find((message) => message.ts === cardTs)?.blocks);
  expect(shown).toContain('is not available now');
  expect(shown).not.toContain('Approved by');
}

describe('an approved MCP call whose tool is gone when it is approved', () => {
  it('the server stopped offering it: the model is told it did not run and answers', { timeout: 30_000 }, async () => {
    const server = mutableServer([DEPLOY, STATUS]);
    const h = await harness({ extraYaml: server.yaml });
    const { threadTs, card, approve } = await cardFor(h, { name: 'ops__deploy', arguments: { service: 'api' } }, 'Deploy is not available right now.');
    expect(card.text).toContain('ops.deploy');

    server.setTools([STATUS]);
    await waitFor(() => server.listed().some((names) => !names.includes('deploy')), { message: 'the bot to list the tools again' });

    await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...approve });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Deploy is not available right now.'), { message: 'the answer' });
    expect(threadReplies(h, threadTs).map((message) => message.text).join('\n')).not.toContain('could not finish');
    expect(server.calls()).toEqual([]);
    expect(h.openai.requests).toHaveLength(2);
    expect(toldInSecondRequest(h)).toMatch(/Not run: `ops\.deploy` is not available now.*nothing was run/);
    await expectNotRunRecorded(h, { threadTs, cardTs: card.ts });
  });

  it('a process that started while the server was down resumes it: "not run", not a failed turn', { timeout: 40_000 }, async () => {
    const server = mutableServer([DEPLOY, STATUS]);
    const first = await startHarness({ extraYaml: server.yaml });
    const { threadTs, card, approve } = await cardFor(first, { name: 'ops__deploy', arguments: { service: 'api' } }, 'Deploy is not available right now.');
    // A restart while the MCP server cannot be started: the new process has none of its tools.
    server.down();
    const second = await first.startReplica();
    try {
      await first.bot.stop();
      await second.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...approve });
      await waitFor(() => threadReplies(second, threadTs).some((message) => message.text === 'Deploy is not available right now.'), { message: 'the answer' });
      expect(threadReplies(second, threadTs).map((message) => message.text).join('\n')).not.toContain('could not finish');
      expect(server.calls()).toEqual([]);
      expect(toldInSecondRequest(second)).toMatch(/Not run: `ops\.deploy` is not available now.*nothing was run/);
      await expectNotRunRecorded(second, { threadTs, cardTs: card.ts });
    } finally {
      await second.stop();
      await first.slack.close();
      await first.openai.close();
    }
  });
});
