import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { conversationOf } from '../helpers/fake-openai.js';
import { scaleWorkerTool, type ScaleRequest } from '../fixtures/custom-tool-example.js';
import { API_TOKEN, loadToolSources, newFilesystemRoot, startFakeApi, toolSourcesYaml, type FakeApi, type LoadedSources } from '../fixtures/tool-source-fixtures.js';
import { fillForm } from './fill-form.js';
import { CHANNEL, TEAM_ID, cardButtons, nextTs, threadReplies, useHarnesses, waitFor, type Harness } from './harness.js';

/**
 * The tool sources end to end, through the real bot (signed Slack requests, the fake Slack API and
 * the fake OpenAI server): a real MCP server from the npm registry over stdio, `http_request`
 * against a local HTTP server, and a custom tool written as in the README.
 */

const harness = useHarnesses();
const READ_POLICY = `
policy:
  rules:
    - name: reading files
      tools: ["fs.read_*", "fs.list_*"]
      approval: never
`;

let api: FakeApi;
let root: string;
let sources: LoadedSources;
const deployed: ScaleRequest[] = [];

beforeAll(async () => {
  api = await startFakeApi();
  root = newFilesystemRoot();
  sources = await loadToolSources({
    yaml: toolSourcesYaml({ apiOrigin: api.origin, root }),
    customTools: [scaleWorkerTool(async (request) => void deployed.push(request))],
  });
});

afterAll(async () => {
  await sources?.loaded.close();
  await api?.close();
});

const start = () => harness({ tools: sources.harnessTools, extraYaml: READ_POLICY });

async function ask(h: Harness, calls: Array<{ name: string; arguments: Record<string, unknown> }>, answer: string) {
  if (calls.length === 0) h.openai.enqueue({ text: answer });
  else h.openai.enqueue({ toolCalls: calls }, { text: answer });
  const threadTs = nextTs();
  await h.mention({ user: 'UALICE', text: 'please do it', ts: threadTs });
  return threadTs;
}

const answered = (h: Harness, threadTs: string, text: string) =>
  waitFor(() => threadReplies(h, threadTs).some((message) => message.text === text), { message: `the answer "${text}"`, timeoutMs: 10_000 });

const cardIn = (h: Harness, threadTs: string) =>
  waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'the approval card', timeoutMs: 10_000 });

const button = (card: { blocks?: any[] }, actionId: string) => cardButtons(card.blocks).find((candidate) => candidate.actionId === actionId)!;

async function openEdit(h: Harness, card: { ts: string; blocks?: any[] }, threadTs: string) {
  const before = h.slack.callsTo('views.open').length;
  await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...button(card, 'countersign_edit') });
  const opened = await waitFor(() => h.slack.callsTo('views.open')[before], { message: 'views.open' });
  return opened.args.view as { callback_id: string; private_metadata: string; blocks: any[] };
}

function toolResults(h: Harness, requestIndex: number): string {
  return conversationOf(h.openai.requests[requestIndex]!)
    .filter((message) => message.role === 'tool')
    .map((message) => message.text ?? '')
    .join('\n');
}

function everythingSlackSaw(h: Harness, threadTs: string): string {
  return JSON.stringify(h.slack.messages(CHANNEL, threadTs));
}

describe('MCP: @modelcontextprotocol/server-filesystem over stdio', () => {
  it('offers the tools of every source to the model, MCP tools as server.tool', async () => {
    const h = await start();
    const threadTs = await ask(h, [], 'Hello.');
    await answered(h, threadTs, 'Hello.');
    // `fs.read_text_file` travels as `fs__read_text_file` once create-bot wraps the model with
    // withWireToolNames; either way the bot, the policy and the cards use the dotted name.
    const offered = (h.openai.requests[0]!.body.tools as Array<{ function: { name: string } }>).map((tool) => tool.function.name.replace(/^fs__/, 'fs.'));
    expect(offered).toEqual(expect.arrayContaining(['fs.read_text_file', 'fs.write_file', 'http_request', 'scale_worker', 'restart_service', 'ask_user']));
  });

  it('runs a read call at once (a policy rule allows it)', async () => {
    const h = await start();
    writeFileSync(join(root, 'runbook.md'), 'Step 1: restart the worker.');
    const threadTs = await ask(h, [{ name: 'fs.read_text_file', arguments: { path: join(root, 'runbook.md') } }], 'The runbook says to restart the worker.');
    await answered(h, threadTs, 'The runbook says to restart the worker.');

    expect(toolResults(h, 1)).toContain('Step 1: restart the worker.');
    expect(threadReplies(h, threadTs).filter((message) => cardButtons(message.blocks).length > 0)).toEqual([]);
  });

  it('holds a write call for approval and runs the approved (edited) call on the server', async () => {
    const h = await start();
    const target = join(root, `notes-${Date.now()}.txt`);
    const threadTs = await ask(h, [{ name: 'fs.write_file', arguments: { path: target, content: 'draft' } }], 'Saved the notes.');
    const card = await cardIn(h, threadTs);
    expect(card.text).toContain('fs.write_file');
    expect(existsSync(target)).toBe(false);

    const view = await openEdit(h, card, threadTs);
    expect(view.blocks.filter((block) => block.type === 'input').map((block) => block.label.text)).toEqual(['Path', 'Content']);
    const submitted = await h.submitView({ user: 'UBOB', view, values: fillForm(view, { Content: 'final notes' }) });
    expect(submitted.status).toBe(200);
    await answered(h, threadTs, 'Saved the notes.');
    expect(readFileSync(target, 'utf8')).toBe('final notes');
    const updated = h.slack.messages(CHANNEL, threadTs).find((message) => message.ts === card.ts)!;
    expect(JSON.stringify(updated.blocks)).toContain('Approved by <@UBOB>');
  });

  it("validates an approver's edit against the server's JSON Schema and runs nothing until it is valid", async () => {
    const h = await start();
    const target = join(root, `config-${Date.now()}.txt`);
    writeFileSync(target, 'replicas: 2');
    const threadTs = await ask(h, [{ name: 'fs.edit_file', arguments: { path: target, edits: [{ oldText: 'replicas: 2', newText: 'replicas: 9' }] } }], 'Edited the config.');
    const card = await cardIn(h, threadTs);
    const view = await openEdit(h, card, threadTs);
    const editsBlock = view.blocks.find((block) => block.type === 'input' && block.label.text === 'Edits (JSON)');
    expect(editsBlock).toBeDefined();

    // The server's schema requires newText in every edit: refused on that field, nothing runs.
    const invalid = await h.submitView({ user: 'UBOB', view, values: fillForm(view, { 'Edits (JSON)': '[{"oldText": "replicas: 2"}]' }) });
    const errors = (await invalid.json()) as { response_action: string; errors: Record<string, string> };
    expect(errors.response_action).toBe('errors');
    expect(Object.keys(errors.errors)).toEqual([editsBlock.block_id]);
    expect(errors.errors[editsBlock.block_id]).toMatch(/newText/);
    await h.settled();
    expect(readFileSync(target, 'utf8')).toBe('replicas: 2');

    const valid = await h.submitView({ user: 'UBOB', view, values: fillForm(view, { 'Edits (JSON)': '[{"oldText": "replicas: 2", "newText": "replicas: 3"}]' }) });
    expect(valid.status).toBe(200);
    await answered(h, threadTs, 'Edited the config.');
    expect(readFileSync(target, 'utf8')).toBe('replicas: 3');
  });
});

describe('http_request against a local HTTP server', () => {
  it('runs a GET on an allowed base with the configured secret header, and the secret is shown nowhere', async () => {
    const h = await start();
    api.requests.length = 0;
    const threadTs = await ask(h, [{ name: 'http_request', arguments: { method: 'GET', url: `${api.origin}/api/status` } }], 'The API is up.');
    await answered(h, threadTs, 'The API is up.');

    expect(api.requests).toHaveLength(1);
    expect(api.requests[0]).toMatchObject({ method: 'GET', path: '/api/status' });
    expect(api.requests[0]!.headers.authorization).toBe(`Bearer ${API_TOKEN}`);
    // The API echoed the header back: the model gets it redacted.
    const result = toolResults(h, 1);
    expect(result).toContain('[redacted]');
    const seen = [JSON.stringify(h.openai.requests), everythingSlackSaw(h, threadTs), JSON.stringify(await h.auditEvents())].join('\n');
    expect(seen).not.toContain(API_TOKEN);
  });

  it('refuses a URL outside the allowed bases before any network call or card', async () => {
    const h = await start();
    api.requests.length = 0;
    const threadTs = await ask(h, [{ name: 'http_request', arguments: { method: 'POST', url: `${api.origin}/admin/users`, body: '{}' } }], 'That URL is not allowed.');
    await answered(h, threadTs, 'That URL is not allowed.');

    expect(api.requests).toEqual([]);
    expect(toolResults(h, 1)).toMatch(/not under an allowed base URL/);
    expect(threadReplies(h, threadTs).filter((message) => cardButtons(message.blocks).length > 0)).toEqual([]);
  });

  it('holds a POST for approval and sends it once when approved', async () => {
    const h = await start();
    api.requests.length = 0;
    const threadTs = await ask(
      h,
      [{ name: 'http_request', arguments: { method: 'POST', url: `${api.origin}/api/deploys`, body: '{"version":"1.4.2"}' } }],
      'Deploy 1.4.2 requested.',
    );
    const card = await cardIn(h, threadTs);
    expect(card.text).toContain('http_request');
    expect(everythingSlackSaw(h, threadTs)).not.toContain(API_TOKEN);
    expect(api.requests).toEqual([]);

    await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...button(card, 'countersign_approve') });
    await answered(h, threadTs, 'Deploy 1.4.2 requested.');
    expect(api.requests).toHaveLength(1);
    expect(api.requests[0]).toMatchObject({ method: 'POST', path: '/api/deploys', body: '{"version":"1.4.2"}' });
    expect(api.requests[0]!.headers['content-type']).toBe('application/json');
  });
});

describe('a custom tool written as in the README', () => {
  it('runs a small staging change at once with the requester, thread and idempotency key, and holds a prod change for approval', async () => {
    const h = await start();
    deployed.length = 0;
    const smallTs = await ask(h, [{ name: 'scale_worker', arguments: { namespace: 'staging', replicas: 3 } }], 'Scaled staging to 3.');
    await answered(h, smallTs, 'Scaled staging to 3.');
    expect(deployed).toEqual([{ namespace: 'staging', replicas: 3, requestedBy: 'UALICE', thread: `${CHANNEL}/${smallTs}`, idempotencyKey: expect.stringMatching(new RegExp(`^${TEAM_ID}:${CHANNEL}:${smallTs.replace('.', '\\.')}:`)) }]);

    const prodTs = await ask(h, [{ name: 'scale_worker', arguments: { namespace: 'prod', replicas: 4 } }], 'Scaled prod to 4.');
    const card = await cardIn(h, prodTs);
    expect(deployed).toHaveLength(1);
    await h.click({ user: 'UBOB', cardTs: card.ts, threadTs: prodTs, ...button(card, 'countersign_approve') });
    await answered(h, prodTs, 'Scaled prod to 4.');
    expect(deployed).toHaveLength(2);
    expect(deployed[1]).toMatchObject({ namespace: 'prod', replicas: 4, requestedBy: 'UALICE' });
  });
});

describe('an MCP server that is down', () => {
  const harness = useHarnesses();

  it('says so in the thread once, and the rest of the bot keeps working', async () => {
    const h = await harness({
      extraYaml: `
mcpServers:
  broken:
    command: ${JSON.stringify(process.execPath)}
    args: ["-e", "process.exit(3)"]
`,
    });
    h.openai.enqueue({ text: 'Still here.' }, { text: 'Still here, again.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'hello', ts: threadTs });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Still here.'), { message: 'answer' });
    const notices = () => threadReplies(h, threadTs).filter((message) => message.text.includes('Its tools will fail until it is back'));
    expect(notices()).toHaveLength(1);
    expect(notices()[0]!.text).toContain('broken');
    await h.threadMessage({ user: 'UALICE', text: 'again', threadTs, ts: nextTs() });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Still here, again.'), { message: 'second answer' });
    expect(notices()).toHaveLength(1);
  });
});
